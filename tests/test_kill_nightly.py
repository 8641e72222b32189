"""The nightly run killed outright (SIGKILL) at ten moments drawn with a fixed seed over the length of an uninterrupted
run, from its start-up to its publication, each kill followed by a normal run: the live publication is never
damaged, nothing the killed run started is left running, and the last publication equals the uninterrupted run's."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest

from schemas.cache import PlanCache
from schemas.publication import check_run, current_run, index_location, listed_files, read_manifest, run_root
from tasks.index.store import open_table
from tests.conftest import ROOT, SEED
from tests.test_poisoning import NORMAL, OFFICES, normal_rows, write_rows

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads processes from /proc")]

KILL_SEED = 20261206
KILLS = 10
SINCE, UNTIL, RUN_DATE = "2026-11-23", "2026-11-29", "2026-11-30"
# what the online service asks: every phrasing of the log, a follow-up, and a miss
LOOKUPS: list[tuple[str, list[str]]] = [(text.format(OFFICES[0], OFFICES[1]), []) for text in NORMAL] + [
    ("what about Lisbon?", [NORMAL[0].format("Berlin")]),
    ("how much is the relocation budget in Amsterdam", []),
]


def _log(path: Path) -> Path:
    """The smallest log that reaches every stage: six recurring phrasings of four users, a follow-up, and two
    lines for the quarantine."""
    rows = normal_rows()
    rows += [("u0", "what about Lisbon?")]
    write_rows(path, rows)
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"ts": "2026-11-24T09:00:00Z", "user": "u1", "query": "per diem in Ber\n')
        fh.write(json.dumps({"ts": "2026-11-24T09:01:00Z", "query": "what is the per diem in Lisbon"}) + "\n")
    return path


def _command(corpus: Path, log: Path, out: Path) -> list[str]:
    return [str(ROOT / ".venv" / "bin" / "planbake"), "nightly", "--corpus", str(corpus), "--logs", str(log),
            "--out", str(out), "--since", SINCE, "--until", UNTIL, "--run-date", RUN_DATE, "--json"]


def _env(tmp: Path, marker: str, api: str | None) -> dict[str, str]:
    """The run's environment: its own Prefect home; the harness's API, or none (the run then starts its own local
    server, as a scheduled run on a machine with no Prefect server does); and a marker every process it starts
    inherits, by which the test finds them all, whoever their parent is by then."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API_")}
    env.update(PREFECT_HOME=str(tmp / "prefect"), PREFECT_LOGGING_LEVEL="INFO", PLANBAKE_KILL_TEST=marker)
    if api:
        env["PREFECT_API_URL"] = api
    return env


def _marked(marker: str) -> dict[int, str]:
    """The live processes (zombies aside) whose environment holds the marker, with their command lines."""
    needle = f"PLANBAKE_KILL_TEST={marker}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # gone, or another user's
            continue
        if state != "Z":
            found[int(entry.name)] = cmd
    return found


def _gone(marker: str, timeout_s: float) -> dict[int, str]:
    """Wait until no process of the marker is left; return those still running at the timeout."""
    deadline = time.monotonic() + timeout_s
    while (left := _marked(marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _run(cmd: list[str], env: dict[str, str], log: Path) -> tuple[int, float, str]:
    """A nightly run to its end: exit code, seconds, stdout."""
    start = time.monotonic()
    with log.open("w") as err:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=err, text=True, timeout=900)
    return proc.returncode, time.monotonic() - start, proc.stdout


# --- the live publication --------------------------------------------------------------------------------------------


def _files(run: Path) -> dict[str, str]:
    """Every file of a run folder (the report too) and the SHA-256 of its bytes."""
    return {str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run.rglob("*")) if p.is_file()}


def _lookups(out: Path) -> list[dict[str, Any]]:
    """What the online service gets for `LOOKUPS` from the live publication, without the trace (which names the
    run and its index tag)."""
    cache = PlanCache.open(out)
    answers = []
    for question, history in LOOKUPS:
        doc = cache.lookup(question, now=date(2026, 11, 30), history=history).to_json()
        doc.pop("trace")
        answers.append(doc)
    return answers


def _assert_intact(out: Path, lookups: list[dict[str, Any]]) -> Path:
    """CURRENT names a whole run: each file its manifest lists is there and reads (every Parquet file in full), the
    index table holds the version it tagged, and the cache answers as `lookups`. Returns the run."""
    run = current_run(out)
    manifest = read_manifest(run)
    check_run(run)  # what every reader checks: nothing missing, truncated or unparsable
    for name in listed_files(run, manifest):
        path = run / name
        assert path.is_file(), path
        if path.suffix == ".parquet":
            pq.read_table(path)
        elif path.suffix == ".json":
            json.loads(path.read_text(encoding="utf-8"))
        elif path.suffix == ".npz":
            with np.load(path) as arrays:
                [arrays[k] for k in arrays.files]
    table = open_table(index_location(manifest["index"], out), manifest["index"]["table"])
    assert table is not None
    assert table.tags.list()[manifest["index"]["tag"]]["version"] == manifest["index"]["version"]
    table.checkout(manifest["index"]["tag"])
    assert table.count_rows() == manifest["index"]["chunks"]
    assert _lookups(out) == lookups
    return run


# --- the comparison with the uninterrupted run -----------------------------------------------------------------------

# What differs between two publications of the same inputs by design: what names the run (its id, time, the run it
# followed, the index tag), what the first night did that later ones reuse (the chunks it embedded and inserted, the
# templates it evaluated), and the gate's checks against the last publication (the first night has none).
_RUN_NAMING = {"run_id", "published_at", "previous", "made_by"}


def _comparable(run: Path) -> dict[str, Any]:
    """A publication's contents without what names the run or says what an earlier night did (see above)."""
    manifest = read_manifest(run)
    doc: dict[str, Any] = {k: v for k, v in manifest.items() if k not in _RUN_NAMING | {"gate", "index", "plan"}}
    doc["index"] = {k: v for k, v in manifest["index"].items() if k not in ("tag", "embedded", "inserted")}
    doc["plan"] = {k: v for k, v in manifest["plan"].items() if k not in ("evaluated", "reused")}
    doc["plan"]["templates_evaluated"] = manifest["plan"]["evaluated"] + manifest["plan"]["reused"]
    doc["gate"] = manifest["gate"]["decision"]  # its figures are gate.json's; a first run has fewer checks
    for name in listed_files(run, manifest):
        path = run / name
        if path.suffix == ".parquet":
            doc[name] = pq.read_table(path).to_pylist()  # row for row, every column
        elif path.suffix == ".json":
            doc[name] = json.loads(path.read_text(encoding="utf-8"))
        elif path.suffix == ".npz":
            with np.load(path) as arrays:
                doc[name] = {k: arrays[k].tolist() for k in arrays.files}
    table = open_table(index_location(manifest["index"], run_root(run)), manifest["index"]["table"])
    assert table is not None
    table.checkout(manifest["index"]["tag"])
    doc["lancedb"] = table.to_arrow().sort_by("id").to_pylist()
    return doc


def _differences(a: Any, b: Any, where: str = "") -> Iterator[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            yield from _differences(a.get(k), b.get(k), f"{where}/{k}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _differences(x, y, f"{where}[{i}]")
    elif a != b:
        yield f"{where}: {str(a)[:120]} != {str(b)[:120]}"


# --- the test --------------------------------------------------------------------------------------------------------


# The steps of a run, by the line its log (Prefect's, at INFO) writes when each begins: a kill in each lands where
# the uninterrupted run was at that moment, however fast the machine is at the time.
MARKS = (("start-up", ""), ("server", "Starting temporary server"), ("flow", "Beginning flow run"),
         ("mine", "- index: "), ("plan", "- mine: "), ("publish", "- plan: "), ("exit", "- published "))


class Watched:
    """A nightly run started in the background, and when each of `MARKS` showed in its log."""

    def __init__(self, cmd: list[str], env: dict[str, str], err: Path) -> None:
        self.err = err
        with err.open("w") as fh:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=fh)
        self.start = time.monotonic()
        self.seen: dict[str, float] = {"start-up": 0.0}

    def look(self) -> None:
        text = self.err.read_text(errors="replace")
        for step, mark in MARKS[1:]:
            if step not in self.seen and mark in text:
                self.seen[step] = time.monotonic() - self.start

    def wait_for(self, step: str, timeout_s: float = 600) -> bool:
        """Until the run begins `step`; False if it ends first."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.look()
            if step in self.seen:
                return True
            if self.proc.poll() is not None:
                self.look()
                return step in self.seen
            assert time.monotonic() < deadline, f"the run did not reach {step}: {self.err.read_text()[-2000:]}"
            time.sleep(0.02)

    def finish(self) -> float:
        """Wait for the run's end; its length in seconds."""
        while self.proc.poll() is None:
            self.look()
            time.sleep(0.02)
        self.look()
        return time.monotonic() - self.start

    def reached(self) -> str:
        self.look()
        return max(self.seen, key=lambda step: self.seen[step])


def _moments(timeline: dict[str, float], duration: float) -> list[tuple[str, float]]:
    """Ten kill moments, drawn with a fixed seed: one in each step of the run, at a point drawn within the length
    the uninterrupted run spent there, then the rest anywhere in its whole length (from its start). (step, seconds
    after the step began)."""
    rng = random.Random(KILL_SEED)
    steps = [step for step, _ in MARKS]
    starts = [timeline[step] for step in steps] + [duration]
    moments = [(step, rng.random() * (starts[i + 1] - starts[i])) for i, step in enumerate(steps)]
    moments += [("start-up", rng.random() * duration) for _ in range(KILLS - len(moments))]
    return moments


def test_a_nightly_killed_at_random_moments_never_damages_the_live_publication(tmp_path: Path,
                                                                               prefect_harness: None) -> None:
    from prefect.settings import PREFECT_API_URL

    api = str(PREFECT_API_URL.value())
    out, corpus = tmp_path / "out", SEED / "corpus.jsonl"
    cmd = _command(corpus, _log(tmp_path / "logs" / "queries.jsonl"), out)
    started = time.monotonic()

    # a first publication; then the uninterrupted run, as a scheduler starts it (its own local Prefect server): the
    # steps of a night with a live publication, timed, and what it publishes
    code, _, _ = _run(cmd, _env(tmp_path, uuid.uuid4().hex, api), tmp_path / "first.err")
    assert code == 0, (tmp_path / "first.err").read_text()[-3000:]
    expected = _comparable(current_run(out))
    lookups = _lookups(out)
    assert sum(d["hit"] for d in lookups) >= len(NORMAL) - 1 and any(d["followup"] for d in lookups)
    marker = uuid.uuid4().hex
    timed = Watched(cmd, _env(tmp_path, marker, None), tmp_path / "timed.err")
    duration = timed.finish()
    assert timed.proc.returncode == 0, timed.err.read_text()[-3000:]
    assert [step for step, _ in MARKS] == list(timed.seen), timed.seen  # every step, in order
    assert not _gone(marker, 30)
    # the same publication; its gate now also checks against the last one (the first night had none to check)
    second = _comparable(current_run(out))
    assert [d for d in _differences(expected, second) if not d.startswith("/gate.json/")] == []
    expected = second
    _assert_intact(out, lookups)

    outcomes = []
    for i, (step, delay) in enumerate(_moments(timed.seen, duration)):
        live = current_run(out)
        before = _files(live)
        marker = uuid.uuid4().hex
        run = Watched(cmd, _env(tmp_path, marker, None), tmp_path / f"kill-{i}.err")
        try:
            running = run.wait_for(step)
            # at the pace this run goes: as much slower or faster as it reached the step (a shared machine's load
            # changes from minute to minute)
            pace = min(max(run.seen[step] / timed.seen[step], 0.25), 4.0) if running and step != "start-up" else 1.0
            time.sleep(delay * pace)
            running = running and run.proc.poll() is None
            processes = _marked(marker)
            run.proc.send_signal(signal.SIGKILL)
            run.proc.wait(30)
            left = _gone(marker, 30)  # the local server's guard gives it 5 s to stop; a loaded machine is slower
        finally:
            for pid in _marked(marker):  # never leave one behind, even when the test fails
                os.kill(pid, signal.SIGKILL)
        moment = f"{step}+{delay * pace:.1f}s: {run.reached()}" if running else f"{step}: after its end"
        assert not left, f"kill {i} ({moment}): still running: {left}"
        outcomes.append((moment, len(processes)))

        # the live publication is what it was, or (a kill after the pointer switched) the killed run's whole one
        now = _assert_intact(out, lookups)
        if now == live:
            assert _files(live) == before, f"kill {i} ({moment}) changed the live publication"

        # a normal run after it publishes, and is whole
        code, _, stdout = _run(cmd, _env(tmp_path, uuid.uuid4().hex, api), tmp_path / f"after-{i}.err")
        assert code == 0, (i, moment, (tmp_path / f"after-{i}.err").read_text()[-3000:])
        assert current_run(out) == Path(json.loads(stdout)["publication"]) != live
        _assert_intact(out, lookups)

    # the kills fell in every step of the run, each where the run still was
    reached = {moment.split(": ")[1] for moment, _ in outcomes}
    assert len(reached) >= len(MARKS) - 2, outcomes

    # the last publication is the uninterrupted run's, but for what names the run
    final = current_run(out)
    differences = list(_differences(expected, _comparable(final)))
    assert not differences, differences[:20]
    # no index tag is left pinning a version of a run that never published
    table = open_table(str(out / "lancedb"), read_manifest(final)["index"]["table"])
    assert table is not None
    runs = {p.name for p in (out / "runs").iterdir()} | {p.name for p in (out / "rejected").glob("*")}
    assert set(table.tags.list()) <= runs
    print(f"uninterrupted run {duration:.1f} s, steps {timed.seen}; kills (step+s: reached, processes): {outcomes}; "
          f"test {time.monotonic() - started:.0f} s")
