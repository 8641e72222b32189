"""Enrich chunks: facet values, effective dates and version markers (supersedes / superseded_by / is_current)."""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from schemas.config import Config
from schemas.errors import CorpusError
from schemas.extract import MONTH_WORDS, Lexicon
from schemas.text import MONTHS, fold
from tasks.index.corpus import Chunk, Document

_MONTH = "|".join(MONTH_WORDS)  # longest first, as dates in questions are read: "September" before "Sept"
_EFFECTIVE = re.compile(
    rf"\beffective(?:\s+(?:from|on|as of))?\s+(?:"
    rf"(?P<d1>[0-9]{{1,2}})\s+(?P<m1>{_MONTH})\s+(?P<y1>[0-9]{{4}})"
    rf"|(?P<m2>{_MONTH})\s+(?P<d2>[0-9]{{1,2}}),?\s+(?P<y2>[0-9]{{4}})"
    rf"|(?P<iso>[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}))"
    r"(?![^\W_])",  # a year or date followed by a letter or digit is none: "99999", "20261", "2026-01-011"
    re.IGNORECASE,
)
_YEAR_IN_ID = re.compile(r"(?:[-_.]|(?<![0-9]))(?:19|20)[0-9][0-9](?=$|[-_.#])")  # "x-12026" names no year


@dataclass
class EnrichedChunk:
    chunk: Chunk
    facets: dict[str, Any]
    effective_from: date | None
    policy: str
    supersedes: str | None = None
    superseded_by: str | None = None
    is_current: bool = True


def parse_effective(text: str) -> date | None:
    """The first "effective 1 January 2026" (or "effective January 1, 2026", "effective 1 Jan 2026", "effective
    2026-01-01") in a text."""
    m = _EFFECTIVE.search(text)
    if not m:
        return None
    try:
        if m.group("iso"):
            return date.fromisoformat(m.group("iso"))
        day, month, year = (m.group("d1"), m.group("m1"), m.group("y1")) if m.group("d1") else (
            m.group("d2"), m.group("m2"), m.group("y2"))
        return date(int(year), MONTHS[month.casefold()], int(day))
    except ValueError:
        return None


_YEAR_VALUE = re.compile(r"[0-9]{4}")  # four ASCII digits ("26" matches no question; int() takes "²")
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def check_facet_types(docs: Sequence[Document], config: Config) -> None:
    """A facet value of the wrong type, or under its key in another case ("Office"), fails with the file, the line
    and the fix."""
    keys = {f.metadata_key.casefold(): f.metadata_key for f in config.facets} | {"effective_from": "effective_from"}
    # an alias spelled as a listed value is the config's mistake (Lexicon.check_aliases says so), not the corpus's
    aliases: dict[str, dict[str, str]] = {}
    for f in config.facets:
        listed = {fold(v) for v in f.values}
        aliases[f.name] = {fold(a): value for a, value in f.aliases.items() if fold(a) not in listed}
    # folded value -> (its spelling, where it was met first): the config's values, then the documents'
    spelled: dict[str, dict[str, tuple[str, str]]] = {
        f.name: {fold(v): (v, f"the config's values, {config.place(['facets', at, 'values'])}") for v in f.values}
        for at, f in enumerate(config.facets) if f.kind == "category"}
    for d in docs:
        for key in d.metadata:
            if (want := keys.get(key.casefold())) is not None and key != want and want not in d.metadata:
                raise CorpusError(f"{d.source_of(key)}: metadata key '{key}' of document {d.id!r} is read as "
                                  f"'{want}' only when spelled so (keys are case-sensitive); rename it to '{want}'")
        for f in config.facets:
            v = d.metadata.get(f.metadata_key)
            if v is None:
                continue
            if f.kind == "year" and not _YEAR_VALUE.fullmatch(str(v).strip() if isinstance(v, int | str) else "x"):
                raise CorpusError(f"{d.source_of(f.metadata_key)}: metadata '{f.metadata_key}' of document "
                                  f"{d.id!r} must be a year such as 2026, got {v!r}")
            if f.kind in ("category", "date") and not isinstance(v, str):
                raise CorpusError(f"{d.source_of(f.metadata_key)}: metadata '{f.metadata_key}' of document "
                                  f"{d.id!r} must be a string, got {type(v).__name__} {v!r}")
            if f.kind == "category" and (canonical := aliases[f.name].get(fold(str(v)))) not in (None, v):
                raise CorpusError(f"{d.source_of(f.metadata_key)}: {f.metadata_key} {v!r} of document {d.id!r} is "
                                  f"an alias of {canonical!r} in the config; write {canonical!r} (documents name a "
                                  "value as the config's values do; questions may use the alias)")
            if f.kind == "category":
                _check_spelling(d, f.metadata_key, str(v), spelled[f.name])
        eff = d.metadata.get("effective_from")
        if eff is not None:
            try:
                if not isinstance(eff, str) or not _ISO_DATE.fullmatch(eff):
                    raise ValueError(eff)  # fromisoformat also takes 20260101 and 2026-W05-3
                date.fromisoformat(eff)
            except ValueError:
                raise CorpusError(f"{d.source_of('effective_from')}: metadata 'effective_from' of document "
                                  f"{d.id!r} must be an ISO date (YYYY-MM-DD), got {eff!r}") from None


def _check_spelling(d: Document, key: str, value: str, spelled: dict[str, tuple[str, str]]) -> None:
    """One value, one spelling: "berlin" or "Berlin " beside "Berlin" would be a value of its own, which a
    question's "Berlin" filters to whichever the lexicon reads, leaving the other's chunks out."""
    first, where = spelled.setdefault(fold(value), (value, d.source_of(key)))
    if first != value:
        raise CorpusError(f"{d.source_of(key)}: {key} {value!r} of document {d.id!r} is {first!r} ({where}) spelled "
                          f"another way; write {first!r}")


def _named_values(text: str, lexicon: Lexicon, plain: Collection[str] = ()) -> dict[str, str]:
    """Category facet -> its value, for each facet the text names exactly one value of (`Lexicon.written_values`;
    `plain`, the corpus's words in lower case)."""
    values: dict[str, set[str]] = defaultdict(set)
    for c in lexicon.written_values(text, plain):
        values[c.facet].add(c.value)
    return {facet: vals.pop() for facet, vals in values.items() if len(vals) == 1}


def _facet_values(chunk: Chunk, named: Callable[[], dict[str, str]], config: Config,
                  effective: date | None) -> dict[str, Any]:
    """`named` gives the values the chunk's document names, read once per document and only if needed."""
    out: dict[str, Any] = {}
    for f in config.facets:
        if f.metadata_key in chunk.metadata:
            v = chunk.metadata[f.metadata_key]
            out[f.name] = None if v is None else (int(v) if f.kind == "year" else str(v))
        elif f.kind == "category":
            out[f.name] = named().get(f.name)
        elif f.kind == "year":
            out[f.name] = effective.year if effective else None
        else:
            out[f.name] = None
    return out


def enrich(chunks: Sequence[Chunk], docs: Sequence[Document], config: Config, lexicon: Lexicon,
           run_date: date, plain: Collection[str] = ()) -> list[EnrichedChunk]:
    """Facets from metadata (or from the text by the lexicon, a value that is one of `plain`, the corpus's words
    in lower case, only where written as a name), effective dates and version links.

    Versions: documents with an effective date and the same policy key (metadata "policy", else that of the
    document named by metadata "supersedes", else the id without its year) and the same category facets are
    versions of one policy. The version in force on
    `run_date` is current; older ones are superseded, future ones not yet current.
    """
    doc_by_id = {d.id: d for d in docs}
    effective_of: dict[str, date | None] = {}
    for d in docs:
        eff = d.metadata.get("effective_from")
        effective_of[d.id] = date.fromisoformat(str(eff)) if eff else parse_effective(d.text)
    named_in = functools.cache(lambda doc_id: _named_values(doc_by_id[doc_id].text, lexicon, plain))
    policy_of = policy_keys(docs, effective_of)
    out: list[EnrichedChunk] = []
    for c in chunks:
        d = doc_by_id[c.doc_id]
        eff = effective_of[d.id]
        named = functools.partial(named_in, d.id)
        out.append(EnrichedChunk(c, _facet_values(c, named, config, eff), eff, policy_of[d.id]))
    _check_superseded_facets(out, doc_by_id, config)
    _link_versions(out, config, run_date)
    return out


def policy_keys(docs: Sequence[Document], effective_of: dict[str, date | None]) -> dict[str, str]:
    """Each document's policy key: metadata `policy`; else that of the document its `supersedes` names (both
    need an effective date); else its id without its year."""
    by_id = {d.id: d for d in docs}
    keys: dict[str, str] = {}

    def key(d: Document, chain: tuple[str, ...]) -> str:
        if d.id in keys:
            return keys[d.id]
        target = d.metadata.get("supersedes")
        own = str(d.metadata.get("policy") or _YEAR_IN_ID.sub("", d.id))
        if target is None:
            return own
        where = d.source_of("supersedes")
        if not isinstance(target, str) or target not in by_id:
            raise CorpusError(f"{where}: document {d.id!r} supersedes {target!r}, which is no document id of the "
                              "corpus; write the id of the version it replaces, or remove the key")
        if target in chain:
            raise CorpusError(f"{where}: document {d.id!r} supersedes {target!r}, which supersedes it in turn; "
                              "the older version must not name the newer one")
        mine, theirs = effective_of[d.id], effective_of[target]
        if mine is None or theirs is None:
            missing = d.id if mine is None else target
            raise CorpusError(f"{where}: document {d.id!r} supersedes {target!r}, but {missing!r} has no effective "
                              "date; give it `effective_from: YYYY-MM-DD` (versions are ordered by it)")
        if mine <= theirs:
            raise CorpusError(f"{where}: document {d.id!r} supersedes {target!r}, but takes effect on {mine}, not "
                              f"after {target!r} ({theirs}); a newer version takes effect later: fix the dates or "
                              "the key")
        linked = key(by_id[target], (*chain, d.id))
        if d.metadata.get("policy") and linked != own:
            raise CorpusError(f"{where}: document {d.id!r} is of policy {own!r} but supersedes {target!r} of policy "
                              f"{linked!r}; give both one policy, or remove one of the keys")
        return linked

    for d in docs:
        keys[d.id] = key(d, (d.id,))
    return keys


def _check_superseded_facets(chunks: Sequence[EnrichedChunk], doc_by_id: dict[str, Document],
                             config: Config) -> None:
    """A document that names the version it supersedes must share its category facets (its office; a facet
    whose values name versions aside), or the two would not be versions of one policy."""
    categories = scoping_facets(config)
    facets = {e.chunk.doc_id: {n: e.facets.get(n) for n in categories} for e in chunks}
    for doc_id, d in doc_by_id.items():
        target = d.metadata.get("supersedes")
        if target not in facets or doc_id not in facets:
            continue
        differ = {n: (facets[doc_id][n], facets[target][n]) for n in categories
                  if facets[doc_id][n] != facets[target][n]}
        if differ:
            n, (mine, theirs) = next(iter(differ.items()))
            raise CorpusError(f"{d.source_of('supersedes')}: document {doc_id!r} supersedes {target!r}, but its "
                              f"{n} is {mine!r} and {target!r}'s is {theirs!r}; versions of one policy share their "
                              f"{', '.join(categories)}: set the same value, or remove the key")


def scoping_facets(config: Config) -> list[str]:
    """The category facets that part versions: two documents at two offices are two policies, at two releases (a
    facet with `version: true`) two versions of one."""
    return [f.name for f in config.facets if f.kind == "category" and not f.version]


def _link_versions(chunks: list[EnrichedChunk], config: Config, run_date: date) -> None:
    categories = scoping_facets(config)
    versions: dict[tuple[Any, ...], dict[str, date]] = defaultdict(dict)
    for e in chunks:
        if e.effective_from is not None:
            key = (e.policy, *(e.facets.get(n) for n in categories))
            versions[key][e.chunk.doc_id] = e.effective_from
    links: dict[str, tuple[str | None, str | None, bool]] = {}
    for docs in versions.values():
        if len(docs) < 2:
            continue
        ordered = sorted(docs, key=lambda i: (docs[i], i))
        in_force = [i for i in ordered if docs[i] <= run_date]
        current = in_force[-1] if in_force else None
        for n, doc_id in enumerate(ordered):
            prev = ordered[n - 1] if n > 0 else None
            nxt = ordered[n + 1] if n + 1 < len(ordered) else None
            links[doc_id] = (prev, nxt, doc_id == current)
    for e in chunks:
        if e.chunk.doc_id in links:
            e.supersedes, e.superseded_by, e.is_current = links[e.chunk.doc_id]
        elif e.effective_from is not None and e.effective_from > run_date:
            e.is_current = False  # a single version that is not in force yet
