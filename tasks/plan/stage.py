"""The plan stage: write a template per recurring shape, validate, check, evaluate, route, build the cache."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from prefect import task
from prefect.cache_policies import NO_CACHE

from schemas import class_routes
from schemas.arrow import KEYS, CacheRow, read_published
from schemas.bridge import Bridge, served, write_served
from schemas.config import Config
from schemas.constraint import Constraint
from schemas.digest import fingerprint
from schemas.extract import Lexicon, Skeleton, cache_key, fill_skeleton
from schemas.files import BRIDGE_TERMS, CACHE, CLASS_ROUTES, CONFIG, LEXICON, TEMPLATES, VOCABULARY
from schemas.plan import (
    Plan,
    PlanError,
    canonical_filters,
    fill_slots,
)
from schemas.text import words
from schemas.vocabulary import Vocabulary
from tasks.index.store import Index, best_cosine
from tasks.plan.check import SAMPLES_PER_SHAPE, check_template
from tasks.plan.class_planner import rules_class
from tasks.plan.clauses import Reach
from tasks.plan.model_writer import Generate, excerpt, write_batch
from tasks.plan.routing import ROUTER_VERSION, ROUTES, ShapeEvaluation, decide_route
from tasks.plan.rules_writer import write_template
from tasks.plan.vocabulary import mine_vocabulary, worded
from tasks.progress import progress

EXCERPTS_PER_VALUE = 2  # chunk texts per facet value shown to a model writer
# the class measure's version (`class_evaluation`): a template measured by an older one is evaluated anew
CLASS_MEASURE = 5


@dataclass
class PlanResult:
    shapes: int
    templates: int
    rejected: int
    fallbacks: int
    routes: dict[str, int] = field(default_factory=dict)
    cache_entries: int = 0
    reused: int = 0
    evaluated: int = 0
    rejections: dict[str, int] = field(default_factory=dict)  # rejected model outputs by kind
    multi_step: dict[str, int] = field(default_factory=dict)  # per planned route, shapes of two or more steps
    cache_keys: str = KEYS  # how cache.parquet's keys order their slots: lookup then reads its keys as they are

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


def multi_step(templates: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Per route that serves a plan (split, split_original), how many shapes' plans have two or more steps; the
    others' plan is one search with a filter."""
    out = {route: 0 for route in ROUTES if route != "one_search"}
    for t in templates:
        if t["route"] in out and len(json.loads(t["template"])["steps"]) > 1:
            out[t["route"]] += 1
    return out


def _samples(questions: list[dict[str, Any]], skeleton: str) -> list[tuple[Skeleton, int]]:
    """Distinct slot values of a shape's questions, most frequent first, as skeletons. Constraints listed in
    another order ("birth parent" before "Berlin") fill the same slots: one value set, one cache key."""
    counts: Counter[str] = Counter()
    first: dict[str, Skeleton] = {}
    for constraints, n in Counter(q["constraints"] for q in questions).items():
        sk = Skeleton(skeleton, tuple(Constraint(f, v) for f, v in json.loads(constraints)))
        slots = json.dumps(sk.slots, sort_keys=True)
        first.setdefault(slots, sk)
        counts[slots] += n
    return [(first[slots], n) for slots, n in counts.most_common()]


def partition_excerpts(skeleton: str, samples: list[Skeleton], config: Config, index: Index,
                       per_value: int = EXCERPTS_PER_VALUE) -> dict[str, list[str]]:
    """For each category value the shape's sampled questions name, the texts of the partition's chunks that
    best match the question (rebuilt from the skeleton and the values: lexicon text only)."""
    cats = {f.name for f in config.facets if f.kind == "category"}
    out: dict[str, list[str]] = {}
    for sk in samples[:SAMPLES_PER_SHAPE]:
        question = fill_skeleton(skeleton, sk.slots)
        for c in sk.constraints:
            if c.facet in cats and c.value not in out:
                # the value's own chunks: its step also searches the company-wide ones (facet scope)
                hits = index.search(question, per_value * 4, {c.facet: c.value})
                out[c.value] = [excerpt(h.text) for h in hits if h.facets.get(c.facet) == c.value][:per_value]
    return out


def evidence_reach(index: Index, samples: list[Skeleton], seen: set[str] | None = None) -> Reach:
    """The best chunk score of a clause under a slot group's filters, averaged over the sampled values.
    The chunks it finds go into `seen`: the template depends on them, so they are part of its evidence."""

    def reach(clause: str, filters: dict[str, str]) -> float:
        scores = []
        for sk in samples:
            values = {f: sk.slots[v.strip("{}")] for f, v in filters.items() if v.strip("{}") in sk.slots}
            if len(values) == len(filters):  # a sample without one of the values says nothing about this group
                hits = index.search(clause, 1, values, mode="vector")  # the best cosine, for the floor
                scores.append(best_cosine(hits, -1.0))
                if seen is not None:
                    seen.update(h.id for h in hits)
        return sum(scores) / len(scores) if scores else -1.0

    return reach


def write_templates(todo: list[tuple[dict[str, Any], list[Skeleton]]], config: Config, lexicon: Lexicon,
                    generate: Generate | None, writer: str, index: Index | None = None
                    ) -> tuple[list[tuple[Plan, dict[str, Any]]], int]:
    """A template per shape: by the model writer when one is given (validated and checked, one re-plan with
    the complaint, then the rule writer), else by rules. Returns (template, status) pairs and the fallbacks.
    With an index (and `planning.corpus_words`), the model is shown excerpts of each value's partition."""
    model_plans: list[Plan | None] = [None] * len(todo)
    meta: list[dict[str, Any]] = [{} for _ in todo]
    allowed: dict[str, tuple[list[Skeleton], set[str]]] = {}
    if generate is not None and todo:
        known = {k: sorted(v) for k, v in lexicon.known_values().items()}
        shown = [partition_excerpts(shape["skeleton"], samples, config, index)
                 if index is not None and config.planning.corpus_words else {} for shape, samples in todo]
        allowed = {shape["shape_id"]: (samples, {w for texts in ex.values() for t in texts for w in words(t).split()})
                   for (shape, samples), ex in zip(todo, shown, strict=True)}

        def accept(shape: dict[str, Any], plan: Plan) -> str:
            status = check_template(plan, shape, config, lexicon, *allowed[shape["shape_id"]])
            return "" if status["valid"] and status["check_ok"] else status["complaint"]

        asked = [{**shape, "excerpts": ex} if ex else shape for (shape, _), ex in zip(todo, shown, strict=True)]
        outcomes = write_batch(asked, config, known, generate, accept)
        for i, o in enumerate(outcomes):
            model_plans[i] = o.plan and canonical_filters(o.plan, lexicon.known_values())
            meta[i] = {"prompt_hash": o.prompt_hash, "attempts": o.attempts, "model_complaints": o.complaints,
                       "rejections": o.rejections}
    out, fallbacks = [], 0
    for i, (shape, samples) in enumerate(todo):
        plan = model_plans[i]
        if plan is not None:
            status = {**check_template(plan, shape, config, lexicon, *allowed[shape["shape_id"]]), "writer": writer,
                      "model": config.planning.model, **meta[i]}
        else:
            fallbacks += generate is not None
            seen: set[str] = set()
            reach = evidence_reach(index, samples[:SAMPLES_PER_SHAPE], seen) if index is not None else None
            bridge = Bridge.from_json(shape.get("bridge"))
            plan = write_template(shape["skeleton"], shape["type"], config, reach, bridge, lexicon.values)
            status = {**check_template(plan, shape, config, lexicon, samples), "writer": "rules", "model": "",
                      **meta[i], "fallback": generate is not None, "reach_evidence": seen}
        out.append((plan, status))
    return out, fallbacks


def _fingerprint(obj: Any) -> str:
    return fingerprint(obj)


def _previous(prev_dir: Path | None) -> tuple[dict[str, dict[str, Any]], dict[str, list[CacheRow]]]:
    """Templates and cache entries of the live publication, by shape id (empty when there is none)."""
    if prev_dir is None or not (prev_dir / TEMPLATES.name).exists():
        return {}, {}
    tpls = {t["shape_id"]: t for t in read_published(prev_dir, TEMPLATES).to_pylist()}
    entries: dict[str, list[CacheRow]] = defaultdict(list)
    for e in map(CacheRow, *(c.to_pylist() for c in read_published(prev_dir, CACHE).columns)):
        entries[e.shape_id].append(e)
    return tpls, entries


def recounted(entries: list[CacheRow], counted: list[tuple[Skeleton, int]]) -> list[CacheRow]:
    """Reused cache entries with this window's question counts: the value sets are last night's (the shape's
    signature holds them), their counts are not."""
    counts = {json.dumps(sk.slots, sort_keys=True): n for sk, n in counted}
    return [replace(e, questions=counts.get(json.dumps(json.loads(e.slots), sort_keys=True), e.questions))
            for e in entries]


def class_evaluation(template: Plan, own: ShapeEvaluation, shape: dict[str, Any], samples: list[Skeleton],
                     config: Config, lexicon: Lexicon, index: Index) -> tuple[dict[str, Any], set[str]]:
    """The shape's class key (`class_planner.rules_class`: the `classify` rules on its skeleton alone, as a lookup
    keys a question) and the routes measured for the plan the class planner would write for it (the rule writer of
    that type, without the index's reach, a corpus bridge or the corpus's words: what a lookup serves), with the
    chunk ids that measure saw. The shape's own evaluation stands for it (`same`) when its template is that plan
    and was measured in the question's words; no figures when that plan is one step or fails the checks."""
    key, shape_type = rules_class(shape["skeleton"], shape.get("signature") or "", config)
    doc: dict[str, Any] = {"key": key}
    plan = write_template(shape["skeleton"], shape_type, config, values=lexicon.values)
    if len(plan.steps) < 2:
        return doc, set()
    if plan == template and not own.vocabulary.get("used"):
        return {**doc, "same": True}, set()
    status = check_template(plan, {**shape, "type": shape_type}, config, lexicon, samples)
    if not (status["valid"] and status["check_ok"]):
        return doc, set()
    try:
        ev = decide_route(plan, samples[:SAMPLES_PER_SHAPE], index, lexicon, config.planning.budget,
                          config.planning.per_step_k, config.planning.merge, floor=config.mining.null_floor,
                          vocabulary=None, rerank=config.planning.rerank,
                          margin=config.planning.evidence_margin, split_floor=config.planning.split_floor)
    except PlanError:
        return doc, set()
    return {**doc, **ev.to_json()}, ev.evidence


def by_class(templates: list[dict[str, Any]], shapes: list[dict[str, Any]]) -> Iterable[tuple[str, dict[str, Any]]]:
    """(class key, the routes measured for its class plan) of each sound shape whose evaluation holds them
    (`class_evaluation`; a shape whose class plan is one step counts as one no split helps)."""
    signature = {s["shape_id"]: s.get("signature") or "" for s in shapes}
    for t in templates:
        evaluation = json.loads(t["evaluation"] or "{}")
        measured = evaluation.get("class")
        if measured is None:  # not measured (class routes off when it was made), or unsound
            continue
        key = measured.get("key") or class_routes.class_key(t["type"], signature.get(t["shape_id"], ""))
        yield key, (evaluation if measured.get("same") else measured)


def plan_shapes(shapes_path: Path, questions_path: Path, config: Config, lexicon: Lexicon, index: Index,
                staging: Path, quiet: bool = False, prev_dir: Path | None = None,
                corpus_added: bool = True, generate: Generate | None = None, writer: str = "rules") -> PlanResult:
    """Template, check, evaluate and route every recurring shape; reuse a previous template whose shape
    (skeleton, type, sampled values) and evidence chunks are unchanged, when no chunk was added."""
    shapes = pq.read_table(shapes_path).to_pylist()
    prev_tpls, prev_entries = _previous(prev_dir)
    index_version, lexicon_hash = int(index.table.version), lexicon.digest()  # what each cache entry was made with
    vocabulary = mine_vocabulary(index, config) if config.planning.corpus_words else Vocabulary()
    (staging / VOCABULARY.name).write_text(json.dumps(vocabulary.to_json(), indent=2, sort_keys=True),
                                           encoding="utf-8")
    hashes = index.hashes("row_hash")  # a template's evidence is stale when its text, facets or markers change
    legacy = index.hashes("content_hash")  # what evidence held before it was row hashes: still good for one night
    reused = 0
    questions = pq.read_table(questions_path, columns=["shape_id", "constraints"]).to_pylist()
    by_shape: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in questions:
        if q["shape_id"]:
            by_shape[q["shape_id"]].append(q)
    templates: list[dict[str, Any]] = []
    entries: list[CacheRow] = []
    routes: Counter[str] = Counter()
    rejections: Counter[str] = Counter()
    rejected = 0
    todo: list[tuple[dict[str, Any], list[tuple[Skeleton, int]], str]] = []
    scopes = {f.name: f.scope for f in config.facets if f.kind == "category"}  # which chunks a step searches
    for shape in shapes:
        counted = _samples(by_shape[shape["shape_id"]], shape["skeleton"])
        shape_sig = _fingerprint([shape["skeleton"], shape["type"], shape.get("bridge"), shape.get("slot_types"),
                                  [s.slots for s, _ in counted],
                                  config.planning.model_dump(), config.mining.null_floor, ROUTER_VERSION,
                                  vocabulary.digest(), scopes, CLASS_MEASURE])  # the floor gates clause splits, routes
        old = prev_tpls.get(shape["shape_id"])
        if (old is not None and not corpus_added and old.get("shape_sig") == shape_sig
                and all(h in (hashes.get(i), legacy.get(i)) for i, h in json.loads(old.get("evidence") or "[]"))):
            templates.append({**old, "count": shape["count"],
                              "members": [shape["skeleton"], *(shape["examples"] or [])],
                              "member_hashes": shape.get("member_hashes") or []})
            entries += recounted(prev_entries.get(shape["shape_id"], []), counted)
            routes[old["route"]] += 1
            rejected += not (old["valid"] and old["check_ok"])
            reused += 1
        else:
            todo.append((shape, counted, shape_sig))
    written, fallbacks = write_templates([(shape, [sk for sk, _ in counted]) for shape, counted, _ in todo],
                                         config, lexicon, generate, writer, index)
    with progress("evaluating templates", len(todo), quiet=quiet) as bar:
        for (shape, counted, shape_sig), (template, status) in zip(todo, written, strict=True):
            samples = [sk for sk, _ in counted]
            rejections.update(status.get("rejections", []))
            sound = status["valid"] and status["check_ok"]
            rejected += not sound
            if sound and shape["type"] != "null":
                try:
                    ev = decide_route(template, samples[:SAMPLES_PER_SHAPE], index, lexicon,
                                      config.planning.budget, config.planning.per_step_k, config.planning.merge,
                                      floor=config.mining.null_floor, vocabulary=vocabulary,
                                      rerank=config.planning.rerank, margin=config.planning.evidence_margin,
                                      split_floor=config.planning.split_floor)
                except PlanError as exc:  # a filled plan that fails validation is served as one search
                    status.update(valid=False, complaint=str(exc))
                    rejected += 1
                    ev = ShapeEvaluation("one_search", 0)
            else:
                ev = ShapeEvaluation("one_search", 0)
            evaluation, class_seen = ev.to_json(), set[str]()
            if config.planning.class_routes and sound and shape["type"] != "null":
                evaluation["class"], class_seen = class_evaluation(template, ev, shape, samples, config, lexicon,
                                                                   index)
            routes[ev.route] += 1
            # what the evaluation, the class measure and the writer saw: a template is reused only while they stand
            evidence = ev.evidence | class_seen | status.get("reach_evidence", set())
            templates.append({
                "shape_id": shape["shape_id"], "skeleton": shape["skeleton"], "type": shape["type"],
                "template": template.model_dump_json(exclude_defaults=True), "writer": status["writer"],
                "model": status["model"], "valid": status["valid"], "check_ok": status["check_ok"],
                "complaint": status["complaint"], "prompt_hash": status.get("prompt_hash", ""),
                "fallback": bool(status.get("fallback")), "route": ev.route,
                "evaluation": json.dumps(evaluation), "members": [shape["skeleton"], *(shape["examples"] or [])],
                "member_hashes": shape.get("member_hashes") or [],
                "count": shape["count"], "shape_sig": shape_sig,
                "evidence": json.dumps(sorted([i, hashes.get(i)] for i in evidence)),
            })
            for sk, n in counted:
                plan = None
                if ev.route != "one_search":
                    filled = fill_slots(template, sk.slots)
                    filled = worded(filled, vocabulary) if ev.vocabulary.get("used") else filled
                    filled.keep_original = ev.route == "split_original"
                    plan = filled.model_dump_json(exclude_defaults=True)
                entries.append(CacheRow(cache_key(shape["shape_id"], sk), shape["shape_id"], ev.route, plan,
                                        json.dumps(sk.slots), n, status["writer"], status["model"],
                                        status.get("prompt_hash", ""), index_version, lexicon_hash,
                                        json.dumps(ev.coverage)))
            bar.advance(1)
    templates.sort(key=lambda t: t["shape_id"])  # the same file whichever templates were reused
    class_routes.write(staging / CLASS_ROUTES.name, class_routes.decide(by_class(templates, shapes)))
    bridge_of = {s["shape_id"]: Bridge.from_json(s.get("bridge")) for s in shapes}
    write_served(staging / BRIDGE_TERMS.name, served(
        (b, t["route"]) for t in templates if t["valid"] and t["check_ok"] and (b := bridge_of.get(t["shape_id"]))))
    pq.write_table(pa.Table.from_pylist(templates, TEMPLATES.schema), staging / TEMPLATES.name)
    pq.write_table(pa.Table.from_pylist([e.to_row() for e in sorted(entries, key=lambda e: e.key)], CACHE.schema),
                   staging / CACHE.name)
    return PlanResult(len(shapes), len(templates), rejected, fallbacks, dict(routes), len(entries), reused,
                      len(templates) - reused, dict(sorted(rejections.items())), multi_step(templates))


def write_lexicon(staging: Path, config: Config, index: Index) -> None:
    """What an online reader needs to rebuild the same lexicon: the config and the facet values the lexicon takes
    from the index (`Index.lexicon_values`; the scrubber's plain words come with the shapes, from the mine stage)."""
    (staging / CONFIG.name).write_text(config.model_dump_json(indent=2), encoding="utf-8")
    (staging / LEXICON.name).write_text(json.dumps(index.lexicon_values(), indent=2, sort_keys=True),
                                        encoding="utf-8")


# Not cached: it writes into the run's staging directory, and the index and lexicon are handles.
plan_task = task(name="plan-shapes", cache_policy=NO_CACHE)(plan_shapes)
