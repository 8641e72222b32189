"""Merge strategies: per-part quota (round robin), best score, reciprocal rank fusion; re-ranking within a part."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from schemas.cache import PlanCache
from schemas.config import Config, load_config
from schemas.plan import Plan
from tasks.executor import MERGES, best_score, reciprocal_rank, reranked, retrieve, round_robin
from tasks.index.store import Hit, Index, best_cosine, rank_fusion, score_fusion
from tests.conftest import DEMO_CONFIG

PARTS = [[("b1", 0.9), ("b2", 0.85), ("b3", 0.8)], [("a1", 0.6), ("a2", 0.55)]]


def test_round_robin_keeps_a_quota_per_part() -> None:
    assert round_robin([[c for c, _ in p] for p in PARTS], 4) == ["b1", "a1", "b2", "a2"]
    assert round_robin([["x", "y"], ["x", "z"]], 3) == ["x", "y", "z"]  # a chunk two parts share counts once


def test_best_score_lets_a_strong_part_crowd_out_a_weak_one() -> None:
    assert best_score(PARTS, 3) == ["b1", "b2", "b3"]
    assert best_score([[("x", 0.2)], [("x", 0.7), ("y", 0.5)]], 2) == ["x", "y"]  # a chunk at its best score


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    fused = reciprocal_rank([[("x", 0.9), ("y", 0.8)], [("y", 0.9), ("z", 0.8)]], 3)
    assert fused[0] == "y"  # second in one list and first in the other beats first in one
    assert fused[1:] == ["x", "z"]
    assert rank_fusion([["b", "a"], ["a", "b"]]) == ["a", "b"]  # equal sums: by id, the same order every run


def test_score_fusion_weighs_two_scales_alike() -> None:
    cosine = [("a", 0.62), ("b", 0.61), ("c", 0.30)]
    bm25 = [("b", 9.0), ("c", 8.5), ("a", 1.0)]
    assert score_fusion([cosine, bm25], [0.5, 0.5])[0] == "b"
    assert score_fusion([cosine, bm25], [1.0, 0.0]) == ["a", "b", "c"]  # the cosine alone
    assert score_fusion([cosine, bm25], [0.0, 1.0]) == ["b", "c", "a"]  # BM25 alone
    # a ranking's scale and offset do not matter: BM25 in other units fuses the same
    rescaled = [(c, 40.0 + 10.0 * s) for c, s in bm25]
    assert score_fusion([cosine, rescaled], [0.5, 0.5]) == score_fusion([cosine, bm25], [0.5, 0.5])


def test_score_fusion_gives_a_missing_chunk_the_lowest_score_of_that_ranking() -> None:
    fused = score_fusion([[("a", 0.9), ("b", 0.5)], [("c", 3.0), ("b", 1.0)]], [0.5, 0.5])
    assert sorted(fused) == ["a", "b", "c"] and fused.index("a") < fused.index("b")
    assert score_fusion([[("x", 0.4)], []], [0.5, 0.5]) == ["x"]  # no word matched: the cosine ranking alone
    assert score_fusion([[("b", 1.0), ("a", 1.0)]], [1.0]) == ["a", "b"]  # equal scores: by id


def test_score_fusion_ranks_a_ranking_of_equal_scores_above_the_chunks_it_lacks() -> None:
    """One chunk, or a tie, has no spread to standardise: its chunks still score above those the ranking lacks
    (the one chunk a rare word matches is what BM25 is for), not level with them."""
    cosine = [("a", 0.6), ("b", 0.5), ("c", 0.4)]
    assert score_fusion([cosine, [("c", 9.0)]], [0.0, 1.0]) == ["c", "a", "b"]  # BM25 alone: its one match first
    assert score_fusion([cosine, [("c", 9.0)]], [0.2, 0.8])[0] == "c"
    assert score_fusion([cosine, [("c", 2.0), ("b", 2.0)]], [0.0, 1.0]) == ["b", "c", "a"]
    assert score_fusion([cosine, [("c", 9.0)]], [1.0, 0.0]) == ["a", "b", "c"]  # the cosine alone
    tiny = [("x", 0.1), ("y", 0.1), ("z", 0.1)]  # a mean not exactly 0.1: a spread of rounding error is none
    assert score_fusion([[("w", 0.9), *tiny[:1]], tiny], [0.0, 1.0]) == ["x", "y", "z", "w"]



def test_score_fusion_ranks_a_nan_score_last_in_its_ranking() -> None:
    """A NaN score (the cosine of a zero vector) is no score: it ranks last in its ranking and leaves the other
    chunks' standard scores as they are, so the order is the same on every run."""
    nan = float("nan")
    cosine = [("a", 0.6), ("b", 0.5), ("c", 0.4)]
    bm25 = [("c", 9.0), ("b", 3.0), ("a", 1.0)]
    plain = score_fusion([cosine, bm25], [0.5, 0.5])
    assert score_fusion([[*cosine, ("z", nan)], bm25], [0.5, 0.5]) == [*plain, "z"]
    assert score_fusion([[("z", nan), *cosine], bm25], [0.5, 0.5]) == [*plain, "z"]  # wherever it stands
    assert score_fusion([cosine, [("a", nan), *bm25[:2]]], [0.0, 1.0]) == ["c", "b", "a"]
    assert score_fusion([[("a", nan), ("b", 0.5), ("c", 0.5)]], [1.0]) == ["b", "c", "a"]  # beside a tie
    assert score_fusion([cosine, [("a", nan), ("b", nan)]], [0.5, 0.5]) == ["a", "b", "c"]  # no BM25 score at all

_LISTS = st.lists(st.lists(st.tuples(st.sampled_from("abcdefgh"), st.floats(-1, 1)), max_size=6).map(
    lambda hits: list({c: (c, s) for c, s in hits}.values())), max_size=4)


@given(_LISTS, st.integers(1, 8), st.sampled_from(sorted(MERGES)))
def test_every_merge_is_a_budgeted_set_of_retrieved_chunks(lists: list, budget: int, merge: str) -> None:
    out = MERGES[merge](lists, budget)
    retrieved = {c for hits in lists for c, _ in hits}
    assert len(out) == len(set(out)) == min(budget, len(retrieved))
    assert set(out) <= retrieved
    if merge == "round_robin" and budget >= len(lists):
        assert all(hits[0][0] in out for hits in lists if hits)  # every part gets its best chunk in


def _hit(cid: str, score: float, vector: list[float]) -> Hit:
    v = np.asarray(vector, dtype=np.float32)
    return Hit(cid, score, "", {}, None, None, None, True, v / np.linalg.norm(v))


def test_rerank_orders_a_part_by_the_question() -> None:
    hits = [_hit("near-step", 0.9, [0, 1]), _hit("near-question", 0.8, [1, 0.2]), _hit("between", 0.7, [1, 1])]
    order = [c for c, _ in reranked(hits, np.asarray([1.0, 0.0], dtype=np.float32))]
    assert order == ["near-question", "between", "near-step"]


def test_rerank_in_retrieve_keeps_each_part_and_its_quota(seed_eval: dict) -> None:
    cache = PlanCache.open(Path(seed_eval["out"]))
    question = "Compare parental leave for the second parent in Berlin and Amsterdam."
    res = cache.lookup(question, now=date(2026, 11, 29))
    assert res.plan is not None
    manifest = json.loads((cache.run_dir / "manifest.json").read_text())
    index = Index(manifest["index"]["uri"], load_config(DEMO_CONFIG), manifest["index"]["version"])
    plan = Plan.model_validate(res.plan)
    plain = retrieve(question, plan, index, cache.lexicon, 4, 4, keep_original=False)
    again = retrieve(question, plan, index, cache.lexicon, 4, 4, keep_original=False, rerank=True)
    assert [p.id for p in again.parts] == [p.id for p in plain.parts]
    qv = index.embedder.encode_one(question)
    for part in again.parts:  # the context holds each part's two chunks most similar to the question
        best_two = [c for c, _ in reranked(part.hits, qv)][:2]
        assert set(best_two) <= set(again.context)
    offices = {h.facets["office"] for h in again.hits_by_id().values() if h.id in again.context}
    assert offices == {"Berlin", "Amsterdam", None}  # each office's chunks, and the company-wide policy


def _exact_office() -> Config:
    """The demo config with `scope: exact` offices: a step finds only its office's own chunks."""
    config = load_config(DEMO_CONFIG)
    return config.model_copy(update={"facets": [f.model_copy(update={"scope": "exact"}) if f.name == "office" else f
                                                for f in config.facets]})


def test_a_split_fills_the_budget_from_its_parts(seed_eval: dict) -> None:
    cache = PlanCache.open(Path(seed_eval["out"]))
    question = "Compare parental leave for the second parent in Berlin and Amsterdam."
    plan = Plan.model_validate(cache.lookup(question, now=date(2026, 11, 29)).plan)
    manifest = json.loads((cache.run_dir / "manifest.json").read_text())
    index = Index(manifest["index"]["uri"], _exact_office(), manifest["index"]["version"])
    run = retrieve(question, plan, index, cache.lexicon, 5, 1, keep_original=False)
    # k=1 per step, but each step searches as deep as the budget: Berlin has 5 chunks, Amsterdam 3 (exact offices)
    assert [len(p.hits) for p in run.parts] == [5, 3]
    assert len(run.context) == 5  # none of the budget left unused (2 chunks with one per step)
    assert {h.facets["office"] for h in run.hits_by_id().values() if h.id in run.context} == {"Berlin", "Amsterdam"}


def test_a_split_its_parts_leave_short_is_topped_up_from_the_whole_question(seed_eval: dict) -> None:
    cache = PlanCache.open(Path(seed_eval["out"]))
    question = "Compare parental leave for the second parent in Berlin and Amsterdam."
    plan = Plan.model_validate(cache.lookup(question, now=date(2026, 11, 29)).plan)
    manifest = json.loads((cache.run_dir / "manifest.json").read_text())
    index = Index(manifest["index"]["uri"], _exact_office(), manifest["index"]["version"])
    run = retrieve(question, plan, index, cache.lexicon, 12, 4, keep_original=False)
    # Berlin holds 5 chunks and Amsterdam 3 (exact offices): the whole question's best chunks fill the other 4
    steps, original = run.parts[:2], run.parts[2]
    assert [len(p.hits) for p in steps] == [5, 3] and original.id == "original" and run.searches == 3
    from_steps = {h.id for p in steps for h in p.hits}
    assert run.context[:8] == [c for c in run.context if c in from_steps] and len(run.context) == 12
    assert run.context[8:] == [h.id for h in original.hits if h.id not in from_steps][:4]


def test_best_cosine_reads_past_a_nan_score() -> None:
    """A NaN first in a list made `max` return NaN, and every floor check against it false."""
    nan = float("nan")
    hits = [Hit(c, score, "", {}, None, None, None, True, np.zeros(2, np.float32)) for c, score in
            (("a", nan), ("b", 0.4), ("c", 0.6))]
    assert best_cosine(hits, -1.0) == 0.6
    assert best_cosine(hits[:1], -1.0) == -1.0
