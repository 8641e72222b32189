"""Benchmark the nightly pipeline on the embedded demo and on the demo scaled K times, side by side in one run.

    .venv/bin/python -m benchmarks.bench_nightly [--scale K] [--repeat N] [--json]

Each run is `flows.nightly.nightly_flow` (what `planbake nightly` runs: index -> mine -> plan -> quality gate ->
publish, under a temporary Prefect server) in a fresh child process with a fresh, empty publication root, so
every run builds the index from scratch. The inputs:

* 1x: the embedded demo, data/demo/corpus.jsonl and data/demo/logs (56,246 log lines over 7 days);
* Kx (default 10): the corpus replicated K times with distinct ids and policy keys and the same offices, years
  and texts (`benchmarks.bench_index.replicate`; data/demo/generate_corpus.py has no scale parameter), and
  logs from data/demo/generate_logs.py with its knobs scaled to K x 56,246 lines in the demo's proportions
  (`benchmarks.bench_mining.scaled_parameters`: more users, PII and injection rows) over the same 7 days.

Inside the child, the stages `flows.run` calls (index, mine, plan, and `Run.finish`: the quality gate, the
report and the publish) are wrapped with timers, and the process's peak resident memory (VmHWM) is read after
each. The parent measures the child's wall time and, from `os.wait4`, its peak RSS (ru_maxrss: the largest of
the process and the children it waited for; the temporary Prefect server runs as another process and is not
in the VmHWM figures). With `--repeat N` the runs alternate order (1x, Kx, Kx, 1x, ...) and medians are
reported. The ratios Kx / 1x are what to read: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "data" / "configs" / "demo.yaml"
DEMO_CORPUS = ROOT / "data" / "demo" / "corpus.jsonl"
DEMO_LOGS = ROOT / "data" / "demo" / "logs"
STAGES = ("index", "mine", "plan", "finish")


def vm_hwm_mb() -> float:
    """Peak resident memory of this process so far, from /proc (MB); NaN where there is no /proc."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    return float("nan")


# ---------------------------------------------------------------------------------------------------- child


def child(corpus: str, logs: str, out: str, result: str) -> int:
    """One nightly run with timed stages; writes its figures to `result` as JSON."""
    t_start = time.perf_counter()
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    # the temporary Prefect server can take more than the default 20 s to start on a loaded machine
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "300")
    import flows.run as run_mod
    from flows.nightly import nightly_flow
    from tasks.publish.run import Run

    t_imported = time.perf_counter()
    stages: dict[str, dict[str, float]] = {}

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                stages[name] = {"seconds": time.perf_counter() - t0, "peak_rss_mb": vm_hwm_mb()}
        return wrapper

    run_mod.index_stage = timed("index", run_mod.index_stage)
    run_mod.mine_stage = timed("mine", run_mod.mine_stage)
    run_mod.plan_stage = timed("plan", run_mod.plan_stage)
    Run.finish = timed("finish", Run.finish)  # type: ignore[method-assign]
    t0 = time.perf_counter()
    manifest = nightly_flow(corpus=corpus, logs=logs, config=str(CONFIG), out=out, quiet=True)
    flow_s = time.perf_counter() - t0
    idx, mine, plan = manifest.get("index", {}), manifest.get("mine", {}), manifest.get("plan", {})
    counts = manifest.get("counts", {})
    doc = {"stages": stages, "flow_seconds": flow_s, "import_seconds": t_imported - t_start,
           "peak_rss_mb": vm_hwm_mb(), "gate": manifest.get("gate", {}).get("decision"),
           "chunks": idx.get("chunks"), "embedded": idx.get("embedded"), "log_rows": mine.get("rows"),
           "quarantined": mine.get("quarantined"), "shapes": counts.get("shapes", plan.get("shapes")),
           "cache_entries": counts.get("cache_entries", plan.get("cache_entries")),
           "templates": plan.get("templates"), "counts": counts}
    Path(result).write_text(json.dumps(doc, default=str), encoding="utf-8")
    return 0


# --------------------------------------------------------------------------------------------------- parent


def make_inputs(scale: int, dest: Path) -> dict[str, Any]:
    """The corpus and logs for `scale` (1: the embedded demo as it is)."""
    if scale == 1:
        return {"corpus": str(DEMO_CORPUS), "logs": str(DEMO_LOGS), "generate_seconds": 0.0}
    from benchmarks.bench_index import replicate
    from benchmarks.bench_mining import DEMO_LINES, load_generator, scaled_parameters

    dest.mkdir(parents=True, exist_ok=True)
    corpus = replicate(DEMO_CORPUS, scale, dest / "corpus.jsonl")
    gen: Any = load_generator()
    params = {**scaled_parameters(scale * DEMO_LINES), "N_DAYS": 7}  # the demo's week, more rows per day
    for name, value in params.items():
        setattr(gen, name, value)
    t0 = time.perf_counter()
    truth = gen.generate(dest)
    return {"corpus": str(corpus), "logs": str(dest / "logs"), "generate_seconds": time.perf_counter() - t0,
            "log_lines": truth["total_lines"], "generator_params": params}


def one_run(label: str, inputs: dict[str, Any], work: Path) -> dict[str, Any]:
    out = work / f"out-{label}-{time.monotonic_ns()}"
    result = work / f"result-{label}.json"
    cmd = [sys.executable, "-m", "benchmarks.bench_nightly", "--child", inputs["corpus"], inputs["logs"], str(out),
           str(result)]
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{label} run failed ({proc.returncode}): {err.decode(errors='replace')[-3000:]}")
    doc = json.loads(result.read_text(encoding="utf-8"))
    shutil.rmtree(out, ignore_errors=True)
    return {**doc, "label": label, "wall_seconds": wall, "child_maxrss_mb": usage.ru_maxrss / 1024,
            "cpu_seconds": usage.ru_utime + usage.ru_stime, "load_before": load_before, "load_after": os.getloadavg()}


def median_of(runs: list[dict[str, Any]], path: tuple[str, ...]) -> float:
    values = []
    for r in runs:
        v: Any = r
        for key in path:
            v = v[key]
        values.append(float(v))
    return statistics.median(values)


def summarize(runs: list[dict[str, Any]]) -> dict[str, float]:
    out = {"wall_seconds": median_of(runs, ("wall_seconds",)), "flow_seconds": median_of(runs, ("flow_seconds",)),
           "cpu_seconds": median_of(runs, ("cpu_seconds",)), "peak_rss_mb": median_of(runs, ("peak_rss_mb",)),
           "child_maxrss_mb": median_of(runs, ("child_maxrss_mb",))}
    for stage in STAGES:
        out[f"{stage}_seconds"] = median_of(runs, ("stages", stage, "seconds"))
        out[f"{stage}_peak_rss_mb"] = median_of(runs, ("stages", stage, "peak_rss_mb"))
    return out


def run(scale: int, repeat: int, work: Path) -> dict[str, Any]:
    t_start = time.perf_counter()
    inputs = {"1x": make_inputs(1, work / "in-1x"), f"{scale}x": make_inputs(scale, work / f"in-{scale}x")}
    labels = list(inputs)
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in labels}
    for n in range(repeat):
        for label in labels if n % 2 == 0 else labels[::-1]:
            runs[label].append(one_run(label, inputs[label], work))
    medians = {k: summarize(v) for k, v in runs.items()}
    small, big = medians["1x"], medians[f"{scale}x"]
    ratios = {k: big[k] / small[k] if small[k] else float("nan") for k in small}
    return {"benchmark": "nightly", "python": platform.python_version(), "cpus": os.cpu_count(),
            "load_average": os.getloadavg(), "scale": scale, "repeat": repeat,
            "inputs": {k: {kk: vv for kk, vv in v.items() if kk not in ("corpus", "logs")} for k, v in inputs.items()},
            "runs": runs, "medians": medians, "ratios": ratios, "seconds": time.perf_counter() - t_start}


def render(r: dict[str, Any]) -> str:
    big = f"{r['scale']}x"
    first = {k: v[0] for k, v in r["runs"].items()}
    lines = [f"nightly pipeline (nightly_flow, fresh publication root), 1x vs {big}; {r['repeat']} run(s) each, "
             f"medians; load average at the end {', '.join(f'{x:.2f}' for x in r['load_average'])}",
             "inputs: " + "; ".join(f"{k}: {v['chunks']} chunks ({v['embedded']} embedded), {v['log_rows']} log rows "
                                    f"({v['quarantined']} quarantined), {v['shapes']} shapes, "
                                    f"{v['cache_entries']} cache entries, gate {v['gate']}"
                                    for k, v in first.items()), "",
             f"| {'measurement':<38} | {'1x':>9} | {big:>9} | {big + ' / 1x':>9} |",
             f"|{'-' * 40}|{'-' * 10}:|{'-' * 10}:|{'-' * 10}:|"]
    rows = [(f"{s} stage (s)", f"{s}_seconds") for s in STAGES]
    rows += [("flow, all stages (s)", "flow_seconds"), ("child process wall, with startup (s)", "wall_seconds"),
             ("child CPU time, user + system (s)", "cpu_seconds")]
    rows += [(f"peak RSS after {s} (MB)", f"{s}_peak_rss_mb") for s in STAGES]
    rows += [("peak RSS of the pipeline process (MB)", "peak_rss_mb"),
             ("child ru_maxrss, with reaped children (MB)", "child_maxrss_mb")]
    for name, key in rows:
        a, b = r["medians"]["1x"][key], r["medians"][big][key]
        lines.append(f"| {name:<38} | {a:>9.1f} | {b:>9.1f} | {r['ratios'][key]:>9.2f} |")
    load = "; ".join(f"{run['label']}: {run['load_before'][0]:.2f} -> {run['load_after'][0]:.2f}"
                     for runs in r["runs"].values() for run in runs)
    lines += ["", f"1-minute load average before -> after each run: {load}",
              f"generating the {big} logs took {r['inputs'][big].get('generate_seconds', 0):.0f} s; "
              f"total {r['seconds']:.0f} s"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_nightly", description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=10, help="the larger run's scale of corpus and logs (default 10)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per scale, alternating order; medians reported")
    ap.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    ap.add_argument("--child", nargs=4, metavar=("CORPUS", "LOGS", "OUT", "RESULT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(*args.child)
    if args.scale < 2 or args.repeat < 1:
        ap.error("--scale must be at least 2 and --repeat at least 1")
    with tempfile.TemporaryDirectory(prefix="bench_nightly_") as tmp:
        report = run(args.scale, args.repeat, Path(tmp))
    print(json.dumps(report, indent=2, default=str) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
