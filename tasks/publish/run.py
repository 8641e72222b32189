"""A run's staging area and its atomic publication, shared by every flow."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemas.config import Bill, Retention
from schemas.errors import GateRejected
from schemas.files import GATE, MANIFEST, Manifest, Stage
from schemas.publication import index_location, read_manifest
from tasks.index.store import drop_versions, tag_version
from tasks.publish.gate import QualityGate, Verdict
from tasks.publish.report import write_report
from tasks.publish.root import (
    STAGE_FILES,
    baseline,
    carry_over,
    discard,
    flush_tree,
    keep_rejected,
    new_run_id,
    prune,
    publish,
    stage_dir,
    write_manifest,
)


@dataclass
class Run:
    """Outputs go to a staging directory; `finish` publishes it whole, `abort` throws it away."""

    out: Path
    config_path: str
    run_id: str = field(default_factory=new_run_id)
    manifest: Manifest = field(default_factory=lambda: Manifest())
    stages: list[Stage] = field(default_factory=list)
    bill: Bill = field(default_factory=Bill)
    retention: Retention = field(default_factory=Retention)
    redoes_all: bool = False  # runs every stage: a damaged live publication is no obstacle (see `baseline`)

    def __post_init__(self) -> None:
        self.started = time.time()
        self.prev_dir, self.prev_manifest, self.warning = baseline(self.out, self.redoes_all)
        self.staging = stage_dir(self.out, self.run_id)

    def record(self, stage: Stage, section: dict[str, Any]) -> None:
        self.stages.append(stage)
        self.manifest[stage] = section

    def finish(self, table: str, gate: QualityGate | None = None) -> Path:
        carried = [s for s in STAGE_FILES if s not in self.stages]
        carry_over(self.prev_dir, self.staging, carried)
        prev = self.prev_manifest
        made_by: dict[str, str] = {stage: self.run_id for stage in self.stages}  # whose outputs each stage's are
        ran_before = prev.get("stages_run", [])
        for stage in carried:
            if stage in prev:
                self.manifest[stage] = prev[stage]
                # a manifest from before `made_by` tells only whether its own run made the stage
                by = prev.get("made_by", {}).get(stage) or (prev.get("run_id") if stage in ran_before else None)
                if by:
                    made_by[stage] = str(by)
        # a run that does not plan keeps the plans and their config.json: the config they were made with ("":
        # not known)
        self.manifest["plans_config"] = self.config_path if "plan" in self.stages else (
            prev["plans_config"] if "plans_config" in prev else prev.get("config", "") if "plan" in ran_before
            else "")
        self.manifest["made_by"] = dict(sorted(made_by.items()))
        for key in ("lexicon_hash",):
            if key not in self.manifest and key in self.prev_manifest:
                self.manifest[key] = self.prev_manifest[key]
        self.manifest["stages_run"] = self.stages
        self.manifest["previous"] = self.prev_dir.name if self.prev_dir else None
        self.manifest["config"] = self.config_path
        verdict = self._judge(gate) if gate is not None else None
        write_report(self.staging, {**self.manifest, "run_id": self.run_id}, self.bill)
        if verdict is not None and verdict.rejected:
            self._reject(verdict)
        index = self.manifest.get("index")
        if index and "index" in self.stages:
            uri = index_location(index, self.out)
            tag_version(uri, table, self.run_id, index["version"])
            index["tag"] = self.run_id
            if "://" not in uri and Path(uri).is_dir():  # this run's table files, on disk
                flush_tree(Path(uri), since=self.started - 2)  # 2 s: a coarse file system clock
        final = publish(self.out, self.staging, self.manifest)
        self._prune(index, table, indexed="index" in self.stages)
        return final

    def _prune(self, index: dict[str, Any] | None, table: str, indexed: bool = False) -> None:
        """Retention: the oldest runs go, and with them the table tags only they named and the untagged old
        versions (see drop_versions); the embedding shards too once this run's index is published (`indexed`).
        Published already: a failure here is a warning."""
        try:
            before = _index_tags(Path(self.out) / "runs")
            prune(self.out, self.retention.runs, self.retention.rejected, self.retention.embed_cache_days,
                  indexed=indexed)
            after = _index_tags(Path(self.out) / "runs")
            if index:
                gone = {t for t in before.values() if t} - set(after.values())
                # what stays tagged: the runs under runs/ (and the tags their manifests name) and those kept under
                # rejected/; any other run's tag is one a killed run left (see drop_versions)
                live = {t for t in after.values() if t} | {
                    p.name for folder in ("runs", "rejected") if (Path(self.out) / folder).is_dir()
                    for p in (Path(self.out) / folder).iterdir() if p.is_dir() and not p.name.startswith(".")}
                drop_versions(index_location(index, self.out), table, sorted(gone), live)
        except Exception as exc:  # noqa: BLE001 - the publication stands; the next one prunes again
            logging.getLogger("planbake").warning("retention: old runs or index versions not removed (%s)", exc)

    def _judge(self, gate: QualityGate) -> Verdict:
        """The quality gate's verdict, recorded in the manifest (the staged cache reader needs one on disk)."""
        write_manifest(self.staging, {**self.manifest, "run_id": self.run_id})
        verdict = gate.judge(self.staging, self.manifest, self.prev_dir, self.prev_manifest)
        self.manifest["gate"] = verdict.to_json()
        return verdict

    def _reject(self, verdict: Verdict) -> None:
        """Keep the report where people can read it; the staging directory goes with `abort`."""
        kept = keep_rejected(self.out, self.staging, {**self.manifest, "run_id": self.run_id},
                             ("report", GATE.name))
        live = self.prev_manifest.get("index")
        self._prune(live, str(live.get("table", "chunks")) if live else "")
        raise GateRejected(verdict.message(self.run_id, kept), kept)

    def abort(self) -> None:
        discard(self.staging)


def _index_tags(runs: Path) -> dict[str, str | None]:
    """Each publication's run id -> the table tag its manifest names (its own, or one carried over)."""
    out: dict[str, str | None] = {}
    for run in sorted(runs.iterdir()) if runs.is_dir() else []:
        if run.name.startswith(".") or not (run / MANIFEST.name).exists():
            continue
        try:
            out[run.name] = (read_manifest(run).get("index") or {}).get("tag")
        except (OSError, ValueError):
            out[run.name] = None
    return out
