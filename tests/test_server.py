"""A real Prefect server on loopback, a process worker, the deployments of prefect.yaml, the nightly run."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from schemas.cache import PlanCache
from schemas.publication import current_manifest
from tests.conftest import ROOT

pytestmark = pytest.mark.server
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _prefect(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "prefect"), "--no-prompt", *args], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=timeout, check=False)


def test_nightly_deployment_on_a_real_server(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect"), "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_LOGGING_LEVEL": "WARNING",
           "PLANBAKE_HOME": str(ROOT), "HF_HUB_OFFLINE": "1"}
    env.pop("PREFECT_API_KEY", None)
    procs = [subprocess.Popen([str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                              env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("prefect server did not start in 120 s")
                time.sleep(1)
        pool = _prefect(env, "work-pool", "create", "planbake-process", "--type", "process")
        assert pool.returncode == 0, pool.stdout + pool.stderr
        deploy = _prefect(env, "deploy", "--all")
        assert deploy.returncode == 0, deploy.stdout + deploy.stderr
        listed = _prefect(env, "deployment", "ls")
        for name in ("nightly/nightly", "backfill/backfill", "index/index", "mine/mine", "plan/plan"):
            assert name in listed.stdout, listed.stdout
        procs.append(subprocess.Popen([str(BIN / "prefect"), "worker", "start", "--pool", "planbake-process"],
                                      env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        out = tmp_path / "out"
        run = _prefect(env, "deployment", "run", "nightly/nightly", "-p", f"out={out}", "--watch",
                       "--watch-timeout", "900", timeout=960)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "Completed" in run.stdout, run.stdout
        manifest = current_manifest(out)
        assert manifest["stages_run"] == ["index", "mine", "plan"]
        assert manifest["plan"]["cache_entries"] > 0
        assert PlanCache.open(out).lookup("how many vacation days do we get in Berlin").hit
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
