"""Facet scope: a company-wide chunk answers every office's step, a local one of its topic overrides it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from schemas.config import Config, Facet, load_config, published_config
from schemas.errors import ConfigError
from schemas.extract import Lexicon
from schemas.plan import Plan, Step
from schemas.scope import COMPANY_WIDE, LOCAL, in_scope, override_order, scope_of, scope_trace, where
from tasks.executor import Retrieved, StepResult, retrieve
from tasks.index.stage import build_index
from tasks.index.store import Hit, Index
from tasks.plan.routing import facet_coverage
from tests.conftest import DEMO_CONFIG, SEED

RUN_DATE = date(2026, 11, 30)
ADOPTION = "Can adoptive parents in Berlin and Amsterdam take parental leave?"
# A local override of the company-wide parental leave policy (`leave-policy`): the same policy key, Berlin's office.
OVERRIDE = {"id": "leave-policy-berlin", "text": "Local rule: paid leave for a new child needs six months of service "
            "here, and for an adopted child it starts on the day the adoption is final.",
            "metadata": {"office": "Berlin", "year": None, "policy": "parental-leave"}}


def _split(question: str = "parental leave for adoptive parents") -> Plan:
    """The split a planner writes for the comparison: one step per office, each under its office's filter."""
    return Plan(steps=[Step(id="s1", query=question, filters={"office": "Berlin"}),
                       Step(id="s2", query=question, filters={"office": "Amsterdam"})])


def _exact(config: Config) -> Config:
    facets = [f.model_copy(update={"scope": "exact"}) if f.kind == "category" else f for f in config.facets]
    return config.model_copy(update={"facets": facets})


def _build(root: Path, records: list[dict[str, Any]], config: Config) -> Index:
    root.mkdir()
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    outcome = build_index(corpus, config, root, RUN_DATE, quiet=True)
    return Index(outcome.uri, config, outcome.result.version)


def _seed(policy: str | None = None) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in (SEED / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    for r in records:
        if r["id"] == "leave-policy" and policy:
            r["metadata"]["policy"] = policy
    return records


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return _build(tmp_path_factory.mktemp("scope") / "seed", _seed(), load_config(DEMO_CONFIG))


@pytest.fixture(scope="module")
def overridden(tmp_path_factory: pytest.TempPathFactory) -> Index:
    """The seed handbook with Berlin's own parental leave rule beside the company-wide one."""
    return _build(tmp_path_factory.mktemp("scope") / "override", [*_seed("parental-leave"), OVERRIDE],
                  load_config(DEMO_CONFIG))


def _run(index: Index, plan: Plan) -> tuple[list[str], dict[str, Any]]:
    lexicon = Lexicon(index.config, index.facet_values())
    got = retrieve(ADOPTION, plan, index, lexicon, budget=4, k=4, keep_original=False)
    return got.context, {p.id: p for p in got.parts}


def test_a_comparison_answered_by_one_company_wide_chunk_keeps_it_when_split(seed: Index) -> None:
    """Seed 002, Move 6: the company-wide policy answers both offices; every office's step now searches it."""
    context, parts = _run(seed, _split())
    assert "leave-policy" in context
    assert [h.id for h in parts["s1"].hits][:2] == ["leave-policy", "leave-berlin"]
    assert [h.id for h in parts["s2"].hits][:2] == ["leave-policy", "leave-amsterdam"]
    assert parts["s2"].scope == {"answered": COMPANY_WIDE, "by": "leave-policy", "overrides": {}}
    assert parts["s2"].to_json()["scope"] == parts["s2"].scope  # what `planbake retrieve --json` prints


def test_an_exact_facet_leaves_company_wide_chunks_out_of_its_steps(seed: Index) -> None:
    exact = Index(seed.uri, _exact(seed.config), int(seed.table.version), embedder=seed.embedder)
    context, parts = _run(exact, _split())
    assert "leave-policy" not in context
    assert {h.facets["office"] for p in parts.values() for h in p.hits} == {"Berlin", "Amsterdam"}
    assert all(not p.scope for p in parts.values())


def test_a_local_override_answers_its_office_and_the_company_wide_rule_the_other(overridden: Index) -> None:
    by_cosine = overridden.search("parental leave for adoptive parents", 4, mode="vector")
    assert [h.id for h in by_cosine][:2] == ["leave-policy", "leave-policy-berlin"]  # the company-wide one is closer
    context, parts = _run(overridden, _split())
    s1, s2 = ([h.id for h in parts[s].hits] for s in ("s1", "s2"))
    assert s1[:3] == ["leave-policy-berlin", "leave-policy", "leave-berlin"]  # kept, below the override
    assert s2[:2] == ["leave-policy", "leave-amsterdam"]
    assert parts["s1"].scope == {"answered": LOCAL, "by": "leave-policy-berlin",
                                 "overrides": {"leave-policy": "leave-policy-berlin"}}
    assert parts["s2"].scope == {"answered": COMPANY_WIDE, "by": "leave-policy", "overrides": {}}
    assert context[:2] == ["leave-policy-berlin", "leave-policy"]


def test_versions_are_pruned_alike_inside_each_scope(seed: Index) -> None:
    """The company-wide allowance has two versions: a Berlin step finds the current one, or the named year's."""
    current = seed.search("remote work allowance", 17, {"office": "Berlin"})
    assert "remote-2026" in [h.id for h in current] and "remote-2025" not in [h.id for h in current]
    named = seed.search("remote work allowance", 3, {"office": "Berlin", "year": "2025"})
    assert [h.id for h in named] == ["remote-2025", "offsite-2025"]


CONFIG = load_config(DEMO_CONFIG)


def test_where_clause_of_each_facet_kind() -> None:
    assert where({"office": "Berlin"}, CONFIG) == "(office = 'Berlin' OR office IS NULL OR office = '') AND is_current"
    assert where({"office": "Berlin"}, _exact(CONFIG)) == "office = 'Berlin' AND is_current"
    assert where({"office": "O'Hare", "year": "2026"}, CONFIG) == (
        "(office = 'O''Hare' OR office IS NULL OR office = '') AND year = 2026")
    assert where({}, CONFIG) == "is_current" and where({}, CONFIG, all_versions=True) is None


def test_a_chunk_without_a_value_is_in_every_scope_of_an_inheriting_facet() -> None:
    assert in_scope({"office": None, "year": None}, {"office": "Berlin"}, CONFIG)
    assert in_scope({"office": ""}, {"office": "Berlin"}, CONFIG)
    assert not in_scope({"office": "Lisbon"}, {"office": "Berlin"}, CONFIG)
    assert not in_scope({"office": None}, {"office": "Berlin"}, _exact(CONFIG))
    assert not in_scope({"office": "Berlin", "year": None}, {"office": "Berlin", "year": "2026"}, CONFIG)
    assert in_scope({"office": None, "year": 2026}, {"office": "Berlin", "year": "2026"}, CONFIG)
    assert scope_of({"office": None}, {"office": "Berlin"}) == COMPANY_WIDE
    assert scope_of({"office": "Berlin", "year": 2026}, {"office": "Berlin", "year": "2026"}) == LOCAL


@dataclass
class _Hit:
    id: str
    policy: str | None
    facets: dict[str, Any] = field(default_factory=dict)


def test_a_topic_keeps_its_places_with_the_local_chunk_first_and_nothing_else_moves() -> None:
    hits = [_Hit("wide-a", "a", {"office": None}), _Hit("other", "b", {"office": "Berlin"}),
            _Hit("wide-c", "c", {"office": None}), _Hit("local-a", "a", {"office": "Berlin"}),
            _Hit("wide-a#1", "a", {"office": None}), _Hit("no-topic", None, {"office": None})]
    ordered = override_order(hits, {"office": "Berlin"}, CONFIG)
    assert [h.id for h in ordered] == ["local-a", "other", "wide-c", "wide-a", "wide-a#1", "no-topic"]
    assert scope_trace(ordered, {"office": "Berlin"}, CONFIG) == {
        "answered": LOCAL, "by": "local-a", "overrides": {"wide-a": "local-a", "wide-a#1": "local-a"}}
    assert override_order(hits, {"office": "Berlin"}, _exact(CONFIG)) == hits  # an exact facet overrides nothing
    assert override_order(hits, {"year": "2026"}, CONFIG) == hits and scope_trace(hits, {"year": "2026"}, CONFIG) == {}


def test_scope_is_declared_on_category_facets_only() -> None:
    assert Facet(name="office").scope == "inherit" and Facet(name="office", scope="exact").scope == "exact"
    assert Facet(name="year", kind="year").scope == "exact"
    with pytest.raises(ValueError, match="always exact"):
        Facet(name="year", kind="year", scope="inherit")
    published = published_config(CONFIG.model_dump_json())  # config.json, as lookup reads it back
    assert [(f.name, f.scope) for f in published.facets] == [("office", "inherit"), ("year", "exact")]


def test_a_scope_other_than_inherit_or_exact_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("facets:\n  - name: office\n    scope: local\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"config.yaml:\d+.*scope"):
        load_config(path)


def test_the_route_measure_counts_a_company_wide_chunk_for_a_value_no_step_filters_on() -> None:
    wide = Hit("equipment", 0.6, "", {"office": None, "year": None}, None, None, None, True)
    got = Retrieved(["equipment"], [StepResult("original", "q", {}, [wide])], 1)
    need = {("office", "Berlin")}
    assert facet_coverage(need, got, {}, CONFIG) == 1.0
    assert facet_coverage(need, got, {}, _exact(CONFIG)) == 0.0
