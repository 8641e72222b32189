"""A miss planned by its class: a question whose skeleton no one logged, of a class the nightly measured a split
for (`schemas.class_routes`), gets the rule writer's plan for its own skeleton, checked as a template is.

The class is read from the question alone (its type by the classifier's rules, its slot facets), the plan from its
own words, the filters from its own values: no plan or value of another question is served. A class the
publication does not route to a split, a plan of one step, or a plan the checks refuse leaves the miss as it was
(one search, or the online planner where one is configured).

A question that names no category value but a thing the log's bridge shapes ask about, and that their measured
routes serve (`schemas.bridge.served`: "the 2026 security summit"), gets the bridge plan for its own words
instead: a step finds the thing, code reads its value from the evidence, a second step searches under it."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Sequence
from datetime import date, datetime
from functools import lru_cache, partial
from typing import Any, cast

from schemas import class_routes
from schemas.bridge import Bridge, served_bridge
from schemas.cache import NO_SHAPE, LookupResult, PlanCache, utc_date
from schemas.config import Config
from schemas.each_value import each_value_span
from schemas.extract import Skeleton
from schemas.plan import PlanError, fill_slots
from schemas.plan_view import PlanView
from tasks.mine.classify import classify
from tasks.mine.extract_rows import constraint_columns
from tasks.plan.check import check_template
from tasks.plan.rules_writer import write_template

CLASS = "class"  # a LookupResult's source when its plan came from its class
CLASS_PLAN_MEMO = 1024  # skeletons whose class plan a publication keeps
log = logging.getLogger(__name__)


def rules_class(skeleton: str, signature: str, config: Config) -> tuple[str, str]:
    """(class key, shape type) of a skeleton and its signature by the `classify` rules alone: no index score (no
    null type), no corpus bridge. The plan stage keys each mined shape by it, and a lookup its question."""
    shape_type, _ = classify(skeleton, signature, config, None)
    key = class_routes.class_key(shape_type, signature)
    if shape_type == "aggregation" and (each := each_value_span(skeleton, config)) is not None:
        key += f"|each {each[0]}"  # a step per tier is no class of "which is the most ..." nor of a step per release
    return key, shape_type


def class_of(sk: Skeleton, cache: PlanCache) -> tuple[str, str]:
    """(class key, shape type) of a skeleton, as the plan stage keys its mined shapes (`rules_class`)."""
    return rules_class(sk.text, constraint_columns(sk.constraints)[0], cache.lexicon.config)


def term_bridge(sk: Skeleton, cache: PlanCache) -> tuple[Bridge, str] | None:
    """(bridge, route) of a skeleton that names a term the publication serves bridges for (`schemas.bridge.served`)
    and no category value; else None."""
    if not cache.bridge_terms:
        return None
    named = [f for f in constraint_columns(sk.constraints)[0].split("|", 1)[0].split(",") if f]
    return served_bridge(sk.text, named, {f.name: f.kind for f in cache.lexicon.config.facets}, cache.bridge_terms,
                         cache.value_forms)


# route, class key, its decision, type, how it was planned, the plan, its steps' where clauses
ClassPlan = tuple[str, str, Any, str, str, PlanView, dict[str, str | None]]


def _class_plans(cache: PlanCache) -> Callable[[Skeleton], ClassPlan | None]:
    """The publication's class planner of a skeleton (`_class_plan`), memoised on the publication: a new wording
    many ask before the next night is written and checked once (a plan is read-only, its trace copied at each
    lookup)."""
    planner = cache.memos.get(CLASS)
    if planner is None:
        planner = cache.memos[CLASS] = lru_cache(maxsize=CLASS_PLAN_MEMO)(partial(_class_plan, cache))
    return cast(Callable[[Skeleton], ClassPlan | None], planner)


def _class_plan(cache: PlanCache, sk: Skeleton) -> ClassPlan | None:
    """What `plan_by_class` serves a skeleton: its bridge term's or its class's plan, or None (one search)."""
    config = cache.lexicon.config
    key, shape_type = class_of(sk, cache)
    decided = cache.class_routes.get(key)
    route = decided.get("route", "one_search") if isinstance(decided, dict) else "one_search"
    bridge = None
    if shape_type in ("single", "bridge") and (found := term_bridge(sk, cache)) is not None:
        bridge, route = found  # a thing the log's bridge shapes ask about, routed to a split there
        shape_type, key, decided = "bridge", f"bridge term {bridge.term}", cache.bridge_terms[bridge.term]
    planned = f"through its bridge term '{bridge.term}'" if bridge is not None else f"by its class {key}"
    if route not in class_routes.SPLITS:
        return None
    template = write_template(sk.text, shape_type, config, bridge=bridge, values=cache.lexicon.values)
    if len(template.steps) < 2:
        return None
    status = check_template(template, {"shape_id": CLASS, "skeleton": sk.text, "type": shape_type}, config,
                            cache.lexicon, [sk])
    if not (status["valid"] and status["check_ok"]):
        return None
    try:
        doc = fill_slots(template, sk.slots).model_dump(mode="json", exclude_defaults=True)
    except PlanError:
        return None
    if route == "split_original":
        doc["keep_original"] = True
    where = cache.step_wheres(doc["steps"])
    return route, key, decided, shape_type, planned, PlanView(doc), where


def plan_by_class(cache: PlanCache, res: LookupResult, question: str, when: date) -> LookupResult:
    """`res`, the lookup of `question` on `when`, with its class's split plan when it found no shape, the
    publication routes its class to a split (or serves a bridge term it names: `term_bridge`, which goes first),
    and the rule writer's plan for it has two or more steps and passes the checks; else `res` unchanged. Only a
    miss for want of a shape is planned: a refused question (instruction text), a follow-up that did not resolve
    (no previous question, ambiguous) or any other miss is left as it is; a resolved follow-up is planned as the
    standalone question it resolved to."""
    if (res.hit or res.shape_id is not None or res.plan is not None or not res.skeleton
            or res.route != "online_planner" or res.reason != NO_SHAPE or res.unresolved):
        return res
    sk = cache.lexicon.skeleton(cache.scrub(res.resolved or question), when)
    if sk.text != res.skeleton:
        return res
    found = _class_plans(cache)(sk)
    if found is None:
        return res
    route, key, decided, shape_type, planned, view, where = found
    trace = {**res.trace, "class": key, "class_route": copy.deepcopy(decided)}  # each lookup's trace its own
    res.route, res.plan, res.source, res.shape_type = route, view, CLASS, shape_type
    res.reason = f"{res.reason}; planned {planned}"
    res.where, res.trace = where, trace
    return res


def lookup(cache: PlanCache, question: str, now: date | datetime | None = None,
           history: Sequence[str] | None = None) -> LookupResult:
    """`cache.lookup`, with a miss planned by its class where the publication's config sets `planning.class_routes`:
    what the command line, the server and the evaluation serve. The class plan fails soft: an error while writing
    or checking it leaves the lookup's own answer (logged), never a failed lookup."""
    res = cache.lookup(question, now, history=history)
    if cache.lexicon.config.planning.class_routes:
        try:
            res = plan_by_class(cache, res, question, utc_date(now))
        except Exception:  # noqa: BLE001 - a class plan is an addition to the lookup, never its failure
            log.exception("class plan failed for skeleton %r; the lookup's own answer is served", res.skeleton)
    return res
