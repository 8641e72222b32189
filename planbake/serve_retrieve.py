"""Retrieve for the server, fail-soft per step: a search that raises or passes its timeout leaves its part not
covered (with the reason) and the other parts in the answer."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, cast

from schemas.cache import LookupResult, PlanCache
from schemas.plan import Plan
from tasks.executor import retrieve
from tasks.index.store import Index

# searches run here, so a caller can stop waiting for one; a search past its timeout runs on to its end unread
_SEARCHES = ThreadPoolExecutor(max_workers=8, thread_name_prefix="planbake-search")


class SoftIndex:
    """An index whose `search` returns no hits, instead of raising, when the search fails or is late; each failure
    is kept by its query and filters, so the step that searched is reported not covered with the reason."""

    def __init__(self, index: Index, timeout_s: float) -> None:
        self._index, self._timeout = index, timeout_s
        self.failed: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def search(self, query: Any, k: int = 5, filters: dict[str, str] | None = None, **kw: Any) -> list[Any]:
        key = (str(query), tuple(sorted((filters or {}).items())))
        future = _SEARCHES.submit(self._index.search, query, k, filters, **kw)
        try:
            return future.result(timeout=self._timeout)
        except FutureTimeout:
            self.failed[key] = f"search timed out after {self._timeout:g} s"
        except Exception as exc:  # fail soft: any search failure is this part's, not the answer's
            self.failed[key] = f"search failed: {type(exc).__name__}: {exc}"
        return []

    def failure(self, query: str, filters: dict[str, str]) -> str | None:
        return self.failed.get((query, tuple(sorted(filters.items()))))


def serve_retrieve(cache: PlanCache, index: Index, res: LookupResult, question: str, budget: int | None,
                   step_timeout_s: float) -> dict[str, Any]:
    """The lookup's plan run against the published index: context by part, and each part not covered with why."""
    cfg = cache.lexicon.config
    soft = SoftIndex(index, step_timeout_s)
    plan = Plan.model_validate(res.plan) if res.plan else None
    keep = bool(res.plan and res.plan.get("keep_original"))
    asked = res.resolved or question  # a follow-up searches as the standalone question it resolved to
    got = retrieve(asked, plan, cast(Index, soft), cache.lexicon, budget or cfg.planning.budget,
                   cfg.planning.per_step_k, keep_original=keep, merge=cfg.planning.merge, rerank=cfg.planning.rerank)
    hits = got.hits_by_id()
    parts, not_covered = [], []
    for p in got.parts:
        failed = soft.failure(p.query, p.filters)
        if failed is not None:
            p.error = failed
        context = [c for c in got.context if c in {h.id for h in p.hits}]
        parts.append({**p.to_json(), "context": context, "covered": p.error is None and bool(p.hits)})
        if p.error is not None or not p.hits:
            not_covered.append({"part": p.id, "query": p.query, "reason": p.error or "no chunk found"})
    return {"context": [hits[c].to_json() for c in got.context], "parts": parts, "not_covered": not_covered,
            "searches": got.searches}
