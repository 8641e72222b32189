"""Benchmark embedding one question on one thread against the default threads, side by side in one run.

    .venv/bin/python -m benchmarks.bench_embed_one [--questions FILE] [-n N] [--rounds R] [--busy P] [--json]

A search embeds its query alone (`Embedder.encode_one`: every plan step the plan stage evaluates, every
`search` and `retrieve`). This times that call as shipped (one torch thread for the one text) against the
plain `model.encode([text], normalize_embeddings=True)` on the default threads (one per core), in alternating
blocks of ten questions, twice: on a quiet machine, then beside `--busy` other processes that each keep a core
busy (a pure-Python loop), as a nightly run shares its machine with other jobs. Per-call median and 90th
percentile in milliseconds, CPU milliseconds per call, and the ratio. Defaults: the first 100 questions of the
MultiHop-RAG 500 sample next to this repository (long, 40-word questions), else the seed handbook's.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT.parent / "shared" / "benchmarks" / "multihop_rag_500" / "questions.jsonl"
SEED = ROOT / "tests" / "fixtures" / "seed_handbook" / "questions.jsonl"


def _spin() -> None:  # pragma: no cover - runs in a child process until terminated
    while True:
        pass


def read_questions(path: Path, n: int) -> list[str]:
    texts = [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return texts[:n]


def measure(texts: list[str], rounds: int) -> dict[str, dict[str, float]]:
    """Per-call wall and CPU milliseconds of both ways of embedding one text, interleaved question by question."""
    import torch

    from tasks.embed import Embedder

    embedder = Embedder()
    model = embedder.model
    threads = torch.get_num_threads()

    def default(text: str) -> None:
        model.encode([text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)

    def one_thread(text: str) -> None:
        embedder._memo.clear()  # time the model, not the memo
        embedder.encode_one(text)

    ways = {f"default ({threads} threads)": default, "one thread (encode_one)": one_thread}
    for fn in ways.values():  # warm-up
        fn(texts[0])
    wall: dict[str, list[float]] = {name: [] for name in ways}
    cpu: dict[str, list[float]] = {name: [] for name in ways}
    for r in range(rounds):  # blocks of ten questions, each way in turn: both see the same machine
        order = list(ways.items()) if r % 2 == 0 else list(ways.items())[::-1]
        for at in range(0, len(texts), 10):
            for name, fn in order:
                for text in texts[at:at + 10]:
                    t0, c0 = time.perf_counter(), time.process_time()
                    fn(text)
                    wall[name].append((time.perf_counter() - t0) * 1000)
                    cpu[name].append((time.process_time() - c0) * 1000)
    return {name: {"median_ms": statistics.median(wall[name]),
                   "p90_ms": statistics.quantiles(wall[name], n=10)[-1],
                   "cpu_ms": statistics.fmean(cpu[name])} for name in ways}


def run(questions: Path, n: int, rounds: int, busy: int) -> dict[str, Any]:
    texts = read_questions(questions, n)
    out: dict[str, Any] = {"questions": str(questions), "n": len(texts), "rounds": rounds, "busy": busy,
                           "cpus": multiprocessing.cpu_count()}
    out["quiet"] = measure(texts, rounds)
    ctx = multiprocessing.get_context("spawn")
    neighbours = [ctx.Process(target=_spin, daemon=True) for _ in range(busy)]
    for p in neighbours:
        p.start()
    try:
        time.sleep(1.0)
        out["busy_neighbours"] = measure(texts, rounds)
    finally:
        for p in neighbours:
            p.terminate()
            p.join()
    return out


def render(doc: dict[str, Any]) -> str:
    lines = [f"{doc['n']} questions from {doc['questions']}, {doc['rounds']} round(s), {doc['cpus']} CPUs",
             f"{'machine':<22} {'way':<26} {'median ms':>10} {'p90 ms':>8} {'CPU ms':>8}"]
    for key, label in (("quiet", "quiet"), ("busy_neighbours", f"{doc['busy']} busy process(es)")):
        rows = doc[key]
        for name, m in rows.items():
            lines.append(f"{label:<22} {name:<26} {m['median_ms']:>10.1f} {m['p90_ms']:>8.1f} {m['cpu_ms']:>8.1f}")
        base, one = rows.values()
        lines.append(f"{'':<22} {'default / one thread':<26} {base['median_ms'] / one['median_ms']:>9.2f}x "
                     f"{base['p90_ms'] / one['p90_ms']:>7.2f}x {base['cpu_ms'] / one['cpu_ms']:>7.2f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_embed_one", description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, default=SAMPLE if SAMPLE.exists() else SEED,
                    help="a labeled set's questions.jsonl (default: the MultiHop-RAG 500 sample, else the seed's)")
    ap.add_argument("-n", type=int, default=100, help="questions to embed (default 100)")
    ap.add_argument("--rounds", type=int, default=2, help="passes over the questions (default 2)")
    ap.add_argument("--busy", type=int, default=1, help="busy neighbour processes in the second half (default 1)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    args = ap.parse_args(argv)
    if not args.questions.exists():
        print(f"{args.questions}: no such file; pass --questions FILE (a labeled set's questions.jsonl)",
              file=sys.stderr)
        return 2
    doc = run(args.questions, args.n, args.rounds, args.busy)
    print(json.dumps(doc, indent=2) if args.json else render(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
