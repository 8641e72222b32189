"""Arrow schemas of the published tables: the contract with online services."""

from __future__ import annotations

import pyarrow as pa

from schemas.config import Config

_FACET_TYPES = {"category": pa.string(), "year": pa.int32(), "date": pa.string()}


def chunk_schema(config: Config, dim: int) -> pa.Schema:
    """The LanceDB table and chunks.parquet: one row per chunk, facets as typed columns."""
    fields = [
        pa.field("id", pa.string(), nullable=False),
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("position", pa.int32(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("content_hash", pa.string(), nullable=False),
        pa.field("row_hash", pa.string(), nullable=False),
    ]
    fields += [pa.field(f.name, _FACET_TYPES[f.kind]) for f in config.facets]
    fields += [
        pa.field("effective_from", pa.date32()),
        pa.field("policy", pa.string()),
        pa.field("supersedes", pa.string()),
        pa.field("superseded_by", pa.string()),
        pa.field("is_current", pa.bool_(), nullable=False),
        pa.field("metadata", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), dim)),
    ]
    return pa.schema(fields)
