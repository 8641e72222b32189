"""Benchmark one hybrid search against one vector search on the same index, side by side in one run.

    .venv/bin/python -m benchmarks.bench_search [--corpus FILE] [--questions FILE] [--config FILE] [-k K]
                                                [--rounds R] [--json]

The index is built from the corpus in a temporary directory (`tasks.index.stage.build_index`, which also builds
the full-text index). The questions (a labeled set's `questions.jsonl`) are embedded first, so only the search
is timed: `Index._search` (cosine, LanceDB) against `Index._hybrid` (the same cosine search plus a BM25 search of
the same chunks, fused as the config's `planning.hybrid_fusion` says), each question once per round, unfiltered
and under the first category facet's value that the question names (as a plan step would search), interleaved
question by question so both see the same machine. Per-search median and 90th percentile, in milliseconds, and
the ratio. Defaults: the MultiHop-RAG 500 sample next to this repository and its configuration.
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

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT.parent / "shared" / "benchmarks" / "multihop_rag_500"
CONFIG = ROOT / "data" / "configs" / "multihop_rag.yaml"


def run(corpus: Path, questions: Path, config_path: Path, k: int, rounds: int) -> dict[str, Any]:
    from schemas.config import load_config
    from schemas.extract import Lexicon
    from tasks.index.stage import build_index
    from tasks.index.store import Index

    config = load_config(config_path)
    texts = [json.loads(line)["question"] for line in questions.read_text(encoding="utf-8").splitlines()
             if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        outcome = build_index(corpus, config, Path(tmp), date(2026, 12, 1), quiet=True)
        index = Index(outcome.uri, config, outcome.result.version)
        lexicon = Lexicon(config, index.lexicon_values())
        cats = {f.name for f in config.facets if f.kind == "category"}
        filters = []
        for text in texts:
            named = [c for c in lexicon.extract(text) if c.facet in cats]
            filters.append({named[0].facet: named[0].value} if named else None)
        vectors = index.embedder.encode(texts, quiet=True)
        depth = max(k, config.planning.hybrid_depth)
        times: dict[str, list[float]] = {"vector": [], "hybrid": [], "vector, filtered": [],
                                          "hybrid, filtered": []}
        for text, vec, flt in zip(texts, vectors, filters, strict=True):  # warm-up: caches, first calls
            index._search(vec, k, flt, False)
            index._hybrid(text, vec, depth, k, flt, False)
        for _ in range(rounds):
            for text, vec, flt in zip(texts, vectors, filters, strict=True):
                for name, where in (("", None), (", filtered", flt)):
                    if name and where is None:
                        continue
                    t0 = time.perf_counter()
                    index._search(vec, k, where, False)
                    t1 = time.perf_counter()
                    index._hybrid(text, vec, depth, k, where, False)
                    t2 = time.perf_counter()
                    times["vector" + name].append((t1 - t0) * 1000)
                    times["hybrid" + name].append((t2 - t1) * 1000)
    stats = {name: {"searches": len(ms), "median_ms": statistics.median(ms),
                    "p90_ms": statistics.quantiles(ms, n=10)[-1]} for name, ms in times.items() if ms}
    return {"corpus": str(corpus), "chunks": outcome.result.chunks, "questions": len(texts),
            "filtered_questions": sum(f is not None for f in filters), "k": k, "hybrid_depth": depth,
            "rounds": rounds, "searches": stats,
            "ratio_unfiltered": stats["hybrid"]["median_ms"] / stats["vector"]["median_ms"],
            "ratio_filtered": (stats["hybrid, filtered"]["median_ms"] / stats["vector, filtered"]["median_ms"]
                               if "hybrid, filtered" in stats else None)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_search", description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=SAMPLE / "corpus.jsonl")
    ap.add_argument("--questions", type=Path, default=SAMPLE / "questions.jsonl")
    ap.add_argument("--config", type=Path, default=CONFIG)
    ap.add_argument("-k", type=int, default=4, help="chunks per search (default 4)")
    ap.add_argument("--rounds", type=int, default=3, help="passes over the questions (default 3)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    args = ap.parse_args(argv)
    for path in (args.corpus, args.questions):
        if not path.exists():
            print(f"{path}: not found; pass --corpus and --questions (a labeled set)", file=sys.stderr)
            return 2
    report = run(args.corpus, args.questions, args.config, args.k, args.rounds)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['chunks']} chunks, {report['questions']} questions ({report['filtered_questions']} name a "
          f"value), k={report['k']}, hybrid depth {report['hybrid_depth']}, {report['rounds']} rounds")
    print("| search | searches | median ms | p90 ms |\n|---|---|---|---|")
    for name, s in report["searches"].items():
        print(f"| {name} | {s['searches']} | {s['median_ms']:.2f} | {s['p90_ms']:.2f} |")
    print(f"hybrid / vector (median): {report['ratio_unfiltered']:.2f} unfiltered"
          + (f", {report['ratio_filtered']:.2f} filtered" if report["ratio_filtered"] else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
