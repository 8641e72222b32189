"""The mining stage as one callable, on the rows ingest read: extract -> merge -> shapes -> classify -> write."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np

from schemas.config import Config
from schemas.extract import Lexicon
from schemas.files import NAMES, PLAIN_WORDS
from schemas.pii import Scrubber
from schemas.publication import memo_folder
from tasks.embed import Embedder, resolve_dtype
from tasks.index.store import Index
from tasks.ingest.stage import Ingested
from tasks.mine import followups
from tasks.mine.bridges import find_bridges, mark_bridges
from tasks.mine.extracted import ExtractionMemo
from tasks.mine.memory import MergeMemory
from tasks.mine.mining import (
    MineResult,
    build_shapes,
    classify_shapes,
    extract_distinct,
    keep_extraction,
    merge_skeletons,
    sort_questions,
    summarize,
    write_questions,
    write_shapes,
)
from tasks.mine.slot_types import type_slots
from tasks.mine.vectors import VectorStore
from tasks.scale import model_ref


def mine(ing: Ingested, lexicon: Lexicon, scrub: Scrubber, plain: list[str], config: Config, index: Index,
         staging: Path, *, quiet: bool = False, last_run: Path | None = None) -> MineResult:
    """Mine the rows ingest read (`ing`, see `tasks.ingest.tables`) into `staging` (shapes.parquet,
    questions.parquet, quarantine.parquet, the merge's memory, merge.npz, the corpus's plain words the
    scrubber read, plain_words.json, and its titles, names.json). `lexicon`, `scrub` and `plain`: what ingest
    scrubbed the rows with. `last_run`: the live publication's folder, whose merge the shapes keep (None: fresh
    shapes)."""
    # Last night's skeleton vectors load beside the extraction (DuckDB and the scrubber release the GIL).
    loader = ThreadPoolExecutor(1)
    embedder = skeleton_embedder(index, config)
    folder = memo_folder(index.uri)
    loading = loader.submit(VectorStore, folder, embedder, model_ref(config.model_path, embedder.dtype))
    loader.shutdown(wait=False)
    memo = ExtractionMemo(folder, lexicon, scrub)
    extract_distinct(ing, lexicon, scrub, quiet=quiet, workers=config.mining.workers, memo=memo)
    # DuckDB work on a second cursor uses the other core while the phases beside it run in Python: sorting
    # every question for questions.parquet, then writing it (its rows need shape ids and follow-ups, not types);
    # the memos for the next run are kept on a third, beside the write.
    with (closing(ing.con.cursor()) as cursor, closing(ing.con.cursor()) as replay_cursor,
          closing(ing.con.cursor()) as memo_cursor, ThreadPoolExecutor(1) as background,
          ThreadPoolExecutor(1) as beside, ThreadPoolExecutor(1) as keeper):
        sorting = background.submit(sort_questions, cursor)
        rules = followups.learn(ing, config)
        # The follow-ups are replayed beside the merge, which mostly waits for the model (it computes without
        # the GIL the replay holds); only their shape ids wait for the shapes.
        replaying = beside.submit(followups.replay, replay_cursor, config, rules)
        vectors = loading.result()
        memory = MergeMemory(last_run, legacy=vectors.path)
        rep_of = merge_skeletons(ing, config, vectors, quiet=quiet, memory=memory)
        shapes = build_shapes(ing, config, rep_of)
        type_slots(ing, shapes, index.name_types if config.entity_slots else dict)
        followups.drop_followup_shapes(shapes, rules)
        # for the next run, off the write's path
        keeping = keeper.submit(keep_extraction, memo_cursor, memo, shapes, ing)
        memory.name_shapes(s["skeleton"] for s in shapes if s["recurring"])
        # The examples are embedded beside the linking, for the same reason (classifying sets a shape's type,
        # reason and example; the linking reads its id and name).
        classifying = beside.submit(
            classify_shapes, shapes, config, lambda vectors: _best_scores(index, vectors),
            encode=lambda texts: vectors.encode(texts, label="embedding examples", quiet=quiet),
            known=memory.was_example)
        linked = followups.link(ing, config, rules, followups.shape_lookup(shapes), replaying.result())
        writing = background.submit(write_questions, cursor, ing, shapes, staging)  # once the sort is done
        classifying.result()
        mark_bridges(shapes, find_bridges(shapes, _bridge_rows(index, config), lexicon, config, set(plain)))
        saving = beside.submit(vectors.save)  # the store's write beside the shapes'
        write_shapes(shapes, staging)
        memory.remember_examples(s["example"] for s in shapes if s["recurring"])
        memory.save(staging)
        saving.result()
        sorting.result()
        keeping.result()
        writing.result()
    # lookup scrubs with the words the shapes were mined with (a `plan` run alone keeps this night's), and reads
    # names with the titles they were mined with
    (staging / PLAIN_WORDS.name).write_text(json.dumps(plain), encoding="utf-8")
    (staging / NAMES.name).write_text(json.dumps(index.names()), encoding="utf-8")
    result = summarize(ing, shapes)
    result.followups = linked
    ing.con.close()
    return result


def skeleton_embedder(index: Index, config: Config) -> Embedder:
    """What embeds skeletons and examples: the index's model, in `mining.embed_dtype`."""
    dtype = resolve_dtype(config.mining.embed_dtype)
    if dtype == index.embedder.dtype:
        return index.embedder
    return Embedder(config.model_path, config.embed_batch_size, dtype)


def _best_scores(index: Index, vectors: np.ndarray) -> list[float | None]:
    return index.best_scores(vectors)


def _bridge_rows(index: Index, config: Config) -> Iterator[dict[str, Any]]:
    """The chunks' text and their category and year facets, read when a shape asks for them (`find_bridges`)."""
    names = ["text", *(f.name for f in config.facets if f.kind in ("category", "year"))]
    return (row for batch in index.table.to_lance().to_batches(columns=names) for row in batch.to_pylist())
