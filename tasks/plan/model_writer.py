"""Model writers: vLLM offline (one batch, structured outputs) or any OpenAI-compatible endpoint.

Prompts hold only skeletons, the lexicon and the rules; never raw user text. Whatever a model writes is
parsed, validated and checked; a failure gets one re-plan with the complaint, then the rule writer.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.states import State
from prefect.tasks import exponential_backoff
from pydantic import ValidationError

from schemas.config import Config
from schemas.digest import fingerprint
from schemas.errors import ConfigError, InputError, ModelServerRefused
from schemas.plan import Plan, PlanError, plan_json_schema

SKELETON_LINE = "Skeleton: "
# Output tokens allowed per prompt: the widest plan a shape can need, counted, times this margin
TOKEN_MARGIN = 1.5

RULES = """You write retrieval plans for recurring question shapes over a document index.
A shape is a question skeleton whose constraint values are placeholders: {office_1} is the first office
named, {year_1} the first year. Return JSON for a plan: steps s1, s2, ... Each step is one search.
- Split only when the shape has parts that can each be answered on its own (a comparison, separate years).
  Otherwise return one step whose query is the skeleton.
- Put each part's constraint slot in the step's filters ({"office": "{office_1}"}); text in a query is
  not a filter. Keep every slot of the skeleton in some step; add no value that the skeleton lacks.
- If a step needs a value only another step's evidence can supply, list that step in depends_on, give the
  earlier step "extract": {"kind": "facet", "facet": ..., "top": 1}, and write {s1} where the value goes.
  If the question asks for a company or person it does not name, an earlier step can search the whole
  skeleton with "extract": {"kind": "name", "facet": null, "top": 10}; a name fills query text only, never
  a filter. Never fill such a value in yourself.
- At most MAX_STEPS steps. Queries are short search phrases in the skeleton's own words, lexicon terms and
  slots; no other words, no instructions, no URLs. Each reads as a question or keyword query a person would
  write: no word left dangling where a part was cut out ("when did invade the"), no "this year" in a step
  whose filter holds the year.
Facets and their known values: LEXICON"""


# With `entity_slots`, names are slots too (schemas/entity.py)
ENTITY_RULE = """
{entity_1}, {entity_2}, ... are the names the question is about (a person, a work, a place, an organisation):
they go in query text, never in filters. A question about two or more names may search each name with the words
of the question it needs ("{entity_1} nationality"). A question that describes a thing through one it names
("the film that was shot in {entity_1}") can chain: s1 searches the skeleton with "extract": {"kind": "title",
"facet": null, "top": 1} (the corpus title the named thing's page writes), s2 searches "{s1}" with the words of
what it asks."""

EXCERPT_CHARS = 300


def excerpt(text: str) -> str:
    """A chunk text as a prompt shows it: whitespace collapsed, cut at a word boundary."""
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[:EXCERPT_CHARS].rsplit(" ", 1)[0]


def build_messages(skeleton: str, shape_type: str, config: Config, known: dict[str, list[str]],
                   complaint: str = "", excerpts: dict[str, list[str]] | None = None,
                   slot_types: str | None = None) -> list[dict[str, str]]:
    """Chat messages for one shape: the rules and lexicon, then the skeleton (and a complaint on re-plan).

    `excerpts`: for each facet value the shape's questions name, a few chunk texts of that partition (corpus
    text, never user text), so that each part's query can use the words its partition is written in.
    `slot_types`: the shape's entity slots' types, as JSON (`schemas.entity_types.slot_types`)."""
    lexicon = "; ".join(f"{f.name} ({f.kind}): " + (", ".join(sorted(known.get(f.name, []))[:40]) or "any")
                        for f in config.facets)
    system = RULES.replace("MAX_STEPS", str(config.planning.max_steps)).replace("LEXICON", lexicon)
    if config.entity_slots:
        system += ENTITY_RULE
    user = f"Shape type: {shape_type}\n{SKELETON_LINE}{skeleton}"
    if slot_types:
        typed = sorted(json.loads(slot_types).items())
        user += "\nWhat the names are: " + ", ".join(
            f"{{{slot}}} {'an' if kind[0] in 'aeiou' else 'a'} {kind}" for slot, kind in typed)
    if excerpts:
        user += ("\nThe documents of each value word things their own way. Excerpts (corpus text); where a part's "
                 "documents use another word for a term of the skeleton, its query may use that word:")
        for value, texts in sorted(excerpts.items()):
            user += "".join(f"\n[{value}] {excerpt(t)}" for t in texts)
    if complaint:
        user += f"\nYour previous plan was rejected: {complaint}. Write a corrected plan."
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def prompt_hash(messages: list[dict[str, str]]) -> str:
    return fingerprint(messages)


@dataclass(frozen=True)
class Completion:
    """A model's answer to one prompt: its text, why it stopped ("length": cut off at the token limit) and the
    tokens it wrote (0 when the server does not say)."""

    text: str
    finish_reason: str | None = None
    tokens: int = 0


def parse_plan(text: str) -> Plan:
    """The model's JSON as a Plan; PlanError "invalid_json" when it is no JSON, "schema" when no plan."""
    if not text.strip():
        raise PlanError("invalid_json", "the model wrote nothing")
    try:
        return Plan.model_validate_json(text)
    except ValidationError as exc:
        error = exc.errors()[0]
        if error["type"] == "json_invalid":
            raise PlanError("invalid_json", f"model output is not JSON: {error['msg']}") from None
        raise PlanError("schema", f"model output is not a plan: {error['msg']}") from None


def parse_completion(done: Completion) -> Plan:
    """A completion as a Plan; one cut off by the token limit is PlanError "truncated", not broken JSON."""
    if done.finish_reason == "length":
        raise PlanError("truncated", f"cut off at the output token limit ({done.tokens} tokens written)")
    return parse_plan(done.text)


def widest_plan(skeleton: str, facets: Sequence[str], max_steps: int) -> str:
    """The longest plan a shape can need, as the grammar without free whitespace writes it (", " and ": "
    between items): `max_steps` steps, each querying the whole skeleton,
    every filter a slot, an extract, and every earlier step (up to the schema's cap) as a dependency."""
    steps = [{"id": f"s{i}", "query": skeleton,
              "depends_on": [f"s{j}" for j in range(1, i)][:max_steps - 1],
              "filters": {f: f"{{{f}_1}}" for f in facets},
              "extract": {"kind": "facet", "facet": facets[0] if facets else None, "top": 10}}
             for i in range(1, max_steps + 1)]
    return json.dumps({"steps": steps, "keep_original": False})


def token_limit(messages: list[dict[str, str]], facets: Sequence[str], max_steps: int,
                count: Callable[[str], int]) -> int:
    """Output tokens for one prompt: `count` (the model's tokenizer) of the shape's widest plan, with margin.
    The grammar allows no free whitespace, so a sound plan stays under it; one that does not is "truncated"."""
    user = messages[-1]["content"]
    skeleton = next((line[len(SKELETON_LINE):] for line in user.splitlines() if line.startswith(SKELETON_LINE)),
                    user)
    return math.ceil(count(widest_plan(skeleton, facets, max_steps)) * TOKEN_MARGIN)


Generate = Callable[[list[list[dict[str, str]]]], list[Completion]]


@dataclass
class WriteOutcome:
    plan: Plan | None
    attempts: int
    complaints: list[str] = field(default_factory=list)  # each "kind: detail", one per rejected output
    prompt_hash: str = ""

    @property
    def rejections(self) -> list[str]:
        """The kind of each rejected output ("invalid_json", "cycle", ...), for the per-kind counts."""
        return [c.split(":", 1)[0] for c in self.complaints]


def write_batch(shapes: Sequence[dict[str, Any]], config: Config, known: dict[str, list[str]], generate: Generate,
                accept: Callable[[dict[str, Any], Plan], str]) -> list[WriteOutcome]:
    """All shapes in one batch; rejected ones get one re-plan batch with their complaint.

    `accept(shape, plan)` returns "" for a sound plan or the complaint, "kind: detail" (the kind a stable code
    like PlanError's reason, counted per kind in the report). A shape whose second plan also fails
    comes back with plan None: the caller falls back to the rule writer and counts it; so does every pending
    shape when `generate` fails (a server error after its retries, a model that cannot load or run).
    """
    outcomes = [WriteOutcome(None, 0) for _ in shapes]
    pending = list(range(len(shapes)))
    for _attempt in range(2):
        if not pending:
            break
        msgs = [build_messages(shapes[i]["skeleton"], shapes[i]["type"], config, known,
                               outcomes[i].complaints[-1] if outcomes[i].complaints else "",
                               shapes[i].get("excerpts"), shapes[i].get("slot_types")) for i in pending]
        try:
            answers = generate(msgs)
        except Exception as exc:  # noqa: BLE001 - any model or server failure: the rule writer takes over
            if (status := refused_status(exc)) is not None:  # but a refused key: the config is wrong
                p = config.planning
                raise ModelServerRefused(p.openai_base_url, status, p.openai_api_key_env) from None
            for i, m in zip(pending, msgs, strict=True):
                outcomes[i].attempts += 1
                outcomes[i].prompt_hash = prompt_hash(m)
                outcomes[i].complaints.append(f"server_error: {type(exc).__name__}: {exc}"[:500])
            break
        still = []
        for i, m, answer in zip(pending, msgs, answers, strict=True):
            out = outcomes[i]
            out.attempts += 1
            out.prompt_hash = prompt_hash(m)
            try:
                plan = parse_completion(answer)
                complaint = accept(shapes[i], plan)
            except PlanError as exc:
                complaint = str(exc)  # "reason: message"
            if complaint:
                out.complaints.append(complaint)
                still.append(i)
            else:
                out.plan = plan
        pending = still
    return outcomes


def vllm_generator(config: Config) -> Generate:
    """vLLM's offline engine with structured outputs (the API since vLLM 0.12); needs a GPU. The engine loads on
    the first batch, so a run with no shape to write never loads the model."""
    from vllm import LLM, SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    p = config.planning
    structured = StructuredOutputsParams(json=plan_json_schema(config.facet_names, p.max_steps),
                                         disable_any_whitespace=True)
    engine: list[Any] = []

    def generate(batch: list[list[dict[str, str]]]) -> list[Completion]:
        if not engine:
            engine.append(LLM(model=p.model, tensor_parallel_size=p.tensor_parallel_size,
                              gpu_memory_utilization=p.gpu_memory_utilization))
        llm = engine[0]
        tokenizer = llm.get_tokenizer()

        def count(text: str) -> int:
            return len(tokenizer.encode(text, add_special_tokens=False))

        params = [SamplingParams(temperature=0.0, structured_outputs=structured,
                                 max_tokens=token_limit(m, config.facet_names, p.max_steps, count)) for m in batch]
        outputs = llm.chat(batch, params)
        return [Completion(o.outputs[0].text, o.outputs[0].finish_reason, len(o.outputs[0].token_ids))
                for o in outputs]

    return generate


VLLM_MISSING = ("writer 'vllm' needs the 'gpu' set-up (scripts/setup.sh --gpu: vLLM on its CUDA build of torch) "
                "and a CUDA GPU; or use --writer rules or --writer openai")


def check_model(config: Config, writer: str) -> None:
    """Refuse, before any work, a model writer the config cannot run: `planning.model` empty, neither a local
    model folder nor a model id, or (vLLM) no vLLM, no GPU torch can use, or fewer GPUs than
    `planning.tensor_parallel_size`. Each message names the config line and the fix."""
    if writer == "rules":
        return
    p = config.planning
    where = config.place(["planning", "model"])
    if not p.model.strip():
        raise ConfigError(f"{where}: planning.model is empty, and writer '{writer}' needs a model: set it to a "
                          "local model folder or a model id (Qwen/Qwen3-8B), or use --writer rules")
    if writer != "vllm":
        return
    folder = Path(p.model).expanduser()
    if folder.exists() or p.model.startswith(("/", ".", "~")):
        if not (folder / "config.json").is_file():
            raise ConfigError(f"{where}: planning.model {p.model!r} is no model folder (no config.json there); "
                              "point it at a downloaded model's folder, or give a model id")
    else:
        from huggingface_hub.utils import HFValidationError, validate_repo_id

        try:
            validate_repo_id(p.model)
        except HFValidationError as exc:
            raise ConfigError(f"{where}: planning.model {p.model!r} is neither a folder nor a model id ({exc}); "
                              "give an existing folder or an id such as Qwen/Qwen3-8B") from None
    if importlib.util.find_spec("vllm") is None:
        raise ConfigError(VLLM_MISSING)
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if not gpus:
        build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU build"
        raise ConfigError(f"writer 'vllm': torch {torch.__version__} ({build}) sees no CUDA GPU; run on a GPU machine "
                          f"set up with scripts/setup.sh --gpu, or use --writer rules or --writer openai")
    if p.tensor_parallel_size > gpus:
        raise ConfigError(f"{config.place(['planning', 'tensor_parallel_size'])}: planning.tensor_parallel_size "
                          f"is {p.tensor_parallel_size} but torch sees {gpus} GPU(s); set it to at most {gpus}")


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: the server was unreachable or timed out, rate-limited (429) or failed (5xx)."""
    if isinstance(exc, httpx.TransportError):
        return True
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code in (408, 429) or exc.response.status_code >= 500
    return False


def _retry_if_transient(task: Any, task_run: Any, state: State[Any]) -> bool:
    try:
        state.result()
    except Exception as exc:  # noqa: BLE001 - the failed run's own exception, classified here
        return is_transient(exc)
    return False


# Not cached: a model server's answer is I/O, not a function of the request alone.
@task(name="chat-completion", cache_policy=NO_CACHE, retries=3, retry_delay_seconds=exponential_backoff(1),
      retry_condition_fn=_retry_if_transient)
def chat_completion(base_url: str, body: dict[str, Any], api_key_env: str) -> Completion:
    """One chat request to an OpenAI-compatible endpoint; transient failures retry after 1, 2, 4 s."""
    r = httpx.post(f"{base_url.rstrip('/')}/chat/completions", json=body, headers=_auth(api_key_env), timeout=120)
    r.raise_for_status()
    answer = r.json()
    choice = answer["choices"][0]
    return Completion(choice["message"].get("content") or "", choice.get("finish_reason"),
                      int((answer.get("usage") or {}).get("completion_tokens") or 0))




def refused_status(exc: BaseException) -> int | None:
    """401 or 403 when `exc` is the server refusing the API key, else None."""
    if isinstance(exc, httpx.HTTPStatusError) and exc.response.status_code in (401, 403):
        return exc.response.status_code
    return None


def _auth(api_key_env: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {os.environ.get(api_key_env, 'none')}"}


def check_server(base_url: str, api_key_env: str = "OPENAI_API_KEY", timeout: float = 5.0) -> None:
    """Refuse, before any work, a model server that does not answer, or refuses the API key: else every shape
    would wait out its retries and fall back to the rule writer. Any other HTTP answer (even 404 for /models)
    means it is up."""
    try:
        r = httpx.get(f"{base_url.rstrip('/')}/models", headers=_auth(api_key_env), timeout=timeout)
    except httpx.TransportError as exc:
        raise InputError(f"{base_url}: the model server did not answer ({exc.__class__.__name__}: {exc}); start "
                         "it, check planning.openai_base_url, or use --writer rules") from None
    if r.status_code in (401, 403):
        raise ModelServerRefused(base_url, r.status_code, api_key_env)


def openai_generator(config: Config) -> Generate:
    """Any OpenAI-compatible chat endpoint (vLLM's server included), with a JSON-schema response format."""
    p = config.planning
    schema = plan_json_schema(config.facet_names, p.max_steps)

    def one(messages: list[dict[str, str]]) -> Completion:
        # No tokenizer here: a character per token bounds ordinary text's tokens from above
        body = {"model": p.model, "messages": messages, "temperature": 0,
                "max_tokens": token_limit(messages, config.facet_names, p.max_steps, len),
                "response_format": {"type": "json_schema",
                                    "json_schema": {"name": "plan", "schema": schema, "strict": True}}}
        return chat_completion(p.openai_base_url, body, p.openai_api_key_env)

    return lambda batch: [one(m) for m in batch]
