"""Routes by class: a question whose skeleton no one logged is served as the mined shapes of its class were.

A class is a shape type and the facets of its slots ("comparison|source,source", "single|entity"; names counted
up to two): what the classifier and the rule writer decide a plan by, read from the skeleton alone, so a lookup
can tell the class of a question whose wording is new. The plan stage measures each mined shape's routes
(`tasks.plan.routing`); a class is served a split when

- at least `MIN_SHAPES` sound shapes of it were measured,
- their coverage with the split, weighted by the questions measured (up to four a shape), is above their coverage
  with one search, and
- the split found more than one search on more of them than it found less on.

A question of such a class gets the rule writer's plan for its own skeleton at lookup time, checked as a template
is (`tasks.plan.class_planner`). A question of every other class, and of every class of a publication made before
them, is left the miss it was (one search, or the online planner where one is configured). Nothing here is a
similarity: the class is read from the question's slots and the classifier's rules.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from schemas.entity import ENTITY
from schemas.files import CLASS_ROUTES

MIN_SHAPES = 3
NAMES_KEPT = 2  # entity slots a class key holds: one name, or two and more
SPLITS = ("split", "split_original")
ROUTES = ("one_search", *SPLITS)


def class_key(shape_type: str, signature: str) -> str:
    """"comparison|source,source": the type, then the slot facets (a signature's qualifiers left out). Names
    count up to two: the rule writer plans two names or more alike (a search for each), so "comparison|entity,
    entity" is the class of every question of two or more."""
    facets = [f for f in signature.split("|", 1)[0].split(",") if f]
    kept = [f for i, f in enumerate(facets) if f != ENTITY or facets[:i].count(ENTITY) < NAMES_KEPT]
    return f"{shape_type}|{','.join(kept)}"


def decide(measured: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Class key -> its route and what decided it, from (class key, evaluation) of each sound mined shape. An
    evaluation without coverage (a one-step template: nothing to split) counts as a shape no split helps."""
    by_class: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for key, evaluation in measured:
        by_class[key].append(evaluation)
    out: dict[str, dict[str, Any]] = {}
    for key, evaluations in sorted(by_class.items()):
        total = {r: 0.0 for r in ROUTES}
        questions = 0
        coverages: list[Mapping[str, Any]] = [ev.get("coverage") or {} for ev in evaluations]
        for ev, cov in zip(evaluations, coverages, strict=True):
            n = max(int(ev.get("questions") or 1), 1)
            base = float(cov.get("one_search", 1.0))
            for r in ROUTES:
                total[r] += n * float(cov.get(r, base))
            questions += n
        mean = {r: round(total[r] / questions, 4) for r in ROUTES}
        best = max(SPLITS, key=lambda r: (mean[r], r == "split"))
        gains = [float(cov.get(best, 0.0)) - float(cov.get("one_search", 0.0)) for cov in coverages if cov]
        won, lost = sum(g > 1e-9 for g in gains), sum(g < -1e-9 for g in gains)
        served = len(evaluations) >= MIN_SHAPES and mean[best] > mean["one_search"] + 1e-9 and won > lost
        out[key] = {"route": best if served else "one_search", "shapes": len(evaluations),
                    "split_shapes": sum(ev.get("route") in SPLITS for ev in evaluations), "won": won,
                    "lost": lost, "questions": questions, "coverage": mean}
    return out


def write(path: Path, routes: Mapping[str, Mapping[str, Any]]) -> None:
    path.write_text(json.dumps(routes, indent=2, sort_keys=True), encoding="utf-8")


def read(run_dir: Path) -> dict[str, dict[str, Any]]:
    """The publication's class routes; none for a publication made before them."""
    path = run_dir / CLASS_ROUTES.name
    if not path.exists():
        return {}
    doc = json.loads(path.read_text(encoding="utf-8"))
    return doc if isinstance(doc, dict) else {}
