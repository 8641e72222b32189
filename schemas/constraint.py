"""The constraint: one facet value (or qualifier) named in a question."""

from __future__ import annotations

from dataclasses import dataclass

QUALIFIER = "qualifier"


@dataclass(frozen=True, order=True)
class Constraint:
    """A facet value named in a question, e.g. office=Berlin or year=2026.

    `facet` is a facet name from the config (or "qualifier" for lexicon terms such as
    "second parent"); `value` is the canonical value as a string ("Berlin", "2026").
    `start`/`end` are character offsets into the normalised question, -1 when unknown.
    """

    facet: str
    value: str
    start: int = -1
    end: int = -1

    @property
    def key(self) -> tuple[str, str]:
        return (self.facet, self.value)
