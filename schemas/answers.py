"""Step answers: the value an extracting step reads off its top chunks. The one implementation used offline
(routing, evaluation) and online (a service that runs a plan with an `extract` step against its own index)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from schemas.entity import KnownNames
from schemas.extract import Lexicon
from schemas.plan import PLAN_WORDS
from schemas.text import fold_cased, words


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
    company or person a question asks for without naming it. A name of several words ("Sam Altman") is the
    phrase its words make in just as many chunks as the most frequent of them. Refuse when no name is in
    NAME_AGREEMENT chunks or two names tie. Function words that open a sentence ("But", "She") are no names."""
    asked = set(words(query).split()) | PLAN_WORDS | _OPENERS
    singles: Counter[str] = Counter()
    phrases: Counter[tuple[str, ...]] = Counter()
    for h in hits[:top]:
        runs = _name_runs(h.text, asked)
        singles.update({w for run in runs for w in run})
        phrases.update({run[i:j] for run in runs for i in range(len(run)) for j in range(i + 2, len(run) + 1)})
    ranked = singles.most_common()
    if not ranked or ranked[0][1] < NAME_AGREEMENT:
        raise ExtractRefused(f"no name shared by {NAME_AGREEMENT} of the top {top} chunks: {ranked[:2]}")
    top_count = ranked[0][1]
    tied = {w for w, n in ranked if n == top_count}
    whole = sorted((p for p, n in phrases.items() if n == top_count and tied <= set(p)), key=lambda p: (-len(p), p))
    if whole:
        return " ".join(whole[0])
    if len(tied) > 1:
        raise ExtractRefused(f"{len(tied)} names tie at {top_count} of the top {top} chunks: {sorted(tied)[:4]}")
    return ranked[0][0]


# Titles a chain's s2 may search for at once: the page of what a question names links the thing it describes and,
# often, one other page ("Drew Fuller" writes the series "Charmed" and the character "Trevor LeBlanc"); both are
# searched, and each brings its page. Chosen on the HotpotQA dev half (BENCHMARKS.md).
TITLES_MOST = 2


# A sentence's end: a mark after two lower-case letters or digits, then a capital: not an initial ("Stephen E.
# Ambrose", "U.S. Army") nor an abbreviation that opens with a capital ("St. Louis", "Mr. Smith").
_SENTENCE = re.compile(r"(?<=[a-z\d]{2}[.!?])\s+(?=[A-Z\"'(])")


def extract_titles(hits: Sequence[Evidence], top: int, query: str, names: KnownNames) -> list[str]:
    """The corpus titles (`KnownNames`) the top chunks write that the query does not: the thing a question
    describes without naming it ("the film that was shot in Leland in 1986"), read off the page of what it does
    name. A title sharing a content word with the query is the query's own. One title, or up to `TITLES_MOST`
    (each a candidate its own page confirms or not; the step's answer joins them by "and"). Where the chunks
    write more, the titles of the sentence that shares the most of the query's content words ("... Sergio Agüero
    was given the FIFA U-20 Golden Shoe ..." for "the receiver of the FIFA U-20 Golden Shoe"); refuse on none or
    still more: no guess."""
    asked = set(words(query).split()) - PLAN_WORDS
    found = _titles([h.text for h in hits[:top]], asked, names)
    if len(found) > TITLES_MOST:
        found = _best_sentence_titles(hits[:top], asked, names)
    if not 1 <= len(found) <= TITLES_MOST:
        raise ExtractRefused(f"found {len(found)} titles the query does not name in the top {top} chunks: "
                             f"{list(found)[:4]}")
    return list(found)


def _titles(texts: Sequence[str], asked: set[str], names: KnownNames) -> dict[str, None]:
    """The titles the texts write that share no content word with the query, once, in order, read in the form
    titles and questions are read in (`fold_cased`: "Sergio Agüero" is "Sergio Aguero")."""
    found: dict[str, None] = {}
    for text in texts:
        for title in names.mentions(fold_cased(text)):
            if not set(words(title).split()) & asked:
                found.setdefault(title)
    return found


def _best_sentence_titles(hits: Sequence[Evidence], asked: set[str], names: KnownNames) -> dict[str, None]:
    """The titles of the sentences sharing the most content words with the query (none where none shares one)."""
    sentences = [s for h in hits for s in _SENTENCE.split(h.text)]
    shared = [len(set(words(s).split()) & asked) for s in sentences]
    best = max(shared, default=0)
    return _titles([s for s, n in zip(sentences, shared, strict=True) if n == best], asked, names) if best else {}


def _name_runs(text: str, asked: set[str]) -> list[tuple[str, ...]]:
    """The names in a chunk's text as runs of capitalised words one space apart: ("Sam", "Altman"). A word
    the query asks, a short one or a function word breaks a run; so does a possessive or trailing mark, which
    ends its word's run ("Acme’s Ohio plant": Acme, then Ohio), so each run is a phrase of the text."""
    runs: list[tuple[str, ...]] = []
    run: list[str] = []
    end = -2  # where the last word ended: none yet
    for m in _NAME.finditer(text):
        raw = m.group()
        name = raw.rstrip("’'-").removesuffix("’s").removesuffix("'s")
        if m.start() != end + 1 or text[end] != " ":  # not one space after the last word
            run = _close(run, runs)
        if len(name) >= 3 and not set(words(name).split()) & asked:
            run.append(name)
        else:
            run = _close(run, runs)
        if name != raw:
            run = _close(run, runs)
        end = m.end()
    _close(run, runs)
    return runs


def _close(run: list[str], runs: list[tuple[str, ...]]) -> list[str]:
    if run:
        runs.append(tuple(run))
    return []
