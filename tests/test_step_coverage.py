"""Routes for plans whose questions name no facet value: each step's part counts where the step's chunks are about
its query, judged against the index's own background scores (tasks/plan/routing.py, `step_targets`)."""

from __future__ import annotations

from pathlib import Path

from schemas.cache import PlanCache
from schemas.plan import Plan, Step
from tasks.executor import Retrieved, run_plan
from tasks.index.store import Index
from tasks.plan.routing import RELEVANT_SPREADS, step_coverage, step_targets


def test_a_step_about_nothing_in_the_corpus_has_no_part(demo_publication: Path) -> None:
    cache = PlanCache.open(demo_publication)
    config = cache.lexicon.config
    index = Index(cache.index_uri, config, cache.manifest["index"]["version"])
    plan = Plan(steps=[Step(id="s1", query="parental leave for the second parent"),
                       Step(id="s2", query="lattice gauge theory of quark confinement at low temperature")])
    steps = run_plan(plan, index, cache.lexicon, 4)
    middle, spread = index.background(steps[0].query)
    assert steps[0].hits[0].score > middle + RELEVANT_SPREADS * spread  # the leave policy is about its query
    assert all(h.score < (m := index.background(steps[1].query))[0] + RELEVANT_SPREADS * m[1] for h in steps[1].hits)
    assert index.background(steps[0].query) == (middle, spread)  # the same sample on every read
    parts = step_targets(steps, index, depth=2)
    assert len(parts) == 1 and parts[0] <= {h.id for h in steps[0].hits[:2]}
    # a context holding half the part covers half; one holding none, nothing; no part to find covers all
    part = sorted(parts[0])
    assert step_coverage(parts, Retrieved(part[:1], [], 1)) == 1 / len(part)
    assert step_coverage(parts, Retrieved([], [], 1)) == 0.0 and step_coverage([], Retrieved([], [], 1)) == 1.0
