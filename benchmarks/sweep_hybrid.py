"""Search once 100 deep, fuse many ways: the all-parts rate of each hybrid weight and depth, side by side.

    .venv/bin/planbake eval ... --in-sample --budget 10 --out /tmp/evb10   # every question, hybrid search
    .venv/bin/python -m benchmarks.sweep_hybrid --publication /tmp/evb10 \\
        --questions ../shared/benchmarks/multihop_rag_500/questions.jsonl --budget 10

Each labeled question with parts is looked up in the publication, and its routed plan (as published: routing
is not re-run) and its original question are searched by cosine and by BM25 once, `--deepest` deep. Every
setting then fuses the two lists cut to its depth by standard scores (`tasks.index.store.score_fusion`, the cosine
weighted as the setting says) and builds the context by round robin, topped up from the original question, as
`planbake eval` does. The setting the publication was built with reproduces its routed count. Each step's part
is its fused list cut to the step's depth: a publication with `entity_slots`, whose steps bring only the pages
they name (`tasks.executor.named_pages`), is not swept as it is served.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np

from schemas.cache import PlanCache
from tasks.evaluate import labeled_plans, read_labeled
from tasks.executor import round_robin, run_plan, search_original, step_depth
from tasks.index.store import Index, score_fusion

Scored = list[tuple[str, float]]


def searcher(index: Index, deepest: int) -> Callable[[str, dict[str, str]], tuple[Scored, Scored]]:
    """A query's cosine and BM25 lists under its filters, each `deepest` long, searched once."""
    memo: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Scored, Scored]] = {}

    def lists(query: str, filters: dict[str, str]) -> tuple[Scored, Scored]:
        key = (query, tuple(sorted(filters.items())))
        if key not in memo:
            vec: np.ndarray = index.embedder.encode_one(query)
            cosine = [(h.id, h.score) for h in index._search(vec, deepest, filters or None, False)]
            words = [(h.id, bm25) for h, bm25 in index._text_search(query, vec, deepest, filters or None, False)]
            memo[key] = (cosine, words)
        return memo[key]
    return lists


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--publication", type=Path, required=True, help="the --out of a `planbake eval` run")
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--budget", type=int, default=10)
    ap.add_argument("--weights", default="0.4,0.45,0.5,0.55,0.6", help="cosine weights, comma-separated")
    ap.add_argument("--depths", default="30,50,100", help="list depths, comma-separated")
    args = ap.parse_args(argv)
    weights = [float(w) for w in args.weights.split(",")]
    depths = [int(d) for d in args.depths.split(",")]
    cache = PlanCache.open(args.publication)
    config = cache.lexicon.config
    index = Index(cache.index_uri, config, cache.manifest["index"]["version"])
    lists = searcher(index, max(depths))
    depth = step_depth(config.planning.per_step_k, args.budget)
    covered: dict[tuple[float, int], int] = defaultdict(int)
    labeled = [q for q in read_labeled(args.questions) if q.parts]
    for n, q in enumerate(labeled, 1):
        _, routed, keep = labeled_plans(cache, q, cache.lookup(q.question))
        parts = ([search_original(q.question, index, args.budget, config.planning.per_step_k)] * keep
                 + run_plan(routed, index, cache.lexicon, depth)) if routed else []
        for w in weights:
            for d in depths:
                def fused(query: str, filters: dict[str, str], w: float = w, d: int = d) -> list[str]:
                    cosine, words = lists(query, filters)
                    return score_fusion([cosine[:d], words[:d]], [w, 1.0 - w])
                whole = fused(q.question, {})
                got = round_robin([whole if p.id == "original" else fused(p.query, p.filters)[:depth]
                                   for p in parts], args.budget) if parts else []
                got += [c for c in whole if c not in got][:args.budget - len(got)]
                covered[(w, d)] += all(part & {c.split("#")[0] for c in got} for part in q.parts)
        if n % 100 == 0:
            print(f"{n}/{len(labeled)} questions", flush=True)
    print(f"\nall parts of {len(labeled)} questions at budget {args.budget} (routed plans as published)\n")
    print("| cosine weight | " + " | ".join(f"{d} deep" for d in depths) + " |")
    print("|---|" + "---:|" * len(depths))
    for w in weights:
        print(f"| {w} | " + " | ".join(str(covered[(w, d)]) for d in depths) + " |")


if __name__ == "__main__":
    main()
