"""The server's outermost ASGI layer: counts and times every request, and answers a well-formed lookup itself.

`POST /v1/lookup` is the hot path. A JSON body that validates as a `LookupRequest` is answered here, one pydantic
call to check it and one `orjson` call to write the answer, without the routing, dependency solving and
per-request middleware FastAPI adds (about half the server's time per lookup). Any other request, and a lookup
body that does not validate, goes on to the FastAPI app, whose route is the documented one and whose error
answers (422 with the reason) stay as they are."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from pydantic import BaseModel, ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from planbake.serve_metrics import Metrics

LOOKUP = "/v1/lookup"
JSON_HEADERS = [(b"content-type", b"application/json")]


def json_bytes(doc: Any) -> bytes:
    """A response body: compact UTF-8 JSON (a served plan's read-only dicts and lists are written as such)."""
    return orjson.dumps(doc, default=str)


def _json_body(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"content-type":
            return value.split(b";", 1)[0].strip().lower() == b"application/json"
    return False


class Front:
    """`answer(request)` -> (status, body) answers a validated lookup; `model` is its request model."""

    def __init__(self, app: ASGIApp, metrics: Metrics, model: type[BaseModel],
                 answer: Callable[[Any], Awaitable[tuple[int, bytes]]]) -> None:
        self.app, self.metrics, self.model, self.answer = app, metrics, model, answer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500
        endpoint = ""

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            if scope["path"] == LOOKUP and scope["method"] == "POST" and _json_body(scope):
                body = await _read(receive)
                try:
                    request = self.model.model_validate_json(body)
                except ValidationError:  # FastAPI's route says why, as it always has
                    receive = _replay(body, receive)
                else:
                    endpoint = LOOKUP
                    status, payload = await self.answer(request)
                    await send({"type": "http.response.start", "status": status,
                                "headers": [*JSON_HEADERS, (b"content-length", str(len(payload)).encode())]})
                    await send({"type": "http.response.body", "body": payload})
                    return
            await self.app(scope, receive, sending)
        finally:
            route = endpoint or getattr(scope.get("route"), "path", "other")  # the router sets it on the scope
            self.metrics.request(route, status, time.perf_counter() - start)


async def _read(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives the body read already, then whatever the connection says next (a disconnect)."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again
