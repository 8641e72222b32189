"""Shared fixtures: one Prefect test harness per session, paths to the shared benchmark sets."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("PLANBAKE_BENCHMARKS", ROOT.parent / "shared" / "benchmarks"))  # read, never copied
SEED = ROOT / "tests" / "fixtures" / "seed_handbook"
DEMO_CONFIG = ROOT / "data" / "configs" / "demo.yaml"

# Hypothesis: `ci` (the default, and what `make test` runs) draws the same examples on every run, with no example
# database and no deadline, so a failure is the code's and reproduces; `dev` (HYPOTHESIS_PROFILE=dev or
# --hypothesis-profile=dev) draws new random ones each run, to hunt. Both keep each test's own max_examples.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", settings.get_profile("default"))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def free_port() -> int:
    """A loopback port no one listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(proc: subprocess.Popen[str], url: str, seconds: float = 90) -> None:
    """Wait until a started `planbake serve` answers /readyz; fail with its stderr if it exits first."""
    import httpx

    deadline = time.monotonic() + seconds
    while True:
        assert proc.poll() is None, proc.communicate()[1]
        try:
            if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"planbake serve was not ready in {seconds:.0f} s"
        time.sleep(0.1)


def write_log(folder: Path, questions: list[str], start: datetime) -> Path:
    """A query log in `folder` (queries.jsonl): each question by a user of its own, a minute after the last."""
    folder.mkdir(parents=True)
    rows = [{"ts": (start + timedelta(minutes=n)).isoformat().replace("+00:00", "Z"), "user": f"u{n}", "query": q}
            for n, q in enumerate(questions)]
    (folder / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def seed_corpus() -> Path:
    path = SEED / "corpus.jsonl"
    if not path.exists():
        pytest.skip(f"{path} not available")
    return path


@pytest.fixture(scope="session")
def demo_publication(tmp_path_factory: pytest.TempPathFactory, prefect_harness: None) -> Path:
    """The nightly flow run once on the embedded demo data; tests read its publication (do not modify it)."""
    from flows.nightly import nightly_flow

    out = tmp_path_factory.mktemp("demo") / "out"
    nightly_flow(config=str(DEMO_CONFIG), out=str(out), quiet=True)
    return out


@pytest.fixture(scope="session")
def seed_eval(tmp_path_factory: pytest.TempPathFactory, prefect_harness: None) -> dict:
    """`planbake eval` on the seed handbook at budget 4, as JSON."""
    import json

    from typer.testing import CliRunner

    from planbake.cli import app

    out = tmp_path_factory.mktemp("seed-eval")
    res = CliRunner().invoke(app, ["eval", "--corpus", str(SEED / "corpus.jsonl"), "--questions",
                                   str(SEED / "questions.jsonl"), "--budget", "4", "--out", str(out), "--json",
                                   "--in-sample"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    doc["out"] = str(out)
    return doc
