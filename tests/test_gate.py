"""The quality gate: a regressed run is not published, the last publication keeps answering, --force publishes."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from flows.run import run_stages
from planbake.cli import EXIT_GATE, EXIT_INPUT, app
from schemas.cache import PlanCache
from schemas.config import Gate, load_config
from schemas.errors import ConfigError, GateRejected, NoPublication
from schemas.files import GATE
from schemas.publication import current_run, read_manifest
from tasks.evaluate import questions_as_log, read_labeled
from tasks.publish.gate import QualityGate, compare
from tests.conftest import DEMO_CONFIG, ROOT, SEED

QUESTION = "Compare parental leave for the second parent in Berlin and Amsterdam."


def _corpus_without(tmp_path: Path, chunk_id: str) -> Path:
    rows = [json.loads(x) for x in (SEED / "corpus.jsonl").read_text().splitlines()]
    path = tmp_path / f"corpus-without-{chunk_id}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["id"] != chunk_id))
    return path


def _seed_config(tmp_path: Path, labeled: bool = True, **gate: float) -> Path:
    """The demo config on the seed handbook, its questions as the log and (unless told not) as the labeled set."""
    raw = yaml.safe_load(DEMO_CONFIG.read_text())
    log = questions_as_log(read_labeled(SEED / "questions.jsonl"), tmp_path / "log.jsonl", "2026-11-29T10:00:00")
    raw.update(corpus=str(SEED / "corpus.jsonl"), logs=str(log), labeled=[str(SEED)] if labeled else [], gate=gate)
    raw["mining"].update(min_count=1, min_users=1)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _labeled_figure(kept: Path, figure: str) -> float:
    """One figure of the seed set as the rejected run's gate.json recorded it."""
    (labeled,) = json.loads((kept / GATE.name).read_text())["labeled"].values()
    return float(labeled[figure])


def _nightly(*args: str) -> tuple[int, str, dict]:
    res = CliRunner().invoke(app, ["nightly", *args, "--json"])
    return res.exit_code, res.output, json.loads(res.stdout)  # --json: one document, whatever the outcome


def test_coverage_drop_is_not_published_until_forced(tmp_path: Path, prefect_harness: None) -> None:
    config, out = _seed_config(tmp_path), tmp_path / "out"
    code, output, first = _nightly("--config", str(config), "--out", str(out))
    assert code == 0, output
    assert first["gate"]["decision"] == "passed" and first["gate"]["baseline"] is None
    live = current_run(out)
    answer = PlanCache.open(out).lookup(QUESTION)
    assert answer.hit and answer.plan
    stored = (live / GATE.name).read_bytes()
    (live / GATE.name).unlink()  # a publication from before the gate: its labeled figures are scored anew
    rescored = QualityGate(load_config(config)).baseline(live, read_manifest(live))["labeled"]
    (live / GATE.name).write_bytes(stored)
    assert rescored == json.loads(stored)["labeled"]

    smaller = str(_corpus_without(tmp_path, "leave-amsterdam"))
    code, output, doc = _nightly("--config", str(config), "--out", str(out), "--corpus", smaller)
    assert code == EXIT_GATE, output
    assert doc["error"] == "rejected" and doc["exit_code"] == EXIT_GATE and "not published" in doc["message"]
    assert "not published" in output and "question 1: 1 -> 0.5" in output and "Failed checks:" in output
    assert "name documents the corpus does not hold (line 1, question 1: leave-amsterdam" in output  # why it dropped
    assert current_run(out) == live  # the last good publication stays live
    assert PlanCache.open(out).lookup(QUESTION) == answer  # and lookup keeps answering from it
    assert not list((out / "runs" / ".staging").iterdir())
    found = re.search(r"Report: (\S+report\.md)", output)
    assert found, output
    report = Path(found.group(1))
    assert Path(doc["report"]) == report
    rejected = read_manifest(report.parent.parent)
    assert report.parent.parent.parent == out / "rejected" and not (out / "runs" / rejected["run_id"]).exists()
    assert rejected["gate"]["decision"] == "rejected"
    assert "seed_handbook/questions.jsonl: part coverage" in rejected["gate"]["regressions"]
    dropped = _labeled_figure(report.parent.parent, "part_coverage")
    assert dropped <= 0.9  # the Amsterdam half of questions 1 and 2 is gone
    text = report.read_text()
    assert "**rejected**" in text and f"| seed_handbook/questions.jsonl: part coverage | 1 | {dropped:g} |" in text

    code, output, forced = _nightly("--config", str(config), "--out", str(out), "--corpus", smaller, "--force")
    assert code == 0, output
    assert forced["gate"]["decision"] == "forced" and forced["gate"]["forced"] is True
    assert forced["gate"]["baseline"] == live.name and forced["previous"] == live.name
    assert "seed_handbook/questions.jsonl: questions losing coverage" in forced["gate"]["regressions"]
    now = current_run(out)
    assert now.name == forced["run_id"] != live.name
    assert read_manifest(now)["gate"]["decision"] == "forced"
    assert "published anyway with --force" in (now / "report" / "report.md").read_text()
    assert PlanCache.open(out).lookup(QUESTION).trace["run_id"] == now.name


def _write_corpus(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_losing_most_of_the_corpus_is_refused_without_labels(tmp_path: Path, prefect_harness: None) -> None:
    """No labeled set: an ordinary corpus update passes; a corpus that lost every Berlin, Amsterdam and offsite
    document (10 of 17 chunks, every split route now one search) is refused by the label-free checks."""
    config, out = _seed_config(tmp_path, labeled=False), tmp_path / "out"
    rows = [json.loads(x) for x in (SEED / "corpus.jsonl").read_text().splitlines()]
    code, output, first = _nightly("--config", str(config), "--out", str(out))
    assert code == 0 and first["gate"]["decision"] == "passed", output

    edited = [dict(r) for r in rows] + [{"id": "parking-lisbon", "metadata": {"office": "Lisbon"},
                                        "text": "Parking in Lisbon: the office pays for a monthly transport pass."}]
    edited[1]["text"] += " Ask HR for the form."
    update = _write_corpus(tmp_path / "update.jsonl", edited)
    code, output, second = _nightly("--config", str(config), "--out", str(out), "--corpus", str(update))
    assert code == 0 and second["gate"]["decision"] == "passed", output
    checks = {c["name"]: c for c in second["gate"]["checks"]}
    assert checks["chunks deleted"]["value"] == 0 and checks["facet values lost"]["value"] == 0
    assert checks["route coverage (measured)"]["value"] == checks["route coverage (measured)"]["last"] == 1
    live = current_run(out)

    gone = [r for r in edited if r["metadata"].get("office") in ("Berlin", "Amsterdam")
            or r["id"].startswith("offsite")]
    assert len(gone) == 10
    lost = str(_write_corpus(tmp_path / "lost.jsonl", [r for r in edited if r not in gone]))
    code, output, doc = _nightly("--config", str(config), "--out", str(out), "--corpus", lost)
    assert code == EXIT_GATE, output
    assert current_run(out) == live  # CURRENT unchanged
    for says in ("chunks deleted 0.5556 (last n/a; limit <= 0.2): 10 of the last publication's 18 chunks are gone",
                 "facet values lost 2 (last n/a; limit <= 0): office: Amsterdam, Berlin (no chunk holds them now)",
                 "route coverage (measured)", "'what is the per diem in {office} and in {office}' 1 -> 0",
                 "plan changes (cache hits)"):
        assert says in doc["message"], doc["message"]
    # the company-wide parental leave policy still answers both offices' steps (facet scope)
    assert "'compare parental leave for the second parent in {office} and {office}'" not in doc["message"]
    rejected = read_manifest(Path(doc["report"]).parent.parent)
    assert rejected["gate"]["regressions"] == ["chunks deleted", "facet values lost", "route coverage (measured)",
                                               "plan changes (cache hits)"]
    figures = json.loads((Path(doc["report"]).parent.parent / GATE.name).read_text())  # kept beside the report
    assert figures["index_change"]["facet_values_lost"] == {"office": ["Amsterdam", "Berlin"]}
    assert figures["route_coverage"]["value"] < figures["route_coverage"]["last"] - 0.1
    text = Path(doc["report"]).read_text()
    assert "| chunks deleted | n/a | 0.5556 | <= 0.2 | **regressed** |" in text

    code, output, forced = _nightly("--config", str(config), "--out", str(out), "--corpus", lost, "--force")
    assert code == 0 and forced["gate"]["decision"] == "forced", output
    assert current_run(out).name == forced["run_id"] != live.name


def test_a_rejection_is_said_once(tmp_path: Path, prefect_harness: None) -> None:
    """From the command line, the gate's verdict is one line: the flow's log record of it (kept for a deployment's
    log) is not printed beside the CLI's."""
    from prefect.settings import PREFECT_API_URL

    config = _seed_config(tmp_path)
    env = {**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value())}

    def nightly(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(ROOT / ".venv" / "bin" / "planbake"), "nightly", "--config", str(config), "--out",
                               str(tmp_path / "out"), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600)

    assert nightly().returncode == 0
    proc = nightly("--corpus", str(_corpus_without(tmp_path, "leave-amsterdam")))
    assert proc.returncode == EXIT_GATE, proc.stderr
    assert proc.stderr.count("not published") == 1, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("rejected: quality gate: run ")


def test_first_run_is_held_to_its_own_floors(tmp_path: Path, prefect_harness: None) -> None:
    cfg = load_config(_seed_config(tmp_path, min_part_coverage=0.95))
    out = tmp_path / "out"
    with pytest.raises(GateRejected, match="nothing is published") as err:
        run_stages(["index", "mine", "plan"], corpus=str(_corpus_without(tmp_path, "leave-amsterdam")),
                   config=cfg, out=str(out), quiet=True)
    with pytest.raises(NoPublication):
        current_run(out)
    text = (err.value.kept / "report" / "report.md").read_text()
    assert "floors only (first run)" in text
    dropped = _labeled_figure(err.value.kept, "part_coverage")
    assert dropped < 0.95
    name = "seed_handbook/questions.jsonl: part coverage"
    row = f"| {name} | n/a | {dropped:g} | >= 0.95, drop <= 0.05 | **regressed** |"
    assert row in text


def _figures(**kw: object) -> dict:
    base = {"validity": 0.9, "fallbacks": 0.0, "cache_coverage": 0.8, "route_changes": 0.1, "quarantined": 0.01,
            "labeled": {"k": {"name": "set", "part_coverage": 0.8, "all_parts": 0.6,
                              "questions": {"1": 1.0, "2": 0.5, "3": 1.0}}},
            "index_change": {"chunks_deleted": 0.05, "deleted": 12, "chunks": 240, "facet_values_lost": {}},
            "route_coverage": {"value": 0.9, "last": 0.95, "dropped": [["how many vacation days in {office}", 1, 0]]},
            "plan_changes": {"value": 0.1, "changed": 30, "keys": 1800}}
    return {**base, **kw}


@pytest.mark.parametrize(("change", "failed"), [
    ({}, []),
    ({"validity": 0.8}, ["plan validity"]),
    ({"validity": 0.45}, ["plan validity"]),
    ({"fallbacks": 0.2}, ["fallbacks"]),
    ({"cache_coverage": 0.6}, ["cache coverage (last day)"]),
    ({"route_changes": 0.6}, ["route changes"]),
    ({"quarantined": 0.05}, []),
    ({"index_change": {"chunks_deleted": 0.3, "deleted": 72, "chunks": 240, "facet_values_lost": {}}},
     ["chunks deleted"]),
    ({"index_change": {"chunks_deleted": 0.0, "deleted": 0, "chunks": 240, "facet_values_lost": {"year": ["2024"]}}},
     ["facet values lost"]),
    ({"route_coverage": {"value": 0.8, "last": 0.95, "dropped": []}}, ["route coverage (measured)"]),
    ({"plan_changes": {"value": 0.3, "changed": 500, "keys": 1800}}, ["plan changes (cache hits)"]),
    ({"quarantined": 0.14}, ["quarantined log rows"]),  # a log whose format changed: many rows bad at once
    ({"labeled": {"k": {"name": "set", "part_coverage": 0.8, "all_parts": 0.6,
                        "questions": {"1": 0.5, "2": 1.0, "3": 1.0}}}}, ["set: questions losing coverage"]),
    ({"labeled": {"k": {"name": "set", "part_coverage": 0.7, "all_parts": 0.4,
                        "questions": {"1": 1.0, "2": 0.5, "3": 1.0}}}}, ["set: part coverage", "set: all parts"]),
])
def test_each_limit_against_the_last_publication(change: dict, failed: list[str]) -> None:
    checks = compare(_figures(**change), _figures(), Gate())
    assert [c.name for c in checks if not c.ok] == failed


def test_the_label_free_checks_name_what_changed() -> None:
    new = _figures(index_change={"chunks_deleted": 0.5882, "deleted": 10, "chunks": 17,
                                 "facet_values_lost": {"office": ["Amsterdam", "Berlin"]}},
                   route_coverage={"value": 0.2, "last": 1.0, "dropped": [[f"shape {n}", 1, 0] for n in range(7)]})
    checks = {c.name: c for c in compare(new, _figures(), Gate(max_facet_values_lost=2))}
    assert checks["chunks deleted"].detail == "10 of the last publication's 17 chunks are gone"
    assert checks["facet values lost"].ok and checks["facet values lost"].value == 2  # a looser limit
    assert checks["facet values lost"].detail == "office: Amsterdam, Berlin (no chunk holds them now)"
    assert checks["route coverage (measured)"].detail == (
        "shapes losing coverage: 'shape 0' 1 -> 0, 'shape 1' 1 -> 0, 'shape 2' 1 -> 0, 'shape 3' 1 -> 0, "
        "'shape 4' 1 -> 0 and 2 more")
    assert checks["plan changes (cache hits)"].detail == "30 of 1800 cache keys in both runs got another route or plan"
    assert [c.name for c in compare(new, _figures(), Gate()) if not c.ok] == [
        "chunks deleted", "facet values lost", "route coverage (measured)"]


def test_measured_coverage_counts_questions_with_no_evidence(tmp_path: Path) -> None:
    """A shape whose sampled questions the corpus no longer answers measures 1.0 on every route (nothing needed):
    the gate counts those questions 0, and a shape classified null 0; an evaluation from before `unanswered` was
    recorded is compared as it was measured."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from schemas.files import CACHE, TEMPLATES
    from tasks.publish.drift import plan_changes, route_coverage

    def run(name: str, shapes: dict[str, tuple[str, dict]], cache: dict[str, tuple[str, str | None, int]]) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        rows = [{"shape_id": s, "skeleton": f"skeleton {s}", "type": kind, "route": ev.get("route", "one_search"),
                 "evaluation": json.dumps(ev)} for s, (kind, ev) in shapes.items()]
        pq.write_table(pa.Table.from_pylist(rows, TEMPLATES.schema), folder / TEMPLATES.name)
        entries = [{"key": k, "shape_id": k.split("|")[0], "route": r, "plan": p, "questions": n}
                   for k, (r, p, n) in cache.items()]
        pq.write_table(pa.Table.from_pylist(entries, CACHE.schema), folder / CACHE.name)
        return folder

    full = {"route": "split", "questions": 2, "coverage": {"one_search": 0.5, "split": 1.0}}
    step = {"id": "s1", "query": "leave in {office}", "filters": {"office": "Berlin"}}
    split = json.dumps({"steps": [step, {**step, "id": "s2", "filters": {"office": "Amsterdam"}}]})
    reworded = json.dumps({"steps": [{**step, "query": "parental leave in Berlin"},
                                     {**step, "id": "s2", "filters": {"office": "Amsterdam"}}]})
    old = run("old", {"a": ("comparison", {**full, "unanswered": 0}), "b": ("bridge", {**full, "unanswered": 0}),
                      "c": ("single", {"route": "one_search", "questions": 1, "coverage": {}})},
              {"a|x": ("split", split, 3), "a|y": ("split", split, 1), "b|x": ("split", split, 4)})
    new = run("new", {"a": ("comparison", {**full, "route": "one_search", "coverage": {"one_search": 1.0},
                                           "unanswered": 2}),
                      "b": ("null", {"route": "one_search", "questions": 0, "coverage": {}}),
                      "c": ("single", {"route": "one_search", "questions": 1, "coverage": {}})},
              {"a|x": ("one_search", None, 3), "a|y": ("split", reworded, 1), "b|x": ("split", split, 4)})
    cov = route_coverage(new, old)
    assert (cov.value, cov.last) == (0.0, 1.0)  # c measured nothing: left out
    assert cov.dropped == [("skeleton a", 1.0, 0.0), ("skeleton b", 1.0, 0.0)]
    changes = plan_changes(new, old)  # a step query's wording alone is no change
    assert (changes.value, changes.changed, changes.keys) == (0.375, 1, 3)
    before = run("before", {"a": ("comparison", full)}, {})  # no `unanswered`: compared as measured
    assert (route_coverage(new, before).value, route_coverage(new, before).last) == (1.0, 1.0)


def test_a_set_whose_documents_are_gone_says_so_in_every_failed_check() -> None:
    """Only one question lost coverage (the set's averages held): that check names the missing documents too."""
    unheld = "1 part(s) name documents the corpus does not hold (question 1: leave-amsterdam)"
    new = _figures(labeled={"k": {"name": "set", "part_coverage": 0.8, "all_parts": 0.6, "unheld": unheld,
                                  "questions": {"1": 0.5, "2": 1.0, "3": 1.0}}})
    (failed,) = [c for c in compare(new, _figures(), Gate()) if not c.ok]
    assert failed.name == "set: questions losing coverage"
    assert failed.detail.startswith("question 1: 1 -> 0.5") and unheld in failed.detail


def test_first_run_checks_floors_only() -> None:
    low = _figures(validity=0.6, fallbacks=1.0, cache_coverage=0.0, route_changes=None)
    assert all(c.ok for c in compare(low, None, Gate()))
    assert "route changes" not in {c.name for c in compare(low, None, Gate())}
    failed = [c.name for c in compare(low, None, Gate(min_validity=0.7, min_all_parts=0.7)) if not c.ok]
    assert failed == ["plan validity", "set: all parts"]
    unreadable = _figures(quarantined=0.6)  # most of the logs unreadable: no baseline needed to refuse it
    assert [c.name for c in compare(unreadable, None, Gate()) if not c.ok] == ["quarantined log rows"]


def test_the_gate_reads_the_quarantined_share_from_the_mined_figures(tmp_path: Path) -> None:
    from tasks.publish.gate import quarantined

    assert quarantined({"rows": 48157, "quarantined": 8108}) == pytest.approx(0.1441, abs=1e-4)
    assert quarantined({"rows": 0, "quarantined": 0}) is None and quarantined(None) is None
    gate = QualityGate(load_config(DEMO_CONFIG))
    mostly_bad = {"rows": 10, "quarantined": 90}
    verdict = gate.judge(tmp_path, {"stages_run": ["mine"], "mine": mostly_bad}, None, {})
    assert [c.name for c in verdict.regressions] == ["quarantined log rows"]
    # an `index` or `plan` run alone carries the live mine over: not its own figure to judge
    verdict = gate.judge(tmp_path, {"stages_run": ["index"], "mine": mostly_bad}, None, {})
    assert verdict.regressions == []


def test_gate_config_section(tmp_path: Path) -> None:
    raw = yaml.safe_load(DEMO_CONFIG.read_text())
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({**raw, "gate": {"max_route_change": 0.2}}))
    assert load_config(path).gate.max_route_change == 0.2 and load_config(DEMO_CONFIG).gate == Gate()
    path.write_text(yaml.safe_dump({**raw, "gate": {"max_route_chnge": 0.2}}))
    with pytest.raises(ConfigError, match="gate.max_route_chnge"):
        load_config(path)
    for table in ("", "../../elsewhere"):  # LanceDB's own error named no config line; a path left the index
        path.write_text(yaml.safe_dump({**raw, "table": table}))
        with pytest.raises(ConfigError, match=f"c.yaml:\\d+: field 'table': '{re.escape(table)}' is no table name"):
            load_config(path)


def test_bad_labeled_set_fails_before_any_work(tmp_path: Path, prefect_harness: None) -> None:
    raw = yaml.safe_load(DEMO_CONFIG.read_text())
    raw |= {k: str((DEMO_CONFIG.parent / raw[k]).resolve()) for k in ("corpus", "logs")}  # the copy lives elsewhere
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({**raw, "labeled": [str(tmp_path / "missing.jsonl")]}))
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["nightly", "--config", str(path), "--out", str(out)])
    assert res.exit_code == EXIT_INPUT and "missing.jsonl" in res.output and "`labeled:` entry" in res.output
    line = path.read_text().splitlines().index("labeled:") + 1  # the config line to fix, as for `corpus:`
    assert f"(from {path}:{line}: `labeled:`) an existing JSONL file" in " ".join(res.output.split()), res.output
    assert not out.exists()
    for name, body, says in [("list.jsonl", b'{"question": "q", "parts": []}\n[1, 2]\n', "list.jsonl:2: expected JSON"),
                             ("latin1.jsonl", b'{"question": "caf\xe9", "parts": []}\n', "latin1.jsonl:1: not UTF-8")]:
        (tmp_path / name).write_bytes(body)
        path.write_text(yaml.safe_dump({**raw, "labeled": [str(tmp_path / name)]}))
        res = CliRunner().invoke(app, ["nightly", "--config", str(path), "--out", str(out)])
        assert res.exit_code == EXIT_INPUT and says in res.output, res.output
        assert not out.exists()


def test_a_bad_corpus_record_fails_before_the_flow_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mistake in the corpus is found in a moment, not after the flow engine's start-up; nothing is written."""
    import flows.nightly

    def no_flow(**_: object) -> None:
        raise AssertionError("the flow started")

    monkeypatch.setattr(flows.nightly, "nightly_flow", no_flow)
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text('{"id": "a", "text": "Per diem in Lisbon."}\n{"id": "b", "text": "x", "metadata": {"year": '
                      '"soon"}}\n', encoding="utf-8")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["nightly", "--corpus", str(corpus), "--out", str(out)])
    assert res.exit_code == EXIT_INPUT, res.output
    assert "bad.jsonl:2: metadata 'year' of document 'b' must be a year" in " ".join(res.output.split())
    assert not out.exists()
    config = tmp_path / "model.yaml"  # a model folder that is not there: named with the config's line
    config.write_text(DEMO_CONFIG.read_text() + "model_path: /nonexistent/model\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["index", "--config", str(config), "--out", str(out)])
    assert res.exit_code == EXIT_INPUT, res.output
    line = len(DEMO_CONFIG.read_text().splitlines()) + 1
    assert f"model_path /nonexistent/model: no such folder (from {config}:{line}: `model_path:`)" in " ".join(
        res.output.split())
    assert not out.exists()
    (tmp_path / "not a model").mkdir()  # a folder that is there but holds no model: named before any work
    config.write_text(DEMO_CONFIG.read_text() + "model_path: not a model\n", encoding="utf-8")
    corpus = ROOT / "data" / "demo" / "corpus.jsonl"
    res = CliRunner().invoke(app, ["index", "--config", str(config), "--corpus", str(corpus), "--out", str(out)])
    assert res.exit_code == EXIT_INPUT, res.output
    assert (f"model_path {tmp_path / 'not a model'}: not a sentence-transformers model folder (no modules.json or "
            f"config.json) (from {config}:{line}: `model_path:`)") in " ".join(res.output.split())
    assert not out.exists()


def test_nightly_and_backfill_decide_current_versions_on_the_run_date(tmp_path: Path, prefect_harness: None) -> None:
    import pyarrow.parquet as pq

    config, out = _seed_config(tmp_path), tmp_path / "out"

    def current(doc: dict) -> dict[str, bool]:
        rows = pq.read_table(Path(doc["publication"]) / "chunks.parquet").to_pylist()
        return {r["id"]: r["is_current"] for r in rows if r["id"].startswith("remote-")}

    res = CliRunner().invoke(app, ["backfill", "--config", str(config), "--out", str(out), "--run-date", "2025-06-01",
                                   "--json"])
    assert res.exit_code == 0, res.output
    past = json.loads(res.stdout)
    assert past["index"]["run_date"] == "2025-06-01"
    assert current(past) == {"remote-2025": True, "remote-2026": False}  # 2026's was not yet in force
    code, output, today = _nightly("--config", str(config), "--out", str(out), "--run-date", "2026-12-05")
    assert code == 0, output
    assert current(today) == {"remote-2025": False, "remote-2026": True}
    assert today["index"]["embedded"] == 0 and today["index"]["updated"] == 2  # only the markers moved
    # remote-2026 came into force: a default search can newly find it, so no template's evaluation is reused
    assert today["index"]["now_current"] == 1 and today["plan"]["reused"] == 0
    assert _nightly("--config", str(config), "--out", str(out), "--run-date", "2026-13-01")[0] == EXIT_INPUT
