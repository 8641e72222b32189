"""`planbake serve`'s API over the demo publication: lookup as `PlanCache.lookup` answers, bad input as JSON with
the reason, health, readiness, Prometheus metrics, the committed OpenAPI document, and retrieve failing soft."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from planbake.serve import create_app, openapi_document
from schemas.cache import PlanCache
from tests.conftest import ROOT

COMPARE = "Compare parental leave for the second parent in Berlin and Amsterdam"
OPENAPI = ROOT / "docs" / "openapi.json"


@pytest.fixture(scope="module")
def client(demo_publication: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app = create_app(demo_publication, tmp_path_factory.mktemp("request-log"), step_timeout_s=2.0)
    with TestClient(app) as c:
        yield c


def _plain(doc: Any) -> Any:
    return json.loads(json.dumps(doc, default=str))


@pytest.mark.parametrize("body", [
    {"question": COMPARE, "now": "2026-11-30"},
    {"question": "what about Lisbon?", "history": ["how many vacation days do we get in Berlin"]},
    {"question": "how many vacation days do we get in Narnia this year", "now": "2026-11-30T23:30:00+00:00"},
    {"question": "   "},
])
def test_a_lookup_answers_as_the_cache_does_and_names_its_publication(client: TestClient, demo_publication: Path,
                                                                      body: dict[str, Any]) -> None:
    from datetime import date, datetime

    cache = PlanCache.open(demo_publication)
    now = body.get("now")
    when = None if now is None else (date.fromisoformat(now) if len(now) == 10 else datetime.fromisoformat(now))
    expected = _plain(cache.lookup(body["question"], when, history=body.get("history", [])).to_json())
    r = client.post("/v1/lookup", json=body)
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc.pop("run_id") == cache.manifest["run_id"] == doc["trace"]["run_id"]
    assert doc == expected


@pytest.mark.parametrize(("body", "status", "says"), [
    ({"question": ""}, 422, "question"),
    ({}, 422, "question: Field required"),
    ({"question": 3}, 422, "question"),
    ({"question": "x", "history": "abc"}, 422, "history"),
    ({"question": "x", "history": ["ok", None]}, 422, "history.1"),
    ({"question": "x", "now": "yesterday"}, 422, "now"),
    ({"question": "x" * 4001}, 422, "question"),
    ({"question": "x", "colour": "red"}, 422, "colour"),
    ({"question": "x", "budget": 0}, 422, "budget"),
])
def test_bad_input_is_json_with_the_reason_never_a_traceback(client: TestClient, body: dict[str, Any], status: int,
                                                             says: str) -> None:
    path = "/v1/retrieve" if "budget" in body else "/v1/lookup"
    r = client.post(path, json=body)
    assert r.status_code == status
    doc = r.json()
    assert doc["error"] == "bad_request" and says in doc["message"], doc
    assert "Traceback" not in r.text


def test_a_body_that_is_no_json_is_refused_with_the_reason(client: TestClient) -> None:
    r = client.post("/v1/lookup", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422 and r.json() == {"error": "bad_request", "message": "body: not valid JSON"}
    r = client.get("/v1/lookup")
    assert r.status_code == 405 and r.json()["error"] == "http_error"


def test_health_readiness_and_metrics(client: TestClient, demo_publication: Path) -> None:
    run_id = PlanCache.open(demo_publication).manifest["run_id"]
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"ready": True, "run_id": run_id, "reloads": 0, "refused": 0}
    client.post("/v1/lookup", json={"question": COMPARE})
    client.post("/v1/lookup", json={"question": "how do I feed a cat on the moon"})
    r = client.get("/metrics")
    assert r.headers["content-type"].startswith("text/plain")
    text = r.text
    for line in ("planbake_lookup_hits_total", 'planbake_lookup_misses_total{reason="no recurring shape has this',
                 'planbake_requests_total{endpoint="/v1/lookup",status="200"}',
                 'planbake_request_seconds_bucket{endpoint="/v1/lookup",le="0.01"}',
                 f'planbake_publication_info{{run_id="{run_id}"}} 1.0', "planbake_publication_age_seconds",
                 "planbake_reloads_total 0.0", "planbake_reloads_refused_total 0.0"):
        assert line in text, line


def test_not_ready_until_a_publication_is_loaded(tmp_path: Path) -> None:
    with TestClient(create_app(tmp_path / "empty")) as c:
        assert c.get("/healthz").status_code == 200
        r = c.get("/readyz")
        assert r.status_code == 503 and r.json()["ready"] is False and "nothing published" in r.json()["message"]
        r = c.post("/v1/lookup", json={"question": COMPARE})
        assert r.status_code == 503 and r.json()["error"] == "not_ready"


def test_the_committed_openapi_document_is_the_served_one(client: TestClient) -> None:
    served = client.get("/openapi.json").json()
    assert served == openapi_document()
    assert json.loads(OPENAPI.read_text(encoding="utf-8")) == served, (
        "docs/openapi.json is stale: python -m planbake.serve_openapi > docs/openapi.json")
    schemas = served["components"]["schemas"]
    assert {"LookupRequest", "LookupResponse", "RetrieveRequest", "RetrieveResponse", "Problem"} <= set(schemas)


def test_retrieve_returns_context_by_part(client: TestClient) -> None:
    r = client.post("/v1/retrieve", json={"question": COMPARE, "now": "2026-11-30"})
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["run_id"] == doc["lookup"]["run_id"] and doc["lookup"]["hit"]
    steps = {p["id"]: p for p in doc["parts"]}
    assert {"s1", "s2"} <= set(steps) and all(steps[s]["covered"] for s in ("s1", "s2"))
    assert doc["not_covered"] == [] and doc["context"]
    assert {c["id"] for c in doc["context"]} == {cid for p in doc["parts"] for cid in p["context"]}


def _failing_search(monkeypatch: pytest.MonkeyPatch, office: str, fail: Any) -> None:
    """The index's search fails (`fail` runs) for a step filtered to `office`; every other search is real."""
    from tasks.index.store import Index

    real = Index.search

    def search(self: Index, query: Any, k: int = 5, filters: dict[str, str] | None = None, **kw: Any) -> Any:
        if (filters or {}).get("office") == office:
            fail()
        return real(self, query, k, filters, **kw)

    monkeypatch.setattr(Index, "search", search)


def test_a_step_that_raises_leaves_the_other_parts_in_the_answer(client: TestClient,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def boom() -> None:
        raise RuntimeError("the index shard for Amsterdam is gone")

    _failing_search(monkeypatch, "Amsterdam", boom)
    r = client.post("/v1/retrieve", json={"question": COMPARE, "now": "2026-11-30"})
    assert r.status_code == 200, r.text
    doc = r.json()
    steps = {p["id"]: p for p in doc["parts"]}
    assert steps["s1"]["covered"] and steps["s1"]["context"]
    assert not steps["s2"]["covered"] and steps["s2"]["hits"] == []
    assert doc["not_covered"] == [{"part": "s2", "query": steps["s2"]["query"],
                                   "reason": "search failed: RuntimeError: the index shard for Amsterdam is gone"}]
    assert doc["context"]
    assert "planbake_retrieve_parts_not_covered_total 1.0" in client.get("/metrics").text


def test_a_step_past_its_timeout_is_not_covered_and_the_answer_comes_in_time(client: TestClient,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    client.post("/v1/retrieve", json={"question": COMPARE})  # the model warm, so only the slow step is late
    release = threading.Event()
    _failing_search(monkeypatch, "Amsterdam", lambda: release.wait(10))
    t = time.monotonic()
    doc = client.post("/v1/retrieve", json={"question": COMPARE, "now": "2026-11-30"}).json()
    took = time.monotonic() - t
    release.set()
    assert took < 6, took
    steps = {p["id"]: p for p in doc["parts"]}
    assert steps["s1"]["covered"] and not steps["s2"]["covered"]
    assert [n["reason"] for n in doc["not_covered"]] == ["search timed out after 2 s"]
