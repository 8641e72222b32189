"""Bridge terms: words of a question that name no facet value, but a thing the corpus ties to one.

A recurring shape that names no category value may name a thing (an event, a system, a project) whose chunks
each name one value of a category facet, the same one in every chunk of a year: "the 2026 engineering offsite"
takes place in Lisbon, "the Ledger platform" is hosted at Tallinn. Such a shape is a bridge: a first step finds
the thing and code reads the value from its chunk (`schemas.answers.extract_value`, refusing to guess), the
second searches under that value. The ties are read from the index's chunks every night, for the words of that
night's shapes only: nothing is listed in the code or the config.

A term is a word of the skeleton that is not a function word (`schemas.plan.PLAN_WORDS`), or two such words
side by side. A chunk's value is its metadata value, else the one value its text names (`Lexicon.extract`). A
term ties when the chunks that hold it and name one value agree within each year, and one of them is about it
(holds it in its opening words: a chunk that only mentions "lunch" is no chunk about a thing), and at least half
the chunks holding it name one value (a word most chunks use without a place, "new", places nothing). Of a shape's
terms that tie, the one most often placed is taken, then one the corpus writes as a name ("the Ledger platform":
"ledger" over "incident reporting"). A chunk that holds the
term in its opening words and no value (a company-wide rule about it) or two values (a guide about it naming
every office) breaks the tie, so a topic with a company-wide rule, or one every office writes about, never ties;
one that only mentions the term further on places it nowhere and leaves the tie alone. Values that differ by year
tie only a shape with a year.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from typing import Any

from schemas.bridge import Bridge, asked_terms, value_words
from schemas.config import Config
from schemas.extract import Lexicon
from schemas.text import words
from tasks.index.ordinary import name_uses

OPENING_WORDS = 15  # a chunk whose first words hold a term is about it
MIN_PLACED = 0.5  # share of the chunks holding a term that must name one value: most mentions place the thing


def find_bridges(shapes: list[dict[str, Any]], chunks: Iterable[dict[str, Any]], lexicon: Lexicon,
                 config: Config, plain: Collection[str] = ()) -> dict[str, Bridge]:
    """Shape id -> its bridge, for the recurring shapes that name no category value and a term that ties.
    `chunks`: rows with `text`, each category facet and the year facet (the index's columns); `plain`: the
    corpus's words in lower case (`Index.plain_words`), which a text names as values as the index read them."""
    cats = [f.name for f in config.facets if f.kind == "category"]
    year = next((f.name for f in config.facets if f.kind == "year"), None)
    kinds = {f.name: f.kind for f in config.facets}
    values = value_words(lexicon.values, config)
    wanted: dict[str, list[str]] = {}
    for s in shapes:
        named = [f for f in s["signature"].split("|", 1)[0].split(",") if f]
        if s["recurring"] and cats and not any(kinds.get(f) == "category" for f in named):
            wanted[s["shape_id"]] = asked_terms(s["skeleton"], values)
    needed = {t for ts in wanted.values() for t in ts}
    if not needed:
        return {}
    # term -> facet -> year -> values; term -> chunks holding it; (term, facet) pairs a chunk broke
    seen: dict[str, dict[str, dict[str, set[str]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(set)))
    count: dict[str, int] = defaultdict(int)
    broken: set[tuple[str, str]] = set()
    about: dict[str, bool] = defaultdict(bool)  # term -> whether a chunk naming one value opens with it
    placed: dict[tuple[str, str], int] = defaultdict(int)  # (term, facet) -> chunks holding it that name one value
    names: set[str] = set()  # terms a chunk writes as a name, with a capital inside a sentence ("the Ledger")
    for row in chunks:
        text = words(row["text"] or "")
        grams = _grams(text) & needed
        if not grams:
            continue
        opening = _grams(" ".join(text.split()[:OPENING_WORDS])) & grams
        named_in_text: dict[str, set[str]] | None = None
        when = str(row.get(year) or "") if year else ""
        for facet in cats:
            value = row.get(facet)
            if value in (None, ""):
                if named_in_text is None:
                    named_in_text = defaultdict(set)
                    for c in lexicon.written_values(row["text"] or "", plain):
                        named_in_text[c.facet].add(c.value)
                found = named_in_text.get(facet, set())
            else:
                found = {str(value)}
            for t in grams:
                if len(found) == 1:
                    seen[t][facet][when] |= found
                    about[t] |= t in opening
                    placed[(t, facet)] += 1
                elif t in opening:  # a chunk about the thing that places it nowhere, or everywhere
                    broken.add((t, facet))
        for t in grams:
            count[t] += 1
            if t not in names and name_uses([row["text"] or ""], t, first=True)[0]:
                names.add(t)
    out: dict[str, Bridge] = {}
    for s in shapes:
        has_year = year is not None and year in s["signature"].split("|", 1)[0].split(",")
        for t in wanted.get(s["shape_id"], []):
            tie = _tie(t, seen, broken, has_year) if about[t] else None
            if tie is not None and placed[(t, tie[0])] / count[t] >= MIN_PLACED:
                rank = (placed[(t, tie[0])] / count[t], t in names)
                best = out.get(s["shape_id"])
                if best is None or rank > (best.chunks / count[best.term], best.term in names):
                    out[s["shape_id"]] = Bridge(t, tie[0], tie[1], placed[(t, tie[0])], t in names)
    return out


def _tie(term: str, seen: dict[str, dict[str, dict[str, set[str]]]], broken: set[tuple[str, str]],
         has_year: bool) -> tuple[str, dict[str, str]] | None:
    """The facet and its value per year the term ties to, or None."""
    for facet, by_year in sorted(seen.get(term, {}).items()):
        if (term, facet) in broken or any(len(v) != 1 for v in by_year.values()):
            continue
        ties = {y: next(iter(v)) for y, v in by_year.items()}
        if len(set(ties.values())) == 1 or has_year:
            return facet, ties
    return None


def _grams(text: str) -> set[str]:
    ws = text.split()
    return set(ws) | {f"{a} {b}" for a, b in zip(ws, ws[1:], strict=False)}


def mark_bridges(shapes: list[dict[str, Any]], bridges: dict[str, Bridge]) -> None:
    """Each shape's `bridge` (JSON or None); a shape of one need that names a tied term becomes a bridge."""
    for s in shapes:
        b = bridges.get(s["shape_id"])
        if b is None or s.get("type") not in ("single", "bridge"):
            s["bridge"] = None
            continue
        s["bridge"] = b.to_json()
        if s["type"] == "single":
            s["type"], s["reason"] = "bridge", b.reason()
