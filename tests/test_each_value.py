"""Aggregations over every value of a facet: "Which plans include SSO?" names no tier but asks of each
(schemas/each_value.py); it is typed an aggregation and searched once per value (tasks/plan/rules_writer.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.cache import PlanCache
from schemas.config import Config, Facet
from schemas.each_value import each_value_span, noun_forms
from schemas.extract import Lexicon
from tasks.mine.classify import classify
from tasks.plan.check import check_template
from tasks.plan.rules_writer import write_template

TIERS = {"tier": {"Free", "Team", "Business", "Enterprise"}}
CONFIG = Config(facets=[Facet(name="tier", nouns=["plan"]), Facet(name="year", kind="year")])


def test_nouns_are_read_singular_and_plural() -> None:
    assert noun_forms(Facet(name="tier", nouns=["plan"])) == ["plans", "tiers", "plan", "tier"]
    assert set(noun_forms(Facet(name="policy_area", nouns=["branch", "data center"]))) == {
        "policy area", "policy areas", "branch", "branches", "data center", "data centers"}


@pytest.mark.parametrize(("skeleton", "asked"), [
    ("which plans include saml single sign on", "which plans"),
    ("does every plan have an uptime guarantee", "every plan"),
    ("rank the tiers by api rate limit", "rank the tiers"),
    ("sso is on which plans", "which plans"),
    ("which tier keeps run logs longest in {year}", "which tier"),
    ("is sso on the {tier} plan", None),  # names a tier: one value, not every
    ("which plans include sso on {tier}", None),
    ("what does the planning guide say", None),  # "planning" is no plan
    ("how many seats does a plan include", None),  # no word asks of each
])
def test_a_question_asking_of_every_value_is_read(skeleton: str, asked: str | None) -> None:
    found = each_value_span(skeleton, CONFIG)
    assert (found and skeleton[slice(*found[1])]) == asked and (found is None or found[0] == "tier")


@given(st.lists(st.sampled_from(["sso", "the", "longest", "support", "planning", "plane", "tiered", "explain",
                                 "history", "which", "every", "rank"]), max_size=12),
       st.sampled_from(["which plans", "every plan", "all the tiers", "each tier", "rank the plans"]),
       st.integers(0, 12))
def test_the_asking_words_are_found_wherever_they_stand_and_nowhere_else(words: list[str], asked: str,
                                                                          at: int) -> None:
    assert each_value_span(" ".join(words), CONFIG) is None  # no noun of the facet: nothing asked of it
    text = " ".join([*words[:at], asked, *words[at:]])
    found = each_value_span(text, CONFIG)
    assert found is not None and found[0] == "tier" and text[slice(*found[1])] == asked
    assert each_value_span(text + " on {tier}", CONFIG) is None


def test_a_facet_is_named_by_its_own_slot_not_by_a_longer_name() -> None:
    sites = Config(facets=[Facet(name="site"), Facet(name="site_group")])
    assert each_value_span("which sites in {site_group} keep backups longest", sites) == ("site", (0, 11))
    assert each_value_span("which sites in {site_1} keep backups longest", sites) is None


def test_it_is_typed_an_aggregation_with_its_reason_after_the_time_and_value_splits() -> None:
    assert classify("which plans include sso", "|", CONFIG, 0.9) == (
        "aggregation", "asks of every tier ('which plans') and names none")
    assert classify("how many seats does the {tier} plan include", "tier|", CONFIG, 0.9)[0] == "single"
    # two years split by year, as before: the tiers stay in the question's words
    assert classify("which plans changed sso between {year} and {year}", "year,year|", CONFIG, 0.9)[0] == "temporal"


def test_a_question_of_nothing_but_a_value_gets_no_step_per_value() -> None:
    assert len(write_template("what plan am i on", "aggregation", CONFIG, values=TIERS).steps) == 1


def test_the_check_takes_every_value_once_and_refuses_some() -> None:
    """The per-value filters are asked for only all together: a plan narrowing the question to one tier invents
    it."""
    from schemas.plan import Plan, Step

    lexicon = Lexicon(CONFIG, {k: sorted(v) for k, v in TIERS.items()})
    sample = lexicon.skeleton("Which plans include SSO?")
    shape = {"shape_id": "x", "skeleton": sample.text, "type": "aggregation"}
    narrowed = Plan(steps=[Step(id="s1", query="Business sso", filters={"tier": "Business"})])
    status = check_template(narrowed, shape, CONFIG, lexicon, [sample])
    assert not status["check_ok"] and status["complaint"].startswith("invented_value"), status
    every = write_template(sample.text, "aggregation", CONFIG, values=TIERS)
    assert check_template(every, shape, CONFIG, lexicon, [sample])["check_ok"]
    twice = every.model_copy(update={"steps": [*every.steps[:3], every.steps[0].model_copy(update={"id": "s4"})]})
    assert not check_template(twice, shape, CONFIG, lexicon, [sample])["check_ok"]


def test_it_searches_each_value_under_its_filter() -> None:
    plan = write_template("which plans include sso in {year}", "aggregation", CONFIG, values=TIERS)
    assert [(s.query, s.filters) for s in plan.steps] == [
        (f"{tier} include sso {{year_1}}", {"year": "{year_1}", "tier": tier})
        for tier in ["Business", "Enterprise", "Free", "Team"]]
    lexicon = Lexicon(CONFIG, {k: sorted(v) for k, v in TIERS.items()})
    sample = lexicon.skeleton("Which plans include SSO in 2026?")
    status = check_template(plan, {"shape_id": "x", "skeleton": sample.text, "type": "aggregation"}, CONFIG,
                            lexicon, [sample])
    assert status["valid"] and status["check_ok"], status


def test_no_values_or_more_than_the_steps_or_the_context_hold_leave_one_search() -> None:
    assert len(write_template("which plans include sso", "aggregation", CONFIG).steps) == 1
    for setting in ({"max_steps": 3}, {"budget": 3}):
        few = CONFIG.model_copy(update={"planning": CONFIG.planning.model_copy(update=setting)})
        assert len(write_template("which plans include sso", "aggregation", few, values=TIERS).steps) == 1
    assert len(write_template("which plans include sso", "single", CONFIG, values=TIERS).steps) == 1


def test_a_noun_is_one_or_two_lowercase_words_of_a_category_facet() -> None:
    with pytest.raises(ValueError, match="a noun is one or two lowercase words"):
        Facet(name="tier", nouns=["Plan"])
    with pytest.raises(ValueError, match="`nouns` name a category facet's values"):
        Facet(name="year", kind="year", nouns=["year"])


def test_an_unlogged_question_of_every_office_is_split_online_as_offline(demo_publication: Path) -> None:
    """Online, the class planner writes the plan from the published lexicon's values and the class key names the
    facet asked of: a publication whose context holds six chunks and whose class of such questions measured a
    split serves a step per office to a wording no one logged, the plan the rule writer writes offline."""
    from tasks.plan import class_planner

    cache = PlanCache.open(demo_publication)
    config = cache.lexicon.config
    config.planning = config.planning.model_copy(update={"budget": 6})
    question = "which office gives the most days off for moving house"
    sk = cache.lexicon.skeleton(cache.scrub(question))
    key, shape_type = class_planner.class_of(sk, cache)
    assert (key, shape_type) == ("aggregation||each office", "aggregation")
    cache.class_routes[key] = {"route": "split"}
    res = class_planner.lookup(cache, question)
    assert (res.source, res.route) == (class_planner.CLASS, "split"), res.reason
    offline = write_template(sk.text, "aggregation", config, values=cache.lexicon.values)
    assert res.plan is not None and [(s["query"], s["filters"]) for s in res.plan["steps"]] == [
        (s.query, s.filters) for s in offline.steps]
    assert [s["filters"] for s in res.plan["steps"]] == [{"office": o} for o in sorted(cache.lexicon.values["office"])]


def test_the_lookup_splits_an_aggregation_as_the_plan_stage_does(demo_publication: Path) -> None:
    """Online, the class planner writes the plan from the published lexicon's values, as the plan stage did: six
    offices, a step each where the context holds six chunks."""
    cache = PlanCache.open(demo_publication)
    offices = sorted(cache.lexicon.values["office"])
    config = cache.lexicon.config
    wide = config.model_copy(update={"planning": config.planning.model_copy(update={"budget": 6})})
    plan = write_template("which office gives the most vacation days", "aggregation", wide,
                          values=cache.lexicon.values)
    assert [s.filters for s in plan.steps] == [{"office": o} for o in offices] and len(offices) == 6
    assert len(write_template("which office gives the most vacation days", "aggregation", config,
                              values=cache.lexicon.values).steps) == 1  # the demo's budget: 4 chunks
