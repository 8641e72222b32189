"""Corpus vocabulary: sub-queries say a synonym the way their partition's chunks do, offline and online alike."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.cache import PlanCache
from schemas.config import load_config
from schemas.extract import Lexicon
from schemas.plan import check_plan, fill_slots
from schemas.vocabulary import Vocabulary, count_terms, synonym_groups
from tasks.evaluate import markdown_vocabulary
from tasks.index.store import Index
from tasks.plan.rules_writer import write_template
from tasks.plan.vocabulary import keeps_constraints, worded
from tasks.publish.report import _vocabulary_lines
from tests.conftest import DEMO_CONFIG

QUESTION = "Compare parental leave for the second parent in Berlin and Amsterdam."
GROUPS = synonym_groups({"second parent": ["partner", "non-birth parent"], "per diem": ["daily allowance"]})
USAGE = {"office": {
    "Amsterdam": count_terms(GROUPS, ["the birth parent is off for 16 weeks and the partner for 6 weeks"]),
    "Berlin": count_terms(GROUPS, ["the second parent gets 6 weeks", "the second parent can work part-time"]),
    "Lisbon": count_terms(GROUPS, ["per diem of 60 euros"]),
}}
VOCAB = Vocabulary(GROUPS, USAGE)


def test_groups_fold_and_merge() -> None:
    assert GROUPS == [["daily allowance", "per diem"], ["non birth parent", "partner", "second parent"]]
    assert synonym_groups({"a": ["b"], "c": ["b", "d"], "e": []}) == [["a", "b", "c", "d"]]


def test_counts_whole_words_only() -> None:
    counts = count_terms(GROUPS, ["Partners and the partner, the PARTNER", "counterpartner"])
    assert counts["partner"] == 2 and counts["second parent"] == 0


def test_a_partition_says_its_own_word() -> None:
    assert VOCAB.swaps({"office": "Amsterdam"}) == {"second parent": "partner", "non birth parent": "partner"}
    assert VOCAB.rewrite("parental leave for the Second  Parent in {office_2}", {"office": "Amsterdam"}) \
        == "parental leave for the partner in {office_2}"
    assert VOCAB.rewrite("leave for the non-birth parent", {"office": "Berlin"}) == "leave for the second parent"
    assert VOCAB.rewrite("leave for the second parent", {"office": "Berlin"}) == "leave for the second parent"
    # a partition that uses no term of a group teaches nothing about it; a slot is no partition
    assert VOCAB.rewrite("leave for the second parent", {"office": "Lisbon"}) == "leave for the second parent"
    assert VOCAB.rewrite("leave for the second parent", {"office": "{s1}"}) == "leave for the second parent"
    assert VOCAB.rewrite("daily allowance in lisbon", {"office": "Lisbon"}) == "per diem in lisbon"


def test_accents_and_several_filters() -> None:
    vocab = Vocabulary(synonym_groups({"crèche": ["daycare"], "x": ["y", "z"]}), {
        "office": {"London": {"daycare": 2}, "Paris": {"y": 1}},
        "team": {"HR": {"z": 1}}})
    assert vocab.rewrite("Crèche hours", {"office": "London"}) == "daycare hours"
    # office Paris says y, team HR says z: they disagree on x and on each other's word, so nothing is swapped
    assert vocab.swaps({"office": "Paris", "team": "HR"}) == {}
    assert vocab.rewrite("x y z", {"office": "Paris", "team": "HR"}) == "x y z"
    # a group no partition uses changes no swap, but it changes what the rewrite matches: a new digest
    more = Vocabulary(synonym_groups({"crèche": ["daycare"], "x": ["y", "z"], "nursery": ["kita"]}), vocab.usage)
    assert more.swaps({"office": "London"}) == vocab.swaps({"office": "London"})
    assert more.digest() != vocab.digest()


def test_a_swapped_term_keeps_the_constraint_and_a_clashing_group_is_caught() -> None:
    """Move 5 after the rewrite: "partner" says the qualifier "second parent" (its synonym), but a group that
    also holds another qualifier ("birth parent") would swap one constraint for another."""
    config = load_config(DEMO_CONFIG)
    lexicon = Lexicon(config)
    sk = lexicon.skeleton("How long is parental leave for the second parent in Amsterdam?")
    plan = fill_slots(write_template(sk.text, "single", config), sk.slots)
    assert [s.query for s in worded(plan, VOCAB).steps] == ["how long is parental leave for the partner in Amsterdam"]
    assert not check_plan(worded(plan, VOCAB), sk.constraints, lexicon.extract).ok  # the words alone: dropped
    assert keeps_constraints(plan, sk, lexicon, VOCAB).ok
    assert not keeps_constraints(plan, lexicon.skeleton("parental leave for the birth parent in Amsterdam"), lexicon,
                                 VOCAB).ok  # the swap excuses only the qualifier it replaced
    clash = synonym_groups({"second parent": ["birth parent"]})
    vocab = Vocabulary(clash, {"office": {"Amsterdam": count_terms(clash, ["the birth parent is off"])}})
    check = keeps_constraints(plan, sk, lexicon, vocab)
    assert not check.ok and "birth parent" in check.complaint()


def test_apply_keeps_an_unchanged_plan_as_is() -> None:
    plan = {"steps": [{"id": "s1", "query": "vacation days", "filters": {"office": "Amsterdam"}}]}
    assert VOCAB.apply(plan) is plan
    assert Vocabulary().apply(plan) is plan and not Vocabulary()
    changed = VOCAB.apply({"steps": [{"id": "s1", "query": "second parent leave", "filters": {"office": "Amsterdam"}},
                                     {"id": "s2", "query": "second parent leave", "filters": {"office": "Berlin"}}]})
    assert [s["query"] for s in changed["steps"]] == ["partner leave", "second parent leave"]


_WORDS = st.lists(st.sampled_from(["second parent", "partner", "non-birth parent", "per diem", "daily allowance",
                                   "leave", "in", "{office_1}", "Second Parent", "x"]), max_size=8).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(_WORDS, st.sampled_from(["Amsterdam", "Berlin", "Lisbon", "Toronto", "{office_1}"]))
def test_rewrite_is_deterministic_idempotent_and_survives_publication(query: str, office: str) -> None:
    filters = {"office": office}
    once = VOCAB.rewrite(query, filters)
    assert VOCAB.rewrite(once, filters) == once
    assert once.count("{office_1}") == query.count("{office_1}")
    published = Vocabulary(**json.loads(json.dumps(VOCAB.to_json())))  # as lookup reads vocabulary.json
    assert published.rewrite(query, filters) == once and published.digest() == VOCAB.digest()


def test_seed_amsterdam_part_found_unfiltered_in_the_corpus_words(seed_eval: dict) -> None:
    """The lesson's question: the Amsterdam policy says "partner"; the plan's Amsterdam step says it too, and
    then finds leave-amsterdam even without its filter, within its share of a 4-chunk budget."""
    out = Path(seed_eval["out"])
    cache = PlanCache.open(out)
    res = cache.lookup(QUESTION)
    assert res.hit and res.plan is not None
    queries = {s["filters"]["office"]: s["query"] for s in res.plan["steps"]}
    assert "partner" in queries["Amsterdam"] and "second parent" not in queries["Amsterdam"]
    assert "second parent" in queries["Berlin"]  # the Berlin policy says "second parent"
    assert res.trace["evaluation"]["vocabulary"]["used"] is True

    manifest = json.loads((cache.run_dir / "manifest.json").read_text())
    index = Index(manifest["index"]["uri"], load_config(DEMO_CONFIG), manifest["index"]["version"])
    worded = [h.id for h in index.search(queries["Amsterdam"], 2)]
    plain = [h.id for h in index.search(queries["Amsterdam"].replace("partner", "second parent"), 2)]
    assert "leave-amsterdam" in worded and "leave-amsterdam" not in plain

    rows = {r["shape"]: r for r in seed_eval["vocabulary"]}
    assert rows["comparison"]["changed"] >= 1
    assert rows["comparison"]["corpus_words"] > rows["comparison"]["question_words"]
    assert rows["ALL"]["corpus_words"] == 1.0
    assert len(markdown_vocabulary(seed_eval["vocabulary"])) == 2 + len(seed_eval["vocabulary"])
    report = _vocabulary_lines(pq.read_table(cache.run_dir / "templates.parquet").to_pylist())
    assert "### Corpus vocabulary" in report
    assert any("second parent" in line and "| 0.50 | 1.00 | yes |" in line for line in report)


def test_demo_publication_carries_and_reports_the_vocabulary(demo_publication: Path) -> None:
    cache = PlanCache.open(demo_publication)
    swaps = cache.vocabulary.swaps({"office": "London"})
    assert swaps.get("vacation") == "annual leave"  # the London policies say "annual leave"
    assert swaps.get("second parent") == "partner"
    assert "second parent" not in cache.vocabulary.swaps({"office": "Berlin"})  # Berlin says "second parent"
    report = (cache.run_dir / "report" / "report.md").read_text()
    assert "### Corpus vocabulary" in report
    assert ("Routes were measured with vector search, merge `round_robin`, a context of 4 chunks and 4 chunks per "
            "step.") in report
    measured = [json.loads(t["evaluation"]).get("vocabulary") for t in cache.templates.values()]
    assert any(m and m["used"] for m in measured)
    for shape_id, tpl in cache.templates.items():  # a served plan says what its template was measured with
        doc = tpl["evaluation_doc"].get("vocabulary", {})
        entries = [e for e in cache.entries.values() if e.shape_id == shape_id and e.plan]
        for e in entries[:3]:
            plan = json.loads(e.plan or "")
            assert (cache.vocabulary.apply(plan) == plan) or not doc.get("used")
