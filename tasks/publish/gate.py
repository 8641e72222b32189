"""The quality gate: before the pointer switches, measure the staged run and compare it with the last publication.

Figures, each a share in [0, 1]:
- validity: templates that pass validation and the constraint check;
- fallbacks: templates a model failed to write, written by the rule writer instead;
- cache coverage: questions of the last logged day that have a recurring shape (their key hits the cache);
- quarantined: log rows of the mined window that were bad (a log whose format changed turns many rows bad);
- route changes: shapes in both runs whose route differs;
- without labels (`tasks.publish.drift`), against the last publication: chunks deleted and facet values lost from
  the index, the mean measured coverage of the routes of the shapes in both runs, and cache hits whose plan changed;
- per labeled set (config `labeled:`), the routed system as `planbake eval` scores it: part coverage, all-parts
  rate, and each question's part coverage.

Every run must clear the floors of config `gate:`; when something is published, no figure may regress beyond
its limit. A run that fails is not published unless forced, and the verdict says so either way.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq

from schemas.config import Config, Gate
from schemas.digest import text_digest
from schemas.files import GATE, QUESTIONS, TEMPLATES, Manifest
from schemas.publication import NEEDED, index_location, run_root
from schemas.sql import sql_files
from tasks.evaluate import Labeled, read_labeled
from tasks.publish import drift

EPS = 1e-9




@dataclass
class LabeledSet:
    name: str  # for people: folder/file
    key: str  # path and content hash: a baseline is only compared with the same questions
    questions: list[Labeled]


@dataclass
class Check:
    name: str
    value: float | None
    last: float | None
    limit: str
    ok: bool = True
    detail: str = ""


@dataclass
class Verdict:
    checks: list[Check]
    baseline: str | None  # run id of the last publication; None on a first run
    forced: bool = False
    enabled: bool = True

    @property
    def regressions(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    @property
    def decision(self) -> str:
        if not self.enabled:
            return "disabled"
        if not self.regressions:
            return "passed"
        return "forced" if self.forced else "rejected"

    @property
    def rejected(self) -> bool:
        return self.decision == "rejected"

    def to_json(self) -> dict[str, Any]:
        return {"decision": self.decision, "forced": self.forced, "baseline": self.baseline,
                "regressions": [c.name for c in self.regressions], "checks": [asdict(c) for c in self.checks]}

    def message(self, run_id: str, kept: Path) -> str:
        live = f"{self.baseline} stays live" if self.baseline else "nothing is published"
        failed = "; ".join(f"{c.name} {_fmt(c.value)} (last {_fmt(c.last)}; limit {c.limit})"
                           + (f": {c.detail}" if c.detail else "") for c in self.regressions)
        return (f"quality gate: run {run_id} not published, {live}. Failed checks: {failed}. "
                f"Report: {kept / 'report' / 'report.md'}. Pass --force to publish anyway.")


def labeled_set(path: str | Path, where: str = "") -> LabeledSet:
    """A questions JSONL file, or a benchmark folder holding questions.jsonl; `where`: the config line naming it."""
    p = Path(path)
    if p.is_dir():
        p = p / "questions.jsonl"
    questions = read_labeled(p, option=f"the config's `labeled:` entry{where}")
    digest = text_digest(p.read_bytes(), 16)
    return LabeledSet(f"{p.parent.name}/{p.name}", f"{p.resolve()}#{digest}", questions)


@dataclass
class QualityGate:
    """Built before a run starts (a bad labeled set fails before any work); `judge` decides at its end."""

    config: Config
    force: bool = False
    sets: list[LabeledSet] = field(init=False)

    def __post_init__(self) -> None:
        where = self.config.where("labeled")
        self.sets = [labeled_set(p, where) for p in self.config.labeled] if self.config.gate.enabled else []

    def judge(self, staging: Path, manifest: Manifest, prev_dir: Path | None, prev_manifest: Manifest) -> Verdict:
        """Measure the staged run (its manifest already in `staging`), write its figures, compare."""
        if not self.config.gate.enabled:
            return Verdict([], prev_dir.name if prev_dir else None, self.force, enabled=False)
        mined = "mine" in manifest.get("stages_run", ["mine"])  # a stage run alone carries the last mine over
        new = {**self.measure(staging, manifest.get("index")),
               "quarantined": quarantined(manifest.get("mine")) if mined else None}
        last = self.baseline(prev_dir, prev_manifest) if prev_dir is not None else None
        if prev_dir is not None:
            new |= {"route_changes": route_changes(staging, prev_dir),
                    "index_change": asdict(drift.index_change(staging, prev_dir, self.config)),
                    "route_coverage": asdict(drift.route_coverage(staging, prev_dir)),
                    "plan_changes": asdict(drift.plan_changes(staging, prev_dir))}
        (staging / GATE.name).write_text(json.dumps(new, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return Verdict(compare(new, last, self.config.gate), prev_dir.name if prev_dir else None, self.force)

    def measure(self, run_dir: Path, index: dict[str, Any] | None) -> dict[str, Any]:
        figures: dict[str, Any] = {**template_figures(run_dir), "cache_coverage": cache_coverage(run_dir)}
        figures["labeled"] = {s.key: self.score(run_dir, index, s) for s in self.sets}
        return figures

    def baseline(self, prev_dir: Path, prev_manifest: Manifest) -> dict[str, Any]:
        """The last publication's figures: its stored labeled scores, or scored now when it has none for a set."""
        stored = {}
        if (prev_dir / GATE.name).exists():
            stored = json.loads((prev_dir / GATE.name).read_text(encoding="utf-8")).get("labeled", {})
        figures: dict[str, Any] = {**template_figures(prev_dir), "cache_coverage": cache_coverage(prev_dir),
                                   "quarantined": quarantined(prev_manifest.get("mine"))}
        figures["labeled"] = {s.key: stored.get(s.key) or self._rescore(prev_dir, prev_manifest, s) for s in self.sets}
        return figures

    def _rescore(self, prev_dir: Path, prev_manifest: Manifest, labeled: LabeledSet) -> dict[str, Any] | None:
        """A set the last publication was not scored on (added since): score it now, or hold it to the floors."""
        try:
            return self.score(prev_dir, prev_manifest.get("index"), labeled)
        except Exception as exc:  # noqa: BLE001 - e.g. its index version was cleaned up
            logging.getLogger("planbake").warning("%s: no baseline from %s: %s", labeled.name, prev_dir.name, exc)
            return None

    def score(self, run_dir: Path, index: dict[str, Any] | None, labeled: LabeledSet) -> dict[str, Any] | None:
        """The routed system on one labeled set, against this run's cache and index (None without a cache)."""
        from schemas.cache import PlanCache
        from tasks.evaluate import doc_facets, evaluate, unheld_parts, unheld_text
        from tasks.index.store import Index

        if not index or not labeled.questions or not all((run_dir / f).exists() for f in NEEDED["plan"]):
            return None
        p = self.config.planning
        searched = Index(index_location(index, run_root(run_dir)), self.config, index["version"])
        res = evaluate(labeled.questions, PlanCache(run_dir), searched,
                       p.budget, p.per_step_k, p.merge, systems=("routed",), rerank=p.rerank)
        total = next(r for r in res["rows"] if r["shape"] == "ALL")
        # parts no search can cover: a document removed from the corpus, or a label's typo
        unheld = unheld_parts(labeled.questions, doc_facets(searched).keys())
        return {"name": labeled.name, "part_coverage": total["part_coverage"], "all_parts": total["all_parts"],
                "questions": {q["id"]: q["routed"]["coverage"] for q in res["questions"]},
                **({"unheld": unheld_text(unheld)} if unheld else {})}


def template_figures(run_dir: Path) -> dict[str, float | None]:
    path = run_dir / TEMPLATES.name
    rows = pq.read_table(path, columns=["valid", "check_ok", "fallback"]).to_pylist() if path.exists() else []
    if not rows:
        return {"validity": None, "fallbacks": None}
    return {"validity": _share(sum(bool(r["valid"] and r["check_ok"]) for r in rows), len(rows)),
            "fallbacks": _share(sum(bool(r["fallback"]) for r in rows), len(rows))}


def quarantined(mine: dict[str, Any] | None) -> float | None:
    """Share of the mined window's log rows that went to quarantine (None: nothing mined)."""
    if not mine or mine.get("rows") is None or mine.get("quarantined") is None:
        return None
    total = int(mine["rows"]) + int(mine["quarantined"])
    return _share(int(mine["quarantined"]), total) if total else None


def cache_coverage(run_dir: Path) -> float | None:
    """Share of the last logged day's questions that have a recurring shape (as the report counts it)."""
    path = run_dir / QUESTIONS.name
    if not path.exists():
        return None
    with duckdb.connect() as con:
        hit, n = con.execute(f"""
            WITH q AS (SELECT shape_id, CAST(ts AS DATE) AS day FROM read_parquet({sql_files([str(path)])}))
            SELECT count(shape_id), count(*) FROM q WHERE day = (SELECT max(day) FROM q)""").fetchall()[0]
    return _share(hit, n) if n else None


def route_changes(new_dir: Path, prev_dir: Path) -> float | None:
    """Share of the shapes in both runs whose route differs."""
    new, old = _routes(new_dir), _routes(prev_dir)
    both = new.keys() & old.keys()
    return _share(sum(new[s] != old[s] for s in both), len(both)) if both else None


def compare(new: dict[str, Any], last: dict[str, Any] | None, g: Gate) -> list[Check]:
    """The checks, in report order: floors always, limits against `last` when there is one."""
    prev = last or {}
    checks = [
        _check("plan validity", new.get("validity"), prev.get("validity"), floor=g.min_validity,
               drop=g.max_validity_drop),
        _check("fallbacks", new.get("fallbacks"), prev.get("fallbacks"), rise=g.max_fallback_rise),
        _check("cache coverage (last day)", new.get("cache_coverage"), prev.get("cache_coverage"),
               drop=g.max_cache_coverage_drop),
        _check("quarantined log rows", new.get("quarantined"), prev.get("quarantined"), rise=g.max_quarantine_rise,
               cap=g.max_quarantined),
    ]
    if last is not None:
        checks.append(_check("route changes", new.get("route_changes"), None, cap=g.max_route_change))
        checks += _drift_checks(new, g)
    old_sets = prev.get("labeled", {})
    for key, fig in new.get("labeled", {}).items():
        if fig is None:
            continue
        was = old_sets.get(key) or {}
        name = fig["name"]
        first = len(checks)  # this set's checks start here
        checks += [
            _check(f"{name}: part coverage", fig["part_coverage"], was.get("part_coverage"),
                   floor=g.min_part_coverage, drop=g.max_part_coverage_drop),
            _check(f"{name}: all parts", fig["all_parts"], was.get("all_parts"), floor=g.min_all_parts,
                   drop=g.max_all_parts_drop),
        ]
        if was:
            checks.append(_questions(f"{name}: questions losing coverage", fig["questions"], was["questions"],
                                     g.max_question_drop))
        for check in checks[first:]:  # why a set's figures fell: documents its labels name are gone
            if not check.ok and fig.get("unheld"):
                why = f"{fig['unheld']}: fix the ids, or restore the documents"
                check.detail = f"{check.detail}; {why}" if check.detail else why
    return checks


def _drift_checks(new: dict[str, Any], g: Gate) -> list[Check]:
    """The label-free checks against the last publication (see `tasks.publish.drift`)."""
    index = new.get("index_change") or {}
    deleted = _check("chunks deleted", index.get("chunks_deleted"), None, cap=g.max_chunks_deleted)
    if index.get("deleted"):
        deleted.detail = f"{index['deleted']} of the last publication's {index['chunks']} chunks are gone"
    lost = index.get("facet_values_lost") or {}
    values = _check("facet values lost", float(sum(map(len, lost.values()))) if index else None, None,
                    cap=g.max_facet_values_lost)
    values.detail = "; ".join(f"{facet}: {drift.more(v)} (no chunk holds them now)" for facet, v in lost.items())
    cov = new.get("route_coverage") or {}
    coverage = _check("route coverage (measured)", cov.get("value"), cov.get("last"), drop=g.max_route_coverage_drop)
    if not coverage.ok:
        coverage.detail = "shapes losing coverage: " + drift.more([f"'{sk}' {a:g} -> {b:g}"
                                                                   for sk, a, b in cov.get("dropped", [])])
    plans = new.get("plan_changes") or {}
    changed = _check("plan changes (cache hits)", plans.get("value"), None, cap=g.max_plan_change)
    if plans.get("changed"):
        changed.detail = f"{plans['changed']} of {plans['keys']} cache keys in both runs got another route or plan"
    return [deleted, values, coverage, changed]


def _check(name: str, value: float | None, last: float | None, *, floor: float = 0.0, drop: float | None = None,
           rise: float | None = None, cap: float | None = None) -> Check:
    limits, ok = [], True
    if floor > 0:
        limits.append(f">= {floor:g}")
        ok = value is None or value >= floor - EPS
    if drop is not None:
        limits.append(f"drop <= {drop:g}")
        ok = ok and (value is None or last is None or last - value <= drop + EPS)
    if rise is not None:
        limits.append(f"rise <= {rise:g}")
        ok = ok and (value is None or last is None or value - last <= rise + EPS)
    if cap is not None:
        limits.append(f"<= {cap:g}")
        ok = ok and (value is None or value <= cap + EPS)
    return Check(name, value, last, ", ".join(limits), ok)


def _questions(name: str, new: dict[str, float], last: dict[str, float], max_drop: float) -> Check:
    """Labeled questions whose part coverage fell by more than `max_drop`; any one fails the check."""
    lost = [(q, last[q], cov) for q, cov in new.items() if q in last and last[q] - cov > max_drop + EPS]
    detail = ", ".join(f"question {q}: {a:g} -> {b:g}" for q, a, b in lost)
    return Check(name, float(len(lost)), None, f"none drops by more than {max_drop:g}", not lost, detail)


def _routes(run_dir: Path) -> dict[str, str]:
    path = run_dir / TEMPLATES.name
    if not path.exists():
        return {}
    t = pq.read_table(path, columns=["shape_id", "route"])
    return dict(zip(t.column("shape_id").to_pylist(), t.column("route").to_pylist(), strict=True))


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:g}"


def report_lines(gate: dict[str, Any] | None) -> list[str]:
    """The report's "Quality gate" section, from the manifest's `gate` entry."""
    if not gate or gate["decision"] == "disabled":
        return []
    head = {
        "passed": "passed",
        "rejected": "**rejected**: this run was not published; the last publication stays live",
        "forced": "**failed, published anyway with --force**",
    }[gate["decision"]]
    if gate["forced"] and gate["decision"] == "passed":
        head += " (--force was given and not needed)"
    against = f"the last publication, {gate['baseline']}" if gate["baseline"] else "floors only (first run)"
    lines = ["## Quality gate", f"{head}. Compared with {against}; limits under `gate:` in the config.", "",
             "| check | last publication | this run | limit | result |", "|---|---|---|---|---|"]
    for c in gate["checks"]:
        result = "ok" if c["ok"] else "**regressed**"
        lines.append(f"| {c['name']} | {_fmt(c['last'])} | {_fmt(c['value'])} | {c['limit']} | {result} |")
    details = [f"- {c['name']}: {c['detail']}" for c in gate["checks"] if c["detail"]]
    return lines + [""] + (details + [""] if details else [])
