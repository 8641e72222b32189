"""The index stage: read, chunk, enrich, embed, write the LanceDB table, export Parquet."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from prefect import task
from prefect.cache_policies import NO_CACHE

from schemas.config import Config
from schemas.errors import NoPublication
from schemas.extract import Lexicon
from schemas.text import fold, letter_runs, plain_words
from tasks.embed import Embedder
from tasks.index.corpus import Chunk, Document, chunk_corpus, read_corpus
from tasks.index.enrich import EnrichedChunk, check_facet_types, enrich
from tasks.index.ordinary import dropped_values, without
from tasks.index.store import IndexResult, open_table, write_index


@dataclass
class IndexOutcome:
    result: IndexResult
    uri: str
    documents: int
    path: str | None = None  # the table's folder inside the publication root, when it is there
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self.result), "uri": self.uri, **({"path": self.path} if self.path else {}),
                "documents": self.documents, **({"warnings": self.warnings} if self.warnings else {})}


def index_uri(config: Config, out: str | Path) -> str:
    """The table's location: the config's `index_uri`, else `<out>/lancedb`; a local one as an absolute path, so
    it names the same table from any working folder."""
    uri = config.index_uri or str(Path(out) / "lancedb")
    return uri if "://" in uri else str(Path(uri).resolve())


def path_in_root(uri: str, out: str | Path) -> str | None:
    """A local index's folder relative to the publication root `out` (None: a remote index, or one elsewhere)."""
    if "://" in uri:
        return None
    try:
        return Path(uri).relative_to(Path(out).resolve()).as_posix()
    except ValueError:
        return None


@dataclass
class Checked:
    """A corpus read and checked: its documents, their chunks, the values the lexicon leaves out (ordinary words,
    `tasks.index.ordinary`) and the lexicon of the rest."""

    docs: list[Document]
    chunks: list[Chunk]
    dropped: dict[str, list[str]]
    lexicon: Lexicon
    plain: set[str]  # the words the chunks write in lower case (`schemas.text.plain_words`)


def check_corpus(corpus: str | Path, config: Config) -> Checked:
    """The corpus's documents, chunks and lexicon, or the first mistake in them."""
    docs = read_corpus(corpus)
    check_facet_types(docs, config)
    chunks = chunk_corpus(docs, config.chunking)
    plain = plain_words(c.text for c in chunks)
    dropped = _dropped(docs, chunks, config, plain)
    lexicon = Lexicon(config, without(_category_values(docs, config), dropped))
    lexicon.check_aliases()
    return Checked(docs, chunks, dropped, lexicon, plain)


def _category_values(docs: Sequence[Document], config: Config) -> dict[str, list[str]]:
    return {f.name: [str(v) for d in docs if (v := d.metadata.get(f.metadata_key))]
            for f in config.facets if f.kind == "category"}


def _dropped(docs: Sequence[Document], chunks: Sequence[Chunk], config: Config,
             plain: set[str]) -> dict[str, list[str]]:
    """The values the lexicon leaves out, judged on the chunks' texts as the table holds them (the texts
    `Index.dropped_values` reads; `plain`, their words in lower case)."""
    return dropped_values(config, _category_values(docs, config), plain, lambda: (c.text for c in chunks))


def read_checked(corpus: str | Path, config: Config) -> tuple[list[Document], Lexicon]:
    """The corpus's documents and the lexicon of their facet values, or the first mistake in them."""
    checked = check_corpus(corpus, config)
    return checked.docs, checked.lexicon


def build_index(corpus: str | Path, config: Config, out: str | Path, run_date: date,
                quiet: bool = False, embedder: Embedder | None = None) -> IndexOutcome:
    """Validate the whole corpus first (a bad record writes nothing), then merge it into the table.

    `embedder` embeds new or changed chunks (default: in this process; flows pass a TaskEmbedder)."""
    checked = check_corpus(corpus, config)
    docs = checked.docs
    enriched = enrich(checked.chunks, docs, config, checked.lexicon, run_date, checked.plain)
    uri = index_uri(config, out)
    embedder = embedder or Embedder(config.model_path, config.embed_batch_size, config.embed_dtype)
    result = write_index(enriched, config, uri, embedder, quiet=quiet)
    return IndexOutcome(result, uri, len(docs), path_in_root(uri, out),
                        [*valueless_facets(docs, config), *unset_years(enriched, config), *misspelt_keys(docs, config),
                         *unread_fields(docs, config), *misspelt_values(docs, config),
                         *ordinary_values(docs, config, checked.dropped)])


def valueless_facets(docs: Sequence[Document], config: Config) -> list[str]:
    """A warning for each category facet that neither the config nor any document gives a value: no question is
    ever read as naming it (a misspelt `key:`, or metadata the corpus does not have)."""
    out = []
    for at, f in enumerate(config.facets):
        if f.kind == "category" and not f.values and not any(d.metadata.get(f.metadata_key) for d in docs):
            out.append(f"{config.place(['facets', at])}: facet {f.name!r} has no values: the config lists none and "
                       f"no document's metadata has the key {f.metadata_key!r}; list its values, or set `key:` to "
                       "the metadata key that holds them")
    return out


def unset_years(chunks: Sequence[EnrichedChunk], config: Config) -> list[str]:
    """A warning for each year or date facet that no chunk carries (no document's metadata has its key, and no
    chunk has an effective date to read a year from): questions' years still become slots, but a step filtered on
    one finds nothing."""
    return [f"{config.place(['facets', at])}: no chunk carries a {f.kind} for facet {f.name!r} (no document's "
            f"metadata gives a value for the key {f.metadata_key!r}"
            + (" and none has an effective date" if f.kind == "year" else "") + "), so a step filtered on it finds "
            "nothing; give the documents that key, or leave the facet out (`facets: []` is allowed)"
            for at, f in enumerate(config.facets)
            if f.kind in ("year", "date") and chunks and all(c.facets.get(f.name) is None for c in chunks)]


def unread_fields(docs: Sequence[Document], config: Config) -> list[str]:
    """A warning for each of `chunking.search_fields` and `chunking.embed_fields` that no document's metadata has
    (a misspelt `titel`): the full-text index, or the vectors, read the text alone."""
    keys = ", ".join(sorted({k for d in docs for k in d.metadata})) or "none"
    reader = {"search_fields": "the full-text index reads", "embed_fields": "the vectors embed"}
    return [f"{config.place(['chunking', option, at])}: no document's metadata has the key {key!r}, so "
            f"{reader[option]} the chunks' text alone; name one the corpus has ({keys})"
            for option in reader for at, key in enumerate(getattr(config.chunking, option))
            if not any(key in d.metadata for d in docs)]


def misspelt_keys(docs: Sequence[Document], config: Config) -> list[str]:
    """A warning for each facet whose metadata key no document has while a document has a key spelled close to it
    (a facet `offce`, or `key: Ofice`): the metadata is not read, and the facet's values come from the texts alone
    (a year from the effective date), leaving out every chunk whose text names no value."""
    read = {f.metadata_key for f in config.facets} | {"effective_from", "policy", "supersedes"}
    keys = sorted({k for d in docs for k in d.metadata} - read)
    out = []
    for at, f in enumerate(config.facets):
        if any(f.metadata_key in d.metadata for d in docs):
            continue
        for close in difflib.get_close_matches(f.metadata_key.casefold(), keys, n=1, cutoff=0.75):
            d = next(d for d in docs if close in d.metadata)
            out.append(f"{config.place(['facets', at])}: facet {f.name!r} reads the metadata key {f.metadata_key!r}, "
                       f"which no document has; {d.source_of(close)} has {close!r}: name the facet so, or set "
                       f"`key: {close}` under it (else its values come from the texts alone)")
    return out


def misspelt_values(docs: Sequence[Document], config: Config) -> list[str]:
    """A warning for each category value the config does not list that is spelled close to one it does (an office
    "Berlln" beside "Berlin"): a value of its own, whose chunks no filter to the listed value finds."""
    out = []
    for at, f in enumerate(config.facets):
        listed = {fold(v): v for v in f.values} if f.kind == "category" else {}
        if not listed:
            continue
        seen = set(listed)
        for d in docs:
            v = d.metadata.get(f.metadata_key)
            if not isinstance(v, str) or fold(v) in seen:
                continue
            seen.add(fold(v))
            for close in difflib.get_close_matches(fold(v), list(listed), n=1, cutoff=0.8):
                out.append(f"{d.source_of(f.metadata_key)}: {f.name} {v!r} of document {d.id!r} is not among the "
                           f"config's values but is spelled close to {listed[close]!r}: write {listed[close]!r}, or "
                           f"list {v!r} under the facet's values ({config.place(['facets', at])}) to keep it")
    return out


SHOWN_DROPPED = 10  # dropped values of one facet named one per warning; the rest in one more


def ordinary_values(docs: Sequence[Document], config: Config,
                    dropped: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """A warning for each value the lexicon leaves out (`tasks.index.ordinary`): learned from the index, not kept
    by the config, and one word (an office "Remote" beside "remote work") or several in a row (a source "The Age"
    beside "by the age of 16") the corpus writes in lower case. `dropped`: as `check_corpus` found them."""
    if dropped is None:
        chunks = chunk_corpus(list(docs), config.chunking)
        dropped = _dropped(docs, chunks, config, plain_words(c.text for c in chunks))
    out = []
    for at, f in enumerate(config.facets):
        values = dropped.get(f.name, [])
        first: dict[str, Document] = {}  # value -> the first document giving it
        for d in docs:
            if isinstance(v := d.metadata.get(f.metadata_key), str):
                first.setdefault(v, d)
        place = config.place(["facets", at])
        for v in values[:SHOWN_DROPPED]:
            where = first[v].source_of(f.metadata_key) if v in first else place
            several = len(letter_runs(v)) > 1
            out.append(f"{where}: {f.name} {v!r} is also {'words' if several else 'a word'} the corpus writes in "
                       f"lower case: dropped from the lexicon, so a question saying {fold(v)!r} is not read as that "
                       f"{f.name} (a filter to it still finds its chunks); to keep it, list it under the facet's "
                       f"values ({place})")
        if rest := values[SHOWN_DROPPED:]:
            shown = ", ".join(repr(v) for v in rest[:SHOWN_DROPPED]) + (", ..." if len(rest) > SHOWN_DROPPED else "")
            out.append(f"{place}: {len(rest)} more {f.name} values are words the corpus writes in lower case and "
                       f"were dropped from the lexicon too ({shown}); to keep one, list it under the facet's values")
    return out


def export_parquet(uri: str, config: Config, version: int, path: Path) -> int:
    """Materialise one table version as Parquet (vectors and all metadata)."""
    table = open_table(uri, config.table)
    if table is None:
        raise NoPublication(f"{uri}: no table {config.table!r}")
    table.checkout(version)
    data = table.to_arrow().sort_by("id")
    pq.write_table(data, path)
    return len(data)


# Not cached: both write (the LanceDB table; a Parquet file in the run's staging directory).
build_index_task = task(name="build-index", cache_policy=NO_CACHE)(build_index)
export_parquet_task = task(name="export-parquet", cache_policy=NO_CACHE)(export_parquet)
