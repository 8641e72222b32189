"""Benchmark `planbake serve` on loopback: concurrent clients calling /v1/lookup while publications switch.

    .venv/bin/python -m benchmarks.bench_serve [--entries N] [--clients C] [--seconds S] [--switches W]
        [--server ARGS ...] [--rounds R] [--json]

A publication of N cache entries (default 100,000) is built as `benchmarks.bench_lookup` builds it, and copied W
times (default 10) under one root as further runs. The server (`planbake serve`, its own process, with a request
log) answers C concurrent clients (asyncio and httpx in this process, keep-alive connections) asking the
benchmark's question mix for S seconds, while CURRENT switches to the next copy every S / (W + 1) seconds. A
response is failed when it is no 200 or no JSON, mixed when its `run_id` differs from the run id of the trace it
carries (the publication that answered) or names no run of the root. Latency is the client's, send to parsed.
Each `--server` (extra `planbake serve` arguments; `DIR::ARGS` serves from the source tree DIR, an older checkout)
is measured in turn over the same publication, `--rounds` times: compare them by their ratios within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schemas.files import MANIFEST
from schemas.publication import POINTER

ROOT = Path(__file__).resolve().parent.parent


def copy_run(root: Path, source: Path, run_id: str) -> Path:
    """A copy of the run folder `source` under `root/runs/run_id`, its manifest naming it (not yet pointed to)."""
    run = root / "runs" / run_id
    shutil.copytree(source, run)
    manifest = json.loads((run / MANIFEST.name).read_text(encoding="utf-8"))
    manifest["run_id"] = run_id
    manifest["published_at"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    (run / MANIFEST.name).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return run


def point(root: Path, run_id: str) -> None:
    """Switch CURRENT to `run_id` atomically, as a publish or a rollback does (a temporary file, then rename)."""
    tmp = root / f".{POINTER}.bench.tmp"
    tmp.write_text(run_id + "\n", encoding="utf-8")
    os.replace(tmp, root / POINTER)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] if ordered else float("nan")


class _Connection:
    """One keep-alive HTTP/1.1 connection on asyncio streams: a client cheap enough that the server is measured,
    not the client library."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        data = json.dumps(body).encode()
        self.writer.write(f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                          f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = next(int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:"))
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


async def _clients(url: str, questions: list[str], clients: int, seconds: float, runs: set[str]) -> dict[str, Any]:
    host, port = url.removeprefix("http://").split(":")
    latencies: list[float] = []
    failed = mixed = 0
    seen: dict[str, int] = {}
    stop = time.monotonic() + seconds

    async def client(n: int) -> None:
        nonlocal failed, mixed
        conn = _Connection(host, int(port))
        i = n
        while time.monotonic() < stop:
            q = questions[i % len(questions)]
            i += clients
            t = time.perf_counter()
            try:
                status, raw = await conn.post("/v1/lookup", {"question": q, "user": f"bench-{n}", "now": "2026-11-25"})
                doc = json.loads(raw)
            except (OSError, ValueError, asyncio.IncompleteReadError, StopIteration):
                failed += 1
                conn.close()
                continue
            latencies.append(time.perf_counter() - t)
            if status != 200:
                failed += 1
                continue
            run_id = doc.get("run_id")
            if run_id != doc.get("trace", {}).get("run_id") or run_id not in runs:
                mixed += 1
            seen[run_id] = seen.get(run_id, 0) + 1
        conn.close()

    await asyncio.gather(*(client(n) for n in range(clients)))
    return {"requests": len(latencies) + failed, "ok": len(latencies), "failed": failed, "mixed": mixed,
            "latencies": latencies, "runs_seen": seen}


def prepare(entries: int, switches: int, workdir: Path) -> tuple[Path, list[str], list[str], int]:
    """The publication root (its `switches` + 1 runs, CURRENT at the first), the run ids and the questions."""
    from benchmarks.bench_lookup import CONFIG, SEED, build_publication, make_questions
    from schemas.config import load_config

    root = workdir / "out"
    t0 = time.perf_counter()
    built = build_publication(workdir / "built", entries, load_config(CONFIG))
    synthetic = built.pop("synthetic_questions")
    ids = [f"20261125T0000{n:02d}Z-bench" for n in range(switches + 1)]
    for run_id in ids:
        copy_run(root, workdir / "built", run_id)
    questions = [q for q, _ in make_questions(20_000, synthetic, SEED + 7)]
    print(f"publication: {built['entries']:,} entries, {len(ids)} runs; {time.perf_counter() - t0:.1f}s",
          file=sys.stderr, flush=True)
    return root, ids, questions, int(built["entries"])


def measure(root: Path, ids: list[str], questions: list[str], clients: int, seconds: float,
            serve_args: tuple[str, ...] = (), tree: Path = ROOT) -> dict[str, Any]:
    """One server (`planbake serve` of the source tree `tree`, with `serve_args`) measured from its first run on,
    CURRENT switching through the others."""
    point(root, ids[0])
    switches = len(ids) - 1
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))}
    server = subprocess.Popen([sys.executable, "-m", "planbake.cli", "serve", "--out", str(root), "--port", str(port),
                               "--request-log", str(root.parent / "request-log"), "--check-ms", "100", *serve_args],
                              cwd=tree, env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, server)
        asyncio.run(_clients(url, questions[:2000], clients, 3.0, set(ids)))  # warm-up, not counted

        async def measured() -> dict[str, Any]:
            async def switch() -> None:
                for run_id in ids[1:]:
                    await asyncio.sleep(seconds / (switches + 1))
                    point(root, run_id)
            task = asyncio.create_task(switch())
            got = await _clients(url, questions, clients, seconds, set(ids))
            await task
            return got

        got = asyncio.run(measured())
        time.sleep(0.5)
        metrics = _get(url + "/metrics")
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    lat = got.pop("latencies")
    reloads = sum(float(line.split()[-1]) for line in metrics.splitlines()
                  if line.startswith("planbake_reloads_total"))
    return {"server": " ".join(serve_args), "tree": str(tree), "clients": clients, "seconds": seconds,
            "switches": switches, **got, "lookups_per_s": round(len(lat) / seconds, 1),
            "p50_ms": round(_pct(lat, 50) * 1000, 2), "p99_ms": round(_pct(lat, 99) * 1000, 2),
            "mean_ms": round(statistics.fmean(lat) * 1000, 2) if lat else None, "server_reloads": reloads,
            "server_log": [line for line in err.splitlines() if "refused" in line][:5],
            "cpus": os.cpu_count(), "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}


def _get(url: str) -> str:
    import httpx

    return httpx.get(url, timeout=10).text


def _wait_ready(url: str, server: subprocess.Popen[str]) -> None:
    import httpx

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited: {server.stderr.read() if server.stderr else ''}")
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError("the server was not ready in 120 s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_serve", description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=100_000, help="cache entries (default 100,000)")
    ap.add_argument("--clients", type=int, default=16, help="concurrent clients (default 16)")
    ap.add_argument("--seconds", type=float, default=30.0, help="measured seconds (default 30)")
    ap.add_argument("--switches", type=int, default=10, help="publications switched to while measuring (default 10)")
    ap.add_argument("--server", action="append", default=None, metavar="ARGS",
                    help="a server to measure: extra 'planbake serve' arguments, or 'TREE::ARGS' to run the serve "
                         "of another source tree (an older checkout); repeat to compare (default: one, as is)")
    ap.add_argument("--rounds", type=int, default=1, help="measure the servers in turn this many times (default 1)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    if min(args.entries, args.clients, args.rounds) < 1 or args.switches < 0 or args.seconds <= 0:
        ap.error("--entries, --clients, --rounds and --seconds must be positive, --switches at least 0")
    servers = [(Path(v.split("::", 1)[0]).resolve(), v.split("::", 1)[1]) if "::" in v else (ROOT, v)
               for v in args.server or [""]]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_serve_") as tmp:
        root, ids, questions, entries = prepare(args.entries, args.switches, Path(tmp))
        for _ in range(args.rounds):
            for tree, serve_args in servers:
                row = {"entries": entries, **measure(root, ids, questions, args.clients, args.seconds,
                                                     tuple(serve_args.split()), tree)}
                rows.append(row)
                if not args.json:
                    print(f"{row['date']}: [{row['server'] or 'as is'}{'' if tree == ROOT else ' @' + str(tree)}] "
                          f"{entries:,} entries, {row['clients']} clients, {row['seconds']:g} s, {row['switches']} "
                          f"switches ({row['server_reloads']:g} reloads): {row['lookups_per_s']:,} lookups/s, "
                          f"p50 {row['p50_ms']} ms, p99 {row['p99_ms']} ms; {row['failed']} failed, {row['mixed']} "
                          f"mixed of {row['requests']:,}; runs seen {len(row['runs_seen'])}", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
