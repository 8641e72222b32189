"""The instruction-text classifier (schemas/instruction.py) on the hand-written sets of
tests/fixtures/instruction_text.jsonl: right answers per threshold on the dev half (where the settings were chosen)
and on the test half, and the time to score one question (what `lookup` adds to a question).

    .venv/bin/python -m benchmarks.bench_instruction
"""

import json
import time
from pathlib import Path

from schemas.instruction import THRESHOLD, score

SETS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "instruction_text.jsonl"


def main() -> None:
    rows = [json.loads(line) for line in SETS.read_text(encoding="utf-8").splitlines()]
    scores = [score(r["text"]).score for r in rows]
    print("| threshold | half | instruction text caught | ordinary passed | accuracy |")
    print("|---:|---|---:|---:|---:|")
    for threshold in (0.5, 1.0, 1.5, 2.0):
        for half in ("dev", "test"):
            part = [(r, s) for r, s in zip(rows, scores, strict=True) if r["half"] == half]
            caught = sum(s >= threshold for r, s in part if r["instruction"])
            passed = sum(s < threshold for r, s in part if not r["instruction"])
            n_in = sum(r["instruction"] for r, _ in part)
            mark = " (chosen)" if threshold == THRESHOLD else ""
            print(f"| {threshold}{mark} | {half} | {caught}/{n_in} | {passed}/{len(part) - n_in} | "
                  f"{(caught + passed) / len(part):.1%} |")
    texts = [r["text"] for r in rows if not r["instruction"]] * 200
    t = time.perf_counter()
    for text in texts:
        score(text)
    print(f"\nscore(): {(time.perf_counter() - t) / len(texts) * 1e6:.1f} µs per ordinary question")


if __name__ == "__main__":
    main()
