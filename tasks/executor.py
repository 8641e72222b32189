"""Run a plan against the index: each step as soon as its own dependencies are done; merge by part."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from schemas.answers import ExtractRefused, extract_name, extract_titles, extract_value
from schemas.config import Config
from schemas.constraint import Constraint
from schemas.entity import entity_spans, title_forms
from schemas.extract import Lexicon
from schemas.plan import Extract, Plan, Step, fill_step_slot, step_slots, validate_plan
from schemas.scope import scope_trace
from schemas.text import fold_cased
from tasks.index.store import Hit, Index, rank_fusion


@dataclass
class StepResult:
    id: str
    query: str
    filters: dict[str, str]
    hits: list[Hit] = field(default_factory=list)
    answer: str | None = None
    answer_facet: str | None = None
    answer_kind: str | None = None  # what the step extracts: "facet" (answer_facet's value), "name", "title" or none
    error: str | None = None
    scope: dict[str, Any] = field(default_factory=dict)  # which chunk answered: local or company-wide (scope_trace)
    titles: list[str] = field(default_factory=list)  # the corpus titles a title step read (its answer joins them)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "query": self.query, "filters": self.filters, "answer": self.answer,
                "error": self.error, "hits": [h.id for h in self.hits], **({"scope": self.scope} if self.scope else {})}


def run_plan(plan: Plan, index: Index, lexicon: Lexicon, k: int, max_steps: int = 32) -> list[StepResult]:
    """Execute; a step whose input was refused is reported with an error and no hits (fail soft). A refused
    name leaves its slot empty: the step still searches the rest of its query. A step that extracts searches
    at least as deep as its extraction looks."""
    order = validate_plan(plan, max_steps=max_steps, facets={f: set() for f in index.config.facet_names})
    steps = {s.id: s for s in plan.steps}
    futures: dict[str, Future[StepResult]] = {}

    def run(step_id: str) -> StepResult:
        step = steps[step_id]
        answers: dict[str, str] = {}
        titles: list[str] = []  # the titles its query holds from a title step: named things, whatever their words
        used = step_slots(step.query + " " + " ".join(step.filters.values()))
        for dep in step.depends_on:
            res = futures[dep].result()
            if dep not in used:  # waited for, not read: order only
                continue
            titles += res.titles
            if res.answer is None and _extracts_name(steps[dep]):
                answers[dep] = ""
            elif res.answer is None:
                return StepResult(step.id, step.query, step.filters,
                                  error=f"input {dep} has no value ({res.error or 'not extracted'})")
            else:
                answers[dep] = res.answer
        query = " ".join(fill_step_slot(step.query, answers).split())
        filters = {f: fill_step_slot(v, answers) for f, v in step.filters.items()}
        ex = step.extract
        result = StepResult(step.id, query, filters, index.search(query, max(k, ex.top if ex else 0), filters))
        named = query_names(query, lexicon)  # read once: the title extraction and the step's part both use it
        if ex is not None:
            result.answer_facet, result.answer_kind = ex.facet, ex.kind
            try:  # a title is read off the page of what the query names, where the search found it
                if ex.kind == "title":
                    result.titles = extract_titles(pages_first(result.hits, query, lexicon, named), ex.top, query,
                                                   lexicon.known_names)
                    result.answer = " and ".join(result.titles)
                else:
                    result.answer = _extract(ex, result.hits, query, lexicon)
            except ExtractRefused as exc:
                result.error = str(exc)
            result.hits = result.hits[:k]  # it searched deeper to extract; its part is k deep, as others' are
        result.hits = named_pages(result.hits, query, filters, lexicon, titles, named)
        result.scope = scope_trace(result.hits, filters, index.config)
        return result

    with ThreadPoolExecutor(max_workers=max(1, min(8, len(order)))) as pool:
        for sid in order:  # dependencies first, so a step's inputs already have futures
            futures[sid] = pool.submit(run, sid)
        return [futures[s.id].result() for s in plan.steps]


def named_pages(hits: list[Hit], query: str, filters: dict[str, str], lexicon: Lexicon,
                titles: Sequence[str] = (), named: set[str] | None = None) -> list[Hit]:
    """A step's part where the corpus's titles are read as names (`entity_slots`): a step searches for one thing
    (a name of the question, the title a chain read, what a question describes), so it brings the chunks of the
    documents titled by what its query names, in rank order, else its best chunk; the context is topped up from
    the whole question's search (`retrieve`), whose chunks are more about the question than a step's further
    down. A step under a category filter (an office) gathers that value's chunks: all of them, as without titles.
    What the query names is read as a question's names are (`entity_spans`, case aside for a title), and a title
    as a page writes it (`KnownNames.mentions`), and `titles`, those a title step read into the query, as they
    are ("Neighbours", a title of a common word that no name reader takes). The route measure judges a step by
    the part it brings. `named`: `query_names(query, lexicon)`, where the caller has read it already."""
    if not lexicon.known_names or any(lexicon.kinds.get(f) == "category" for f in filters):
        return hits
    named = query_names(query, lexicon) if named is None else named
    return _pages(hits, named | {fold_cased(t).casefold() for t in titles}) or hits[:1]


def pages_first(hits: list[Hit], query: str, lexicon: Lexicon, named: set[str] | None = None) -> list[Hit]:
    """The hits with the chunks of the documents titled by what the query names first, each group in rank order."""
    pages = _pages(hits, query_names(query, lexicon) if named is None else named)
    taken = {h.id for h in pages}
    return pages + [h for h in hits if h.id not in taken]


def query_names(query: str, lexicon: Lexicon) -> set[str]:
    """What a query names, folded as titles are (`title_forms`): its names (`entity_spans`) and the corpus titles
    it writes (`KnownNames.mentions`); empty for a corpus whose titles are not read as names."""
    names = lexicon.known_names
    if not names:
        return set()
    named = {fold_cased(query[s:e]).casefold() for s, e in entity_spans(query, lexicon.plain, names)}
    return named | {fold_cased(m).casefold() for m in names.mentions(query)}


def _pages(hits: list[Hit], named: set[str]) -> list[Hit]:
    """The chunks of the documents titled by one of `named` (`named_pages`), in rank order."""
    return [h for h in hits if h.title is not None and title_forms(h.title) & named] if named else []


def _extracts_name(step: Step) -> bool:
    """Whether the step extracts query text (a name or a title), which a refusal leaves empty."""
    return step.extract is not None and step.extract.kind in ("name", "title")


def _extract(ex: Extract, hits: list[Hit], query: str, lexicon: Lexicon) -> str:
    if ex.kind == "name":
        return extract_name(hits, ex.top, query)
    return extract_value(hits, ex.facet or "", ex.top, lexicon)


def round_robin(lists: list[list[str]], budget: int) -> list[str]:
    """Rank 1 of every part, then rank 2, ... skipping duplicates, until the budget is spent."""
    picked: list[str] = []
    for rank in range(max((len(x) for x in lists), default=0)):
        for hits in lists:
            if rank < len(hits) and hits[rank] not in picked:
                picked.append(hits[rank])
                if len(picked) == budget:
                    return picked
    return picked


def best_score(lists: list[list[tuple[str, float]]], budget: int) -> list[str]:
    """Union of the parts, each chunk at its best score (no quota: a part can be crowded out)."""
    best: dict[str, float] = {}
    for hits in lists:
        for cid, score in hits:
            best[cid] = max(score, best.get(cid, -1.0))
    return sorted(best, key=lambda c: (-best[c], c))[:budget]


def reciprocal_rank(lists: list[list[tuple[str, float]]], budget: int) -> list[str]:
    """Reciprocal rank fusion over the parts' ranked lists."""
    return rank_fusion([[cid for cid, _ in hits] for hits in lists])[:budget]


MERGES: dict[str, Callable[[list[list[tuple[str, float]]], int], list[str]]] = {
    "round_robin": lambda lists, budget: round_robin([[c for c, _ in hits] for hits in lists], budget),
    "max": best_score,
    "rrf": reciprocal_rank,
}


@dataclass
class Retrieved:
    context: list[str]
    parts: list[StepResult]
    searches: int

    def hits_by_id(self) -> dict[str, Hit]:
        return {h.id: h for p in self.parts for h in p.hits}


def reranked(hits: list[Hit], question: np.ndarray) -> list[tuple[str, float]]:
    """A part's chunks ordered by cosine similarity to the original question (ties keep the part's order)."""
    scored = [(h.id, float(h.vector @ question) if h.vector is not None else h.score) for h in hits]
    return sorted(scored, key=lambda x: -x[1])


def retrieve(question: str, plan: Plan | None, index: Index, lexicon: Lexicon, budget: int, k: int,
             keep_original: bool, merge: str = "round_robin", rerank: bool = False) -> Retrieved:
    """One search when there is no plan; else the plan's parts (plus the original question) merged by part.
    A plan whose parts leave the context short of the budget is topped up from the whole question's search.

    `rerank`: within each step's part, the chunks are ordered against the original question before the merge
    (the part still keeps its quota under round robin)."""
    parts: list[StepResult] = []
    versions = names_a_version(lexicon.extract(question), index.config, question)
    if plan is None or keep_original:
        parts.append(search_original(question, index, budget, k, versions))
    if plan is not None:
        parts += run_plan(plan, index, lexicon, step_depth(k, budget))
    got = merge_parts(question, parts, index, budget, merge, rerank)
    if plan is not None and not keep_original and len(got.context) < budget:
        got = merge_parts(question, parts, index, budget, merge, rerank,
                          fill=search_original(question, index, budget, k, versions))
    return got


_YEAR_WRITTEN = re.compile(r"(?<![\w.,])(?:19|20)[0-9]{2}(?![\w.,])")  # "2025", not "12025" nor "2,025"


def names_a_version(constraints: Iterable[Constraint], config: Config, question: str = "") -> bool:
    """Whether a question names a year, a date or a value of a version facet (a release): then its whole-question
    search reads every version (the one in force then may be superseded now); else only the current ones, as a
    step with no such filter does. Where no facet reads years, a year written in the `question` names one too
    ("the row quota before June 2025")."""
    dated = {f.name for f in config.facets if f.kind in ("year", "date") or f.version}
    if any(c.facet in dated for c in constraints):
        return True
    reads_years = any(f.kind in ("year", "date") for f in config.facets)
    return not reads_years and _YEAR_WRITTEN.search(question) is not None


def step_depth(k: int, budget: int) -> int:
    """Chunks a plan step searches: at least the budget, so the merge can fill the context from the parts
    (a split of two steps of 4 chunks would leave a budget of 10 short); the search costs the same. A step about
    a named thing brings fewer (`named_pages`): the whole question's search tops the context up."""
    return max(k, budget)


def search_original(question: str, index: Index, budget: int, k: int, all_versions: bool = False) -> StepResult:
    """The original question as one more part: top max(k, budget) of the current versions, or of every version
    (`names_a_version`)."""
    return StepResult("original", question, {}, index.search(question, step_depth(k, budget),
                                                              all_versions=all_versions))


def merge_parts(question: str, parts: list[StepResult], index: Index, budget: int, merge: str = "round_robin",
                rerank: bool = False, fill: StepResult | None = None) -> Retrieved:
    """The context from parts already searched (see `retrieve`); a plan's parts can be merged several ways
    without searching again. `fill`: the whole question's search, whose best chunks top up a context the parts
    leave short of the budget (steps under narrow filters can find fewer chunks than their share, and a step about a
    named thing brings its page alone: `named_pages`); it counts as a search only then, as only then is it run
    (`retrieve`)."""
    lists = [[(h.id, h.score) for h in p.hits] for p in parts]
    if rerank and any(p.id != "original" for p in parts):
        qv = index.embedder.encode_one(question)
        lists = [ranked if p.id == "original" else reranked(p.hits, qv) for p, ranked in zip(parts, lists, strict=True)]
    context = MERGES[merge](lists, budget)
    if fill is None or len(context) >= budget:
        return Retrieved(context, parts, len(parts))
    more = [h.id for h in fill.hits if h.id not in context][:budget - len(context)]
    return Retrieved(context + more, [*parts, fill], len(parts) + 1)
