"""Arrow schemas of the published tables: the contract with online services."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from schemas.config import Config
from schemas.errors import DamagedPublication
from schemas.files import PublishedFile

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


EMBED_FIELDS = b"embed_fields"  # the vector field's metadata: the `chunking.embed_fields` its vectors embed


def chunk_schema(config: Config, dim: int) -> pa.Schema:
    """The LanceDB table and chunks.parquet: one row per chunk, facets as typed columns. The vector field names
    the `chunking.embed_fields` it embeds in its metadata (none: the text alone)."""
    facets = [pa.field(f.name, _FACET_TYPES[f.kind]) for f in config.facets]
    embed = config.chunking.embed_fields
    meta = {EMBED_FIELDS: json.dumps(embed).encode()} if embed else None
    return pa.schema([*_HEAD, *facets, *_TAIL, pa.field("vector", pa.list_(pa.float32(), dim), metadata=meta)])


def embedded_fields(schema: pa.Schema) -> list[str]:
    """The metadata fields a chunk table's vectors embed in front of the text (`chunk_schema`)."""
    meta = schema.field("vector").metadata or {}
    return list(json.loads(meta[EMBED_FIELDS])) if EMBED_FIELDS in meta else []


def facet_columns(schema: pa.Schema) -> list[str]:
    """The facet columns of a chunk table's schema (those of the config it was written with)."""
    fixed = {f.name for f in (*_HEAD, *_TAIL)} | {"vector"}
    return [n for n in schema.names if n not in fixed]


# The Parquet files of a run folder (`schemas.files`), each written and read with its schema here.
SHAPE_SCHEMA = pa.schema([  # shapes.parquet: the recurring shapes, classified
    ("shape_id", pa.string()), ("skeleton", pa.string()), ("type", pa.string()), ("reason", pa.string()),
    ("count", pa.int64()), ("users", pa.int64()), ("first_seen", pa.timestamp("us")),
    ("last_seen", pa.timestamp("us")), ("examples", pa.list_(pa.string())), ("signature", pa.string()),
    ("example", pa.string()), ("member_hashes", pa.list_(pa.string())),
    ("bridge", pa.string()),  # the term the corpus ties to a facet value, as JSON (`tasks.mine.bridges`), or null
    ("slot_types", pa.string()),  # entity slot -> person, work, place or organisation, as JSON, or null
])
# questions.parquet: every mined question, by time (written by DuckDB, which marks some columns not null)
QUESTION_SCHEMA = pa.schema([
    ("question_id", pa.uint64()), ("shape_id", pa.string()), ("ts", pa.timestamp("us")), ("slots", pa.string()),
    ("constraints", pa.string()), ("followup", pa.bool_()), ("resolved_question", pa.string()),
    ("resolved_shape_id", pa.string()), ("resolved_key", pa.string()), ("followup_reason", pa.string()),
])
# quarantine.parquet: the bad log lines, each with its reason (written by DuckDB)
QUARANTINE_SCHEMA = pa.schema([("file", pa.string()), ("line", pa.int64()), ("reason", pa.string()),
                               ("raw", pa.string())])
TEMPLATE_SCHEMA = pa.schema([  # templates.parquet: a template per shape, its checks, evaluation and route
    ("shape_id", pa.string()), ("skeleton", pa.string()), ("type", pa.string()), ("template", pa.string()),
    ("writer", pa.string()), ("model", pa.string()), ("valid", pa.bool_()), ("check_ok", pa.bool_()),
    ("complaint", pa.string()), ("prompt_hash", pa.string()), ("fallback", pa.bool_()), ("route", pa.string()),
    ("evaluation", pa.string()),
    ("members", pa.list_(pa.string())), ("member_hashes", pa.list_(pa.string())), ("count", pa.int64()),
    ("shape_sig", pa.string()), ("evidence", pa.string()),
])
CACHE_SCHEMA = pa.schema([  # cache.parquet: a `CacheRow` per shape and value set
    ("key", pa.string()), ("shape_id", pa.string()), ("route", pa.string()), ("plan", pa.string()),
    ("slots", pa.string()), ("questions", pa.int64()), ("writer", pa.string()), ("model", pa.string()),
    ("prompt_hash", pa.string()), ("index_version", pa.int64()), ("lexicon_hash", pa.string()),
    ("coverage", pa.string()),
])


# How a publication's cache keys order their slots (its manifest's plan section says, as "cache_keys"): by slot
# name. A publication that does not say was written when keys kept the question's order, and is keyed anew on load.
KEYS = "slots by name"


@dataclass(frozen=True, slots=True)
class CacheRow:
    """A row of cache.parquet (`CACHE_SCHEMA`, its fields in the same order): one shape's plan for one value set."""

    key: str  # `schemas.extract.cache_key`: the shape id and the values by slot name (`KEYS`)
    shape_id: str
    route: str  # one_search | split | split_original
    plan: str | None  # the filled plan as JSON, defaults left out (`keep_original` too); None for one search
    slots: str  # JSON: slot name -> value
    questions: int  # the window's questions with these values
    writer: str | None = None  # rules, or the model writer's name
    model: str | None = None
    prompt_hash: str | None = None
    index_version: int | None = None  # the index version the route was measured on
    lexicon_hash: str | None = None
    coverage: str | None = None  # JSON: route -> part coverage of the evaluation

    def to_row(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class CacheEntries(Mapping[str, CacheRow]):
    """cache.parquet's rows by key, each made a `CacheRow` only when asked for: a lookup reads a plan by its key
    (`plan`), so opening a publication builds one dictionary of keys and one list of plans, not a row object per
    entry (a server opens one per switch of `CURRENT`)."""

    def __init__(self, table: pa.Table, keys: list[str]) -> None:
        self._columns = table.columns  # in CacheRow's order
        self._row = dict(zip(keys, range(len(keys)), strict=True))
        self._plans: list[str | None] = table.column("plan").to_pylist()

    def plan(self, key: str) -> str | None:
        """The filled plan of `key` as JSON; None for no entry or one without a plan."""
        i = self._row.get(key)
        return None if i is None else self._plans[i]

    def __getitem__(self, key: str) -> CacheRow:
        i = self._row[key]
        return CacheRow(*(c[i].as_py() for c in self._columns))

    def __iter__(self) -> Iterator[str]:
        return iter(self._row)

    def __len__(self) -> int:
        return len(self._row)


def schema_problems(held: pa.Schema, declared: pa.Schema) -> dict[str, str]:
    """The declared columns a file's schema (`held`) lacks or holds with another type: name -> what is wrong.
    Nullability is the writer's (DuckDB marks a column it knows has no null as not null)."""
    problems = {}
    for f in declared:
        i = held.get_field_index(f.name)
        if i < 0:
            problems[f.name] = f"no column {f.name}"
        elif held.field(i).type != f.type:
            problems[f.name] = f"column {f.name} is {held.field(i).type}, declared {f.type}"
    return problems


def read_published(run_dir: Path, file: PublishedFile) -> pa.Table:
    """A run's Parquet file as its declared schema's columns, in its order; DamagedPublication naming a declared
    column it lacks or holds with another type (a column `file.optional` names, which a publication made before it
    lacks, reads as nulls)."""
    path, declared = run_dir / file.name, file.schema
    try:
        held = pq.read_schema(path)
    except FileNotFoundError:
        raise DamagedPublication(f"{path}: missing") from None
    except (OSError, pa.ArrowInvalid):
        raise DamagedPublication(f"{path}: not a whole Parquet file (truncated or overwritten)") from None
    absent = [name for name in file.optional if held.get_field_index(name) < 0]
    problems = [p for name, p in schema_problems(held, declared).items() if name not in absent]
    if problems:
        raise DamagedPublication(f"{path}: " + "; ".join(problems))
    table = pq.read_table(path, columns=[n for n in declared.names if n not in absent])
    for name in absent:
        field = declared.field(name)
        table = table.add_column(declared.get_field_index(name), field, pa.nulls(table.num_rows, field.type))
    return table


def check_written(path: Path, declared: pa.Schema) -> None:
    """Refuse a file that a writer other than `pa.Table.from_pylist(rows, declared)` (DuckDB, LanceDB) wrote with
    other columns or types than declared: a bug, stopped before the run is published."""
    held = pq.read_schema(path)
    if held.names != declared.names or schema_problems(held, declared):
        raise RuntimeError(f"{path}: written with the columns {held}, declared {declared}")
