"""A bridge shape's term: what the corpus ties to one facet value, published with the shape (shapes.parquet,
column `bridge`); mining finds it (`tasks.mine.bridges`), the rule writer plans with it.

The plan stage also publishes the terms whose bridge shapes it routed to a split (`bridge_terms.json`, `served`):
a question no one logged that names one of them, and no category value, gets the bridge plan for its own words
(`tasks.plan.class_planner`). A term comes from the log's recurring shapes and the corpus's ties, never from a
list; the routes measured for its shapes decide whether it is served."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemas.class_routes import SPLITS
from schemas.config import Config
from schemas.files import BRIDGE_TERMS
from schemas.plan import PLAN_WORDS
from schemas.text import fold, words

MIN_LETTERS = 3  # shorter words ("it", "hr") are too often something else


@dataclass(frozen=True)
class Bridge:
    """The term a shape names, the facet its chunks tie it to, the value per year ("" without a year), the chunks
    that place it, and whether the corpus writes it as a name (a capital inside a sentence: "the Ledger")."""

    term: str
    facet: str
    ties: dict[str, str]
    chunks: int
    named: bool = False

    def to_json(self) -> str:
        return json.dumps({"term": self.term, "facet": self.facet, "ties": self.ties, "chunks": self.chunks,
                           "named": self.named}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Bridge | None:
        if not text:
            return None
        return cls.from_doc(json.loads(text))

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> Bridge:
        return cls(doc["term"], doc["facet"], dict(doc["ties"]), int(doc["chunks"]), bool(doc.get("named")))

    def is_thing(self) -> bool:
        """Whether the corpus shows the term as a thing rather than a topic: it writes it as a name ("the Ledger
        platform"), or places it at another value in another year (an event held somewhere each year: "the 2026
        engineering offsite"). A topic that one site's chunks happen to hold ("customer"), in one year or in many,
        is neither."""
        return self.named or len({value for year, value in self.ties.items() if year}) >= 2

    def places(self) -> str:
        """Its value per year, as a reader reads it: "2025: Berlin, 2026: Lisbon" (the value alone without a year)."""
        return ", ".join(f"{y}: {v}" if y else v for y, v in sorted(self.ties.items()))

    def reason(self) -> str:
        return (f"names '{self.term}', which {self.chunks} chunk(s) tie to one {self.facet} ({self.places()}) and no "
                f"{self.facet} value: a step must find it")


_TOKEN_SLOT = re.compile(r"\{[a-z_0-9]+\}")


def terms(skeleton: str) -> list[str]:
    """The skeleton's content words and pairs of them side by side, longest first, in text order."""
    runs: list[list[str]] = [[]]
    for w in _TOKEN_SLOT.sub(" | ", skeleton).split():
        w = words(w)
        if not w or w in PLAN_WORDS or len(w) < MIN_LETTERS or not w.isalpha():
            runs.append([])
        else:
            runs[-1].append(w)
    pairs = [f"{a} {b}" for run in runs for a, b in zip(run, run[1:], strict=False)]
    return pairs + [w for run in runs for w in run]


def asked_terms(skeleton: str, values: Collection[str]) -> list[str]:
    """The terms of a skeleton that may name a bridge: no facet value (`values`, folded: `value_words`), and the
    question asks something besides the phrase naming it ("when is the ledger platform's window", not "the ledger
    platform")."""
    return [t for t in terms(skeleton) if t not in values
            and (span := phrase(skeleton, t)) is not None and asks_more(skeleton, span)]


def value_words(values: Mapping[str, Iterable[str]], config: Config) -> set[str]:
    """The folded values (the lexicon's, `Lexicon.values`) and aliases of every facet: no bridge's term is one."""
    return {fold(str(v)) for vals in values.values() for v in vals} | {
        fold(a) for f in config.facets for a in f.aliases}


def phrase(text: str, term: str) -> tuple[int, int] | None:
    """The token span (start, end) in `text` (words and slots, one space apart) of the phrase naming the term:
    the term with the words and slots beside it up to a function word ("at the {year_1} engineering offsite"
    -> "{year_1} engineering offsite"). None when the text does not hold the term."""
    tokens, want = text.split(), term.split()
    at = next((i for i in range(len(tokens) - len(want) + 1) if tokens[i:i + len(want)] == want), None)
    if at is None:
        return None
    start, end = at, at + len(want)
    while start > 0 and tokens[start - 1] not in PLAN_WORDS:
        start -= 1
    while end < len(tokens) and tokens[end] not in PLAN_WORDS:
        end += 1
    return start, end


def asks_more(text: str, span: tuple[int, int]) -> bool:
    """Whether the text asks something besides the phrase: a word outside it that is no function word or slot."""
    tokens = text.split()
    return any(t not in PLAN_WORDS and not _TOKEN_SLOT.fullmatch(t) for t in tokens[:span[0]] + tokens[span[1]:])


def served(measured: Iterable[tuple[Bridge, str]]) -> dict[str, dict[str, Any]]:
    """Term -> its bridge and route, from (bridge, route) of each sound bridge shape: a term is served where more of
    its shapes were routed to a split than to one search (the route most of them took) and the bridge its split
    shapes hold most is a thing (`Bridge.is_thing`)."""
    by_term: dict[str, list[tuple[Bridge, str]]] = {}
    for bridge, route in measured:
        by_term.setdefault(bridge.term, []).append((bridge, route))
    out: dict[str, dict[str, Any]] = {}
    for term, rows in sorted(by_term.items()):
        splits = [(b, r) for b, r in rows if r in SPLITS]
        if 2 * len(splits) <= len(rows):
            continue
        held = json.loads(Counter(b.to_json() for b, _ in splits).most_common(1)[0][0])
        if Bridge.from_doc(held).is_thing():
            routes = [r for _, r in splits]
            route = max(SPLITS, key=lambda r: (routes.count(r), r == "split"))
            out[term] = {"bridge": held, "route": route, "shapes": len(rows), "split_shapes": len(splits)}
    return out


def write_served(path: Path, terms_served: Mapping[str, Mapping[str, Any]]) -> None:
    path.write_text(json.dumps(terms_served, indent=2, sort_keys=True), encoding="utf-8")


def read_served(run_dir: Path) -> dict[str, dict[str, Any]]:
    """A publication's served bridge terms (each entry as `served` writes it; another is left out); none for a
    publication made before them."""
    path = run_dir / BRIDGE_TERMS.name
    if not path.exists():
        return {}
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {term: entry for term, entry in doc.items() if _well_formed(entry)} if isinstance(doc, dict) else {}


def _well_formed(entry: Any) -> bool:
    if not isinstance(entry, dict) or entry.get("route") not in SPLITS or not isinstance(entry.get("bridge"), dict):
        return False
    try:
        Bridge.from_doc(entry["bridge"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return False
    return True


def served_bridge(skeleton: str, named: Collection[str], kinds: Mapping[str, str],
                  terms_served: Mapping[str, Mapping[str, Any]], values: Collection[str]
                  ) -> tuple[Bridge, str] | None:
    """(bridge, route) of the first served term a skeleton asks about (`asked_terms`), where it names no category
    value (`named`: its slots' facets) and, for a thing placed at another value each year, names a year; else
    None."""
    if not terms_served or any(kinds.get(f) == "category" for f in named):
        return None
    has_year = any(kinds.get(f) == "year" for f in named)
    for term in asked_terms(skeleton, values):
        doc = terms_served.get(term)
        if doc is None:
            continue
        bridge = Bridge.from_doc(doc["bridge"])
        if has_year or len(set(bridge.ties.values())) == 1:
            return bridge, str(doc["route"])
    return None
