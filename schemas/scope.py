"""Facet scope: which chunks a step's filters search, and which of them answers the step.

A chunk with no value for a category facet applies to every value of it (a company-wide rule), unless the facet
is declared `scope: exact`: a step filtered to office X searches X's chunks and the company-wide ones (`where`).
Where X has its own chunk on the same topic (the same policy key), the local one overrides: the chunks of one
topic keep the places they hold in the ranking, the local ones first (`override_order`); the step's trace says
which answered (`scope_trace`). Year and date filters are always exact. Effective-date versions are chained
within one scope (one policy and one value of each category facet), so version pruning works alike in each.

The one definition the index search, the executor, the route measure and the lookup use; an online service
running a plan against its own LanceDB table uses it too (docs/publication.md, "Facet scope").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

from schemas.config import Config
from schemas.errors import InputError
from schemas.sql import sql_string

LOCAL, COMPANY_WIDE = "local", "company-wide"


class Scoped(Protocol):
    """What the override order reads of a hit: its id, facet values and policy key."""

    @property
    def id(self) -> str: ...

    @property
    def facets(self) -> Mapping[str, Any]: ...

    @property
    def policy(self) -> str | None: ...


H = TypeVar("H", bound=Scoped)


def no_value(value: Any) -> bool:
    """A facet value a chunk does not have: null, or empty text."""
    return value is None or value == ""


def inheriting(filters: Mapping[str, str], config: Config) -> list[str]:
    """The filtered facets a chunk without a value still answers: category facets of scope "inherit"."""
    return [f for f in filters if (facet := config.facet(f)).kind == "category" and facet.scope == "inherit"]


def where(filters: Mapping[str, str], config: Config, all_versions: bool = False) -> str | None:
    """A step's filters as a LanceDB `where` clause (SQL): each category value, or none where the facet inherits;
    a year or date exactly. Version pruning (`is_current`) unless `all_versions` or a year, a date or a version
    facet's filter (a release), which names the version wanted."""
    clauses = []
    for name, value in filters.items():
        facet = config.facet(name)
        if facet.kind == "year":
            if not (len(str(value)) == 4 and str(value).isascii() and str(value).isdigit()):
                raise InputError(f"filter {name}={value}: a year filter takes a year of four digits, such as 2026")
            clauses.append(f"{name} = {int(value)}")
        elif facet.kind == "date":
            clauses.append(f"{name} LIKE {sql_string(value + '%')}")
        elif facet.scope == "exact":
            clauses.append(f"{name} = {sql_string(value)}")
        else:
            clauses.append(f"({name} = {sql_string(value)} OR {name} IS NULL OR {name} = '')")
    if not all_versions and not any(config.facet(f).kind != "category" or config.facet(f).version for f in filters):
        clauses.append("is_current")
    return " AND ".join(clauses) or None


def in_scope(facets: Mapping[str, Any], filters: Mapping[str, str], config: Config) -> bool:
    """Whether a chunk with these facet values is one the filters search (as `where` selects, versions aside)."""
    inherit = set(inheriting(filters, config))
    for name, value in filters.items():
        held = facets.get(name)
        if name in inherit and no_value(held):
            continue
        if no_value(held) or not (str(held).startswith(value) if config.facet(name).kind == "date"
                                  else str(held) == value):
            return False
    return True


def scope_of(facets: Mapping[str, Any], filters: Mapping[str, str]) -> str:
    """The scope of a chunk a step's filters found: COMPANY_WIDE where it holds no value for a filtered facet (only
    an inheriting facet's filter finds such a chunk: it applies to every value), else LOCAL."""
    return COMPANY_WIDE if any(no_value(facets.get(f)) for f in filters) else LOCAL


def _named(hit: Scoped, scoped: list[str]) -> int:
    """How many of the inheriting filtered facets the chunk holds a value for: the more, the more local."""
    return sum(not no_value(hit.facets.get(f)) for f in scoped)


def override_order(hits: Sequence[H], filters: Mapping[str, str], config: Config) -> list[H]:
    """A step's hits with each topic's local chunks above its company-wide ones: the chunks of one topic (one
    policy key) keep the places they hold in the ranking, the more local first, and no other chunk moves."""
    scoped = inheriting(filters, config)
    if not scoped:
        return list(hits)
    places: dict[str, list[int]] = {}
    for n, h in enumerate(hits):
        if h.policy:
            places.setdefault(h.policy, []).append(n)
    out = list(hits)
    for held in places.values():
        ranked = sorted((hits[n] for n in held), key=lambda h: -_named(h, scoped))  # stable: score order within
        for n, h in zip(held, ranked, strict=True):
            out[n] = h
    return out


def scope_trace(hits: Sequence[Scoped], filters: Mapping[str, str], config: Config) -> dict[str, Any]:
    """What answered a step filtered on an inheriting facet: the top chunk's scope and id, and each company-wide
    chunk a local one of its topic ranks above ({company-wide id: local id}); {} for any other step."""
    scoped = inheriting(filters, config)
    if not scoped or not hits:
        return {}
    top = hits[0]
    first: dict[str, Scoped] = {}
    overridden: dict[str, str] = {}
    for h in hits:
        if not h.policy:
            continue
        lead = first.setdefault(h.policy, h)
        if _named(h, scoped) < _named(lead, scoped):
            overridden[h.id] = lead.id
    return {"answered": scope_of(top.facets, filters), "by": top.id, "overrides": overridden}
