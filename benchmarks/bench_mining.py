"""Benchmark the mining stage against a plain DuckDB scan of the same log files, in one interleaved run.

    .venv/bin/python -m benchmarks.bench_mining [--rows N] [--repeat R] [--scan-repeat S] [--plain] [--json] [--profile]

The log is generated in a temporary directory (or the ``--keep`` directory, which keeps it for the next run of
the same ``--rows`` and ``--repeat``) by ``data/demo/generate_logs.py`` itself (imported, with
its row, PII, user, poisoning and day counts scaled so that a window of its days holds N lines, and R - 1 more
days at the same rate; in a child process, so its memory does not count toward the peak RSS reported here): the
demo's 33 shapes, phrasings, Zipf frequencies, noise, follow-ups, PII and malformed lines, hive-partitioned
JSONL.gz like ``data/demo/logs``. Distinct queries therefore grow with N the way they would in a bigger log (PII
rows stay unique, typo variants recur), instead of repeating the demo's. With ``--plain`` the scan and the
mining read an uncompressed copy of it (``logs-plain``, plain ``.jsonl`` as the issue's reference scan reads).

Each round is a night: round r mines the window of days r .. r + window - 1 (``--since``/``--until``), the
morning after its last day. The first night has no stored skeleton vectors and embeds every skeleton; each next
night's window has moved on by a day, so it embeds that day's new skeletons, as a nightly schedule does.

Side by side in one process, interleaved (scans x S, mining, scans x S, mining, ..., scans x S; medians):

1. a plain DuckDB scan that parses every column of the window's files
   (``SELECT count(*), count(ts), count("user"), count(query) FROM read_json(...)``), ``--scan-repeat`` times
   before the first and after each mining round;
2. the whole mining stage, ``tasks.mine.stage.mine()`` on a fresh index handle (empty embedding memo) into a
   fresh staging directory, with a timer around each phase: ingest (DuckDB read, quarantine, PII scrub of
   quarantined text), extract (scrub + constraints + skeleton per distinct query, the join back), merge
   (embedding the skeletons, grouping near duplicates), shapes, classify (rules plus one index search per
   recurring shape) and write; the embedding calls and index searches inside a phase are also timed on their
   own ("merge: embedding", "classify: embedding", "classify: search"). ``--repeat`` rounds (default 2: a first
   and a next night; the next-night figure is the median of rounds 2 .. R).

The index it mines against is built once from ``data/demo/corpus.jsonl`` with ``tasks.index.stage.build_index``.
The machine is shared and noisy, so the figure that matters is the ratio measured side by side.
"""

from __future__ import annotations

import argparse
import cProfile
import gzip
import hashlib
import importlib.util
import io
import json
import os
import platform
import pstats
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from multiprocessing import get_context
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import duckdb
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "data" / "configs" / "demo.yaml"
CORPUS = ROOT / "data" / "demo" / "corpus.jsonl"
GENERATOR = ROOT / "data" / "demo" / "generate_logs.py"
DEFAULT_ROWS = 1_000_000
GOAL_ROWS_PER_S = 300_000

# The demo log's proportions (generate_logs.py): 53,000 shape rows, 3,000 with PII, 2,000 users, 400 injection
# rows, 7 odd questions, 30 malformed lines, follow-ups 5 % of all lines; 56,246 lines over 7 days.
DEMO_LINES = 56_246


def load_generator() -> ModuleType:
    """data/demo/generate_logs.py as a module (it is a script, not a package member)."""
    spec = importlib.util.spec_from_file_location("planbake_demo_generate_logs", GENERATOR)
    if spec is None or spec.loader is None:  # pragma: no cover - the file is part of the repository
        raise FileNotFoundError(GENERATOR)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is created
    spec.loader.exec_module(module)
    return module


def scaled_parameters(rows: int) -> dict[str, int]:
    """The generator's knobs for about `rows` lines, in the demo's proportions; more days for a bigger log."""
    scale = rows / DEMO_LINES
    injection = max(1, round(400 * scale))
    base = max(1_000, round(rows * 0.95) - injection - 7 - 30)
    return {
        "BASE_ROWS": base,
        "PII_ROWS": round(3_000 * base / 53_000),
        "N_USERS": max(50, round(2_000 * scale)),
        "INJECTION_ROWS": injection,
        # a bigger log covers more days (28 for 1M rows), but stays inside 2026 so "this year" means one year
        "N_DAYS": max(7, min(35, round(7 * rows / 250_000))),
    }


def generate_logs(rows: int, dest: Path, extra_days: int = 0) -> dict[str, Any]:
    """Write dest/logs/date=YYYY-MM-DD/part-000.jsonl.gz (about `rows` lines a window of `window_days` days, and
    `extra_days` more days at the same rate, from the same users); a summary of what is in them.

    The generator is seeded: a log that `dest` holds from the same generator and parameters is used again (its
    summary in dest/logs.json, "reused": true); any other is deleted first, so no day of an earlier log stays."""
    gen = load_generator()
    params = scaled_parameters(rows)
    window = params["N_DAYS"]
    for name in ("BASE_ROWS", "PII_ROWS", "INJECTION_ROWS"):  # days differ in volume: 3 % more, so that a
        params[name] = round(params[name] * (window + extra_days) / window * 1.03)  # window holds about N lines
    params["N_DAYS"] = window + extra_days
    stamp = {"generator": hashlib.sha256(GENERATOR.read_bytes()).hexdigest(), "params": params}
    summary_file = dest / "logs.json"
    if summary_file.exists() and (dest / "logs").is_dir():
        kept = json.loads(summary_file.read_text(encoding="utf-8"))
        if kept.get("stamp") == stamp:
            return {**kept["summary"], "generate_seconds": 0.0, "reused": True}
    summary_file.unlink(missing_ok=True)
    shutil.rmtree(dest / "logs", ignore_errors=True)
    for name, value in params.items():
        setattr(gen, name, value)
    t0 = time.perf_counter()
    truth = gen.generate(dest)
    seconds = time.perf_counter() - t0
    files = sorted((dest / "logs").rglob("*.jsonl.gz"))
    summary = {
        "lines": truth["total_lines"], "valid_rows": truth["valid_rows"], "days": len(truth["days"]),
        "first_day": truth["days"][0], "last_day": truth["days"][-1], "users": truth["users"]["distinct"],
        "pii_rows": truth["pii"]["rows"], "malformed": truth["malformed"]["rows"], "files": len(files),
        "bytes": sum(f.stat().st_size for f in files), "generator_params": params, "generate_seconds": seconds,
        "window_days": window, "rows_per_day": truth["rows_per_day"], "reused": False,
    }
    summary_file.write_text(json.dumps({"stamp": stamp, "summary": summary}, default=str), encoding="utf-8")
    return summary


def scan_sql(logs: Path, days: list[str] | None = None) -> str:
    """The scan of every file of the log, or of the files of `days` (the window a round mines)."""
    from schemas.sql import sql_files

    suffix = _suffix(logs)
    files = ([str(logs / f"date={d}" / f"part-000{suffix}") for d in days] if days
             else sorted(str(f) for f in logs.rglob(f"*{suffix}")))
    return (f"""SELECT count(*), count(ts), count("user"), count(query) FROM read_json({sql_files(files)}, """
            """format='newline_delimited', columns={ts: 'VARCHAR', "user": 'VARCHAR', query: 'VARCHAR'}, """
            """ignore_errors=true)""")


def _suffix(logs: Path) -> str:
    """The log files' suffix: ".jsonl.gz" as generated, ".jsonl" for the uncompressed copy (`--plain`)."""
    return ".jsonl.gz" if next(logs.rglob("*.jsonl.gz"), None) else ".jsonl"


def plain_copy(logs: Path) -> Path:
    """The generated log uncompressed, beside it (`logs-plain`, made once per generated log): the plain JSONL
    log the issue's reference scan reads."""
    dest = logs.parent / "logs-plain"
    stamp = (logs.parent / "logs.json").read_bytes() if (logs.parent / "logs.json").exists() else b""
    if (dest / ".stamp").exists() and (dest / ".stamp").read_bytes() == stamp:
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    for f in sorted(logs.rglob("*.jsonl.gz")):
        target = dest / f.relative_to(logs).with_suffix("")
        target.parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(f, "rb") as src, target.open("wb") as out:
            shutil.copyfileobj(src, out)
    (dest / ".stamp").write_bytes(stamp)
    return dest


def plain_scan(logs: Path, days: list[str] | None = None) -> tuple[float, list[int]]:
    """One DuckDB scan parsing every column (fresh connection, default threads); seconds and the counts."""
    t0 = time.perf_counter()
    con = duckdb.connect()
    row = con.sql(scan_sql(logs, days)).fetchall()[0]
    con.close()
    return time.perf_counter() - t0, [int(x) for x in row]


class PhaseTimer:
    """Seconds and calls per phase (and items, for calls whose first argument is a list); `inner` names a call
    after the phase it runs in ("merge: embedding", "classify: embedding")."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.items: dict[str, int] = {}
        self.active: list[str] = []

    def _add(self, name: str, seconds: float, items: int | None) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds
        self.calls[name] = self.calls.get(name, 0) + 1
        if items is not None:
            self.items[name] = self.items.get(name, 0) + items

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.active.append(name)
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.active.pop()
                self._add(name, time.perf_counter() - t0, None)
        return timed

    def inner(self, what: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            name = f"{self.active[-1] if self.active else 'other'}: {what}"
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self._add(name, time.perf_counter() - t0,
                          len(args[0]) if args and isinstance(args[0], list | tuple) else None)
        return timed


PHASES = {  # attribute of tasks.mine.stage (ingest: of flows.stages) -> phase name
    "ingest": "ingest", "extract_distinct": "extract", "merge_skeletons": "merge", "build_shapes": "shapes",
    "classify_shapes": "classify", "write_shapes": "write", "summarize": "summarize",
}  # questions.parquet is written on a second thread (`write_questions`): waiting for it counts as "other"


@contextmanager
def instrumented(timer: PhaseTimer, embedder: Any) -> Iterator[None]:
    """Time the mining task's phases by wrapping the names it calls in flows.stages (ingest) and tasks.mine.stage
    (the rest), restored afterwards.

    Inside a phase, the embedding calls (`embedder.encode`, `embedder.encode_one`) are timed as
    "<phase>: embedding" and the index searches (`_best_scores`) as "<phase>: search".
    """
    import flows.stages as flow
    import tasks.mine.stage as stage

    def home(name: str) -> Any:
        return flow if name == "ingest" else stage

    saved = {name: getattr(home(name), name) for name in [*PHASES, "_best_scores", "skeleton_embedder"]}
    timed: list[Any] = []

    def instrument(e: Any) -> Any:
        if not any(e is t for t in timed):
            e.encode = timer.inner("embedding", e.encode)
            e.encode_one = timer.inner("embedding", e.encode_one)
            timed.append(e)
        return e

    try:
        for name, phase in PHASES.items():
            setattr(home(name), name, timer.wrap(phase, saved[name]))
        stage._best_scores = timer.inner("search", saved["_best_scores"])
        stage.skeleton_embedder = lambda index, config: instrument(saved["skeleton_embedder"](index, config))
        instrument(embedder)
        yield
    finally:
        for name, fn in saved.items():
            setattr(home(name), name, fn)
        for e in timed:
            del e.encode, e.encode_one  # back to the class's methods


def mine_once(logs: Path, config: Any, uri: str, staging: Path, days: list[str],
              profile: cProfile.Profile | None = None, last_run: Path | None = None
              ) -> tuple[float, dict[str, float], dict[str, Any]]:
    """One full mining run of the window `days` (the morning after its last day) on a fresh index handle, with
    the merge memory of `last_run` (the night before's staging folder, as a publication keeps it); seconds,
    per-phase seconds, the MineResult as JSON (with the number of skeletons embedded and of index searches made)."""
    from flows.stages import mine_logs
    from tasks.index.store import Index

    index = Index(uri, config)  # a new Embedder: empty encode_one memo (the model itself is loaded once)
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    timer = PhaseTimer()
    with instrumented(timer, index.embedder):
        if profile is not None:
            profile.enable()
        t0 = time.perf_counter()
        since, until = date.fromisoformat(days[0]), date.fromisoformat(days[-1])
        result, _ = mine_logs(logs, config, index, staging, since=since, until=until,
                         now=datetime.combine(until + timedelta(days=1), datetime.min.time()), quiet=True,
                         last_run=last_run)
        seconds = time.perf_counter() - t0
        if profile is not None:
            profile.disable()
    phases = dict(timer.seconds)
    phases["other"] = max(0.0, seconds - sum(v for k, v in phases.items() if ":" not in k))
    counts = {"skeletons_embedded": timer.items.get("merge: embedding", 0),
              "examples_embedded": timer.items.get("classify: embedding", 0),
              "index_searches": sum(n for k, n in timer.calls.items() if k.endswith(": search"))}
    return seconds, phases, {**result.to_json(), **counts}


def peak_rss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024  # bytes on macOS, KiB on Linux


def current_rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except OSError:  # pragma: no cover - not Linux
        return float("nan")


def run(rows: int, repeat: int, scan_repeat: int, workdir: Path, profile: bool, workers: int = 2,
        dtype: Literal["float32", "bfloat16"] = "float32", plain: bool = False,
        skeleton_dtype: Literal["auto", "float32", "bfloat16"] = "auto") -> dict[str, Any]:
    from schemas.config import load_config
    from tasks.embed import load_model, resolve_dtype
    from tasks.index.stage import build_index

    config = load_config(CONFIG)
    config.mining.workers = workers
    config.embed_dtype = dtype
    config.mining.embed_dtype = skeleton_dtype
    print(f"generating {rows:,} log lines (child process) while building the demo index ...", file=sys.stderr,
          flush=True)
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        pending = pool.submit(generate_logs, rows, workdir, repeat - 1)
        t0 = time.perf_counter()
        outcome = build_index(CORPUS, config, workdir / "index", date(2026, 11, 23), quiet=True)
        index_seconds = time.perf_counter() - t0
        gen = pending.result()
    logs = plain_copy(workdir / "logs") if plain else workdir / "logs"
    # Round r mines the window of days r .. r + window - 1, the morning after its last day: each night's window
    # moves on by a day, as a nightly schedule's does, so each next night has a new day's skeletons to embed.
    all_days = sorted(gen["rows_per_day"])
    windows = [all_days[r:r + gen["window_days"]] for r in range(repeat)]
    window_lines = [sum(gen["rows_per_day"][d] for d in w) for w in windows]
    made = "kept from an earlier run" if gen["reused"] else f"generated in {gen['generate_seconds']:.0f}s"
    print(f"  {gen['lines']:,} lines in {gen['files']} files ({gen['bytes'] / 1e6:.1f} MB gzip) over "
          f"{gen['days']} days, {gen['users']:,} users; {made}, index {index_seconds:.0f}s",
          file=sys.stderr, flush=True)
    load_model(config.model_path)
    rss_before = current_rss_mb()

    # Warm-up, untimed: DuckDB's JSON reader, the page cache, imports, first-call costs.
    plain_scan(logs)
    distinct = _distinct_stats(logs)

    scans: list[float] = []
    mines: list[float] = []
    phases: list[dict[str, float]] = []
    counts: list[int] = []
    result: dict[str, Any] = {}

    def do_scans(days: list[str]) -> None:
        for _ in range(scan_repeat):
            dt, c = plain_scan(logs, days)
            scans.append(dt)
            counts[:] = c

    # scan x S, mine, scan x S, mine, ..., scan x S: every mining round sits between two sets of scans (of the
    # files of the window it mines). Round 1 starts with no stored skeleton vectors (a first night); later rounds
    # reuse them and embed only their new skeletons (the next nights).
    shutil.rmtree(Path(outcome.uri).parent / "vectors", ignore_errors=True)  # where mining keeps them (mine_stage)
    do_scans(windows[0])
    embedded: list[int] = []
    new_ids: list[int] = []  # recurring shapes whose id the night before did not have
    ids: set[str] = set()
    def staging(n: int) -> Path:  # two folders in turn: each night reads the merge memory of the one before
        return workdir / f"staging-{n % 2}"

    for n, days in enumerate(windows):
        dt, ph, res = mine_once(logs, config, outcome.uri, staging(n), days, last_run=staging(n - 1) if n else None)
        mines.append(dt)
        phases.append(ph)
        embedded.append(res["skeletons_embedded"] + res["examples_embedded"])
        result.update(res)
        tonight = set(pq.read_table(staging(n) / "shapes.parquet", columns=["shape_id"])["shape_id"]
                      .to_pylist())
        new_ids.append(len(tonight - ids))
        ids = tonight
        do_scans(days)
        print(f"round {n + 1}/{repeat} ({days[0]} to {days[-1]}, {window_lines[n]:,} lines, {embedded[-1]:,} "
              f"texts embedded, {new_ids[-1]:,} new shape ids): mine {dt:.1f}s ("
              + ", ".join(f"{k} {v:.1f}" for k, v in ph.items())
              + f"); scans so far: median {statistics.median(scans):.2f}s", file=sys.stderr, flush=True)

    lines = statistics.median(window_lines)
    scan_s, mine_s = statistics.median(scans), statistics.median(mines)
    order = ["ingest", "extract", "merge", "merge: embedding", "shapes", "classify", "classify: embedding",
             "classify: search", "write", "summarize", "other"]
    seen = {k for p in phases for k in p}
    names = [k for k in order if k in seen] + sorted(seen - set(order))
    phase_med = {k: statistics.median(p.get(k, 0.0) for p in phases) for k in names}
    model_s = sum(v for k, v in phase_med.items() if k.endswith((": embedding", ": search")))

    def round_figures(i: int) -> dict[str, Any]:
        model = sum(v for k, v in phases[i].items() if k.endswith((": embedding", ": search")))
        n = window_lines[i]
        return {"seconds": mines[i], "rows_per_s": n / mines[i], "model_seconds": model,
                "rows_per_s_without_model": n / max(mines[i] - model, 1e-9), "lines": n, "days": windows[i],
                "texts_embedded": embedded[i], "new_shape_ids": new_ids[i]}
    nights = sorted(range(1, len(mines)), key=lambda i: mines[i])
    report: dict[str, Any] = {
        "rows": lines, "log": gen, "distinct": distinct, "repeat": repeat, "scan_repeat": scan_repeat,
        "cpus": _cpus(), "workers": workers, "dtype": dtype,
        "skeleton_dtype": resolve_dtype(skeleton_dtype), "plain": plain, "python": platform.python_version(),
        "duckdb": duckdb.__version__,
        "load_average": os.getloadavg(), "index_build_seconds": index_seconds,
        "index_chunks": outcome.result.chunks,
        "scan": {"seconds": scan_s, "all_seconds": scans, "rows_per_s": lines / scan_s, "counts": counts},
        "mine": {"seconds": mine_s, "all_seconds": mines, "rows_per_s": lines / mine_s, "result": result},
        "phases": {k: {"seconds": v, "share": v / mine_s, "all_seconds": [p.get(k, 0.0) for p in phases]}
                   for k, v in phase_med.items()},
        "mine_over_scan": mine_s / scan_s,
        "model_seconds": model_s,
        "rows_per_s_without_model": lines / max(mine_s - model_s, 1e-9),
        "goal_rows_per_s": GOAL_ROWS_PER_S,
        "rss_before_mining_mb": rss_before,
        "first_night": round_figures(0),
        # the median of the next nights (the slower middle one of an even count), never one chosen round
        "next_night": round_figures(nights[len(nights) // 2]) if nights else None,
        "next_nights": len(nights),
    }
    if profile:
        prof = cProfile.Profile()
        mine_once(logs, config, outcome.uri, staging(len(windows)), windows[-1], profile=prof,
                  last_run=staging(len(windows) - 1))
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf)
        stats.sort_stats("cumulative").print_stats(35)
        stats.sort_stats("tottime").print_stats(20)
        report["profile"] = buf.getvalue()
    report["peak_rss_mb"] = peak_rss_mb()
    return report


def _distinct_stats(logs: Path) -> dict[str, int]:
    """How many distinct queries and (query, year) pairs the log has: what extract_distinct loops over."""
    con = duckdb.connect()
    from schemas.sql import sql_string

    glob = sql_string(logs / "**" / f"*{_suffix(logs)}")
    row = con.sql(f"""
        SELECT count(DISTINCT query), count(DISTINCT "user")
        FROM read_json({glob}, format='newline_delimited', ignore_errors=true,
                       columns={{ts: 'VARCHAR', "user": 'VARCHAR', query: 'VARCHAR'}})""").fetchall()[0]
    con.close()
    return {"distinct_queries": int(row[0]), "distinct_users": int(row[1])}


def _cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # pragma: no cover - not Linux


def render(report: dict[str, Any]) -> str:
    log, scan, mine = report["log"], report["scan"], report["mine"]
    res = mine["result"]
    lines = [
        f"log: {log['lines']:,} lines ({log['valid_rows']:,} valid, {log['pii_rows']:,} with PII, "
        f"{log['malformed']} malformed) in {log['files']} files, {log['bytes'] / 1e6:.1f} MB gzip, "
        f"{log['days']} days, {log['users']:,} users, {report['distinct']['distinct_queries']:,} distinct queries; "
        f"each night mines {log['window_days']} days ({report['rows']:,.0f} lines, median), a day later each night"
        + ("; mined and scanned uncompressed (--plain)" if report.get("plain") else ""),
        f"mining: median of {report['repeat']} round(s); scan: median of {len(report['scan']['all_seconds'])}, "
        f"{report['scan_repeat']} before the first and after each mining round; "
        f"{report['cpus']} CPUs, {report['workers']} extraction processes, "
        f"index embedded in {report.get('dtype', 'float32')}, skeletons in "
        f"{report.get('skeleton_dtype', report.get('dtype', 'float32'))}; "
        f"load average {', '.join(f'{x:.1f}' for x in report['load_average'])}",
        "",
        f"{'measurement':<34}{'seconds':>10}{'rows/s':>12}",
        f"{'plain DuckDB scan (all columns)':<34}{scan['seconds']:>10.2f}{scan['rows_per_s']:>12,.0f}",
        *[f"{label:<34}{fig['seconds']:>10.2f}{fig['rows_per_s']:>12,.0f}\n"
          f"{'  without embedding and search':<34}{fig['seconds'] - fig['model_seconds']:>10.2f}"
          f"{fig['rows_per_s_without_model']:>12,.0f}"
          for label, fig in [("mine(), first night (no vectors)", report["first_night"]),
                             (f"mine(), next night (median of {report['next_nights']})", report["next_night"])]
          if fig],
        "",
        *[f"{label}: {fig['seconds'] / scan['seconds']:.1f}x the scan; goal {report['goal_rows_per_s']:,} rows/s: "
          + ("met" if fig["rows_per_s"] >= report["goal_rows_per_s"] else
             f"missed ({fig['rows_per_s'] / report['goal_rows_per_s']:.1%} of it)")
          for label, fig in [("first night", report["first_night"]), ("next night", report["next_night"])] if fig],
        f"time in embedding and index searches: {report['model_seconds']:.1f}s; the rest of the stage runs at "
        f"{report['rows_per_s_without_model']:,.0f} rows/s",
        "",
        f"{'phase':<22}{'seconds':>10}{'share':>8}",
    ]
    for name, ph in report["phases"].items():
        label = ("  " + name) if ":" in name else name
        lines.append(f"{label:<22}{ph['seconds']:>10.2f}{ph['share']:>8.1%}")
    lines += [
        "",
        f"mined: {res['rows']:,} rows, {res['quarantined']} quarantined, {res['skeletons']:,} skeletons, "
        f"{res['shapes']:,} shapes, {res['recurring']:,} recurring ({res['recurring_questions']:,} questions); "
        f"{res['skeletons_embedded']:,} skeletons and {res['examples_embedded']:,} examples embedded, "
        f"{res['index_searches']:,} index searches",
        *([f"new shape ids (recurring shapes the night before did not have), next night: "
           f"{report['next_night']['new_shape_ids']:,} of {res['recurring']:,}"] if report["next_night"] else []),
        f"peak RSS: {report['peak_rss_mb']:.0f} MB (model and index loaded: {report['rss_before_mining_mb']:.0f} MB "
        "before the first round)",
    ]
    if "profile" in report:
        lines += ["", report["profile"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_mining", description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=DEFAULT_ROWS, help=f"log lines to generate (default {DEFAULT_ROWS:,})")
    ap.add_argument("--repeat", type=int, default=2,
                    help="mining rounds, each between two sets of scans (default 2: a first night with no stored "
                         "skeleton vectors, then a next night that reuses them)")
    ap.add_argument("--scan-repeat", type=int, default=3,
                    help="DuckDB scans before the first and after each mining round (default 3)")
    ap.add_argument("--workers", type=int, default=2, help="extraction processes (config mining.workers; default 2)")
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32",
                    help="config embed_dtype (the index)")
    ap.add_argument("--skeleton-dtype", choices=["auto", "float32", "bfloat16"], default="auto",
                    help="config mining.embed_dtype (skeleton and example vectors; default auto)")
    ap.add_argument("--plain", action="store_true",
                    help="mine (and scan) the generated log uncompressed, as plain .jsonl files")
    ap.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    ap.add_argument("--profile", action="store_true", help="also cProfile one extra mining run")
    ap.add_argument("--keep", type=Path, default=None,
                    help="work in this directory and keep it (logs, index); a log it holds of the same size is reused")
    args = ap.parse_args(argv)
    if args.repeat < 1 or args.scan_repeat < 1 or args.rows < 1_000:
        ap.error("--repeat and --scan-repeat must be at least 1, --rows at least 1000")
    os.chdir(ROOT)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        report = run(args.rows, args.repeat, args.scan_repeat, args.keep, args.profile, args.workers, args.dtype,
                     args.plain, args.skeleton_dtype)
    else:
        with tempfile.TemporaryDirectory(prefix="bench_mining_") as tmp:
            report = run(args.rows, args.repeat, args.scan_repeat, Path(tmp), args.profile, args.workers,
                         args.dtype, args.plain, args.skeleton_dtype)
    print(json.dumps(report, indent=2, default=str) if args.json else render(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
