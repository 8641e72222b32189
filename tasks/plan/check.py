"""The checks every written template passes before it is routed or served: valid (`schemas.plan.validate_plan`),
in the question's words, readable (`tasks.plan.readable`) and keeping the question's constraints when filled
(`schemas.plan.check_plan`). The plan stage runs them on each template; the class planner and the online planner
on a plan written at lookup time. Importable without the index's libraries."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from schemas.config import Config
from schemas.each_value import each_value_span
from schemas.entity import ENTITY
from schemas.extract import Lexicon, Skeleton
from schemas.plan import Plan, PlanError, check_plan, check_words, fill_slots, slot_names, validate_plan
from schemas.text import words
from tasks.plan.readable import check_readable
from tasks.plan.rules_writer import slotted

SAMPLES_PER_SHAPE = 4


def check_template(template: Plan, shape: dict[str, Any], config: Config, lexicon: Lexicon,
                   samples: list[Skeleton], corpus_words: Collection[str] = ()) -> dict[str, Any]:
    """Validate a template and check it, filled, against the shape's questions: the status columns.

    A complaint reads "kind: detail"; the kind is a PlanError reason, or invented_value / dropped_constraint
    from the constraint check."""
    facets: dict[str, set[str]] = {f.name: set() for f in config.facets}
    facets.update(lexicon.known_values())
    slots = set(_slot_names(shape["skeleton"], config.slot_facets))
    status: dict[str, Any] = {"valid": True, "check_ok": True, "complaint": ""}
    try:
        validate_plan(template, max_steps=config.planning.max_steps, facets=facets, slot_names=slots)
        allowed = lexicon.name_words() | set(words(shape["skeleton"]).split()) | set(corpus_words)
        check_words(template, allowed)
        own = {s.id for s in template.steps if s.query == slotted(shape["skeleton"], config.slot_facets)}
        check_readable(template, lexicon.year_facet, own=own)
        time_facets = [f.name for f in config.facets if f.kind in ("year", "date")]
        every = _every_value(template, shape["skeleton"], config, facets)
        for sk in samples[:SAMPLES_PER_SHAPE]:
            filled = fill_slots(template, sk.slots)
            # a name's own words are no query words ("And Then There Were None"): judged as one neutral name
            named = {s: "Name" for s in sk.slots if s.startswith(ENTITY + "_")} if config.entity_slots else {}
            check_readable(fill_slots(template, {**sk.slots, **named}) if named else filled, lexicon.year_facet,
                           filled=True, own=own)
            result = check_plan(filled, list(sk.constraints), lambda text: lexicon.extract(text), time_facets,
                                text_facets=[ENTITY] if config.entity_slots else (), every=every)
            if not result.ok:
                kind = "invented_value" if result.invented else "dropped_constraint"
                status.update(check_ok=False, complaint=f"{kind}: {result.complaint()}")
                break
            if result.year_only_in_text:
                status["complaint"] = "year only in text: " + ", ".join(v for _, v in sorted(result.year_only_in_text))
    except PlanError as exc:
        status.update(valid=False, complaint=str(exc))
    return status


def _every_value(template: Plan, skeleton: str, config: Config, facets: dict[str, set[str]]) -> list[str]:
    """The facet whose values the template's steps filter one each, all of them, for a question asking of every
    value of it (`schemas.each_value`): those filters are asked for, not invented. A plan narrowing such a
    question to some values invents them."""
    each = each_value_span(skeleton, config)
    if each is None:
        return []
    named = [s.filters.get(each[0]) for s in template.steps]
    return [each[0]] if sorted(v or "" for v in named) == sorted(facets.get(each[0], ())) else []


def _slot_names(skeleton: str, facets: list[str]) -> list[str]:
    return slot_names(slotted(skeleton, facets))
