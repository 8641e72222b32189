"""Step answers: the value an extracting step reads off its top chunks. The one implementation used offline
(routing, evaluation) and online (a service that runs a plan with an `extract` step against its own index)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from schemas.extract import Lexicon
from schemas.plan import PLAN_WORDS
from schemas.text import words


class Evidence(Protocol):
    """What an extractor reads of a chunk: its text and its facet metadata."""

    @property
    def text(self) -> str: ...

    @property
    def facets(self) -> Mapping[str, Any]: ...


class ExtractRefused(RuntimeError):
    """The extractor found no value or several: it refuses to guess."""


def extract_value(hits: Sequence[Evidence], facet: str, top: int, lexicon: Lexicon) -> str:
    """The one value of `facet` named in the top chunks (metadata first, then text); refuse on 0 or 2+."""
    found: set[str] = set()
    for h in hits[:top]:
        meta = h.facets.get(facet)
        if meta not in (None, ""):
            found.add(str(meta))
        else:
            found |= {c.value for c in lexicon.extract(h.text) if c.facet == facet}
    if len(found) != 1:
        raise ExtractRefused(f"found {len(found)} {facet} values in the top {top} chunks: {sorted(found)}")
    return found.pop()


# A name is an answer when at least this many of the extracting step's top chunks hold it.
NAME_AGREEMENT = 3
_NAME = re.compile(r"(?<![\w’'])[A-Z][\w’'-]*[a-z][\w’'-]*")
# Words that open sentences with a capital but name nothing (PLAN_WORDS holds the other function words).
_OPENERS = frozenset({"but", "and", "yet", "so", "if", "then", "now", "still", "also", "however", "meanwhile",
                      "instead", "though", "although", "because", "while", "she", "he", "they", "his", "her",
                      "him", "them", "us", "me", "one", "some", "such", "last", "next", "first"})


def extract_name(hits: Sequence[Evidence], top: int, query: str) -> str:
    """The capitalised name most of the top chunks hold (each chunk counts once) that the query does not: the
    company or person a question asks for without naming it. Refuse when no name is in NAME_AGREEMENT chunks
    or two names tie. Function words that open a sentence ("But", "She") are no names."""
    asked = set(words(query).split()) | PLAN_WORDS | _OPENERS
    counts: Counter[str] = Counter()
    for h in hits[:top]:
        names = {n.rstrip("’'-").removesuffix("’s").removesuffix("'s") for n in _NAME.findall(h.text)}
        counts.update(n for n in names if len(n) >= 3 and not set(words(n).split()) & asked)
    ranked = counts.most_common(2)
    if not ranked or ranked[0][1] < NAME_AGREEMENT or (len(ranked) == 2 and ranked[1][1] == ranked[0][1]):
        raise ExtractRefused(f"no name shared by {NAME_AGREEMENT} of the top {top} chunks: {ranked}")
    return ranked[0][0]
