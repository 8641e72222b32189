"""Step queries a person would write (`tasks.plan.readable`): refused leftovers, accepted questions, the plan stage's
rejection of an unreadable template, and every step query of the demo publication."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from planbake.cli import app
from schemas.config import load_config
from schemas.constraint import Constraint
from schemas.extract import Lexicon, Skeleton
from schemas.files import CACHE, TEMPLATES
from schemas.plan import Plan, PlanError, Step
from schemas.publication import current_run
from tasks.plan.check import check_template
from tasks.plan.readable import ARTICLES, CONJUNCTIONS, FUNCTION_WORDS, check_readable, tidy, unreadable
from tasks.plan.rules_writer import slotted, write_template
from tests.conftest import DEMO_CONFIG, ROOT, SHARED

CONFIG = load_config(DEMO_CONFIG)


@pytest.mark.parametrize(("query", "why"), [
    ("", "no text"),
    ("  ?! ", "no text"),
    ("vacation days in {}", "slot {} is empty"),
    ("vacation days in { }", "slot { } is empty"),
    ("vacation days in {office}", "slot {office} is never filled"),  # a skeleton's placeholder, never numbered
    ("when did invade the", "ends with 'the'"),
    ("when did invade the ruhr in France", "'did' 'invade' 'the': a word is missing"),
    ("compare parental leave in {office_1} and", "ends with 'and'"),
    ("remote work allowance in", "ends with 'in'"),
    ("tell me the number of vacation days my employee id is", "ends with 'is'"),
    ("and for part-time staff", "starts with 'and'"),
    ("the of per diem", "'the' right before 'of'"),
    ("in the", "no word but function words"),
    ("per diem in {office_1} this year", "says 'this year', but its filter holds the year"),
])
def test_leftovers_are_refused(query: str, why: str) -> None:
    assert unreadable(query, year_filter=True) == why


def test_a_filled_plan_has_no_constraint_slot_left() -> None:
    assert unreadable("vacation days in {office_1}") == ""  # a template's slot
    assert unreadable("vacation days in {office_1}", filled=True) == "slot {office_1} is never filled"
    assert unreadable("parental leave in {s1}", filled=True) == ""  # code fills it when the step runs


@pytest.mark.parametrize("query", [
    "How many films did Stanley Kubrick direct?",
    "Did Kubrick direct The Shining?",
    "What is Christopher Nolan known for?",  # a question strands its preposition
    "Which city is the company based in?",
    "where the {office_1} office is",
    "the per diem in {office_1} in {year_1}",  # a keyword query may open with an article or a preposition
    "in {office_1}, how many vacation days",
    "what did the report say about {s1}",
    "vacation days this year",  # no year filter: the text is all that says it
    "list of public holidays from A to Z",
    "which club won Serie A in 2012",  # "a" a letter: it dangles nowhere
    "If Gallu is a demon Lilu is what?",
    "to which university did both the Stanford Cardinal and Gerald Reaven go",
    "past members of the the Conglomerate",  # a doubled word is a typo, not a cut
])
def test_questions_and_keyword_queries_pass(query: str) -> None:
    assert unreadable(query) == ""


_CONTENT = st.sampled_from(["vacation", "days", "Berlin", "diem", "Kubrick", "films", "{office_1}", "{s1}", "2026"])


@given(st.lists(_CONTENT, min_size=1, max_size=8), st.sampled_from(sorted(ARTICLES - {"a"} | CONJUNCTIONS)))
def test_a_dangling_article_or_conjunction_is_always_refused(body: list[str], word: str) -> None:
    """Whatever the words before it, a query ending in "the", "an" or a conjunction is cut short ("a" is also a
    letter: "Serie A"); one of content words alone reads."""
    query = " ".join(body)
    assert unreadable(query) == ""
    assert unreadable(f"{query} {word}") == f"ends with {word!r}"
    assert unreadable(f"{query} {word}".upper()) != ""



@pytest.mark.parametrize(("query", "tidied"), [  # the rule writer's leftovers on MultiHop-RAG's questions
    ("the from credit ratings agencies", "from credit ratings agencies"),
    ("the of per diem", "of per diem"),
    ("{s1} company discussed in articles from", "{s1} company discussed in articles"),
    ("the projected season achievement discussed in from", "the projected season achievement discussed"),
    ("considering the updates on google maps search as", "considering the updates on google maps search"),
    ("after the report on sam bankman fried published on", "after the report on sam bankman fried published"),
    ("{s1} accused of fraud for personal gain with these claims being", "{s1} accused of fraud for personal gain "
                                                                        "with these claims"),
    ("does describe the match as a showcase of financial power", "describe the match as a showcase of financial "
                                                                 "power"),  # "does {source} describe the match"
    ("and the new features discussed by", "the new features discussed"),
])
def test_tidy_drops_the_leftovers_of_cutting_a_question_up(query: str, tidied: str) -> None:
    assert unreadable(query) != ""
    assert tidy(query) == tidied and unreadable(tidied) == ""


@pytest.mark.parametrize("query", [
    "What is Christopher Nolan known for?",  # reads: as it is
    "vacation  days in {office_1}",  # reads, spaces and all
    "in the",  # nothing left to read
    "vacation days in {}",  # no word to drop mends a slot
    "per diem, in the",  # punctuation: left to the check
])
def test_tidy_leaves_what_reads_or_what_it_cannot_mend(query: str) -> None:
    assert tidy(query) == query


_ANY_WORD = st.sampled_from(sorted(FUNCTION_WORDS | {"what", "which", "vacation", "Berlin", "diem", "{office_1}",
                                                     "{s1}", "{}", "published", "both", "this", "year"}))


@given(st.lists(_ANY_WORD, max_size=10).map(" ".join) | st.text(max_size=40))
def test_tidy_returns_a_query_that_reads_or_the_query_refused(query: str) -> None:
    """Whatever it is given, `tidy` returns a query the check accepts, or the query unchanged (and refused when it
    changed nothing it could); it only drops words, and tidying twice changes nothing more."""
    tidied = tidy(query)
    assert unreadable(tidied) == "" or tidied == query
    if tidied != query:
        kept = iter(query.split())
        assert all(w in kept for w in tidied.split())  # the query's words, in order, some left out
    assert tidy(tidied) == tidied


def test_a_question_in_its_own_words_is_judged_by_its_slots_and_year_alone() -> None:
    """A one-step plan of the skeleton asks what a person typed: its typos stay; a slot or year text does not."""
    typo = "name the are where the railroad operates"
    assert unreadable(typo) == "'the' right before 'are'" and unreadable(typo, own=True) == ""
    assert unreadable("leave in {}", own=True) == "slot {} is empty"
    assert unreadable("leave this year", own=True, year_filter=True) == ("says 'this year', but its filter holds "
                                                                         "the year")


def test_check_readable_names_the_step() -> None:
    plan = Plan(steps=[Step(id="s1", query="per diem in {year_1}", filters={"year": "{year_1}"}),
                       Step(id="s2", query="per diem this year", filters={"year": "{year_1}"})])
    with pytest.raises(PlanError) as err:
        check_readable(plan, "year")
    assert err.value.reason == "unreadable"
    assert str(err.value) == ("unreadable: s2: query 'per diem this year': says 'this year', but its filter holds "
                              "the year")
    check_readable(plan, None)  # no year facet: the text is the only year


def test_the_plan_stage_rejects_an_unreadable_template() -> None:
    """A written template (the model writer's, or the rules') goes through `check_template`: an unreadable one is
    rejected with its reason, as an invalid one is; the rule writer's own template of the shape passes."""
    lexicon = Lexicon(CONFIG)
    shape = {"skeleton": "how many vacation days in {office}", "type": "single"}
    samples = [Skeleton(shape["skeleton"], (Constraint("office", "Berlin"),))]
    bad = Plan(steps=[Step(id="s1", query="how many vacation days in the", filters={"office": "{office_1}"})])
    status = check_template(bad, shape, CONFIG, lexicon, samples)
    assert status["valid"] is False
    assert status["complaint"] == "unreadable: s1: query 'how many vacation days in the': ends with 'the'"
    good = write_template(shape["skeleton"], "single", CONFIG)
    assert check_template(good, shape, CONFIG, lexicon, samples)["valid"] is True
    typo = {"skeleton": "how many vacation days in {office} the are", "type": "single"}  # the person's own words
    own = write_template(typo["skeleton"], "single", CONFIG)
    assert [s.query for s in own.steps] == ["how many vacation days in {office_1} the are"]
    assert check_template(own, typo, CONFIG, lexicon, samples)["valid"] is True


def test_the_rule_writer_drops_the_lead_in_of_a_scrubbed_value() -> None:
    """A scrubbed value leaves the question ("call me at {phone}"): so do the function words that led to it."""
    assert slotted("remote work allowance in {office} call me at {phone}", CONFIG.facet_names) == \
        "remote work allowance in {office_1} call me"
    assert slotted("public holidays in {office} in {year} reply to {email}", CONFIG.facet_names) == \
        "public holidays in {office_1} in {year_1} reply"
    assert all(unreadable(slotted(s, CONFIG.facet_names)) == "" for s in [
        "vacation days my employee id is {employee_id}", "per diem in {office} and {email}"])


def test_every_step_query_of_the_demo_publication_reads(demo_publication: Path) -> None:
    """Each template's steps (with slots) and each cached plan's (filled) pass the check; none was rejected as
    unreadable."""
    run = current_run(demo_publication)
    templates = pq.read_table(run / TEMPLATES.name).to_pylist()
    queries = [(s, False) for t in templates for s in json.loads(t["template"])["steps"]]
    plans = [row["plan"] for row in pq.read_table(run / CACHE.name, columns=["plan"]).to_pylist() if row["plan"]]
    queries += [(s, True) for p in plans for s in json.loads(p)["steps"]]
    assert len(templates) > 50 and len(plans) > 100
    bad = [(s["query"], why) for s, filled in queries
           if (why := unreadable(s["query"], filled=filled, year_filter="year" in s.get("filters", {})))]
    assert bad == []
    assert not [t["complaint"] for t in templates if t["complaint"].startswith("unreadable")]


@pytest.mark.skipif(not (SHARED / "hotpotqa_100" / "corpus.jsonl").is_file(), reason="needs the shared HotpotQA set")
def test_every_step_query_of_the_hotpotqa_publication_reads(tmp_path: Path, prefect_harness: None) -> None:
    """The HotpotQA publication (entity slots: a step searches each name with the question's content words): every
    template's steps pass the check, and none was rejected as unreadable."""
    shared = SHARED / "hotpotqa_100"
    res = CliRunner().invoke(app, ["eval", "--config", str(ROOT / "data" / "configs" / "hotpotqa.yaml"), "--corpus",
                                   str(shared / "corpus.jsonl"), "--questions", str(shared / "questions.jsonl"),
                                   "--budget", "4", "--in-sample", "--out", str(tmp_path / "ev"), "--json"])
    assert res.exit_code == 0, res.output
    templates = pq.read_table(current_run(tmp_path / "ev") / TEMPLATES.name).to_pylist()
    steps = [s for t in templates for s in json.loads(t["template"])["steps"]]
    assert len(templates) > 50 and any("{entity_1}" in s["query"] for s in steps)
    assert [(s["query"], why) for s in steps if (why := unreadable(s["query"]))] == []
    assert not [t["complaint"] for t in templates if t["complaint"].startswith("unreadable")]
