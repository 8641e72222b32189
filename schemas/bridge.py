"""A bridge shape's term: what the corpus ties to one facet value, published with the shape (shapes.parquet,
column `bridge`); mining finds it (`tasks.mine.bridges`), the rule writer plans with it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from schemas.plan import PLAN_WORDS


@dataclass(frozen=True)
class Bridge:
    """The term a shape names, the facet its chunks tie it to, and the value per year ("" without a year)."""

    term: str
    facet: str
    ties: dict[str, str]
    chunks: int

    def to_json(self) -> str:
        return json.dumps({"term": self.term, "facet": self.facet, "ties": self.ties, "chunks": self.chunks},
                          sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Bridge | None:
        if not text:
            return None
        doc = json.loads(text)
        return cls(doc["term"], doc["facet"], doc["ties"], doc["chunks"])

    def reason(self) -> str:
        shown = ", ".join(f"{y}: {v}" if y else v for y, v in sorted(self.ties.items()))
        return (f"names '{self.term}', which {self.chunks} chunk(s) tie to one {self.facet} ({shown}) and no "
                f"{self.facet} value: a step must find it")


_TOKEN_SLOT = re.compile(r"\{[a-z_0-9]+\}")


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
