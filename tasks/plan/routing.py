"""Evaluate a shape's template against the index and decide its route, with no gold labels.

Facet coverage: the share of a question's constrained facet values (and bridge values its plan extracts)
that have their evidence in the context. A value's evidence is its own step's best chunks: as many as its
part's share of the budget (budget / steps rounded up when the plan splits, else one), each within
`planning.evidence_margin` of the best; a step searches its value's chunks and the company-wide ones
(`schemas.scope`), so a company-wide chunk is evidence of each value whose step ranks it high enough.
The route is the cheapest way that reaches the best facet coverage. A question none of whose filtered values
has a chunk at or above the similarity floor (searched with the whole question), whose plan steps' best chunks
average below the floor, or where neither the question nor any step finds a chunk at `planning.split_floor`,
has no evidence: no route can do better than one search. The whole question's top chunks (its share of the
budget, current versions) that a split leaves out make the route split plus the original.

Step coverage: a plan of two or more steps whose questions name no facet value (entities, topics, chains) is
measured by its steps' parts instead: each step's best chunks that are about its query (`step_targets`: above
the query's own background in this index, so no floor is set per data set), and the share of them each route's
context holds. A step about a named thing brings that thing's page (`tasks.executor.named_pages`): its part.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemas.config import Config
from schemas.extract import Lexicon, Skeleton, fill_skeleton
from schemas.plan import Plan, fill_slots
from schemas.scope import in_scope
from schemas.vocabulary import Vocabulary
from tasks.executor import (
    Retrieved,
    StepResult,
    merge_parts,
    names_a_version,
    run_plan,
    search_original,
    step_depth,
)
from tasks.index.store import Index, best_cosine
from tasks.plan.vocabulary import keeps_constraints, subquery_reach, worded

ROUTES = ("one_search", "split", "split_original")
ROUTER_VERSION = 27  # part of a template's signature: a changed rule writer, router or executor redoes every shape

EVIDENCE_MARGIN = 0.2  # default: cosine below a step's best chunk within which a chunk is still evidence
RELEVANT_SPREADS = 4.0  # a chunk this many spreads above the query's background score is about the query


def evidence_depth(budget: int, steps: int) -> int:
    """Chunks of evidence a value's part needs in the context: its share of the budget when the plan splits,
    rounded up. A round robin gives the remainder to the first parts only, so the later ones fall short of it;
    on MultiHop-RAG this separates the routes better than rounding down (`git log -p BENCHMARKS.md`)."""
    return max(1, -(-budget // steps)) if steps >= 2 else 1


def part_targets(needed: set[tuple[str, str]], plan_run: Retrieved | None, depth: int = 1,
                 margin: float = EVIDENCE_MARGIN) -> dict[tuple[str, str], set[str]]:
    """For each needed facet value, the best chunks (up to `depth`, within `margin` of the best) of the plan
    steps that filter on it: in the value's scope, its own chunks and the company-wide ones (`schemas.scope`)."""
    out: dict[tuple[str, str], set[str]] = {}
    if plan_run is None:
        return out
    for p in plan_run.parts:
        best = best_cosine(p.hits, 0.0)
        for facet, value in p.filters.items():
            if (facet, value) in needed:
                out.setdefault((facet, value), set()).update(h.id for h in p.hits[:depth] if h.score >= best - margin)
    return out


def step_targets(steps: list[StepResult], index: Index, depth: int = 1,
                 margin: float = EVIDENCE_MARGIN) -> list[set[str]]:
    """For a plan whose questions name no facet value, each step's part: its best chunks (up to `depth`, within
    `margin` of the best), where the best is about the step's query, judged against the index itself: at least
    `RELEVANT_SPREADS` spreads above what the query scores against the chunks at large (`Index.background`). A
    step whose best chunk is not about it finds nothing a part needs, and counts for no route."""
    out = []
    for p in steps:
        if p.error is not None or not p.hits or p.answer_kind == "name":  # a name step only feeds the next
            continue
        middle, spread = index.background(p.query)
        best = best_cosine(p.hits, -1.0)
        if best >= middle + RELEVANT_SPREADS * spread:
            out.append({h.id for h in p.hits[:depth] if h.score >= best - margin})
    return out


def step_coverage(targets: list[set[str]], got: Retrieved) -> float:
    """The share of each step's part (`step_targets`) in the context, averaged; 1.0 with no part to find."""
    context = set(got.context)
    return sum(len(t & context) / len(t) for t in targets) / len(targets) if targets else 1.0


def whole_question_probe(question: str, plan_run: Retrieved, index: Index) -> Retrieved:
    """The whole question searched once under each distinct filter set of the plan's steps: whether a value
    holds evidence for the question is judged on the question, not on one clause of it (by its best cosine)."""
    seen: list[dict[str, str]] = []
    for p in plan_run.parts:  # a step whose input was refused keeps its filters unfilled: nothing to probe
        if p.filters and p.error is None and p.filters not in seen:
            seen.append(p.filters)
    parts = [StepResult(f"probe{n}", question, f, index.search(question, 1, f, mode="vector"))
             for n, f in enumerate(seen, 1)]
    return Retrieved([], parts, len(parts))


def has_evidence(needed: set[tuple[str, str]], plan_run: Retrieved, floor: float) -> bool:
    """False when steps filter on needed values and none of them found a chunk at or above the floor."""
    best = [best_cosine(p.hits, -1.0) for p in plan_run.parts
            if any((f, v) in needed for f, v in p.filters.items())]
    return not best or max(best) >= floor


def parts_find_evidence(split: Retrieved, floor: float) -> bool:
    """Whether the plan's own steps, on average, find a chunk at or above the floor. A question the corpus
    cannot answer can have one named value with a chunk near it, yet its clauses find little."""
    best = [best_cosine(p.hits, -1.0) for p in split.parts if p.error is None]
    return not best or sum(best) / len(best) >= floor


def finds_answer(original: StepResult, split: Retrieved, split_floor: float) -> bool:
    """Whether the whole question or one of the plan's steps finds a chunk at or above `split_floor`. Questions
    the corpus cannot answer find chunks on their topic (MultiHop-RAG's null questions: at most 0.47 at budget
    10), answerable ones mostly a clear match of at least one part."""
    return best_cosine([h for p in (original, *split.parts) for h in p.hits], -1.0) >= split_floor


def facet_coverage(needed: set[tuple[str, str]], got: Retrieved, targets: dict[tuple[str, str], set[str]],
                   config: Config) -> float:
    """Share of needed values reached: the share of the value's evidence chunks in the context, or, where no
    step filters on the value, whether any chunk applies to it (holds it, or none where the facet inherits)."""
    if not needed:
        return 1.0
    hits = got.hits_by_id()
    context = set(got.context)

    def present(f: str, v: str) -> bool:
        return any(in_scope(hits[cid].facets, {f: v}, config) for cid in got.context)

    reached = sum(len(targets[v] & context) / len(targets[v]) if targets.get(v) else present(*v) for v in needed)
    return reached / len(needed)


def needed_values(sk: Skeleton, plan_run: Retrieved | None, lexicon: Lexicon) -> set[tuple[str, str]]:
    """Constrained facet values of the question, plus values the plan's extraction steps found."""
    out = {(c.facet, c.value) for c in sk.constraints if c.facet in lexicon.kinds}
    if plan_run is not None:
        out |= {(p.answer_facet, p.answer) for p in plan_run.parts if p.answer and p.answer_facet}
    return out


def original_top(one: Retrieved, budget: int, steps: int) -> list[str]:
    """The whole question's best current chunks, as many as its share of the context beside the steps. The
    original searches every version where the question names a year or date, and a superseded chunk it finds
    then is one no split needs to keep."""
    hits = one.hits_by_id()
    current = [c for c in one.context if hits[c].is_current]
    return current[:max(1, budget // (steps + 1))]


@dataclass
class ShapeEvaluation:
    route: str
    questions: int
    coverage: dict[str, float] = field(default_factory=dict)
    searches: dict[str, float] = field(default_factory=dict)
    top_kept: float = 1.0  # share of samples whose split kept the original's top chunks (its share of the budget)
    refused: int = 0
    unanswered: int = 0  # samples the corpus held no evidence for: each "covers" 1.0 on every route (nothing needed)
    evidence: set[str] = field(default_factory=set)  # chunk ids the evaluation saw
    vocabulary: dict[str, Any] = field(default_factory=dict)  # see measure_vocabulary

    def to_json(self) -> dict[str, Any]:
        return {"route": self.route, "questions": self.questions, "coverage": self.coverage,
                "searches": self.searches, "top_kept": self.top_kept, "refused": self.refused,
                "unanswered": self.unanswered,
                **({"vocabulary": self.vocabulary} if self.vocabulary else {})}


def measure_vocabulary(plans: list[Plan], vocabulary: Vocabulary | None, index: Index, budget: int
                       ) -> dict[str, Any]:
    """How often the shape's partitioned sub-queries find their partition unfiltered, in the question's words
    and in the corpus's. The corpus's words are used when they find more; {} when they change no sub-query."""
    if not vocabulary:
        return {}
    reach = [r for p in plans if (r := subquery_reach(p, vocabulary, index, evidence_depth(budget, len(p.steps))))]
    if not reach:
        return {}
    before = round(sum(r["question_words"] for r in reach) / len(reach), 4)
    after = round(sum(r["corpus_words"] for r in reach) / len(reach), 4)
    return {"questions": len(reach), "question_words": before, "corpus_words": after, "used": after > before}


def decide_route(template: Plan, samples: list[Skeleton], index: Index, lexicon: Lexicon, budget: int,
                 k: int, merge: str = "round_robin", floor: float = -1.0,
                 vocabulary: Vocabulary | None = None, rerank: bool = False,
                 margin: float = EVIDENCE_MARGIN, split_floor: float = -1.0) -> ShapeEvaluation:
    """Run the shape's logged questions one search, as the plan, and as the plan plus the original.
    `floor`: the similarity below which a chunk is no evidence (the null floor); `split_floor`: the one some
    chunk of the question or its steps must reach for a split to count (see finds_answer). `vocabulary`: measured, and
    the plans run with their sub-queries in the corpus's words where that helps (see measure_vocabulary)."""
    if len(template.steps) == 1 and template.steps[0].extract is None and not template.steps[0].filters:
        return ShapeEvaluation("one_search", len(samples), searches={"one_search": 1.0})
    cov = {r: 0.0 for r in ROUTES}
    searches = {r: 0.0 for r in ROUTES}
    kept = refused = unanswered = 0
    evidence: set[str] = set()
    plans = [fill_slots(template, sk.slots) for sk in samples]
    vocab = measure_vocabulary(plans, vocabulary, index, budget)
    if vocab.get("used"):
        assert vocabulary is not None
        broken = [c for sk, p in zip(samples, plans, strict=True)
                  if not (c := keeps_constraints(p, sk, lexicon, vocabulary)).ok]
        if broken:  # the question's words then, offline and online (`used` is what lookup reads)
            vocab = {**vocab, "used": False, "check": broken[0].complaint()}
    for sk, plan in zip(samples, plans, strict=True):
        question = _question_text(sk)
        if vocab.get("used"):
            plan = worded(plan, vocabulary)
        original = search_original(question, index, budget, k,  # each search once, merged three ways
                                   names_a_version(sk.constraints, index.config, question))
        steps = run_plan(plan, index, lexicon, step_depth(k, budget))
        one = merge_parts(question, [original], index, budget, merge, rerank)
        split = merge_parts(question, steps, index, budget, merge, rerank, fill=original)
        both = merge_parts(question, [original, *steps], index, budget, merge, rerank)
        need = needed_values(sk, split, lexicon)
        own = Retrieved([], steps, len(steps))  # the steps alone, without the whole question's top-up
        answerable = (parts_find_evidence(own, floor) and finds_answer(original, own, split_floor)  # no search: first
                      and has_evidence(need, whole_question_probe(question, own, index), floor))
        if not answerable:
            need = set()  # the corpus holds no answer: every route covers the same (nothing)
            unanswered += 1
        targets = part_targets(need, split, evidence_depth(budget, len(plan.steps)), margin)
        # a plan no step of which filters (names, a title chain) finds its parts by its steps, whatever values
        # the question names: no filtered step holds the evidence of a value
        unfiltered = not any(p.filters for p in steps)
        parts = (step_targets(steps, index, evidence_depth(budget, len(plan.steps)), margin)
                 if answerable and (not need or unfiltered) and len(plan.steps) >= 2 else [])
        refused += any(p.error for p in split.parts)
        for name, run in (("one_search", one), ("split", split), ("split_original", both)):
            cov[name] += step_coverage(parts, run) if parts else facet_coverage(need, run, targets, index.config)
            evidence |= {h.id for p in run.parts for h in p.hits}
            searches[name] += run.searches
        kept += all(c in split.context for c in original_top(one, budget, len(plan.steps)))
    n = max(len(samples), 1)
    cov = {r: round(v / n, 4) for r, v in cov.items()}
    searches = {r: round(v / n, 3) for r, v in searches.items()}
    top_kept = kept / n
    if cov["one_search"] >= max(cov["split"], cov["split_original"]) - 1e-9:
        route = "one_search"
    elif top_kept < 0.5 and cov["split_original"] >= cov["split"] - 1e-9:
        route = "split_original"  # the whole question's best chunks (its share of the budget) are outside the parts
    else:
        route = "split" if cov["split"] >= cov["split_original"] else "split_original"
    return ShapeEvaluation(route, len(samples), cov, searches, round(top_kept, 3), refused, unanswered, evidence, vocab)


def _question_text(sk: Skeleton) -> str:
    """A question rebuilt from the skeleton and its values: lexicon text only, never raw user text."""
    return fill_skeleton(sk.text, sk.slots)
