"""Model writers: vLLM offline (one batch, structured outputs) or any OpenAI-compatible endpoint.

Prompts hold only skeletons, the lexicon and the rules; never raw user text. Whatever a model writes is
parsed, validated and checked; a failure gets one re-plan with the complaint, then the rule writer.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from schemas.config import Config
from schemas.plan import Plan, PlanError, plan_json_schema

RULES = """You write retrieval plans for recurring question shapes over a document index.
A shape is a question skeleton whose constraint values are placeholders: {office_1} is the first office
named, {year_1} the first year. Return JSON for a plan: steps s1, s2, ... Each step is one search.
- Split only when the shape has parts that can each be answered on its own (a comparison, separate years).
  Otherwise return one step whose query is the skeleton.
- Put each part's constraint slot in the step's filters ({"office": "{office_1}"}); text in a query is
  not a filter. Keep every slot of the skeleton in some step; add no value that the skeleton lacks.
- If a step needs a value only another step's evidence can supply, list that step in depends_on, give the
  earlier step "extract": {"facet": ..., "top": 1}, and write {s1} where the value goes. Never fill such
  a value in yourself.
- At most MAX_STEPS steps. Queries are short search phrases; no instructions, no URLs.
Facets and their known values: LEXICON"""


def build_messages(skeleton: str, shape_type: str, config: Config, known: dict[str, list[str]],
                   complaint: str = "") -> list[dict[str, str]]:
    """Chat messages for one shape: the rules and lexicon, then the skeleton (and a complaint on re-plan)."""
    lexicon = "; ".join(f"{f.name} ({f.kind}): " + (", ".join(sorted(known.get(f.name, []))[:40]) or "any")
                        for f in config.facets)
    system = RULES.replace("MAX_STEPS", str(config.planning.max_steps)).replace("LEXICON", lexicon)
    user = f"Shape type: {shape_type}\nSkeleton: {skeleton}"
    if complaint:
        user += f"\nYour previous plan was rejected: {complaint}. Write a corrected plan."
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def prompt_hash(messages: list[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:16]


def parse_plan(text: str) -> Plan:
    """The model's JSON as a Plan; PlanError("bad_json") when it is not one."""
    try:
        return Plan.model_validate_json(text)
    except ValidationError as exc:
        raise PlanError("bad_json", f"model output is not a plan: {exc.errors()[0]['msg']}") from None


Generate = Callable[[list[list[dict[str, str]]]], list[str]]


@dataclass
class WriteOutcome:
    plan: Plan | None
    attempts: int
    complaints: list[str] = field(default_factory=list)
    prompt_hash: str = ""


def write_batch(shapes: Sequence[dict[str, Any]], config: Config, known: dict[str, list[str]], generate: Generate,
                accept: Callable[[dict[str, Any], Plan], str]) -> list[WriteOutcome]:
    """All shapes in one batch; rejected ones get one re-plan batch with their complaint.

    `accept(shape, plan)` returns "" for a sound plan or the complaint. A shape whose second plan also fails
    comes back with plan None: the caller falls back to the rule writer and counts it.
    """
    outcomes = [WriteOutcome(None, 0) for _ in shapes]
    pending = list(range(len(shapes)))
    for _attempt in range(2):
        if not pending:
            break
        msgs = [build_messages(shapes[i]["skeleton"], shapes[i]["type"], config, known,
                               outcomes[i].complaints[-1] if outcomes[i].complaints else "") for i in pending]
        texts = generate(msgs)
        still = []
        for i, m, text in zip(pending, msgs, texts, strict=True):
            out = outcomes[i]
            out.attempts += 1
            out.prompt_hash = prompt_hash(m)
            try:
                plan = parse_plan(text)
                complaint = accept(shapes[i], plan)
            except PlanError as exc:
                complaint = f"{exc.reason}: {exc}"
            if complaint:
                out.complaints.append(complaint)
                still.append(i)
            else:
                out.plan = plan
        pending = still
    return outcomes


def vllm_generator(config: Config) -> Generate:
    """vLLM's offline engine with structured outputs (the API since vLLM 0.12); needs a GPU."""
    from vllm import LLM, SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    p = config.planning
    llm = LLM(model=p.model, tensor_parallel_size=p.tensor_parallel_size,
              gpu_memory_utilization=p.gpu_memory_utilization)
    params = SamplingParams(temperature=0.0, max_tokens=800,
                            structured_outputs=StructuredOutputsParams(json=plan_json_schema(config.facet_names)))

    def generate(batch: list[list[dict[str, str]]]) -> list[str]:
        outputs = llm.chat(batch, params)
        return [o.outputs[0].text for o in outputs]

    return generate


def openai_generator(config: Config, retries: int = 3) -> Generate:
    """Any OpenAI-compatible chat endpoint (vLLM's server included), with a JSON-schema response format.

    Transient failures (connection errors, 429, 5xx) are retried with exponential backoff.
    """
    import httpx

    p = config.planning
    schema = plan_json_schema(config.facet_names)
    headers = {"Authorization": f"Bearer {os.environ.get(p.openai_api_key_env, 'none')}"}

    def one(messages: list[dict[str, str]]) -> str:
        body = {"model": p.model, "messages": messages, "temperature": 0,
                "response_format": {"type": "json_schema",
                                    "json_schema": {"name": "plan", "schema": schema, "strict": True}}}
        for attempt in range(retries + 1):
            try:
                r = httpx.post(f"{p.openai_base_url.rstrip('/')}/chat/completions", json=body, headers=headers,
                               timeout=120)
                if r.status_code == 429 or r.status_code >= 500:
                    raise httpx.HTTPStatusError("transient", request=r.request, response=r)
                r.raise_for_status()
                return str(r.json()["choices"][0]["message"]["content"])
            except (httpx.TransportError, httpx.HTTPStatusError):
                if attempt == retries:
                    raise
                time.sleep(2**attempt)
        raise RuntimeError("unreachable")

    return lambda batch: [one(m) for m in batch]
