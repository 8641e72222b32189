"""The LanceDB chunk table: incremental writes (merge on chunk id and content hash), indexes, tags, search."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, Literal

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS, Bitmap, BTree

from schemas.arrow import chunk_schema, embedded_fields, facet_columns
from schemas.config import Config
from schemas.digest import fingerprint, text_digest
from schemas.entity import TITLE
from schemas.entity_types import title_types
from schemas.errors import FacetColumnsMissing, IndexUnreachable, InputError, NoPublication
from schemas.scope import override_order, where
from schemas.sql import sql_string
from schemas.text import plain_words
from tasks.embed import Embedder
from tasks.index.corpus import Chunk
from tasks.index.enrich import EnrichedChunk
from tasks.index.ordinary import dropped_values, without

BACKGROUND_CHUNKS = 2048  # chunks a query's background scores are read from (`Index.background`)


@dataclass
class IndexResult:
    chunks: int
    embedded: int
    updated: int
    deleted: int
    version: int
    inserted: int = 0
    now_current: int = 0  # chunks kept that came into force (a default search can newly find them)


def search_text(chunk: Chunk, fields: Sequence[str]) -> str:
    """What the full-text index reads for a chunk: the values of its document's metadata `fields` (a title),
    then its text."""
    head = [str(chunk.metadata[f]) for f in fields if chunk.metadata.get(f) not in (None, "")]
    return " ".join([*head, chunk.text])


def embed_text(text: str, metadata: dict[str, Any], fields: Sequence[str]) -> str:
    """What a chunk's vector embeds: the values of its document's metadata `fields` (`chunking.embed_fields`: a
    title), then its text, as "title: text"; the text alone without such fields."""
    head = [str(metadata[f]) for f in fields if metadata.get(f) not in (None, "")]
    return ": ".join([*head, text])


def row_hash(e: EnrichedChunk, fields: Sequence[str] = (), embedded: Sequence[str] = ()) -> str:
    body: list[Any] = [e.chunk.content_hash, e.facets, e.effective_from, e.policy, e.supersedes, e.superseded_by,
            e.is_current]
    if fields:  # a change of `chunking.search_fields` rewrites the rows (their text is not embedded again)
        body.append(list(fields))
    if embedded:  # and one of `chunking.embed_fields` changes their vectors: the evidence they gave is stale
        body.append({"embed": list(embedded)})
    return fingerprint(body, 32)


def _row_hash(e: EnrichedChunk, config: Config) -> str:
    return row_hash(e, config.chunking.search_fields, config.chunking.embed_fields)


def _rows(chunks: Sequence[EnrichedChunk], vectors: dict[str, np.ndarray], config: Config) -> list[dict[str, Any]]:
    rows = []
    for e in chunks:
        c = e.chunk
        row: dict[str, Any] = {
            "id": c.id, "doc_id": c.doc_id, "position": c.position, "text": c.text,
            "content_hash": c.content_hash, "row_hash": _row_hash(e, config),
            "effective_from": e.effective_from, "policy": e.policy, "supersedes": e.supersedes,
            "superseded_by": e.superseded_by, "is_current": e.is_current,
            "metadata": json.dumps(c.metadata, sort_keys=True, default=str),
            "search_text": search_text(c, config.chunking.search_fields),
            "vector": vectors[c.id].tolist(),
        }
        row.update({f.name: e.facets.get(f.name) for f in config.facets})
        rows.append(row)
    return rows




def open_table(uri: str, name: str) -> Any | None:
    try:
        db = lancedb.connect(uri)
        tables = db.list_tables().tables
    except (OSError, RuntimeError, ValueError) as exc:  # LanceDB: a store it cannot reach (RuntimeError), a URI it
        if "://" not in uri:  # cannot read (ValueError: "Invalid input, No object store provider found for scheme")
            raise
        detail = str(exc).split(", /")[0]  # without the Rust source location
        raise IndexUnreachable(f"{uri}: the index store did not answer ({detail}); check index_uri in the config "
                               "and the store's credentials") from None
    return db.open_table(name) if name in tables else None


def text_hash(text: str) -> str:
    """What a chunk's vector depends on: the text it embeds (`embed_text`: its own text, after the values of
    `chunking.embed_fields`); a metadata edit elsewhere re-writes the row, not the vector."""
    return text_digest(text, 32)


def existing_state(table: Any | None) -> dict[str, tuple[str, str, np.ndarray, bool]]:
    """id -> (hash of the text its vector embeds, row hash, vector, is_current) of the table's latest version."""
    if table is None:
        return {}
    embedded = embedded_fields(table.schema)  # what the stored vectors embed in front of the text
    t = table.to_arrow().select(["id", "text", "row_hash", "vector", "is_current", *(["metadata"] if embedded else [])])
    vecs = t.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    dim = t.schema.field("vector").type.list_size
    vecs = vecs.reshape(-1, dim) if len(t) else np.zeros((0, dim), dtype=np.float32)
    metas = t.column("metadata").to_pylist() if embedded else [None] * len(t)
    return {i: (text_hash(embed_text(text, json.loads(meta or "{}"), embedded)), rh, vecs[n], bool(cur))
            for n, (i, text, meta, rh, cur) in enumerate(zip(
                t.column("id").to_pylist(), t.column("text").to_pylist(), metas, t.column("row_hash").to_pylist(),
                t.column("is_current").to_pylist(), strict=True))}


SAME_MODEL_COSINE = 0.999  # a chunk embedded again by the model that stored it gives its vector (within batching)


def _same_model(old: dict[str, tuple[str, str, np.ndarray, bool]], texts: dict[str, str],
                embedder: Embedder) -> bool:
    """Whether the stored vectors come from the embedder's model: the first unchanged chunk (`texts`: id -> what
    its vector embeds), embedded again, gives its stored vector. A changed `model_path` (or model version) would
    otherwise leave the old model's vectors beside the new one's."""
    probe = next((i for i in sorted(texts) if i in old and old[i][0] == text_hash(texts[i])), None)
    if probe is None:
        return True
    return float(embedder.encode_one(texts[probe]) @ old[probe][2]) >= SAME_MODEL_COSINE


def _check_dimension(table: Any, dim: int, uri: str, name: str) -> None:
    """A model of another dimension cannot share the table (its vectors would not compare with the stored ones)."""
    stored = table.schema.field("vector").type.list_size
    if stored != dim:
        raise InputError(f"{uri}: table '{name}' holds vectors of {stored} dimensions and the model gives {dim}; "
                         "index into a new --out (or index_uri) for this model")


def _columns(schema: pa.Schema) -> list[tuple[str, pa.DataType]]:
    """Names and types in order: a facet added, removed, moved or of another kind changes them."""
    return [(f.name, f.type) for f in schema]


def write_index(chunks: Sequence[EnrichedChunk], config: Config, uri: str, embedder: Embedder,
                quiet: bool = False) -> IndexResult:
    """Merge the enriched chunks into the table: embed only new or changed text, delete what is gone. A config
    whose facet columns differ from the table's (a facet added, removed or of another kind) writes every row
    anew under its columns, keeping the vectors; older versions keep their columns for their publications."""
    table = open_table(uri, config.table)  # first: a remote store that does not answer is named as bad input
    db = lancedb.connect(uri)
    schema = chunk_schema(config, embedder.dim)
    if table is not None:
        _check_dimension(table, embedder.dim, uri, config.table)
    old = existing_state(table)
    texts = {e.chunk.id: embed_text(e.chunk.text, e.chunk.metadata, config.chunking.embed_fields) for e in chunks}
    if not _same_model(old, texts, embedder):
        old = {i: ("", "", vec, cur) for i, (_, _, vec, cur) in old.items()}  # all embedded and written again
    new_ids = {e.chunk.id for e in chunks}
    to_embed = [e for e in chunks if e.chunk.id not in old or old[e.chunk.id][0] != text_hash(texts[e.chunk.id])]
    embed_ids = {e.chunk.id for e in to_embed}
    vectors = {i: old[i][2] for i in new_ids - embed_ids}
    fresh = embedder.encode([texts[e.chunk.id] for e in to_embed], label="embedding chunks", quiet=quiet)
    vectors.update({e.chunk.id: fresh[n] for n, e in enumerate(to_embed)})
    # other columns, or other embedded fields (the vector field's metadata names them): every row written anew
    reshaped = table is not None and (_columns(table.schema) != _columns(schema)
                                      or embedded_fields(table.schema) != config.chunking.embed_fields)
    changed = [e for e in chunks if reshaped or e.chunk.id not in old or old[e.chunk.id][1] != _row_hash(e, config)]
    gone = sorted(set(old) - new_ids)
    if table is None:
        table = db.create_table(config.table, data=pa.Table.from_pylist(_rows(chunks, vectors, config), schema))
        _create_indexes(table, config)
    elif reshaped:
        table.add(pa.Table.from_pylist(_rows(chunks, vectors, config), schema), mode="overwrite")  # tags keep theirs
        _create_indexes(table, config)
    else:
        if changed:
            data = pa.Table.from_pylist(_rows(changed, vectors, config), schema)
            table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(data)
        if gone:
            table.delete("id IN (" + ", ".join(sql_string(i) for i in gone) + ")")
        if changed or gone:
            _create_indexes(table, config)
    return IndexResult(len(chunks), len(to_embed), sum(e.chunk.id in old for e in changed), len(gone),
                       int(table.version), sum(e.chunk.id not in old for e in changed),
                       sum(e.is_current and e.chunk.id in old and not old[e.chunk.id][3] for e in changed))


def reset_head(uri: str, name: str, version: int) -> bool:
    """Make the published `version` the table's head again when a run that was never published (rejected by
    the gate, failed, killed) wrote after it, so the next run's diff is against what is published. True when
    it did. (After a rollback the head is a restored copy of `version` under a new number: restored once more.)"""
    table = open_table(uri, name)
    if table is None or int(table.version) == version:
        return False
    restore(table, version, uri, name)
    return True


def restore(table: Any, version: int | str, uri: str, name: str, *, checkout: bool = False) -> None:
    """`table.restore(version)` (`checkout`: `table.checkout(version)`); a version a publication names that the
    table no longer holds (its files deleted by hand, or by another tool's cleanup) is bad input, named."""
    try:
        if checkout:
            table.checkout(version)
        else:
            table.restore(version)
    except ValueError as exc:  # LanceDB: "Version 7 no longer exists. Was it cleaned up?"
        raise InputError(f"{uri}: table '{name}' no longer holds version {version} ({exc}); roll back to a "
                         "publication whose version it holds ('planbake rollback --to RUN_ID'), or publish into a "
                         "new --out") from None


def _create_indexes(table: Any, config: Config) -> None:
    for f in config.facets:
        table.create_index(f.name, config=BTree() if f.kind == "year" else Bitmap(), replace=True)
    table.create_index("is_current", config=Bitmap(), replace=True)
    table.create_index("search_text", config=FTS(), replace=True)  # stemmed, stop words removed


UNTAGGED_KEPT = timedelta(days=1)  # a version another writer of a shared table staged may not be tagged yet


RUN_TAG = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{4}")  # a run id (`tasks.publish.root.new_run_id`), as a tag names it


def drop_versions(uri: str, name: str, tags: Sequence[str], live: Collection[str] | None = None) -> int:
    """Delete the tags of publications that are gone and, with `live` (the run ids still published or kept),
    every run's tag it does not name: a run killed between tagging its version and switching the pointer
    published nothing, and its tag would pin that version forever. Tags not shaped like a run id are
    someone's own and stay. Then delete every table version older than a day that is neither tagged nor the
    latest (their files with them): a nightly table would otherwise keep every version it ever wrote. Caller
    holds the publish lock. Returns the versions removed."""
    table = open_table(uri, name)
    if table is None:
        return 0
    held = table.tags.list()
    orphans = {t for t in held if RUN_TAG.fullmatch(t) and t not in live} if live is not None else set()
    for tag in sorted(set(tags) | orphans):
        if tag in held:
            table.tags.delete(tag)
    stats = table.to_lance().cleanup_old_versions(older_than=UNTAGGED_KEPT, error_if_tagged_old_versions=False)
    return int(stats.old_versions)


def tag_version(uri: str, name: str, tag: str, version: int) -> None:
    table = open_table(uri, name)
    if table is None:
        return
    tags = table.tags.list()
    if tag in tags:
        table.tags.update(tag, version)
    else:
        table.tags.create(tag, version)


@dataclass
class Hit:
    id: str
    score: float
    text: str
    facets: dict[str, Any]
    effective_from: date | None
    supersedes: str | None
    superseded_by: str | None
    is_current: bool
    vector: np.ndarray | None = field(default=None, repr=False, compare=False)  # unit length
    policy: str | None = None  # its topic: local and company-wide chunks of one policy key (`schemas.scope`)
    title: str | None = None  # its document's title (metadata `title`), where the corpus writes one

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "score": round(self.score, 4), "text": self.text, "facets": self.facets,
                "effective_from": self.effective_from.isoformat() if self.effective_from else None,
                "supersedes": self.supersedes, "superseded_by": self.superseded_by,
                "is_current": self.is_current}


def _title(metadata: str | None) -> str | None:
    """A chunk's document title from its metadata column (JSON), or None."""
    title = json.loads(metadata or "{}").get(TITLE) if metadata and TITLE in metadata else None
    return " ".join(title.split()) if isinstance(title, str) and title.strip() else None


RRF_K = 60  # reciprocal rank fusion's constant (Cormack et al., 2009)


def rank_fusion(rankings: list[list[str]], rrf_k: int = RRF_K) -> list[str]:
    """Ids of several rankings by reciprocal rank fusion, sum of 1 / (rrf_k + rank); ties by id."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, cid in enumerate(ranking, 1):
            fused[cid] = fused.get(cid, 0.0) + 1.0 / (rrf_k + rank)
    return sorted(fused, key=lambda c: (-fused[c], c))


def _standard_scores(s: np.ndarray) -> tuple[np.ndarray, float]:
    """A ranking's standard scores, NaN ones last, and the score of a chunk the ranking lacks: its lowest, or one
    below its scores where they are all equal."""
    known = s[~np.isnan(s)]
    alike = known.max() == known.min()  # no spread (its std can be a rounding error's: 0.1, 0.1, 0.1)
    z = np.zeros_like(s) if alike else (s - known.mean()) / known.std()
    floor = -1.0 if alike else float(np.nanmin(z))
    return np.where(np.isnan(s), floor - 1.0, z), floor


def score_fusion(scored: list[list[tuple[str, float]]], weights: Sequence[float]) -> list[str]:
    """Ids of several scored rankings by the weighted sum of each ranking's standard scores (its scores less
    their mean, over their spread), so that a cosine and a BM25 score add up on one scale; a chunk a ranking
    lacks takes that ranking's lowest, or, where its scores are all equal (one chunk, a tie), one below them:
    the one chunk a rare word matches still gains. A convex combination of normalised scores keeps how far
    apart the chunks score, which reciprocal rank fusion drops. A NaN score (the cosine of a zero vector) is
    none: it ranks last in its ranking, below the chunks it lacks. Ties by id."""
    fused: dict[str, float] = {}
    parts: list[tuple[dict[str, float], float, float]] = []
    for ranking, weight in zip(scored, weights, strict=True):
        fused.update(dict.fromkeys((cid for cid, _ in ranking), 0.0))
        s = np.array([score for _, score in ranking], dtype=np.float64)
        if np.isnan(s).all():
            continue  # no score to standardise: the ranking orders nothing
        z, floor = _standard_scores(s)
        parts.append(({cid: float(v) for (cid, _), v in zip(ranking, z, strict=True)}, floor, weight))
    for cid in fused:
        fused[cid] = sum(w * by_id.get(cid, floor) for by_id, floor, w in parts)
    return sorted(fused, key=lambda c: (-fused[c], c))


def best_cosine(hits: list[Hit], default: float) -> float:
    """The best score of a list of hits (a hybrid ranking need not lead with it); a NaN score (a chunk whose
    vector has no direction) is no score."""
    return max((h.score for h in hits if not math.isnan(h.score)), default=default)


SEARCH_MEMO = 20_000  # remembered searches per Index handle (a few MB)




def _check_facet_columns(table: Any, config: Config, uri: str) -> None:
    held = facet_columns(table.schema)
    missing = [f for f in config.facet_names if f not in held]
    if missing:
        raise FacetColumnsMissing(
            f"{uri}: version {table.version} of table '{config.table}' has no column for facet(s) "
            f"{', '.join(missing)} (its facet columns: {', '.join(held) or 'none'}; the config's: "
            f"{', '.join(config.facet_names)}); index the corpus with this config first ('planbake index' or "
            "'planbake nightly'), or read that version with the config it was indexed with")


class Index:
    """A read handle on one version of the chunk table (the published one, by tag or number)."""

    def __init__(self, uri: str, config: Config, version: int | str | None = None,
                 embedder: Embedder | None = None) -> None:
        table = open_table(uri, config.table)
        if table is None:
            raise NoPublication(f"{uri}: no table '{config.table}'; run 'planbake index' first")
        if version is not None:
            restore(table, version, uri, config.table, checkout=True)
        _check_facet_columns(table, config, uri)
        self.table, self.config, self.uri = table, config, uri
        # the column the full-text index reads: versions written before `search_text` indexed the text
        self._words = "search_text" if "search_text" in table.schema.names else "text"
        self.embedder = embedder or Embedder(config.model_path, config.embed_batch_size, config.embed_dtype)
        self._memo: dict[tuple[Any, ...], list[Hit]] = {}  # one table version: the same search, the same hits
        self._plain: list[str] | None = None
        self._names: list[str] | None = None
        self._dropped: dict[str, list[str]] | None = None
        self._sample: np.ndarray | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as where to reopen it (for a task on another process), not as a table handle and a model."""
        return Index, (self.uri, self.config, int(self.table.version))

    def search(self, query: str | np.ndarray, k: int = 5, filters: dict[str, str] | None = None,
               all_versions: bool = False, mode: Literal["vector", "hybrid"] | None = None) -> list[Hit]:
        """Top k chunks for a query, by cosine or hybrid for a text query (`mode`, default the config's
        `planning.search`); a text query's results are remembered for this handle's table version. A hit's score
        is always its cosine. A floor check wants the best cosine, so it searches with mode "vector". Filters
        search in their facets' scope, each topic's local chunks above its company-wide ones (`schemas.scope`)."""
        mode = mode or self.config.planning.search
        if not isinstance(query, str):
            return override_order(self._search(query, k, filters, all_versions), filters or {}, self.config)
        depth = self.config.planning.hybrid_depth if mode == "hybrid" else 0
        key = (query, k, tuple(sorted((filters or {}).items())), all_versions, mode, depth)
        hits = self._memo.get(key)
        if hits is None:
            if len(self._memo) >= SEARCH_MEMO:
                self._memo.clear()
            vec = self.embedder.encode_one(query)
            if mode == "hybrid":
                hits = self._hybrid(query, vec, max(k, depth), k, filters, all_versions)
            else:
                hits = self._search(vec, k, filters, all_versions)
            hits = override_order(hits, filters or {}, self.config)
            self._memo[key] = hits
        return list(hits)

    def _search(self, vec: np.ndarray, k: int, filters: dict[str, str] | None, all_versions: bool) -> list[Hit]:
        q = self.table.search(vec, vector_column_name="vector").distance_type("cosine").limit(k)
        rows = self._filtered(q, filters, all_versions).to_arrow().to_pylist()
        return [self._hit(r, 1.0 - float(r["_distance"])) for r in rows]

    def _text_search(self, query: str, vec: np.ndarray, k: int, filters: dict[str, str] | None,
                     all_versions: bool) -> list[tuple[Hit, float]]:
        """Top k chunks by BM25 over their search text (the full-text index), with their BM25 scores; each hit is
        scored by cosine like every hit."""
        q = self.table.search(query, query_type="fts", fts_columns=self._words).limit(k)
        rows = self._filtered(q, filters, all_versions).to_arrow().to_pylist()
        return [(self._hit(r, float(np.asarray(r["vector"], dtype=np.float32) @ vec)), float(r["_score"]))
                for r in rows]

    def _hybrid(self, query: str, vec: np.ndarray, depth: int, k: int, filters: dict[str, str] | None,
                all_versions: bool) -> list[Hit]:
        """The cosine and the BM25 rankings fused (`planning.hybrid_fusion`): a chunk that shares a rare word
        with the query (a name, a product) comes up even where the averaged query vector misses it."""
        by_cosine = self._search(vec, depth, filters, all_versions)
        by_words = self._text_search(query, vec, depth, filters, all_versions)
        hits = {h.id: h for h, _ in by_words} | {h.id: h for h in by_cosine}  # a chunk in both: its vector hit
        planning = self.config.planning
        if planning.hybrid_fusion == "scores":
            w = planning.hybrid_weight
            order = score_fusion([[(h.id, h.score) for h in by_cosine], [(h.id, bm25) for h, bm25 in by_words]],
                                 [w, 1.0 - w])
        else:
            order = rank_fusion([[h.id for h in by_cosine], [h.id for h, _ in by_words]])
        return [hits[c] for c in order[:k]]

    def _filtered(self, q: Any, filters: dict[str, str] | None, all_versions: bool) -> Any:
        """A LanceDB query with the facet prefilters and version pruning of `schemas.scope.where`."""
        clause = where(filters or {}, self.config, all_versions)
        return q.where(clause, prefilter=True) if clause else q

    def _hit(self, r: dict[str, Any], score: float) -> Hit:
        return Hit(r["id"], score, r["text"], {f.name: r[f.name] for f in self.config.facets}, r["effective_from"],
                   r["supersedes"], r["superseded_by"], bool(r["is_current"]),
                   np.asarray(r["vector"], dtype=np.float32), r.get("policy"), _title(r.get("metadata")))

    def best_scores(self, vectors: np.ndarray, rows_per_block: int = 65_536) -> list[float | None]:
        """Each query vector's best cosine over every chunk of this version, superseded ones too: what a k=1
        search over all versions scores, as blocks of one matrix product instead of one search per query."""
        if len(vectors) == 0:
            return []
        queries = np.asarray(vectors, dtype=np.float32)
        queries = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
        best = np.full(len(queries), -np.inf, dtype=np.float32)
        for batch in self.table.to_lance().to_batches(columns=["vector"], batch_size=rows_per_block):
            chunks = np.stack(batch.column("vector").to_numpy(zero_copy_only=False)).astype(np.float32)
            chunks = chunks / np.maximum(np.linalg.norm(chunks, axis=1, keepdims=True), 1e-12)
            best = np.maximum(best, (queries @ chunks.T).max(axis=1))
        return [None if np.isinf(b) else float(b) for b in best]

    def background(self, query: str) -> tuple[float, float]:
        """Median and spread (the median absolute deviation, scaled to a normal's standard deviation) of the
        query's cosine to the chunks at large (an even sample of at most `BACKGROUND_CHUNKS` rows, the same on
        every read of this version): what a chunk scores that is not about the query. Robust, so the chunks that
        are about it do not widen the spread. The sample is read once per handle."""
        if self._sample is None:
            ds = self.table.to_lance()
            n = ds.count_rows()
            rows = list(range(0, n, max(1, n // BACKGROUND_CHUNKS)))[:BACKGROUND_CHUNKS]
            vecs = np.stack(ds.take(rows, columns=["vector"]).column("vector").to_numpy(zero_copy_only=False)
                            ).astype(np.float32) if rows else np.zeros((0, self.embedder.dim), np.float32)
            self._sample = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        if not len(self._sample):
            return 0.0, 0.0
        scores = self._sample @ self.embedder.encode_one(query).astype(np.float32)
        middle = float(np.median(scores))
        return middle, float(np.median(np.abs(scores - middle))) * 1.4826

    def columns(self, names: Sequence[str]) -> pa.Table:
        """Some columns of this version's rows, read without the others (`to_arrow` reads the vectors too)."""
        return self.table.to_lance().to_table(columns=list(names))

    def facet_values(self) -> dict[str, list[str]]:
        cats = [f.name for f in self.config.facets if f.kind == "category"]
        t = self.columns(cats) if cats else None
        return {c: sorted({v for v in t.column(c).to_pylist() if v}) for c in cats} if t is not None else {}

    def dropped_values(self) -> dict[str, list[str]]:
        """Facet -> the values of this version the lexicon leaves out: ordinary words the config does not keep
        (`tasks.index.ordinary`). Read once per handle."""
        if self._dropped is None:
            self._dropped = dropped_values(self.config, self.facet_values(), set(self.plain_words()),
                                           lambda: self.columns(["text"]).column("text").to_pylist())
        return self._dropped

    def lexicon_values(self) -> dict[str, list[str]]:
        """The facet values the lexicon takes from this version: `facet_values` less `dropped_values`. Mining,
        planning and the published lexicon (lookup) read these; a filter may still name any value."""
        return without(self.facet_values(), self.dropped_values())

    def plain_words(self) -> list[str]:
        """The words the corpus writes in lower case somewhere (casefolded, sorted): ordinary words, not names
        (see `Scrubber`). Read once per handle: a handle is one table version."""
        if self._plain is None:
            self._plain = sorted(plain_words(self.columns(["text"]).column("text").to_pylist()))
        return self._plain

    def names(self) -> list[str]:
        """The corpus's document titles (each chunk's metadata `title`, where the corpus has one; sorted, once
        each): names a question may write, read as one name (`schemas.entity.KnownNames`). Read once per handle."""
        if self._names is None:
            found: set[str] = set()
            if "metadata" in self.table.schema.names:
                # a document's chunks share its metadata: each distinct one is parsed once
                found = {title for meta in set(self.columns(["metadata"]).column("metadata").to_pylist())
                         if (title := _title(meta)) is not None}
            self._names = sorted(found)
        return self._names

    def name_types(self) -> dict[str, str]:
        """The types of the corpus's titles (`schemas.entity_types.title_types`): each title form -> person, work,
        place or organisation, as its document's first chunk says; only with titles."""
        if not self.names():
            return {}
        t = self.columns(["doc_id", "position", "metadata", "text"])
        first: dict[str, tuple[int, int]] = {}  # doc_id -> (position, row) of its first chunk
        for row, (doc, position) in enumerate(zip(t.column("doc_id").to_pylist(), t.column("position").to_pylist(),
                                                  strict=True)):
            if doc not in first or position < first[doc][0]:
                first[doc] = (position, row)
        rows = t.take([row for _, row in first.values()])  # only a document's first chunk is parsed
        return title_types((title, text) for metadata, text in zip(
            rows.column("metadata").to_pylist(), rows.column("text").to_pylist(), strict=True)
            if (title := _title(metadata)) is not None)

    def hashes(self, column: str) -> dict[str, str]:
        """id -> one of its hashes: "row_hash" (all a row holds but its vector: text, facets, version markers)
        or "content_hash" (text and metadata)."""
        t = self.columns(["id", column])
        return dict(zip(t.column("id").to_pylist(), t.column(column).to_pylist(), strict=True))

    def to_arrow(self) -> pa.Table:
        return self.table.to_arrow()
