"""Time from starting `planbake serve` to its first answered lookup (a 200 from /v1/lookup), in any environment.

    .venv/bin/python -m benchmarks.bench_first_lookup --out DIR [--python PATH] [--runs N]

`--python`: the interpreter whose installed planbake serves (default: this one), e.g. a serving install's venv
(docs/operations.md). The clock starts as the process is started and stops at the first 200; the lookup is asked
every 10 ms. Prints the runs and their median.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

QUESTION = {"question": "how many vacation days do we get in Berlin this year"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def first_lookup(python: str, out: Path, timeout_s: float = 120.0) -> float:
    """Seconds from the server's start to its first 200 on /v1/lookup."""
    port = _free_port()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/lookup", data=json.dumps(QUESTION).encode(),
                                     headers={"content-type": "application/json"})
    start = time.perf_counter()
    server = subprocess.Popen([python, "-m", "planbake.cli", "serve", "--out", str(out), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while time.perf_counter() - start < timeout_s:
            if server.poll() is not None:
                raise RuntimeError(f"the server exited: {server.stderr.read().decode() if server.stderr else ''}")
            try:
                with urllib.request.urlopen(request, timeout=5) as r:
                    if r.status == 200:
                        return time.perf_counter() - start
            except (urllib.error.URLError, ConnectionError):
                pass
            time.sleep(0.01)
        raise RuntimeError(f"no answered lookup in {timeout_s:g} s")
    finally:
        server.terminate()
        server.communicate(timeout=30)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_first_lookup", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="a publication root (or run folder)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter to serve with (default: this one)")
    ap.add_argument("--runs", type=int, default=3, help="servers started one after the other (default 3)")
    args = ap.parse_args(argv)
    times = [first_lookup(args.python, args.out) for _ in range(max(1, args.runs))]
    print(f"{args.python}: first answered lookup after {', '.join(f'{t:.2f}' for t in times)} s "
          f"(median {statistics.median(times):.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
