"""Flow `backfill`: after a corpus update or for a past log window; says what it re-did."""

from __future__ import annotations

from datetime import date
from typing import Any

from prefect import flow, get_run_logger

from flows.run import run_stages


@flow(name="backfill", log_prints=True)
def backfill_flow(corpus: str | None = None, logs: str | None = None, config: str | None = None,
                  out: str = "data/out", since: date | None = None, until: date | None = None,
                  run_date: date | None = None, wait_s: float = 0.0, quiet: bool = False,
                  force: bool = False) -> dict[str, Any]:
    """Re-index what changed, mine the window, re-evaluate only templates whose shape or evidence changed."""
    res = run_stages(["index", "mine", "plan"], corpus=corpus, logs=logs, config=config, out=out, since=since,
                     until=until, run_date=run_date, wait_s=wait_s, quiet=quiet, force=force)
    idx, plan = res["index"], res["plan"]
    get_run_logger().info(
        "backfill re-did: %s chunks embedded, %s updated, %s deleted; %s templates re-evaluated, %s reused",
        idx["embedded"], idx["updated"], idx["deleted"], plan["evaluated"], plan["reused"])
    return res
