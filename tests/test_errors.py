"""The expected failures (schemas/errors.py) and how the command line reports them: each class its exit code and
one line; anything else, a bug, keeps its traceback."""

from __future__ import annotations

import inspect
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import flows.run  # noqa: F401 - imported before `current_run` is patched, so no module binds the patched one
import schemas.errors
import schemas.publication
import tasks.publish.root  # noqa: F401 - likewise
from planbake import cli
from planbake.cli import app
from schemas.errors import (
    ConfigError,
    CorpusError,
    DamagedPublication,
    FacetColumnsMissing,
    GateRejected,
    IndexUnreachable,
    InputError,
    LabelError,
    LogError,
    ModelServerRefused,
    NoPublication,
    PlanbakeError,
    PublishBusy,
)
from tests.conftest import ROOT

# every class of schemas/errors.py: an instance, its exit code, its kind, and the built-in base it keeps
FAILURES: list[tuple[PlanbakeError, int, str, type[Exception]]] = [
    (InputError("--since 'x': expected a date"), 2, "error", ValueError),
    (ConfigError("c.yaml:3: field 'facets': Field required"), 2, "error", ValueError),
    (LogError("logs: logs not found"), 2, "error", ValueError),
    (CorpusError("corpus.jsonl:2: not valid JSON"), 2, "error", ValueError),
    (LabelError("questions.jsonl:1: not UTF-8 text"), 2, "error", ValueError),
    (IndexUnreachable("s3://b/i: the index store did not answer"), 2, "error", ValueError),
    (FacetColumnsMissing("/i: version 3 of table 'chunks' has no column for facet(s) team"), 2, "error", ValueError),
    (ModelServerRefused("http://m/v1", 401, "OPENAI_API_KEY"), 2, "error", ValueError),
    (DamagedPublication("/o/runs/r1/manifest.json: missing"), 2, "error", ValueError),
    (PublishBusy("/o: another planbake run is publishing here"), 3, "busy", RuntimeError),
    (NoPublication("/o: nothing published yet"), 4, "error", FileNotFoundError),
    (GateRejected("quality gate: run r2 rejected, not published", Path("/o/rejected/r2")), 5, "rejected",
     RuntimeError),
]


def test_every_expected_failure_is_a_planbake_error_with_its_exit_code() -> None:
    defined = {c for _, c in inspect.getmembers(schemas.errors, inspect.isclass)
               if c.__module__ == schemas.errors.__name__ and c is not PlanbakeError}
    assert defined == {type(exc) for exc, *_ in FAILURES}  # a new class is listed here with its code
    for exc, code, kind, base in FAILURES:
        assert isinstance(exc, PlanbakeError) and isinstance(exc, base), type(exc)
        assert (exc.exit_code, exc.kind) == (code, kind), type(exc)
    gate = FAILURES[-1][0]
    assert gate.fields() == {"report": str(Path("/o/rejected/r2/report/report.md"))}
    assert all(exc.fields() == {} for exc, *_ in FAILURES[:-1])


@pytest.mark.parametrize(("exc", "code", "kind"), [(exc, code, kind) for exc, code, kind, _ in FAILURES],
                         ids=[type(exc).__name__ for exc, *_ in FAILURES])
def test_a_command_failing_on_an_expected_failure_exits_with_its_code_and_one_line(
        exc: PlanbakeError, code: int, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fails(out: Any) -> Path:
        raise exc

    monkeypatch.setattr(schemas.publication, "current_run", fails)  # what `report` calls first
    res = CliRunner().invoke(app, ["report", "--out", str(tmp_path), "--json"])
    assert res.exit_code == code, res.output
    assert res.stderr.splitlines() == [f"{kind}: {exc}"], res.stderr
    assert json.loads(res.stdout) == {"error": kind, "message": str(exc), "exit_code": code, **exc.fields()}


def test_a_value_error_of_a_bug_keeps_its_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ValueError no check of planbake raised (a bug) is no bad input: exit 1, not 2, and no line of its own;
    the exception reaches the caller, so the traceback shows where it came from."""
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("boom")

    monkeypatch.setattr(schemas.publication, "current_run", boom)
    for args in (["report"], ["report", "--json"], ["search", "leave"], ["rollback"]):
        res = CliRunner().invoke(app, [*args, "--out", str(tmp_path)])
        assert res.exit_code == 1 and isinstance(res.exception, ValueError), (args, res.output)
        assert str(res.exception) == "boom" and "error: boom" not in res.stderr and res.stdout == "", args
        assert res.exc_info is not None and res.exc_info[2] is not None
        assert boom.__code__ in {frame.f_code for frame, _ in _frames(res.exc_info[2])}  # raised there
    monkeypatch.setattr(flows.run, "check_inputs", boom)  # in a flow command, before the flow
    res = CliRunner().invoke(app, ["nightly", "--out", str(tmp_path / "out")])
    assert res.exit_code == 1 and str(res.exception) == "boom", res.output


def _frames(tb: Any) -> list[tuple[Any, int]]:
    out = []
    while tb is not None:
        out.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return out


def test_the_command_prints_the_traceback_of_a_bug(tmp_path: Path) -> None:
    code = ("import sys, schemas.publication\n"
            "def boom(out): raise ValueError('boom')\n"
            "schemas.publication.current_run = boom\n"
            "from planbake.cli import main\n"
            "main(sys.argv[1:])\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-c", code, "report", "--out", str(tmp_path)], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1 and "Traceback" in proc.stderr and "ValueError: boom" in proc.stderr, proc.stderr
    assert "error: boom" not in proc.stderr


def test_the_flow_engine_records_a_bug_and_drops_an_expected_failure() -> None:
    """The flow engine's records of an expected failure are dropped (the CLI says it once); those of a bug stay."""
    def record(exc: BaseException) -> logging.LogRecord:
        return logging.LogRecord("prefect.task_runs", logging.ERROR, __file__, 1, "Task run failed", None,
                                 (type(exc), exc, None))

    one_line = cli._OneLineFor()
    for exc, *_ in FAILURES:
        assert not one_line.filter(record(exc)), exc
    assert one_line.filter(record(ValueError("boom")))
    assert one_line.filter(record(FileNotFoundError("a library's own, naming no path")))


FLOW_COMMANDS = {
    "index": (["--corpus", "c.jsonl", "--run-date", "2026-11-30"], ["index"]),
    "nightly": (["--corpus", "c.jsonl", "--logs", "logs", "--since", "2026-11-23", "--until", "2026-11-29",
                 "--run-date", "2026-11-30"], ["index", "mine", "plan"]),
    "backfill": (["--corpus", "c.jsonl", "--logs", "logs", "--since", "2026-11-23", "--until", "2026-11-29",
                  "--run-date", "2026-11-30"], ["index", "mine", "plan"]),
    "mine": (["--logs", "logs", "--since", "2026-11-23", "--until", "2026-11-29"], ["mine"]),
    "plan": (["--writer", "rules"], ["plan"]),
}


@pytest.mark.parametrize("command", sorted(FLOW_COMMANDS))
def test_every_flow_command_gives_its_flow_each_of_its_parameters(command: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The flow commands share one body: each checks its stages' inputs, then calls its own flow with every
    parameter the flow takes, and prints the result."""
    from flows.backfill import backfill_flow
    from flows.index import index_flow
    from flows.nightly import mine_flow, nightly_flow, plan_flow

    flows: dict[str, Any] = {"index": index_flow, "nightly": nightly_flow, "backfill": backfill_flow,
                             "mine": mine_flow, "plan": plan_flow}
    called: dict[str, Any] = {}
    result: dict[str, Any] = {
        "run_id": "r1", "publication": str(tmp_path / "runs" / "r1"),
        "index": {"chunks": 3, "embedded": 1, "updated": 0, "deleted": 0, "version": 2},
        "plan": {"templates": 1, "rejected": 0, "routes": {}, "cache_entries": 1, "evaluated": 1, "reused": 0}}

    def flow(**params: Any) -> dict[str, Any]:
        called.update(params)
        return result

    def flow_of(name: str) -> Any:
        called["flow"] = name
        return flow

    monkeypatch.setattr(cli, "_flow", flow_of)
    monkeypatch.setattr(cli, "_precheck", lambda stages, config, out, **inputs: called.update(stages=stages))
    monkeypatch.setattr(cli, "_tie_local_server", lambda: None)
    args, stages = FLOW_COMMANDS[command]
    res = CliRunner().invoke(app, [command, *args, "--out", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    assert called.pop("flow") == command and called.pop("stages") == stages
    assert set(called) == set(inspect.signature(flows[command].fn).parameters), called
    assert called["out"] == str(tmp_path) and called["quiet"] is True and called["wait_s"] == 0.0
    doc = json.loads(res.stdout)
    assert doc == (result if command != "index" else {**result["index"], "run_id": "r1",
                                                      "publication": result["publication"]})
    res = CliRunner().invoke(app, [command, *args, "--out", str(tmp_path)])
    said = res.stdout.replace("\n", " ")
    assert res.exit_code == 0 and (f"published {result['publication']}" in said if command == "index" else
                                   f"published: {result['publication']}" in said), res.output


# Failures a library reports as ValueError, which the command line once took for bad input whatever their cause:
# named where they are raised, as the expected failure they are, with the file and the fix.

def test_a_pointer_or_report_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "runs" / "r1" / "report").mkdir(parents=True)
    (out / "CURRENT").write_bytes(b"\xff\xfe")
    res = CliRunner().invoke(app, ["report", "--out", str(out)])
    assert res.exit_code == 2 and f"{out / 'CURRENT'}: not UTF-8 text" in res.stderr, res.output
    (out / "CURRENT").write_text("r1\n", encoding="utf-8")
    (out / "runs" / "r1" / "report" / "report.md").write_bytes(b"# report \xff\n")
    res = CliRunner().invoke(app, ["report", "--out", str(out)])
    assert res.exit_code == 2 and "report.md: not UTF-8 text; the publication is damaged" in res.stderr, res.output


def test_a_published_config_that_is_no_config_is_a_damaged_publication(tmp_path: Path) -> None:
    from schemas.config import read_published_config

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"facets": [{"name": "Office"}]}), encoding="utf-8")
    with pytest.raises(DamagedPublication, match=r"config.json: field 'facets.0.name': facet name 'Office' must be"):
        read_published_config(path)


def test_an_index_store_or_version_lancedb_refuses_is_named(tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    from tasks.index.store import open_table, restore

    with pytest.raises(IndexUnreachable, match="foo://bucket/index: the index store did not answer .*scheme"):
        open_table("foo://bucket/index", "chunks")
    table = lancedb.connect(str(tmp_path)).create_table("chunks", pa.table({"id": ["a"]}))
    for checkout in (True, False):
        with pytest.raises(InputError, match="table 'chunks' no longer holds version 99 .*planbake rollback --to"):
            restore(table, 99, str(tmp_path), "chunks", checkout=checkout)


def test_a_model_path_sentence_transformers_cannot_load_is_a_config_error(tmp_path: Path) -> None:
    from tasks.embed import load_model

    (tmp_path / "modules.json").write_text("not json", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"model_path {tmp_path}: sentence-transformers cannot load it"):
        load_model(str(tmp_path))


def test_a_ray_address_ray_cannot_read_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("prefect_ray")
    from schemas.config import Runner
    from tasks.scale import task_runner

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(ConfigError, match="runner.address head: Invalid address format"), \
            task_runner(Runner(kind="ray", address="head")):  # refused before any connection
        pass


@pytest.mark.parametrize("value", ["20261-11-30", "02026-11-30", "20261130", "2026-W48-1", "2026-11-301"])
def test_a_date_option_is_four_digits_of_year_month_and_day(value: str) -> None:
    """--since, --until, --run-date, --now: YYYY-MM-DD, as the message says; no five-digit year, no compact form."""
    with pytest.raises(InputError, match="expected a date as YYYY-MM-DD"):
        cli._date(value, "--since")
    assert cli._date("2026-11-30", "--since") is not None
