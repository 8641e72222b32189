"""The request log: rows `planbake mine` reads, scrubbed before they are written, one folder a day; and the loop it
closes: a new question shape asked through a real server by 3 users misses, a nightly over the request log
publishes, the server reloads, and the same question is a hit."""

from __future__ import annotations

import json
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from planbake.serve import create_app, serving
from planbake.serve_log import ANONYMOUS, RequestLog, day_file, pseudonym
from schemas.publication import current_run
from tests.conftest import DEMO_CONFIG, ROOT
from tests.test_pii_nightly import PLANTED, Needles
from tests.test_pii_planted import CASES, QUESTIONS

EMAIL_USER = "greta.lindqvist@example.com"


def _rows(folder: Path) -> list[dict[str, str]]:
    return [json.loads(line) for f in sorted(folder.rglob("*.jsonl")) for line in f.read_text("utf-8").splitlines()]


def test_planted_personal_data_never_reaches_the_request_log(demo_publication: Path, tmp_path: Path) -> None:
    log = tmp_path / "request-log"
    with TestClient(create_app(demo_publication, log)) as client:
        for case in CASES:
            assert client.post("/v1/lookup", json={"question": case.text, "user": EMAIL_USER}).status_code == 200
        history = [CASES[0].text, CASES[1].text]
        client.post("/v1/retrieve", json={"question": CASES[2].text, "history": history, "user": EMAIL_USER})
    rows = _rows(log)
    assert len(rows) == len(CASES) + 1
    assert {r["user"] for r in rows} == {pseudonym(EMAIL_USER)}
    assert [set(r) for r in rows] == [{"ts", "user", "query"}] * len(rows)
    clean = "\n".join([(ROOT / "data" / "demo" / "corpus.jsonl").read_text("utf-8"), DEMO_CONFIG.read_text("utf-8"),
                       *QUESTIONS])
    files = [p.read_text("utf-8") for p in log.rglob("*") if p.is_file()]
    assert Needles.of(PLANTED, clean).find(files) == []
    assert "greta" not in "".join(files).casefold()
    assert sum("{" in r["query"] for r in rows) >= len(CASES)  # each value left its typed placeholder


def test_rows_go_to_their_days_folder(tmp_path: Path) -> None:
    log = RequestLog(tmp_path)
    log.append("vacation days in Berlin", "u1", str.upper, datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC))
    log.append("vacation days in Lisbon", None, str.upper, datetime(2026, 12, 1, 0, 0, 1, tzinfo=UTC))
    log.close()
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.jsonl")) == [
        "date=2026-11-30/part-000.jsonl", "date=2026-12-01/part-000.jsonl"]
    assert json.loads(day_file(tmp_path, "2026-12-01").read_text("utf-8")) == {
        "ts": "2026-12-01T00:00:01.000Z", "user": ANONYMOUS, "query": "VACATION DAYS IN LISBON"}


NEW_SHAPE = "can I bring my dog to the office in {}"  # no shape of the demo logs


def test_the_loop_a_miss_asked_by_three_users_is_a_hit_after_the_nightly(
        demo_publication: Path, tmp_path: Path, prefect_harness: None) -> None:
    from flows.nightly import nightly_flow

    root = tmp_path / "out"
    shutil.copytree(demo_publication, root)
    first = current_run(root).name
    log = tmp_path / "request-log"
    asked = [(user, NEW_SHAPE.format(office)) for user in ("ana", "ben", "chloe") for office in ("Berlin", "Lisbon")]
    with serving(create_app(root, log, check_ms=50)) as url, httpx.Client(base_url=url, timeout=30) as http:
        for user, question in asked:
            doc = http.post("/v1/lookup", json={"question": question, "user": user}).json()
            assert (doc["hit"], doc["route"], doc["run_id"]) == (False, "online_planner", first), doc
        assert len(_rows(log)) == len(asked)

        res = nightly_flow(config=str(DEMO_CONFIG), out=str(root), logs=str(log), quiet=True, force=True)
        published = current_run(root).name
        assert published != first, res
        for _ in range(200):  # the server follows CURRENT by itself
            if http.get("/readyz").json()["run_id"] == published:
                break
            time.sleep(0.05)
        doc = http.post("/v1/lookup", json={"question": NEW_SHAPE.format("Warsaw"), "user": "dan"}).json()
    assert doc["run_id"] == published and doc["hit"], doc
    assert doc["skeleton"] == NEW_SHAPE.format("{office}").lower() and doc["constraints"] == [
        {"facet": "office", "value": "Warsaw"}]


@pytest.mark.parametrize("user", ["", None])
def test_a_request_without_a_user_is_logged_as_anonymous(user: str | None) -> None:
    assert pseudonym(user) == ANONYMOUS
    assert pseudonym("u1") != pseudonym("u2") and pseudonym("u1").startswith("u-")
