"""The three stages as steps of a Run: each writes into the run's staging directory and the manifest."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from schemas.config import Config
from schemas.entity import read_names
from schemas.errors import ConfigError, LogError, NoPublication
from schemas.extract import Lexicon
from schemas.files import CHUNKS, QUESTIONS, SHAPES
from schemas.pii import read_plain_words
from schemas.publication import EMBED_CACHE, index_location, memo_folder
from tasks.index.stage import build_index_task, export_parquet_task, index_uri
from tasks.index.store import Index, reset_head
from tasks.ingest.files import outside_note
from tasks.ingest.lines import LineMemo
from tasks.ingest.stage import ingest
from tasks.mine.mining import MineResult
from tasks.mine.stage import mine
from tasks.plan.stage import plan_task, write_lexicon
from tasks.publish.run import Run
from tasks.scale import TaskEmbedder, run_task


def index_stage(run: Run, corpus: str, config: Config, run_date: date, quiet: bool, runner: Any = None) -> Index:
    """Build the index in this process; its embedding runs as tasks on `runner` (None: here)."""
    embedder = TaskEmbedder(config, runner, store=Path(run.out) / EMBED_CACHE)
    live, uri = run.prev_manifest.get("index", {}), index_uri(config, run.out)
    if live and index_location(live, run.out) == uri:  # an unpublished run's writes are not the base
        reset_head(uri, live.get("table", config.table), int(live["version"]))
    outcome = build_index_task(corpus, config, run.out, run_date, quiet, embedder=embedder)
    rows = export_parquet_task(outcome.uri, config, outcome.result.version, run.staging / CHUNKS.name)
    run.record("index", {**outcome.to_json(), "corpus": str(corpus), "exported": rows, "table": config.table,
                         "run_date": run_date.isoformat()})
    return Index(outcome.uri, config, outcome.result.version)


def published_index(run: Run, config: Config) -> Index:
    """The index of the live publication, for a stage run alone."""
    section = run.prev_manifest.get("index")
    if not section:
        raise NoPublication(f"{run.out}: no published index; run 'planbake index' or 'planbake nightly' first")
    return Index(index_location(section, run.out), config, section["version"])


def mine_logs(logs: str | Path, config: Config, index: Index, staging: Path, *, since: date | None = None,
              until: date | None = None, now: datetime | None = None, quiet: bool = False,
              last_run: Path | None = None) -> tuple[MineResult, Lexicon]:
    """The mining stage's task: ingest the log window (`tasks.ingest`: the window from `since` to `until`, or,
    with neither, the last `mining.window_days` logged days), then mine its rows into `staging` (`tasks.mine`).
    One task: the rows stay in one DuckDB session."""
    plain = index.plain_words()
    lexicon = Lexicon(config, index.lexicon_values(), plain, index.names())
    lexicon.check_aliases()
    scrub = lexicon.scrubber(plain)
    max_chars = config.mining.max_query_chars
    ing = ingest(logs, since=since, until=until, max_query_chars=max_chars, now=now, scrub=scrub,
                 defer_quarantine=True,  # the quarantine's line numbers are found while mining goes on
                 last_days=config.mining.window_days,
                 lines=LineMemo(memo_folder(index.uri), lexicon, scrub, max_chars))
    return mine(ing, lexicon, scrub, plain, config, index, staging, quiet=quiet, last_run=last_run), lexicon


# Not cached: it writes into the run's staging directory, and the log files are read by path.
mine_task = task(name="mine-logs", cache_policy=NO_CACHE)(mine_logs)


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
        outside = outside_note(result.to_json())
        raise LogError(f"{logs}: no valid log rows{window} ({result.quarantined} quarantined{unreadable}); nothing "
                       "was published. " + (f"{outside[0].upper()}{outside[1:]}" if outside else "Check the files"
                                            + (" and --since/--until" if window else "")))
    section = {**result.to_json(), "logs": str(logs)}  # the window mined: --since/--until, or the last days
    run.record("mine", section)
    run.manifest["lexicon_hash"] = lexicon.digest()
    return section


def model_generator(config: Config, writer: str) -> Any:
    """The model writer's batch generator, or None for the rule writer."""
    from tasks.plan.model_writer import VLLM_MISSING, openai_generator, vllm_generator

    if writer == "rules":
        return None
    if writer == "vllm":
        try:
            return vllm_generator(config)
        except ImportError:
            raise ConfigError(VLLM_MISSING) from None
    return openai_generator(config)


def plan_stage(run: Run, config: Config, index: Index, quiet: bool, writer: str | None = None) -> dict[str, Any]:
    if writer and writer != config.planning.writer:  # the writer is part of every template's signature
        config = config.model_copy(update={"planning": config.planning.model_copy(update={"writer": writer})})
    writer = config.planning.writer
    src = run.staging if (run.staging / SHAPES.name).exists() else run.prev_dir
    if src is None or not (src / SHAPES.name).exists():
        raise NoPublication(f"{run.out}: no mined shapes; run 'planbake mine' or 'planbake nightly' first")
    # names are read against the plain words and titles the shapes were mined with, as lookup reads them
    lexicon = Lexicon(config, index.lexicon_values(), read_plain_words(src) if config.entity_slots else (),
                      read_names(src) if config.entity_slots else ())
    idx = run.manifest.get("index", {})
    # a chunk added, or one that came into force, can rank for any shape: every template's evidence is stale
    added = "index" in run.stages and (idx.get("inserted", 1) > 0 or idx.get("now_current", 0) > 0)
    result = plan_task(src / SHAPES.name, src / QUESTIONS.name, config, lexicon, index, run.staging,
                       quiet, prev_dir=run.prev_dir, corpus_added=added,
                       generate=model_generator(config, writer), writer=writer)
    write_lexicon(run.staging, config, index)
    section = result.to_json()
    run.record("plan", section)
    run.manifest["lexicon_hash"] = lexicon.digest()
    return section
