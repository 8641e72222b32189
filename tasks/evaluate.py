"""Evaluate on a labeled set: one search, the rule planner, routed plans, routed plans plus the original."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemas.cache import PlanCache
from schemas.plan import Plan, fill_slots
from tasks.executor import retrieve
from tasks.store import Index

SYSTEMS = ("one-search", "rules", "routed", "routed+original")


class LabelError(ValueError):
    """A labeled-questions file that cannot be used; names the file and line."""


@dataclass
class Labeled:
    id: str
    question: str
    parts: list[set[str]]
    should_split: bool | None
    shape: str | None


def read_labeled(path: str | Path) -> list[Labeled]:
    out = []
    p = Path(path)
    if not p.is_file():
        raise LabelError(f"{p}: labeled questions not found; pass --questions with a JSONL file")
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            parts = [set(map(str, part)) for part in rec.get("parts", [])]
            out.append(Labeled(str(rec.get("id", n)), str(rec["question"]), parts, rec.get("should_split"),
                               rec.get("shape")))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise LabelError(f"{p}:{n}: expected JSON with 'question' and 'parts' (a list of lists of chunk "
                             f"ids); {exc.__class__.__name__}: {exc}") from None
    return out


def questions_as_log(labeled: list[Labeled], path: Path, ts: str) -> Path:
    """Each labeled question becomes one log row of its own user."""
    with path.open("w", encoding="utf-8") as fh:
        for q in labeled:
            fh.write(json.dumps({"ts": ts, "user": f"eval-{q.id}", "query": q.question}) + "\n")
    return path


def _doc(chunk_id: str) -> str:
    return chunk_id.split("#", 1)[0]


def evaluate(labeled: list[Labeled], cache: PlanCache, index: Index, budget: int, k: int,
             merge: str = "round_robin") -> dict[str, Any]:
    """Rows of {system, shape, n, part_coverage, all_parts, searches_per_question, split_against_label,
    missed_splits}, per shape and "ALL"; plus per-question detail."""
    acc: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    detail = []
    for q in labeled:
        res = cache.lookup(q.question)
        shape = q.shape or res.shape_type or "unknown"
        tpl = cache.templates.get(res.shape_id or "")
        rule_plan = None
        if tpl is not None and res.skeleton is not None:
            sk = cache.lexicon.skeleton(cache.scrub(q.question))
            rule_plan = fill_slots(Plan.model_validate_json(tpl["template"]), sk.slots)
        routed = Plan.model_validate(res.plan) if res.plan else None
        keep = bool(res.plan and res.plan.get("keep_original"))
        runs = {
            "one-search": retrieve(q.question, None, index, cache.lexicon, budget, budget, False),
            "rules": retrieve(q.question, rule_plan, index, cache.lexicon, budget, k, False, merge),
            "routed": retrieve(q.question, routed, index, cache.lexicon, budget, k, keep, merge),
            "routed+original": retrieve(q.question, routed, index, cache.lexicon, budget, k, routed is not None,
                                        merge),
        }
        row: dict[str, Any] = {"id": q.id, "question": q.question, "shape": shape, "route": res.route}
        for system, run in runs.items():
            docs = {_doc(c) for c in run.context}
            covered = [bool(part & docs) for part in q.parts]
            cov = sum(covered) / len(covered) if covered else 1.0
            split = run.searches > 1 and system != "one-search"
            for key in (shape, "ALL"):
                a = acc[(system, key)]
                a["n"] += 1
                a["part_coverage"] += cov
                a["all_parts"] += all(covered)
                a["searches"] += run.searches
                a["split_against_label"] += split and q.should_split is False
                a["missed_splits"] += (not split) and q.should_split is True
            row[system] = {"coverage": cov, "context": run.context, "searches": run.searches}
        detail.append(row)
    rows = []
    for (system, shape), a in sorted(acc.items(), key=lambda x: (SYSTEMS.index(x[0][0]), x[0][1] != "ALL",
                                                                 x[0][1])):
        n = a["n"]
        rows.append({"system": system, "shape": shape, "n": int(n), "part_coverage": round(a["part_coverage"] / n, 3),
                     "all_parts": round(a["all_parts"] / n, 3), "all_parts_count": int(a["all_parts"]),
                     "searches_per_question": round(a["searches"] / n, 2),
                     "split_against_label": int(a["split_against_label"]), "missed_splits": int(a["missed_splits"])})
    return {"rows": rows, "questions": detail, "merge": merge}
