"""How often plain single-fact questions get a split plan: a log of them mined nightly, then looked up.

    .venv/bin/python -m benchmarks.bench_single_fact [--set DIR] [--config CONFIG] [--entities N] [--json]

A question about one thing ("When was Christopher Nolan born?") has one part: a plan that splits it spends the
budget on searches that cannot find more. The questions are made from the titles of the HotpotQA 100 paragraphs
(`--set`, read and never copied; the title's bracketed sense, "(film)", dropped): each title is put in single-fact
frames ("What is X known for?", "Where is X located?", ...). The titles are split into two halves by a hash of the
title: the mined half is asked by three users each in the log of one nightly run (`planbake nightly`, the
HotpotQA config: entity slots on); every frame is then looked up with every title of both halves, the held-out
half's questions never seen in mining, as the server looks them up (`tasks.plan.class_planner.lookup`: a
miss is planned by its class where the config sets `class_routes`). A lookup gets a split plan when its route is
`split` or `split_original` (a plan of two or more searches). The frames were written once, before any run, and
are not tuned on the figure.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
from collections import Counter
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from planbake.cli import app
from schemas.cache import PlanCache
from tasks.plan.class_planner import lookup as served_lookup

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SET = Path(os.environ.get("PLANBAKE_BENCHMARKS", ROOT.parent / "shared" / "benchmarks")) / "hotpotqa_100"
CONFIG = ROOT / "data" / "configs" / "hotpotqa.yaml"
START = datetime(2026, 11, 2, 8, 0)
USERS = 3
# Single-fact frames a person asks of a person, a work, a place or an organisation. {e} is the title.
FRAMES = (
    "What is {e} known for?",
    "Tell me about {e}.",
    "When was {e} founded?",
    "Where is {e} located?",
    "Who created {e}?",
    "What year did {e} come out?",
    "what is the origin of {e}",
    "Who is {e}?",
    "{e} history",
    "Where was {e} born?",
)
SPLIT = ("split", "split_original")


def titles(corpus: Path) -> list[str]:
    """Each paragraph's title without its bracketed sense, once, in the corpus's order."""
    seen: dict[str, None] = {}
    for line in corpus.read_text(encoding="utf-8").splitlines():
        if line.strip():
            title = json.loads(line)["metadata"]["title"]
            seen.setdefault(re.sub(r"\s*\([^)]*\)\s*$", "", title).strip(), None)
    return [t for t in seen if t]


def mined_half(title: str) -> bool:
    return int(hashlib.sha256(title.encode("utf-8")).hexdigest(), 16) % 2 == 0


def write_log(mined: list[str], folder: Path) -> Path:
    """Each frame asked of each mined title, by `USERS` users, hours apart (no row follows another)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows, n = [], 0
    for title in mined:
        for frame in FRAMES:
            for user in range(USERS):
                ts = START + timedelta(minutes=11 * n)
                rows.append(json.dumps({"ts": ts.isoformat() + "Z", "user": f"u{(n + user) % 211}",
                                        "query": frame.format(e=title)}))
                n += 1
    (folder / "queries.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def run(corpus: Path, config: Path, entities: int, work: Path) -> dict[str, Any]:
    names = titles(corpus)
    mined = [t for t in names if mined_half(t)][:entities]
    held = [t for t in names if not mined_half(t)][:entities]
    logs = write_log(mined, work / "logs")
    end = START + timedelta(minutes=11 * len(mined) * len(FRAMES) * USERS)
    out = work / "out"
    print(f"nightly: {len(mined)} titles x {len(FRAMES)} frames x {USERS} users ...", file=sys.stderr, flush=True)
    res = CliRunner().invoke(app, ["nightly", "--corpus", str(corpus), "--logs", str(logs), "--config", str(config),
                                   "--out", str(out), "--since", str(START.date()), "--until", str(end.date()),
                                   "--json"])
    if res.exit_code != 0:
        raise SystemExit(f"planbake nightly failed ({res.exit_code}): {res.output[-3000:]}")
    cache = PlanCache.open(out)
    report: dict[str, Any] = {"titles": len(names), "mined_titles": len(mined), "held_out_titles": len(held),
                              "frames": len(FRAMES), "log_rows": len(mined) * len(FRAMES) * USERS}
    examples: list[dict[str, Any]] = []
    for label, group in (("mined", mined), ("held_out", held)):
        routes: Counter[str] = Counter()
        hits = 0
        for title in group:
            for frame in FRAMES:
                question = frame.format(e=title)
                r = served_lookup(cache, question, now=date(2026, 12, 1))  # a miss planned by its class
                steps = r.plan["steps"] if r.plan is not None else []
                split = r.route in SPLIT and len(steps) > 1
                routes["split" if split else r.route] += 1
                hits += r.hit
                if split and len(examples) < 12:
                    examples.append({"question": question, "skeleton": r.skeleton,
                                     "steps": [s["query"] for s in steps]})
        total = sum(routes.values())
        report[label] = {"lookups": total, "hits": hits, "routes": dict(routes),
                         "split_rate": round(routes["split"] / total, 4) if total else None}
    lookups = report["mined"]["lookups"] + report["held_out"]["lookups"]
    splits = report["mined"]["routes"].get("split", 0) + report["held_out"]["routes"].get("split", 0)
    report["split_rate"] = round(splits / lookups, 4)
    report["split_examples"] = examples
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_single_fact", description=__doc__.splitlines()[0])
    ap.add_argument("--set", type=Path, default=DEFAULT_SET, help="the hotpotqa_100 folder (corpus.jsonl)")
    ap.add_argument("--config", type=Path, default=CONFIG)
    ap.add_argument("--entities", type=int, default=150, help="titles of each half (default 150)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    corpus = args.set / "corpus.jsonl"
    if not corpus.exists():
        raise SystemExit(f"{corpus}: not found; pass --set with the hotpotqa_100 folder")
    with tempfile.TemporaryDirectory(prefix="bench_single_fact_") as tmp:
        report = run(corpus, args.config, args.entities, Path(tmp))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['log_rows']:,} log rows ({report['mined_titles']} titles x {report['frames']} frames x {USERS} "
          f"users); lookups of every frame with {report['mined_titles']} mined and {report['held_out_titles']} "
          "held-out titles")
    for label in ("mined", "held_out"):
        r = report[label]
        print(f"{label:<10} lookups {r['lookups']:>5}  hits {r['hits']:>5}  split plans {r['split_rate']:.2%}  "
              f"routes {r['routes']}")
    print(f"split plans overall: {report['split_rate']:.2%} (goal: under 2%)")
    for e in report["split_examples"]:
        print(f"  {e['question']!r} -> {e['steps']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
