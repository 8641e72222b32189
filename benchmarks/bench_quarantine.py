"""Ingest a log that is mostly quarantined against the same log with every line valid, side by side.

    .venv/bin/python -m benchmarks.bench_quarantine [--rows N] [--share S] [--repeat R]

A clock gone wrong (a client logging a year ahead) quarantines most of a night's lines. Two JSONL.gz logs of
N lines are written: one with every timestamp valid, one where a share S of them (default 0.6) are in the
future. `tasks.ingest.stage.ingest` (with the demo configuration's PII scrubber, quarantine complete) reads each,
alternating, R times; the figure is the ratio of the medians. The questions repeat as in real logs (2,000
distinct texts, some with an email address), so the scrubber sees recurring text.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path

from schemas.config import load_config
from schemas.pii import Scrubber
from tasks.ingest.stage import ingest

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 11, 30)


def write_log(path: Path, rows: int, share: float, seed: int = 7) -> None:
    rng = random.Random(seed)
    texts = [f"how many vacation days in office {i % 40} for {'jane.doe@example.com' if i % 7 == 0 else 'me'}"
             f" question {i}" for i in range(2_000)]
    with gzip.open(path, "wt") as out:
        for i in range(rows):
            year = 2999 if rng.random() < share else 2026
            out.write(json.dumps({"ts": f"{year}-11-{1 + i % 28:02d}T09:{i % 60:02d}:00Z", "user": f"u-{i % 5_000}",
                                  "query": rng.choice(texts)}) + "\n")


def timed_ingest(path: Path, scrub: Scrubber) -> tuple[float, int]:
    t0 = time.perf_counter()
    ing = ingest(path, now=NOW, scrub=scrub)
    seconds = time.perf_counter() - t0
    quarantined = ing.quarantined
    ing.con.close()
    return seconds, quarantined


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--share", type=float, default=0.6, help="share of lines with a future timestamp")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    config = load_config(ROOT / "data" / "configs" / "demo.yaml")
    scrub = Scrubber(config.pii_names)
    with tempfile.TemporaryDirectory(prefix="bench_quarantine_") as tmp:
        valid, bad = Path(tmp) / "valid.jsonl.gz", Path(tmp) / "future.jsonl.gz"
        write_log(valid, args.rows, 0.0)
        write_log(bad, args.rows, args.share)
        times: dict[str, list[float]] = {"valid": [], "future": []}
        counts = {}
        for _ in range(args.repeat):
            for name, path in (("valid", valid), ("future", bad)):
                seconds, counts[name] = timed_ingest(path, scrub)
                times[name].append(seconds)
    print(f"{'log':<28}{'quarantined':>12}{'seconds (median)':>18}")
    for name, label in (("valid", "every line valid"), ("future", f"{args.share:.0%} in the future")):
        print(f"{label:<28}{counts[name]:>12,}{statistics.median(times[name]):>18.2f}")
    ratio = statistics.median(times["future"]) / statistics.median(times["valid"])
    print(f"mostly quarantined / valid: {ratio:.2f}x ({args.rows:,} lines, {args.repeat} rounds each)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
