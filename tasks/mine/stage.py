"""The mining stage as one callable: ingest -> scrub -> extract -> merge -> shapes -> classify -> write."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from datetime import date, datetime
from pathlib import Path

import numpy as np
from prefect import task
from prefect.cache_policies import NO_CACHE

from schemas.config import Config
from schemas.extract import Lexicon
from schemas.files import PLAIN_WORDS
from tasks.embed import Embedder, resolve_dtype
from tasks.index.store import Index
from tasks.ingest.lines import LineMemo
from tasks.ingest.stage import ingest
from tasks.mine import followups
from tasks.mine.extracted import ExtractionMemo, fingerprint
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
from tasks.mine.vectors import VectorStore
from tasks.scale import model_ref


def mine(logs: str | Path, config: Config, index: Index, staging: Path, *, since: date | None = None,
         until: date | None = None, now: datetime | None = None, quiet: bool = False,
         last_run: Path | None = None) -> tuple[MineResult, Lexicon]:
    """Mine the logs into `staging` (shapes.parquet, questions.parquet, quarantine.parquet, the merge's
    memory, merge.npz, and the corpus's plain words the scrubber read, plain_words.json): the window from `since`
    to `until`, or, with neither, the last `mining.window_days` logged days. `last_run`: the live publication's
    folder, whose merge the shapes keep (None: fresh shapes)."""
    lexicon = Lexicon(config, index.facet_values())
    lexicon.check_aliases()
    plain = index.plain_words()
    scrub = lexicon.scrubber(plain)
    # Last night's skeleton vectors load beside the ingest (DuckDB there releases the GIL).
    loader = ThreadPoolExecutor(1)
    embedder = skeleton_embedder(index, config)
    loading = loader.submit(VectorStore, _vector_dir(index), embedder, model_ref(config.model_path, embedder.dtype))
    loader.shutdown(wait=False)
    ing = ingest(logs, since=since, until=until, max_query_chars=config.mining.max_query_chars, now=now,
                 scrub=scrub, defer_quarantine=True,  # the quarantine's line numbers are found meanwhile
                 last_days=config.mining.window_days,
                 lines=LineMemo(_vector_dir(index), fingerprint(lexicon, scrub), config.mining.max_query_chars))
    memo = ExtractionMemo(_vector_dir(index), lexicon, scrub)
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
        saving = beside.submit(vectors.save)  # the store's write beside the shapes'
        write_shapes(shapes, staging)
        memory.remember_examples(s["example"] for s in shapes if s["recurring"])
        memory.save(staging)
        saving.result()
        sorting.result()
        keeping.result()
        writing.result()
    # lookup scrubs with the words the shapes were mined with (a `plan` run alone keeps this night's)
    (staging / PLAIN_WORDS.name).write_text(json.dumps(plain), encoding="utf-8")
    result = summarize(ing, shapes)
    result.followups = linked
    ing.con.close()
    return result, lexicon


def skeleton_embedder(index: Index, config: Config) -> Embedder:
    """What embeds skeletons and examples: the index's model, in `mining.embed_dtype`."""
    dtype = resolve_dtype(config.mining.embed_dtype)
    if dtype == index.embedder.dtype:
        return index.embedder
    return Embedder(config.model_path, config.embed_batch_size, dtype)


def _vector_dir(index: Index) -> Path | None:
    """Skeleton vectors and the extraction memo live beside a local index (`<out>/vectors`); a remote index
    keeps none."""
    return None if "://" in index.uri else Path(index.uri).parent / "vectors"


def _best_scores(index: Index, vectors: np.ndarray) -> list[float | None]:
    return index.best_scores(vectors)


# Not cached: it writes into the run's staging directory, and the log files are read by path.
mine_task = task(name="mine-logs", cache_policy=NO_CACHE)(mine)
