"""Repeat one next night of the mining stage from the same starting state, to see how much the machine alone
moves its time.

    .venv/bin/python -m benchmarks.repeat_night --keep DIR [--nights N] [--plain]

DIR is a ``benchmarks.bench_mining --keep DIR`` folder (its log, and the demo index the log is mined against).
The first night (window days 1 .. 28) runs once, and its memos (skeleton vectors, extraction and line memos) and
its staging folder (the merge memory) are kept as a snapshot. Then the second night (days 2 .. 29) runs N times,
each from a copy of that snapshot: the same rows, the same new skeletons to embed, the same code. Every
difference between those runs is the machine's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

from benchmarks.bench_mining import CONFIG, mine_once


def repeat_night(workdir: Path, nights: int, plain: bool) -> dict[str, Any]:
    from schemas.config import load_config

    config = load_config(CONFIG)
    gen = json.loads((workdir / "logs.json").read_text(encoding="utf-8"))["summary"]
    days = sorted(gen["rows_per_day"])
    first, second = days[:gen["window_days"]], days[1:gen["window_days"] + 1]
    logs = workdir / ("logs-plain" if plain else "logs")
    if not logs.is_dir():
        raise SystemExit(f"{logs}: not found; run benchmarks.bench_mining --keep {workdir}"
                         + (" --plain" if plain else "") + " first")
    uri = str(workdir / "index" / "lancedb")
    memos, snapshot = workdir / "index" / "vectors", workdir / "repeat-snapshot"
    shutil.rmtree(memos, ignore_errors=True)
    shutil.rmtree(snapshot, ignore_errors=True)
    seconds, _, _ = mine_once(logs, config, uri, snapshot / "staging", first)
    shutil.copytree(memos, snapshot / "vectors")
    print(f"first night ({first[0]} to {first[-1]}): {seconds:.2f}s", file=sys.stderr, flush=True)
    lines = sum(gen["rows_per_day"][d] for d in second)
    runs = []
    for n in range(nights):
        shutil.rmtree(memos, ignore_errors=True)
        shutil.copytree(snapshot / "vectors", memos)
        seconds, phases, _ = mine_once(logs, config, uri, workdir / "repeat-staging", second,
                                       last_run=snapshot / "staging")
        runs.append({"seconds": seconds, "rows_per_s": lines / seconds, "phases": phases})
        print(f"next night {n + 1}/{nights} ({second[0]} to {second[-1]}, {lines:,} lines): {seconds:.2f}s, "
              f"{lines / seconds:,.0f} rows/s", file=sys.stderr, flush=True)
    times = [r["seconds"] for r in runs]
    return {"lines": lines, "days": second, "plain": plain, "runs": runs, "median_seconds": statistics.median(times),
            "min_seconds": min(times), "max_seconds": max(times), "max_over_min": max(times) / min(times)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.repeat_night", description=__doc__.splitlines()[0])
    ap.add_argument("--keep", type=Path, required=True, help="a benchmarks.bench_mining --keep folder")
    ap.add_argument("--nights", type=int, default=5, help="times the same next night runs (default 5)")
    ap.add_argument("--plain", action="store_true", help="mine the plain JSONL copy (logs-plain)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    report = repeat_night(args.keep, args.nights, args.plain)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"the same next night, {args.nights} times: median {report['median_seconds']:.2f}s "
              f"({report['lines'] / report['median_seconds']:,.0f} rows/s), from {report['min_seconds']:.2f}s to "
              f"{report['max_seconds']:.2f}s (slowest / fastest {report['max_over_min']:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
