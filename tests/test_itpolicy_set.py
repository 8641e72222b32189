"""The itpolicy labeled set (data/itpolicy) loads and holds what its README says: no embedding, no flow."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date, datetime
from pathlib import Path

import pytest

from schemas.config import Config, load_config
from tasks.evaluate import Labeled, check_parts, read_labeled
from tasks.index.corpus import Document
from tasks.index.enrich import EnrichedChunk
from tasks.ingest.stage import ingest
from tests.labeled_sets import generator, indexed

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "data" / "itpolicy"
CONFIG = ROOT / "data" / "configs" / "itpolicy.yaml"
RUN_DATE = date(2026, 12, 5)  # the day after the log's last day
MINIMUM = {"comparison": 8, "temporal": 4, "bridge": 6, "aggregation": 4, "null": 4, "single": 4}
ENTITY_KINDS = {"system": "system", "summit": "event", "hackathon": "event", "project": "project"}


@pytest.fixture(scope="module")
def config() -> Config:
    return load_config(CONFIG)


@pytest.fixture(scope="module")
def indexed_set(config: Config) -> tuple[list[Document], list[EnrichedChunk]]:
    return indexed(config, RUN_DATE)


@pytest.fixture(scope="module")
def docs(indexed_set: tuple[list[Document], list[EnrichedChunk]]) -> list[Document]:
    return indexed_set[0]


@pytest.fixture(scope="module")
def chunks(indexed_set: tuple[list[Document], list[EnrichedChunk]]) -> list[EnrichedChunk]:
    """The chunks the index would hold, with facets and version markers as of RUN_DATE (nothing embedded)."""
    return indexed_set[1]


@pytest.fixture(scope="module")
def labeled() -> list[Labeled]:
    return read_labeled(SET / "questions.jsonl")


def _site(chunks: list[EnrichedChunk]) -> dict[str, str | None]:
    """Document id -> its site as indexed (None: company-wide)."""
    return {c.chunk.doc_id: c.facets["site"] for c in chunks}


def test_the_generators_reproduce_the_committed_files() -> None:
    records = generator(SET, "generate_corpus").build()
    assert (SET / "corpus.jsonl").read_text(encoding="utf-8") == "".join(
        json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    logs = generator(SET, "generate_logs")
    files, truth = logs.build()
    assert {p.relative_to(SET / "logs").as_posix() for p in (SET / "logs").rglob("*.jsonl")} == set(files)
    assert all((SET / "logs" / name).read_bytes() == content for name, content in files.items())
    assert (SET / "log_families.json").read_text(encoding="utf-8") == logs.truth_text(truth)


def test_every_labeled_part_is_a_document_of_the_indexed_chunks(docs: list[Document], chunks: list[EnrichedChunk],
                                                              labeled: list[Labeled]) -> None:
    assert len(chunks) >= 60 and len(labeled) >= 40
    check_parts(labeled, {d.id for d in docs}, "questions.jsonl")
    indexed = {c.chunk.doc_id for c in chunks}
    assert all(doc in indexed for q in labeled for part in q.parts for doc in part)
    assert any("#" in c.chunk.id for c in chunks)  # long documents are cut into chunks `<id>#<n>`


def test_counts_per_type_meet_the_minimums(labeled: list[Labeled]) -> None:
    counts = Counter(q.shape for q in labeled)
    assert all(counts[shape] >= n for shape, n in MINIMUM.items()), counts
    assert sum(counts.values()) >= 40
    assert all(q.parts == [] for q in labeled if q.shape == "null")
    assert all(q.parts for q in labeled if q.shape != "null")


def test_comparisons_share_a_company_wide_chunk_or_meet_a_local_override(chunks: list[EnrichedChunk],
                                                                         labeled: list[Labeled]) -> None:
    site = _site(chunks)
    comparisons = [q for q in labeled if q.shape == "comparison"]
    shared = [q for q in comparisons if len(q.parts) == 1 and all(site[d] is None for d in q.parts[0])]
    override = [q for q in comparisons if len(q.parts) == 2
                and sorted(any(site[d] is None for d in part) for part in q.parts) == [False, True]]
    assert len(shared) >= 2 and len(override) >= 2


def test_company_wide_rules_versions_and_bridges_are_as_documented(chunks: list[EnrichedChunk],
                                                                   labeled: list[Labeled]) -> None:
    site = _site(chunks)
    current = {c.chunk.doc_id: c.is_current for c in chunks}
    assert site["laptop-encryption"] is None and site["vpn-singapore"] == "Singapore"
    assert (current["passwords-2025"], current["passwords-2026"], current["passwords-2027"]) == (False, True, False)
    temporal = [q for q in labeled if q.shape == "temporal"]
    assert sum(not current[d] for q in temporal for part in q.parts for d in part) >= 4
    kinds = set()
    for q in (q for q in labeled if q.shape == "bridge"):
        entity, rule = q.parts[0], q.parts[-1]
        (doc,) = entity
        kinds.add(ENTITY_KINDS[doc.split("-")[0]])
        where = site[doc]
        assert where is not None  # the entity's one sentence names its site
        assert where not in q.question  # the question names the entity, not the site
        assert all(site[d] in (where, None) for d in rule)
    assert len(kinds) >= 2


def test_the_log_parses_whole_and_holds_no_labeled_question(labeled: list[Labeled]) -> None:
    ing = ingest(SET / "logs", now=datetime(2026, 12, 6))
    ing.finish()
    truth = json.loads((SET / "log_families.json").read_text(encoding="utf-8"))
    assert (ing.rows, ing.quarantined) == (truth["rows"], 0)
    seen = ing.con.execute("SELECT count(DISTINCT user), count(DISTINCT ts::DATE) FROM rows").fetchone()
    assert seen == (truth["users"], truth["days"])
    logged = {q.casefold().strip() for (q,) in ing.con.execute("SELECT query FROM rows").fetchall()}
    assert not [q.question for q in labeled if q.question.casefold().strip() in logged]
