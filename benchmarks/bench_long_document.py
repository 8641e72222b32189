"""Benchmark indexing one long document: chunking against enrichment (facets, dates), at doubling sizes.

    .venv/bin/python -m benchmarks.bench_long_document [--sizes 0.35,0.7,1.4,2.8] [--json]

The document is the demo corpus's texts as Markdown sections, repeated up to each size (in MB), with no office
in its metadata, so enrichment reads the office from the text. Chunking is linear; enrichment must stay so: its
time per MB, and its ratio to chunking measured in the same run, should not grow with the size. A second table
times constraint extraction alone on a text dense with interleaved matches, whose time per MB must not grow either.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

from schemas.config import load_config
from schemas.extract import Lexicon
from tasks.index.corpus import Document, chunk_document, read_corpus
from tasks.index.enrich import enrich

CONFIG = Path("data/configs/demo.yaml")
CORPUS = Path("data/demo/corpus.jsonl")


def long_text(mb: float) -> str:
    sections = [f"## {d.id}\n\n{d.text}" for d in read_corpus(CORPUS)]
    parts: list[str] = []
    size = 0
    while size < mb * 1e6:
        section = sections[len(parts) % len(sections)]
        parts.append(section)
        size += len(section.encode()) + 2
    return "\n\n".join(parts)


def measure(mb: float) -> dict[str, Any]:
    config = load_config(CONFIG)
    lexicon = Lexicon(config)
    doc = Document("handbook", long_text(mb), {}, "handbook.md:1")
    t0 = time.perf_counter()
    chunks = chunk_document(doc, config.chunking)
    t1 = time.perf_counter()
    enriched = enrich(chunks, [doc], config, lexicon, date(2026, 11, 30))
    t2 = time.perf_counter()
    assert len(enriched) == len(chunks)
    real_mb = len(doc.text.encode()) / 1e6
    return {"mb": round(real_mb, 2), "chunks": len(chunks), "chunk_s": round(t1 - t0, 3),
            "enrich_s": round(t2 - t1, 3), "enrich_s_per_mb": round((t2 - t1) / real_mb, 3),
            "enrich_to_chunk": round((t2 - t1) / max(t1 - t0, 1e-9), 2)}


DENSE = "the berlin office since 2026. "  # two constraints in every 30 characters, a year between offices


def measure_dense(mb: float) -> dict[str, Any]:
    """`Lexicon.extract` on a text dense with matches of two passes that interleave (offices, then years)."""
    lexicon = Lexicon(load_config(CONFIG))
    text = DENSE * int(mb * 1e6 / len(DENSE))
    t0 = time.perf_counter()
    found = lexicon.extract(text)
    dt = time.perf_counter() - t0
    return {"mb": round(len(text) / 1e6, 2), "constraints": len(found), "extract_s": round(dt, 3),
            "extract_s_per_mb": round(dt / (len(text) / 1e6), 3)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="0.35,0.7,1.4,2.8", help="document sizes in MB, comma-separated")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    rows = []
    for mb in (float(s) for s in args.sizes.split(",")):
        rows.append(measure(mb))
        print(f"{rows[-1]['mb']:.2f} MB: {rows[-1]['chunks']} chunks, chunk {rows[-1]['chunk_s']:.2f}s, "
              f"enrich {rows[-1]['enrich_s']:.2f}s", file=sys.stderr, flush=True)
    dense = [measure_dense(float(s)) for s in args.sizes.split(",")]
    if args.json:
        print(json.dumps({"document": rows, "dense": dense}, indent=2))
        return
    print(f"{'MB':>6} {'chunks':>7} {'chunk s':>8} {'enrich s':>9} {'enrich s/MB':>12} {'enrich/chunk':>13}")
    for r in rows:
        print(f"{r['mb']:>6.2f} {r['chunks']:>7} {r['chunk_s']:>8.3f} {r['enrich_s']:>9.3f} "
              f"{r['enrich_s_per_mb']:>12.3f} {r['enrich_to_chunk']:>13.2f}")
    print(f"\n{'MB':>6} {'constraints':>12} {'extract s':>10} {'extract s/MB':>13}   (dense text: {DENSE!r})")
    for r in dense:
        print(f"{r['mb']:>6.2f} {r['constraints']:>12} {r['extract_s']:>10.3f} {r['extract_s_per_mb']:>13.3f}")


if __name__ == "__main__":
    main()
