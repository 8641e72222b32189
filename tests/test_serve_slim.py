"""The serving install (requirements/serve.txt, docs/operations.md): `planbake serve` answers lookups with torch,
Prefect, LanceDB and DuckDB impossible to import, says 501 to a retrieve, refuses an online planner with the
reason, and requirements/serve.txt stays a part of pyproject.toml's dependencies."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from schemas.cache import PlanCache
from schemas.errors import EXIT_INPUT
from tests.conftest import ROOT, free_port, wait_ready

BLOCKED = ("torch", "prefect", "lancedb", "duckdb")
COMPARE = "Compare parental leave for the second parent in Berlin and Amsterdam"

# `planbake` with the modules above blocked: each import of one (or of a module under it) is written to the file
# $BLOCKED_LOG and fails, as it does where the package is not installed
BLOCKING_CLI = f"""
import os, sys

class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {BLOCKED!r}:
            with open(os.environ["BLOCKED_LOG"], "a", encoding="utf-8") as f:
                f.write(name + "\\n")
            raise ImportError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Blocked())
sys.argv = ["planbake", *sys.argv[1:]]
from planbake.cli import app
app()
"""


def _blocking(args: list[str], blocked_log: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BLOCKED_LOG": str(blocked_log)}
    return subprocess.Popen([sys.executable, "-c", BLOCKING_CLI, *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def slim(demo_publication: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A server started with the heavy modules blocked; its URL and the file of blocked imports."""
    blocked_log = tmp_path_factory.mktemp("slim") / "blocked.txt"
    port = free_port()
    proc = _blocking(["serve", "--out", str(demo_publication), "--port", str(port)], blocked_log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(proc, url)
        yield url, blocked_log
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_a_lookup_is_answered_without_torch_prefect_lancedb_or_duckdb(slim: tuple[str, Path],
                                                                      demo_publication: Path) -> None:
    url, blocked_log = slim
    r = httpx.post(url + "/v1/lookup", json={"question": COMPARE, "now": "2026-11-30"}, timeout=10)
    assert r.status_code == 200, r.text
    doc = r.json()
    cache = PlanCache.open(demo_publication)
    assert doc["run_id"] == cache.manifest["run_id"]
    assert doc["hit"] and doc["route"] != "one_search" and len(doc["plan"]["steps"]) >= 2, doc
    assert {"facet": "office", "value": "Berlin"} in doc["constraints"]
    assert not blocked_log.exists(), f"the lookup path imported {blocked_log.read_text()}"


def test_a_retrieve_says_501_and_what_is_missing(slim: tuple[str, Path]) -> None:
    url, blocked_log = slim
    r = httpx.post(url + "/v1/retrieve", json={"question": COMPARE}, timeout=10)
    assert r.status_code == 501, r.text
    doc = r.json()
    assert doc["error"] == "not_installed" and "full install" in doc["message"], doc
    missing = blocked_log.read_text().split()
    assert missing and f"({missing[0].partition('.')[0]} is not installed)" in doc["message"], (doc, missing)
    assert httpx.post(url + "/v1/lookup", json={"question": COMPARE}, timeout=10).status_code == 200


def test_an_online_planner_needs_the_full_install(demo_publication: Path, tmp_path: Path) -> None:
    proc = _blocking(["serve", "--out", str(demo_publication), "--port", str(free_port()),
                      "--planner-url", "http://127.0.0.1:9/v1"], tmp_path / "blocked.txt")
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == EXIT_INPUT, (out, err)
    assert "full install" in err and "prefect is not installed" in err, err


def test_the_serving_requirements_are_pyproject_dependencies() -> None:
    """Each line of requirements/serve.txt is one of the package's dependencies, with the same bounds."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    norm = {re.sub(r"\s+", "", d.replace('"', "'")) for d in deps}
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements" / "serve.txt").read_text().splitlines()]
    serve = [re.sub(r"\s+", "", line.replace('"', "'")) for line in lines if line]
    assert len(serve) >= 10
    assert [s for s in serve if s not in norm] == []
    names = {re.split(r"[<>=!;\[ ]", s, maxsplit=1)[0].lower() for s in serve}
    assert not names & {"torch", "prefect", "lancedb", "pylance", "duckdb", "sentence-transformers"}
