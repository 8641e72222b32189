"""Arrow schemas of the published tables: the contract with online services."""

from __future__ import annotations

import pyarrow as pa

from schemas.config import Config

_FACET_TYPES = {"category": pa.string(), "year": pa.int32(), "date": pa.string()}


_HEAD = [
    pa.field("id", pa.string(), nullable=False),
    pa.field("doc_id", pa.string(), nullable=False),
    pa.field("position", pa.int32(), nullable=False),
    pa.field("text", pa.string(), nullable=False),
    pa.field("content_hash", pa.string(), nullable=False),
    pa.field("row_hash", pa.string(), nullable=False),
]
_TAIL = [
    pa.field("effective_from", pa.date32()),
    pa.field("policy", pa.string()),
    pa.field("supersedes", pa.string()),
    pa.field("superseded_by", pa.string()),
    pa.field("is_current", pa.bool_(), nullable=False),
    pa.field("metadata", pa.string()),
    pa.field("search_text", pa.string()),  # what the full-text index reads: `chunking.search_fields`, then the text
]


def chunk_schema(config: Config, dim: int) -> pa.Schema:
    """The LanceDB table and chunks.parquet: one row per chunk, facets as typed columns."""
    facets = [pa.field(f.name, _FACET_TYPES[f.kind]) for f in config.facets]
    return pa.schema([*_HEAD, *facets, *_TAIL, pa.field("vector", pa.list_(pa.float32(), dim))])


def facet_columns(schema: pa.Schema) -> list[str]:
    """The facet columns of a chunk table's schema (those of the config it was written with)."""
    fixed = {f.name for f in (*_HEAD, *_TAIL)} | {"vector"}
    return [n for n in schema.names if n not in fixed]
