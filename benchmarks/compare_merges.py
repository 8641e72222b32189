"""Search once, merge many ways: the all-parts rate of each way to merge a plan's parts, side by side.

    .venv/bin/planbake eval ... --in-sample --budget 10 --out /tmp/evb10   # an eval publication of every question
    .venv/bin/python -m benchmarks.compare_merges --publication /tmp/evb10 \\
        --questions ../shared/benchmarks/multihop_rag_500/questions.jsonl --budget 10

Each labeled question with parts is looked up in the publication; its rule plan (the shape's template, whatever
its route), its routed plan and its original question are searched once, and every merge below builds the
context from those same lists, so the merges differ in nothing else. A context a merge leaves short of the
budget is topped up from the original question's search, as `tasks.executor.retrieve` does. The merges of
`tasks.executor.MERGES` are the ones a config can choose; the others are candidates measured here only.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from schemas.cache import PlanCache
from tasks.evaluate import labeled_plans, read_labeled
from tasks.executor import MERGES, StepResult, round_robin, run_plan, search_original, step_depth
from tasks.index.store import Index, rank_fusion

Lists = list[list[str]]


def quota(lists: Lists, budget: int) -> list[str]:
    """Each part in turn takes its best chunk not yet in the context (round robin skips a taken one instead)."""
    picked: list[str] = []
    pos = [0] * len(lists)
    while len(picked) < budget:
        before = len(picked)
        for i, hits in enumerate(lists):
            while pos[i] < len(hits) and hits[pos[i]] in picked:
                pos[i] += 1
            if pos[i] < len(hits) and len(picked) < budget:
                picked.append(hits[pos[i]])
                pos[i] += 1
        if len(picked) == before:
            break
    return picked


def firsts_then_fusion(lists: Lists, budget: int) -> list[str]:
    """Every part's first chunk, then the rest by reciprocal rank fusion (a chunk several parts found first)."""
    first = round_robin([hits[:1] for hits in lists], budget)
    return (first + [c for c in rank_fusion(lists) if c not in first])[:budget]


def configurable(name: str) -> Callable[[Lists, int], list[str]]:
    """A merge of `MERGES` on ranked ids ("max" needs scores: `planbake eval --merge max` measures it)."""
    return lambda lists, budget: MERGES[name]([[(c, 0.0) for c in hits] for hits in lists], budget)


CANDIDATES: dict[str, Callable[[Lists, int], list[str]]] = {
    **{name: configurable(name) for name in MERGES if name != "max"},
    "quota": quota,
    "firsts+rrf": firsts_then_fusion,
}


def context(merge: Callable[[Lists, int], list[str]], parts: list[StepResult], original: StepResult,
            budget: int) -> list[str]:
    got = merge([[h.id for h in p.hits] for p in parts], budget)
    return got + [h.id for h in original.hits if h.id not in got][:budget - len(got)]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--publication", type=Path, required=True, help="the --out of a `planbake eval` run")
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--budget", type=int, default=10)
    args = ap.parse_args(argv)
    cache = PlanCache.open(args.publication)
    config = cache.lexicon.config
    index = Index(cache.index_uri, config, cache.manifest["index"]["version"])
    depth = step_depth(config.planning.per_step_k, args.budget)
    covered: dict[tuple[str, str], int] = defaultdict(int)
    labeled = [q for q in read_labeled(args.questions) if q.parts]
    for n, q in enumerate(labeled, 1):
        res = cache.lookup(q.question)
        rule_plan, routed, keep = labeled_plans(cache, q, res)
        original = search_original(q.question, index, args.budget, config.planning.per_step_k)
        rule_parts = run_plan(rule_plan, index, cache.lexicon, depth) if rule_plan else []
        routed_parts = (rule_parts if routed == rule_plan else run_plan(routed, index, cache.lexicon, depth)
                        ) if routed else []
        for name, merge in CANDIDATES.items():
            for system, parts in (("rules", rule_parts), ("routed", [original] * keep + routed_parts)):
                got = context(merge, parts, original, args.budget) if parts else [h.id for h in original.hits]
                docs = {c.split("#")[0] for c in got[:args.budget]}
                covered[(name, system)] += all(part & docs for part in q.parts)
        if n % 100 == 0:
            print(f"{n}/{len(labeled)} questions", flush=True)
    print(f"\nall parts of {len(labeled)} questions at budget {args.budget} (the same searches for every merge)\n")
    print("| merge | rules | routed |\n|---|---:|---:|")
    for name in CANDIDATES:
        print(f"| {name} | {covered[(name, 'rules')]} | {covered[(name, 'routed')]} |")


if __name__ == "__main__":
    main()
