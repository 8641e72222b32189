"""Evaluate on a labeled set: one search, the rule planner, routed plans, routed plans plus the original."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemas.cache import LookupResult, PlanCache
from schemas.errors import LabelError
from schemas.plan import Plan, fill_slots
from schemas.text import words
from tasks.executor import Retrieved, retrieve
from tasks.index.store import Index
from tasks.plan.class_planner import lookup
from tasks.plan.routing import evidence_depth
from tasks.plan.vocabulary import partition_reach, worded

SYSTEMS = ("one-search", "rules", "routed", "routed+original")




@dataclass
class Labeled:
    id: str
    question: str
    parts: list[set[str]]
    should_split: bool | None
    shape: str | None
    answer: str | None = None  # the label's answer: what a name step should find ("Google")
    line: int = 0  # its line in the labeled set (0: not read from a file)


NULL_SHAPE = "null"  # the corpus holds no answer: a split can only cost searches, so it is a split against the label


def read_labeled(path: str | Path, option: str = "--questions") -> list[Labeled]:
    """A labeled set (JSONL); `option` names where the path came from, for the error's fix."""
    out = []
    first_line: dict[str, int] = {}  # question id -> the line that gave it
    p = Path(path)
    if not p.is_file():
        raise LabelError(f"{p}: labeled questions not found; give {option} an existing JSONL file")
    with p.open("rb") as fh:
        for n, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise LabelError(f"{p}:{n}: not UTF-8 text; re-encode the file as UTF-8") from None
            if not line.strip():
                continue
            try:
                rec = json.loads(line.rstrip("\r\n"))
                if not isinstance(rec, dict):
                    raise TypeError(f"a JSON {type(rec).__name__}, not an object")
                given = rec.get("parts", [])
                if not isinstance(given, list) or not all(isinstance(part, list) for part in given):
                    raise TypeError(f"'parts' is {json.dumps(given)[:60]}")
                parts = [set(map(str, part)) for part in given]
                if not isinstance(rec["question"], str):  # a null would be scored as the question "None"
                    raise TypeError(f"'question' is {json.dumps(rec['question'])[:60]}, not a string")
                if not words(rec["question"]):
                    raise LabelError(f"{p}:{n}: 'question' has no words; give the question's text or remove the line")
                answer, shape = rec.get("answer"), rec.get("shape")
                should_split = rec.get("should_split")
                if should_split is not None and not isinstance(should_split, bool):
                    raise TypeError(f"'should_split' is {json.dumps(should_split)[:60]}, not true, false or null")
                if should_split is None and shape == NULL_SHAPE:
                    should_split = False
                qid = str(rec.get("id", n))
                if qid in first_line:
                    raise LabelError(f"{p}:{n}: id {qid!r} given twice (first on line {first_line[qid]}); each "
                                     "question needs its own id, or none (its line number is then its id)")
                first_line[qid] = n
                out.append(Labeled(qid, rec["question"], parts, should_split,
                                   shape, str(answer) if answer is not None else None, n))
            except json.JSONDecodeError as exc:  # its own "line 1" would be a second line number
                raise LabelError(f"{p}:{n}: not JSON ({exc.msg} at column {exc.colno}); each line is one JSON object "
                                 "with 'question' and 'parts' (a list of lists of document ids)") from None
            except (KeyError, TypeError) as exc:
                raise LabelError(f"{p}:{n}: expected JSON with 'question' and 'parts' (a list of lists of document "
                                 f"ids); {exc.__class__.__name__}: {exc}") from None
    if not out:  # scored, it would build an index for nothing and fail on a log of no rows, or guard nothing
        raise LabelError(f"{p}: holds no labeled question; write one JSON object a line with 'question' and "
                         "'parts' (a list of lists of document ids)")
    return out


def check_parts(labeled: list[Labeled], held: Collection[str], source: str) -> None:
    """Every document a label's parts name is `held` (the corpus's document ids): a typo would only score its
    question as missed."""
    unknown = unheld_parts(labeled, held)
    if unknown:
        line = f":{unknown[0][1]}" if unknown[0][1] else ""
        raise LabelError(f"{source}{line}: {unheld_text(unknown)}; fix the ids or pass the corpus the labels were "
                         "made for")


def unheld_parts(labeled: list[Labeled], held: Collection[str]) -> list[tuple[str, int, list[str]]]:
    """(question id, its line, the documents it names that are not `held`), for each part naming one."""
    held = set(held)
    return [(q.id, q.line, sorted(part - held)) for q in labeled for part in q.parts if part - held]


def unheld_text(unknown: list[tuple[str, int, list[str]]]) -> str:
    shown = "; ".join(f"{'line ' + str(line) + ', ' if line else ''}question {qid}: {', '.join(ids)}"
                      for qid, line, ids in unknown[:5])
    return f"{len(unknown)} part(s) name documents the corpus does not hold ({shown})"


def questions_as_log(labeled: list[Labeled], path: Path, ts: str) -> Path:
    """Each labeled question becomes one log row of its own user."""
    with path.open("w", encoding="utf-8") as fh:
        for q in labeled:
            fh.write(json.dumps({"ts": ts, "user": f"eval-{q.id}", "query": q.question}) + "\n")
    return path


def by_id_hash(labeled: list[Labeled]) -> list[Labeled]:
    """The questions sorted by the SHA-256 of their id: an order the same on every run and machine."""
    return sorted(labeled, key=lambda q: hashlib.sha256(q.id.encode("utf-8")).hexdigest())


def split_folds(labeled: list[Labeled], k: int) -> list[tuple[list[Labeled], list[Labeled]]]:
    """(the questions mined, the questions scored) of each of `k` folds: every question is scored once, by plans
    mined from the other folds' questions alone (out of sample). A question's fold follows a hash of its id, so it
    is the same on every run and machine; a question whose text another fold also holds is not mined there."""
    if not 2 <= k <= len(labeled):
        raise LabelError(f"--folds {k}: a labeled set of {len(labeled)} question(s) takes 2 to {len(labeled)} folds; "
                         "give a number in that range, or --in-sample")
    order = by_id_hash(labeled)
    folds = [order[i::k] for i in range(k)]
    out = []
    for i, scored in enumerate(folds):
        asked = {q.question.strip().casefold() for q in scored}
        others = [q for j, fold in enumerate(folds) if j != i for q in fold]
        out.append(([q for q in others if q.question.strip().casefold() not in asked], scored))
    return out


def half(labeled: list[Labeled], which: str, source: str | Path) -> list[Labeled]:
    """The dev or test half of a labeled set: the ids `split.json` beside it lists under `which`, else the same
    rule it states: the questions sorted by the SHA-256 of their id, the first half dev, the second test."""
    split = Path(source).parent / "split.json"
    if split.is_file():
        chosen = set(json.loads(split.read_text(encoding="utf-8")).get(which, []))
    else:
        order = by_id_hash(labeled)
        cut = (len(order) + 1) // 2
        chosen = {q.id for q in (order[:cut] if which == "dev" else order[cut:])}
    out = [q for q in labeled if q.id in chosen]
    if not out:
        raise LabelError(f"{split if split.is_file() else source}: no question of the {which} half; list their ids "
                         f"under {which!r} in split.json, or leave --half out")
    return out


def sample_note(in_sample: bool, folds: int, logs: str | None) -> str:
    """What the figures are: in sample, or out of sample and how."""
    if in_sample:
        return ("in sample: the plans were mined from the very questions scored, so every question's shape was "
                "seen before it was scored (an upper bound, not what a new question gets)")
    if logs is not None:
        return f"out of sample: the plans were mined from the log {logs}, none from the questions scored"
    return (f"out of sample: {folds} folds; each question was scored by plans mined from the other folds' "
            "questions")


def _doc(chunk_id: str) -> str:
    return chunk_id.split("#", 1)[0]


def doc_facets(index: Index) -> dict[str, dict[str, str]]:
    """Document id -> its facet values as text (the first chunk's; a document's chunks share them)."""
    names = index.config.facet_names
    t = index.columns(["doc_id", *names]).to_pylist()
    out: dict[str, dict[str, str]] = {}
    for row in t:
        out.setdefault(row["doc_id"], {f: str(row[f]) for f in names if row[f] not in (None, "")})
    return out


def bridge_right(run: Retrieved, parts: list[set[str]], facets: dict[str, dict[str, str]],
                 answer: str | None = None) -> bool | None:
    """Whether every step-answer slot the extractor filled is right (a refusal is wrong): a facet value names a
    value of the gold parts' documents; a name is part of the label's answer ("Bankman-Fried" of "Sam
    Bankman-Fried"). None when the plan extracts nothing or the label cannot tell."""
    judged = []
    for step in run.parts:
        if step.answer_kind == "name":
            if answer:
                judged.append(step.answer is not None and f" {words(step.answer)} " in f" {words(answer)} ")
            continue
        if step.answer_facet is None:
            continue
        gold = {facets.get(d, {}).get(step.answer_facet) for part in parts for d in part} - {None}
        if gold:
            judged.append(step.answer in gold)
    return all(judged) if judged else None


def template_sound(cache: PlanCache, shape_id: str | None) -> bool | None:
    """The question's template passed validation and the constraint check, with no fallback (None: no shape)."""
    tpl = cache.templates.get(shape_id or "")
    if tpl is None:
        return None
    return bool(tpl["valid"] and tpl["check_ok"] and not tpl.get("fallback"))


def _filled(cache: PlanCache, q: Labeled, res: LookupResult) -> Plan | None:
    """The shape's template filled with the question's values, in the question's words (None: no shape)."""
    tpl = cache.templates.get(res.shape_id or "")
    if tpl is None or res.skeleton is None:
        return None
    sk = cache.lexicon.skeleton(cache.scrub(q.question))
    return fill_slots(Plan.model_validate_json(tpl["template"]), sk.slots)


def _plans(cache: PlanCache, filled: Plan | None, res: LookupResult) -> tuple[Plan | None, Plan | None, bool]:
    """The rule plan (the shape's template filled, whatever its route, in the words its evaluation chose),
    the routed plan, keep-original."""
    rule_plan = filled
    if filled is not None and res.shape_id and cache.uses_vocabulary(res.shape_id):
        rule_plan = worded(filled, cache.vocabulary)
    routed = Plan.model_validate(res.plan) if res.plan else None
    return rule_plan, routed, bool(res.plan and res.plan.get("keep_original"))


def labeled_plans(cache: PlanCache, q: Labeled, res: LookupResult) -> tuple[Plan | None, Plan | None, bool]:
    """A labeled question's rule plan, routed plan and keep-original, as `evaluate` runs them."""
    return _plans(cache, _filled(cache, q, res), res)


def _score(a: dict[str, float], q: Labeled, run: Retrieved, system: str, sound: bool | None,
           bridge: bool | None) -> float:
    """Add one question's outcome to an accumulator; returns its part coverage."""
    docs = {_doc(c) for c in run.context}
    covered = [bool(part & docs) for part in q.parts]
    cov = sum(covered) / len(covered) if covered else 1.0
    steps = 0 if system == "one-search" else sum(p.id != "original" for p in run.parts)
    planned, split = steps > 0, steps > 1  # the whole question's search (kept or topping up) is no step
    a["n"] += 1
    a["part_coverage"] += cov
    a["all_parts"] += all(covered)
    a["searches"] += run.searches
    a["split_against_label"] += split and q.should_split is False
    a["missed_splits"] += (not split) and q.should_split is True
    a["labeled_splits"] += q.should_split is not None
    a["multi_step"] += split
    a["plans"] += planned
    a["plan_steps"] += steps
    if system != "one-search" and sound is not None:
        a["templates"] += 1
        a["templates_sound"] += sound
    if bridge is not None:
        a["bridges"] += 1
        a["bridges_right"] += bridge
    return cov


def subquery_coverage(plan: Plan, q: Labeled, index: Index, budget: int) -> float | None:
    """Part coverage of a plan's partitioned sub-queries run without their filters, each to its share of the
    budget; None when the plan has no such sub-query or the question no parts."""
    found = partition_reach(plan, index, evidence_depth(budget, len(plan.steps)))
    if not found or not q.parts:
        return None
    docs = {_doc(h.id) for _, hits in found for h in hits}
    return sum(bool(part & docs) for part in q.parts) / len(q.parts)


def _wording(cache: PlanCache, q: Labeled, own: Plan | None, index: Index, budget: int
             ) -> tuple[float, float, bool] | None:
    """The question's filled template: coverage of its sub-queries unfiltered in the question's words, in the
    corpus's words, and whether the vocabulary changed any; None without partitioned sub-queries."""
    if own is None:
        return None
    corpus = worded(own, cache.vocabulary)
    before = subquery_coverage(own, q, index, budget)
    if before is None:
        return None
    after = before if corpus == own else subquery_coverage(corpus, q, index, budget)
    return before, before if after is None else after, corpus != own


def _vocabulary_row(shape: str, a: dict[str, float]) -> dict[str, Any]:
    n = a["n"]
    return {"shape": shape, "n": int(n), "changed": int(a["changed"]),
            "question_words": round(a["question_words"] / n, 3), "corpus_words": round(a["corpus_words"] / n, 3)}


def _ratio(num: float, den: float, digits: int) -> float | None:
    return round(num / den, digits) if den else None


def _row(system: str, shape: str, a: dict[str, float]) -> dict[str, Any]:
    n = a["n"]
    return {"system": system, "shape": shape, "n": int(n), "part_coverage": round(a["part_coverage"] / n, 3),
            "all_parts": round(a["all_parts"] / n, 3), "all_parts_count": int(a["all_parts"]),
            "searches_per_question": round(a["searches"] / n, 2),
            # against no label (no question says should_split), a count of 0 would read as a result
            "split_against_label": int(a["split_against_label"]) if a["labeled_splits"] else None,
            "missed_splits": int(a["missed_splits"]) if a["labeled_splits"] else None,
            "labeled_splits": int(a["labeled_splits"]), "multi_step": int(a["multi_step"]),
            "bridge_accuracy": _ratio(a["bridges_right"], a["bridges"], 3), "bridges": int(a["bridges"]),
            "bridges_right": int(a["bridges_right"]),
            "plan_validity": _ratio(a["templates_sound"], a["templates"], 3), "templates": int(a["templates"]),
            "steps_per_plan": _ratio(a["plan_steps"], a["plans"], 2), "plans": int(a["plans"])}


def evaluate(labeled: list[Labeled], caches: PlanCache | Mapping[str, PlanCache], index: Index, budget: int, k: int,
             merge: str = "round_robin", systems: tuple[str, ...] = SYSTEMS, rerank: bool = False) -> dict[str, Any]:
    """Rows of {system, shape, n, part_coverage, all_parts, searches_per_question, split_against_label,
    missed_splits, labeled_splits, multi_step, bridge_accuracy, plan_validity, steps_per_plan}, per shape and
    "ALL"; plus per-question detail and notes on what the rows cannot say. Only `systems` are run. `caches`: the
    publication every question is looked up in, or question id -> its fold's (`split_folds`)."""
    acc: dict[tuple[str, str], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    words_acc: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    facets = doc_facets(index)
    detail = []
    for q in labeled:
        cache = caches[q.id] if isinstance(caches, Mapping) else caches
        res = lookup(cache, q.question)  # a miss planned by its class where the config says so
        shape = q.shape or res.shape_type or "unknown"
        filled = _filled(cache, q, res)
        rule_plan, routed, keep = _plans(cache, filled, res)
        wording = _wording(cache, q, filled, index, budget) if "rules" in systems else None
        if wording is not None:
            for key in (shape, "ALL"):
                a = words_acc[key]
                a["n"] += 1
                a["changed"] += wording[2]
                a["question_words"] += wording[0]
                a["corpus_words"] += wording[1]
        sound = template_sound(cache, res.shape_id)
        calls = {  # system: plan, per-step k, keep the original question, merge
            "one-search": (None, budget, False, "round_robin"),
            "rules": (rule_plan, k, False, merge),
            "routed": (routed, k, keep, merge),
            "routed+original": (routed, k, routed is not None, merge),
        }
        runs = {system: retrieve(q.question, plan, index, cache.lexicon, budget, kk, original, how, rerank)
                for system, (plan, kk, original, how) in calls.items() if system in systems}
        row: dict[str, Any] = {"id": q.id, "question": q.question, "shape": shape, "route": res.route,
                               "shape_type": res.shape_type, "template_sound": sound}
        for system, run in runs.items():
            bridge = bridge_right(run, q.parts, facets, q.answer)
            for key in (shape, "ALL"):
                cov = _score(acc[(system, key)], q, run, system, sound, bridge)
            row[system] = {"coverage": cov, "context": run.context, "searches": run.searches, "bridge_right": bridge}
        detail.append(row)
    rows = [_row(system, shape, a) for (system, shape), a in
            sorted(acc.items(), key=lambda x: (SYSTEMS.index(x[0][0]), x[0][1] != "ALL", x[0][1]))]
    vocabulary = [_vocabulary_row(shape, a) for shape, a in sorted(words_acc.items(),
                                                                  key=lambda x: (x[0] != "ALL", x[0]))]
    return {"rows": rows, "questions": detail, "merge": merge, "rerank": rerank, "vocabulary": vocabulary,
            "search": index.config.planning.search, "notes": notes(labeled)}


def notes(labeled: list[Labeled]) -> list[str]:
    """What the rows of a labeled set cannot say."""
    return [] if any(q.should_split is not None for q in labeled) else [NO_SPLIT_LABELS]


NO_SPLIT_LABELS = ("no question of the set says should_split (or has the shape \"null\"): split_against_label and "
                   "missed_splits are null; multi_step counts the questions a plan of two or more steps served")


_MEASURES = (("part_coverage", "part coverage"), ("all_parts", "all-parts rate"))


def check_plot(path: Path) -> None:
    """A --plot path eval can write its figure to, checked before the build: after it, a refusal would cost the
    run and its scores. Its suffix names the format (none would make matplotlib write another file)."""
    from matplotlib.figure import Figure

    kinds = Figure().canvas.get_supported_filetypes()
    if path.is_dir():
        raise LabelError(f"--plot {path}: is a folder; pass a file name such as {path / 'eval.png'}")
    if path.suffix.lower().lstrip(".") not in kinds:
        raise LabelError(f"--plot {path}: expected an image file name such as eval.png (formats: "
                         f"{', '.join(sorted(kinds))})")
    parent = next((p for p in path.parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise LabelError(f"--plot {path}: {parent} is a file, not a folder; pass a path in a folder")


def plot_rows(rows: list[dict[str, Any]], path: Path, title: str) -> Path:
    """Grouped bars, one panel per measure: per question type (and ALL), the systems side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    systems = [s for s in SYSTEMS if any(r["system"] == s for r in rows)]
    shapes = sorted({r["shape"] for r in rows}, key=lambda s: (s != "ALL", s))
    value = {(r["system"], r["shape"], m): r[m] for r in rows for m, _ in _MEASURES}
    width = 0.8 / max(len(systems), 1)
    fig, axes = plt.subplots(1, len(_MEASURES), figsize=(5 + 1.3 * len(shapes), 3.8), sharey=True)
    for ax, (measure, label) in zip(axes, _MEASURES, strict=True):
        for i, system in enumerate(systems):
            xs = [n + (i - (len(systems) - 1) / 2) * width for n in range(len(shapes))]
            ax.bar(xs, [value.get((system, s, measure), 0.0) for s in shapes], width, label=system)
        n_of = {r["shape"]: r["n"] for r in rows}
        ax.set_xticks(range(len(shapes)), [f"{s}\n(n={n_of[s]})" for s in shapes], fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_title(label)
        ax.grid(axis="y", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(systems), fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _cell(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def markdown_vocabulary(rows: list[dict[str, Any]]) -> list[str]:
    """Sub-queries without their filters, in the question's words and in the corpus's: part coverage."""
    out = ["| shape | questions | changed by the vocabulary | question's words | corpus's words |",
           "|---|---|---|---|---|"]
    out += [f"| {r['shape']} | {r['n']} | {r['changed']} | {r['question_words']:.3f} | {r['corpus_words']:.3f} |"
            for r in rows]
    return out


def markdown_rows(rows: list[dict[str, Any]]) -> list[str]:
    """The rows as a Markdown table, as BENCHMARKS.md records them."""
    out = ["| system | shape | n | part coverage | all parts | searches/q | multi-step | split vs label "
           "| missed splits | bridge accuracy | plan validity | steps/plan |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        bridge = f"{r['bridges_right']}/{r['bridges']}" if r["bridges"] else "-"
        out.append(f"| {r['system']} | {r['shape']} | {r['n']} | {r['part_coverage']:.3f} | "
                   f"{r['all_parts']:.3f} ({r['all_parts_count']}/{r['n']}) | {r['searches_per_question']:.2f} | "
                   f"{r['multi_step']} | {_cell(r['split_against_label'], 'd')} | {_cell(r['missed_splits'], 'd')} | "
                   f"{bridge} | {_cell(r['plan_validity'], '.2f')} | {_cell(r['steps_per_plan'], '.2f')} |")
    return out
