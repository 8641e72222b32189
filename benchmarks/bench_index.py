"""Benchmark the index stage against plain sentence-transformers encoding, in one interleaved run.

    .venv/bin/python -m benchmarks.bench_index [--corpus PATH] [--scale K] [--repeat N] [--json] [--profile]
                                               [--dtype bfloat16]

Three measurements per round, interleaved (the order alternates from round to round) and reported as medians:

1. plain ``model.encode(texts, batch_size=64, normalize_embeddings=True)`` on exactly the chunk texts the
   pipeline embeds;
2. a full ``build_index`` into a fresh temporary out directory (read, chunk, enrich, embed, LanceDB, indexes);
3. a no-change re-run of ``build_index`` on the same out directory (must embed nothing).

The machine is shared and noisy, so the figures that matter are the ratios measured side by side.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import platform
import pstats
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, Literal

from schemas.config import Config, load_config
from tasks.embed import load_model
from tasks.index.corpus import chunk_document, read_corpus
from tasks.index.stage import build_index

CONFIG = Path("data/configs/demo.yaml")
DEMO_CORPUS = Path("data/demo/corpus.jsonl")
FIXTURE_CORPUS = Path("tests/fixtures/seed_handbook/corpus.jsonl")
MIN_CHUNKS = 1500
GOAL_OVERHEAD = 0.20


def default_corpus() -> Path:
    return DEMO_CORPUS if DEMO_CORPUS.exists() else FIXTURE_CORPUS


def count_chunks(corpus: Path, config: Config) -> list[str]:
    """The chunk texts the pipeline embeds on a fresh build, in its order."""
    return [c.text for d in read_corpus(corpus) for c in chunk_document(d, config.chunking)]


def replicate(corpus: Path, scale: int, dest: Path) -> Path:
    """Write `corpus` `scale` times with ids suffixed `-r<k>` (after any year, so policy keys stay per copy)."""
    lines = [json.loads(raw) for raw in corpus.read_text(encoding="utf-8").splitlines() if raw.strip()]
    with dest.open("w", encoding="utf-8") as fh:
        for k in range(scale):
            for rec in lines:
                copy = dict(rec, id=f"{rec['id']}-r{k}" if scale > 1 else rec["id"])
                meta = dict(copy.get("metadata") or {})
                if scale > 1 and meta.get("policy"):
                    meta["policy"] = f"{meta['policy']}-r{k}"
                copy["metadata"] = meta
                fh.write(json.dumps(copy, ensure_ascii=False) + "\n")
    return dest


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def peak_rss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024  # bytes on macOS, KiB on Linux


def run(corpus: Path, scale: int, repeat: int, workdir: Path, profile: bool,
        dtype: Literal["float32", "bfloat16"] = "float32"
        ) -> dict[str, Any]:
    config = load_config(CONFIG)
    config.embed_dtype = dtype  # the builds' (plain encode stays float32: the baseline)
    run_date = date.today()
    scaled = replicate(corpus, scale, workdir / "corpus.jsonl")
    texts = count_chunks(scaled, config)
    model = load_model(config.model_path)

    # Warm-up, untimed: model weights, torch kernels, lancedb / tantivy imports and first-call costs.
    model.encode(texts[:128], batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    build_index(corpus, config, workdir / "warmup", run_date, quiet=True)

    times: dict[str, list[float]] = {"encode": [], "full": [], "rerun": []}
    results: dict[str, dict[str, int]] = {}

    def encode() -> None:
        dt, vecs = timed(lambda: model.encode(texts, batch_size=64, normalize_embeddings=True,
                                              show_progress_bar=False))
        assert len(vecs) == len(texts)
        times["encode"].append(dt)

    def full_and_rerun(n: int) -> None:
        out = workdir / f"out-{n}"
        dt, outcome = timed(lambda: build_index(scaled, config, out, run_date, quiet=True))
        if outcome.result.embedded != len(texts):
            raise RuntimeError(f"full build embedded {outcome.result.embedded}, expected {len(texts)}")
        times["full"].append(dt)
        results["full"] = {"chunks": outcome.result.chunks, "embedded": outcome.result.embedded}
        dt, outcome = timed(lambda: build_index(scaled, config, out, run_date, quiet=True))
        if outcome.result.embedded != 0:
            raise RuntimeError(f"no-change re-run embedded {outcome.result.embedded}, expected 0")
        times["rerun"].append(dt)
        results["rerun"] = {"chunks": outcome.result.chunks, "embedded": outcome.result.embedded}
        shutil.rmtree(out, ignore_errors=True)

    for n in range(repeat):
        if n % 2 == 0:  # ABAB with alternating order, so drift on the shared machine hits both sides
            encode()
            full_and_rerun(n)
        else:
            full_and_rerun(n)
            encode()
        print(f"round {n + 1}/{repeat}: encode {times['encode'][-1]:.2f}s  full {times['full'][-1]:.2f}s  "
              f"re-run {times['rerun'][-1]:.2f}s", file=sys.stderr, flush=True)

    med = {k: statistics.median(v) for k, v in times.items()}
    rows = {
        "plain_encode": {"chunks": len(texts), "embedded": len(texts)},
        "full_build": results["full"],
        "no_change_rerun": results["rerun"],
    }
    keys = {"plain_encode": "encode", "full_build": "full", "no_change_rerun": "rerun"}
    report: dict[str, Any] = {
        "corpus": str(corpus), "scale": scale, "dtype": dtype, "documents": scale * len(read_corpus(corpus)),
        "chunks": len(texts), "repeat": repeat, "batch_size": 64, "embed_batch_size": config.embed_batch_size,
        "cpus": _cpus(), "python": platform.python_version(),
        "rows": {name: {**row, "seconds": med[keys[name]], "all_seconds": times[keys[name]],
                        "chunks_per_s": row["chunks"] / med[keys[name]]} for name, row in rows.items()},
        "pipeline_overhead": med["full"] / med["encode"] - 1,
        "pipeline_overhead_per_round": [f / e - 1 for f, e in zip(times["full"], times["encode"], strict=True)],
        "rerun_over_full": med["rerun"] / med["full"],
        "goal_overhead": GOAL_OVERHEAD,
    }
    if profile:
        report["profile"] = profile_build(scaled, config, workdir / "profile", run_date)
    report["peak_rss_mb"] = peak_rss_mb()
    return report


def profile_build(corpus: Path, config: Config, out: Path, run_date: date, top: int = 25) -> str:
    """cProfile of one full build, top functions by cumulative time."""
    prof = cProfile.Profile()
    prof.enable()
    build_index(corpus, config, out, run_date, quiet=True)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(top)
    return buf.getvalue()


def _cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # pragma: no cover - not Linux


def render(report: dict[str, Any]) -> str:
    names = {"plain_encode": "plain model.encode", "full_build": "full build_index",
             "no_change_rerun": "no-change re-run"}
    lines = [
        f"corpus {report['corpus']} x{report['scale']} = {report['documents']} documents, "
        f"{report['chunks']} chunks; median of {report['repeat']} interleaved rounds; {report['cpus']} CPUs; "
        f"builds embed in {report.get('dtype', 'float32')}, plain encode in float32",
        "",
        f"{'measurement':<22}{'chunks':>8}{'embedded':>10}{'seconds':>10}{'chunks/s':>10}",
    ]
    for key, label in names.items():
        row = report["rows"][key]
        lines.append(f"{label:<22}{row['chunks']:>8}{row['embedded']:>10}{row['seconds']:>10.2f}"
                     f"{row['chunks_per_s']:>10.0f}")
    overhead = report["pipeline_overhead"]
    verdict = "within" if overhead < report["goal_overhead"] else "above"
    lines += [
        "",
        f"pipeline overhead (full build / plain encode - 1): {overhead:+.1%} "
        f"({verdict} the {report['goal_overhead']:.0%} goal); per round: "
        + ", ".join(f"{x:+.1%}" for x in report["pipeline_overhead_per_round"]),
        f"no-change re-run / full build: {report['rerun_over_full']:.2f}",
        f"peak RSS: {report['peak_rss_mb']:.0f} MB",
    ]
    if "profile" in report:
        lines += ["", report["profile"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_index", description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=None,
                    help=f"JSONL corpus (default: {DEMO_CORPUS} if present, else {FIXTURE_CORPUS})")
    ap.add_argument("--scale", type=int, default=0,
                    help=f"replicate the corpus K times with suffixed ids (default: enough for {MIN_CHUNKS} chunks)")
    ap.add_argument("--repeat", type=int, default=2, help="interleaved rounds; medians are reported")
    ap.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    ap.add_argument("--profile", action="store_true", help="also cProfile one extra full build")
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32",
                    help="config embed_dtype for the builds (plain encode stays float32)")
    args = ap.parse_args(argv)
    corpus: Path = args.corpus or default_corpus()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    scale: int = args.scale
    if scale < 1:
        base = len(count_chunks(corpus, load_config(CONFIG)))
        scale = max(1, math.ceil(MIN_CHUNKS / max(base, 1)))
    with tempfile.TemporaryDirectory(prefix="bench_index_") as tmp:
        report = run(corpus, scale, args.repeat, Path(tmp), args.profile, args.dtype)
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
