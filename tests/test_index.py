"""The index stage: reference ranking, filters, version markers, incremental merges, bad input."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from lancedb.index import FTS

from schemas.config import Config, Facet, load_config
from schemas.errors import ConfigError, CorpusError, FacetColumnsMissing
from schemas.extract import Lexicon
from tasks.embed import Embedder
from tasks.index.corpus import read_corpus
from tasks.index.stage import (
    build_index,
    check_corpus,
    index_uri,
    misspelt_keys,
    misspelt_values,
    ordinary_values,
    unread_fields,
    valueless_facets,
)
from tasks.index.store import Index
from tasks.scale import model_ref
from tests.conftest import DEMO_CONFIG, ROOT

RUN_DATE = date(2026, 11, 30)
QUESTION = "Compare parental leave for the second parent in Berlin and Amsterdam."
REFERENCE = [
    ("leave-berlin-return", 0.712),
    ("leave-berlin", 0.67),
    ("leave-lisbon", 0.635),
    ("leave-berlin-faq", 0.617),
    ("leave-amsterdam", 0.569),
]


@pytest.fixture(scope="module")
def seed_index(tmp_path_factory: pytest.TempPathFactory, seed_corpus: Path) -> Index:
    out = tmp_path_factory.mktemp("seed")
    config = load_config(DEMO_CONFIG)
    outcome = build_index(seed_corpus, config, out, RUN_DATE, quiet=True)
    assert outcome.result.chunks == 17 and outcome.result.embedded == 17
    return Index(outcome.uri, config, outcome.result.version)


def test_reference_ranking_and_scores(seed_index: Index) -> None:
    hits = seed_index.search(QUESTION, k=5)
    assert [h.id for h in hits] == [r[0] for r in REFERENCE]
    for hit, (_, score) in zip(hits, REFERENCE, strict=True):
        assert hit.score == pytest.approx(score, abs=0.0015)


def test_office_filter_puts_amsterdam_first(seed_index: Index) -> None:
    hits = seed_index.search(
        "parental leave for the second parent, Amsterdam office", k=3, filters={"office": "Amsterdam"}
    )
    assert hits[0].id == "leave-amsterdam"
    assert {h.facets["office"] for h in hits} <= {"Amsterdam", None}  # its own chunks and the company-wide ones


def test_version_markers(seed_index: Index) -> None:
    rows = {r["id"]: r for r in seed_index.to_arrow().to_pylist()}
    assert rows["remote-2025"]["superseded_by"] == "remote-2026"
    assert rows["remote-2025"]["is_current"] is False
    assert rows["remote-2026"]["supersedes"] == "remote-2025"
    assert rows["remote-2026"]["is_current"] is True
    assert rows["remote-2026"]["effective_from"] == date(2026, 1, 1)
    # events without an effective date are not versions of one another
    assert rows["offsite-2025"]["is_current"] and rows["offsite-2026"]["is_current"]
    # current versions only by default; a year filter names the version wanted
    assert "remote-2025" not in [h.id for h in seed_index.search("remote work allowance", k=17)]
    assert [h.id for h in seed_index.search("remote work allowance", k=1, filters={"year": "2025"})] == [
        "remote-2025"
    ]


def _hybrid(index: Index, fusion: str = "rrf") -> Index:
    """The same table version searched in hybrid mode (config `planning.search`)."""
    planning = index.config.planning.model_copy(update={"search": "hybrid", "hybrid_fusion": fusion})
    return Index(index.uri, index.config.model_copy(update={"planning": planning}), int(index.table.version),
                 embedder=index.embedder)


TRAVEL = [  # travel chunks, and one form whose code only a word match finds
    ("travel-budget", "Travel budget: economy class for flights under six hours, business class above.", "Berlin"),
    ("travel-hotels", "Hotels on business travel: up to 150 euros a night, booked through the travel desk.", "Berlin"),
    ("travel-approval", "Every business trip needs your manager's approval before you book travel.", "Amsterdam"),
    ("travel-expenses", "Travel expenses are reimbursed within 30 days of submitting the receipts.", "Berlin"),
    ("travel-trains", "Take the train for trips under four hours; first class is allowed.", "Lisbon"),
    ("travel-visa", "Visas for business travel are arranged by the travel desk at least four weeks ahead.", "Lisbon"),
    ("travel-per-diem", "The travel per diem covers meals on business trips; the amount depends on the city.",
     "Amsterdam"),
    ("form-hr7", "Form HR-7731 registers a change of bank account with payroll.", None),
]


@pytest.fixture(scope="module")
def travel_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    out = tmp_path_factory.mktemp("travel")
    corpus = _write(out / "corpus.jsonl", [{"id": i, "text": t, "metadata": {"office": o, "year": None}}
                                           for i, t, o in TRAVEL])
    outcome = build_index(corpus, load_config(DEMO_CONFIG), out, RUN_DATE, quiet=True)
    return Index(outcome.uri, load_config(DEMO_CONFIG), outcome.result.version)


def test_hybrid_search_finds_a_code_the_vector_misses(travel_index: Index) -> None:
    question = "travel budget form HR-7731"
    by_cosine = travel_index.search(question, k=8)
    assert [h.id for h in by_cosine].index("form-hr7") >= 3  # the travel chunks outrank it by cosine
    hybrid = _hybrid(travel_index).search(question, k=3)
    assert [h.id for h in hybrid][:2] == ["travel-budget", "form-hr7"]  # BM25 ranks the rare code first
    cosine = {h.id: h.score for h in by_cosine}
    assert all(h.score == pytest.approx(cosine[h.id], abs=1e-5) for h in hybrid)  # a score is the cosine


def test_hybrid_search_by_scores_finds_the_code_too(travel_index: Index) -> None:
    """Fused by standard scores, the form whose code the question names comes up as by rank, and the weight
    moves the ranking between the cosine's (weight 1) and BM25's (weight 0)."""
    question = "travel budget form HR-7731"
    assert "form-hr7" in [h.id for h in _hybrid(travel_index, "scores").search(question, k=2)]
    planning = travel_index.config.planning
    ends = []
    for weight in (1.0, 0.0):
        config = travel_index.config.model_copy(update={"planning": planning.model_copy(update={
            "search": "hybrid", "hybrid_fusion": "scores", "hybrid_weight": weight})})
        ends.append([h.id for h in Index(travel_index.uri, config, int(travel_index.table.version),
                                         embedder=travel_index.embedder).search(question, k=3)])
    assert ends[0] == [h.id for h in travel_index.search(question, k=3)]  # the cosine alone
    assert ends[1][0] == "form-hr7"  # BM25 alone: the rare code first


def test_a_hybrid_handle_searches_by_cosine_when_asked(travel_index: Index) -> None:
    hybrid = _hybrid(travel_index)
    question = "travel budget form HR-7731"
    fused = [h.id for h in hybrid.search(question, k=3)]
    by_cosine = [h.id for h in hybrid.search(question, k=3, mode="vector")]  # a floor check wants the best cosine
    assert by_cosine == [h.id for h in travel_index.search(question, k=3)]
    assert fused != by_cosine and fused == [h.id for h in hybrid.search(question, k=3)]  # one memo, two modes


def _titled(config: Config, fields: list[str]) -> Config:
    """`config` searching hybrid by scores, its full-text index reading the metadata `fields` too."""
    return config.model_copy(update={
        "chunking": config.chunking.model_copy(update={"search_fields": fields}),
        "planning": config.planning.model_copy(update={"search": "hybrid", "hybrid_fusion": "scores"})})


def test_the_full_text_index_reads_the_fields_the_config_names(tmp_path: Path) -> None:
    """`chunking.search_fields: [title]`: a word only a document's title says finds its chunk by BM25, while its
    vector and its text stay the text's. Changing the setting writes the rows again without embedding them."""
    corpus = _write(tmp_path / "corpus.jsonl", [
        {"id": i, "text": t, "metadata": {"office": o, "year": None, "title": f"Handbook page {n}"}}
        for n, (i, t, o) in enumerate(TRAVEL)])
    records = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    records[-1]["metadata"]["title"] = "Quokka"  # form-hr7's title: no text says "quokka"
    _write(corpus, records)
    question = "train tickets for the quokka"
    found = {}
    for fields in ([], ["title"]):
        config = _titled(load_config(DEMO_CONFIG), fields)
        result = build_index(corpus, config, tmp_path, RUN_DATE, quiet=True).result
        assert result.embedded == (len(TRAVEL) if not fields else 0)  # the setting changed: no text embedded
        assert result.updated == (len(TRAVEL) if fields else 0)
        index = Index(index_uri(config, tmp_path), config, result.version)
        found[tuple(fields)] = [h.id for h in index.search(question, k=8)]
    assert found[()][-1] == "form-hr7"  # nothing the text says is asked: last of the eight
    assert found[("title",)].index("form-hr7") <= 2  # its title's word lifts it among the trains and budgets
    hit = next(h for h in index.search(question, k=3) if h.id == "form-hr7")
    assert hit.text == TRAVEL[-1][1]  # a hit's text is the chunk's own, without its title


def test_a_table_from_before_search_text_is_searched_and_upgraded(tmp_path: Path) -> None:
    """A table written before the `search_text` column (its full-text index on `text`) is still searched by
    words at its versions, and the next index run writes it anew with the column, embedding nothing."""
    corpus = _write(tmp_path / "corpus.jsonl", [{"id": i, "text": t, "metadata": {"office": o, "year": None}}
                                                for i, t, o in TRAVEL])
    config = _titled(load_config(DEMO_CONFIG), [])
    build_index(corpus, config, tmp_path, RUN_DATE, quiet=True)
    old = Index(index_uri(config, tmp_path), config).table
    old.drop_columns(["search_text"])
    old.create_index("text", config=FTS(), replace=True)
    index = Index(index_uri(config, tmp_path), config, int(old.version))
    assert "form-hr7" in [h.id for h in index.search("travel budget form HR-7731", k=2)]
    again = build_index(corpus, config, tmp_path, RUN_DATE, quiet=True).result
    assert (again.embedded, again.updated) == (0, len(TRAVEL))
    assert "search_text" in Index(index_uri(config, tmp_path), config, again.version).table.schema.names


def _embedding(config: Config, fields: list[str]) -> Config:
    return config.model_copy(update={"chunking": config.chunking.model_copy(update={"embed_fields": fields})})


def test_the_vectors_embed_the_fields_the_config_names(tmp_path: Path) -> None:
    """`chunking.embed_fields: [title]`: each vector embeds "title: text", so a chunk whose text leaves its subject
    to the title is found by vector search; a hit's text stays the chunk's own. The fields are part of what a
    stored vector is known to embed: changing them embeds again exactly the chunks whose document has one."""
    records = [{"id": i, "text": t, "metadata": {"office": o, "year": None}} for i, t, o in TRAVEL]
    records[-1]["metadata"]["title"] = "Quokka sanctuary visits"  # form-hr7's title: no text says "quokka"
    records[0]["metadata"]["title"] = "Flights"
    corpus = _write(tmp_path / "corpus.jsonl", records)
    question = "visiting the quokka sanctuary"
    found, embedded = {}, {}
    for fields in ([], ["title"], ["title"], []):
        config = _embedding(load_config(DEMO_CONFIG), fields)
        result = build_index(corpus, config, tmp_path, RUN_DATE, quiet=True).result
        embedded.setdefault(tuple(fields), []).append(result.embedded)
        index = Index(index_uri(config, tmp_path), config, result.version)
        found[tuple(fields)] = [h.id for h in index.search(question, k=8)]
        if fields:
            hit = next(h for h in index.search(question, k=1))
            assert (hit.id, hit.text) == ("form-hr7", TRAVEL[-1][1])  # the hit's text is the chunk's own
            stored = index.columns(["id", "vector"]).to_pylist()
            vec = next(np.asarray(r["vector"]) for r in stored if r["id"] == "form-hr7")
            assert float(vec @ index.embedder.encode_one(f"Quokka sanctuary visits: {TRAVEL[-1][1]}")) > 0.999
    assert embedded == {(): [len(TRAVEL), 2], ("title",): [2, 0]}  # only the two titled chunks, once each way
    assert found[()].index("form-hr7") > 0


def test_a_search_field_no_document_has_is_warned_of(tmp_path: Path) -> None:
    corpus = _write(tmp_path / "corpus.jsonl", [
        {"id": "a", "text": "The allowance is 50 euros.", "metadata": {"office": "Berlin", "title": "Pay"}}])
    config = _titled(load_config(DEMO_CONFIG), ["titel"])
    (warning,) = unread_fields(read_corpus(corpus), config)
    assert warning.endswith("no document's metadata has the key 'titel', so the full-text index reads the chunks' "
                            "text alone; name one the corpus has (office, title)"), warning
    assert unread_fields(read_corpus(corpus), _titled(config, ["title"])) == []
    (warning,) = unread_fields(read_corpus(corpus), _embedding(_titled(config, ["title"]), ["titel"]))
    assert warning.endswith("the key 'titel', so the vectors embed the chunks' text alone; name one the corpus "
                            "has (office, title)"), warning


def test_hybrid_search_keeps_the_filters(travel_index: Index) -> None:
    hits = _hybrid(travel_index).search("travel budget form HR-7731", k=8, filters={"office": "Berlin"})
    # Berlin's chunks and the company-wide form; an exact office filter leaves the form out
    assert sorted(h.id for h in hits) == ["form-hr7", "travel-budget", "travel-expenses", "travel-hotels"]
    config = travel_index.config
    exact = config.model_copy(update={"facets": [f.model_copy(update={"scope": "exact"}) if f.name == "office" else f
                                                 for f in config.facets]})
    exact_index = Index(travel_index.uri, exact, int(travel_index.table.version), embedder=travel_index.embedder)
    hits = _hybrid(exact_index).search("travel budget form HR-7731", k=8, filters={"office": "Berlin"})
    assert sorted(h.id for h in hits) == ["travel-budget", "travel-expenses", "travel-hotels"]


def test_hybrid_search_does_not_rescue_the_seed_comparison(seed_index: Index) -> None:
    # Seed 002: the words the two needs share dominate BM25 too, so Amsterdam stays out of the top 4;
    # its office filter brings it first.
    hybrid = _hybrid(seed_index)
    assert "leave-amsterdam" not in [h.id for h in hybrid.search(QUESTION, k=4)]
    assert [h.id for h in hybrid.search(QUESTION, k=1, filters={"office": "Amsterdam"})] == ["leave-amsterdam"]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_facet_reads_the_metadata_key_its_config_names(tmp_path: Path, seed_corpus: Path) -> None:
    """A corpus whose metadata keys cannot name slots ("Office") maps them in the config (`key: Office`): the
    values are the facet's, and its filters search them, as under the facet's own name."""
    records = [json.loads(line) for line in seed_corpus.read_text(encoding="utf-8").splitlines()]
    for r in records:
        r["metadata"]["Office"] = r["metadata"].pop("office")
        if r["id"] == "leave-amsterdam":  # a value neither the config nor the text names: only the key gives it
            r["metadata"]["Office"] = "HQ-7"
    corpus = _write(tmp_path / "corpus.jsonl", records)
    config = load_config(DEMO_CONFIG)
    config.facet("office").key = "Office"
    outcome = build_index(corpus, config, tmp_path, RUN_DATE, quiet=True)
    index = Index(outcome.uri, config, outcome.result.version)
    hits = index.search("parental leave for the second parent", k=3, filters={"office": "HQ-7"})
    own = [h.id for h in hits if h.facets["office"] == "HQ-7"]  # beside it, company-wide chunks only
    assert own == ["leave-amsterdam"] and {h.facets["office"] for h in hits} == {"HQ-7", None}
    assert "HQ-7" in index.facet_values()["office"]
    records[0]["metadata"]["Office"] = 7
    with pytest.raises(CorpusError, match="metadata 'Office' of document 'leave-policy' must be a string"):
        build_index(_write(tmp_path / "bad.jsonl", records), config, tmp_path / "bad", RUN_DATE, quiet=True)


def test_incremental_merge(tmp_path: Path, seed_corpus: Path) -> None:
    config = load_config(DEMO_CONFIG)
    records = [json.loads(line) for line in seed_corpus.read_text().splitlines()]
    long_doc = {
        "id": "guide",
        "text": " ".join(f"Relocation step {i}: book the movers early." for i in range(60)),
        "metadata": {"office": "Lisbon", "year": None},
    }
    corpus = _write(tmp_path / "c.jsonl", [*records, long_doc])
    first = build_index(corpus, config, tmp_path, RUN_DATE, quiet=True).result
    guide_chunks = first.chunks - 17
    assert guide_chunks > 1

    again = build_index(corpus, config, tmp_path, RUN_DATE, quiet=True).result
    assert (again.embedded, again.updated, again.deleted) == (0, 0, 0)
    assert again.version == first.version  # nothing changed: no new table version

    records[1]["text"] += " Ask HR for the form."
    _write(corpus, [*records, long_doc])
    changed = build_index(corpus, config, tmp_path, RUN_DATE, quiet=True).result
    assert (changed.embedded, changed.deleted) == (1, 0)

    records[2]["metadata"]["title"] = "Renamed"  # metadata alone: the row is written again, its vector kept
    _write(corpus, [*records, long_doc])
    retitled = build_index(corpus, config, tmp_path, RUN_DATE, quiet=True).result
    assert (retitled.embedded, retitled.updated, retitled.inserted) == (0, 1, 0)

    _write(corpus, records)
    removed = build_index(corpus, config, tmp_path, RUN_DATE, quiet=True).result
    assert (removed.embedded, removed.deleted, removed.chunks) == (0, guide_chunks, 17)
    ids = Index(index_uri(config, tmp_path), config).to_arrow().column("id").to_pylist()
    assert len(ids) == len(set(ids)) == 17


def _with_facet(facet: Facet | None) -> Config:
    """The demo config, with one more facet (None: as it is)."""
    config = load_config(DEMO_CONFIG)
    if facet is not None:
        config.facets.append(facet)
    return config


def test_a_facet_added_or_removed_changes_the_tables_columns(tmp_path: Path, seed_corpus: Path) -> None:
    """A facet the config gains becomes a column of every chunk, read from its document's metadata, and one it
    drops leaves the table; no vector is embedded again, and a tagged older version keeps its own columns for
    the publication that names it."""
    records = [json.loads(line) for line in seed_corpus.read_text(encoding="utf-8").splitlines()]
    for r in records:
        r["metadata"]["topic"] = "leave" if r["id"].startswith("leave") else "other"
    corpus = _write(tmp_path / "corpus.jsonl", records)
    before = _with_facet(None)
    first = build_index(corpus, before, tmp_path, RUN_DATE, quiet=True).result
    uri = index_uri(before, tmp_path)
    Index(uri, before).table.tags.create("first", first.version)

    after = _with_facet(Facet(name="topic"))
    added = build_index(corpus, after, tmp_path, RUN_DATE, quiet=True).result
    assert (added.embedded, added.updated, added.inserted, added.deleted) == (0, 17, 0, 0)
    index = Index(uri, after, added.version)
    hits = index.search(QUESTION, k=17, filters={"topic": "other"}, all_versions=True)
    assert hits and {h.facets["topic"] for h in hits} == {"other"}
    assert index.facet_values()["topic"] == ["leave", "other"]
    assert build_index(corpus, after, tmp_path, RUN_DATE, quiet=True).result.version == added.version

    old = Index(uri, before, "first")
    assert "topic" not in old.table.schema.names
    assert [h.id for h in old.search(QUESTION, k=5)] == [r[0] for r in REFERENCE]
    with pytest.raises(FacetColumnsMissing) as err:  # the new config on the old version: which columns, the fix
        Index(uri, after, "first")
    assert str(err.value) == (
        f"{uri}: version {first.version} of table 'chunks' has no column for facet(s) topic (its facet columns: "
        "office, year; the config's: office, year, topic); index the corpus with this config first ('planbake "
        "index' or 'planbake nightly'), or read that version with the config it was indexed with")

    removed = build_index(corpus, before, tmp_path, RUN_DATE, quiet=True).result
    assert (removed.embedded, removed.updated) == (0, 17)
    assert "topic" not in Index(uri, before, removed.version).table.schema.names
    assert Index(uri, after, added.version).facet_values()["topic"] == ["leave", "other"]


def test_a_facet_of_another_kind_retypes_its_column(tmp_path: Path, seed_corpus: Path) -> None:
    """A facet whose kind changes (category to year: text to a number) is written again in its new type."""
    records = [json.loads(line) for line in seed_corpus.read_text(encoding="utf-8").splitlines()]
    for r in records:
        r["metadata"]["period"] = "2026"
    corpus = _write(tmp_path / "corpus.jsonl", records)
    as_text = build_index(corpus, _with_facet(Facet(name="period")), tmp_path, RUN_DATE, quiet=True).result
    as_year = _with_facet(Facet(name="period", kind="year"))
    retyped = build_index(corpus, as_year, tmp_path, RUN_DATE, quiet=True).result
    assert (retyped.embedded, retyped.updated) == (0, 17) and retyped.version > as_text.version
    index = Index(index_uri(as_year, tmp_path), as_year, retyped.version)
    assert index.table.schema.field("period").type == pa.int32()
    assert set(index.columns(["period"]).column("period").to_pylist()) == {2026}
    assert len(index.search(QUESTION, k=3, filters={"period": "2026"})) == 3


class _OtherModel(Embedder):
    """Stands in for another model (no second one is installed): the packaged model's vectors, reversed, or cut
    to their first `dim` components."""

    def __init__(self, dim: int = 384) -> None:
        super().__init__()
        self.dim = dim

    def encode(self, texts: Sequence[str], label: str = "embedding", quiet: bool = False) -> np.ndarray:
        vecs = super().encode(texts, label, quiet)[:, ::-1][:, :self.dim]
        return np.ascontiguousarray(vecs / np.linalg.norm(vecs, axis=1, keepdims=True))

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text], quiet=True)[0]


def test_a_changed_model_embeds_every_chunk_again(tmp_path: Path, seed_corpus: Path) -> None:
    """Unchanged text keeps its vector only while the model is the same: another model re-embeds and rewrites
    every chunk (its searches then rank by its own vectors), and one of another dimension is a clear error."""
    config = load_config(DEMO_CONFIG)
    build_index(seed_corpus, config, tmp_path, RUN_DATE, quiet=True)
    other = _OtherModel()
    result = build_index(seed_corpus, config, tmp_path, RUN_DATE, quiet=True, embedder=other).result
    assert (result.embedded, result.updated, result.deleted) == (17, 17, 0)
    index = Index(index_uri(config, tmp_path), config, result.version, embedder=other)
    hits = index.search(QUESTION, k=5)  # reversed query and chunk vectors: the reference ranking and scores
    assert [h.id for h in hits] == [r[0] for r in REFERENCE]
    assert [h.score for h in hits] == pytest.approx([r[1] for r in REFERENCE], abs=0.0015)
    again = build_index(seed_corpus, config, tmp_path, RUN_DATE, quiet=True, embedder=other).result
    assert (again.embedded, again.updated, again.version) == (0, 0, result.version)
    with pytest.raises(ValueError, match=r"holds vectors of 384 dimensions and the model gives 128; index into a new"):
        build_index(seed_corpus, config, tmp_path, RUN_DATE, quiet=True, embedder=_OtherModel(128))
    records = [json.loads(line) for line in seed_corpus.read_text(encoding="utf-8").splitlines()]
    edited = _write(tmp_path / "edited.jsonl", [{**r, "text": r["text"] + " Ask HR."} for r in records])
    with pytest.raises(ValueError, match=r"holds vectors of 384 dimensions and the model gives 128"):  # no text
        build_index(edited, config, tmp_path, RUN_DATE, quiet=True, embedder=_OtherModel(128))  # left to compare


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"id": "x", "text": "ok", "metadata": {}', "not valid JSON"),
        ('{"id": "x", "metadata": {}}', "missing field 'text'"),
        ('{"id": "x", "text": "\\u0000\\u200b  \\u2028", "metadata": {}}', "field 'text' has no words"),
        ('{"id": "x", "text": "ok", "metadata": {"office": 42}}', "must be a string"),
        ('{"id": "x", "text": "ok", "metadata": {"year": "soon"}}', "must be a year"),
        ('{"id": "x", "text": "ok", "metadata": {"Office": "Berlin"}}', "rename it to 'office'"),
        ('{"id": "x", "text": "ok", "metadata": {"year": 99999999999}}', "must be a year"),
        ('{"id": "x", "text": "ok", "metadata": {"year": "\u00b2"}}', "must be a year"),
        ('{"id": "x", "text": "ok", "metadata": {"year": 26}}', "must be a year such as 2026"),
        ('{"id": "x", "text": "ok", "metadata": {"office": "Berlin", "office": "Lisbon"}}', "'office' is given twice"),
        ('{"id": "x", "text": "ok", "metadata": {"effective_from": 20260101}}', "must be an ISO date (YYYY-MM-DD)"),
        ('{"id": "x", "text": "ok", "metadata": {"effective_from": "2026-W05-3"}}', "must be an ISO date"),
    ],
)
def test_malformed_corpus_names_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    config = load_config(DEMO_CONFIG)
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text('{"id": "a", "text": "fine", "metadata": {}}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        build_index(corpus, config, tmp_path, RUN_DATE, quiet=True)
    assert f"{corpus}:2" in str(err.value) and problem in str(err.value)
    assert not (tmp_path / "lancedb").exists()  # nothing written


@pytest.mark.parametrize("body", ["", "\n  \n\n"])
def test_an_empty_corpus_says_what_a_document_is(tmp_path: Path, body: str) -> None:
    corpus = tmp_path / "empty.jsonl"
    corpus.write_text(body, encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        read_corpus(corpus)
    assert str(err.value) == (f'{corpus}: the corpus is empty; write one document a line, as {{"id": "travel", '
                              '"text": "...", "metadata": {"office": "Berlin"}}')


def test_top_level_fields_are_metadata_as_beir_writes_them(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in [
        {"_id": "d1", "title": "Demon Dice", "text": "A dice game.", "metadata": {}},  # BEIR's corpus.jsonl
        {"id": "d2", "title": "Dragon Dice", "text": "Another dice game.", "url": "https://x", "tags": ["a"],
         "year": None},
        {"id": "d3", "title": "Dice", "text": "Cubes.", "metadata": {"title": "Dice", "office": "Berlin"}},
    ]) + "\n", encoding="utf-8")
    docs = read_corpus(corpus)
    assert [(d.id, d.metadata) for d in docs] == [
        ("d1", {"title": "Demon Dice"}),
        ("d2", {"title": "Dragon Dice", "url": "https://x"}),  # a list or a null at the top level is no metadata
        ("d3", {"title": "Dice", "office": "Berlin"}),  # given both ways alike: one value
    ]


def test_a_json_array_of_documents_is_read_as_its_lines_would_be(tmp_path: Path, seed_corpus: Path) -> None:
    records = [json.loads(line) for line in seed_corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    array = tmp_path / "corpus.json"
    array.write_text(json.dumps(records, indent=2), encoding="utf-8")
    assert [(d.id, d.text, d.metadata) for d in read_corpus(array)] == [
        (d.id, d.text, d.metadata) for d in read_corpus(seed_corpus)]
    for body, problem in [
        ('[\n {"id": "a", "text": "fine"},\n {"id": "b"}\n]', ":3: missing field 'text'"),
        ('[\n {"id": "a", "text": "fine"}\n {"id": "b", "text": "x"}\n]', ":3: expected ',' or ']' after a document"),
        ('[{"id": "a", "text": "fine"}] {}', ":1: text after the JSON array's closing ']'"),
        ('[\n\n {"id": "a", "text": "fine", "id": "b"}]', ":3: key 'id' is given twice"),
    ]:
        array.write_text(body, encoding="utf-8")
        with pytest.raises(CorpusError) as err:
            read_corpus(array)
        assert str(err.value).startswith(f"{array}{problem}"), err.value


def test_a_field_given_two_ways_is_refused_at_its_line(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "text": "fine"}\n'
                      '{"id": "b", "text": "fine", "office": "Berlin", "metadata": {"office": "Lisbon"}}\n',
                      encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        read_corpus(corpus)
    assert str(err.value) == (f"{corpus}:2: 'office' of document 'b' is 'Berlin' as a field and 'Lisbon' in its "
                              "metadata; keep one")


@pytest.mark.parametrize(("values", "second", "first"), [
    (["Berlin"], "berlin", "'Berlin' (the config's values, "),  # "berlin" would take Berlin's questions
    (["Berlin"], "Berlin ", "'Berlin' (the config's values, "),
    ([], "BERLIN", "'Berlin' ({corpus}:1)"),  # values from the index alone: the first document's spelling
])
def test_a_value_spelled_two_ways_is_refused(tmp_path: Path, values: list[str], second: str, first: str) -> None:
    config = load_config(DEMO_CONFIG)
    config.facet("office").values = values
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "text": "Bike racks are in the courtyard.",
                                          "metadata": {"office": office}}) + "\n"
                              for i, office in (("a", "Berlin"), ("b", second))), encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        build_index(corpus, config, tmp_path, RUN_DATE, quiet=True)
    assert str(err.value).startswith(f"{corpus}:2: office {second!r} of document 'b' is "
                                     + first.format(corpus=corpus)), err.value
    assert str(err.value).endswith("spelled another way; write 'Berlin'")
    assert not (tmp_path / "lancedb").exists()


def test_a_value_that_is_an_ordinary_word_is_dropped_with_a_warning(tmp_path: Path) -> None:
    """An office "Remote" the config does not list would take every "remote work" question: the lexicon leaves
    it out, and the index run warns, naming the document's line, the value, the facet and how to keep it; a
    listed value (or one an alias names), or one the corpus never writes in lower case, stays, unwarned."""
    corpus = _write(tmp_path / "corpus.jsonl", [
        {"id": "a", "text": "The remote work allowance is 50 euros.", "metadata": {"office": "Berlin"}},
        {"id": "b", "text": "Staff share the hub.", "metadata": {"office": "Remote"}},
        {"id": "c", "text": "Staff share the hub.", "metadata": {"office": "Gdansk"}},
    ])
    config = load_config(DEMO_CONFIG)
    (warning,) = ordinary_values(read_corpus(corpus), config)
    assert warning == (f"{corpus}:2: office 'Remote' is also a word the corpus writes in lower case: dropped from "
                       "the lexicon, so a question saying 'remote' is not read as that office (a filter to it still "
                       f"finds its chunks); to keep it, list it under the facet's values ({DEMO_CONFIG}:3)")
    checked = check_corpus(corpus, config)
    assert checked.dropped == {"office": ["Remote"]} and "Remote" not in checked.lexicon.values["office"]
    assert "Gdansk" in checked.lexicon.values["office"]
    assert [c.facet for c in checked.lexicon.extract("remote work allowance in Gdansk")] == ["office"]
    config.facet("office").values.append("Remote")
    assert ordinary_values(read_corpus(corpus), config) == []
    assert "Remote" in check_corpus(corpus, config).lexicon.values["office"]
    config.facet("office").values.pop()
    config.facet("office").aliases["Home office"] = "Remote"
    assert ordinary_values(read_corpus(corpus), config) == []


def test_the_index_and_the_publication_drop_the_same_values(tmp_path: Path) -> None:
    """Mining, planning and the published lexicon (lookup) read `Index.lexicon_values`: the index's values less
    those the index run dropped, a filter may still name them."""
    corpus = _write(tmp_path / "corpus.jsonl", [
        {"id": "a", "text": "The remote work allowance is 50 euros, from the age of 16.",
         "metadata": {"office": "Berlin"}},
        {"id": "b", "text": "Staff share the hub.", "metadata": {"office": "Remote"}},
        {"id": "c", "text": "Staff share the desk.", "metadata": {"office": "The Age"}},
    ])
    config = load_config(DEMO_CONFIG)
    outcome = build_index(corpus, config, tmp_path, RUN_DATE, quiet=True)
    assert len(outcome.warnings) == 3  # two dropped values, and no chunk carries a year (`unset_years`)
    index = Index(outcome.uri, config, outcome.result.version)
    assert index.dropped_values() == check_corpus(corpus, config).dropped == {"office": ["Remote", "The Age"]}
    assert index.lexicon_values() == {"office": ["Berlin"]}
    assert index.facet_values() == {"office": ["Berlin", "Remote", "The Age"]}
    assert [h.id for h in index.search("hub", k=1, filters={"office": "Remote"})] == ["b"]


def test_a_facet_no_config_value_or_document_gives_is_warned_of(tmp_path: Path) -> None:
    """A facet `department` with no values listed and no document's metadata holding the key: never named."""
    corpus = _write(tmp_path / "corpus.jsonl", [
        {"id": "a", "text": "The allowance is 50 euros.", "metadata": {"office": "Berlin", "dept": "HR"}}])
    config = load_config(DEMO_CONFIG)
    config.facets.append(Facet(name="department"))
    (warning,) = valueless_facets(read_corpus(corpus), config)
    assert warning.endswith("facet 'department' has no values: the config lists none and no document's metadata "
                            "has the key 'department'; list its values, or set `key:` to the metadata key that "
                            "holds them"), warning
    config.facets[-1].key = "dept"
    assert valueless_facets(read_corpus(corpus), config) == []


def test_a_year_facet_no_chunk_carries_is_warned_of(tmp_path: Path) -> None:
    """No document has a year key or an effective date: a question's year is a slot, but a step filtered on it
    would find nothing (encyclopedia paragraphs with a year facet)."""
    corpus = _write(tmp_path / "corpus.jsonl", [
        {"id": "a", "text": "The allowance is 50 euros.", "metadata": {"office": "Berlin"}}])
    config = load_config(DEMO_CONFIG)
    outcome = build_index(corpus, config, tmp_path / "out", RUN_DATE, quiet=True)
    (warning,) = [w for w in outcome.warnings if "no chunk carries" in w]
    assert "facet 'year'" in warning and "effective date" in warning and "facets: []" in warning, warning
    dated = _write(tmp_path / "dated.jsonl", [
        {"id": "a-2026", "text": "Effective 1 January 2026, the allowance is 50 euros.",
         "metadata": {"office": "Berlin"}}])
    outcome = build_index(dated, config, tmp_path / "dated", RUN_DATE, quiet=True)
    assert not [w for w in outcome.warnings if "no chunk carries" in w]
    config.facets.append(Facet(name="published", kind="date"))  # a date comes from its metadata key alone
    (warning,) = [w for w in build_index(dated, config, tmp_path / "date", RUN_DATE, quiet=True).warnings
                  if "no chunk carries" in w]
    assert "facet 'published'" in warning and "effective date" not in warning, warning


def test_a_facet_whose_key_is_misspelt_is_warned_of(tmp_path: Path) -> None:
    """A facet `offce` (its values listed) read no document's `office` without a word: its values came from the
    texts alone, and a chunk whose text names no office had none. The index run warns, naming both places."""
    corpus = _write(tmp_path / "corpus.jsonl", [
        {"id": "a", "text": "The allowance is 50 euros.", "metadata": {"office": "Berlin", "yaer": 2026}},
        {"id": "b", "text": "Bike racks are in the courtyard.", "metadata": {"office": "Lisbon"}}])
    config = load_config(DEMO_CONFIG)
    config.facet("office").name = "offce"
    config.facets[1].key = "year"
    office, year = misspelt_keys(read_corpus(corpus), config)
    assert office.endswith(f"facet 'offce' reads the metadata key 'offce', which no document has; {corpus}:1 has "
                           "'office': name the facet so, or set `key: office` under it (else its values come from "
                           "the texts alone)"), office
    assert "facet 'year' reads the metadata key 'year', which no document has" in year and "has 'yaer'" in year
    config.facets[0].key, config.facets[1].key = "office", "yaer"
    assert misspelt_keys(read_corpus(corpus), config) == []


def test_a_value_spelled_close_to_a_listed_one_is_warned_of(tmp_path: Path) -> None:
    """An office "Berlln" in the corpus was indexed as an office of its own without a word: a filter to Berlin
    never found its chunks. The index run warns once per value, naming the line; other unlisted values pass."""
    corpus = _write(tmp_path / "corpus.jsonl", [
        {"id": "a", "text": "The allowance is 50 euros.", "metadata": {"office": "Berlin"}},
        {"id": "b", "text": "Bike racks are in the courtyard.", "metadata": {"office": "Berlln"}},
        {"id": "c", "text": "Bike racks are in the hall.", "metadata": {"office": "Berlln"}},
        {"id": "d", "text": "Staff share the hub.", "metadata": {"office": "Gdansk"}}])
    config = load_config(DEMO_CONFIG)
    (warning,) = misspelt_values(read_corpus(corpus), config)
    assert warning.startswith(f"{corpus}:2: office 'Berlln' of document 'b' is not among the config's values but "
                              "is spelled close to 'Berlin': write 'Berlin', or list 'Berlln' under the facet's "
                              "values ("), warning
    config.facet("office").values.append("Berlln")
    assert misspelt_values(read_corpus(corpus), config) == []


def test_a_value_of_several_ordinary_words_is_dropped_too(tmp_path: Path) -> None:
    """A source "The Age" would take "by the age of 16": words in a row the corpus writes in lower case (any
    marks between them) are dropped and warned of too; a value whose words are never written so together, or whose words
    are names somewhere ("New York" beside "the new york office": "york" is never lower case), is not."""
    corpus = _write(tmp_path / "corpus.jsonl", [
        {"id": "a", "text": "But by the age of 16, she had left.", "metadata": {"source": "The Verge"}},
        {"id": "b", "text": "A new office opened in New York.", "metadata": {"source": "The Age"}},
        {"id": "c", "text": "Verge is a word here, and so is new.", "metadata": {"source": "New York"}},
        {"id": "d", "text": "Sporting goods; news-stands.", "metadata": {"source": "Sporting News"}},
    ])
    config = load_config(ROOT / "data" / "configs" / "multihop_rag.yaml")
    config.facet("source").values.clear()  # the shipped config lists "The Age" to keep it
    (warning,) = ordinary_values(read_corpus(corpus), config)
    assert warning.startswith(f"{corpus}:2: source 'The Age' is also words the corpus writes in lower case: dropped "
                              "from the lexicon, so a question saying 'the age' is not read as that source"), warning
    again = _write(tmp_path / "again.jsonl", [
        {"id": "a", "text": "Sales of sporting—news!", "metadata": {"source": "Sporting News"}}])
    (warning,) = ordinary_values(read_corpus(again), config)
    assert "source 'Sporting News' is also words" in warning
    config.facet("source").values.append("Sporting News")
    assert ordinary_values(read_corpus(again), config) == []


def test_an_index_value_never_takes_a_listed_values_place() -> None:
    """An index written before the spelling check may hold "berlin": questions still filter to "Berlin"."""
    lexicon = Lexicon(load_config(DEMO_CONFIG), {"office": ["berlin", "Berlin", "Gdansk"]})
    assert [(c.facet, c.value) for c in lexicon.extract("vacation days in Berlin or Gdansk")] == [
        ("office", "Berlin"), ("office", "Gdansk")]


def test_a_document_named_like_another_documents_chunk_is_refused(tmp_path: Path) -> None:
    """A long document's pieces are `<id>#<n>`: a document whose own id is one of them would replace it."""
    config = load_config(DEMO_CONFIG)
    long_text = " ".join(f"Sentence {i} about per diem receipts." for i in range(200))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "guide", "text": long_text}) + "\n"
                      + json.dumps({"id": "guide#1", "text": "A short note."}) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        build_index(corpus, config, tmp_path, RUN_DATE, quiet=True)
    assert f"{corpus}:2: document id 'guide#1' is also the id of a chunk of document 'guide' ({corpus}:1)" in str(
        err.value) and "rename the document 'guide#1'" in str(err.value)
    assert not (tmp_path / "lancedb").exists()


def test_an_alias_to_a_value_the_facet_lacks_is_refused(tmp_path: Path, seed_corpus: Path) -> None:
    """An alias naming no value of a facet whose `values:` the config lists is a typo, whose filter would match
    nothing: refused at the config line that gives it, before anything is written."""
    text = DEMO_CONFIG.read_text(encoding="utf-8").replace("Lisboa: Lisbon", "Lisboa: Lissabon")
    assert "Lissabon" in text
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "Lissabon" in row)
    with pytest.raises(ConfigError) as err:
        build_index(seed_corpus, load_config(path), tmp_path, RUN_DATE, quiet=True)
    assert str(err.value).startswith(f"{path}:{line}: alias 'Lisboa' of facet 'office' names 'Lissabon', which is "
                                     "not one of its values (") and "add 'Lissabon' to the facet's" in str(err.value)
    assert not (tmp_path / "lancedb").exists()
    config = load_config(DEMO_CONFIG)
    office = config.facet("office")
    office.values, office.aliases = [], {"Hauptstadt": "Berlin", "Bruxelles": "Brussels"}  # values from the
    build_index(seed_corpus, config, tmp_path, RUN_DATE, quiet=True)  # corpus alone: it may lack Brussels


def test_an_alias_spelled_as_another_value_is_refused(tmp_path: Path, seed_corpus: Path) -> None:
    """An alias "Berlin: Warsaw" would read every question about Berlin as one about Warsaw."""
    text = DEMO_CONFIG.read_text(encoding="utf-8").replace("Lisboa: Lisbon", "Lisboa: Lisbon, Berlin: Warsaw")
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "Berlin: Warsaw" in row)
    with pytest.raises(ConfigError) as err:
        build_index(seed_corpus, load_config(path), tmp_path, RUN_DATE, quiet=True)
    assert str(err.value) == (f"{path}:{line}: alias 'Berlin' of facet 'office' names 'Warsaw', but 'Berlin' is also "
                              "office value 'Berlin': questions naming it would be read as 'Warsaw'; remove the alias")


@pytest.mark.parametrize(("change", "said"), [
    (("values: [Berlin, Amsterdam", "values: [Berlin, berlin, Amsterdam"),
     "facet 'office' lists 'Berlin' and 'berlin': one value, named twice"),
    (("    kind: year", "    kind: year\n    values: [twenty]"), "its values list 'twenty'; list years"),
    (("foster: [foster]", "foster: [foster, Berlin]"), "qualifier term 'Berlin' of 'foster' is also office value"),
])
def test_a_config_whose_values_contradict_each_other_is_refused(tmp_path: Path, seed_corpus: Path,
                                                                change: tuple[str, str], said: str) -> None:
    text = DEMO_CONFIG.read_text(encoding="utf-8")
    assert change[0] in text
    path = tmp_path / "config.yaml"
    path.write_text(text.replace(change[0], change[1]), encoding="utf-8")
    with pytest.raises(ConfigError, match=f"{path}:\\d+: .*{re.escape(said)}"):
        build_index(seed_corpus, load_config(path), tmp_path, RUN_DATE, quiet=True)
    assert not (tmp_path / "lancedb").exists()


def test_a_byte_order_mark_opens_a_corpus_file_unseen(tmp_path: Path) -> None:
    """Editors on some systems write UTF-8 with a byte order mark: the first record and the front matter read
    as without it."""
    jsonl = tmp_path / "corpus.jsonl"
    jsonl.write_bytes(b"\xef\xbb\xbf" + json.dumps({"id": "a", "text": "Per diem, Berlin."}).encode() + b"\n")
    folder = tmp_path / "md"
    folder.mkdir()
    (folder / "a.md").write_bytes(b"\xef\xbb\xbf---\nid: bom-doc\noffice: Berlin\n---\nPer diem Berlin note.\n")
    assert [d.id for d in read_corpus(jsonl)] == ["a"]
    [doc] = read_corpus(folder)
    assert (doc.id, doc.metadata, doc.text) == ("bom-doc", {"office": "Berlin"}, "Per diem Berlin note.\n")


def test_markdown_folder_with_front_matter(tmp_path: Path) -> None:
    config = load_config(DEMO_CONFIG)
    folder = tmp_path / "md"
    folder.mkdir()
    (folder / "vacation-warsaw.md").write_text(
        "---\noffice: Warsaw\nyear: null\neffective_from: 2026-01-01\n---\n# Vacation, Warsaw\n\n"
        "Vacation, Warsaw office: 26 days per year.\n"
    )
    (folder / "relocation.md").write_text(
        "Relocation to the Toronto office: the company pays two months of rent.\n"
    )
    out = build_index(folder, config, tmp_path, RUN_DATE, quiet=True)
    rows = {r["id"]: r for r in Index(out.uri, config).to_arrow().to_pylist()}
    assert rows["vacation-warsaw"]["office"] == "Warsaw"
    assert str(rows["vacation-warsaw"]["effective_from"]) == "2026-01-01"  # unquoted in YAML: read as a date
    assert rows["relocation"]["office"] == "Toronto"  # no metadata: one office named in the text
    (folder / "bad.md").write_text("---\noffice: [unclosed\n---\ntext\n")
    with pytest.raises(CorpusError, match=r"bad\.md:\d+: front matter is not valid YAML"):
        build_index(folder, config, tmp_path, RUN_DATE, quiet=True)


def test_front_matter_after_blank_lines_is_refused(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("\n\n---\noffice: Lisbon\n---\nPer diem in Lisbon.\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"note.md:3: front matter opens on line 3, .* remove the blank lines"):
        read_corpus(note)
    note.write_text("Per diem in Lisbon.\n\n---\n\nA rule above.\n", encoding="utf-8")  # a rule, no front matter
    assert [d.text.split()[:2] for d in read_corpus(note)] == [["Per", "diem"]]
    note.write_text("\n---\nPer diem in Lisbon, between two rules.\n---\n", encoding="utf-8")  # no keys: text
    assert "Per diem in Lisbon, between two rules." in read_corpus(note)[0].text


@pytest.mark.parametrize(("front", "problem"), [
    ("id: a\ntitle: Lisbon: vacation days\n", ":3: front matter is not valid YAML: mapping values are not allowed"),
    ("office: Lisbon\noffice: Berlin\n", ":3: front matter key 'office' is given twice (first at line 2)"),
    ("office: Lisbon\neffective_from: 2026-02-30\n", ":3: metadata 'effective_from' of document 'note' must be an "
                                                     "ISO date"),
    ("title: Per diem\n\nyear: twenty\n", ":4: metadata 'year' of document 'note' must be a year"),
    ("id: a\noffice: [Lisbon, Porto]\n", ":3: metadata 'office' of document 'a' must be a string, number or null"),
    ("office: Lisbon\nid: ''\n", ":3: field 'id' must be a non-empty string"),
    ("office: Lisbon\n2026: budget\n", ":3: metadata key 2026 of document 'note' is not text; quote it"),
    ("office: Lisbon\non: site\n", ":3: front matter key 'on' is read by YAML as true or false"),
])
def test_front_matter_errors_name_the_line_and_the_fix(tmp_path: Path, front: str, problem: str) -> None:
    note = tmp_path / "md" / "note.md"
    note.parent.mkdir()
    note.write_text(f"---\n{front}---\nPer diem in Lisbon.\n", encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        build_index(note.parent, load_config(DEMO_CONFIG), tmp_path, RUN_DATE, quiet=True)
    assert str(err.value).startswith(f"{note}{problem}"), str(err.value)


def test_a_markdown_file_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "e.md"
    path.write_bytes("---\noffice: Berlin\n---\nPer diem in Z\u00fcrich,\n".encode() + b"Z\xfcrich again.\n")
    with pytest.raises(CorpusError) as err:
        read_corpus(path)
    assert str(err.value) == f"{path}:5: not UTF-8 text; re-encode the file as UTF-8"
    path.write_bytes(b"\xef\xbb\xbfPer diem.\n\xfc")  # after a byte order mark
    with pytest.raises(CorpusError, match=r"e\.md:2: not UTF-8"):
        read_corpus(path)


def test_markdown_is_read_from_a_file_and_any_suffix_case(tmp_path: Path) -> None:
    """One .md file is a corpus of one document; a folder's .MD files are Markdown too; only a line that is
    "---" alone closes the front matter."""
    folder = tmp_path / "md"
    folder.mkdir()
    (folder / "a.MD").write_text("---\noffice: Berlin\n---\nPer diem, Berlin.\n----\nMore.\n", encoding="utf-8")
    (folder / "b.md").write_text("---\noffice: Lisbon\n----\nstill front matter: no\n---\nPer diem, Lisbon.\n",
                                 encoding="utf-8")
    with pytest.raises(CorpusError, match=r"b\.md:\d+: front matter is not valid YAML"):
        read_corpus(folder)
    (folder / "b.md").unlink()
    [doc] = read_corpus(folder)
    assert (doc.id, doc.metadata, doc.text) == ("a", {"office": "Berlin"}, "Per diem, Berlin.\n----\nMore.\n")
    [one] = read_corpus(folder / "a.MD")
    assert one == doc
    titled = tmp_path / "titled.md"  # a first line "# ..." titles a document whose front matter gives no title
    titled.write_text("---\noffice: Berlin\n---\n\n# Per diem: Berlin #\n\nEUR 28 a day.\n", encoding="utf-8")
    assert read_corpus(titled)[0].metadata == {"office": "Berlin", "title": "Per diem: Berlin"}
    titled.write_text("---\ntitle: Allowances\n---\n# Per diem\n", encoding="utf-8")
    assert read_corpus(titled)[0].metadata == {"title": "Allowances"}
    titled.write_text("Per diem.\n# Berlin\n", encoding="utf-8")  # a heading after the first line: a section
    assert read_corpus(titled)[0].metadata == {}
    titled.write_text("    # a code line\nPer diem.\n", encoding="utf-8")  # four spaces in: code, no heading
    assert read_corpus(titled)[0].metadata == {}
    titled.write_text("# Per diem\rEUR 28 a day.\r", encoding="utf-8")  # old Mac line ends
    assert read_corpus(titled)[0].metadata == {"title": "Per diem"}
    rule = tmp_path / "rule.md"  # a first line "----" is a horizontal rule, not front matter
    rule.write_text("----\nPer diem, Warsaw.\n---\nMore.\n", encoding="utf-8")
    [ruled] = read_corpus(rule)
    assert (ruled.metadata, ruled.text) == ({}, "----\nPer diem, Warsaw.\n---\nMore.\n")


def test_failed_index_run_leaves_publication(
    tmp_path: Path, seed_corpus: Path, prefect_harness: None
) -> None:
    from flows.index import index_flow
    from schemas.publication import current_manifest

    shutil.copy(seed_corpus, tmp_path / "corpus.jsonl")
    first = index_flow(
        corpus=str(tmp_path / "corpus.jsonl"),
        config=str(DEMO_CONFIG),
        out=str(tmp_path / "out"),
        run_date=RUN_DATE,
        quiet=True,
    )
    before = current_manifest(tmp_path / "out")
    bad = tmp_path / "bad.jsonl"
    bad.write_text((tmp_path / "corpus.jsonl").read_text() + '{"id": "oops", "metadata": {}}\n')
    with pytest.raises(CorpusError, match="bad.jsonl:18"):
        index_flow(
            corpus=str(bad), config=str(DEMO_CONFIG), out=str(tmp_path / "out"), run_date=RUN_DATE, quiet=True
        )
    assert current_manifest(tmp_path / "out") == before
    assert first["run_id"] == before["run_id"]
    idx = before["index"]
    hits = Index(idx["uri"], load_config(DEMO_CONFIG), idx["version"]).search(QUESTION, k=1)
    assert hits[0].id == "leave-berlin-return"
    assert not list((tmp_path / "out" / "runs" / ".staging").iterdir())


def test_one_text_is_embedded_on_one_thread_as_in_a_batch(seed_corpus: Path) -> None:
    """`encode_one` computes on one thread (`Embedder._one_thread`), gives the batch's vector, and leaves the
    batch its threads."""
    import torch

    texts = [json.loads(line)["text"] for line in seed_corpus.read_text().splitlines()][:4]
    embedder = Embedder()
    before = torch.get_num_threads()
    seen: list[int] = []
    model_encode = embedder.model.encode

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(torch.get_num_threads())
        return model_encode(*args, **kwargs)

    embedder.model.encode = spy
    try:
        one = [embedder.encode_one(t) for t in texts]
        batch = embedder.encode(texts, quiet=True)
    finally:
        del embedder.model.encode
    assert seen == [1] * len(texts) + [before]
    assert torch.get_num_threads() == before
    assert min(float(a @ b) for a, b in zip(one, batch, strict=True)) >= 0.9999


def test_bfloat16_embedding_keeps_the_reference_ranking(tmp_path: Path, seed_corpus: Path) -> None:
    """`embed_dtype: bfloat16` computes under bfloat16 autocast: float32 unit vectors within 0.001 cosine of
    float32's, the same for one text as in a batch, under a model identity of their own (so caches and stored
    skeleton vectors never mix the two); the index built with it ranks the reference question alike."""
    texts = [json.loads(line)["text"] for line in seed_corpus.read_text().splitlines()]
    full, half = Embedder(), Embedder(dtype="bfloat16")
    a, b = full.encode(texts, quiet=True), half.encode(texts, quiet=True)
    assert b.dtype == np.float32 and np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert (a * b).sum(axis=1).min() >= 0.999 and not np.array_equal(a, b)
    assert float(half.encode_one(texts[0]) @ b[0]) >= 0.999
    assert model_ref("", "bfloat16") != model_ref("", "float32") == model_ref("")
    config = load_config(DEMO_CONFIG)
    config.embed_dtype = "bfloat16"
    outcome = build_index(seed_corpus, config, tmp_path, RUN_DATE, quiet=True)
    hits = Index(outcome.uri, config, outcome.result.version).search(QUESTION, k=5)
    assert [h.id for h in hits] == [r[0] for r in REFERENCE]
    assert [h.score for h in hits] == pytest.approx([r[1] for r in REFERENCE], abs=0.005)


def test_a_facet_key_in_another_case_is_refused_only_alone() -> None:
    """"Office" alone would be read as no office; beside "office" (which is read) it is just more metadata."""
    from schemas.errors import CorpusError
    from tasks.index.corpus import Document
    from tasks.index.enrich import check_facet_types

    config = load_config(DEMO_CONFIG)
    check_facet_types([Document("a", "text", {"office": "Berlin", "Office": "HQ"}, "c.jsonl:1")], config)
    with pytest.raises(CorpusError, match=r"c.jsonl:2: metadata key 'Year' .* rename it to 'year'"):
        check_facet_types([Document("b", "text", {"Year": 2026}, "c.jsonl:2")], config)
    # a document naming its office by an alias: the document is at fault, not the config's alias
    with pytest.raises(CorpusError, match=r"n.md:2: office 'lisboa' of document 'n' is an alias of 'Lisbon' in "
                                          r"the config; write 'Lisbon'"):
        check_facet_types([Document("n", "text", {"office": "lisboa"}, "n.md:1", {"office": "n.md:2"})], config)
    check_facet_types([Document("n", "text", {"office": "Lisbon"}, "n.md:1")], config)


def test_a_long_document_is_read_for_its_facets_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A document without office metadata takes the one office its text names; read once per document, not
    once per chunk (a 3 MB handbook of 8,000 chunks would otherwise read its whole text 8,000 times)."""
    from schemas.extract import Lexicon
    from tasks.index.corpus import Document, chunk_document
    from tasks.index.enrich import enrich

    config = load_config(DEMO_CONFIG)
    lexicon = Lexicon(config)
    text = "\n\n".join(f"Section {i}. Staff of the Berlin office get {20 + i % 9} vacation days." for i in range(300))
    docs = [Document("berlin-handbook", text, {}, "h.md:1"), Document("plain", "No office here.", {}, "p.md:1")]
    chunks = [c for d in docs for c in chunk_document(d, config.chunking)]
    reads: list[int] = []
    read = lexicon.extract
    monkeypatch.setattr(lexicon, "extract", lambda t, now=None: reads.append(len(t)) or read(t, now))
    enriched = enrich(chunks, docs, config, lexicon, RUN_DATE)
    assert len(chunks) > 20
    assert {e.facets["office"] for e in enriched if e.chunk.doc_id == "berlin-handbook"} == {"Berlin"}
    assert [e.facets["office"] for e in enriched if e.chunk.doc_id == "plain"] == [None]
    assert sorted(reads) == sorted([len(text), len("No office here.")])


def test_a_value_a_text_writes_in_lower_case_is_a_word_there() -> None:
    """A chunk with no tier takes the one tier its text names as a name ("on the Business plan"), not one it writes
    in lower case ("a slot is free", "two business days"), which is the word, not the plan; nor, for a tier the
    corpus also writes in lower case, one that opens a sentence or a heading ("Free trials ...")."""
    from schemas.config import Config, Facet
    from schemas.extract import Lexicon
    from schemas.text import plain_words
    from tasks.index.corpus import Document, chunk_corpus
    from tasks.index.enrich import enrich

    config = Config(facets=[Facet(name="tier", values=["Free", "Team", "Business"])])
    texts = {"kestrel": "The Kestrel connector is included on the Business plan.", "slots": "Runs wait until a slot "
             "is free.", "replies": "Tickets are answered within two business days.", "shouting": "FREE PLAN LIMITS.",
             "both": "Workspaces on the Business plan may copy a free template.", "trials": "Free trials last 14 "
             "days.", "heading": "Team Management\nAdmins invite members.", "folded": "Die Straße: on the "
             "Business plan, too.", "opens": "Kestrel. Business workspaces may use it."}
    docs = [Document(k, t, {}, f"c.jsonl:{n}") for n, (k, t) in enumerate(texts.items(), 1)]
    chunks = chunk_corpus(docs, config.chunking)
    plain = plain_words(c.text for c in chunks)
    assert {"free", "business"} <= plain and "team" not in plain
    enriched = enrich(chunks, docs, config, Lexicon(config), RUN_DATE, plain)
    assert {e.chunk.doc_id: e.facets["tier"] for e in enriched} == {
        "kestrel": "Business", "slots": None, "replies": None, "shouting": None, "both": "Business",
        "trials": None, "heading": "Team", "folded": "Business", "opens": None}
    # without the corpus's lower-case words, a capital anywhere names the value
    assert [e.facets["tier"] for e in enrich(chunks, docs, config, Lexicon(config), RUN_DATE)
            if e.chunk.doc_id in ("trials", "opens")] == ["Free", "Business"]
    assert [c.value for c in Lexicon(config).extract("is the free plan enough?")] == ["Free"]


def _versions(folder: Path, files: dict[str, str]) -> dict[str, tuple[str | None, str | None, bool]]:
    from schemas.extract import Lexicon
    from tasks.index.corpus import chunk_corpus, read_corpus
    from tasks.index.enrich import enrich

    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    config = load_config(DEMO_CONFIG)
    docs = read_corpus(folder)
    enriched = enrich(chunk_corpus(docs, config.chunking), docs, config, Lexicon(config), RUN_DATE)
    return {e.chunk.doc_id: (e.supersedes, e.superseded_by, e.is_current) for e in enriched}


def test_a_document_that_names_the_version_it_supersedes_is_linked_to_it(tmp_path: Path) -> None:
    """Ids that share no policy key ("travel-rules", "travel-handbook-new") are versions when the newer says so."""
    from schemas.errors import CorpusError

    old = "---\noffice: Berlin\neffective_from: 2025-01-01\n---\nTravel: economy class.\n"
    new = "---\noffice: Berlin\neffective_from: 2026-01-01\nsupersedes: travel-rules\n---\nTravel: any class.\n"
    newer = "---\noffice: Berlin\neffective_from: 2027-01-01\nsupersedes: travel-handbook-new\n---\nTravel: rail.\n"
    got = _versions(tmp_path / "ok", {"travel-rules.md": old, "travel-handbook-new.md": new, "t3.md": newer})
    assert got == {"travel-rules": (None, "travel-handbook-new", False),
                   "travel-handbook-new": ("travel-rules", "t3", True),  # 2027's is not in force on RUN_DATE
                   "t3": ("travel-handbook-new", None, False)}
    bad = {"travel-rules.md": old, "b.md": new.replace("supersedes: travel-rules", "supersedes: travel-rule")}
    with pytest.raises(CorpusError, match=r"b.md:4: .*supersedes 'travel-rule', which is no document id"):
        _versions(tmp_path / "unknown", bad)
    bad = {"travel-rules.md": old.replace("effective_from: 2025-01-01\n", ""), "b.md": new}
    with pytest.raises(CorpusError, match=r"b.md:4: .*'travel-rules' has no effective date; give it `effective_from"):
        _versions(tmp_path / "undated", bad)
    bad = {"travel-rules.md": old.replace("Berlin", "Lisbon"), "b.md": new}
    with pytest.raises(CorpusError, match=r"b.md:4: .*its office is 'Berlin' and 'travel-rules''s is 'Lisbon'"):
        _versions(tmp_path / "other-office", bad)
    loop = {"a.md": new.replace("travel-rules", "b"), "b.md": old.replace("---\nT", "supersedes: a\n---\nT")}
    with pytest.raises(CorpusError, match=r"supersedes it in turn"):
        _versions(tmp_path / "loop", loop)
    same_day = {"travel-rules.md": old, "b.md": new.replace("2026-01-01", "2025-01-01")}  # which would be current?
    with pytest.raises(CorpusError, match=r"b.md:4: .*takes effect on 2025-01-01, not after 'travel-rules' "
                                          r"\(2025-01-01\)"):
        _versions(tmp_path / "same-day", same_day)
    two_policies = {"travel-rules.md": old.replace("---\nT", "policy: travel\n---\nT"),
                    "b.md": new.replace("---\nT", "policy: trips\n---\nT")}
    with pytest.raises(CorpusError, match=r"b.md:4: .*of policy 'trips' but supersedes 'travel-rules' of policy "
                                          r"'travel'"):
        _versions(tmp_path / "two-policies", two_policies)


def test_a_remote_index_that_does_not_answer_is_named_as_bad_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """No object store can be reached here: LanceDB's error for one (a RuntimeError with the Rust source
    location) stands in. It becomes one line naming index_uri, exit 2 in the CLI, not a traceback."""
    import lancedb

    from schemas.errors import IndexUnreachable
    from tasks.index.store import open_table

    def unreachable(uri: str) -> None:
        raise RuntimeError("lance error: LanceError(IO): Generic S3 error: Failed to resolve region for bucket "
                           "'b', /root/.cargo/registry/src/lance-io-13.0.0/src/object_store/providers/aws.rs:319:13")

    monkeypatch.setattr(lancedb, "connect", unreachable)
    with pytest.raises(IndexUnreachable, match=r"^s3://b/x: the index store did not answer \(.*bucket 'b'\); check "
                                               r"index_uri") as err:
        open_table("s3://b/x", "chunks")
    assert "aws.rs" not in str(err.value)
    with pytest.raises(RuntimeError, match="Generic S3 error"):  # a local path's failure is no address problem
        open_table("/tmp/x", "chunks")
