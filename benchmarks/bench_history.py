"""Benchmark `PlanCache.lookup` with hostile histories: what a follow-up costs after a history built to stall it.

    .venv/bin/python -m benchmarks.bench_history [--entries N] [--repeat R] [--json]

The publication is `benchmarks.bench_lookup`'s (demo config, mined sample, N cache entries; default 2,000: the
history's cost does not depend on the cache's size). Each history is 10,000 or 100,000 entries long; a follow-up
("what about Lisbon?") reads it back, and a question of its own beside it. Every lookup is timed alone, in wall
time, R times per case (default 50) after one untimed; the report gives each case's median and worst, and the worst
of all. The lookup reads at most `lookup.history_entries` entries and `lookup.history_chars` characters of them
(docs/configuration.md): the goal is a worst case under 5 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.bench_lookup import CONFIG, build_publication
from schemas.cache import PlanCache
from schemas.config import load_config

NOW = date(2026, 7, 1)
BERLIN = "how many vacation days do we get in Berlin"
FOLLOWUP = "what about Lisbon?"


def histories() -> dict[str, list[str]]:
    """Hostile histories, by name: long entries of filler, of words, of follow-ups, short filler by the 100,000."""
    return {
        "10,000 x 2,000 chars of 'thanks'": [("thanks " * 300)[:2000]] * 10_000,
        "10,000 x 2,000 chars of words": [("vacation days per diem Berlin " * 70)[:2000]] * 10_000,
        "10,000 x 2,000 chars of follow-up cues": [("what about that office there " * 70)[:2000]] * 10_000,
        "100,000 x 'thanks'": ["thanks"] * 100_000,
        "100,000 follow-ups": ["what about Warsaw?"] * 100_000,
        "100,000 x 2,001 chars (no turn)": ["x" * 2001] * 100_000,
        "a question, then 100,000 x 'thanks'": [BERLIN, *["thanks"] * 100_000],
    }


def run(entries: int, repeat: int, workdir: Path) -> dict[str, Any]:
    config = load_config(CONFIG)
    build_publication(workdir / "run", entries, config)
    cache = PlanCache.open(workdir / "run")
    cases: dict[str, dict[str, float]] = {}
    for name, history in histories().items():
        for question in (FOLLOWUP, BERLIN):
            cache.lookup(question, now=NOW, history=history)  # warm-up
            ms = []
            for _ in range(repeat):
                t0 = time.perf_counter_ns()
                cache.lookup(question, now=NOW, history=history)
                ms.append((time.perf_counter_ns() - t0) / 1e6)
            cases[f"{name} / {question!r}"] = {"p50_ms": round(statistics.median(ms), 3), "max_ms": round(max(ms), 3)}
    worst = max(c["max_ms"] for c in cases.values())
    return {"entries": len(cache.entries), "repeat": repeat, "history_entries": config.lookup.history_entries,
            "history_chars": config.lookup.history_chars, "cases": cases, "worst_ms": worst}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_history", description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=2_000, help="cache entries (default 2,000)")
    ap.add_argument("--repeat", type=int, default=50, help="timed lookups per case (default 50)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        report = run(args.entries, args.repeat, Path(tmp))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"lookup.history_entries {report['history_entries']}, lookup.history_chars {report['history_chars']}; "
          f"{report['repeat']} lookups per case")
    width = max(map(len, report["cases"]))
    print(f"{'case':<{width}}  p50 ms   max ms")
    for name, c in report["cases"].items():
        print(f"{name:<{width}}  {c['p50_ms']:6.3f}  {c['max_ms']:7.3f}")
    print(f"worst: {report['worst_ms']:.3f} ms (goal: under 5 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
