"""Shared fixtures: one Prefect test harness per session, paths to the shared benchmark sets."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "benchmarks"
SEED = ROOT / "tests" / "fixtures" / "seed_handbook"
DEMO_CONFIG = ROOT / "data" / "configs" / "demo.yaml"


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
