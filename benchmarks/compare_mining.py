"""The mining stage of two commits side by side on one log, alternating in fresh processes.

    .venv/bin/python -m benchmarks.compare_mining --dir /tmp/bm1 --before a05c71d [--after HEAD] [--rounds 3]

`--dir` is a directory kept by ``benchmarks.bench_mining --keep DIR`` (its generated ``logs`` and demo ``index``,
with stored skeleton vectors: a next night). Each commit is checked out in a temporary git worktree; every round
runs ``mine()`` once per commit, each in a new Python process (this repository's virtual environment, the
commit's code, its own copy of the index with the stored vectors and extraction memo), before-after, then
after-before, and so on. Each process also takes three plain DuckDB scans of
the log, so a round's ratio to the scan can be read beside it, and the CPU seconds of its `mine()` (all threads),
which another user of the machine changes less than the wall time. The figure to keep is the ratio of the medians.
Last, the files each commit published (shapes, questions, quarantine) are compared row for row: a speed-up that
changes what mining publishes is reported as such.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# Run in a child process whose sys.path starts with one commit's worktree.
_CHILD = """
import json, resource, shutil, sys, time
from datetime import date, datetime, timedelta
from pathlib import Path
root, work, staging, logs = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
sys.path.insert(0, str(root))
from benchmarks.bench_mining import plain_scan
from schemas.config import load_config
try:
    from flows.stages import mine_logs
    from tasks.index.store import Index
except ImportError:  # a commit from before the stage folders
    from tasks.mine_stage import mine as mine_logs
    from tasks.store import Index
config = load_config(root / "data" / "configs" / "demo.yaml")
config.mining.workers = 2
index = Index(str(work / "index" / "lancedb"), config)
index.embedder.encode(["warm up"])
shutil.rmtree(staging, ignore_errors=True)
staging.mkdir(parents=True)
scan = min(plain_scan(logs)[0] for _ in range(3))
days = sorted(p.name.split("=")[1] for p in logs.iterdir() if p.name.startswith("date="))
now = datetime.fromisoformat(days[-1]) + timedelta(days=1)  # as bench_mining: the morning after the last day
window = {"since": date.fromisoformat(days[0]), "until": date.fromisoformat(days[-1])}  # the whole log
def cpu():  # seconds on the CPU, all threads of this process: steadier than wall time on a shared machine
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c0, t0 = cpu(), time.perf_counter()
mine_logs(logs, config, index, staging, now=now, quiet=True, **window)
print(json.dumps({"mine": time.perf_counter() - t0, "cpu": cpu() - c0, "scan": scan}))
"""


def _worktree(rev: str, into: Path) -> Path:
    path = into / rev.replace("/", "_")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(path), rev], check=True)
    return path


def _own_index(kept: Path, work: Path) -> Path:
    """A working folder for one commit: a copy of the kept index (with its stored skeleton vectors and extraction
    memo, which each commit then keeps for itself: a memo is valid for one commit's extraction code, and keeping
    it deletes the others)."""
    shutil.copytree(kept / "index", work / "index")
    return work


def _mine(root: Path, work: Path, staging: Path, logs: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(root), str(work), str(staging), str(logs)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"mining with the code of {root} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.compare_mining", description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, required=True, help="a directory kept by bench_mining --keep (logs, index)")
    ap.add_argument("--before", required=True, help="the commit to compare against")
    ap.add_argument("--after", default="HEAD", help="the commit to measure (default HEAD)")
    ap.add_argument("--rounds", type=int, default=3, help="runs of each commit (default 3)")
    args = ap.parse_args(argv)
    if not (args.dir / "logs").is_dir() or not (args.dir / "index").is_dir():
        ap.error(f"--dir {args.dir}: no logs/ and index/ here; run benchmarks.bench_mining --keep {args.dir} first")
    if args.before == args.after:
        ap.error("--before and --after name the same commit")
    times: dict[str, list[dict[str, float]]] = {args.before: [], args.after: []}
    with tempfile.TemporaryDirectory(prefix="compare_mining_") as tmp:
        trees: dict[str, Path] = {}
        works: dict[str, Path] = {}  # each commit's copy of the index
        try:
            for rev in times:
                trees[rev] = _worktree(rev, Path(tmp))
                works[rev] = _own_index(args.dir, Path(tmp) / "work" / rev.replace("/", "_"))
            for n in range(args.rounds):
                order = [args.before, args.after] if n % 2 == 0 else [args.after, args.before]
                for rev in order:
                    staging = Path(tmp) / "staging" / rev.replace("/", "_")
                    run = _mine(trees[rev], works[rev], staging, args.dir / "logs")
                    times[rev].append(run)
                    print(f"round {n + 1}: {rev:>12} mine {run['mine']:6.2f} s (CPU {run['cpu']:.2f} s), scan "
                          f"{run['scan']:.2f} s ({run['mine'] / run['scan']:.1f}x)", file=sys.stderr, flush=True)
            differ = _differing_outputs(*(Path(tmp) / "staging" / rev.replace("/", "_") for rev in times))
        finally:
            for path in trees.values():
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], check=False)
    medians = {rev: statistics.median(r["mine"] for r in runs) for rev, runs in times.items()}
    for rev, runs in times.items():
        print(f"{rev:>12}: " + ", ".join(f"{r['mine']:.2f}" for r in runs) + f" s; median {medians[rev]:.2f} s; "
              f"CPU median {statistics.median(r['cpu'] for r in runs):.2f} s")
    print(f"throughput {args.after} / {args.before}: {medians[args.before] / medians[args.after]:.2f}x")
    print("published files: " + ("the same rows" if not differ else "DIFFERENT: " + "; ".join(differ)))
    return 0 if not differ else 1


def _differing_outputs(before: Path, after: Path) -> list[str]:
    """The published Parquet files of two runs that differ (as tables: rows, columns and order)."""
    import pyarrow.parquet as pq

    out = []
    for name in sorted({p.name for p in [*before.glob("*.parquet"), *after.glob("*.parquet")]}):
        a, b = before / name, after / name
        if not (a.exists() and b.exists()):
            out.append(f"{name} in one run only")
        else:
            ta, tb = pq.read_table(a), pq.read_table(b)
            if ta.equals(tb):
                continue
            fields = [f"{fa.name}: {_kind(fa)} -> {_kind(fb)}" for fa, fb in zip(ta.schema, tb.schema, strict=False)
                      if fa != fb]
            changed = [fa.name for fa, fb in zip(ta.schema, tb.schema, strict=False) if fa.type != fb.type]
            if ta.schema.names == tb.schema.names and _cast_equals(ta, tb):
                out.append(f"{name}: the same rows in the same order, its schema differs ({'; '.join(fields)})")
            elif ta.schema.names == tb.schema.names and _equal_without(ta, tb, changed):
                out.append(f"{name}: the same rows but for the values of the columns whose type changed "
                           f"({'; '.join(fields)})")
            else:
                out.append(f"{name} differs")
    return out


def _cast_equals(ta: Any, tb: Any) -> bool:
    import pyarrow as pa

    try:
        return bool(ta.cast(tb.schema, safe=False).equals(tb))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # values of one type that the other cannot hold
        return False


def _equal_without(ta: Any, tb: Any, columns: list[str]) -> bool:
    """Whether the tables hold the same rows once `columns` are dropped, in any order (an id of a new kind
    also orders rows of the same time differently)."""
    if not columns:
        return False
    ta, tb = ta.drop_columns(columns), tb.drop_columns(columns)
    keys = [(c, "ascending") for c in ta.column_names]
    return bool(ta.sort_by(keys).equals(tb.sort_by(keys)))


def _kind(field: Any) -> str:
    return f"{field.type}{'' if field.nullable else ' not null'}"


if __name__ == "__main__":
    raise SystemExit(main())
