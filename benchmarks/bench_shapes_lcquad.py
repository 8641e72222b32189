"""Shape mining against known query templates: LC-QuAD 1.0 test questions fed as a query log.

    .venv/bin/python -m benchmarks.bench_shapes_lcquad [--set DIR] [--users 3] [--merge-similarity X ...] [--json]

Each question of `lcquad_test_1000` (1,000 questions written from 33 SPARQL templates; see its README) is asked
by `--users` users, days apart, so no row follows another as a follow-up. The corpus is the questions themselves
(a stand-in: it gives the index the plain words a knowledge-base corpus would). `planbake index` and `planbake
mine` run twice on the same log, with `entity_slots` off and on (and once more per `--merge-similarity` value, with
`entity_slots` on and that skeleton merge threshold); each question's mined shape id is compared
with its template id: the adjusted Rand index (ARI), homogeneity (a shape holds one template) and completeness
(a template is one shape), computed with scikit-learn's `sklearn.metrics` (the usual implementations).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml
from sklearn.metrics import adjusted_rand_score, homogeneity_completeness_v_measure
from typer.testing import CliRunner

from planbake.cli import app
from schemas.files import QUESTIONS, SHAPES
from schemas.publication import current_run

ROOT = Path(__file__).resolve().parent.parent
# the shared labeled sets (read, never copied): $PLANBAKE_BENCHMARKS, else ../shared/benchmarks
DEFAULT_SET = Path(os.environ.get("PLANBAKE_BENCHMARKS", ROOT.parent / "shared" / "benchmarks")) / "lcquad_test_1000"
START = datetime(2026, 11, 1, 8, 0)


def write_inputs(rows: list[dict[str, Any]], users: int, work: Path) -> tuple[Path, dict[datetime, str]]:
    """The corpus (one document per question) and the log; each log row's time -> its question's id."""
    corpus = work / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"q{r['id']}", "text": r["question"], "metadata": {}}) + "\n"
                              for r in rows), encoding="utf-8")
    logs = work / "logs"
    logs.mkdir()
    asked: dict[datetime, str] = {}
    lines = []
    for n in range(users * len(rows)):
        row = rows[n % len(rows)]
        ts = START + timedelta(minutes=7 * n)  # a user's rows are hours apart: none follows another
        asked[ts] = row["id"]
        lines.append(json.dumps({"ts": ts.isoformat() + "Z", "user": f"u{n % 97}", "query": row["question"]}))
    (logs / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return corpus, asked


def mine(corpus: Path, logs: Path, asked: dict[datetime, str], entity_slots: bool, work: Path,
         users: int, merge_similarity: float | None = None) -> dict[str, str]:
    """question id -> the id of the shape mining put it in (`merge_similarity`: the config's, else the default)."""
    config = work / f"lcquad-{entity_slots}-{merge_similarity}.yaml"
    mining: dict[str, Any] = {"min_count": users, "min_users": min(users, 3)}
    if merge_similarity is not None:
        mining["merge_similarity"] = merge_similarity
    config.write_text(yaml.safe_dump({
        "facets": [{"name": "year", "kind": "year"}], "entity_slots": entity_slots,
        "mining": mining, "chunking": {"size": 1000, "overlap": 0}}), encoding="utf-8")
    out = work / f"out-{entity_slots}-{merge_similarity}"
    runner = CliRunner()
    for args in (["index", "--corpus", str(corpus)],
                 ["mine", "--logs", str(logs), "--since", str(min(asked).date()), "--until", str(max(asked).date())]):
        res = runner.invoke(app, [*args, "--config", str(config), "--out", str(out), "--json"])
        if res.exit_code != 0:
            raise SystemExit(f"planbake {args[0]} failed ({res.exit_code}): {res.output[-2000:]}")
    run = current_run(out)
    shape_of: dict[str, str] = {}
    for row in pq.read_table(run / QUESTIONS.name, columns=["ts", "shape_id"]).to_pylist():
        question = asked[row["ts"]]
        # a question of no recurring shape is a shape of its own
        shape_of.setdefault(question, row["shape_id"] or f"alone:{question}")
    shape_of["__recurring__"] = str(pq.read_metadata(run / SHAPES.name).num_rows)  # only recurring ones publish
    return shape_of


def score(template_of: dict[str, int], shape_of: dict[str, str]) -> dict[str, Any]:
    ids = [q for q in template_of if q in shape_of]
    truth, mined = [template_of[q] for q in ids], [shape_of[q] for q in ids]
    h, c, _ = homogeneity_completeness_v_measure(truth, mined)
    sizes = Counter(mined)
    return {"questions": len(ids), "shapes": len(sizes), "recurring_shapes": int(shape_of["__recurring__"]),
            "questions_in_shapes_of_2_or_more": sum(n for n in sizes.values() if n > 1),
            "ari": round(adjusted_rand_score(truth, mined), 4), "homogeneity": round(h, 4),
            "completeness": round(c, 4)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_shapes_lcquad", description=__doc__.splitlines()[0])
    ap.add_argument("--set", type=Path, default=DEFAULT_SET, help="folder holding questions.jsonl with template_id")
    ap.add_argument("--users", type=int, default=3, help="users asking each question (default 3)")
    ap.add_argument("--merge-similarity", type=float, nargs="+", metavar="X",
                    help="also mine with entity slots at each of these `mining.merge_similarity` values")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    path = args.set / "questions.jsonl"
    if not path.exists():
        raise SystemExit(f"{path}: not found; pass --set with the lcquad_test_1000 folder")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    template_of = {r["id"]: r["template_id"] for r in rows}
    report: dict[str, Any] = {"set": str(args.set), "templates": len(set(template_of.values())), "users": args.users}
    with tempfile.TemporaryDirectory(prefix="bench_lcquad_") as tmp:
        work = Path(tmp)
        corpus, asked = write_inputs(rows, args.users, work)
        for entity_slots in (False, True):
            print(f"mining with entity_slots={entity_slots} ...", file=sys.stderr, flush=True)
            report[f"entity_slots_{str(entity_slots).lower()}"] = score(
                template_of, mine(corpus, work / "logs", asked, entity_slots, work, args.users))
        for threshold in args.merge_similarity or ():
            print(f"mining with entity_slots=True, merge_similarity={threshold} ...", file=sys.stderr, flush=True)
            report[f"merge_similarity_{threshold}"] = score(
                template_of, mine(corpus, work / "logs", asked, True, work, args.users, threshold))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{len(rows)} questions, {report['templates']} templates, each asked by {args.users} users")
        print(f"{'mined with':<26}{'shapes':>8}{'recurring':>11}{'in shared':>11}{'ARI':>8}"
              f"{'homog.':>8}{'compl.':>8}")
        for key in [k for k in report if k.startswith(("entity_slots_", "merge_similarity_"))]:
            r = report[key]
            print(f"{key:<26}{r['shapes']:>8}{r['recurring_shapes']:>11}"
                  f"{r['questions_in_shapes_of_2_or_more']:>11}{r['ari']:>8.3f}{r['homogeneity']:>8.3f}"
                  f"{r['completeness']:>8.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
