"""Plans: steps with filters and slots, their JSON schema, validation (Move 3), the constraint check
(Move 5) and slot filling (Move 2).

A template holds constraint slots (`{office_1}`: the first office of the question in slot order) and
step-answer slots (`{s1}`: filled from s1's evidence by code, never by a writer). A plan is a template
whose constraint slots are filled.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from typing import Any, Literal, TypedDict, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from schemas import instruction
from schemas.constraint import Constraint
from schemas.text import words

DEFAULT_FACETS: tuple[str, ...] = ("office", "year")
MAX_QUERY_CHARS = 1000
MAX_STEPS = 32  # planning.max_steps may not exceed it
MAX_FILTER_CHARS = 200  # a filter holds a slot or one facet value
MAX_EXTRACT_TOP = 50

STEP_SLOT = re.compile(r"\{(s\d+)\}")
CONSTRAINT_SLOT = re.compile(r"\{([a-z_]+)_(\d+)\}")
STEP_ID = re.compile(r"s\d+")

URL = re.compile(r"\bhttps?://|\bwww\.", re.IGNORECASE)  # a step searches the corpus, never the web

# Words a step query may use besides the shape's skeleton, the lexicon and slots (`check_words`): function
# words, and the rule writer's own phrasing ("where is the {event} held").
PLAN_WORDS = frozenset({
    "a", "an", "the", "of", "in", "on", "at", "for", "to", "from", "by", "with", "and", "or", "vs", "versus",
    "than", "between", "about", "per", "as", "into", "over", "under", "after", "before", "during", "since",
    "within", "without", "not", "no", "is", "are", "was", "were", "be", "been", "do", "does", "did", "can",
    "may", "must", "should", "will", "would", "have", "has", "had", "get", "gets", "i", "we", "you", "my",
    "our", "your", "their", "its", "it", "this", "that", "these", "those", "each", "every", "all", "any",
    "both", "other", "more", "most", "less", "many", "much", "what", "which", "who", "whom", "whose", "where",
    "when", "how", "why", "there", "here", "held",
})


class Extract(BaseModel):
    """How code extracts a step's answer for later steps from its top chunks: kind "facet", the one `facet`
    value they name (it can fill a later step's filter); kind "name", the name most of them share that the
    step's query does not hold (the unnamed company or person a question asks for; it fills query text only);
    kind "title", the one corpus title they write that the query does not (the page of the thing a question
    describes without naming it; query text only)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["facet", "name", "title"] = "facet"
    facet: str | None = None
    top: int = Field(default=3, ge=1)

    @model_validator(mode="after")
    def _facet_for_facet_kind(self) -> Extract:
        if self.kind == "facet" and not self.facet:
            raise ValueError("an extract of kind 'facet' names its facet")
        if self.kind != "facet":
            self.facet = None
        return self


class Step(BaseModel):
    """One search: a query (may hold slots), the steps it waits for, exact filters, optional extraction."""

    model_config = ConfigDict(extra="forbid")

    id: str
    query: str
    depends_on: list[str] = Field(default_factory=list)
    filters: dict[str, str] = Field(default_factory=dict)
    extract: Extract | None = None

    @field_validator("filters", mode="before")
    @classmethod
    def _drop_null_filters(cls, value: Any) -> Any:
        """Schema output lists every facet, null when unfiltered; a null filter is no filter."""
        if isinstance(value, Mapping):
            return {k: v for k, v in value.items() if v is not None}
        return value


class Plan(BaseModel):
    """A DAG of steps; `keep_original` also searches the original question as a part (Move 6)."""

    model_config = ConfigDict(extra="forbid")

    steps: list[Step]
    keep_original: bool = False


class ExtractDoc(TypedDict, total=False):
    """An `Extract` as JSON."""

    kind: Literal["facet", "name", "title"]
    facet: str | None
    top: int


class StepDoc(TypedDict, total=False):
    """A `Step` as JSON."""

    id: str
    query: str
    depends_on: list[str]
    filters: dict[str, str]
    extract: ExtractDoc | None


class PlanDoc(TypedDict, total=False):
    """A `Plan` as JSON (`plan_doc`; a field at its default may be left out): what a lookup returns, and
    `planbake lookup --json` prints, with `keep_original` always there."""

    steps: list[StepDoc]
    keep_original: bool


def plan_doc(plan: Plan, exclude_defaults: bool = True) -> PlanDoc:
    return cast(PlanDoc, plan.model_dump(exclude_defaults=exclude_defaults))


class PlanError(ValueError):
    """A plan rejected before it costs anything; `reason` is a stable code for counting failures."""

    def __init__(self, reason: str, message: str = "") -> None:
        super().__init__(f"{reason}: {message}" if message else reason)
        self.reason = reason


# --- JSON schema (structured outputs) ---------------------------------------------------------------


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def _closed(properties: dict[str, Any]) -> dict[str, Any]:
    """An object with every property required and no others."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def plan_json_schema(facets: Sequence[str] = DEFAULT_FACETS, max_steps: int = MAX_STEPS) -> dict[str, Any]:
    """JSON schema of a Plan for structured outputs: closed objects, all required, nullable if optional.

    Filters become one nullable string per facet (structured outputs reject open maps); `Step` drops
    the nulls on load. Every array and string is bounded (at most `max_steps` steps, MAX_QUERY_CHARS a query),
    so a plan the grammar allows fits the token limit the writer derives from them. Everything else semantic is
    `validate_plan`'s job.
    """
    step_id = {"type": "string", "pattern": r"^s[0-9]{1,2}$"}
    text = {"type": "string", "maxLength": MAX_FILTER_CHARS}
    extract = _closed({"kind": {"type": "string", "enum": ["facet", "name", "title"]},
                       "facet": _nullable({"type": "string", "enum": list(facets)}),
                       "top": {"type": "integer", "minimum": 1, "maximum": MAX_EXTRACT_TOP}})
    step = _closed(
        {
            "id": step_id,
            "query": {"type": "string", "maxLength": MAX_QUERY_CHARS},
            "depends_on": {"type": "array", "items": step_id, "maxItems": max_steps - 1},
            "filters": _closed({f: _nullable(text) for f in facets}),
            "extract": _nullable(extract),
        }
    )
    return _closed({"steps": {"type": "array", "items": step, "minItems": 1, "maxItems": max_steps},
                    "keep_original": {"type": "boolean"}})


PLAN_SCHEMA: dict[str, Any] = plan_json_schema()


# --- validation (Move 3) ----------------------------------------------------------------------------


def step_slots(text: str) -> set[str]:
    """Step ids used as `{sN}` slots in a text."""
    return set(STEP_SLOT.findall(text))


def constraint_slots(text: str) -> set[str]:
    """Constraint slot names (`office_1`) in a text."""
    return set(slot_names(text))


def slot_names(text: str) -> list[str]:
    """Constraint slot names in a text, in order, repeats kept."""
    return [f"{facet}_{pos}" for facet, pos in CONSTRAINT_SLOT.findall(text)]


def slots_by_facet(text: str) -> dict[str, list[str]]:
    """Constraint slot names in a text by facet, each facet's in order."""
    out: dict[str, list[str]] = {}
    for facet, pos in CONSTRAINT_SLOT.findall(text):
        out.setdefault(facet, []).append(f"{facet}_{pos}")
    return out


def _check_size_and_ids(plan: Plan, max_steps: int) -> list[str]:
    if not plan.steps:
        raise PlanError("empty", "a plan needs at least one step")
    if len(plan.steps) > max_steps:
        raise PlanError("too_many_steps", f"{len(plan.steps)} steps; allowed 1-{max_steps}")
    ids = [s.id for s in plan.steps]
    for sid in ids:
        if not STEP_ID.fullmatch(sid):
            raise PlanError("bad_id", f"step id {sid!r} is not s<number>")
    if len(set(ids)) != len(ids):
        raise PlanError("duplicate_id", f"duplicate step ids in {ids}")
    return ids


def _check_query(step: Step) -> None:
    if not step.query.strip():
        raise PlanError("empty", f"{step.id}: empty query")
    if len(step.query) > MAX_QUERY_CHARS:
        raise PlanError("instruction_text", f"{step.id}: query over {MAX_QUERY_CHARS} characters")
    if URL.search(step.query):
        raise PlanError("instruction_text", f"{step.id}: query holds a URL")
    if (verdict := instruction.score(step.query)).instruction:
        families = ", ".join(verdict.families)
        raise PlanError("instruction_text", f"{step.id}: query reads as instruction text ({families})")


def check_words(plan: Plan, vocabulary: Collection[str]) -> None:
    """Reject a step query with a word that is neither in `vocabulary` (the shape's skeleton and the lexicon,
    as `words` forms), nor in PLAN_WORDS, nor a slot or a number: a writer may rephrase a shape's own words,
    never carry text of its own (instructions, guesses, chatter) into a search."""
    for step in plan.steps:
        for word in words(step.query).split():
            if word in vocabulary or word in PLAN_WORDS or word.isdigit():
                continue
            if STEP_SLOT.fullmatch(word) or CONSTRAINT_SLOT.fullmatch(word):
                continue
            raise PlanError("unknown_words", f"{step.id}: query word {word!r} is not in the shape or the lexicon")


def _check_graph(plan: Plan, ids: list[str]) -> list[str]:
    """Known dependencies, slots only from listed dependencies, no cycles; returns an execution order."""
    known = set(ids)
    for step in plan.steps:
        unknown = set(step.depends_on) - known
        if unknown:
            raise PlanError("unknown_dependency", f"{step.id} depends on unknown steps {sorted(unknown)}")
        used = step_slots(step.query + " " + " ".join(step.filters.values()))
        if not used <= set(step.depends_on):
            missing = sorted(used - set(step.depends_on))
            raise PlanError("slot_not_in_depends_on", f"{step.id} uses {missing} without waiting for it")
    try:
        return list(TopologicalSorter({s.id: set(s.depends_on) for s in plan.steps}).static_order())
    except CycleError as e:
        raise PlanError("cycle", f"steps in a cycle: {e.args[1]}") from e


def _is_known_value(value: str, known: Collection[str]) -> bool:
    """An empty value set means an open facet (any literal value, e.g. years)."""
    return not known or value.casefold() in {v.casefold() for v in known}


def _check_filter(
    step: Step, facet: str, value: str, facets: Mapping[str, Collection[str]], slot_names: set[str] | None
) -> None:
    if facet not in facets:
        raise PlanError("unknown_facet", f"{step.id}: filter on unknown facet {facet!r}")
    if STEP_SLOT.fullmatch(value):
        return
    slot = CONSTRAINT_SLOT.fullmatch(value)
    if slot:
        name = f"{slot.group(1)}_{slot.group(2)}"
        if slot.group(1) != facet or (slot_names is not None and name not in slot_names):
            raise PlanError("unknown_filter_value", f"{step.id}: {facet}={value} is not a slot of the shape")
        return
    if not _is_known_value(value, facets[facet]):
        raise PlanError("unknown_filter_value", f"{step.id}: unknown {facet} {value!r}")


def canonical_filters(plan: Plan, facets: Mapping[str, Collection[str]]) -> Plan:
    """The plan with each literal filter value spelled as its facet's known value: validation compares values
    ignoring case ("berlin"), the index filters them exactly ("Berlin")."""
    spelled = {f: {v.casefold(): v for v in known} for f, known in facets.items()}
    out = plan.model_copy(deep=True)
    for step in out.steps:
        step.filters = {f: spelled.get(f, {}).get(v.casefold(), v) for f, v in step.filters.items()}
    return out


def _check_slots_and_extracts(
    plan: Plan, facets: Mapping[str, Collection[str]], slot_names: set[str] | None
) -> None:
    """Constraint slots known; a step whose answer fills a slot extracts it (the facet its user filters; a
    name fills query text only)."""
    by_id = {s.id: s for s in plan.steps}
    for step in plan.steps:
        if step.extract is not None and step.extract.kind == "facet" and step.extract.facet not in facets:
            raise PlanError("unknown_facet", f"{step.id}: extracts unknown facet {step.extract.facet!r}")
        unknown = constraint_slots(step.query) - slot_names if slot_names is not None else set()
        if unknown:
            raise PlanError("unknown_slot", f"{step.id}: unknown slots {sorted(unknown)}")
        for sid in step_slots(step.query) | step_slots(" ".join(step.filters.values())):
            if by_id[sid].extract is None:
                raise PlanError("missing_extract", f"{step.id} uses {{{sid}}} but {sid} extracts no answer")
        for facet, value in step.filters.items():
            used = STEP_SLOT.fullmatch(value)
            extract = by_id[used.group(1)].extract if used else None
            if extract is not None and extract.facet != facet:
                what = extract.facet if extract.kind == "facet" else "a name, which fills query text only"
                raise PlanError("extract_facet_mismatch", f"{step.id}: {facet}={value} but it extracts {what}")


def validate_plan(
    plan: Plan,
    *,
    max_steps: int,
    facets: Mapping[str, Collection[str]],
    slot_names: set[str] | None = None,
) -> list[str]:
    """Reject a malformed plan or template before it costs anything; return a topological order.

    `facets` maps facet -> known values (an empty set: any value). `slot_names` (e.g. {"office_1"}) are
    the constraint slots a template may use; None accepts any. Raises PlanError with a `reason`.
    """
    ids = _check_size_and_ids(plan, max_steps)
    order = _check_graph(plan, ids)
    for step in plan.steps:
        _check_query(step)
        for facet, value in step.filters.items():
            _check_filter(step, facet, value, facets, slot_names)
    _check_slots_and_extracts(plan, facets, slot_names)
    return order


# --- constraint check (Move 5) ----------------------------------------------------------------------

Key = tuple[str, str]


def _norm(key: Key) -> Key:
    return (key[0], key[1].casefold())


@dataclass(frozen=True)
class CheckResult:
    """Move 5 on one filled plan: constraints dropped, invented, and years that only sit in query text."""

    dropped: set[Key]
    invented: set[Key]
    year_only_in_text: set[Key]

    @property
    def ok(self) -> bool:
        return not self.dropped and not self.invented

    def complaint(self) -> str:
        """One line for a re-plan prompt or a log, e.g. "dropped year=2026; invented office=Amsterdam"."""
        parts = [
            f"{label} " + ", ".join(f"{f}={v}" for f, v in sorted(keys))
            for label, keys in (
                ("dropped", self.dropped),
                ("invented", self.invented),
                ("year only in text", self.year_only_in_text),
            )
            if keys
        ]
        return "; ".join(parts) or "ok"


def _step_constraints(
    step: Step, extract_constraints: Callable[[str], list[Constraint]]
) -> tuple[set[Key], set[Key]]:
    """(in_text, in_filters) of one step; `{sN}` slots are exempt, their value is filled later."""
    in_text = {c.key for c in extract_constraints(STEP_SLOT.sub(" ", step.query))}
    in_filters = {(f, v) for f, v in step.filters.items() if not STEP_SLOT.fullmatch(v)}
    return in_text, in_filters


def check_plan(
    plan: Plan, constraints: Iterable[Constraint], extract_constraints: Callable[[str], list[Constraint]],
    time_facets: Collection[str] = ("year",), text_facets: Collection[str] = (), every: Collection[str] = (),
) -> CheckResult:
    """Check a filled plan against its question's constraints: none dropped, none invented. A value of one of
    `every`, the facets a question asks of each value of ("which plans ...", `schemas.each_value`), is asked for,
    not invented.

    Text and filters both cover a constraint (qualifiers live in text); values compare case-insensitively.
    A value of one of `time_facets` (the year and date facets) that sits only in query text is reported
    (`year_only_in_text`): a search does not tell one year's version from another's by its words.
    A value of one of `text_facets` (names, `schemas.entity`) is covered where a step's query holds its words;
    the words around it may read as another name ("Paris Hilton" before "hotels"), so its extraction is not used.
    """
    need = {_norm(c.key): c.key for c in constraints}
    covered: set[Key] = set()
    invented: set[Key] = set()
    year_only_in_text: set[Key] = set()
    named = {key: f" {words(key[1])} " for key in need if key[0] in text_facets}
    for step in plan.steps:
        in_text, in_filters = _step_constraints(step, extract_constraints)
        in_text = {k for k in in_text if k[0] not in text_facets}
        query = f" {words(step.query)} "
        covered |= {key for key, said in named.items() if said in query}
        filtered = {_norm(k) for k in in_filters}
        for key in in_text | in_filters:
            covered.add(_norm(key))
            if _norm(key) not in need and key[0] not in every:
                invented.add(key)
        year_only_in_text |= {k for k in in_text if k[0] in time_facets and _norm(k) not in filtered}
    dropped = {orig for norm, orig in need.items() if norm not in covered}
    return CheckResult(dropped=dropped, invented=invented, year_only_in_text=year_only_in_text)


# --- slot filling (Move 2) --------------------------------------------------------------------------


def _fill(text: str, pattern: re.Pattern[str], lookup: Callable[[re.Match[str]], str | None]) -> str:
    def replace(m: re.Match[str]) -> str:
        value = lookup(m)
        if value is None:
            raise PlanError("missing_slot", f"no value for {m.group(0)}")
        return value

    return pattern.sub(replace, text)


def fill_slots(template: Plan, values: Mapping[str, str]) -> Plan:
    """Fill constraint slots (`{office_1}` -> values["office_1"]) in queries and filters; `{sN}` stay."""

    def fill(text: str) -> str:
        return _fill(text, CONSTRAINT_SLOT, lambda m: values.get(f"{m.group(1)}_{m.group(2)}"))

    steps = [
        s.model_copy(
            update={"query": fill(s.query), "filters": {f: fill(v) for f, v in s.filters.items()}}, deep=True
        )
        for s in template.steps
    ]
    filled = template.model_copy(update={"steps": steps})
    once = drop_repeated_steps(plan_doc(filled, exclude_defaults=False))
    return filled if len(once["steps"]) == len(steps) else Plan.model_validate(once)


def drop_repeated_steps(plan: PlanDoc) -> PlanDoc:
    """A filled plan (its JSON form) without the steps that repeat an earlier one: the same query, filters,
    dependencies and extraction, as when a question names one value twice ("compare Lisbon and Lisboa": two
    spellings of one office fill both slots). Each search runs once; a step that waited for a repeat waits for
    the step it repeats, and its `{sN}` slots name that step. The plan itself when nothing repeats."""
    kept_as: dict[str, str] = {}  # a dropped step's id -> the id of the step it repeats

    def target(sid: str) -> str:
        while sid in kept_as:
            sid = kept_as[sid]
        return sid

    steps: list[StepDoc] = plan["steps"]
    if len({step["query"] for step in steps}) == len(steps):  # a repeat has its step's query: none repeats
        return plan
    while True:  # again after a drop: steps that waited for the two can now be repeats (any order is a DAG)
        first: dict[str, str] = {}  # a step's signature -> the id of the first step with it
        kept = []
        for step in steps:
            step = _renamed(step, target)
            sig = json.dumps([step["query"], step.get("filters") or {}, sorted(step.get("depends_on") or []),
                              step.get("extract")], sort_keys=True)
            if sig in first:
                kept_as[step["id"]] = first[sig]
            else:
                first[sig] = step["id"]
                kept.append(step)
        dropped, steps = len(kept) < len(steps), kept
        if not dropped:
            break
    return plan if not kept_as else {**plan, "steps": steps}


def _renamed(step: StepDoc, target: Callable[[str], str]) -> StepDoc:
    """`step` with its dependencies and `{sN}` slots on dropped steps moved to the steps they repeat."""
    if not step.get("depends_on"):
        return step
    out = step.copy()
    out["depends_on"] = list(dict.fromkeys(target(d) for d in step["depends_on"]))

    def rename(text: str) -> str:
        return STEP_SLOT.sub(lambda m: "{" + target(m.group(1)) + "}", text)

    out["query"] = rename(step["query"])
    if step.get("filters"):
        out["filters"] = {f: rename(v) for f, v in step["filters"].items()}
    return out


def fill_step_slot(text: str, answers: Mapping[str, str]) -> str:
    """Fill `{sN}` slots with the answers extracted from earlier steps."""
    return _fill(text, STEP_SLOT, lambda m: answers.get(m.group(1)))
