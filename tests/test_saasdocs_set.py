"""The saasdocs labeled set (data/saasdocs) loads and holds what its README says: no embedding, no flow."""

from __future__ import annotations

import json
from collections import Counter
from datetime import date, datetime
from pathlib import Path

import pytest

from schemas.config import Config, load_config, read_yaml
from tasks.evaluate import Labeled, check_parts, read_labeled
from tasks.index.corpus import Document
from tasks.index.enrich import EnrichedChunk
from tasks.ingest.stage import ingest
from tasks.starter import starter_config
from tests.labeled_sets import generator, indexed

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "data" / "saasdocs"
CONFIG = ROOT / "data" / "configs" / "saasdocs.yaml"
RUN_DATE = date(2026, 12, 6)  # the day after the log's last day
MINIMUM = {"comparison": 8, "temporal": 4, "bridge": 6, "aggregation": 4, "null": 4, "single": 4}
# Entities with no tier or release key, and the value the one sentence of their text names.
TIERS_OF = {"connector-kestrel": "Business", "connector-plover": "Business", "connector-osprey": "Enterprise",
            "connector-condor": "Enterprise", "connector-heron": "Team", "connector-wren": "Free",
            "program-launchpad": "Team", "program-northstar": "Business", "program-harbor": "Enterprise"}
RELEASES_OF = {"feature-replay-buffer": "4.2", "feature-lineage-graph": "4.3", "feature-drift-sentinel": "4.3",
               "feature-column-masking": "5.0"}


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


def _facet(chunks: list[EnrichedChunk], name: str) -> dict[str, str | None]:
    """Document id -> its value of the facet as indexed (None: none)."""
    return {c.chunk.doc_id: c.facets[name] for c in chunks}


def test_the_generators_reproduce_the_committed_files() -> None:
    records = generator(SET, "generate_corpus").build()
    assert (SET / "corpus.jsonl").read_text(encoding="utf-8") == "".join(
        json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    questions = generator(SET, "generate_questions").build()
    assert (SET / "questions.jsonl").read_text(encoding="utf-8") == "".join(
        json.dumps(q, ensure_ascii=False) + "\n" for q in questions)
    logs = generator(SET, "generate_logs")
    files, truth = logs.build()
    assert {p.relative_to(SET / "logs").as_posix() for p in (SET / "logs").rglob("*.jsonl")} == set(files)
    assert all((SET / "logs" / name).read_bytes() == content for name, content in files.items())
    assert (SET / "log_families.json").read_text(encoding="utf-8") == logs.truth_text(truth)


def test_every_labeled_part_is_a_document_of_the_indexed_chunks(docs: list[Document], chunks: list[EnrichedChunk],
                                                              labeled: list[Labeled]) -> None:
    assert len(docs) >= 60 and len(chunks) == len(docs) and len(labeled) >= 40  # each document one chunk
    check_parts(labeled, {d.id for d in docs}, "questions.jsonl")
    indexed = {c.chunk.doc_id for c in chunks}
    assert all(doc in indexed for q in labeled for part in q.parts for doc in part)


def test_counts_per_type_meet_the_minimums(labeled: list[Labeled]) -> None:
    counts = Counter(q.shape for q in labeled)
    assert all(counts[shape] >= n for shape, n in MINIMUM.items()), counts
    assert sum(counts.values()) >= 40
    assert all(q.parts == [] for q in labeled if q.shape == "null")
    assert all(q.parts for q in labeled if q.shape != "null")


def test_comparisons_share_a_product_wide_chunk_or_meet_a_tier_rule(chunks: list[EnrichedChunk],
                                                                   labeled: list[Labeled]) -> None:
    tier = _facet(chunks, "tier")
    comparisons = [q for q in labeled if q.shape == "comparison"]
    shared = [q for q in comparisons if len(q.parts) == 1 and all(tier[d] is None for d in q.parts[0])]
    default = [q for q in comparisons if len(q.parts) == 2
               and sorted(any(tier[d] is None for d in part) for part in q.parts) == [False, True]]
    assert len(shared) >= 2 and len(default) >= 2


def test_tiers_are_read_from_metadata_or_from_one_sentence_naming_them(docs: list[Document],
                                                                       chunks: list[EnrichedChunk]) -> None:
    tier = _facet(chunks, "tier")
    untiered = {d.id for d in docs if "tier" not in d.metadata}
    assert all(tier[d.id] == d.metadata["tier"] for d in docs if d.id not in untiered)
    # product-wide rules and distractors get none; the entities get the tier their one sentence names as a name;
    # the 4.3 release notes name one tier (Team)
    assert {d: tier[d] for d in untiered if tier[d] is not None} == TIERS_OF | {"release-4-3": "Team"}
    text = {d.id: d.text for d in docs}
    lower = {"free-trial": "free trial", "concurrent-pipelines": "a slot is free", "release-5-1": "business calendar"}
    for doc, words in lower.items():  # a tier name written in lower case is the word, not the tier
        assert words in text[doc] and doc in untiered and tier[doc] is None
    assert tier["plans-overview"] is None  # it names all four
    release = _facet(chunks, "release")
    assert all(release[doc] == value for doc, value in RELEASES_OF.items())
    assert all(release[d] is None for d in TIERS_OF)


def test_versions_and_bridges_are_as_documented(chunks: list[EnrichedChunk], labeled: list[Labeled]) -> None:
    tier, release = _facet(chunks, "tier"), _facet(chunks, "release")
    by_doc = {c.chunk.doc_id: c for c in chunks}
    temporal = [q for q in labeled if q.shape == "temporal"]
    pairs = [q for q in temporal if len(q.parts) == 2]
    assert len(pairs) >= 4
    for q in pairs:
        (old,), (new,) = q.parts
        assert by_doc[old].policy == by_doc[new].policy and tier[old] == tier[new]
        before, after = by_doc[old].effective_from, by_doc[new].effective_from
        assert before is not None and after is not None and before < after <= RUN_DATE
        assert release[old] != release[new]  # a release is a category value of each version
        # release is a version facet: the older of a pair is superseded by the newer, which is in force
        assert (by_doc[old].superseded_by, by_doc[old].is_current) == (new, False)
        assert (by_doc[new].supersedes, by_doc[new].is_current) == (old, True)
    assert not by_doc["run-history-retention-2027"].is_current  # 5.1 takes effect in 2027
    kinds = set()
    for q in (q for q in labeled if q.shape == "bridge"):
        entity, rule = q.parts[0], q.parts[-1]
        (doc,) = entity
        kinds.add(doc.split("-")[0])
        facet = tier if doc in TIERS_OF else release
        where = facet[doc]
        assert where is not None  # the entity's one sentence names its tier or release
        assert where not in q.question  # the question names the entity, not its tier or release
        assert all(facet[d] in (where, None) for d in rule)
    assert kinds == {"connector", "program", "feature"}


def test_the_log_parses_whole_and_holds_no_labeled_question(labeled: list[Labeled]) -> None:
    ing = ingest(SET / "logs", now=datetime(2026, 12, 7))
    ing.finish()
    truth = json.loads((SET / "log_families.json").read_text(encoding="utf-8"))
    assert (ing.rows + ing.quarantined, ing.quarantined) == (truth["rows"], truth["blank"])  # blank rows only
    seen = ing.con.execute("SELECT count(DISTINCT user), count(DISTINCT ts::DATE) FROM rows").fetchone()
    assert seen == (truth["users"], truth["days"])
    logged = {q.casefold().strip() for (q,) in ing.con.execute("SELECT query FROM rows").fetchall()}
    assert not [q.question for q in labeled if q.question.casefold().strip() in logged]


def test_init_lists_the_tiers_the_texts_write_as_names(config: Config, tmp_path: Path) -> None:
    """`planbake init` makes `tier` a facet and lists Business, Free and Team, which the texts also write in lower
    case; the committed config keeps its facets as init wrote them."""
    out = tmp_path / "planbake.yaml"
    written = Config.model_validate(read_yaml(starter_config(SET / "corpus.jsonl", out, SET / "logs").text))
    tiers = [f for f in written.facets if f.name == "tier"]
    assert [(f.kind, f.values, f.nouns) for f in tiers] == [("category", ["Business", "Free", "Team"],
                                                            ["workspace", "plan"])]
    assert written.facets == config.facets
