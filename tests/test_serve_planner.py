"""The online planner against a real OpenAI-compatible server on loopback that answers good, invalid, slow and
failing plans: only a validated, checked plan is served; every other answer falls back to one search within the
latency budget, and each outcome is counted."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient

from planbake.serve import create_app, serving
from planbake.serve_planner import OnlinePlanner
from schemas.files import CONFIG
from schemas.publication import current_run

QUESTION = "can I bring my dog to the office in Berlin and Lisbon"  # no shape of the demo logs
GOOD = {"steps": [{"id": f"s{n}", "query": f"bring my dog to the office in {{office_{n}}}",
                   "filters": {"office": f"{{office_{n}}}"}} for n in (1, 2)]}
INVENTED = {"steps": [{"id": "s1", "query": "bring my dog to the office", "filters": {"office": "Warsaw"}}]}
CYCLE = {"steps": [{"id": "s1", "query": "dog {office_1}", "depends_on": ["s2"], "filters": {"office": "{office_1}"}},
                   {"id": "s2", "query": "dog {office_2}", "depends_on": ["s1"], "filters": {"office": "{office_2}"}}]}


class ModelServer:
    """Answers /v1/chat/completions as `mode` says: a plan, text, a late plan, or a server error."""

    def __init__(self) -> None:
        self.mode = "good"
        self.asked: list[dict[str, Any]] = []
        self.release = threading.Event()
        self.app = FastAPI()

        @self.app.post("/v1/chat/completions")
        def complete(body: dict[str, Any], request: Request) -> Any:
            self.asked.append(body)
            content = {"good": json.dumps(GOOD), "invented": json.dumps(INVENTED), "cycle": json.dumps(CYCLE),
                       "not_json": "Sure! Here is a plan: search for dogs.", "slow": json.dumps(GOOD)}.get(self.mode)
            if self.mode == "slow":
                self.release.wait(10)
            if self.mode == "failing":
                return JSONResponse({"error": "model crashed"}, status_code=500)
            return {"choices": [{"message": {"content": content}, "finish_reason": "stop"}],
                    "usage": {"completion_tokens": 40}}


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[ModelServer, str]]:
    server = ModelServer()
    with serving(server.app) as url:
        yield server, url + "/v1"
        server.release.set()  # the slow answer's handler ends, so the server stops at once


@pytest.fixture(scope="module")
def without_class_routes(demo_publication: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo publication made with `planning.class_routes: false`: its comparison misses reach the planner."""
    out = tmp_path_factory.mktemp("no_class") / "out"
    shutil.copytree(demo_publication, out)
    config = current_run(out) / CONFIG.name
    doc = json.loads(config.read_text(encoding="utf-8"))
    doc["planning"]["class_routes"] = False
    config.write_text(json.dumps(doc), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def client(without_class_routes: Path, model: tuple[ModelServer, str]) -> Iterator[TestClient]:
    planner = OnlinePlanner(model[1], "test-model", budget_s=0.5)
    with TestClient(create_app(without_class_routes, planner=planner)) as c:
        yield c


def test_a_miss_of_a_split_class_is_planned_by_its_class_not_online(
        demo_publication: Path, model: tuple[ModelServer, str]) -> None:
    """Class routes come first: the demo's comparisons of two offices measured a split, so the question (a
    comparison no log words so) gets the rule writer's split for its own words, and the model is not asked."""
    server, url = model
    server.mode, before = "good", len(server.asked)
    with TestClient(create_app(demo_publication, planner=OnlinePlanner(url, "test-model", budget_s=0.5))) as c:
        doc = c.post("/v1/lookup", json={"question": QUESTION}).json()
    assert (doc["hit"], doc["route"], doc["source"]) == (False, "split", "class"), doc
    assert [s["filters"] for s in doc["plan"]["steps"]] == [{"office": "Berlin"}, {"office": "Lisbon"}]
    assert len(server.asked) == before


def _ask(client: TestClient, server: ModelServer, mode: str) -> tuple[dict[str, Any], float]:
    server.mode = mode
    t = time.monotonic()
    r = client.post("/v1/lookup", json={"question": QUESTION})
    assert r.status_code == 200, r.text
    return r.json(), time.monotonic() - t


def test_a_good_plan_is_checked_filled_and_served(client: TestClient, model: tuple[ModelServer, str]) -> None:
    server, _ = model
    doc, _ = _ask(client, server, "good")
    assert (doc["hit"], doc["route"], doc["source"]) == (False, "split", "online_planner")
    assert [s["filters"] for s in doc["plan"]["steps"]] == [{"office": "Berlin"}, {"office": "Lisbon"}]
    assert "planned online" in doc["reason"] and set(doc["where"]) == {"s1", "s2"}
    asked = server.asked[-1]
    assert asked["model"] == "test-model" and asked["response_format"]["type"] == "json_schema"
    assert "can i bring my dog to the office in {office} and {office}" in asked["messages"][1]["content"]


@pytest.mark.parametrize(("mode", "why"), [("invented", "invented_value"), ("cycle", "cycle"),
                                           ("not_json", "invalid_json"), ("failing", "HTTPStatusError"),
                                           ("slow", "no answer within 0.5 s")])
def test_every_other_answer_falls_back_to_one_search_within_the_budget(
        client: TestClient, model: tuple[ModelServer, str], mode: str, why: str) -> None:
    server, _ = model
    doc, took = _ask(client, server, mode)
    assert (doc["hit"], doc["route"], doc["plan"]) == (False, "one_search", None), doc
    assert why in doc["reason"] and doc["reason"].endswith(": one search"), doc["reason"]
    assert took < 1.5, took


def test_outcomes_are_counted(client: TestClient) -> None:
    text = client.get("/metrics").text
    assert 'planbake_online_planner_calls_total{outcome="planned"}' in text
    assert 'planbake_online_planner_calls_total{outcome="late"} 1.0' in text
    assert 'planbake_online_planner_calls_total{outcome="invalid"} 3.0' in text
    assert 'planbake_online_planner_calls_total{outcome="failed"} 1.0' in text
    assert "planbake_online_planner_fallbacks_total 5.0" in text


def test_a_hit_never_asks_the_planner(client: TestClient, model: tuple[ModelServer, str]) -> None:
    server, _ = model
    before = len(server.asked)
    doc = client.post("/v1/lookup", json={"question": "Compare parental leave for the second parent in Berlin and "
                                                      "Amsterdam"}).json()
    assert doc["hit"] and len(server.asked) == before


def test_a_follow_up_that_did_not_resolve_never_asks_the_planner(client: TestClient,
                                                                 model: tuple[ModelServer, str]) -> None:
    """"what about Lisbon?" with no earlier question is a fragment: planning it would search for a fragment."""
    server, _ = model
    server.mode = "good"
    before = len(server.asked)
    doc = client.post("/v1/lookup", json={"question": "what about Lisbon?"}).json()
    assert doc["followup"] and doc["resolved"] is None and doc["plan"] is None
    assert len(server.asked) == before
    # resolved against the question before it, the same words are a question of their own: a miss is planned
    doc = client.post("/v1/lookup", json={"question": "what about Lisbon?",
                                          "history": ["can I bring my dog to the office in Berlin"]}).json()
    assert doc["followup"] and doc["resolved"].endswith("office in Lisbon"), doc
    assert len(server.asked) == before + 1
