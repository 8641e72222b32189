"""The plan cache reader: `PlanCache.open(path).lookup(question)`. Importable without Prefect or LanceDB."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from schemas.config import published_config
from schemas.extract import Lexicon, Skeleton, cache_key
from schemas.followup import NO_PREVIOUS, Conversation, Followups
from schemas.pii import Scrubber
from schemas.plan import CONSTRAINT_SLOT, Plan, drop_repeated_steps
from schemas.publication import POINTER, NoPublication, current_run, index_location, read_manifest, run_root
from schemas.vocabulary import Vocabulary

MAX_QUESTION_CHARS = 4000
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
    plan: dict[str, Any] | None = None
    source: str | None = None  # cache | template
    reason: str = ""
    trace: dict[str, Any] = field(default_factory=dict)
    followup: bool = False
    resolved: str | None = None  # a follow-up: the standalone question it resolved to


    def to_json(self) -> dict[str, Any]:
        return {"hit": self.hit, "route": self.route, "key": self.key, "shape": self.shape_id,
                "shape_type": self.shape_type, "skeleton": self.skeleton,
                "constraints": [{"facet": f, "value": v} for f, v in self.constraints], "plan": self.plan,
                "source": self.source, "reason": self.reason, "followup": self.followup, "resolved": self.resolved,
                "trace": self.trace}


class PlanCache:
    """A complete publication loaded in memory: skeleton -> shape, key -> plan, shape -> template."""

    def __init__(self, run_dir: Path) -> None:
        if not (run_dir / "cache.parquet").exists():
            raise NoPublication(f"{run_dir}: this publication holds an index but no plan cache yet; run "
                                "'planbake nightly' (or 'planbake mine' then 'planbake plan')")
        self.run_dir = run_dir
        self.manifest = read_manifest(run_dir)
        # the published index's table (a copied or moved publication's own)
        self.index_uri = index_location(self.manifest["index"], run_root(run_dir)) if "index" in self.manifest else ""
        config = published_config((run_dir / "config.json").read_text(encoding="utf-8"))
        values = json.loads((run_dir / "lexicon.json").read_text(encoding="utf-8"))
        self.lexicon = Lexicon(config, values)
        self.scrub = Scrubber(config.pii_names, keep=self.lexicon.name_words())
        learned = self.manifest.get("mine", {}).get("followups", {}).get("skeletons", [])
        self.followups = Followups(config.mining, learned)  # mining learned them; the manifest carries them
        self.vocabulary = Vocabulary.read(run_dir)
        self.shape_of: dict[str, str] = {}
        self.templates: dict[str, dict[str, Any]] = {}
        self._plans: dict[str, tuple[str, set[str]]] = {}  # template JSON and its constraint slots
        self._template_trace: dict[str, dict[str, Any]] = {}
        for row in pq.read_table(run_dir / "templates.parquet").to_pylist():
            row["evaluation_doc"] = json.loads(row.get("evaluation") or "{}")
            self.templates[row["shape_id"]] = row
            self._template_trace[row["shape_id"]] = {
                "template": {k: row.get(k) for k in _TEMPLATE_TRACE}, "evaluation": row["evaluation_doc"]}
            if row["route"] != "one_search":
                plan = Plan.model_validate_json(row["template"])  # validated once, filled as text per lookup
                text = plan.model_dump_json(exclude_defaults=True)
                self._plans[row["shape_id"]] = (text, {m.group(1) + "_" + m.group(2)
                                                       for m in CONSTRAINT_SLOT.finditer(text)})
            for sk in row["members"] or []:
                self.shape_of.setdefault(sk, row["shape_id"])
        self.entries = {r["key"]: r for r in pq.read_table(run_dir / "cache.parquet").to_pylist()}
        index = self.manifest.get("index", {})
        self._run_trace = {"run_id": self.manifest.get("run_id"), "index_version": index.get("version"),
                           "index_tag": index.get("tag"), "lexicon_hash": self.manifest.get("lexicon_hash")}

    @classmethod
    def open(cls, path: str | Path) -> PlanCache:
        """A run directory, or a publication root (the live run behind its pointer)."""
        p = Path(path)
        if p.is_file():
            raise ValueError(f"{p}: is a file; pass the publication folder (or a run folder)")
        if (p / POINTER).exists():
            return cls(current_run(p))
        if not (p / "manifest.json").exists():
            raise NoPublication(f"{p}: nothing published yet; run 'planbake nightly' first")
        return cls(p)

    def lookup(self, question: str, now: date | datetime | None = None,
               history: Sequence[str] | None = None) -> LookupResult:
        """Hit: a ready plan (or "one search") for this exact shape and these constraint values. Miss: why.

        `history`: the user's earlier questions, oldest first. A follow-up ("what about Lisbon?") resolves into
        the last one's shape (`resolved` holds the standalone question); an ambiguous one is a miss with the
        reason. The result's trace leads to the template row and the run that published it."""
        res = self._with_history(question, history, now) if history else self._lookup(question, now)
        res.trace = {**self._run_trace, "key": res.key, "skeleton": res.skeleton, "constraints": res.constraints,
                     "reason": res.reason, "resolved": res.resolved,
                     **self._template_trace.get(res.shape_id or "", {})}
        return res

    def _lookup(self, question: str, now: date | datetime | None) -> LookupResult:
        bad = _unusable(question)
        if bad is not None:
            return bad
        sk = self.lexicon.skeleton(self.scrub(question), now or date.today())
        res = self._from_skeleton(sk)
        if res.shape_id is None and self.followups.is_followup(sk):
            res.followup, res.reason = True, NO_PREVIOUS
        return res

    def _with_history(self, question: str, history: Sequence[str], now: date | datetime | None) -> LookupResult:
        bad = _unusable(question)
        if bad is not None:
            return bad
        when = now or date.today()
        talk = Conversation(self.followups)
        for earlier in history:
            if _unusable(earlier) is None:
                talk.add(self.lexicon.skeleton(self.scrub(earlier), when))
            else:
                talk.reset()
        sk = self.lexicon.skeleton(self.scrub(question), when)
        turn = talk.add(sk)
        if not turn.followup:
            return self._from_skeleton(sk)
        if turn.standalone is None:
            return LookupResult(False, "online_planner", skeleton=sk.text,
                                constraints=[(c.facet, c.value) for c in sk.constraints], reason=turn.reason,
                                followup=True)
        res = self._from_skeleton(turn.standalone)
        res.followup, res.resolved = True, turn.question
        return res

    def uses_vocabulary(self, shape_id: str) -> bool:
        """Whether the shape's evaluation chose sub-queries in the corpus's words (see tasks.routing)."""
        return bool(self.templates[shape_id]["evaluation_doc"].get("vocabulary", {}).get("used"))

    def _from_skeleton(self, sk: Skeleton) -> LookupResult:
        constraints = [(c.facet, c.value) for c in sk.constraints]
        shape_id = self.shape_of.get(sk.text)
        if shape_id is None:
            return LookupResult(False, "online_planner", skeleton=sk.text, constraints=constraints,
                                reason="no recurring shape has this skeleton")
        tpl = self.templates[shape_id]
        key = cache_key(shape_id, sk)
        base = LookupResult(True, tpl["route"], key, shape_id, tpl["type"], sk.text, constraints)
        if tpl["route"] == "one_search":
            base.source, base.reason = "template", "one search answers this shape"
            return base
        entry = self.entries.get(key)
        if entry is not None and entry["plan"]:
            base.plan, base.source = json.loads(entry["plan"]), "cache"
            base.plan["keep_original"] = tpl["route"] == "split_original"  # stored without its default
            return base
        text, needed = self._plans[shape_id]
        slots = sk.slots
        if not needed <= slots.keys():
            missing = ", ".join(sorted(needed - slots.keys()))
            return LookupResult(False, "online_planner", key, shape_id, tpl["type"], sk.text, constraints,
                                reason=f"template does not fit: no value for {missing}")
        for name in needed:  # same result as schemas.plan.fill_slots, without a model round trip
            text = text.replace("{" + name + "}", json.dumps(slots[name])[1:-1])
        base.plan, base.source = drop_repeated_steps(json.loads(text)), "template"
        if self.uses_vocabulary(shape_id):
            base.plan = self.vocabulary.apply(base.plan)
        base.plan["keep_original"] = tpl["route"] == "split_original"
        return base


def _unusable(question: Any) -> LookupResult | None:
    """A miss for a question no lookup can serve (empty, or too long); None for a usable one."""
    if not isinstance(question, str) or not question.strip():
        return LookupResult(False, "one_search", reason="empty question")
    if len(question) > MAX_QUESTION_CHARS:
        return LookupResult(False, "online_planner", reason=f"question longer than {MAX_QUESTION_CHARS} chars")
    return None
