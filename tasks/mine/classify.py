"""Classify a shape by rules: number and type of placeholders, indicator words; a reason for each decision."""

from __future__ import annotations

import functools
import re

from schemas.config import Config
from schemas.each_value import each_value_span
from schemas.entity import ENTITY

TYPES = ("single", "comparison", "temporal", "bridge", "aggregation", "verification", "null")


def _has(words: list[str], text: str) -> str | None:
    for w in words:
        if _word(w).search(text):
            return w
    return None


@functools.lru_cache(maxsize=1024)
def _word(w: str) -> re.Pattern[str]:
    """An indicator as a whole word, case-folded (compiled once: every shape is tested against every word)."""
    return re.compile(r"(?<!\w)" + re.escape(w.casefold()) + r"(?!\w)")


def classify(skeleton: str, signature: str, config: Config, top_score: float | None) -> tuple[str, str]:
    """(type, reason). `top_score` is the best similarity of the shape's example in the index."""
    kinds = {f.name: f.kind for f in config.facets}
    facets = [f for f in signature.split("|", 1)[0].split(",") if f]
    cats = [f for f in facets if kinds.get(f) == "category"]
    times = [f for f in facets if kinds.get(f) in ("year", "date")]
    rules = config.classify
    if top_score is not None and top_score < config.mining.null_floor:
        return "null", f"best index match {top_score:.2f} is below the null floor {config.mining.null_floor}"
    if w := _has(rules.verification, skeleton):
        return "verification", f"indicator '{w}'"
    if (w := _has(rules.aggregation, skeleton)) and len(cats) <= 1:
        return "aggregation", f"indicator '{w}' with {len(cats)} category value(s)"
    if len(times) >= 2:
        return "temporal", f"{len(times)} time values"
    if len(times) == 1 and (w := _has(rules.temporal, skeleton)) and not cats:
        return "temporal", f"one time value with indicator '{w}'"
    same = max((cats.count(f) for f in set(cats)), default=0)
    if same >= 2:
        return "comparison", f"{same} values of one category facet"
    if (names := facets.count(ENTITY)) >= 2:
        return "comparison", f"{names} named entities"
    if each := each_value_span(skeleton, config):  # after the time and value splits, which it would undo
        return "aggregation", f"asks of every {each[0]} ('{skeleton[slice(*each[1])]}') and names none"
    if (w := _has(rules.bridge, skeleton)) and not cats and re.search(
            rf"\S\s+(?:at|for|during|of|in)\s+the\s+.*\b{re.escape(w)}\b", skeleton):
        return "bridge", f"indicator '{w}' and no category value named: a step must find it"
    return "single", "one need: no comparison, time span or bridge indicator"
