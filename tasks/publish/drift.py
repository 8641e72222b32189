"""Label-free figures of the quality gate: what changed between the last publication and the staged run.

- chunks deleted: the share of the last publication's chunk ids the staged index no longer holds;
- facet values lost: values of a category or year facet some chunk held before and none holds now (a date
  facet's values are each document's own dates, not a vocabulary, and come and go with ordinary edits);
- route coverage: per shape in both runs, its route's coverage as the plan stage measured it against the index
  (`tasks.plan.routing`), a sampled question the corpus held no evidence for counting 0 and a shape classified
  null (the corpus holds no answer) 0;
- plan changes: the share of cache hits (weighted by the window's questions) whose route or plan structure (steps,
  dependencies, filters, extraction) changed; a step query's wording alone is no change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from schemas.config import Config
from schemas.files import CACHE, CHUNKS, TEMPLATES

SHOWN = 5  # shapes or values a check's detail names before "and N more"


@dataclass
class IndexChange:
    chunks_deleted: float | None  # share of the last publication's chunks gone (None: no chunks to compare)
    deleted: int = 0
    chunks: int = 0  # the last publication's
    facet_values_lost: dict[str, list[str]] = field(default_factory=dict)  # facet -> values no chunk holds now


@dataclass
class PlanChange:
    value: float | None  # share of the hits of keys in both runs, by this window's questions
    changed: int = 0  # keys whose plan changed
    keys: int = 0  # keys in both runs


@dataclass
class CoverageChange:
    value: float | None  # mean measured coverage of the shapes both runs measured, this run
    last: float | None  # the same shapes, the last publication
    dropped: list[tuple[str, float, float]] = field(default_factory=list)  # (skeleton, last, now), largest first


def index_change(new_dir: Path, prev_dir: Path, config: Config) -> IndexChange:
    """Chunk ids deleted and facet values lost between the two runs' chunks.parquet."""
    new_path, old_path = new_dir / CHUNKS.name, prev_dir / CHUNKS.name
    if not (new_path.exists() and old_path.exists()):
        return IndexChange(None)
    held = set(pq.read_schema(new_path).names) & set(pq.read_schema(old_path).names)
    facets = [f.name for f in config.facets if f.kind in ("category", "year") and f.name in held]
    new, old = (pq.read_table(p, columns=["id", *facets]) for p in (new_path, old_path))
    if not old.num_rows:
        return IndexChange(None)
    gone = set(old.column("id").to_pylist()) - set(new.column("id").to_pylist())
    lost = {}
    for facet in facets:
        values = {v for v in old.column(facet).to_pylist() if v is not None} - set(new.column(facet).to_pylist())
        if values:
            lost[facet] = sorted(str(v) for v in values)
    return IndexChange(round(len(gone) / old.num_rows, 4), len(gone), old.num_rows, lost)


def route_coverage(new_dir: Path, prev_dir: Path) -> CoverageChange:
    """Measured coverage of each shape's route, over the shapes both runs measured."""
    new, old = _coverages(new_dir), _coverages(prev_dir)
    both = [s for s in sorted(new.keys() & old.keys()) if None not in (new[s][0], old[s][0])]
    if not both:
        return CoverageChange(None, None)
    now, was = {}, {}
    for s in both:
        (a, a_unanswered, _), (b, b_unanswered, _) = new[s], old[s]
        now[s], was[s] = float(a or 0.0), float(b or 0.0)
        if a_unanswered is not None and b_unanswered is not None:  # older evaluations did not count them
            now[s], was[s] = max(0.0, now[s] - a_unanswered), max(0.0, was[s] - b_unanswered)
    dropped = sorted(((new[s][2], was[s], now[s]) for s in both if now[s] < was[s] - 1e-9),
                     key=lambda d: (d[2] - d[1], d[0]))
    return CoverageChange(round(sum(now.values()) / len(both), 4), round(sum(was.values()) / len(both), 4), dropped)


def plan_changes(new_dir: Path, prev_dir: Path) -> PlanChange:
    """Share of the cache hits (keys in both runs, weighted by this window's questions) whose plan changed."""
    new, old = _plans(new_dir), _plans(prev_dir)
    both = new.keys() & old.keys()
    weight = sum(new[k][1] for k in both)
    if not weight:
        return PlanChange(None, 0, len(both))
    changed = [k for k in both if new[k][0] != old[k][0]]
    return PlanChange(round(sum(new[k][1] for k in changed) / weight, 4), len(changed), len(both))


def _coverages(run_dir: Path) -> dict[str, tuple[float | None, float | None, str]]:
    """shape id -> (its route's measured coverage, the share of samples with no evidence, skeleton); coverage None
    where nothing was measured (one plain search, an invalid template), 0 for a shape classified null."""
    path = run_dir / TEMPLATES.name
    if not path.exists():
        return {}
    out: dict[str, tuple[float | None, float | None, str]] = {}
    for row in pq.read_table(path, columns=["shape_id", "skeleton", "type", "route", "evaluation"]).to_pylist():
        if row["type"] == "null":
            out[row["shape_id"]] = (0.0, 0.0, row["skeleton"])
            continue
        ev: dict[str, Any] = json.loads(row["evaluation"] or "{}")
        cov = (ev.get("coverage") or {}).get(row["route"])
        n, unanswered = ev.get("questions") or 0, ev.get("unanswered")
        share = unanswered / n if unanswered is not None and n else None
        out[row["shape_id"]] = (cov, share, row["skeleton"])
    return out


def _plans(run_dir: Path) -> dict[str, tuple[str, int]]:
    """cache key -> (its route and plan structure, the window's questions)."""
    path = run_dir / CACHE.name
    if not path.exists():
        return {}
    rows = pq.read_table(path, columns=["key", "route", "plan", "questions"]).to_pylist()
    return {r["key"]: (f"{r['route']}:{_structure(r['plan'])}", int(r["questions"] or 0)) for r in rows}


def _structure(plan: str | None) -> str:
    """A plan without its step queries' words: steps, dependencies, filters, extraction, keep_original."""
    if not plan:
        return ""
    doc = json.loads(plan)
    steps = [{k: v for k, v in s.items() if k != "query"} for s in doc.get("steps", [])]
    return json.dumps({"steps": steps, "keep_original": doc.get("keep_original", False)}, sort_keys=True)


def more(items: list[str]) -> str:
    """The first SHOWN items, and how many more."""
    shown = ", ".join(items[:SHOWN])
    return shown + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")
