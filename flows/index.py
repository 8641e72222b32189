"""Flow `index`: build or update the enriched LanceDB index and publish it."""

from __future__ import annotations

from datetime import date
from typing import Any

from prefect import flow

from flows.run import run_stages


@flow(name="index", log_prints=True)
def index_flow(corpus: str | None = None, config: str | None = None, out: str = "data/out",
               run_date: date | None = None, wait_s: float = 0.0, quiet: bool = False,
               force: bool = False) -> dict[str, Any]:
    """Build or update the index from `corpus` (default: the config's corpus) and publish it."""
    return run_stages(["index"], corpus=corpus, config=config, out=out, run_date=run_date, wait_s=wait_s,
                      quiet=quiet, force=force)
