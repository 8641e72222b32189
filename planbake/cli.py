"""The `planbake` command line: the contract scripts and schedulers rely on."""

from __future__ import annotations

import errno
import json
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import date
from functools import wraps
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast

import typer
from rich.console import Console
from rich.table import Table

from schemas.atomic import NO_ROOM_ERRNOS, no_room
from schemas.config import load_config
from schemas.errors import (
    EXIT_BUSY,
    EXIT_GATE,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_NOT_PUBLISHED,
    DamagedPublication,
    InputError,
    NoPublication,
    PlanbakeError,
)
from schemas.text import fold, words

# Exit codes: what failed. An expected failure's class (schemas.errors) carries its own; these are the CLI's too.
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143  # as a shell reports a command Ctrl-C (SIGTERM) stopped
app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Precompute query-decomposition plans for RAG, offline, in batch.",
                  epilog=f"Exit codes: 0 success, {EXIT_INTERNAL} unexpected failure, {EXIT_INPUT} bad input, "
                         f"{EXIT_BUSY} another run holds the publish lock, {EXIT_NOT_PUBLISHED} nothing published yet "
                         f"(or nothing to roll back to), {EXIT_GATE} the quality gate rejected the run (the last "
                         f"publication stays live; the report path is printed), {EXIT_INTERRUPTED} interrupted "
                         f"({EXIT_TERMINATED}: by SIGTERM).")
console = Console(stderr=True, soft_wrap=True)
out_console = Console(width=max(Console().width, 140))

# set by Ctrl-C or SIGTERM (the signal's number): what fails after it (the flow engine's API calls) is its doing
_interrupted: list[int] = []


def _on_interrupt(signum: int, frame: Any) -> None:
    """Ctrl-C, and a scheduler's SIGTERM (a cancelled deployment, `timeout`, systemd): unwound as Ctrl-C is, so
    the local Prefect server stops with the run rather than outliving it."""
    _interrupted.append(signum)
    raise KeyboardInterrupt

MAX_DEPTH = 10_000  # -k, --budget: chunks one search returns (a larger number overflows the index's query)


def _given(value: str | None) -> str | None:
    """An option given as an empty string ("--corpus $UNSET") is refused, not read as left out: the default it
    would fall back to is another input (the demo corpus, the demo config, every logged day)."""
    if value is not None and not value.strip():
        raise typer.BadParameter("is empty; give a value or leave the option out")
    return value


def _one_of(*choices: str) -> Callable[[str | None], str | None]:
    """A callback refusing a value not among `choices` as a usage error (exit 2), as click refuses a bad number."""
    def check(value: str | None) -> str | None:
        if _given(value) is not None and value not in choices:
            raise typer.BadParameter(f"{value!r}: choose {', '.join(choices)}")
        return value
    return check


def _path(value: str) -> Path:
    """A path option's value; an empty one ("--out $UNSET") is refused, not read as the current folder."""
    if isinstance(value, Path):  # a default
        return value
    if not value.strip():
        raise typer.BadParameter("is empty; give a path or leave the option out")
    return Path(value)


def _root(value: str) -> Path:
    """An --out value: a publication root, not a folder inside one (its `runs` folder, a run folder)."""
    from schemas.publication import enclosing_root

    out = _path(value)
    if (root := enclosing_root(out)) is not None:
        raise typer.BadParameter(f"{out} lies inside the publication root {root}; --out is the folder holding "
                                 f"CURRENT: --out {root}")
    return out


def _root_or_run(value: str) -> Path:
    """An --out value of a reader of the plans: a publication root, or one run folder of it (a manifest's)."""
    from schemas.files import MANIFEST

    out = _path(value)
    try:
        return out if (out / MANIFEST.name).is_file() else _root(value)
    except OSError:  # a name too long: the command names it as it reads the folder
        return out


ConfigOpt = Annotated[str | None, typer.Option("--config", callback=_given,
                                               help="Config YAML (default: data/configs/demo.yaml).")]
OutOpt = Annotated[Path, typer.Option("--out", parser=_root, help="Publication root (the folder holding CURRENT).")]
RunOutOpt = Annotated[Path, typer.Option("--out", parser=_root_or_run, help="Publication root (the folder holding "
                                         "CURRENT), or one of its run folders.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
CorpusOpt = Annotated[str | None, typer.Option("--corpus", callback=_given, help="Corpus (default: the config's).")]
LogsOpt = Annotated[str | None, typer.Option("--logs", callback=_given, help="Logs (default: the config's).")]
SinceOpt = Annotated[str | None, typer.Option("--since", callback=_given, help="First log date (YYYY-MM-DD; with "
                                              "neither --since nor --until: the last mining.window_days logged days).")]
UntilOpt = Annotated[str | None, typer.Option("--until", callback=_given, help="Last log date (YYYY-MM-DD).")]
RunDateOpt = Annotated[str | None, typer.Option("--run-date", callback=_given, help="Date deciding which version of "
                                                "a policy is current (YYYY-MM-DD; default today).")]
WaitOpt = Annotated[float, typer.Option("--wait", min=0.0, help="Seconds to wait for a running publisher (a stage run "
                                                        "alone also waits for one just starting).")]
HistoryOpt = Annotated[list[str] | None, typer.Option(
    "--history", help="An earlier question of the same user, oldest first (repeat the option); a follow-up resolves "
                      "into the last one's shape.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Publish even if the quality gate finds a regression "
                                                        "(recorded in the manifest and the report).")]
F = TypeVar("F", bound=Callable[..., Any])


def _emit(as_json: bool, doc: Any, human: Callable[[], None]) -> None:
    if as_json:
        sys.stdout.write(json.dumps(doc, indent=2, default=str) + "\n")
    else:
        human()


def _failed(kwargs: dict[str, Any], kind: str, exc: BaseException | str, code: int, **more: Any) -> typer.Exit:
    """A known failure: one line on stderr, and with --json also one JSON document on stdout (what failed, why,
    the exit code), so a script reads every outcome from stdout."""
    console.print(f"{kind}: {exc}", markup=False)
    if kwargs.get("as_json"):
        _emit(True, {"error": kind, "message": str(exc), "exit_code": code, **more}, lambda: None)
    return typer.Exit(code)


PATH_ERRORS = (PermissionError, IsADirectoryError, NotADirectoryError, FileExistsError)
PATH_ERRNOS = (errno.ELOOP, errno.ENAMETOOLONG,  # refused by its name: a loop of symbolic links, a name too long
               *NO_ROOM_ERRNOS)  # or by its place: a full disk or quota, a read-only file system


def _path_refused(exc: BaseException) -> bool:
    """A path the system refuses: a folder where a file belongs, no permission, a name it cannot resolve, or a file
    it cannot find (one it names: a path given, or one gone while read; not planbake's own NoPublication)."""
    return isinstance(exc, PATH_ERRORS) or isinstance(exc, OSError) and exc.errno in PATH_ERRNOS or \
        isinstance(exc, FileNotFoundError) and exc.filename is not None


def _path_problem(exc: OSError, out: Any = None) -> str:
    if no_room(exc):  # nothing was published: the run's temporary files are gone with it
        where = Path(exc.filename).parent if exc.filename is not None else out
        fix = "make it writable" if exc.errno == errno.EROFS else "free space"
        return f"{exc.filename or out}: {exc.strerror}; {fix} on {where} or point --out elsewhere"
    return f"{exc.filename}: {exc.strerror}; check --out and the paths given"


def _expected(exc: BaseException, out: Any = None) -> tuple[str, str, int, dict[str, Any]] | None:
    """An expected failure's kind, message, exit code and further --json fields: planbake's own (PlanbakeError,
    whose class says them), or a path the system refuses (bad input, naming the path). None for anything else: a
    bug, which keeps its traceback. The one list of what the CLI reports as one line."""
    if isinstance(exc, PlanbakeError):
        return exc.kind, str(exc), exc.exit_code, exc.fields()
    if _path_refused(exc):
        return "error", _path_problem(cast(OSError, exc), out), EXIT_INPUT, {}
    return None


def _stopped() -> None:
    console.print("interrupted: a run stopped before its end publishes nothing (`planbake report` shows what is "
                  "live); run the command again to redo it", markup=False)
    by_term = bool(_interrupted) and _interrupted[-1] == signal.SIGTERM
    raise typer.Exit(EXIT_TERMINATED if by_term else EXIT_INTERRUPTED) from None


def _errors(fn: F | None = None, *, publishes: bool = True) -> Any:
    """Turn known failures into one clear line and an exit code; never a traceback for bad input. A command
    that `publishes` (its job is the publication) exits 0 with a warning when the flow engine's API is lost after
    the publication went live; one that does not (eval: its job is the scores) fails then."""
    if fn is None:
        return lambda f: _errors(f, publishes=publishes)

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, _on_interrupt)
            signal.signal(signal.SIGTERM, _on_interrupt)
        try:
            return fn(*args, **kwargs)
        except KeyboardInterrupt:
            _stopped()
        except Exception as exc:
            if (known := _expected(exc, kwargs.get("out"))) is not None:
                kind, message, code, more = known
                raise _failed(kwargs, kind, message, code, **more) from None
            if _interrupted:  # Ctrl-C stopped the local Prefect server too
                _stopped()
            # the flow engine's client (the model writer's failures fall back to rules); Prefect re-raises a
            # server it cannot reach as RuntimeError("Failed to reach API ...") from the client's error
            lost = _api_error(exc)
            if lost is None:
                raise
            if publishes and (run := _published_here(kwargs.get("out"))) is not None:  # lost after publishing
                _published_anyway(run, lost, bool(kwargs.get("as_json")))
                return None
            raise _failed(kwargs, "error", RuntimeError(
                f"the Prefect API did not answer ({lost.__class__.__name__}: {lost}); check PREFECT_API_URL and "
                "the server, then run the command again"), EXIT_INTERNAL) from None

    return wrapper


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """An exception and the ones it was raised from (`raise ... from cause`), innermost last. Not the ones it was
    raised while handling: a bug in a handler of a lost connection is a bug, not a lost connection."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        cur = cur.__cause__


def _api_error(exc: BaseException) -> BaseException | None:
    """The flow engine client's error an exception comes from (Prefect re-raises a server it cannot reach as
    RuntimeError("Failed to reach API ...") from it), or None."""
    import httpx

    return next((e for e in _causes(exc) if isinstance(e, httpx.HTTPError)), None)


def _live_run(out: Any) -> Path | None:
    """The live run folder under the publication root `out` (None: no root given, or nothing published)."""
    from schemas.publication import current_run

    if not isinstance(out, (str, Path)):
        return None
    try:
        return current_run(out)
    except (PlanbakeError, OSError):
        return None


def _published_here(out: Any) -> Path | None:
    """The live run under `out` when this process published it (not a run another process published meanwhile,
    such as the one a `--wait` waited for)."""
    from tasks.publish.root import PUBLISHED_HERE

    live = _live_run(out)
    return live if live is not None and live.name in PUBLISHED_HERE else None


def _api_lost(exc: BaseException) -> str:
    return (f"the Prefect API stopped answering after the publication ({exc.__class__.__name__}: {exc}); the "
            "run's record in Prefect may be incomplete")


def _published_anyway(run: Path, exc: BaseException, as_json: bool) -> None:
    """A run whose publication went live before the flow engine's API stopped answering: its files are whole
    and live (the pointer moves last), only the record of the run in Prefect is incomplete. Exit 0, saying so."""
    console.print(f"warning: {_api_lost(exc)}", markup=False)
    _emit(as_json, {"run_id": run.name, "publication": str(run), "warning": _api_lost(exc)},
          lambda: out_console.print(f"published {run}"))


class _OneLineFor(logging.Filter):
    """Expected failures (bad input, busy, gate) reach the user as one line from the CLI: the flow engine's own
    records of them (the task's failure, its failed state, the flow's failure) are dropped."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()  # the messages of expected failures already recorded

    def filter(self, record: logging.LogRecord) -> bool:
        from flows.run import EXPECTED_FAILURE

        if getattr(record, EXPECTED_FAILURE, False):
            return False
        if record.exc_info and record.exc_info[1] is not None and (  # a lost API: the client's error, or from it
                _expected(record.exc_info[1]) is not None or _api_error(record.exc_info[1])):
            if str(record.exc_info[1]):
                self.seen.add(str(record.exc_info[1]))
            return False
        # a failed state names the exception in its message only
        return not (record.levelno >= logging.ERROR and any(text in record.getMessage() for text in self.seen))


def _quiet_libraries() -> None:
    for name in ("prefect.flow_runs", "prefect.task_runs"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _OneLineFor) for f in logger.filters):
            logger.addFilter(_OneLineFor())
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    if "PREFECT_API_URL" not in os.environ:  # the flow's own local server: when it is gone (Ctrl-C stops it too),
        os.environ.setdefault("PREFECT_CLIENT_MAX_RETRIES", "1")  # retrying for a minute helps nobody
    for name in ("sentence_transformers", "transformers", "httpx"):
        logging.getLogger(name).setLevel(logging.WARNING)
    for name in ("EventsWorker", "APILogWorker"):  # "Still processing items" as the process exits: not the user's
        logging.getLogger(name).setLevel(logging.ERROR)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # transformers reads it as it is imported
    if "transformers" in sys.modules:  # imported already: told directly (never imported here: serve runs without)
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()


def _tie_local_server() -> None:
    """Before a flow runs: with no Prefect API set, the temporary server Prefect starts for the flow stops with this
    process even when it is killed outright (SIGKILL), where no handler runs (Linux; see planbake/local_server.py)."""
    from prefect.settings import PREFECT_API_URL

    if PREFECT_API_URL.value() or not hasattr(os, "pidfd_open"):
        return
    from planbake.local_server import TiedServer

    TiedServer()


@app.command()
@_errors(publishes=False)
def init(
    corpus: Annotated[str, typer.Option("--corpus", callback=_given, help="JSONL file or Markdown folder.")],
    logs: Annotated[str | None, typer.Option("--logs", callback=_given, help="Query logs (file or folder).")] = None,
    out: Annotated[Path, typer.Option("--out", parser=_path, help="The config file to write.")] = Path(
        "planbake.yaml"),
    sample: Annotated[int, typer.Option("--sample", min=1, help="Documents of the corpus read (its first ones).")] = (
        1000),
    force: Annotated[bool, typer.Option("--force", help="Overwrite the config file if it exists.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Write a starting config from a sample of the corpus's metadata and the logs' columns and time span.

    Example: planbake init --corpus data/demo/corpus.jsonl --logs data/demo/logs --out my.yaml
    """
    from schemas.atomic import replace_atomically
    from tasks.starter import starter_config

    if out.is_dir():
        raise InputError(f"{out}: is a folder; --out names the config file to write")
    if out.exists() and not force:
        raise InputError(f"{out}: exists; pass --force to overwrite it, or --out another file")
    if not out.parent.is_dir():
        raise InputError(f"{out.parent}: no such folder; create it, or --out a file in an existing folder")
    starter = starter_config(corpus, out, logs, sample)
    replace_atomically(out.with_name(f".{out.name}.tmp"), out,
                       lambda tmp: tmp.write_text(starter.text, encoding="utf-8"))

    def human() -> None:
        facets = [f"{v.name} ({v.kind})" for v in starter.verdicts if v.kind] or ["none"]
        others = [v.key for v in starter.verdicts if not v.kind]
        window = f"; mining window {starter.window_days} days" if starter.window_days else ""
        out_console.print(f"wrote {out}: facets {', '.join(facets)}" + (f"; not facets: {', '.join(others)}"
                          if others else "") + window, markup=False)
        for note in starter.notes:
            console.print(f"undecided: {note}", markup=False)

    _emit(as_json, {"config": str(out), **starter.to_json()}, human)


@app.command()
@_errors
def index(
    corpus: Annotated[str | None, typer.Option("--corpus", callback=_given,
                                               help="JSONL file or Markdown folder.")] = None,
    config: ConfigOpt = None,
    out: OutOpt = Path("data/out"),
    run_date: RunDateOpt = None,
    wait: WaitOpt = 0.0,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Build or update the index and publish it.

    Example: planbake index --corpus data/demo/corpus.jsonl
    """
    def indexed(res: dict[str, Any]) -> dict[str, Any]:
        return {**{k: res["index"][k] for k in ("chunks", "embedded", "updated", "deleted", "version")},
                "run_id": res["run_id"], "publication": res["publication"]}

    def human(doc: dict[str, Any]) -> None:
        out_console.print(f"indexed {doc['chunks']} chunks: {doc['embedded']} embedded, {doc['updated']} updated, "
                          f"{doc['deleted']} deleted; table version {doc['version']}\npublished {doc['publication']}")

    _run_flow("index", config, out, wait, force, as_json, corpus=corpus, run_date=run_date, doc=indexed, human=human)


def version_state(hit: Any, as_of: date) -> str:
    """A hit among its policy's versions on the index's run date `as_of` (which decided `is_current`), for
    people: "current", "superseded", or "from DATE" (not yet in force then); --json has the links."""
    if hit.is_current:
        return "current"
    if hit.effective_from and hit.effective_from > as_of:
        return f"from {hit.effective_from}"
    return "superseded" if hit.superseded_by else "not current"


def _parse_filters(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise InputError(f"--filter {item!r}: expected FACET=VALUE, e.g. --filter office=Berlin")
        k, v = item.split("=", 1)
        if k.strip() in out:
            raise InputError(f"--filter {k.strip()} given twice; a search has one value per facet")
        out[k.strip()] = v.strip()
    return out


@app.command()
@_errors
def search(
    question: Annotated[str, typer.Argument(help="The search text.")],
    k: Annotated[int, typer.Option("-k", min=1, max=MAX_DEPTH, help="Number of hits.")] = 5,
    filter_: Annotated[list[str] | None, typer.Option("--filter", help="FACET=VALUE filter (an alias or "
                                                                       "another casing names its value).")] = None,
    all_versions: Annotated[bool, typer.Option("--all-versions", help="Include superseded versions.")] = False,
    config: Annotated[str | None, typer.Option("--config", callback=_given,
                                               help="Config YAML, for a publication that has no plans yet (default: "
                                                    "the publication's own, else data/configs/demo.yaml).")] = None,
    out: OutOpt = Path("data/out"),
    as_json: JsonOpt = False,
) -> None:
    """Search the published index as plan steps do (the config's `planning.search`: by cosine, or hybrid), with
    facet prefilters in their scope (a category value also finds chunks with none). The score shown is the cosine.

    Example: planbake search "parental leave for the second parent, Amsterdam office" --filter office=Amsterdam
    """
    if not words(question):
        raise InputError("the search text has no words; pass the words to search for")
    _quiet_libraries()
    from schemas.config import read_published_config
    from schemas.extract import Lexicon
    from schemas.files import CONFIG
    from schemas.publication import check_run, current_run, index_location, read_manifest
    from tasks.index.store import Index

    cfg = load_config(config)
    run = current_run(out)
    check_run(run)
    saved = run / CONFIG.name  # the config the publication was made with, once it has plans
    if saved.exists():
        cfg = read_published_config(saved)
    filters = _parse_filters(filter_ or [])
    unknown = set(filters) - set(cfg.facet_names)
    if unknown:
        raise InputError(f"--filter: unknown facet {sorted(unknown)}; facets are {cfg.facet_names}")
    idx = read_manifest(run)["index"]
    index = Index(index_location(idx, out), cfg, idx["version"])
    known = index.facet_values()
    lexicon = Lexicon(cfg, known)
    for facet, value in list(filters.items()):  # an alias names the whole value: "Berlin=x" is no "Berlin"
        whole = len(fold(value))
        named = {c.value for c in lexicon.extract(value) if c.facet == facet and (c.start, c.end) == (0, whole)}
        if facet in known and value not in known[facet] and len(named) == 1:  # an alias, or another casing
            filters[facet] = value = named.pop()
        if facet in known and value not in known[facet]:
            raise InputError(f"--filter {facet}={value}: no chunk has that value; the index holds "
                             f"{', '.join(known[facet][:20])}")
    hits = index.search(question, k, filters, all_versions)
    doc: dict[str, Any] = {"question": question, "filters": filters, "hits": [h.to_json() for h in hits]}
    if not hits and filters:  # a value no chunk has, of a facet that takes any value (a year, a date)
        column = index.columns(list(filters))
        held = {f: sorted({str(v) for v in column.column(f).to_pylist() if v not in (None, "")})
                for f in filters}
        doc["note"] = f"no {'' if all_versions else 'current '}chunk matches " + "; ".join(
            f"{f}={v} (the index holds {', '.join(held[f][:20]) or 'no value'})" for f, v in filters.items())

    def human() -> None:
        if "note" in doc:
            out_console.print(doc["note"], markup=False)
            return
        as_of = date.fromisoformat(idx["run_date"]) if idx.get("run_date") else date.today()
        table = Table("rank", "id", "score", *cfg.facet_names, f"version on {as_of}", "text")
        table.columns[-1].no_wrap = True
        for n, h in enumerate(hits, 1):
            table.add_row(str(n), h.id, f"{h.score:.3f}", *[str(h.facets[f]) for f in cfg.facet_names],
                          version_state(h, as_of), h.text[:60] + ("…" if len(h.text) > 60 else ""))
        out_console.print(table)

    _emit(as_json, doc, human)


def main(argv: list[str] | None = None) -> None:
    """The `planbake` command. With --json, a usage error (an unknown option, a value out of range) is also one
    JSON document on stdout, as every other failure is."""
    args = sys.argv[1:] if argv is None else argv
    if "--json" not in args:
        app(args)
        return
    # click's UsageError, of which typer.BadParameter is one (typer vendors click from 0.20 on)
    usage_error: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
    try:
        code = app(args, standalone_mode=False)  # returns the exit code a command raised
    except usage_error as exc:
        usage: Any = exc  # show(), format_message(), exit_code
        usage.show()
        code = usage.exit_code
        _emit(True, {"error": "usage", "message": usage.format_message(), "exit_code": code}, lambda: None)
    sys.exit(code if isinstance(code, int) else 0)


def _has_words(question: str, history: list[str] | None = None) -> None:
    if not words(question):
        raise InputError("the question has no words; pass the user's question")
    if any(not words(h) for h in history or []):
        raise InputError("--history: an earlier question has no words; pass each earlier question, or leave the "
                         "option out")


def _date(value: str | None, option: str) -> date | None:
    try:
        if value and not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
            raise ValueError(value)  # fromisoformat also takes 20261130 and 2026-W48-1
        return date.fromisoformat(value) if value else None
    except ValueError:
        raise InputError(f"{option} {value!r}: expected a date as YYYY-MM-DD, e.g. 2026-11-30") from None


def _precheck(stages: list[str], config: str | None, out: Path, **inputs: Any) -> None:
    """The inputs checked before the flow engine starts: a bad path or corpus record fails in a moment, not after
    start-up; so does a model writer the config or this machine cannot run."""
    from flows.run import check_inputs
    from tasks.index.stage import read_checked

    cfg = load_config(config)
    check_inputs(stages, cfg, out=out, **inputs)
    source = inputs.get("corpus") or cfg.corpus
    if "index" in stages and source and "://" not in str(source):
        read_checked(source, cfg)  # the index stage reads it again: a moment, against the engine's start-up


@app.command()
@_errors
def nightly(
    corpus: CorpusOpt = None,
    logs: LogsOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    run_date: RunDateOpt = None,
    config: ConfigOpt = None,
    out: OutOpt = Path("data/out"),
    wait: WaitOpt = 0.0,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Run index -> mine -> plan and publish atomically.

    Example: planbake nightly --out data/out
    """
    _run_flow("nightly", config, out, wait, force, as_json, corpus=corpus, logs=logs, since=since, until=until,
              run_date=run_date)


def _withheld(mine: dict[str, Any]) -> str:
    """The shapes mining withheld as instruction text, if any: counts only."""
    held = mine.get("instruction_text") or {}
    return (f"; {held['shapes']} withheld as instruction text ({held['questions']} questions, {held['users']} users)"
            if held.get("shapes") else "")


def _summary(res: dict[str, Any]) -> None:
    from tasks.ingest.files import outside_note

    idx, mine_, plan_ = res.get("index", {}), res.get("mine", {}), res.get("plan", {})
    ran = res.get("stages_run")

    def carried(stage: str) -> str:  # a stage this run did not redo: its figures are the live publication's
        if ran is None or stage in ran:
            return ""
        made_by = (res.get("made_by") or {}).get(stage)
        return f" (carried over from run {made_by}, not run now)" if made_by else (
            " (carried over from the last publication, not run now)")

    if idx:
        out_console.print(f"index: {idx['chunks']} chunks, {idx['embedded']} embedded, {idx['deleted']} deleted, "
                          f"table version {idx['version']}{carried('index')}")
    if mine_:
        out_console.print(f"mine: {mine_['rows']} rows ({mine_['quarantined']} quarantined), "
                          f"{mine_['recurring']} recurring shapes of {mine_['shapes']}: {mine_['by_type']}"
                          f"{_withheld(mine_)}{carried('mine')}", markup=False)
        if not carried("mine") and (note := outside_note(mine_)):
            out_console.print(f"note: {note}", markup=False, soft_wrap=True)
    if plan_:
        fell = f", {plan_['fallbacks']} written by rules after the model failed" if plan_.get("fallbacks") else ""
        out_console.print(f"plan: {plan_['templates']} templates ({plan_['rejected']} rejected{fell}), routes "
                          f"{plan_['routes']}{_multi_step(plan_)}, {plan_['cache_entries']} cache entries"
                          f"{carried('plan')}", markup=False)
    gate = res.get("gate") or {}
    if gate:
        failed = f" ({', '.join(gate['regressions'])})" if gate["regressions"] else ""
        out_console.print(f"quality gate: {gate['decision']}{failed}", markup=False)
    out_console.print(f"published: {res['publication']}", markup=False)
    out_console.print(f"report: {Path(res['publication']) / 'report' / 'report.md'}", markup=False)
    if "previous" in res and res["previous"] is None and mine_ and plan_:  # a first run: what to look at next
        out_console.print("\n".join(first_run_lines(res)), markup=False, soft_wrap=True)


def _multi_step(plan_: dict[str, Any]) -> str:
    """How many planned shapes search in two or more steps (a planned route serves one filtered search too)."""
    multi, routes = plan_.get("multi_step"), plan_.get("routes", {})
    if not multi or not any(routes.get(r) for r in multi):
        return ""
    return " (two or more steps: " + ", ".join(f"{r} {n} of {routes[r]}" for r, n in multi.items()
                                                  if routes.get(r)) + ")"


TOP_SHAPES = 5  # shapes a first run's summary lists


def first_run_lines(res: dict[str, Any]) -> list[str]:
    """The three things to look at after the first run on a new corpus and log: how much of the log was mined,
    the most asked shapes with their routes, and the report."""
    import pyarrow.parquet as pq

    from schemas.files import TEMPLATES
    from tasks.ingest.files import outside_note

    mine_, run = res["mine"], Path(res["publication"])
    out = mine_.get("outside_window") or {}
    outside = out.get("rows_before", 0) + out.get("rows_after", 0)
    read = mine_["rows"] + mine_["quarantined"] + outside
    window = f"{mine_.get('since') or 'the first day'} to {mine_.get('until') or 'the last'}"
    lines = ["", "First run: look next at", f"1. the log: {mine_['rows']:,} of the {read:,} rows read were mined "
             f"(the window {window}; {mine_['quarantined']:,} quarantined, {outside:,} outside the window)"]
    if note := outside_note(mine_):
        lines.append(f"   {note}")
    tpls = pq.read_table(run / TEMPLATES.name, columns=["skeleton", "count", "route", "template"]).to_pylist()
    top = sorted(tpls, key=lambda t: (-t["count"], t["skeleton"]))[:TOP_SHAPES]
    lines.append(f"2. the most asked of the {len(tpls)} recurring shapes and their routes "
                 "(`planbake lookup \"QUESTION\"` shows a question's plan):")
    for t in top:
        steps = len(json.loads(t["template"])["steps"])
        route = t["route"] if t["route"] == "one_search" else f"{t['route']}, {steps} step{'s' * (steps > 1)}"
        lines.append(f"   {t['count']:>7,}  {route:<22} {t['skeleton']}")
    lines.append(f"3. the report: {run / 'report' / 'report.md'} (`planbake report` prints it)")
    return lines


STAGES_OF = {"index": ["index"], "mine": ["mine"], "plan": ["plan"], "nightly": ["index", "mine", "plan"],
             "backfill": ["index", "mine", "plan"]}  # what each flow command runs


def _flow(name: str) -> Callable[..., dict[str, Any]]:
    """The flow of a command, imported once its inputs are checked: Prefect takes seconds to import."""
    from flows.backfill import backfill_flow
    from flows.index import index_flow
    from flows.nightly import mine_flow, nightly_flow, plan_flow

    flows = {"index": index_flow, "mine": mine_flow, "plan": plan_flow, "nightly": nightly_flow,
             "backfill": backfill_flow}
    return cast(Callable[..., dict[str, Any]], flows[name])


def _run_flow(name: str, config: str | None, out: Path, wait: float, force: bool, as_json: bool, *,
              since: str | None = None, until: str | None = None, run_date: str | None = None,
              doc: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
              human: Callable[[dict[str, Any]], None] = _summary, **inputs: Any) -> None:
    """The body of every command that runs a flow (`_errors` reports its failures): quiet the libraries, check the
    inputs before the flow engine starts, run the flow, print what it did: `doc` of its result (default: the
    result), as JSON with --json, else as `human` shows it. `inputs`: the corpus, logs or writer the command takes."""
    stages = STAGES_OF[name]
    _quiet_libraries()
    if "mine" in stages:  # the log window
        inputs.update(since=_date(since, "--since"), until=_date(until, "--until"))
    _precheck(stages, config, out, wait_s=wait, **inputs)
    _tie_local_server()
    if "index" in stages:
        inputs["run_date"] = _date(run_date, "--run-date")
    res = _flow(name)(config=config, out=str(out), wait_s=wait, quiet=as_json, force=force, **inputs)
    shown = doc(res) if doc is not None else res
    _emit(as_json, shown, lambda: human(shown))


@app.command()
@_errors
def mine(
    logs: LogsOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    config: ConfigOpt = None,
    out: OutOpt = Path("data/out"),
    wait: WaitOpt = 0.0,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Mine the query logs into recurring, classified shapes against the published index.

    Example: planbake mine --logs data/demo/logs --since 2026-11-23
    """
    _run_flow("mine", config, out, wait, force, as_json, logs=logs, since=since, until=until)


@app.command()
@_errors
def plan(
    writer: Annotated[str | None, typer.Option("--writer", callback=_one_of("rules", "vllm", "openai"),
                                               help="rules | vllm | openai (default: config)")] = None,
    config: ConfigOpt = None,
    out: OutOpt = Path("data/out"),
    wait: WaitOpt = 0.0,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Write, validate and evaluate template plans for the published shapes; publish the cache.

    Example: planbake plan --writer rules
    """
    _run_flow("plan", config, out, wait, force, as_json, writer=writer)  # the writer checked by its callback


@app.command()
@_errors
def lookup(
    question: Annotated[str, typer.Argument(help="The user's question.")],
    now: Annotated[str | None, typer.Option("--now", callback=_given, help="Date that resolves 'this year'.")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Print the trace: key, template, run.")] = False,
    history: HistoryOpt = None,
    out: RunOutOpt = Path("data/out"),
    as_json: JsonOpt = False,
) -> None:
    """Look a question up in the published plan cache (no model, no index).

    Example: planbake lookup "Compare parental leave for the second parent in Berlin and Amsterdam"

    Example: planbake lookup "what about Lisbon?" --history "how many vacation days do we get in Berlin"
    """
    from schemas.cache import PlanCache
    from tasks.plan.class_planner import lookup as planned_lookup

    _has_words(question, history)
    res = planned_lookup(PlanCache.open(out), question, _date(now, "--now"), history=history or [])
    doc = res.to_json()

    def human() -> None:
        head = f"{'hit' if res.hit else 'miss'}: route {res.route}"
        if res.shape_id:
            head += f"; shape {res.shape_id} ({res.shape_type})"
        if res.key:
            head += f"; key {res.key}"
        out_console.print(head, markup=False)
        if res.followup:
            out_console.print(f"follow-up resolved to: {res.resolved or '(not resolved)'}", markup=False)
        out_console.print(f"skeleton: {res.skeleton}\nconstraints: {res.constraints}", markup=False)
        if res.reason:
            out_console.print(f"reason: {res.reason}", markup=False)
        if res.plan:
            out_console.print(json.dumps(res.plan, indent=2), markup=False)
        if explain:
            out_console.print("trace: " + json.dumps(res.trace, indent=2, default=str), markup=False)

    _emit(as_json, doc, human)


@app.command()
@_errors
def retrieve(
    question: Annotated[str, typer.Argument(help="The user's question.")],
    history: HistoryOpt = None,
    budget: Annotated[int | None, typer.Option("--budget", min=1, max=MAX_DEPTH,
                                                        help="Chunks in the context.")] = None,
    now: Annotated[str | None, typer.Option("--now", callback=_given, help="Date that resolves 'this year'.")] = None,
    config: Annotated[str | None, typer.Option("--config", help="Not used: a lookup runs with the config the "
                                                                "publication was made with.")] = None,
    out: RunOutOpt = Path("data/out"),
    as_json: JsonOpt = False,
) -> None:
    """Look the question up, run its plan against the published index, print the context by part.

    Example: planbake retrieve "What per diem do I get at the 2026 engineering offsite?"
    """
    _quiet_libraries()
    _has_words(question, history)
    from schemas.cache import PlanCache
    from schemas.files import CONFIG
    from schemas.plan import Plan
    from tasks.executor import retrieve as run_retrieve
    from tasks.index.store import Index
    from tasks.plan.class_planner import lookup as planned_lookup

    cache = PlanCache.open(out)
    if config is not None:
        console.print(f"note: --config {config} is not used; retrieve runs with the config the publication was "
                      f"made with ({cache.run_dir / CONFIG.name})", markup=False)
    cfg = cache.lexicon.config
    res = planned_lookup(cache, question, _date(now, "--now"), history=history or [])
    index = Index(cache.index_uri, cfg, cache.manifest["index"]["version"])
    plan_ = Plan.model_validate(res.plan) if res.plan else None
    keep = bool(res.plan and res.plan.get("keep_original"))
    asked = res.resolved or question  # a follow-up searches as the standalone question it resolved to
    got = run_retrieve(asked, plan_, index, cache.lexicon, budget or cfg.planning.budget,
                       cfg.planning.per_step_k, keep_original=keep, merge=cfg.planning.merge,
                       rerank=cfg.planning.rerank)
    hits = got.hits_by_id()
    parts = []
    for p in got.parts:
        parts.append({**p.to_json(), "context": [c for c in got.context if c in {h.id for h in p.hits}]})
    doc = {"lookup": res.to_json(), "context": [hits[c].to_json() for c in got.context], "parts": parts,
           "searches": got.searches}

    def human() -> None:
        resolved = f"\nfollow-up resolved to: {res.resolved}" if res.resolved else ""
        out_console.print(f"Question: {question}{resolved}\nroute: {res.route} ({'hit' if res.hit else 'miss'})",
                          markup=False)
        for p in parts:
            filled = f" answer={p['answer']}" if p["answer"] else ""
            scope = p.get("scope")
            answered = f" answered by {scope['answered']} chunk {scope['by']}" if scope else ""
            out_console.print(f"Part {p['id']}: {p['query']} {p['filters']}{filled}{answered}", markup=False)
            if p["error"]:
                out_console.print(f"  not covered: {p['error']}", markup=False)
            for cid in p["context"]:
                out_console.print(f"  [{cid}] {hits[cid].text[:100]}", markup=False)

    _emit(as_json, doc, human)


@app.command()
@_errors
def serve(
    out: RunOutOpt = Path("data/out"),
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to listen on.")] = 8080,
    request_log: Annotated[str | None, typer.Option("--request-log", callback=_given, help="Folder the served "
                           "questions go to, scrubbed, as a log 'planbake mine --logs' reads (default: none).")] = None,
    check_ms: Annotated[int, typer.Option("--check-ms", min=10, help="How often CURRENT is checked for a new "
                                                                     "publication (ms).")] = 500,
    step_timeout: Annotated[float, typer.Option("--step-timeout", min=0.01, help="Seconds a retrieve step's search "
                                                "may take before its part is reported not covered.")] = 5.0,
    planner_url: Annotated[str | None, typer.Option("--planner-url", callback=_given, help="An OpenAI-compatible "
                           "endpoint (vllm serve: http://127.0.0.1:8000/v1) that plans misses at request time "
                           "(default: none; a miss says so).")] = None,
    planner_model: Annotated[str | None, typer.Option("--planner-model", callback=_given, help="The model the "
                             "planner asks for (default: the publication's planning.model).")] = None,
    planner_budget: Annotated[float, typer.Option("--planner-budget", min=0.05, help="Seconds an online plan may "
                                                  "take before the miss falls back to one search.")] = 1.5,
    http: Annotated[str, typer.Option("--http", callback=_one_of("h11", "httptools"),
                                      help="HTTP parser: h11, or httptools (faster where installed, but it drops the "
                                           "body of a request offering an upgrade, as Java's HttpClient does).")
                    ] = "h11",
    loop: Annotated[str, typer.Option("--loop", callback=_one_of("auto", "asyncio", "uvloop"),
                                      help="Event loop: auto|asyncio|uvloop (auto: uvloop if installed).")] = "auto",
) -> None:
    """Serve lookups and retrieves over HTTP (JSON; OpenAPI at /docs), following CURRENT as publications switch.

    Example: planbake serve --out data/out --port 8080 --request-log data/request-log
    """
    import uvicorn

    from planbake.serve import create_app
    from planbake.serve_live import load

    loaded = load(out)  # nothing published, or a damaged publication: one line and its exit code, not a server
    _quiet_libraries()
    # a reload (opening a publication, about a second for 100,000 entries) runs in a thread beside the requests:
    # switching threads every 0.5 ms, not the default 5, keeps the requests waiting behind it short
    sys.setswitchinterval(0.0005)
    served_log = logging.getLogger("planbake.serve")  # reloads and refused publications, one line each
    served_log.setLevel(logging.INFO)
    served_log.addHandler(logging.StreamHandler())
    planner = None
    if planner_url:
        try:
            from planbake.serve_planner import OnlinePlanner
        except ImportError as exc:  # the serving install: lookup only
            raise InputError(f"--planner-url: the online planner needs planbake's full install (it validates plans "
                             f"as the plan stage does); {exc.name or exc} is not installed") from None

        planner = OnlinePlanner(planner_url, planner_model or "", planner_budget)
    app_ = create_app(out, Path(request_log) if request_log else None, check_ms, step_timeout, planner, loaded)
    # no proxy headers: the server reads no client address, so none is rewritten per request
    uvicorn.run(app_, host=host, port=port, http=http, loop=loop, proxy_headers=False, log_level="warning",
                access_log=False)


EVAL_MARK = ".planbake-eval"  # in an --out folder eval builds: the run id of eval's last publication there


def _own_eval_folder(out: Path) -> None:
    """eval publishes its own index and plans into `out`: never into a folder whose live publication another
    command made (it would replace it, and the index table's chunks with the labeled corpus's)."""
    live = _live_run(out)
    mark = out / EVAL_MARK
    if live is not None and (not mark.is_file() or mark.read_bytes().strip() != live.name.encode()):
        raise InputError(f"--out {out}: holds a live publication ({live.name}) that eval did not build; eval "
                         "builds its own index and plans there and would replace it: pass a new folder, or no "
                         "--out (a temporary one)")


def _mark_eval_folder(out: Path) -> None:
    """Record that the live publication under `out` is eval's (after eval published it)."""
    live = _published_here(out)
    if live is not None:
        (out / EVAL_MARK).write_text(live.name + "\n", encoding="utf-8")


@app.command(name="eval")
@_errors(publishes=False)
def eval_(
    corpus: Annotated[str, typer.Option("--corpus", callback=_given, help="Corpus JSONL of the labeled set.")],
    questions: Annotated[str, typer.Option("--questions", callback=_given, help="Labeled questions JSONL.")],
    budget: Annotated[int | None, typer.Option("--budget", min=1, max=MAX_DEPTH,
                                                        help="Chunks in the context.")] = None,
    merge: Annotated[str | None, typer.Option("--merge", callback=_one_of("round_robin", "max", "rrf"),
                                              help="round_robin | max | rrf (default: config)")] = None,
    rerank: Annotated[bool | None, typer.Option("--rerank/--no-rerank", help="Within a part, order chunks by "
                                                "similarity to the question (default: config).")] = None,
    config: ConfigOpt = None,
    out: Annotated[Path | None, typer.Option("--out", parser=_root,
                                             help="Where to build (default: a temporary folder).")] = None,
    plot: Annotated[Path | None, typer.Option("--plot", parser=_path, help="PNG of the four systems per question type "
                                                             "(default: eval.png in --out, else here).")] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the rows as a Markdown table.")] = False,
    folds: Annotated[int | None, typer.Option("--folds", min=2, help="Out of sample (the default, 2 folds): each "
                                              "fold's questions are scored by plans mined from the others'.")] = None,
    logs: Annotated[str | None, typer.Option("--logs", callback=_given, help="Out of sample: mine this query log "
                                             "(file or folder) instead of the questions.")] = None,
    in_sample: Annotated[bool, typer.Option("--in-sample", help="Mine the very questions it scores (plans seen "
                                            "before they are scored: an upper bound).")] = False,
    half_: Annotated[str | None, typer.Option("--half", callback=_one_of("dev", "test"), help="Score the dev or "
                                              "test half only (split.json beside the questions, else by id hash)."
                                              )] = None,
    as_json: JsonOpt = False,
) -> None:
    """Build the index and plans for a labeled set and compare four systems. Out of sample by default: the plans
    that score a question were mined from other questions (--folds) or from a query log (--logs).

    Example: planbake eval --corpus corpus.jsonl --questions questions.jsonl --budget 4 --plot eval.png
    """
    import tempfile

    _quiet_libraries()
    cfg = load_config(config)
    from flows.run import check_inputs, run_stages
    from schemas.cache import PlanCache
    from tasks.evaluate import (
        SYSTEMS,
        check_parts,
        check_plot,
        evaluate,
        half,
        markdown_rows,
        markdown_vocabulary,
        plot_rows,
        questions_as_log,
        read_labeled,
        sample_note,
        split_folds,
    )
    from tasks.index.corpus import read_corpus
    from tasks.index.store import Index

    if sum([folds is not None, logs is not None, in_sample]) > 1:
        raise typer.BadParameter("give one of --folds, --logs and --in-sample")
    labeled = read_labeled(questions)
    if half_ is not None:
        labeled = half(labeled, half_, questions)
    check_inputs(["index", "mine"] if logs else ["index"], cfg, corpus=corpus, logs=logs, out=out or ".")
    check_parts(labeled, {doc.id for doc in read_corpus(corpus)}, questions)  # before the build, not after it
    rounds = ([([], labeled)] if logs is not None else [(labeled, labeled)] if in_sample
              else split_folds(labeled, folds or 2))  # (questions mined, questions scored); --logs: the log is mined
    check_plot(plot or (out or Path(".")) / "eval.png")
    if out is not None:
        _own_eval_folder(out)
    if logs is None:  # each labeled question is asked once
        cfg.mining.min_count = cfg.mining.min_users = 1
    cfg.gate.enabled = False  # a throwaway publication: nothing to guard
    cfg.retention.runs = max(cfg.retention.runs, len(rounds) + 1)  # each round's publication stays readable
    if budget:
        cfg.planning.budget = budget
    if merge:
        cfg.planning.merge = merge  # type: ignore[assignment]
    if rerank is not None:
        cfg.planning.rerank = rerank
    with tempfile.TemporaryDirectory(prefix="planbake-eval-") as tmp:
        root = out or Path(tmp)
        from prefect import flow

        _tie_local_server()
        caches: dict[str, PlanCache] = {}
        for n, (mined, scored) in enumerate(rounds):
            log = logs or str(questions_as_log(mined, Path(tmp) / f"questions-log-{n}.jsonl",
                                               date.today().isoformat() + "T12:00:00"))
            if len(rounds) > 1:
                console.print(f"fold {n + 1} of {len(rounds)}: plans mined from {len(mined)} questions, "
                              f"scoring {len(scored)}", markup=False)
            try:
                flow(name="eval", log_prints=True)(run_stages)(["index", "mine", "plan"] if n == 0 else
                                                                ["mine", "plan"], corpus=corpus, logs=log,
                                                                config=cfg, out=str(root), quiet=True)
            except Exception as exc:  # the index and plans are whole once published: the scores can follow
                lost = _api_error(exc)
                if lost is None or _published_here(root) is None:
                    raise
                console.print(f"warning: {_api_lost(lost)}", markup=False)
            cache = PlanCache.open(root)
            caches.update({q.id: cache for q in scored})
        if out is not None:
            _mark_eval_folder(out)
        result = evaluate(labeled, caches, Index(cache.index_uri, cfg, cache.manifest["index"]["version"]),
                          cfg.planning.budget, cfg.planning.per_step_k, cfg.planning.merge, rerank=cfg.planning.rerank)
    result["half"] = half_
    result["sample"] = {"in_sample": in_sample, "folds": len(rounds) if logs is None and not in_sample else None,
                        "logs": logs, "note": sample_note(in_sample, len(rounds), logs)}
    result["budget"] = cfg.planning.budget
    result["plot"] = str(plot_rows(result["rows"], plot or (out or Path(".")) / "eval.png",
                                   f"{Path(questions).parent.name or questions}, budget {cfg.planning.budget}, "
                                   f"merge {cfg.planning.merge}" + (", re-ranked" if cfg.planning.rerank else "")))

    def human() -> None:
        out_console.print(result["sample"]["note"], markup=False, soft_wrap=True)
        if markdown:
            out_console.print("\n".join(markdown_rows(result["rows"])), markup=False, soft_wrap=True)
        else:
            table = Table("system", "shape", "n", "part cov.", "all parts", "searches/q", "multi-step",
                          "split vs label", "missed splits", "bridge acc.", "plan valid", "steps/plan")
            table.columns[0].no_wrap = True
            for r in result["rows"]:
                table.add_row(r["system"], r["shape"], str(r["n"]), f"{r['part_coverage']:.2f}",
                              f"{r['all_parts_count']}/{r['n']}", f"{r['searches_per_question']:.1f}",
                              str(r["multi_step"]), "-" if r["split_against_label"] is None else
                              str(r["split_against_label"]), "-" if r["missed_splits"] is None else
                              str(r["missed_splits"]),
                              f"{r['bridges_right']}/{r['bridges']}" if r["bridges"] else "-",
                              "-" if r["plan_validity"] is None else f"{r['plan_validity']:.2f}",
                              "-" if r["steps_per_plan"] is None else f"{r['steps_per_plan']:.1f}")
            out_console.print(table)
        if result["vocabulary"]:
            out_console.print("\nSub-queries without their filters: part coverage in the question's words and in "
                              "the corpus's", markup=False)
            out_console.print("\n".join(markdown_vocabulary(result["vocabulary"])), markup=False, soft_wrap=True)
        out_console.print(f"search: {result['search']}, merge: {result['merge']}"
                          f"{', re-ranked' if result['rerank'] else ''}, "
                          f"budget {cfg.planning.budget}; plot: {result['plot']}",
                          markup=False)
        for system in SYSTEMS:
            incomplete = [q["id"] for q in result["questions"] if q[system]["coverage"] < 1]
            out_console.print(f"{system}: incomplete {incomplete}", markup=False)
        for note in result["notes"]:
            out_console.print(f"note: {note}", markup=False, soft_wrap=True)

    _emit(as_json, result, human)


@app.command()
@_errors
def rollback(
    out: OutOpt = Path("data/out"),
    to: Annotated[str | None, typer.Option("--to", callback=_given, help="The run id of the publication to return "
                                           "to (a folder under runs/; default: the previous one).")] = None,
    wait: WaitOpt = 0.0,
    as_json: JsonOpt = False,
) -> None:
    """Re-point lookups to the previous publication and restore the index table to its tagged version. Without a
    whole live publication (CURRENT missing, a file of the live run damaged), to the newest whole one.

    Example: planbake rollback --out data/out
    """
    from schemas.files import Manifest
    from schemas.publication import current_run, index_location, publications
    from tasks.index.store import open_table, restore
    from tasks.publish.root import publish_lock
    from tasks.publish.root import rollback as do_rollback

    def restore_index(manifest: Manifest) -> None:  # first: a failed restore leaves the pointer as it was
        idx = manifest.get("index", {})
        table = open_table(index_location(idx, out), idx.get("table", "chunks")) if idx else None
        if table is not None:
            restore(table, idx.get("tag") or idx["version"], index_location(idx, out), idx.get("table", "chunks"))

    if not publications(out):
        current_run(out)  # nothing published: say so, and leave no lock file behind in a mistyped folder
    with publish_lock(out, wait):
        run_id, manifest = do_rollback(out, restore_index, to)
    idx = manifest.get("index", {})
    doc = {"run_id": run_id, "index_version": idx.get("version"), "tag": idx.get("tag")}
    _emit(as_json, doc, lambda: out_console.print(f"rolled back to {run_id} (index version {doc['index_version']})"))


@app.command()
@_errors
def report(
    out: OutOpt = Path("data/out"),
    as_json: JsonOpt = False,
) -> None:
    """Print where the live publication's report is, and its text.

    Example: planbake report --out data/out
    """
    from schemas.publication import current_run

    path = current_run(out) / "report" / "report.md"
    if not path.exists():
        raise NoPublication(f"{path}: this publication has no report")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DamagedPublication(f"{path}: not UTF-8 text") from None
    _emit(as_json, {"report": str(path), "markdown": text},
          lambda: out_console.print(text + f"\n(report: {path})", markup=False))


@app.command()
@_errors
def backfill(
    corpus: CorpusOpt = None,
    logs: LogsOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    run_date: RunDateOpt = None,
    config: ConfigOpt = None,
    out: OutOpt = Path("data/out"),
    wait: WaitOpt = 0.0,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Re-index after a corpus update (or mine a past window) and re-evaluate only what changed.

    Example: planbake backfill --corpus data/demo/corpus.jsonl --since 2026-11-23 --until 2026-11-25
    """
    def human(res: dict[str, Any]) -> None:
        _summary(res)
        out_console.print(f"re-did: {res['plan']['evaluated']} templates evaluated, {res['plan']['reused']} reused")

    _run_flow("backfill", config, out, wait, force, as_json, corpus=corpus, logs=logs, since=since, until=until,
              run_date=run_date, human=human)


if __name__ == "__main__":  # python -m planbake.cli: the same command as the `planbake` script
    main()
