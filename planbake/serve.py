"""`planbake serve`: the plan cache as an HTTP JSON API (FastAPI on uvicorn) for services in any language.

FastAPI because it is a maintained ASGI stack whose OpenAPI document comes from the same pydantic models the
request bodies are checked with. Lookups answer from the live publication (`serve_live.Live`), which follows
CURRENT; every served question goes to the request log (`serve_log.RequestLog`), scrubbed first."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from planbake.serve_front import Front, json_bytes
from planbake.serve_live import Live, Served
from planbake.serve_log import RequestLog
from planbake.serve_metrics import Metrics
from schemas.cache import MAX_QUESTION_CHARS, LookupResult, utc_date
from schemas.errors import PlanbakeError
from tasks.plan.class_planner import lookup as planned_lookup

if TYPE_CHECKING:  # imported by whoever makes one: the planner brings the plan stage's modules
    from planbake.serve_planner import OnlinePlanner

API_VERSION = "1"
CHECK_MS = 500  # how often the pointer is checked
STEP_TIMEOUT_S = 5.0  # a retrieve step's search past this is reported not covered
MAX_HISTORY = 50
MAX_BUDGET = 100


class LookupRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="The user's question.")
    history: list[str] = Field(default_factory=list, max_length=MAX_HISTORY,
                               description="The user's earlier questions, oldest first; a follow-up resolves against "
                                           "the last one.")
    now: date | datetime | None = Field(None, description="The date 'this year' resolves against (default: today, "
                                                          "UTC).")
    user: str | None = Field(None, max_length=200, description="A pseudonymous user id; the request log keeps only its "
                                                               "fingerprint.")


class RetrieveRequest(LookupRequest):
    budget: int | None = Field(None, ge=1, le=MAX_BUDGET, description="Chunks in the context (default: the "
                                                                      "publication's planning.budget).")


class Constraint(BaseModel):
    facet: str
    value: str


class LookupResponse(BaseModel):
    """`PlanCache.lookup(...).to_json()` and the run id of the publication that answered."""

    run_id: str
    hit: bool
    route: str = Field(description="one_search | split | split_original | online_planner")
    key: str | None
    shape: str | None
    shape_type: str | None
    skeleton: str | None
    constraints: list[Constraint]
    plan: dict[str, Any] | None
    where: dict[str, str | None]
    source: str | None
    reason: str
    followup: bool
    resolved: str | None
    trace: dict[str, Any]


class Part(BaseModel):
    id: str
    query: str
    filters: dict[str, str]
    answer: str | None
    error: str | None
    hits: list[str]
    context: list[str]
    covered: bool
    scope: dict[str, Any] | None = None


class NotCovered(BaseModel):
    part: str
    query: str
    reason: str


class RetrieveResponse(BaseModel):
    run_id: str
    lookup: LookupResponse
    context: list[dict[str, Any]]
    parts: list[Part]
    not_covered: list[NotCovered]
    searches: int


class Problem(BaseModel):
    error: str
    message: str


def _json(doc: Any, status: int = 200) -> Response:
    return Response(json_bytes(doc), status_code=status, media_type="application/json")


def _problem(status: int, error: str, message: str) -> Response:
    return _json({"error": error, "message": message}, status)


def _not_installed(exc: ImportError) -> Response:
    """A retrieve on a server with the serving install only (docs/operations.md): 501 and what is missing."""
    return _problem(501, "not_installed", f"retrieve needs planbake's full install (LanceDB, the embedding model); "
                                          f"this server has the serving install, which answers /v1/lookup only "
                                          f"({exc.name or exc} is not installed)")


def create_app(out: Path, request_log: Path | None = None, check_ms: int = CHECK_MS,
               step_timeout_s: float = STEP_TIMEOUT_S, planner: OnlinePlanner | None = None,
               loaded: Served | None = None) -> FastAPI:
    """The API over the publication root (or run folder) `out`; `request_log`: the folder rows go to (none: off);
    `planner`: plans misses at request time (none: a miss says so and the caller decides); `loaded`: the
    publication CURRENT names, opened already (`serve_live.load`), so it is not opened twice."""
    metrics = Metrics()
    live = Live(out, on_reload=lambda new, old: metrics.served(new.run_id, old.run_id if old else None),
                on_refused=lambda run: metrics.refused.inc(), served=loaded)
    if loaded is not None:
        metrics.served(loaded.run_id, None)
    log = RequestLog(request_log) if request_log is not None else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        live.check()
        live.start(check_ms)
        yield
        live.stop()
        if planner is not None:
            planner.close()
        if log is not None:
            log.close()

    app = FastAPI(title="planbake", version=API_VERSION, lifespan=lifespan,
                  description="Query-decomposition plans precomputed offline, looked up online.",
                  # the server's metrics are its own (/metrics); no OpenTelemetry check on every request
                  telemetry={"tracing": False, "metrics": False, "logs": False})
    app.state.live, app.state.metrics, app.state.request_log = live, metrics, log

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        problems = "; ".join("body: not valid JSON" if e["type"] == "json_invalid" else
                             f"{'.'.join(str(p) for p in e['loc'] if p != 'body') or 'body'}: {e['msg']}"
                             for e in exc.errors())
        return _problem(422, "bad_request", problems)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        return _problem(exc.status_code, "http_error", str(exc.detail))

    @app.exception_handler(PlanbakeError)
    async def unavailable(request: Request, exc: PlanbakeError) -> Response:
        """An expected failure of what a request needs (the published index version gone): 503 and its message."""
        return _problem(503, exc.kind, str(exc))

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> Response:
        return _problem(500, "internal", f"{type(exc).__name__}; see the server's log")

    def served_now() -> Served | None:
        return live.served

    async def answer(served: Served, body: LookupRequest) -> LookupResult | Response:
        """The lookup (a miss planned online where a planner is set), counted and logged; a question of the wrong
        form is a 400 with the reason."""
        try:
            res = planned_lookup(served.cache, body.question, body.now, history=body.history)  # with class plans
        except TypeError as exc:
            return _problem(400, "bad_request", str(exc))
        reason = res.reason  # the lookup's own: a fixed text, so the metric's labels stay few
        if planner is not None and res.route == "online_planner" and res.skeleton and not res.unresolved:
            res, outcome = await run_in_threadpool(planner.plan, served.cache, res, body.question, utc_date(body.now))
            metrics.planner.labels(outcome).inc()
            if outcome != "planned":
                metrics.fallbacks.inc()
        if res.hit:
            metrics.hits.inc()
        else:
            metrics.miss(reason)
        if log is not None:
            log.append(body.question, body.user, served.cache.scrub)
        return res

    not_ready = {"error": "not_ready", "message": "no publication loaded yet; see /readyz"}

    async def served_answer(body: LookupRequest) -> tuple[Served, LookupResult] | Response:
        """The live publication and its answer to the question, or the response that ends the request (503
        before a publication is loaded, 400 for a question of the wrong form)."""
        served = served_now()
        if served is None:
            return _json(not_ready, 503)
        res = await answer(served, body)
        return res if isinstance(res, Response) else (served, res)

    async def lookup_answer(body: LookupRequest) -> tuple[int, bytes]:
        """`POST /v1/lookup`'s status and body, for the route and for `Front`, which answers it without FastAPI."""
        try:
            got = await served_answer(body)
        except PlanbakeError as exc:
            return 503, json_bytes({"error": exc.kind, "message": str(exc)})
        if isinstance(got, Response):
            return got.status_code, bytes(got.body)
        served, res = got
        return 200, json_bytes({"run_id": served.run_id, **res.to_json()})

    app.add_middleware(Front, metrics=metrics, model=LookupRequest, answer=lookup_answer)

    @app.post("/v1/lookup", response_model=None, responses={200: {"model": LookupResponse},
                                                            400: {"model": Problem}, 422: {"model": Problem},
                                                            503: {"model": Problem}})
    async def lookup(body: LookupRequest) -> Response:
        """The question's plan from the live publication: a hit (route, plan, per-step filters) or a miss and why."""
        status, payload = await lookup_answer(body)
        return Response(payload, status_code=status, media_type="application/json")

    @app.post("/v1/retrieve", response_model=None, responses={200: {"model": RetrieveResponse},
                                                              400: {"model": Problem}, 422: {"model": Problem},
                                                              501: {"model": Problem}, 503: {"model": Problem}})
    async def retrieve(body: RetrieveRequest) -> Response:
        """The lookup, then its plan run against the publication's index version: context by part, with each part
        not covered and why. A step whose search fails or passes its timeout leaves the other parts in the answer."""
        try:
            from planbake.serve_retrieve import serve_retrieve
        except ImportError as exc:
            return _not_installed(exc)
        got = await served_answer(body)
        if isinstance(got, Response):
            return got
        served, res = got
        try:
            doc = await run_in_threadpool(lambda: serve_retrieve(served.cache, served.index(), res, body.question,
                                                                 body.budget, step_timeout_s))
        except ImportError as exc:  # LanceDB there, the embedding model's libraries not
            return _not_installed(exc)
        metrics.not_covered.inc(len(doc["not_covered"]))
        return _json({"run_id": served.run_id, "lookup": {"run_id": served.run_id, **res.to_json()}, **doc})

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """The process answers."""
        return {"status": "ok"}

    @app.get("/readyz", response_model=None)
    async def readyz() -> Response:
        """Ready once a publication is loaded: its run id, or 503 and why not."""
        served = served_now()
        if served is None:
            return _json({"ready": False, "message": live.last_error or "no publication loaded yet"}, 503)
        return _json({"ready": True, "run_id": served.run_id, "reloads": live.reloads, "refused": live.refused})

    @app.get("/metrics", response_class=Response)
    async def prometheus() -> Response:
        """Prometheus text format: requests, hits, misses by reason, latency, publication id and age, reloads."""
        metrics.age.set(live.age_s())
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return app


def openapi_document(app: FastAPI | None = None) -> dict[str, Any]:
    """The API's OpenAPI document (docs/ holds a copy, checked by a test)."""
    return (app or create_app(Path("."))).openapi()


@contextmanager
def serving(app: FastAPI, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Run `app` on uvicorn in a thread of this process (port 0: a free one); yields its base URL, stops at exit."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="planbake-serve", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start; see its log")
            time.sleep(0.01)
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
