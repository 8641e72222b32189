"""The client examples in other languages (examples/): `planbake serve` started as a command on loopback over the
demo publication; the TypeScript (Node's fetch) and the Java (java.net.http) example each call /v1/lookup and
/v1/retrieve. Each skips where its runtime is not installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port, wait_ready

EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def server(demo_publication: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("request-log")
    proc = subprocess.Popen([sys.executable, "-m", "planbake.cli", "serve", "--out", str(demo_publication),
                             "--port", str(port), "--request-log", str(log)], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(proc, url)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _last_json_line(cmd: list[str]) -> dict:
    res = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "retrieve:" in res.stdout and "lookup: hit" in res.stdout, res.stdout
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_the_typescript_example(server: str) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    doc = _last_json_line([node, str(EXAMPLES / "client.mjs"), server])
    assert doc["lookup_hit"] is True and doc["run_id"] and doc["chunks"]


def test_the_java_example(server: str) -> None:
    java = shutil.which("java")
    if java is None:
        pytest.skip("java is not installed")
    doc = _last_json_line([java, str(EXAMPLES / "Example.java"), server])
    assert doc["lookup_hit"] is True and doc["run_id"] and doc["searches"] >= 1


def test_serve_refuses_a_root_with_nothing_published(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "planbake.cli", "serve", "--out", str(tmp_path / "none")], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60,
                         check=False)
    assert res.returncode == 4 and "nothing published yet" in res.stderr and "Traceback" not in res.stderr
