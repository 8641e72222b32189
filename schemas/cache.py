"""The plan cache reader: `PlanCache.open(path).lookup(question)`. Importable without Prefect or LanceDB."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import orjson

from schemas import class_routes
from schemas.arrow import KEYS, CacheEntries, read_published
from schemas.bridge import read_served, value_words
from schemas.config import Config, read_published_config
from schemas.entity import read_names
from schemas.errors import InputError, NoPublication
from schemas.extract import Lexicon, Skeleton, cache_key, slots_key
from schemas.files import CACHE, CONFIG, LEXICON, MANIFEST, TEMPLATES
from schemas.followup import MAX_CHAIN, NO_PREVIOUS, Conversation, Followups
from schemas.instruction import score
from schemas.members import ShapeMembers
from schemas.pii import read_plain_words
from schemas.plan import CONSTRAINT_SLOT, STEP_SLOT, Plan, drop_repeated_steps
from schemas.plan_view import PlanView
from schemas.publication import POINTER, check_run, current_run, enclosing_root, index_location, read_manifest, run_root
from schemas.scope import H, override_order
from schemas.scope import where as scope_where
from schemas.text import words
from schemas.vocabulary import Vocabulary

MAX_QUESTION_CHARS = 4000
SCRUB_MEMO = 256  # questions whose scrubbed text a publication keeps, the latest first
VERDICT_MEMO = 65_536  # skeletons whose instruction-text verdict is kept (a skeleton holds no personal data)
WHERE_MEMO = 4096  # steps' filters whose `where` clause a publication keeps (a few shapes' values recur)
_TEMPLATE_TRACE = ("shape_id", "skeleton", "type", "writer", "model", "prompt_hash", "route", "complaint")


@dataclass
class LookupResult:
    hit: bool
    route: str  # one_search | split | split_original | online_planner
    key: str | None = None
    shape_id: str | None = None
    shape_type: str | None = None
    skeleton: str | None = None
    constraints: list[tuple[str, str]] = field(default_factory=list)
    plan: PlanView | None = None  # its JSON form, read-only, whose fields are also attributes (res.plan.steps)
    source: str | None = None  # cache | template
    reason: str = ""
    trace: dict[str, Any] = field(default_factory=dict)
    followup: bool = False
    resolved: str | None = None  # a follow-up: the standalone question it resolved to
    where: dict[str, str | None] = field(default_factory=dict)  # step id -> its LanceDB where clause (schemas.scope)

    def __post_init__(self) -> None:
        if self.plan is not None and not isinstance(self.plan, PlanView):
            self.plan = PlanView(self.plan)

    @property
    def unresolved(self) -> bool:
        """A follow-up that did not resolve (no previous question, ambiguous): a fragment, nothing to plan."""
        return self.followup and not self.resolved

    def to_json(self) -> dict[str, Any]:
        return {"hit": self.hit, "route": self.route, "key": self.key, "shape": self.shape_id,
                "shape_type": self.shape_type, "skeleton": self.skeleton,
                "constraints": [{"facet": f, "value": v} for f, v in self.constraints], "plan": self.plan,
                "where": self.where, "source": self.source, "reason": self.reason, "followup": self.followup,
                "resolved": self.resolved, "trace": self.trace}


class PlanCache:
    """A complete publication loaded in memory: skeleton -> shape, key -> plan, shape -> template."""

    def __init__(self, run_dir: Path) -> None:
        check_run(run_dir, ("plan",))  # a damaged file it reads is named, with the fix, before any reading
        if not (run_dir / CACHE.name).exists():
            raise NoPublication(f"{run_dir}: this publication holds an index but no plan cache yet; run "
                                "'planbake nightly' (or 'planbake mine' then 'planbake plan')")
        self.run_dir = run_dir
        self.manifest = read_manifest(run_dir)
        # the published index's table (a copied or moved publication's own)
        self.index_uri = index_location(self.manifest["index"], run_root(run_dir)) if "index" in self.manifest else ""
        config = read_published_config(run_dir / CONFIG.name)
        values = json.loads((run_dir / LEXICON.name).read_text(encoding="utf-8"))
        plain = read_plain_words(run_dir)
        self.lexicon = Lexicon(config, values, plain, read_names(run_dir))
        # memoised: a server's request log scrubs the question its lookup has just scrubbed
        self.scrub: Callable[[str], str] = lru_cache(maxsize=SCRUB_MEMO)(self.lexicon.scrubber(plain))
        self._step_where = lru_cache(maxsize=WHERE_MEMO)(partial(_where_of, config))
        learned = self.manifest.get("mine", {}).get("followups", {}).get("skeletons", [])
        self.followups = Followups(config.mining, learned)  # mining learned them; the manifest carries them
        self._row_chars = config.mining.max_query_chars  # a longer log row is quarantined: no one's turn
        self._history_entries = config.lookup.history_entries  # what a lookup reads of a history, at most
        self._history_chars = config.lookup.history_chars
        self.vocabulary = Vocabulary.read(run_dir)
        self.class_routes = class_routes.read(run_dir)  # unlogged skeletons' routes by class (schemas.class_routes)
        self.bridge_terms = read_served(run_dir)  # unlogged skeletons' bridges by term (schemas.bridge)
        # the words naming a value, which no bridge's term is: read once, where a term is served
        self.value_forms = value_words(self.lexicon.values, config) if self.bridge_terms else set()
        self.memos: dict[str, Any] = {}  # what the planners around lookup keep of this publication, by name
        self.shape_of = ShapeMembers()
        self.templates: dict[str, dict[str, Any]] = {}
        self._plans: dict[str, tuple[str, set[str]]] = {}  # template JSON and its slots, made at first lookup
        self._template_trace: dict[str, bytes] = {}  # as JSON, made at a shape's first lookup: a trace is a copy
        for row in read_published(run_dir, TEMPLATES).to_pylist():
            row["evaluation_doc"] = orjson.loads(row.get("evaluation") or "{}")
            self.templates[row["shape_id"]] = row
            self.shape_of.add(row["shape_id"], row["members"] or [], row.get("member_hashes") or [])
        # a publication written when keys kept the question's order is keyed anew from each entry's slots
        table = read_published(run_dir, CACHE)
        keys = (table.column("key").to_pylist() if self.manifest.get("plan", {}).get("cache_keys") == KEYS else
                [slots_key(shape, orjson.loads(slots)) for shape, slots in
                 zip(table.column("shape_id").to_pylist(), table.column("slots").to_pylist(), strict=True)])
        self.entries = CacheEntries(table, keys)
        index = self.manifest.get("index", {})
        self._run_trace = {"run_id": self.manifest.get("run_id"), "index_version": index.get("version"),
                           "index_tag": index.get("tag"), "lexicon_hash": self.manifest.get("lexicon_hash")}

    @classmethod
    def open(cls, path: str | Path) -> PlanCache:
        """A run directory, or a publication root (the live run behind its pointer)."""
        p = Path(path)
        if p.is_file():
            raise InputError(f"{p}: is a file; pass the publication folder (or a run folder)")
        if (p / POINTER).exists() or (p / "runs").is_dir():  # a root (its pointer may be missing)
            return cls(current_run(p))
        if not (p / MANIFEST.name).exists():
            if (root := enclosing_root(p)) is not None:
                raise InputError(f"{p}: lies inside the publication root {root}; open the root (the folder holding "
                                 f"{POINTER}) or a run folder")
            raise NoPublication(f"{p}: nothing published yet; run 'planbake nightly' first")
        return cls(p)

    def lookup(self, question: str, now: date | datetime | None = None,
               history: Sequence[str] | None = None) -> LookupResult:
        """Hit: a ready plan (or "one search") for this exact shape and these constraint values. Miss: why.

        `now`: the date relative years ("this year") resolve against, as mining resolves them against a log row's
        UTC time: a datetime with a time zone counts in UTC, and the default is today in UTC. `history`: the
        user's earlier questions, oldest first. A follow-up ("what about Lisbon?") resolves into the last one's
        shape (`resolved` holds the standalone question); an ambiguous one is a miss with the reason, as is one
        after more than `MAX_CHAIN` follow-ups in a row (mining resolves no longer chains either). The result's
        trace leads to the template row and the run that published it.
        The lookup reads at most the newest `lookup.history_entries` entries of the history, and of them at most
        `lookup.history_chars` characters in all: a longer history costs no more than that.
        A question, history (or an entry of the history it reads) or `now` of the wrong type is a TypeError."""
        when = utc_date(now)
        if not isinstance(question, str):
            raise TypeError(f"question must be a str, got {type(question).__name__}")
        if isinstance(history, str | bytes) or not (history is None or isinstance(history, Sequence)):
            raise TypeError(f"history must be a list of earlier questions, got {type(history).__name__}")
        recent = self._recent(history or ())
        res = self._answer(question, recent, when)
        if res.plan:
            res.where = self.step_wheres(res.plan["steps"])
        template = self._trace_of(res.shape_id)
        res.trace = {**self._run_trace, "key": res.key, "skeleton": res.skeleton, "constraints": res.constraints,
                     "reason": res.reason, "resolved": res.resolved, **(orjson.loads(template) if template else {})}
        return res

    def _trace_of(self, shape_id: str | None) -> bytes | None:
        """The template's part of a lookup's trace, as JSON (made once per shape; each lookup parses its own)."""
        if shape_id is None or (row := self.templates.get(shape_id)) is None:
            return None
        text = self._template_trace.get(shape_id)
        if text is None:
            text = self._template_trace[shape_id] = orjson.dumps({
                "template": {k: row.get(k) for k in _TEMPLATE_TRACE}, "evaluation": row["evaluation_doc"]})
        return text

    def _recent(self, history: Sequence[str]) -> list[str]:
        """The newest `lookup.history_entries` entries of the history, oldest first, each checked to be a str
        (a TypeError names the first one that is not by its index); older entries are not read."""
        end = len(history)
        recent = [history[i] for i in range(max(0, end - self._history_entries), end)]
        for i, entry in enumerate(recent, start=end - len(recent)):
            if not isinstance(entry, str):
                raise TypeError(f"history[{i}] must be a str question, got {type(entry).__name__}")
        return recent

    def _skeleton(self, question: str, when: date) -> Skeleton:
        return self.lexicon.skeleton(self.scrub(question), when)

    def _answer(self, question: str, history: Sequence[str], when: date) -> LookupResult:
        """The lookup of a question of the right types; with a history, a follow-up resolves against it."""
        bad = _unusable(question)
        if bad is not None:
            return bad
        sk = self._skeleton(question, when)
        if not sk.text:  # words, but only a greeting or filler ("hello", "thanks")
            return _empty() if not words(question) else LookupResult(False, "one_search", reason=FILLER_ONLY)
        if not self.followups.is_followup(sk):  # a question of its own: the history does not change it
            return self._from_skeleton(sk)
        if (refused := _instruction_text(sk)) is not None:  # checked before it borrows a question's shape
            return refused
        if not history:
            res = self._from_skeleton(sk)
            if res.shape_id is None:
                res.followup, res.reason = True, NO_PREVIOUS
            return res
        turn = self._conversation(history, when).add(sk)
        if turn.standalone is None:
            return LookupResult(False, "online_planner", skeleton=sk.text,
                                constraints=[(c.facet, c.value) for c in sk.constraints], reason=turn.reason,
                                followup=True)
        res = self._from_skeleton(turn.standalone)
        res.followup, res.resolved = True, turn.question
        return res

    def _conversation(self, history: Sequence[str], when: date) -> Conversation:
        """The conversation up to the question: read back from the newest earlier question to the last one that
        is no follow-up (what a follow-up after it resolves against). An entry mining would quarantine as a log
        row (blank, longer than `mining.max_query_chars`) is no turn, as filler alone is none: read past it; any
        other entry is a turn, as its log row is, even one longer than a lookup's own question may be. At most
        `MAX_CHAIN` + 1 follow-ups are read back: a question after more than `MAX_CHAIN` in a row resolves in no
        conversation. At most `lookup.history_chars` characters of turns are read (`history` holds at most
        `lookup.history_entries` entries, checked for their type): reading stops at the turn that would pass it,
        so follow-ups before which nothing was read resolve against no previous question."""
        tail: list[Skeleton] = []
        budget = self._history_chars
        for earlier in reversed(history):
            if len(earlier) > self._row_chars or not earlier.strip():
                continue
            if len(earlier) > budget:  # the history read ends here
                break
            budget -= len(earlier)
            sk = self._skeleton(earlier, when)
            if not sk.text:  # filler alone ("thanks"): read past it, as mining does
                continue
            tail.append(sk)
            if not self.followups.is_followup(sk):
                break
            if len(tail) > MAX_CHAIN:  # the question is past the longest chain that resolves
                break
        talk = Conversation(self.followups)
        for sk in reversed(tail):
            talk.add(sk)
        return talk

    def where(self, filters: Mapping[str, str], all_versions: bool = False) -> str | None:
        """A step's filters as the LanceDB `where` clause the executor searches with: each category value or none
        where the facet inherits, years and dates exactly, current versions unless a year or date is named
        (`schemas.scope`). A step whose filter waits on an answer (`{s1}`) gets its clause once it is filled."""
        return scope_where(filters, self.lexicon.config, all_versions)

    def step_wheres(self, steps: Iterable[Mapping[str, Any]]) -> dict[str, str | None]:
        """Each step's `where` clause by step id (`where`), but for a step whose filter waits on an answer."""
        return {s["id"]: self._step_where(tuple(s.get("filters", {}).items())) for s in steps
                if not any(STEP_SLOT.search(v) for v in s.get("filters", {}).values())}

    def order(self, hits: Sequence[H], filters: Mapping[str, str]) -> list[H]:
        """A step's hits with each topic's local chunks above its company-wide ones (`schemas.scope`)."""
        return override_order(hits, filters, self.lexicon.config)

    def uses_vocabulary(self, shape_id: str) -> bool:
        """Whether the shape's evaluation chose sub-queries in the corpus's words (see tasks.plan.routing)."""
        return bool(self.templates[shape_id]["evaluation_doc"].get("vocabulary", {}).get("used"))

    def _from_skeleton(self, sk: Skeleton) -> LookupResult:
        if (refused := _instruction_text(sk)) is not None:
            return refused
        constraints = [(c.facet, c.value) for c in sk.constraints]
        shape_id = self.shape_of.get(sk.text)
        if shape_id is None:
            return LookupResult(False, "online_planner", skeleton=sk.text, constraints=constraints,
                                reason=NO_SHAPE)
        tpl = self.templates[shape_id]
        key = cache_key(shape_id, sk)
        base = LookupResult(True, tpl["route"], key, shape_id, tpl["type"], sk.text, constraints)
        if tpl["route"] == "one_search":
            base.source, base.reason = "template", "one search answers this shape"
            return base
        keep = {"keep_original": tpl["route"] == "split_original"}  # stored without its default
        if plan := self.entries.plan(key):
            base.plan, base.source = PlanView({**json.loads(plan), **keep}), "cache"
            return base
        text, needed = self._plan_of(shape_id)
        slots = sk.slots
        if not needed <= slots.keys():
            missing = ", ".join(sorted(needed - slots.keys()))
            return LookupResult(False, "online_planner", key, shape_id, tpl["type"], sk.text, constraints,
                                reason=f"template does not fit: no value for {missing}")
        for name in needed:  # same result as schemas.plan.fill_slots, without a model round trip
            text = text.replace("{" + name + "}", json.dumps(slots[name])[1:-1])
        doc = drop_repeated_steps(json.loads(text))
        if self.uses_vocabulary(shape_id):
            doc = self.vocabulary.apply(doc)
        base.plan, base.source = PlanView({**doc, **keep}), "template"
        return base


    def _plan_of(self, shape_id: str) -> tuple[str, set[str]]:
        """The shape's template as JSON, validated, and its constraint slots: made at the shape's first lookup (a
        publication holds thousands that one night's questions never reach), then filled as text per lookup."""
        made = self._plans.get(shape_id)
        if made is None:
            text = Plan.model_validate_json(self.templates[shape_id]["template"]).model_dump_json(
                exclude_defaults=True)
            made = self._plans[shape_id] = (text, {m.group(1) + "_" + m.group(2)
                                                   for m in CONSTRAINT_SLOT.finditer(text)})
        return made


def _where_of(config: Config, filters: tuple[tuple[str, str], ...]) -> str | None:
    """`PlanCache.where` of a step's filters, given as their items in order (memoised per publication)."""
    return scope_where(dict(filters), config)


def utc_date(now: date | datetime | None) -> date:
    """The date relative years resolve against: `now`'s date, in UTC for a datetime with a time zone."""
    if now is None:
        return datetime.now(UTC).date()
    if isinstance(now, datetime):
        return (now.astimezone(UTC) if now.tzinfo is not None else now).date()
    if isinstance(now, date):
        return now
    raise TypeError(f"now must be a date or a datetime, got {type(now).__name__}")


FILLER_ONLY = "only greetings or filler words"
NO_SHAPE = "no recurring shape has this skeleton"  # the miss a planner (by class, online) may plan


_verdict = lru_cache(maxsize=VERDICT_MEMO)(score)  # a skeleton's verdict: skeletons recur (they make the shapes)


def _instruction_text(sk: Skeleton) -> LookupResult | None:
    """A miss for a question that is instruction text (`schemas.instruction`), whatever the publication holds:
    one search, never a planner model; None for any other question."""
    verdict = _verdict(sk.text)
    if not verdict.instruction:
        return None
    return LookupResult(False, "one_search", skeleton=sk.text, constraints=[(c.facet, c.value) for c in sk.constraints],
                        reason=verdict.reason)


def _empty() -> LookupResult:
    return LookupResult(False, "one_search", reason="empty question")


def _unusable(question: Any) -> LookupResult | None:
    """A miss for a question no lookup can serve (empty, or too long); None for a usable one."""
    if not isinstance(question, str) or not question.strip():
        return _empty()
    if len(question) > MAX_QUESTION_CHARS:
        return LookupResult(False, "online_planner", reason=f"question longer than {MAX_QUESTION_CHARS} chars")
    return None
