"""Flows `nightly`, `mine` and `plan`: the pipeline end to end, and the later stages alone."""

from __future__ import annotations

from datetime import date
from typing import Any

from prefect import flow

from flows.run import run_stages
from schemas.config import Writer


@flow(name="nightly", log_prints=True)
def nightly_flow(corpus: str | None = None, logs: str | None = None, config: str | None = None,
                 out: str = "data/out", since: date | None = None, until: date | None = None,
                 run_date: date | None = None, wait_s: float = 0.0, quiet: bool = False,
                 force: bool = False) -> dict[str, Any]:
    """index (incremental) -> mine -> plan -> quality gate -> publish (`force`: past a failed gate)."""
    return run_stages(["index", "mine", "plan"], corpus=corpus, logs=logs, config=config, out=out, since=since,
                      until=until, run_date=run_date, wait_s=wait_s, quiet=quiet, force=force)


@flow(name="mine", log_prints=True)
def mine_flow(logs: str | None = None, config: str | None = None, out: str = "data/out",
              since: date | None = None, until: date | None = None, wait_s: float = 0.0,
              quiet: bool = False, force: bool = False) -> dict[str, Any]:
    """Mine the logs against the published index and publish the shapes."""
    return run_stages(["mine"], logs=logs, config=config, out=out, since=since, until=until, wait_s=wait_s,
                      quiet=quiet, force=force)


@flow(name="plan", log_prints=True)
def plan_flow(config: str | None = None, out: str = "data/out", writer: Writer | None = None, wait_s: float = 0.0,
              quiet: bool = False, force: bool = False) -> dict[str, Any]:
    """Write, check and evaluate templates for the published shapes; publish the cache."""
    return run_stages(["plan"], config=config, out=out, wait_s=wait_s, quiet=quiet, writer=writer, force=force)
