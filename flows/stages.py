"""The three stages as steps of a Run: each writes into the run's staging directory and the manifest."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from schemas.config import Config
from schemas.errors import ConfigError, LogError, NoPublication
from schemas.publication import EMBED_CACHE, index_location
from tasks.index.stage import build_index_task, export_parquet_task, index_uri
from tasks.index.store import Index, reset_head
from tasks.mine.stage import mine_task
from tasks.plan.stage import plan_task, write_lexicon
from tasks.publish.run import Run
from tasks.scale import TaskEmbedder, run_task


def index_stage(run: Run, corpus: str, config: Config, run_date: date, quiet: bool, runner: Any = None) -> Index:
    """Build the index in this process; its embedding runs as tasks on `runner` (None: here)."""
    embedder = TaskEmbedder(config, runner, results=Path(run.out) / EMBED_CACHE)
    live, uri = run.prev_manifest.get("index", {}), index_uri(config, run.out)
    if live and index_location(live, run.out) == uri:  # an unpublished run's writes are not the base
        reset_head(uri, live.get("table", config.table), int(live["version"]))
    outcome = build_index_task(corpus, config, run.out, run_date, quiet, embedder=embedder)
    rows = export_parquet_task(outcome.uri, config, outcome.result.version, run.staging / "chunks.parquet")
    run.record("index", {**outcome.to_json(), "corpus": str(corpus), "exported": rows, "table": config.table,
                         "run_date": run_date.isoformat()})
    return Index(outcome.uri, config, outcome.result.version)


def published_index(run: Run, config: Config) -> Index:
    """The index of the live publication, for a stage run alone."""
    section = run.prev_manifest.get("index")
    if not section:
        raise NoPublication(f"{run.out}: no published index; run 'planbake index' or 'planbake nightly' first")
    return Index(index_location(section, run.out), config, section["version"])


def mine_stage(run: Run, logs: str, config: Config, index: Index, since: date | None, until: date | None,
               quiet: bool, runner: Any = None) -> dict[str, Any]:
    """Mine the logs on `runner` (None: in this process)."""
    result, lexicon = run_task(runner, mine_task, logs=logs, config=config, index=index, staging=run.staging,
                               since=since, until=until, quiet=quiet, last_run=run.prev_dir)
    if result.rows == 0:  # publishing it would empty the shapes the live plans were made for
        first, last = result.since, result.until  # --since/--until, or the last mining.window_days days
        window = f" from {first or 'the start'} to {last or 'the end'}" if first or last else ""
        files = result.unreadable_files
        unreadable = f"; no line of {', '.join(files)} is a log row" if files else ""
        raise LogError(f"{logs}: no valid log rows{window} ({result.quarantined} quarantined{unreadable}); nothing "
                       "was published. Check the files" + (" and --since/--until" if window else ""))
    section = {**result.to_json(), "logs": str(logs)}  # the window mined: --since/--until, or the last days
    run.record("mine", section)
    run.manifest["lexicon_hash"] = lexicon.digest()
    return section


VLLM_MISSING = ("writer 'vllm' needs the 'gpu' extra (pip install 'planbake[gpu]') and a CUDA GPU; use --writer "
                "rules or --writer openai")


def model_generator(config: Config, writer: str) -> Any:
    """The model writer's batch generator, or None for the rule writer."""
    from tasks.plan.model_writer import openai_generator, vllm_generator

    if writer == "rules":
        return None
    if writer == "vllm":
        try:
            return vllm_generator(config)
        except ImportError:
            raise ConfigError(VLLM_MISSING) from None
    return openai_generator(config)


def plan_stage(run: Run, config: Config, index: Index, quiet: bool, writer: str | None = None) -> dict[str, Any]:
    from schemas.extract import Lexicon

    if writer and writer != config.planning.writer:  # the writer is part of every template's signature
        config = config.model_copy(update={"planning": config.planning.model_copy(update={"writer": writer})})
    writer = config.planning.writer
    src = run.staging if (run.staging / "shapes.parquet").exists() else run.prev_dir
    if src is None or not (src / "shapes.parquet").exists():
        raise NoPublication(f"{run.out}: no mined shapes; run 'planbake mine' or 'planbake nightly' first")
    lexicon = Lexicon(config, index.facet_values())
    idx = run.manifest.get("index", {})
    # a chunk added, or one that came into force, can rank for any shape: every template's evidence is stale
    added = "index" in run.stages and (idx.get("inserted", 1) > 0 or idx.get("now_current", 0) > 0)
    result = plan_task(src / "shapes.parquet", src / "questions.parquet", config, lexicon, index, run.staging,
                       quiet, prev_dir=run.prev_dir, corpus_added=added,
                       generate=model_generator(config, writer), writer=writer)
    write_lexicon(run.staging, config, index)
    section = result.to_json()
    run.record("plan", section)
    run.manifest["lexicon_hash"] = lexicon.digest()
    return section
