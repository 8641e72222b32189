"""Publishing: atomic pointer switch, crashes between stages, one publisher at a time, rollback, the CLI."""

from __future__ import annotations

import errno
import importlib.util
import json
import logging
import os
import re
import subprocess
import sys
import threading
import time
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import flows.stages
from flows.run import check_inputs, run_stages
from planbake.cli import EXIT_BUSY, app
from schemas.cache import PlanCache
from schemas.config import load_config
from schemas.errors import DamagedPublication, LogError, NoPublication, PublishBusy
from schemas.publication import current_manifest, current_run
from tasks.evaluate import questions_as_log, read_labeled
from tasks.publish.root import baseline, publish, publish_lock, rollback, stage_dir, switch_pointer
from tests.conftest import DEMO_CONFIG, ROOT, SEED

QUESTION = "Compare parental leave for the second parent in Berlin and Amsterdam."


@pytest.fixture
def seed_run(tmp_path: Path, prefect_harness: None) -> dict:
    cfg = load_config(DEMO_CONFIG)
    cfg.mining.min_count = cfg.mining.min_users = 1
    log = questions_as_log(read_labeled(SEED / "questions.jsonl"), tmp_path / "log.jsonl", "2026-11-29T10:00:00")
    kwargs = {"corpus": str(SEED / "corpus.jsonl"), "logs": str(log), "config": cfg, "out": str(tmp_path / "out"),
              "quiet": True}
    return {"kwargs": kwargs, "out": tmp_path / "out", "first": run_stages(["index", "mine", "plan"], **kwargs)}


def _files(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in sorted(run_dir.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("stage", ["mine_task", "plan_task", "export_parquet_task"])
def test_crash_between_stages_keeps_last_publication(seed_run: dict, stage: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    out = seed_run["out"]
    live = current_run(out)
    before = _files(live)
    answer = PlanCache.open(out).lookup(QUESTION)

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError(f"simulated crash in {stage}")

    monkeypatch.setattr(flows.stages, stage, crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_stages(["index", "mine", "plan"], **seed_run["kwargs"])
    assert current_run(out) == live and _files(live) == before
    assert PlanCache.open(out).lookup(QUESTION) == answer  # lookup keeps answering from it
    assert not list((out / "runs" / ".staging").iterdir())
    monkeypatch.undo()
    again = run_stages(["index", "mine", "plan"], **seed_run["kwargs"])
    new = current_run(out)
    assert new != live and again["index"]["embedded"] == 0
    for name in ("cache.parquet", "shapes.parquet", "chunks.parquet", "templates.parquet"):
        assert (new / name).read_bytes() == before[name], name  # same outputs as an uninterrupted run


def test_a_run_after_an_unpublished_one_diffs_against_the_publication(seed_run: dict,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that wrote the table and was never published (here: it failed before publishing) leaves no
    trace in the next run's counts: the next diff is against the published version."""
    corpus = Path(seed_run["kwargs"]["logs"]).parent / "corpus.jsonl"
    rows = [json.loads(x) for x in (SEED / "corpus.jsonl").read_text().splitlines()]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows if r["id"] != "leave-amsterdam"))
    with monkeypatch.context() as m:
        m.setattr(flows.stages, "export_parquet_task", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("crash")))
        with pytest.raises(RuntimeError, match="crash"):
            run_stages(["index"], **{**seed_run["kwargs"], "corpus": str(corpus)})
    again = run_stages(["index"], **seed_run["kwargs"])
    assert (again["index"]["embedded"], again["index"]["updated"], again["index"]["deleted"]) == (0, 0, 0)
    assert again["index"]["inserted"] == 0


def test_mining_keeps_the_merge_of_the_live_publication(seed_run: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """Last night's merge (names, seeds, examples) comes from the live publication's own folder: a run that is
    never published changes nothing the next night reads, and a rollback brings back the memory it had."""
    out = seed_run["out"]
    live = current_run(out)
    memory = (live / "merge.npz").read_bytes()
    seen: list[Path | None] = []
    real = flows.stages.mine_task

    def spy(**kwargs: Any) -> Any:
        seen.append(kwargs["last_run"])
        return real(**kwargs)

    monkeypatch.setattr(flows.stages, "mine_task", spy)
    second = run_stages(["mine"], **seed_run["kwargs"])
    assert seen == [live] and (live / "merge.npz").read_bytes() == memory
    assert (out / "runs" / second["run_id"] / "merge.npz").exists()
    run_stages(["plan"], **seed_run["kwargs"])  # a stage that does not mine carries the memory over
    assert (current_run(out) / "merge.npz").read_bytes() == (out / "runs" / second["run_id"] / "merge.npz").read_bytes()


def test_second_publisher_stops_cleanly(seed_run: dict) -> None:
    out = seed_run["out"]
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with publish_lock(out):
            held.set()
            release.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(10)
    try:
        before = current_manifest(out)
        with pytest.raises(PublishBusy, match="another planbake run is publishing"):
            run_stages(["index", "mine", "plan"], **seed_run["kwargs"])
        res = CliRunner().invoke(app, ["index", "--corpus", str(SEED / "corpus.jsonl"), "--out", str(out)])
        assert res.exit_code == EXIT_BUSY, res.output
        assert current_manifest(out) == before
    finally:
        release.set()
        t.join()


def test_a_copied_publication_reads_and_writes_its_own_index(seed_run: dict, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A publication copied elsewhere (a backup, a move to another disk) searches, diffs and rolls back its own
    table, from any working folder, and never writes into the original's."""
    import shutil

    from tasks.index.store import open_table

    original = seed_run["out"]
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    versions = int(open_table(str(original / "lancedb"), "chunks").version)
    monkeypatch.chdir(tmp_path)  # neither folder is the working one
    assert PlanCache.open(copy).index_uri == str((copy / "lancedb").resolve())
    res = CliRunner().invoke(app, ["search", QUESTION, "--out", str(copy), "--json"])
    assert res.exit_code == 0, res.output
    # a run on the copy that wrote its table and was never published, then one that publishes: the diff is
    # against the copy's published version, so it counts the deleted document
    corpus = tmp_path / "corpus.jsonl"
    rows = [json.loads(x) for x in (SEED / "corpus.jsonl").read_text().splitlines()]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows if r["id"] != "leave-amsterdam"))
    kwargs = {**seed_run["kwargs"], "corpus": str(corpus), "out": str(copy)}
    with monkeypatch.context() as m:
        m.setattr(flows.stages, "export_parquet_task", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("crash")))
        with pytest.raises(RuntimeError, match="crash"):
            run_stages(["index"], **kwargs)
    second = run_stages(["index", "mine", "plan"], **kwargs)
    assert second["index"]["deleted"] == 1 and second["index"]["path"] == "lancedb"
    res = CliRunner().invoke(app, ["rollback", "--out", str(copy), "--json"])
    assert res.exit_code == 0, res.output
    assert "leave-amsterdam" in open_table(str(copy / "lancedb"), "chunks").to_arrow().column("id").to_pylist()
    assert int(open_table(str(original / "lancedb"), "chunks").version) == versions  # the original: untouched


def test_a_backfill_of_past_days_is_told_it_replaces_newer_shapes() -> None:
    from flows.run import older_window

    live = {"since": "2026-11-23", "until": "2026-11-29"}
    past = older_window(live, {"since": "2026-11-23", "until": "2026-11-25"})
    assert "2026-11-23 to 2026-11-25" in past
    assert "ends before the live publication's (2026-11-23 to 2026-11-29)" in past
    assert older_window(live, {"since": "2026-11-24", "until": "2026-11-30"}) == ""  # the next night
    assert older_window(live, live) == "" and older_window({}, live) == ""  # a re-run; the first run


def test_rollback_returns_to_previous_publication(seed_run: dict) -> None:
    out = seed_run["out"]
    first = current_manifest(out)
    corpus = Path(seed_run["kwargs"]["logs"]).parent / "corpus.jsonl"
    rows = [json.loads(x) for x in (SEED / "corpus.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["id"] != "leave-amsterdam"]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    second = run_stages(["index", "mine", "plan"], **{**seed_run["kwargs"], "corpus": str(corpus)})
    assert second["index"]["deleted"] == 1 and second["previous"] == first["run_id"]
    import pyarrow.parquet as pq  # templates in shape order, however many were reused

    shape_ids = pq.read_table(current_run(out) / "templates.parquet", columns=["shape_id"]).column(0).to_pylist()
    assert len(shape_ids) > 2 and shape_ids == sorted(shape_ids)
    from tasks.index import store

    def failing_table(uri: str, name: str) -> Any:
        class Table:
            def restore(self, version: Any) -> None:
                raise OSError("the table's storage is unreachable")
        return Table()

    with pytest.MonkeyPatch.context() as m:  # the index cannot be restored: nothing moves
        m.setattr(store, "open_table", failing_table)
        res = CliRunner().invoke(app, ["rollback", "--out", str(out), "--json"])
    assert res.exit_code == 1 and "unreachable" in str(res.exception)  # an unexpected failure
    assert current_manifest(out)["run_id"] == second["run_id"]
    res = CliRunner().invoke(app, ["rollback", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert current_manifest(out)["run_id"] == first["run_id"]
    from tasks.index.store import open_table

    table = open_table(first["index"]["uri"], "chunks")
    assert table is not None and "leave-amsterdam" in table.to_arrow().column("id").to_pylist()
    assert PlanCache.open(out).manifest["run_id"] == first["run_id"]


def test_a_damaged_live_publication_is_rolled_back_or_published_over(seed_run: dict,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    """A file of the live run damaged: a stage run alone stops before any work, naming the file and the fix;
    rollback returns to the previous publication; a run of every stage publishes over it, following the newest
    whole publication (as if rolled back first), and leaves the damaged one as it was."""
    out, first = seed_run["out"], current_run(seed_run["out"])
    second = Path(run_stages(["index", "mine", "plan"], **seed_run["kwargs"])["publication"])
    cache = second / "cache.parquet"
    cache.write_bytes(cache.read_bytes()[:1000])
    with pytest.raises(DamagedPublication, match=f"^{cache}: not a whole Parquet file.*'planbake rollback'"):
        run_stages(["plan"], **seed_run["kwargs"])
    assert not list((out / "runs" / ".staging").iterdir())
    res = CliRunner().invoke(app, ["rollback", "--out", str(out), "--json"])
    assert res.exit_code == 0 and current_run(out) == first, res.output

    switch_pointer(out, second.name)
    (second / "manifest.json").write_text('{"run_id":\n', encoding="utf-8")
    before = _files(second)
    with caplog.at_level(logging.WARNING, logger="planbake"):
        third = run_stages(["index", "mine", "plan"], **seed_run["kwargs"])
    assert f"manifest.json, line 2: not valid JSON (Expecting value): the live publication is damaged; this run " \
           f"follows {first.name}" in caplog.text
    assert third["previous"] == first.name and current_run(out).name == third["run_id"]
    assert _files(second) == before and PlanCache.open(out).lookup(QUESTION).hit

    switch_pointer(out, second.name)  # an unreadable live manifest names no previous: the newest whole one before
    res = CliRunner().invoke(app, ["rollback", "--out", str(out), "--json"])  # it (third is newer: rolled back from)
    assert res.exit_code == 0 and json.loads(res.stdout)["run_id"] == first.name, res.output


def test_without_its_pointer_rollback_restores_the_newest_whole_publication_or_a_named_one(tmp_path: Path) -> None:
    """CURRENT deleted: readers say it is missing and how many publications runs/ holds, not "nothing published
    yet"; rollback points it at the newest whole one (a damaged one is skipped), or at the one --to names."""
    out = tmp_path / "out"
    ids = [f"20261120T0{n}0000Z-0000" for n in range(3)]
    for run_id in ids:
        publish(out, stage_dir(out, run_id), {"stage": run_id})
    (out / "CURRENT").unlink()
    runner = CliRunner()
    for command in (["lookup", "parental leave in Berlin"], ["report"], ["search", "leave"]):
        res = runner.invoke(app, [*command, "--out", str(out)])
        assert res.exit_code == 4 and f"{out / 'CURRENT'} is missing, but 3 publications are under" in res.output \
            and "'planbake rollback' points CURRENT at the newest whole one" in res.output, (command, res.output)
    (out / "runs" / ids[-1] / "manifest.json").write_text('{"run_id":\n', encoding="utf-8")
    res = runner.invoke(app, ["rollback", "--out", str(out), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["run_id"] == ids[1] and current_run(out).name == ids[1]
    res = runner.invoke(app, ["rollback", "--out", str(out), "--to", ids[0]])
    assert res.exit_code == 0 and current_run(out).name == ids[0], res.output
    for bad, says in ((ids[-1], "manifest.json, line 2: not valid JSON"), ("20990101T000000Z-gone", "no such"),
                      ("..", "no such")):
        res = runner.invoke(app, ["rollback", "--out", str(out), "--to", bad])
        assert res.exit_code in (2, 4) and says in res.output and current_run(out).name == ids[0], res.output


def test_a_damaged_live_run_is_never_left_for_one_rolled_back_from(tmp_path: Path) -> None:
    """Runs A, B, C; the operator rolled back from C to B; B's manifest is then damaged: rollback and a run of
    every stage follow A, not C. With the pointer lost, they follow the newest whole run, saying why."""
    out = tmp_path / "out"
    a, b, c = (f"20261120T0{n}0000Z-0000" for n in range(3))
    for run_id in (a, b, c):
        publish(out, stage_dir(out, run_id), {"stage": run_id})
    switch_pointer(out, b)
    (out / "runs" / b / "manifest.json").write_text("{", encoding="utf-8")
    assert baseline(out, redoes_all=True)[0] == out / "runs" / a
    with pytest.raises(DamagedPublication):
        baseline(out, redoes_all=False)
    assert rollback(out)[0] == a
    (out / "CURRENT").unlink()
    run, _, warning = baseline(out, redoes_all=True)
    assert run == out / "runs" / c and warning.startswith(f"{out / 'CURRENT'} is missing, but 3 publications") \
        and warning.endswith(f"this run follows {c}, the newest whole one"), warning
    assert baseline(out, redoes_all=False) == (None, {}, "")  # a stage alone publishes anew, as before


@pytest.mark.parametrize("files", [5, None, "cache.parquet", [1], [["cache.parquet"]], {"cache.parquet": 1}, [""],
                                   ["../cache.parquet"], ["/etc/hostname"]])
def test_a_manifest_whose_files_are_no_list_of_names_is_named_with_its_fix(tmp_path: Path, files: Any) -> None:
    """A manifest edited by hand whose "files" is no list of the run's file names: every reader names the manifest
    and the fix (rollback, nightly), never a traceback nor a file of a made-up name; rollback and a run of every
    stage follow the run before it."""
    out = tmp_path / "out"
    first, live = "20261120T000000Z-0000", "20261120T010000Z-0000"
    for run_id in (first, live):
        publish(out, stage_dir(out, run_id), {"stage": run_id})
    path = out / "runs" / live / "manifest.json"
    path.write_text(json.dumps({**json.loads(path.read_text(encoding="utf-8")), "files": files}), encoding="utf-8")
    says = f"{path}: \"files\" is not a list of the run's file names"
    with pytest.raises(DamagedPublication) as exc:
        PlanCache.open(out)
    assert str(exc.value).startswith(says) and "planbake rollback" in str(exc.value), exc.value
    assert baseline(out, redoes_all=True)[0] == out / "runs" / first
    res = CliRunner().invoke(app, ["rollback", "--out", str(out), "--to", live])
    assert res.exit_code == 2 and says in res.output, res.output  # 1: a traceback
    assert current_run(out).name == live
    assert rollback(out)[0] == first


def test_every_command_is_documented_with_an_example() -> None:
    import typer.main

    group = typer.main.get_command(app)
    commands = group.commands  # type: ignore[attr-defined]
    expected = {"index", "mine", "plan", "nightly", "backfill", "search", "lookup", "retrieve", "eval", "report",
                "rollback"}
    assert expected <= set(commands)
    for name, cmd in commands.items():
        assert cmd.help and "Example: planbake " + name in cmd.help, f"{name} has no example in --help"
        for param in cmd.params:
            if param.param_type_name == "option":
                assert getattr(param, "help", None), f"{name} {param.name} is undocumented"


def test_the_module_runs_as_the_command(tmp_path: Path) -> None:
    """`python -m planbake.cli` is the `planbake` command (it exited 0 having done nothing)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-m", "planbake.cli", "--help"], capture_output=True, text=True, env=env,
                         cwd=tmp_path)
    assert res.returncode == 0 and "nightly" in res.stdout, res.stderr
    res = subprocess.run([sys.executable, "-m", "planbake.cli", "report", "--out", str(tmp_path / "none")],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert res.returncode == 4 and "nothing published yet" in res.stderr, res.stderr


def test_bad_config_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("facets:\n  - name: office\n    kind: colour\n")
    res = CliRunner().invoke(app, ["search", "x", "--config", str(bad), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "bad.yaml" in res.output and "facets.0.kind" in res.output
    bad.write_text("facets: [unclosed\n")
    res = CliRunner().invoke(app, ["search", "x", "--config", str(bad), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "bad.yaml:" in res.output and "not valid YAML" in res.output
    res = CliRunner().invoke(app, ["lookup", "x", "--out", str(tmp_path)])
    assert res.exit_code == 4 and "nothing published" in res.output


def test_crash_mid_write_of_the_index(seed_run: dict, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The table write dies between its upsert and its delete: nothing is published, and the next run
    finishes the job with the same chunks and cache as a run that was never interrupted."""
    import lancedb.table
    import pyarrow.parquet as pq

    out = seed_run["out"]
    live = current_run(out)
    rows = [json.loads(x) for x in (SEED / "corpus.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["id"] != "perdiem-amsterdam"]
    rows[0]["text"] += " Ask HR for the form."
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kwargs = {**seed_run["kwargs"], "corpus": str(corpus)}

    def crash(self: object, *args: object, **kw: object) -> None:
        raise RuntimeError("simulated crash mid-write")

    with monkeypatch.context() as m:
        m.setattr(lancedb.table.LanceTable, "delete", crash)
        with pytest.raises(RuntimeError, match="mid-write"):
            run_stages(["index", "mine", "plan"], **kwargs)
    assert current_run(out) == live
    assert PlanCache.open(out).lookup("What is the per diem in Berlin and in Amsterdam?").hit
    resumed = run_stages(["index", "mine", "plan"], **kwargs)
    # counted against the publication, not against the crashed run's half-written table
    assert (resumed["index"]["deleted"], resumed["index"]["embedded"], resumed["index"]["updated"]) == (1, 1, 1)

    fresh = run_stages(["index", "mine", "plan"], **{**kwargs, "out": str(tmp_path / "fresh")})
    a, b = Path(resumed["publication"]), Path(fresh["publication"])
    ids = lambda run: sorted(pq.read_table(run / "chunks.parquet").column("id").to_pylist())  # noqa: E731
    assert ids(a) == ids(b) and "perdiem-amsterdam" not in ids(a)
    cols = ["key", "route", "plan"]
    assert pq.read_table(a / "cache.parquet", columns=cols).to_pylist() == \
        pq.read_table(b / "cache.parquet", columns=cols).to_pylist()


def test_index_and_search_commands(tmp_path: Path, prefect_harness: None) -> None:
    runner = CliRunner()
    out = str(tmp_path / "out")
    res = runner.invoke(app, ["index", "--corpus", str(SEED / "corpus.jsonl"), "--out", out, "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert (doc["chunks"], doc["embedded"], doc["deleted"]) == (17, 17, 0) and doc["version"] >= 1
    again = json.loads(runner.invoke(app, ["index", "--corpus", str(SEED / "corpus.jsonl"), "--out", out,
                                           "--json"]).stdout)
    assert again["embedded"] == 0 and again["version"] == doc["version"]
    res = runner.invoke(app, ["search", "parental leave for the second parent, Amsterdam office", "-k", "3",
                              "--filter", "office=Amsterdam", "--out", out, "--json"])
    hits = json.loads(res.stdout)["hits"]
    # Amsterdam's own chunk first, then company-wide ones (no office: facet scope), never another office's
    assert hits[0]["id"] == "leave-amsterdam" and {h["facets"]["office"] for h in hits} <= {"Amsterdam", None}
    assert set(hits[0]) == {"id", "score", "text", "facets", "effective_from", "supersedes", "superseded_by",
                            "is_current"}
    res = runner.invoke(app, ["search", "remote work allowance", "-k", "2", "--all-versions", "--out", out, "--json"])
    remote = {h["id"]: h for h in json.loads(res.stdout)["hits"]}
    assert remote["remote-2025"]["superseded_by"] == "remote-2026" and not remote["remote-2025"]["is_current"]
    # bad search input: exit 2 and what to pass instead
    for value, office in [("amsterdam", "Amsterdam"), ("Lisboa", "Lisbon")]:  # a casing or an alias: its value
        res = runner.invoke(app, ["search", "leave", "--filter", f"office={value}", "--out", out, "--json"])
        assert office in {h["facets"]["office"] for h in json.loads(res.stdout)["hits"]} <= {office, None}, res.output
    for args, says in [(["--filter", "office=Paris"], "the index holds Amsterdam"),
                       (["--filter", "office=Berlin=x"], "office=Berlin=x: no chunk has that value"),
                       (["--filter", "office=Berlin!!"], "office=Berlin!!: no chunk has that value"),
                       (["--filter", "office=Berlin", "--filter", "office=Lisbon"], "given twice"),
                       (["--filter", "year=abc"], "a year filter takes a year"),
                       (["--filter", "year=26"], "a year of four digits"), (["-k", "0"], "-k")]:
        res = runner.invoke(app, ["search", "leave", *args, "--out", out])
        assert res.exit_code == 2 and says in res.output, (args, res.output)
    res = runner.invoke(app, ["search", "leave", "--filter", "year=1999", "--out", out])  # any year is a value
    assert res.exit_code == 0 and "no current chunk matches year=1999 (the index holds 2025, 2026)" in res.output
    for blank in ("  ", "?", "\u200b"):  # no words: nothing to search for, no context to return
        res = runner.invoke(app, ["search", blank, "--out", out])
        assert res.exit_code == 2 and "the search text has no words" in res.output, blank
        res = runner.invoke(app, ["retrieve", blank, "--out", out])
        assert res.exit_code == 2 and "the question has no words" in res.output, blank
    for command in (["lookup", "parental leave"], ["report"], ["search", "leave"]):  # --out names a file
        res = runner.invoke(app, [*command, "--out", str(tmp_path / "out" / "CURRENT")])
        assert res.exit_code == 2 and "is a file" in res.output, (command, res.output)
    res = runner.invoke(app, ["lookup", "parental leave in Berlin", "--out", out])  # an index, no plans yet
    assert res.exit_code == 4 and "no plan cache yet" in res.output


def test_retrieve_searches_a_follow_up_as_the_question_it_resolves_to(seed_run: dict) -> None:
    """`retrieve --history` looks the follow-up up as `lookup` does, and searches the standalone question it
    resolved to: "what about Berlin?" alone finds any Berlin chunk, not its vacation days."""
    res = CliRunner().invoke(app, ["retrieve", "what about Berlin?", "--history", "How many vacation days do we get "
                                   "in Amsterdam?", "--budget", "1", "--out", str(seed_run["out"]), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["lookup"]["resolved"] == "how many vacation days do we get in Berlin", doc["lookup"]
    assert {p["query"] for p in doc["parts"]} == {doc["lookup"]["resolved"]}, doc["parts"]
    assert [c["id"] for c in doc["context"]] == ["vacation-berlin"], doc["context"]


def test_a_damaged_pointer_is_named_and_the_next_run_publishes_anew(tmp_path: Path, prefect_harness: None) -> None:
    """CURRENT emptied, or naming a run folder that is gone: readers say so (exit 4, the pointer named), not
    "no plan cache yet" or a path outside the runs; the next run publishes as if nothing were published."""
    runner = CliRunner()
    out = tmp_path / "out"
    index = ["index", "--corpus", str(SEED / "corpus.jsonl"), "--out", str(out), "--json"]
    assert runner.invoke(app, index).exit_code == 0
    for damaged in ("20990101T000000Z-gone", "", "../..", "."):
        (out / "CURRENT").write_text(damaged + "\n", encoding="utf-8")
        for command in (["lookup", "parental leave in Berlin"], ["report"], ["search", "leave"]):
            res = runner.invoke(app, [*command, "--out", str(out)])
            assert res.exit_code == 4 and f"names run {damaged!r}, which is not a folder under" in res.output, \
                (damaged, command, res.output)
    res = runner.invoke(app, index)
    assert res.exit_code == 0, res.output
    assert current_run(out).name == json.loads(res.stdout)["run_id"] and (current_run(out) / "manifest.json").exists()


def test_a_stage_that_waits_waits_for_the_first_publisher_starting_beside_it(tmp_path: Path,
                                                                            prefect_harness: None) -> None:
    """`plan --wait` scheduled at the same minute as the first nightly run starts before that run has taken its
    lock: it waits for the publisher, then plans on what it published, instead of refusing for want of one."""
    cfg = load_config(DEMO_CONFIG)
    cfg.mining.min_count = cfg.mining.min_users = 1
    out = tmp_path / "out"
    log = questions_as_log(read_labeled(SEED / "questions.jsonl"), tmp_path / "log.jsonl", "2026-11-29T10:00:00")
    first: dict[str, Any] = {}

    def nightly() -> None:
        time.sleep(0.5)  # the stage below looks first
        first.update(run_stages(["index", "mine", "plan"], corpus=str(SEED / "corpus.jsonl"), logs=str(log),
                                config=cfg, out=str(out), quiet=True))

    publisher = threading.Thread(target=nightly)
    publisher.start()
    try:
        second = run_stages(["plan"], config=cfg, out=str(out), wait_s=120, quiet=True)
    finally:
        publisher.join()
    assert first["run_id"] != second["run_id"]
    assert current_run(out).name == second["run_id"]
    assert second["index"] == first["index"] and second["plan"]["templates"] == first["plan"]["templates"]
    with pytest.raises(NoPublication, match="no published index"):  # no publisher ever starts: refused
        check_inputs(["plan"], cfg, out=tmp_path / "mistyped", wait_s=0.5)
    assert not (tmp_path / "mistyped").exists()


def test_inputs_that_cannot_work_fail_before_any_work(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "out"
    res = runner.invoke(app, ["mine", "--since", "2026-11-29", "--until", "2026-11-23", "--out", str(out)])
    assert res.exit_code == 2 and "is after --until" in res.output
    res = runner.invoke(app, ["mine", "--since", "yesterday", "--out", str(out)])
    assert res.exit_code == 2 and "--since 'yesterday': expected a date as YYYY-MM-DD" in res.output
    res = runner.invoke(app, ["index", "--corpus", str(tmp_path / "nope.jsonl"), "--out", str(out)])
    assert res.exit_code == 2 and "nope.jsonl: corpus not found" in res.output
    no_inputs = tmp_path / "c.yaml"  # the demo config without corpus: and logs:
    no_inputs.write_text("\n".join(line for line in DEMO_CONFIG.read_text().splitlines()
                                    if not line.startswith(("corpus:", "logs:"))))
    res = runner.invoke(app, ["index", "--config", str(no_inputs), "--out", str(out)])
    assert res.exit_code == 2 and "no corpus given" in res.output
    res = runner.invoke(app, ["mine", "--config", str(no_inputs), "--out", str(out)])
    assert res.exit_code == 2 and "no logs given" in res.output
    res = runner.invoke(app, ["plan", "--writer", "vllm", "--out", str(out)])  # the demo config names no model
    assert res.exit_code == 2 and "planning.model is empty, and writer 'vllm' needs a model" in res.output, res.output
    if importlib.util.find_spec("vllm") is None:  # the model writer's package is missing: said before any work
        with_model = tmp_path / "m.yaml"
        import yaml

        settings = yaml.safe_load(DEMO_CONFIG.read_text())
        settings["planning"]["model"] = "Qwen/Qwen3-8B"
        with_model.write_text(yaml.safe_dump(settings))
        res = runner.invoke(app, ["plan", "--writer", "vllm", "--config", str(with_model), "--out", str(out)])
        assert res.exit_code == 2 and "needs the 'gpu' set-up" in res.output, res.output
    for command in (["mine"], ["plan"], ["plan", "--wait", "1"]):  # a stage alone needs a publication to work
        res = runner.invoke(app, [*command, "--out", str(out)])  # on (waiting: only where a run ever started)
        assert res.exit_code == 4 and "no published index" in res.output, res.output
    res = runner.invoke(app, ["mine", "--since", "2025-01-01", "--until", "2025-01-07", "--out", str(out)])
    assert res.exit_code == 2 and "no date= folder within a day of the window from 2025-01-01 to 2025-01-07 (the " \
        "folders hold days from 2026-11-23 to 2026-11-29)" in res.output, res.output
    res = runner.invoke(app, ["eval", "--corpus", str(tmp_path / "nope.jsonl"), "--questions",
                              str(SEED / "questions.jsonl"), "--out", str(out)])
    assert res.exit_code == 2 and "nope.jsonl: corpus not found" in res.output
    moved = tmp_path / "moved.yaml"  # the config's paths name nothing: the error points at their lines
    moved.write_text(DEMO_CONFIG.read_text().replace("../demo/", "../gone/"), encoding="utf-8")
    corpus_line = DEMO_CONFIG.read_text().splitlines().index("corpus: ../demo/corpus.jsonl") + 1
    res = runner.invoke(app, ["nightly", "--config", str(moved), "--out", str(out)])
    assert res.exit_code == 2 and f"corpus not found (from {moved}:{corpus_line}: `corpus:`)" in res.output
    res = runner.invoke(app, ["mine", "--config", str(moved), "--out", str(out)])
    assert res.exit_code == 2 and f"logs not found (from {moved}:{corpus_line + 1}: `logs:`)" in res.output
    assert not out.exists()  # nothing was started
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    res = runner.invoke(app, ["index", "--corpus", str(SEED / "corpus.jsonl"), "--out", str(a_file)])
    assert res.exit_code == 2 and "is a file" in res.output
    places = [a_file / "sub"] + ([Path("/proc/planbake-out")] if Path("/proc/self").is_dir() else [])
    for place in places:  # through a file; under /proc, where nothing can be created
        res = runner.invoke(app, ["index", "--corpus", str(SEED / "corpus.jsonl"), "--out", str(place)])
        assert res.exit_code == 2 and "cannot create the publication folder" in res.output, res.output
        assert "Traceback" not in res.output


def test_bad_input_inside_a_flow_is_one_line(tmp_path: Path, prefect_harness: None) -> None:
    """A corpus error raised inside the flow reaches the user once, as the CLI's line: not again as the flow
    engine's records of the failed task, its state and the failed flow."""
    from prefect.settings import PREFECT_API_URL

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(SEED.joinpath("corpus.jsonl").read_text().splitlines()[0] + '\n{"id": "x", "text": "ok\n')
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([str(root / ".venv" / "bin" / "planbake"), "index", "--corpus", str(corpus), "--out",
                           str(tmp_path / "out")], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value())})
    assert proc.returncode == 2
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert lines == [f"error: {corpus}:2: not valid JSON (Unterminated string starting at column 21); each line "
                     "must be one JSON object"], lines


def test_a_log_window_without_rows_publishes_nothing(seed_run: dict, tmp_path: Path) -> None:
    out = seed_run["out"]
    live = current_run(out)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(LogError, match="no valid log rows"):
        run_stages(["mine"], **{**seed_run["kwargs"], "logs": str(empty)})
    with pytest.raises(LogError, match="no valid log rows from 2030-01-01"):
        run_stages(["mine"], **{**seed_run["kwargs"], "since": date(2030, 1, 1)})
    garbage = tmp_path / "server.jsonl"  # the wrong file passed as the logs: named, not only counted
    garbage.write_text("".join(f"12:00:{i:02d} INFO served in {i} ms\n" for i in range(4)), encoding="utf-8")
    with pytest.raises(LogError, match=f"4 quarantined; no line of {garbage} is a log row"):
        run_stages(["mine"], **{**seed_run["kwargs"], "logs": str(garbage)})
    assert current_run(out) == live


def test_a_log_file_in_utf16_is_refused_and_publishes_nothing(seed_run: dict, tmp_path: Path) -> None:
    """A day exported as UTF-16 beside readable ones: its lines were all quarantined, and the rest published
    unless the quality gate caught the rise in quarantined rows."""
    out = seed_run["out"]
    live, files = current_run(out), _files(current_run(out))
    logs = tmp_path / "logs"
    logs.mkdir()
    text = Path(seed_run["kwargs"]["logs"]).read_text(encoding="utf-8")
    (logs / "a.jsonl").write_text(text, encoding="utf-8")
    (logs / "b.jsonl").write_text(text.replace("2026-11-29", "2026-11-28"), encoding="utf-16")
    with pytest.raises(LogError, match=re.escape(f"{logs / 'b.jsonl'}:1: the file is UTF-16 text") + ".*"
                       + re.escape(f"iconv -f UTF-16 -t UTF-8 {logs / 'b.jsonl'}")):
        run_stages(["mine"], **{**seed_run["kwargs"], "logs": str(logs)})
    assert current_run(out) == live and _files(live) == files
    # a nightly refuses it before the index stage's work, as it refuses missing logs
    fresh = tmp_path / "fresh"
    with pytest.raises(LogError, match=re.escape(f"{logs / 'b.jsonl'}:1: the file is UTF-16 text")):
        run_stages(["index", "mine", "plan"], **{**seed_run["kwargs"], "logs": str(logs), "out": str(fresh)})
    assert not fresh.exists()
    (logs / "b.jsonl").rename(tmp_path / "b.jsonl")  # outside the window of a log partitioned by date: not read
    (logs / "date=2026-11-29").mkdir()
    (logs / "a.jsonl").rename(logs / "date=2026-11-29" / "a.jsonl")
    (logs / "date=2026-11-20").mkdir()
    (tmp_path / "b.jsonl").rename(logs / "date=2026-11-20" / "b.jsonl")
    cfg = seed_run["kwargs"]["config"]
    check_inputs(["index", "mine"], cfg, corpus=seed_run["kwargs"]["corpus"], logs=str(logs), out=fresh)
    with pytest.raises(LogError, match="UTF-16"):
        check_inputs(["mine"], cfg, logs=str(logs), out=out, since=date(2026, 11, 20), until=date(2026, 11, 29))


def test_retention_prunes_the_oldest_but_never_the_live_one_or_its_previous(tmp_path: Path) -> None:
    from tasks.publish.root import keep_rejected, prune, rollback

    out = tmp_path / "out"
    ids = [f"20261120T0{n}0000Z-0000" for n in range(5)]
    for run_id in ids:
        publish(out, stage_dir(out, run_id), {"stage": run_id})
    rejected = [f"20261121T0{n}0000Z-0000" for n in range(3)]
    for run_id in rejected:
        keep_rejected(out, stage_dir(out, run_id), {}, ())
    killed, running = stage_dir(out, "20261119T000000Z-dead"), stage_dir(out, "20261122T000000Z-busy")
    (killed / "shapes.parquet").write_bytes(b"half")
    os.utime(killed, (time.time() - 2 * 86_400,) * 2)  # a run killed two days ago
    gone = prune(out, keep_runs=2, keep_rejected=1)
    assert sorted(p.name for p in (out / "runs").iterdir() if not p.name.startswith(".")) == ids[-2:]
    assert [p.name for p in (out / "rejected").iterdir()] == rejected[-1:]
    assert not killed.exists() and running.is_dir()  # a fresh staging folder may be a run in progress
    assert sorted(gone) == sorted([f"runs/{i}" for i in ids[:3]] + [f"rejected/{r}" for r in rejected[:2]]
                                  + [f"runs/.staging/{killed.name}"])
    assert rollback(out)[0] == ids[-2]  # the previous publication is still there to return to
    assert current_run(out).name == ids[-2]
    prune(out, keep_runs=2, keep_rejected=1)  # live is now the older one: the newer one is kept as well
    assert current_run(out).name == ids[-2] and (out / "runs" / ids[-1]).is_dir()


def test_a_run_is_on_disk_before_the_pointer_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file and folder of a run is flushed before the pointer switch, and the switch itself after it: a
    machine that crashes never comes back to a pointer naming a half-written run."""
    import tasks.publish.root as publishing

    out = tmp_path / "out"
    staging = stage_dir(out, "20261203T000000Z-0001")
    (staging / "report").mkdir()
    for name in ("shapes.parquet", "report/report.md"):
        (staging / name).write_text("x", encoding="utf-8")
    flushed: list[tuple[str, bool]] = []  # (path, pointer already switched)
    fsync = os.fsync
    monkeypatch.setattr(publishing.os, "fsync", lambda fd: (
        flushed.append((os.readlink(f"/proc/self/fd/{fd}"), (out / "CURRENT").exists())), fsync(fd))[1])
    final = publish(out, staging, {})
    before = {path for path, switched in flushed if not switched}
    run = [staging / n for n in ("shapes.parquet", "report/report.md", "report", "manifest.json")]
    assert {str(p) for p in [*run, staging, out / "runs"]} <= before
    assert current_run(out) == final and flushed[-1] == (str(out), True)  # the switch, flushed last


def test_the_index_version_is_on_disk_before_the_pointer_names_it(seed_run: dict,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that indexed flushes the table files it wrote (the version, its tag) before the switch."""
    import tasks.publish.root as publishing

    out = seed_run["out"]
    flushed: list[tuple[str, bool]] = []
    fsync, live = os.fsync, (out / "CURRENT").read_text()
    monkeypatch.setattr(publishing.os, "fsync", lambda fd: (flushed.append(
        (os.readlink(f"/proc/self/fd/{fd}"), (out / "CURRENT").read_text() != live)), fsync(fd))[1])
    run_id = Path(run_stages(["index"], **seed_run["kwargs"])["publication"]).name
    before = [path for path, switched in flushed if not switched and path.startswith(str(out / "lancedb"))]
    assert any(path.endswith(f"_refs/tags/{run_id}.json") for path in before), before  # the run's tag
    assert any("_versions" in path for path in before)


def test_crash_mid_write_of_the_cache(seed_run: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache file dies half written: the live publication and lookup are untouched, nothing half-written
    is left, and the next run publishes the same cache as the uninterrupted one."""
    import pyarrow.parquet as pq

    out = seed_run["out"]
    live = current_run(out)
    before = _files(live)
    answer = PlanCache.open(out).lookup(QUESTION)
    write_table = pq.write_table

    def torn(table: object, where: object, *args: object, **kwargs: object) -> None:
        if str(where).endswith("cache.parquet"):
            write_table(table, where, *args, **kwargs)
            data = Path(str(where)).read_bytes()
            Path(str(where)).write_bytes(data[: len(data) // 2])
            raise OSError("simulated crash mid-write of the cache")
        write_table(table, where, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(pq, "write_table", torn)
        with pytest.raises(OSError, match="mid-write of the cache"):
            run_stages(["index", "mine", "plan"], **seed_run["kwargs"])
    assert current_run(out) == live and _files(live) == before
    assert PlanCache.open(out).lookup(QUESTION) == answer
    assert not list((out / "runs" / ".staging").iterdir())
    again = run_stages(["index", "mine", "plan"], **seed_run["kwargs"])
    assert (Path(again["publication"]) / "cache.parquet").read_bytes() == before["cache.parquet"]


def test_an_out_inside_a_publication_root_names_the_root(tmp_path: Path) -> None:
    """--out at the runs folder, a run folder or the index folder (instead of the folder holding CURRENT) is
    refused, naming the root to pass, before any work: an index or nightly there would start a second publication
    inside the first. lookup and retrieve also read a run folder itself."""
    root = tmp_path / "out"
    (root / "runs" / "r1").mkdir(parents=True)
    (root / "runs" / "r1" / "manifest.json").write_text("{}")
    (root / "lancedb").mkdir()
    (root / "CURRENT").write_text("r1")
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    commands = [["index", "--corpus", str(SEED / "corpus.jsonl")], ["mine"], ["plan"], ["nightly"], ["backfill"],
                ["search", "leave"], ["lookup", "leave in Berlin"], ["retrieve", "leave in Berlin"], ["report"],
                ["rollback"], ["eval", "--corpus", str(SEED / "corpus.jsonl"), "--questions",
                               str(SEED / "questions.jsonl")]]
    for inside in (root / "runs", root / "runs" / "r1", root / "runs" / "r1" / "report", root / "lancedb"):
        for args in commands:
            if args[0] in ("lookup", "retrieve") and inside.name == "r1":
                continue
            res = CliRunner().invoke(app, [*args, "--out", str(inside)])
            assert res.exit_code == 2, (args, inside, res.output)
            assert (f"{inside} lies inside the publication root {root}; --out is the folder holding CURRENT: "
                    f"--out {root}") in " ".join(res.output.split()), (args, inside, res.output)
    res = CliRunner().invoke(app, ["lookup", "leave in Berlin", "--out", str(root / "runs" / "r1")])
    assert "lies inside the publication root" not in res.output  # a run folder of its own: read as it is
    with pytest.raises(ValueError, match=f"lies inside the publication root {root}; open the root"):
        PlanCache.open(root / "runs")
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before


def test_an_empty_option_and_a_usage_error_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An option given as an empty string ("--corpus $UNSET") exits 2 before any work, instead of falling back to
    the demo corpus; with --json, a usage error is one JSON document on stdout like every other failure."""
    from planbake import cli

    out = tmp_path / "out"
    for args in (["index", "--corpus", ""], ["nightly", "--config", " "], ["mine", "--since", ""],
                 ["eval", "--corpus", "c.jsonl", "--questions", ""]):
        res = CliRunner().invoke(app, [*args, "--out", str(out)])
        assert res.exit_code == 2 and "is empty; give a value or leave the option out" in res.output, args
    for args in (["nightly", "--out", ""], ["report", "--out", " "], ["eval", "--corpus", "c", "--questions", "q",
                                                                      "--plot", ""]):
        res = CliRunner().invoke(app, args)  # not the current folder
        assert res.exit_code == 2 and "is empty; give a path or leave the option out" in res.output, args
    for args, said in [(["lookup", "?"], "the question has no words"),
                       (["lookup", "what about Lisbon?", "--history", ""], "--history: an earlier question has no"),
                       (["search", "leave", "-k", "5000000000"], "Invalid value for '-k'"),
                       (["retrieve", "leave", "--budget", "100000000000"], "Invalid value for '--budget'")]:
        res = CliRunner().invoke(app, [*args, "--out", str(out)])  # no traceback from the index's query either
        assert res.exit_code == 2 and said in res.output, (args, res.output)
    assert not out.exists()
    for args, said in [(["search", "x", "-k", "0"], "Invalid value for '-k'"),
                       (["nightly", "--bogus"], "No such option: --bogus"),
                       (["index", "--corpus", ""], "Invalid value for '--corpus': is empty"),
                       (["plan", "--writer", "foo"], "'foo': choose rules, vllm, openai"),
                       (["eval", "--corpus", "c", "--questions", "q", "--merge", "sum"], "choose round_robin, max")]:
        with pytest.raises(SystemExit) as done:
            cli.main([*args, "--out", str(out), "--json"])
        doc = json.loads(capsys.readouterr().out)
        assert done.value.code == 2 and doc["error"] == "usage" and doc["exit_code"] == 2, doc
        assert said in doc["message"], (args, doc)
    with pytest.raises(SystemExit) as done:  # a command's own failure keeps its code and document
        cli.main(["report", "--out", str(out), "--json"])
    assert done.value.code == cli.EXIT_NOT_PUBLISHED and json.loads(capsys.readouterr().out)["exit_code"] == 4


def test_an_interrupted_run_and_a_lost_api_are_clear(capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C exits 130 at once with what it means; so does the flow engine's lost API after it (Ctrl-C stops
    the local Prefect server too). A lost API alone is not bad input: exit 1, naming it."""
    import httpx
    import typer

    from planbake import cli

    @cli._errors
    def fails(exc: BaseException) -> None:
        raise exc

    monkeypatch.setattr(cli, "_interrupted", [])
    for exc, code, said in [(KeyboardInterrupt(), cli.EXIT_INTERRUPTED, "interrupted: a run stopped"),
                            (httpx.ConnectError("refused"), cli.EXIT_INTERNAL, "the Prefect API did not answer")]:
        with pytest.raises(typer.Exit) as done:
            fails(exc)
        assert done.value.exit_code == code and said in capsys.readouterr().err
    try:  # how the Prefect client reports a server it cannot reach: a RuntimeError from the client's error
        raise RuntimeError("Failed to reach API at http://127.0.0.1:9/api/") from httpx.ConnectError("refused")
    except RuntimeError as exc:
        unreachable = exc
    with pytest.raises(typer.Exit) as done:
        fails(unreachable)
    assert done.value.exit_code == cli.EXIT_INTERNAL
    assert "the Prefect API did not answer (ConnectError: refused)" in capsys.readouterr().err
    with pytest.raises(RuntimeError, match="unrelated"):  # any other failure keeps its traceback
        fails(RuntimeError("unrelated"))
    try:  # so does a bug met while handling a lost connection
        try:
            raise httpx.ReadTimeout("slow")
        except httpx.ReadTimeout:
            raise KeyError("a bug") from None
    except KeyError as exc:
        bug = exc
    with pytest.raises(KeyError, match="a bug"):
        fails(bug)
    cli._interrupted.append(True)
    with pytest.raises(typer.Exit) as done:
        fails(httpx.ConnectError("refused"))
    assert done.value.exit_code == cli.EXIT_INTERRUPTED


def test_a_path_the_system_refuses_is_bad_input_with_its_document(capsys: pytest.CaptureFixture[str]) -> None:
    """A path the system refuses (a folder where a file belongs, a file gone while the run read it) is bad input
    naming the path: exit 2, with --json one document on stdout, and no traceback from the flow engine's log. A
    file the system cannot find is not "nothing published yet" (exit 4), which only planbake's own checks say."""
    import typer

    from planbake import cli

    @cli._errors
    def fails(exc: BaseException, as_json: bool) -> None:
        raise exc

    for exc in (IsADirectoryError(21, "Is a directory", "/o/CURRENT"),
                NotADirectoryError(20, "Not a directory", "/o/runs/.staging/r1"),
                FileNotFoundError(2, "No such file or directory", "/corpus/a.md"),
                OSError(errno.ELOOP, "Too many levels of symbolic links", "/o/CURRENT"),
                OSError(errno.ENAMETOOLONG, "File name too long", "/o/" + "a" * 300)):
        with pytest.raises(typer.Exit) as done:
            fails(exc, as_json=True)
        said = capsys.readouterr()
        assert done.value.exit_code == cli.EXIT_INPUT, exc
        assert json.loads(said.out) == {"error": "error", "exit_code": 2, "message": (
            f"{exc.filename}: {exc.strerror}; check --out and the paths given")}
        assert said.err.startswith(f"error: {exc.filename}: {exc.strerror}")
        record = logging.LogRecord("prefect.flow_runs", logging.ERROR, __file__, 1, "failed", None,
                                   (type(exc), exc, None))
        assert not cli._OneLineFor().filter(record)
    with pytest.raises(typer.Exit) as done:
        fails(NoPublication("/o: nothing published yet; run 'planbake nightly' first"), as_json=True)
    assert done.value.exit_code == cli.EXIT_NOT_PUBLISHED and json.loads(capsys.readouterr().out)["exit_code"] == 4


def test_an_out_the_system_refuses_by_its_name_is_bad_input(tmp_path: Path) -> None:
    """An --out whose name is too long, or that runs through a loop of symbolic links, is named with the system's
    reason (exit 2), by a reader of a run folder too: no traceback."""
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    readers = (["report"], ["lookup", "leave in Berlin"], ["search", "leave"])
    for out, says, commands in ((tmp_path / ("a" * 300), "File name too long", readers),
                                (tmp_path / "loop" / "out", "Too many levels of symbolic links", readers[::2])):
        for args in commands:
            res = CliRunner().invoke(app, [*args, "--out", str(out)])
            assert res.exit_code == 2 and says in res.output, (args, res.output)
            assert res.exception is None or isinstance(res.exception, SystemExit), (args, res.exception)


def test_a_sigterm_unwinds_the_run_as_ctrl_c_does(tmp_path: Path) -> None:
    """A scheduler stops a run with SIGTERM (a cancelled deployment, `timeout`): the run unwinds as on Ctrl-C,
    so what it started (the local Prefect server) stops with it, and exits 143 saying what it means."""
    import sys

    code = ("import os, signal, time\n"
            "from planbake import cli\n"
            "@cli._errors\n"
            "def run():\n"
            "    try:\n"
            "        os.kill(os.getpid(), signal.SIGTERM)\n"
            "        time.sleep(30)\n"
            "    finally:\n"
            "        print('cleaned up', flush=True)\n"
            "try:\n"
            "    run()\n"
            "except BaseException as done:  # typer.Exit, as the command line exits with its code\n"
            "    raise SystemExit(getattr(done, 'exit_code', 1))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], text=True,
                          capture_output=True, timeout=60)
    assert proc.returncode == 143, (proc.returncode, proc.stderr)
    assert proc.stdout == "cleaned up\n" and "interrupted: a run stopped" in proc.stderr


def _children(pid: int) -> dict[int, str]:
    """The live processes whose parent is `pid`, with their command lines (read from /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) and stat[1] == str(pid) and stat[0] != "Z":
            found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return found


def _stat(pid: int) -> list[str] | None:
    """A process's state and parent pid, or None once it is gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[:2]
    except OSError:
        return None


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
def test_a_killed_run_leaves_no_local_prefect_server(tmp_path: Path) -> None:
    """A run killed outright (SIGKILL: the OOM killer, a scheduler's hard timeout) runs no handler: the temporary
    Prefect server it started must stop by itself within seconds, not hold its port and memory."""
    import signal
    import sys
    import urllib.request

    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_API_")}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")  # the temporary server's database
    nightly = ["nightly", "--config", str(DEMO_CONFIG), "--out", str(tmp_path / "out")]
    run = subprocess.Popen([sys.executable, "-c", "from planbake.cli import main; main()", *nightly],
                           cwd=Path(__file__).resolve().parents[1], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    started: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 240
        while not (server := [p for p, cmd in started.items() if "prefect.server.api.server" in cmd]):
            assert run.poll() is None and time.monotonic() < deadline, "the run started no local Prefect server"
            started.update(_children(run.pid))
            time.sleep(0.2)
        port = re.search(r"--port (\d+)", started[server[0]])
        assert port is not None, started[server[0]]
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port[1]}/api/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                assert time.monotonic() < deadline, "the local Prefect server did not answer"
                time.sleep(0.2)
        started.update(_children(run.pid))
        run.kill()
        run.wait(30)
        deadline = time.monotonic() + 30  # the guard gives the server 5 s to stop; a loaded machine is slower
        while (left := {p: cmd for p, cmd in started.items() if (s := _stat(p)) and s[0] != "Z"}) \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"still running after the run was killed: {left}"
    finally:
        if run.poll() is None:
            run.kill()
            run.wait(30)
        for pid in started:
            if (s := _stat(pid)) and s[0] != "Z":
                os.kill(pid, signal.SIGKILL)


def test_a_guard_refused_a_pid_file_descriptor_leaves_without_a_traceback(monkeypatch: pytest.MonkeyPatch,
                                                                          capfd: pytest.CaptureFixture[str]) -> None:
    """A system that refuses `pidfd_open` (a container whose seccomp profile predates it, a sandbox without it)
    printed the guard's traceback on the run's stderr at every run. The guard leaves quietly: the server is then
    stopped at the run's exit only, as with no guard."""
    from planbake import server_guard

    def refused(pid: int) -> int:
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "pidfd_open", refused)
    code = ("import os, sys\n"
            "sys.path.insert(0, os.path.dirname(sys.argv[1]))\n"
            "import server_guard\n"
            "def refused(pid): raise PermissionError(1, 'Operation not permitted')\n"
            "os.pidfd_open = refused\n"
            "server_guard.guard(os.getppid())\n")
    guard = subprocess.run([sys.executable, "-I", "-S", "-c", code, server_guard.__file__], stdin=subprocess.PIPE,
                           capture_output=True, text=True, timeout=60)
    assert (guard.returncode, guard.stderr) == (0, "")
    server_guard.guard(os.getpid())  # returns, raising nothing
    assert capfd.readouterr().err == ""


def test_a_guard_that_cannot_start_leaves_the_server_to_its_owner(monkeypatch: pytest.MonkeyPatch) -> None:
    """A guard process that cannot start (no process to spare) raised out of the server's start after the server
    had started, so Prefect never held it to stop it at exit: an orphan. The server is now returned, guard or not."""
    from prefect.server.api.server import SubprocessASGIServer

    from planbake import local_server

    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        monkeypatch.setattr(SubprocessASGIServer, "_run_uvicorn_command", lambda self: server)

        def no_process(*args: object, **kwargs: object) -> None:
            raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")

        monkeypatch.setattr(local_server.subprocess, "Popen", no_process)
        tied = object.__new__(local_server.TiedServer)  # not registered as Prefect's shared server
        assert tied._run_uvicorn_command() is server and tied.guard is None
    finally:
        server.kill()
        server.wait(30)


def test_an_api_lost_after_the_publication_is_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The publication is whole once the pointer names it: a flow engine that stops answering after this
    process published (its last state reports) makes the run exit 0 with a warning. Before it, or when the run
    live is another process's (the one a --wait waited for), or for eval (its job is the scores), exit 1."""
    import httpx
    import typer

    import tasks.publish.root
    from planbake import cli
    from tasks.publish.root import switch_pointer

    monkeypatch.setattr(cli, "_interrupted", [])
    monkeypatch.setattr(tasks.publish.root, "PUBLISHED_HERE", [])
    out = tmp_path / "out"
    (out / "runs" / "r1").mkdir(parents=True)
    switch_pointer(out, "r1")

    def run(out: Path, publishes: str = "", as_json: bool = False) -> None:
        if publishes:
            (out / "runs" / publishes).mkdir()
            switch_pointer(out, publishes)
            if publishes != "by-another":
                tasks.publish.root.PUBLISHED_HERE.append(publishes)
        raise httpx.RemoteProtocolError("Server disconnected without sending a response.")

    for command, publishes in [(cli._errors(run), ""), (cli._errors(run), "by-another"),
                               (cli._errors(publishes=False)(run), "by-eval")]:
        with pytest.raises(typer.Exit) as done:
            command(out=out, publishes=publishes)
        assert done.value.exit_code == cli.EXIT_INTERNAL and "the Prefect API did not answer" in capsys.readouterr().err
    assert cli._errors(run)(out=out, publishes="r2", as_json=True) is None
    said = capsys.readouterr()
    assert said.err.startswith("warning: the Prefect API stopped answering after the publication")
    assert json.loads(said.out)["run_id"] == "r2" and current_run(out).name == "r2"


def test_a_run_that_does_not_plan_says_its_lookup_settings_wait_for_the_plans(
        seed_run: dict, caplog: pytest.LogCaptureFixture) -> None:
    """Lookups read the config the plans were made with: a changed alias mined alone does not reach them, and
    the run says so."""
    changed = seed_run["kwargs"]["config"].model_copy(deep=True)
    changed.facet("office").aliases["Hauptstadt"] = "Berlin"
    with caplog.at_level(logging.WARNING, logger="planbake"):
        run_stages(["mine"], **{**seed_run["kwargs"], "config": changed})
    assert [r.getMessage() for r in caplog.records if "lookups keep" in r.getMessage()] == [
        "this config's facets differ from the live plans' config: lookups keep the plans' config until 'planbake "
        "plan' or 'planbake nightly' runs with this one"]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="planbake"):
        run_stages(["mine"], **seed_run["kwargs"])  # the plans' own settings
    assert not [r for r in caplog.records if "lookups keep" in r.getMessage()]


def test_the_manifest_names_the_run_that_made_each_stage(seed_run: dict) -> None:
    """A run that does not plan keeps the plans, their config.json and their cache: the manifest says which run
    made them and with which config, however many runs have carried them since."""
    live = current_manifest(seed_run["out"])
    plans_by = (live.get("made_by") or {}).get("plan") or live["run_id"]
    plans_config = live["plans_config"] if "plans_config" in live else live["config"]
    mined = run_stages(["mine"], **seed_run["kwargs"])
    assert mined["made_by"] == {"index": mined["made_by"]["index"], "mine": mined["run_id"], "plan": plans_by}
    assert mined["plans_config"] == plans_config and mined["made_by"]["index"] != mined["run_id"]
    again = run_stages(["mine"], **seed_run["kwargs"])
    assert again["made_by"]["plan"] == plans_by and again["plans_config"] == plans_config
    planned = run_stages(["plan"], **seed_run["kwargs"])
    assert planned["made_by"] == {**again["made_by"], "plan": planned["run_id"]}
    assert planned["plans_config"] == planned["config"]
    # a live manifest of an older version, from a run that mined only: who made its plans is not known
    path = current_run(seed_run["out"]) / "manifest.json"
    old = {k: v for k, v in json.loads(path.read_text()).items() if k not in ("made_by", "plans_config")}
    path.write_text(json.dumps({**old, "stages_run": ["mine"]}))
    after_old = run_stages(["mine"], **seed_run["kwargs"])
    assert after_old["made_by"] == {"mine": after_old["run_id"]} and after_old["plans_config"] == ""


def test_a_stage_run_alone_says_which_figures_it_carried_over() -> None:
    from planbake.cli import _summary, out_console

    res = {"stages_run": ["mine"], "publication": "out/runs/r2", "made_by": {"index": "r1", "mine": "r2"},
           "index": {"chunks": 17, "embedded": 0, "deleted": 0, "version": 3},
           "mine": {"rows": 10, "quarantined": 0, "recurring": 2, "shapes": 4, "by_type": {"single": 2}},
           "plan": {"templates": 5, "rejected": 0, "routes": {"split": 5}, "cache_entries": 9}}
    with out_console.capture() as cap:
        _summary(res)
    lines = {line.split(":")[0]: line for line in cap.get().splitlines()}
    assert "carried over from run r1" in lines["index"] and "carried over" in lines["plan"]
    assert "carried over" not in lines["mine"]


def test_a_first_run_says_what_to_look_at_next(demo_publication: Path, tmp_path: Path) -> None:
    """The first publication's summary ends with how much of the log was mined (and what the window left out,
    with the option that mines it), the most asked shapes with their routes, and where the report is; the report
    says what the window left out too. A later run's summary does not repeat the list."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from planbake.cli import TOP_SHAPES, _summary, first_run_lines, out_console
    from schemas.config import Bill
    from tasks.publish.report import write_report

    run = current_run(demo_publication)
    manifest = current_manifest(demo_publication)
    assert manifest["previous"] is None
    assert manifest["mine"]["outside_window"]["rows_before"] == 0  # the demo's seven days are the window
    mine = {**manifest["mine"], "outside_window": {"rows_before": 900, "rows_after": 0, "days_not_read": 0,
                                                   "first_day": "2026-10-31", "last_day": manifest["mine"]["until"]}}
    res = {**manifest, "mine": mine, "publication": str(run)}
    with out_console.capture() as cap:
        _summary(res)
    said = cap.get()
    note = (f"the window mined, {mine['since']} to {mine['until']}, leaves out 900 log rows (the log runs from "
            f"2026-10-31 to {mine['until']}); to mine them, run with --since 2026-10-31 (or `mining.window_days: 30` "
            "in the config)")
    assert f"note: {note}" in said
    first = said.split("First run: look next at\n", 1)[1].splitlines()
    read = mine["rows"] + mine["quarantined"] + 900
    assert first[0].startswith(f"1. the log: {mine['rows']:,} of the {read:,} rows read were mined")
    assert first[1] == f"   {note}"
    top = [line for line in first if re.match(r"^ +[0-9,]+  (one_search|split)", line)]
    tpls = sorted(pq.read_table(run / "templates.parquet").to_pylist(), key=lambda t: (-t["count"], t["skeleton"]))
    assert [line.split()[0] for line in top] == [f"{t['count']:,}" for t in tpls[:TOP_SHAPES]]
    assert all(line.endswith(t["skeleton"]) for line, t in zip(top, tpls, strict=False))
    split = next(t for t in tpls if t["route"] != "one_search")  # a planned route says its number of steps
    pq.write_table(pa.Table.from_pylist([{**split, "count": 10**6}]), tmp_path / "templates.parquet")
    steps = len(json.loads(split["template"])["steps"])
    shown = first_run_lines({**res, "publication": str(tmp_path)})
    assert f"{10**6:,}  {split['route']}, {steps} step{'s' * (steps > 1)}" in "\n".join(shown)
    assert first[-1] == f"3. the report: {run / 'report' / 'report.md'} (`planbake report` prints it)"
    with out_console.capture() as cap:
        _summary({**res, "previous": "20261130T013000Z-1a2b"})
    assert "First run" not in cap.get() and f"note: {note}" in cap.get()
    report = write_report(tmp_path, {"mine": mine}, Bill()).read_text(encoding="utf-8")
    assert f"- **Outside the window**: {note[0].upper()}{note[1:]}." in report


def test_search_shows_each_version_as_current_superseded_or_not_yet_in_force() -> None:
    from dataclasses import replace

    from planbake.cli import version_state
    from tasks.index.store import Hit

    as_of = date(2026, 6, 1)  # the index's run date: what decided `is_current`
    base = Hit("remote-2026", 0.8, "text", {}, date(2026, 1, 1), "remote-2025", None, True)
    assert version_state(base, as_of) == "current"
    assert version_state(replace(base, id="remote-2025", is_current=False, superseded_by="remote-2026",
                                 effective_from=date(2025, 1, 1)), as_of) == "superseded"
    later = replace(base, id="remote-2027", is_current=False, effective_from=date(2026, 9, 1))
    assert version_state(later, as_of) == "from 2026-09-01"  # not in force on the run date, whatever today is


def test_pruned_publications_take_their_table_versions_with_them(tmp_path: Path, prefect_harness: None,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Retention prunes the table as it prunes runs/: the versions of the runs kept stay (rollback restores
    them), the rest go, so a nightly table does not grow by a version per write forever. (Untagged versions go
    once a day old, in case another writer shares the table: no waiting here.)"""
    from datetime import timedelta

    import tasks.index.store
    from tasks.index.store import open_table

    monkeypatch.setattr(tasks.index.store, "UNTAGGED_KEPT", timedelta(0))

    cfg = load_config(DEMO_CONFIG)
    cfg.retention.runs = 2
    rows = [json.loads(x) for x in (SEED / "corpus.jsonl").read_text().splitlines()]
    corpus, out = tmp_path / "corpus.jsonl", tmp_path / "out"
    for night in range(4):  # each night edits one document: a new table version (or two) per run
        rows[0]["text"] += f" Night {night}."
        corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
        run_stages(["index"], corpus=str(corpus), config=cfg, out=str(out), quiet=True)
        time.sleep(1.1)  # run ids sort by the second they start in
    kept = sorted(p.name for p in (out / "runs").iterdir() if not p.name.startswith("."))
    assert len(kept) == 2
    table = open_table(str(out / "lancedb"), cfg.table)
    assert sorted(table.tags.list()) == kept
    versions = [v["version"] if isinstance(v, dict) else v.version for v in table.list_versions()]
    assert len(versions) <= 3  # the two kept, and the latest (the live one's)
    res = CliRunner().invoke(app, ["rollback", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert current_run(out).name == kept[0]
    table.checkout(table.tags.list()[kept[0]]["version"])
    assert "Night 2." in next(r["text"] for r in table.to_arrow().to_pylist() if r["id"] == rows[0]["id"])


def test_an_unknown_writer_parameter_is_refused_before_any_work(tmp_path: Path) -> None:
    """The plan flow's `writer` (a deployment parameter, not checked by the CLI's --writer) takes rules, vllm or
    openai: any other name was run as the OpenAI writer, every shape falling back to rules."""
    from prefect.utilities.callables import parameter_schema

    from flows.nightly import plan_flow

    cfg = load_config(DEMO_CONFIG)
    with pytest.raises(ValueError, match="writer 'gpt': choose rules, vllm, openai .*plan flow's `writer`"):
        check_inputs(["plan"], cfg, out=tmp_path / "out", writer="gpt")
    writer = parameter_schema(plan_flow.fn).model_dump()["properties"]["writer"]
    assert "'rules', 'vllm', 'openai'" in json.dumps(writer).replace('"', "'")


def test_reused_cache_entries_count_this_windows_questions(seed_run: dict) -> None:
    """A template reused from the live publication (same shape, same evidence) keeps its cache entries, but
    their `questions` are this window's: each question asked by a second user doubles them."""
    import pyarrow.parquet as pq

    log = Path(seed_run["kwargs"]["logs"])
    rows = [json.loads(x) for x in log.read_text().splitlines()]
    twice = log.parent / "twice.jsonl"
    twice.write_text("".join(json.dumps({**r, "user": u + r["user"]}) + "\n" for r in rows for u in ("", "b-")))
    second = run_stages(["index", "mine", "plan"], **{**seed_run["kwargs"], "logs": str(twice)})
    assert second["plan"]["reused"] > 0
    run = current_run(seed_run["out"])
    asked = {}
    for q in pq.read_table(run / "questions.parquet", columns=["shape_id"]).column(0).to_pylist():
        asked[q] = asked.get(q, 0) + 1
    served = {}
    for e in pq.read_table(run / "cache.parquet", columns=["shape_id", "questions"]).to_pylist():
        served[e["shape_id"]] = served.get(e["shape_id"], 0) + e["questions"]
    assert served == {s: n for s, n in asked.items() if s in served}


def test_a_full_disk_is_one_line_naming_the_path_and_publishes_nothing(
        seed_run: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk that fills during a run (the vector store's save, here) is bad input naming the path and the fix:
    exit 2, one line on stderr, the JSON error document on stdout, no temporary file left, nothing published."""
    import numpy as np

    out: Path = seed_run["out"]
    pointer = (out / "CURRENT").read_bytes()
    runs = sorted(p.name for p in (out / "runs").iterdir())
    log = Path(seed_run["kwargs"]["logs"])
    written: list[str] = []

    def full(file: Any, *args: Any, **kwargs: Any) -> None:
        Path(file).write_bytes(b"half an archive")  # what a write that ran out of space leaves
        written.append(str(file))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "savez", full)
    res = CliRunner().invoke(app, ["mine", "--logs", str(log), "--since", "0001-01-01", "--until", "9999-12-31",
                                   "--out", str(out), "--json"])
    assert written, res.output
    assert res.exit_code == 2, res.output
    doc = json.loads(res.stdout)
    assert doc["error"] == "error" and doc["exit_code"] == 2, doc
    assert doc["message"].endswith("No space left on device; free space on " + str(Path(written[0]).parent)
                                   + " or point --out elsewhere"), doc
    assert res.stderr.strip().splitlines() == [f"error: {doc['message']}"], res.stderr
    assert "Traceback" not in res.output
    assert not [p for p in out.rglob("*") if ".tmp" in p.name], sorted(out.rglob("*"))
    assert (out / "CURRENT").read_bytes() == pointer
    assert sorted(p.name for p in (out / "runs").iterdir()) == runs


def test_a_full_disk_or_read_only_file_system_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    """ENOSPC, EDQUOT and EROFS are a path the system refuses: exit 2 with the fix; one that names no file names
    --out."""
    import typer

    from planbake import cli

    @cli._errors
    def fails(exc: BaseException, as_json: bool, out: str) -> None:
        raise exc

    for exc, fix in ((OSError(errno.ENOSPC, "No space left on device", "/o/vectors/v.npz"), "free space on /o/vectors"),
                     (OSError(errno.EDQUOT, "Disk quota exceeded", "/o/runs/r1/a.parquet"), "free space on /o/runs/r1"),
                     (OSError(errno.EROFS, "Read-only file system", "/o/CURRENT"), "make it writable on /o"),
                     (OSError(errno.ENOSPC, "No space left on device"), "free space on /o")):
        with pytest.raises(typer.Exit) as done:
            fails(exc, as_json=True, out="/o")
        said = capsys.readouterr()
        assert done.value.exit_code == cli.EXIT_INPUT, exc
        assert json.loads(said.out) == {"error": "error", "exit_code": 2, "message": (
            f"{exc.filename or '/o'}: {exc.strerror}; {fix} or point --out elsewhere")}


def test_an_atomic_write_that_fails_leaves_no_temporary_file(tmp_path: Path) -> None:
    """The temporary file goes, the old file stays; a full disk DuckDB reports in words becomes the OSError."""
    from schemas.atomic import replace_atomically

    target = tmp_path / "memo.parquet"
    target.write_text("old")

    def write(tmp: Path) -> None:
        tmp.write_text("half")
        raise RuntimeError("IO Error: Could not write file: No space left on device")

    with pytest.raises(OSError) as failed:
        replace_atomically(tmp_path / "memo.tmp.parquet", target, write)
    assert failed.value.errno == errno.ENOSPC and failed.value.filename == str(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memo.parquet"] and target.read_text() == "old"


def test_a_run_killed_after_tagging_leaves_no_tag_pinning_its_version(tmp_path: Path, prefect_harness: None,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A run killed between tagging its table version and switching the pointer published nothing: the next run
    deletes its tag (and one tagged by hand for a run id with no folder), so the version it pinned goes as
    retention says; the tags of the live publication and of the one rollback returns to stay."""
    from datetime import timedelta

    import tasks.index.store
    import tasks.publish.run
    from tasks.index.store import open_table, tag_version

    monkeypatch.setattr(tasks.index.store, "UNTAGGED_KEPT", timedelta(0))
    cfg = load_config(DEMO_CONFIG)
    rows = [json.loads(x) for x in (SEED / "corpus.jsonl").read_text().splitlines()]
    corpus, out = tmp_path / "corpus.jsonl", tmp_path / "out"
    uri = str(out / "lancedb")

    def night(n: int) -> None:
        rows[0]["text"] += f" Night {n}."
        corpus.write_text("".join(json.dumps(r) + "\n" for r in rows))
        run_stages(["index"], corpus=str(corpus), config=cfg, out=str(out), quiet=True)
        time.sleep(1.1)  # run ids sort by the second they start in

    night(0)
    night(1)

    def killed(*args: Any, **kwargs: Any) -> Path:
        raise KeyboardInterrupt  # the kill: after the tag, before the pointer switch

    with monkeypatch.context() as m:
        m.setattr(tasks.publish.run, "publish", killed)
        with pytest.raises(KeyboardInterrupt):
            night(2)
    table = open_table(uri, cfg.table)
    published = sorted(p.name for p in (out / "runs").iterdir() if not p.name.startswith("."))
    orphan = next(t for t in table.tags.list() if t not in published)  # the killed run's
    pinned = table.tags.list()[orphan]["version"]
    by_hand = "20261201T000000Z-abcd"  # a run id with no folder anywhere
    tag_version(uri, cfg.table, by_hand, pinned)
    tag_version(uri, cfg.table, "keep-me", int(table.tags.list()[published[0]]["version"]))  # not a run's: stays
    night(3)
    runs = sorted(p.name for p in (out / "runs").iterdir() if not p.name.startswith("."))
    live = current_run(out).name
    previous = current_manifest(out)["previous"]
    table = open_table(uri, cfg.table)
    tags = table.tags.list()
    assert orphan not in tags and by_hand not in tags
    assert {live, previous, "keep-me"} <= set(tags)
    assert set(tags) == set(runs) | {"keep-me"}
    versions = {v["version"] if isinstance(v, dict) else v.version for v in table.list_versions()}
    assert pinned not in versions  # no longer tagged, not the latest: retention dropped it
    assert versions == {int(t["version"]) for t in tags.values()} | {int(table.version)}
