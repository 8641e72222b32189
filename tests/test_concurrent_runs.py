"""Two nightly runs started together as two processes on one publication root: one publishes, the other stops
cleanly (exit 3, busy) or waits its turn; the live publication is never a mix of the two."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from planbake.cli import EXIT_BUSY
from schemas.config import load_config
from schemas.extract import Lexicon
from schemas.publication import current_run, read_manifest
from tasks.index.store import open_table
from tests.conftest import DEMO_CONFIG, ROOT, SEED
from tests.test_poisoning import NORMAL, normal_rows, write_rows

CONFIG = load_config(DEMO_CONFIG)
LEXICON = Lexicon(CONFIG)
# Each run mines its own log, with shapes the other log lacks: a mixed publication would show it.
PHRASINGS = {"a": NORMAL[:3], "b": NORMAL[3:]}


def _logs(tmp: Path) -> dict[str, tuple[Path, set[str], int]]:
    """Per run: its log, the skeletons its shapes may have, and its row count."""
    out = {}
    for name, phrasings in PHRASINGS.items():
        rows = normal_rows(phrasings, prefix=name)
        path = write_rows(tmp / f"log-{name}.jsonl", rows)
        out[name] = (path, {LEXICON.skeleton(q).text for _, q in rows}, len(rows))
    return out


def _env() -> dict[str, str]:
    """The test harness's Prefect API for both processes (so neither starts a server of its own)."""
    from prefect.settings import PREFECT_API_URL

    return {**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value())}


def _start_both(logs: dict[str, tuple[Path, set[str], int]], out: Path, wait_s: float) -> dict[str, Any]:
    """Start the two nightly runs together; return each one's exit code, stdout and stderr."""
    procs = {
        name: subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "planbake"), "nightly", "--corpus", str(SEED / "corpus.jsonl"),
             "--logs", str(log), "--out", str(out), "--wait", str(wait_s), "--json"],
            cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name, (log, _, _) in logs.items()
    }
    done = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=900)
        done[name] = {"code": proc.returncode, "stdout": stdout, "stderr": stderr}
    return done


def _assert_whole(run: Path, logs: dict[str, tuple[Path, set[str], int]]) -> str:
    """Every file of a publication is one run's: its manifest, shapes, templates, cache and index tag agree.
    Returns the name of the log it mined."""
    manifest = read_manifest(run)
    assert manifest["run_id"] == run.name
    name = next(n for n, (log, _, _) in logs.items() if manifest["mine"]["logs"] == str(log))
    _, skeletons, rows = logs[name]
    shapes = pq.read_table(run / "shapes.parquet").to_pylist()
    assert len(shapes) == len(PHRASINGS[name]) and {s["skeleton"] for s in shapes} <= skeletons
    assert manifest["mine"]["rows"] == rows == pq.read_table(run / "questions.parquet").num_rows
    ids = {s["shape_id"] for s in shapes}
    templates = pq.read_table(run / "templates.parquet").to_pylist()
    cache = pq.read_table(run / "cache.parquet").to_pylist()
    assert {t["shape_id"] for t in templates} == ids and {e["shape_id"] for e in cache} <= ids
    assert (manifest["plan"]["templates"], manifest["plan"]["cache_entries"]) == (len(templates), len(cache))
    index = manifest["index"]
    assert pq.read_table(run / "chunks.parquet").num_rows == index["chunks"] == 17
    table = open_table(index["uri"], CONFIG.table)
    assert table is not None and table.tags.list()[run.name]["version"] == index["version"]
    return name


def _assert_stopped_cleanly(proc: dict[str, Any]) -> None:
    assert proc["code"] == EXIT_BUSY, proc
    last = proc["stderr"].strip().splitlines()[-1]
    assert last.startswith("busy:") and "another planbake run is publishing here" in last, proc["stderr"]
    assert "Traceback" not in proc["stderr"], proc["stderr"]  # one clear line, no traceback
    doc = json.loads(proc["stdout"])  # --json: the outcome as a document too; nothing was published
    assert (doc["error"], doc["exit_code"]) == ("busy", EXIT_BUSY) and "publication" not in doc


def _published(proc: dict[str, Any]) -> Path:
    assert proc["code"] == 0, proc["stderr"]
    return Path(json.loads(proc["stdout"])["publication"])


def _runs(out: Path) -> list[Path]:
    assert not list((out / "runs" / ".staging").iterdir())  # nothing half-written is left behind
    return sorted(p for p in (out / "runs").iterdir() if p.name != ".staging")


def test_two_runs_started_together_one_publishes(tmp_path: Path, prefect_harness: None) -> None:
    logs, out = _logs(tmp_path), tmp_path / "out"
    procs = _start_both(logs, out, wait_s=0)
    busy = [n for n, p in procs.items() if p["code"] == EXIT_BUSY]
    if busy:  # the usual case: they overlapped, one stopped at the lock
        assert len(busy) == 1, procs
        _assert_stopped_cleanly(procs[busy[0]])
        (winner,) = (n for n in procs if n not in busy)
        live = _published(procs[winner])
        assert _runs(out) == [live] and current_run(out) == live
        assert _assert_whole(live, logs) == winner
    else:  # the first finished before the second reached the lock: two whole, sequential publications
        runs = {_published(p) for p in procs.values()}
        assert set(_runs(out)) == runs and len(runs) == 2
        assert {_assert_whole(r, logs) for r in runs} == set(PHRASINGS)
        assert read_manifest(current_run(out))["previous"] in {r.name for r in runs}


def test_two_runs_started_together_the_second_waits(tmp_path: Path, prefect_harness: None) -> None:
    logs, out = _logs(tmp_path), tmp_path / "out"
    procs = _start_both(logs, out, wait_s=600)
    runs = {n: _published(p) for n, p in procs.items()}
    assert set(_runs(out)) == set(runs.values())
    for name, run in runs.items():
        assert _assert_whole(run, logs) == name  # each publication whole, the first one untouched by the second
    live = current_run(out)
    first = read_manifest(live)["previous"]
    assert live in runs.values() and first in {r.name for r in runs.values()} and first != live.name
    assert read_manifest(live.parent / first)["previous"] is None
