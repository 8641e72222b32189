"""Which labeled parts come from a source the question never names, and what an eval made of those questions.

    .venv/bin/python -m benchmarks.label_sources --config data/configs/multihop_rag.yaml \\
        --corpus ../shared/benchmarks/multihop_rag_500/corpus.jsonl \\
        --questions ../shared/benchmarks/multihop_rag_500/questions.jsonl [--eval EVAL.json]

A plan searches the values a question names, so a part whose every acceptable chunk comes from a value of the
facet (`--facet`, default the config's first category facet) that the question does not name can only reach the
context by an unfiltered step. This counts such questions per type (null questions have no parts and are left
out) and, given the JSON of `planbake eval --json`, how many of them each system covered whole, and every system's
all-parts rate with and without them.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from schemas.config import load_config
from tasks.evaluate import read_labeled
from tasks.index.stage import read_checked


def unnamed_part_questions(config_path: Path, corpus: Path, questions: Path, facet: str | None
                           ) -> tuple[str, dict[str, str], set[str]]:
    """The facet, each labeled question's type (non-null ones), and the ids of those with an unnamed-source part."""
    config = load_config(config_path)
    facet = facet or next(f.name for f in config.facets if f.kind == "category")
    key = config.facet(facet).metadata_key
    docs, lexicon = read_checked(corpus, config)
    value_of = {d.id: str(d.metadata.get(key)) for d in docs}
    types, unnamed = {}, set()
    for q in read_labeled(questions):
        if not q.parts:
            continue
        types[q.id] = q.shape or "unknown"
        named = {c.value for c in lexicon.extract(q.question) if c.facet == facet}
        if any(not {value_of[chunk.split("#")[0]] for chunk in part} & named for part in q.parts):
            unnamed.add(q.id)
    return facet, types, unnamed


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--facet", help="a category facet (default: the config's first)")
    ap.add_argument("--eval", type=Path, help="the JSON `planbake eval --json` printed for these questions")
    args = ap.parse_args(argv)
    facet, types, unnamed = unnamed_part_questions(args.config, args.corpus, args.questions, args.facet)
    by_type = Counter(types[i] for i in unnamed)
    print(f"{len(unnamed)} of {len(types)} questions with parts have a part from a {facet} they do not name: "
          + ", ".join(f"{t} {n}" for t, n in by_type.most_common()))
    if args.eval is None:
        return
    detail: list[dict[str, Any]] = json.loads(args.eval.read_text(encoding="utf-8"))["questions"]
    rows = [q for q in detail if q["id"] in types]
    if not rows:
        raise SystemExit(f"{args.eval}: no question of {args.questions} in it; pass the eval of these questions")
    systems = [s for s in ("one-search", "rules", "routed", "routed+original") if s in rows[0]]
    print(f"{'system':<16} {'all parts':>10} {'of those':>9} {'without those':>14}")
    for s in systems:
        whole = {q["id"] for q in rows if q[s]["coverage"] == 1.0}
        rest = len(types) - len(unnamed)
        print(f"{s:<16} {len(whole):>4}/{len(types)} {len(whole & unnamed):>5}/{len(unnamed)} "
              f"{len(whole - unnamed):>6}/{rest} {len(whole - unnamed) / max(rest, 1):.3f}")


if __name__ == "__main__":
    main()
