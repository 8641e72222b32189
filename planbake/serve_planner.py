"""The optional online planner: a miss that needs a plan is planned at request time by an OpenAI-compatible
endpoint (`vllm serve`, ...) with the offline writer's prompt and JSON schema, then validated and checked as a
template is (`tasks.plan.check.check_template`). A bad, late or failing answer falls back to one search within the
latency budget. Online plans are never cached as templates; they are counted and logged."""

from __future__ import annotations

import logging
import os
import time
from datetime import date

import httpx

from schemas.cache import LookupResult, PlanCache
from schemas.plan import PlanError, fill_slots, plan_json_schema
from schemas.plan_view import PlanView
from tasks.plan.check import check_template
from tasks.plan.model_writer import Completion, build_messages, parse_completion, token_limit

BUDGET_S = 1.5
UNCLASSIFIED = "unclassified"  # a miss has no shape, so no type; the prompt says so
log = logging.getLogger("planbake.serve")


class OnlinePlanner:
    def __init__(self, base_url: str, model: str = "", budget_s: float = BUDGET_S,
                 api_key_env: str = "OPENAI_API_KEY") -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.budget_s, self.api_key_env = model, budget_s, api_key_env
        self._http = httpx.Client(timeout=httpx.Timeout(budget_s))

    def close(self) -> None:
        self._http.close()

    def plan(self, cache: PlanCache, res: LookupResult, question: str, when: date) -> tuple[LookupResult, str]:
        """The miss planned now, or sent to one search; and the outcome: planned, invalid, late or failed."""
        start = time.monotonic()
        config = cache.lexicon.config
        sk = cache.lexicon.skeleton(cache.scrub(res.resolved or question), when)
        shape = {"shape_id": "online", "skeleton": sk.text, "type": UNCLASSIFIED}
        known = {k: sorted(v) for k, v in cache.lexicon.known_values().items()}
        messages = build_messages(sk.text, UNCLASSIFIED, config, known)
        p = config.planning
        body = {"model": self.model or p.model, "messages": messages, "temperature": 0,
                "max_tokens": token_limit(messages, config.facet_names, p.max_steps, len),
                "response_format": {"type": "json_schema", "json_schema": {
                    "name": "plan", "schema": plan_json_schema(config.facet_names, p.max_steps), "strict": True}}}
        headers = {"Authorization": f"Bearer {os.environ.get(self.api_key_env, 'none')}"}
        try:
            r = self._http.post(self.url, json=body, headers=headers)
            r.raise_for_status()
            answer = r.json()
            choice = answer["choices"][0]
            done = Completion(choice["message"].get("content") or "", choice.get("finish_reason"))
        except httpx.TimeoutException:
            return _one_search(res, "late", f"no answer within {self.budget_s:g} s")
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            return _one_search(res, "failed", f"{type(exc).__name__}: {exc}"[:200])
        if time.monotonic() - start > self.budget_s:
            return _one_search(res, "late", f"answered after the budget of {self.budget_s:g} s")
        try:
            plan = parse_completion(done)
        except PlanError as exc:
            return _one_search(res, "invalid", str(exc))
        status = check_template(plan, shape, config, cache.lexicon, [sk])
        if not (status["valid"] and status["check_ok"]):
            return _one_search(res, "invalid", status["complaint"])
        doc = fill_slots(plan, sk.slots).model_dump(mode="json", exclude_defaults=True)
        res.plan, res.source = PlanView(doc), "online_planner"
        res.route = "split_original" if doc.get("keep_original") else "split"
        res.reason = f"{res.reason}; planned online"
        res.where = cache.step_wheres(doc["steps"])
        log.info("online plan for skeleton %r: %d steps", sk.text, len(doc["steps"]))
        return res, "planned"


def _one_search(res: LookupResult, outcome: str, why: str) -> tuple[LookupResult, str]:
    res.route, res.plan, res.where = "one_search", None, {}
    res.reason = f"{res.reason}; online planner {outcome} ({why}): one search"
    log.info("online planner %s, one search: %s", outcome, why)
    return res, outcome
