"""Scrubbing questions that carry a phone number, one source tree against another.

    .venv/bin/python -m benchmarks.bench_scrub_numbers [--tree DIR ...] [--rounds 2] [--questions 400]

Each question ("how many vacation days in Berlin (my number is 030 12345678)") carries a number in one of eight
national or international forms, drawn with a fixed seed. Each `--tree` (a source tree: this one by default, an
older checkout for a comparison, e.g. `git worktree add /tmp/old COMMIT`) scrubs them in a process of its own:
every question 7 times, its best CPU time (the thread's) kept, so the machine's noise falls out; the trees take
turns for `--rounds` rounds. Read the ratio of the medians.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, random, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from schemas.pii import Scrubber
rng = random.Random(3)
forms = ["030 {8}", "020 7946 {4}", "(416) 555-{4}", "06 {8}", "+48 22 {3} {4}", "0044 20 7946 {4}", "089 {7}",
         "01 {3} {4}"]
def number(form):
    for n in (8, 7, 4, 3):
        form = form.replace("{%d}" % n, "".join(rng.choice("0123456789") for _ in range(n)))
    return form
questions = [f"how many vacation days in Berlin (my number is {number(rng.choice(forms))})"
             for _ in range(int(sys.argv[2]))]
scrub = Scrubber()
best = [float("inf")] * len(questions)
for _ in range(7):
    for i, q in enumerate(questions):
        t = time.thread_time_ns()
        scrub(q)
        best[i] = min(best[i], time.thread_time_ns() - t)
print(json.dumps({"median_us": statistics.median(best) / 1e3, "mean_us": sum(best) / len(best) / 1e3}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_scrub_numbers", description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", type=Path, help="a source tree (default: this one); repeat to compare")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--questions", type=int, default=400)
    args = ap.parse_args(argv)
    trees = args.tree or [ROOT]
    print(f"{'round':<6}{'tree':<40}{'median us':>10}{'mean us':>10}")
    for r in range(args.rounds):
        for tree in trees:
            out = subprocess.run([sys.executable, "-c", _CHILD, str(tree.resolve()), str(args.questions)],
                                 capture_output=True, text=True, check=True)
            doc = json.loads(out.stdout)
            print(f"{r + 1:<6}{str(tree):<40}{doc['median_us']:>10.1f}{doc['mean_us']:>10.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
