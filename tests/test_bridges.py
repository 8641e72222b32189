"""Bridges from the corpus: a shape that names no category value but a thing the corpus ties to one (an event,
a system) is planned as a bridge, with no word listed in the code or the config (tasks/mine/bridges.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from planbake.cli import app
from schemas.bridge import Bridge, asks_more, phrase, read_served, served, served_bridge, terms
from schemas.class_routes import SPLITS
from schemas.config import Config, Facet
from schemas.extract import Lexicon
from schemas.files import BRIDGE_TERMS
from schemas.plan import PLAN_WORDS
from schemas.publication import current_run
from tasks.mine.bridges import find_bridges, mark_bridges
from tests.conftest import DEMO_CONFIG, write_log

ROOT = Path(__file__).resolve().parent.parent
CONFIG = Config(facets=[Facet(name="office", values=["Berlin", "Lisbon", "Porto"]), Facet(name="year", kind="year")])


def _shape(skeleton: str, signature: str = "|") -> dict[str, Any]:
    return {"shape_id": skeleton, "skeleton": skeleton, "signature": signature, "recurring": True,
            "type": "single", "reason": "one need"}


def _chunk(text: str, office: str | None = None, year: int | None = None) -> dict[str, Any]:
    return {"text": text, "office": office, "year": year}


def _bridges(shapes: list[dict[str, Any]], chunks: list[dict[str, Any]]) -> dict[str, Any]:
    return find_bridges(shapes, chunks, Lexicon(CONFIG, {}), CONFIG)


SUMMITS = [_chunk("Design summit 2025. The 2025 design summit was held at the Berlin office in May.", year=2025),
           _chunk("Design summit 2026: the design summit takes place in Lisbon this year.", year=2026),
           _chunk("Per diem. Travellers get a daily allowance for meals and small costs on every trip with a night "
                  "away; at the design summit meals are provided.")]


def test_a_thing_placed_by_its_own_chunks_ties_to_its_value_per_year() -> None:
    shape = _shape("what per diem do i get at the {year} design summit", "year|")
    [(sid, bridge)] = _bridges([shape], SUMMITS).items()
    assert (bridge.term, bridge.facet, bridge.ties) == ("design summit", "office", {"2025": "Berlin",
                                                                                   "2026": "Lisbon"})
    mark_bridges([shape], {sid: bridge})
    assert shape["type"] == "bridge" and json.loads(shape["bridge"])["term"] == "design summit"
    assert "design summit" in shape["reason"] and "2025: Berlin" in shape["reason"]
    # without a year in the question, values that differ by year place nothing
    assert _bridges([_shape("what per diem do i get at the design summit")], SUMMITS) == {}


def test_a_company_wide_rule_about_the_topic_breaks_the_tie() -> None:
    """The VPN has a company-wide rule and a local override: "vpn" is a topic, not a thing in one place."""
    chunks = [_chunk("VPN rules. Use the company VPN on every untrusted network."),
              _chunk("VPN at Porto. The Porto office keeps the VPN always on.", office="Porto")]
    assert _bridges([_shape("what are the vpn rules for contractors")], chunks) == {}
    # a chunk that only mentions the thing further on leaves the tie alone
    chunks = [_chunk("Ledger platform. The Ledger finance platform is hosted at the Porto site."),
              _chunk("Backups. Every system is backed up nightly; this applies to a long list of systems such "
                     "as the ledger among others.")]
    [bridge] = _bridges([_shape("how long are backups of the ledger platform kept")], chunks).values()
    assert (bridge.term, bridge.ties) == ("ledger platform", {"": "Porto"})


def test_a_word_most_chunks_use_without_a_place_ties_nothing() -> None:
    filler = "Requests go through the service portal, where each one is reviewed and answered within two days"
    chunks = [_chunk("New at Berlin. The Berlin office opens a second floor.", office="Berlin"),
              *[_chunk(f"Policy {n}. {filler}; a new form replaces the old one.") for n in range(3)]]
    assert _bridges([_shape("what is new this week")], chunks) == {}  # "new": 1 of 4 chunks place it
    assert [b.term for b in _bridges([_shape("what is new this week")], chunks[:2]).values()] == ["new"]


def test_of_two_terms_that_tie_the_one_written_as_a_name_is_taken() -> None:
    chunks = [_chunk("Incident reporting at Porto. Report within 24 hours.", office="Porto"),
              _chunk("Ledger platform. Finance runs on the Ledger platform, hosted in Berlin.")]
    [bridge] = _bridges([_shape("incident reporting for the ledger platform")], chunks).values()
    assert bridge.term in ("ledger", "ledger platform") and bridge.ties == {"": "Berlin"}


def test_a_shape_naming_a_category_value_or_asking_nothing_else_is_no_bridge() -> None:
    assert _bridges([_shape("what per diem do i get in {office} at the design summit", "office|")], SUMMITS) == {}
    assert _bridges([_shape("where is the {year} design summit", "year|")], SUMMITS) == {}  # only the thing


_WORD = st.sampled_from(["design", "summit", "ledger", "platform", "per", "diem", "the", "at", "for", "{year}",
                         "what", "is", "backups", "of", "kept"])


@given(st.lists(_WORD, min_size=1, max_size=12))
def test_a_phrase_holds_its_term_and_stops_at_function_words(tokens: list[str]) -> None:
    text = " ".join(tokens)
    for term in terms(text):
        span = phrase(text, term)
        assert span is not None
        inside = tokens[span[0]:span[1]]
        assert term in " ".join(inside) and not set(inside) & PLAN_WORDS
        assert span[0] == 0 or tokens[span[0] - 1] in PLAN_WORDS
        assert span[1] == len(tokens) or tokens[span[1]] in PLAN_WORDS
        assert asks_more(text, span) == any(t not in PLAN_WORDS and t != "{year}"
                                            for t in tokens[:span[0]] + tokens[span[1]:])


def test_a_bridge_through_a_thing_the_demo_never_mentions(tmp_path: Path, prefect_harness: None) -> None:
    """Two corpus sentences tie a "design summit" to an office per year; logged questions about it (three users)
    become a bridge shape with no configured word, and the lookup plans each year's office."""
    corpus = tmp_path / "corpus.jsonl"
    rows = [json.loads(line) for line in (ROOT / "data" / "demo" / "corpus.jsonl").read_text().splitlines()]
    rows += [{"id": "design-summit-2025", "text": "Design summit 2025. The 2025 design summit was held at the "
              "Amsterdam office, with 80 designers.", "metadata": {"office": None, "year": 2025}},
             {"id": "design-summit-2026", "text": "Design summit 2026. The 2026 design summit takes place at the "
              "Warsaw office in June.", "metadata": {"office": None, "year": 2026}}]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
    asked = [f"What per diem do I get at the {y} design summit?" for y in (2025, 2026)] * 3
    logs = write_log(tmp_path / "logs", asked, start)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["nightly", "--config", str(DEMO_CONFIG), "--corpus", str(corpus), "--logs",
                                   str(logs), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    for year, office in ((2025, "Amsterdam"), (2026, "Warsaw")):
        res = CliRunner().invoke(app, ["retrieve", f"What per diem do I get at the {year} design summit?",
                                       "--out", str(out), "--json"])
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert doc["lookup"]["shape_type"] == "bridge" and doc["lookup"]["route"] in ("split", "split_original")
        first, second = doc["parts"][:2]
        assert first["answer"] == office and second["filters"] == {"office": office}, doc["parts"]
    # a question no one logged that names the thing is planned through it too (the served bridge terms)
    assert json.loads((current_run(out) / BRIDGE_TERMS.name).read_text())["design summit"]["route"] in SPLITS
    for year, office in ((2025, "Amsterdam"), (2026, "Warsaw")):
        res = CliRunner().invoke(app, ["retrieve", f"Is lunch provided for vegetarians at the {year} design summit?",
                                       "--out", str(out), "--json"])
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert doc["lookup"]["source"] == "class" and doc["lookup"]["shape_type"] == "bridge", doc["lookup"]
        first, second = doc["parts"][:2]
        assert first["answer"] == office and second["filters"] == {"office": office}, doc["parts"]
    # naming an office, the question asks of that office: no bridge
    res = CliRunner().invoke(app, ["retrieve", "Is lunch provided for vegetarians at the design summit in Berlin?",
                                   "--out", str(out), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["lookup"]["shape_type"] != "bridge", res.output


def _served(term: str, ties: dict[str, str], routes: list[str], named: bool = False) -> dict[str, Any]:
    return served((Bridge(term, "office", ties, 2, named), r) for r in routes)


def test_a_term_is_served_where_most_of_its_shapes_split_and_the_corpus_shows_a_thing() -> None:
    """An event placed by year or a thing written as a name is served; a topic one office's chunks happen to hold
    ("customer", no year, no name) never is, however its shapes were routed."""
    assert _served("design summit", {"2025": "Berlin"}, ["split", "one_search"]) == {}  # not more splits
    doc = _served("design summit", {"2025": "Berlin", "2026": "Lisbon"}, ["split", "split_original", "split"])
    assert doc["design summit"]["route"] == "split" and doc["design summit"]["split_shapes"] == 3
    assert _served("ledger", {"": "Berlin"}, ["split_original"], named=True)["ledger"]["route"] == "split_original"
    assert _served("customer", {"": "Berlin"}, ["split", "split"]) == {}
    assert _served("customer", {"2025": "Berlin", "2026": "Berlin"}, ["split"]) == {}  # one place every year
    # every shape of the term counts: one split of three is no majority
    assert _served("design summit", {"2025": "Berlin", "2026": "Lisbon"}, ["split", "one_search", "one_search"]) == {}


def test_a_publication_serves_only_well_formed_bridge_terms(tmp_path: Path) -> None:
    good = _served("design summit", {"2025": "Berlin", "2026": "Lisbon"}, ["split"])
    (tmp_path / BRIDGE_TERMS.name).write_text(json.dumps({**good, "a": {"route": "split"}, "b": [],
                                                          "c": {**good["design summit"], "route": "one_search"}}))
    assert read_served(tmp_path) == good
    assert read_served(tmp_path / "none") == {}


def test_a_served_term_bridges_a_question_only_without_a_category_value_and_with_its_year() -> None:
    terms_served = {**_served("design summit", {"2025": "Berlin", "2026": "Lisbon"}, ["split"]),
                    **_served("ledger", {"": "Porto"}, ["split"], named=True)}
    kinds = {"office": "category", "year": "year"}

    def bridge(skeleton: str, named: list[str]) -> str | None:
        found = served_bridge(skeleton, named, kinds, terms_served, {"berlin", "lisbon", "porto"})
        return found[0].term if found else None

    assert bridge("is lunch provided at the {year} design summit", ["year"]) == "design summit"
    assert bridge("is lunch provided at the design summit", []) is None  # which year's office: unknown
    assert bridge("is lunch provided at the design summit in {office}", ["office"]) is None
    assert bridge("when are backups of the ledger platform kept", []) == "ledger"
    assert bridge("the ledger platform", []) is None  # nothing asked beside the thing
