"""A question no one logged, planned by its class or its bridge term: the first lookup against a repeat, side by side.

    .venv/bin/python -m benchmarks.bench_class_plan [--publication DIR] [--repeats N] [--json]

New wordings of the demo's questions (`QUESTIONS`, filled with each demo office pair and year) miss every shape of
the demo publication (built with `planbake nightly` into a temporary directory unless `--publication` names one);
`tasks.plan.class_planner.lookup` plans each by its class (comparisons of two offices) or its bridge term (the
engineering offsite, by year). For every question the first lookup, which writes and checks its plan, is timed, the
publication's class-plan memo is emptied, and it is timed again (the first lookup also warms what any lookup
reads); then the same question is looked up `--repeats`
times, the memo kept. Times are wall time per lookup; the report gives the medians, p99 and the ratio of repeat
to first.
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import statistics
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.bench_similarity_cache import build_publication
from schemas.cache import PlanCache
from tasks.plan.class_planner import CLASS, lookup

NOW = date(2026, 11, 25)
OFFICES = ["Berlin", "Lisbon", "Amsterdam", "Warsaw", "Toronto", "London"]
COMPARE = ["How do {a} and {b} differ on the per diem for interns?",
           "Is the equipment budget for new hires bigger in {a} or in {b}?"]
BRIDGE = ["Is there a dress code at the {y} engineering offsite?",
          "Can I bring my partner to the {y} engineering offsite?"]


def questions() -> list[str]:
    pairs = list(itertools.permutations(OFFICES, 2))
    return ([q.format(a=a, b=b) for q in COMPARE for a, b in pairs]
            + [q.format(y=y) for q in BRIDGE for y in (2024, 2025, 2026, 2027)])


def _timed(cache: PlanCache, question: str) -> float:
    start = time.perf_counter()
    lookup(cache, question, now=NOW)
    return time.perf_counter() - start


def _p99(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(0.99 * len(values)))]


def run(publication: Path | None, repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench_class_plan_") as tmp:
        root = publication or build_publication(Path(tmp) / "out")
        cache = PlanCache.open(root)
        first: list[float] = []
        again: list[float] = []
        planned = 0
        for q in questions():
            cache.memos.clear()
            planned += lookup(cache, q, now=NOW).source == CLASS  # also warms what any first lookup reads
            cache.memos.clear()
            first.append(_timed(cache, q))
            again += [_timed(cache, q) for _ in range(repeats)]
    us = 1e6
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": platform.machine(),
            "questions": len(questions()), "planned_by_class": planned, "repeats": repeats,
            "first_p50_us": round(statistics.median(first) * us, 1), "first_p99_us": round(_p99(first) * us, 1),
            "repeat_p50_us": round(statistics.median(again) * us, 1), "repeat_p99_us": round(_p99(again) * us, 1),
            "ratio_p50": round(statistics.median(again) / statistics.median(first), 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--publication", type=Path, default=None,
                    help="a publication root or run directory (default: planbake nightly into a temporary dir)")
    ap.add_argument("--repeats", type=int, default=20, help="lookups of each question with its plan kept")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args()
    report = run(args.publication, args.repeats)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{report['questions']} questions no one logged, {report['planned_by_class']} planned by class or term; "
          f"first lookup p50 {report['first_p50_us']} µs, p99 {report['first_p99_us']} µs; repeated p50 "
          f"{report['repeat_p50_us']} µs, p99 {report['repeat_p99_us']} µs (ratio {report['ratio_p50']})")


if __name__ == "__main__":
    main()
