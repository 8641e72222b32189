"""Flow `index`: build or update the enriched LanceDB index and publish it."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

from flows.publication import Run
from schemas.config import load_config
from tasks.indexing import build_index_task, export_parquet_task
from tasks.publish import publish_lock


def index_stage(run: Run, corpus: str, config_path: str | None, run_date: date, quiet: bool) -> dict[str, Any]:
    """Index the corpus into the run; returns the manifest's index section."""
    config = load_config(config_path)
    outcome = build_index_task(corpus, config, run.out, run_date, quiet)
    rows = export_parquet_task(outcome.uri, config, outcome.result.version, run.staging / "chunks.parquet")
    section = {**outcome.to_json(), "corpus": str(corpus), "exported": rows, "table": config.table}
    run.record("index", section)
    return section


@flow(name="index", log_prints=True)
def index_flow(corpus: str | None = None, config: str | None = None, out: str = "data/out",
               run_date: date | None = None, wait_s: float = 0.0, quiet: bool = False) -> dict[str, Any]:
    """Build or update the index from `corpus` (default: the config's corpus) and publish it."""
    logger = get_run_logger()
    cfg = load_config(config)
    corpus_path = corpus or cfg.corpus
    with publish_lock(out, wait_s):
        run = Run(Path(out), str(config or ""))
        try:
            section = index_stage(run, corpus_path, config, run_date or date.today(), quiet)
            published = run.finish(cfg.table)
        except BaseException:
            run.abort()
            raise
    logger.info("indexed %s chunks (%s embedded, %s deleted), table version %s; published %s",
                section["chunks"], section["embedded"], section["deleted"], section["version"], published)
    return {**section, "run_id": run.run_id, "publication": str(published)}
