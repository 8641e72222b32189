"""Run any sequence of stages under the publish lock, and publish the result whole or not at all."""

from __future__ import annotations

import logging
import time
from datetime import date
from pathlib import Path
from typing import Any, get_args

from prefect import get_run_logger
from prefect.exceptions import MissingContextError

from flows.stages import index_stage, mine_stage, plan_stage, published_index
from schemas.config import DEFAULT_CONFIG, Config, Writer, load_config, published_config
from schemas.errors import ConfigError, GateRejected, InputError, LogError, NoPublication
from schemas.files import CONFIG
from schemas.publication import read_manifest
from tasks.index.corpus import corpus_not_found
from tasks.ingest.checks import check_window
from tasks.ingest.files import log_files
from tasks.plan.model_writer import check_model, check_server
from tasks.publish.gate import QualityGate
from tasks.publish.root import STAGE_FILES, previous_publication, publish_lock
from tasks.publish.run import Run
from tasks.scale import task_runner

EXPECTED_FAILURE = "planbake_expected"  # a log record's attribute: a failure the CLI reports in its own words
PUBLISHER_START_S = 60.0  # how long a stage that waits looks for a publisher starting beside it



def check_inputs(stages: list[str], cfg: Config, *, corpus: str | None = None, logs: str | None = None,
                 out: str | Path = "data/out", since: date | None = None, until: date | None = None,
                 wait_s: float = 0.0, writer: str | None = None) -> None:
    """Refuse, before any work, inputs no stage can use: a missing corpus or logs, an empty date window, an
    `--out` that is a file, a stage alone with nothing published to work on (unless it waits for a publisher).
    The stages check the contents as they read them."""
    if Path(out).exists() and not Path(out).is_dir():
        raise InputError(f"--out {out}: is a file; pass the publication folder (created when missing)")
    if cfg.model_path:
        check_model_folder(cfg)
    if "index" in stages:
        source = corpus or cfg.corpus
        if not source:
            raise ConfigError("no corpus given: pass --corpus or set `corpus:` in the config")
        if "://" not in source and not Path(source).exists():
            raise corpus_not_found(source, "" if corpus else cfg.where("corpus"))
    if "mine" in stages:
        source = logs or cfg.logs
        if not source:
            raise ConfigError("no logs given: pass --logs or set `logs:` in the config")
        if not Path(source).exists():
            raise LogError(f"{source}: logs not found{'' if logs else cfg.where('logs')}; pass --logs with a file "
                           "or a folder of JSONL, Parquet or CSV files, or fix the config's path")
        if since and until and since > until:
            log_files(source)  # no log files, mixed formats (the window is refused below)
        else:  # those too, and a log file of the window in UTF-16, before the index stage's work
            check_window(source, since, until, cfg.mining.window_days)
    if since and until and since > until:
        raise InputError(f"--since {since} is after --until {until}: the window holds no day; swap them")
    if writer is not None and writer not in get_args(Writer):  # else read as the OpenAI writer, and every shape
        raise InputError(f"writer {writer!r}: choose {', '.join(get_args(Writer))} (--writer, or the plan "
                         "flow's `writer` parameter), or leave it out for the config's `planning.writer`")
    if "plan" in stages:
        check_model(cfg, writer or cfg.planning.writer)
    if "plan" in stages and (writer or cfg.planning.writer) == "openai":
        check_server(cfg.planning.openai_base_url, cfg.planning.openai_api_key_env)
    # A stage alone needs a publication; one that waits may get it from the run it waits for, if a run started
    # here (a mistyped folder never gets a lock file, and is not created); under the lock it checks again
    if "index" not in stages and not (wait_s and publisher_started(out, min(wait_s, PUBLISHER_START_S))):
        _, published = previous_publication(out)
        if not published.get("index"):
            raise NoPublication(f"{out}: no published index; run 'planbake index' or 'planbake nightly' first")
        if "mine" not in stages and not published.get("mine"):
            raise NoPublication(f"{out}: no published shapes; run 'planbake mine' or 'planbake nightly' first")


def check_model_folder(cfg: Config) -> None:
    """Refuse a `model_path` that names no sentence-transformers model folder (one holds modules.json, a plain
    transformers model config.json), at the config's line, before the model loader's own error mid-run."""
    folder = Path(cfg.model_path)
    if not folder.is_dir():
        problem = "no such folder"
    elif not any((folder / name).is_file() for name in ("modules.json", "config.json")):
        problem = "not a sentence-transformers model folder (no modules.json or config.json)"
    else:
        return
    raise ConfigError(f"model_path {cfg.model_path}: {problem}{cfg.where('model_path')}; point it at a "
                      "sentence-transformers model folder, or remove it for the packaged all-MiniLM-L6-v2")


def publisher_started(out: str | Path, wait_s: float) -> bool:
    """Whether a run ever took the publish lock under `out` (its lock file is there), looking for up to `wait_s`
    seconds: a stage scheduled with --wait at the same minute as the first nightly run is started before that run
    has taken its lock, and must wait for it, not refuse."""
    lock = Path(out) / ".publish.lock"
    deadline = time.monotonic() + wait_s
    while not lock.exists():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True


def older_window(live: dict[str, Any], mined: dict[str, Any]) -> str:
    """A warning when this run mined a log window that ends before the live publication's (a backfill of past
    days): published, its shapes and merge replace the newer ones until the next nightly run; "" otherwise."""
    if not live.get("until") or not mined.get("until") or mined["until"] >= live["until"]:
        return ""
    return (f"this run mined {mined['since']} to {mined['until']}, a window that ends before the live "
            f"publication's ({live['since']} to {live['until']}): once published, its shapes replace the live ones "
            "and the next nightly run merges against them")


def run_stages(stages: list[str], *, corpus: str | None = None, logs: str | None = None,
               config: str | Config | None = None, out: str = "data/out", run_date: date | None = None,
               since: date | None = None, until: date | None = None, wait_s: float = 0.0,
               quiet: bool = False, writer: str | None = None, force: bool = False) -> dict[str, Any]:
    """`force`: publish even when the quality gate finds a regression (the manifest and report say so)."""
    logger = _logger()
    cfg = config if isinstance(config, Config) else load_config(config)
    check_inputs(stages, cfg, corpus=corpus, logs=logs, out=out, since=since, until=until, wait_s=wait_s,
                 writer=writer)
    gate = QualityGate(cfg, force)
    with publish_lock(out, wait_s), task_runner(cfg.runner) as runner:
        run = Run(Path(out), "" if isinstance(config, Config) else str(Path(config or DEFAULT_CONFIG).resolve()),
                  bill=cfg.bill, retention=cfg.retention, redoes_all=set(STAGE_FILES) <= set(stages))
        if run.warning:
            logger.warning("%s", run.warning)
        try:
            if "index" in stages:
                index = index_stage(run, corpus or cfg.corpus, cfg, run_date or date.today(), quiet, runner)
                logger.info("index: %s", run.manifest["index"])
                for warning in run.manifest["index"].get("warnings", []):
                    logger.warning("%s", warning)
            else:
                index = published_index(run, cfg)
            if "mine" in stages:
                mined = mine_stage(run, logs or cfg.logs, cfg, index, since, until, quiet, runner)
                logger.info("mine: %s", mined)
                if older := older_window(run.prev_manifest.get("mine", {}), mined):
                    logger.warning("%s", older)
                for file in mined["unreadable_files"]:
                    logger.warning("%s: no line is a valid log row (all quarantined, see quarantine.parquet); "
                                   "is it a query log of this format?", file)
                for file in mined["skipped_files"]:
                    logger.warning("%s: not read, compressed otherwise than with gzip; decompress it, or compress "
                                   "it with gzip", file)
            if "plan" in stages:
                logger.info("plan: %s", plan_stage(run, cfg, index, quiet, writer))
            elif differs := plans_config_differs(run.prev_dir, cfg):
                logger.warning("this config's %s differ from the live plans' config: lookups keep the plans' "
                               "config until 'planbake plan' or 'planbake nightly' runs with this one", differs)
            published = run.finish(cfg.table, gate)
        except GateRejected as exc:
            run.abort()
            logger.error("%s", exc, extra={EXPECTED_FAILURE: True})  # for the flow's log; the CLI says it once
            _artifact(exc.kept, run.run_id)
            raise
        except BaseException:
            run.abort()
            raise
    logger.info("published %s; report %s", published, published / "report" / "report.md")
    _artifact(published, run.run_id)
    manifest = read_manifest(published)
    if manifest.get("gate", {}).get("decision") == "forced":
        logger.warning("quality gate failed, published with --force: %s", ", ".join(manifest["gate"]["regressions"]))
    return {**manifest, "publication": str(published)}


def plans_config_differs(prev: Path | None, cfg: Config) -> str:
    """What a run that does not plan changes in vain: the lookup settings (facets and their aliases, qualifiers,
    synonyms, fillers, personal-data names, the history limits) of `cfg` that differ from those the live plans were
    made with ("facets, qualifiers"); "" when they agree or nothing is published."""
    path = prev / CONFIG.name if prev is not None else None
    if path is None or not path.is_file():
        return ""
    try:
        old = published_config(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    keys = ("facets", "qualifiers", "synonyms", "fillers", "pii_names", "lookup")
    return ", ".join(k for k in keys if old.model_dump(include={k}) != cfg.model_dump(include={k}))


def _logger() -> Any:
    """The flow run's logger inside a flow; a plain logger when the stages run outside one (tests, scripts)."""
    try:
        return get_run_logger()
    except MissingContextError:
        return logging.getLogger("planbake")


def _artifact(published: Path, run_id: str) -> None:
    """The report as a Prefect artifact too (best effort: a missing API must not fail a published run)."""
    from prefect.context import FlowRunContext

    if FlowRunContext.get() is None:
        return
    try:
        from prefect.artifacts import create_markdown_artifact

        text = (published / "report" / "report.md").read_text(encoding="utf-8")
        create_markdown_artifact(markdown=text, key="planbake-report", description=f"planbake run {run_id}")
    except Exception as exc:  # noqa: BLE001
        _logger().warning("report artifact not created: %s", exc)
