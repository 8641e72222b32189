"""Corpus vocabulary: for each partition (a facet value), the words of the synonym lexicon its chunks use.

Users write "second parent" where the Amsterdam policy says "partner". The synonym lexicon (config
`synonyms`) groups such terms; mining counts which term of a group each partition's chunks use, and a step
filtered to that partition says it in those words. The same rewrite runs offline (cache entries) and online
(a template filled at lookup), from the publication's `vocabulary.json`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from schemas.digest import fingerprint
from schemas.files import VOCABULARY
from schemas.plan import PlanDoc, StepDoc
from schemas.text import fold, words

# facet -> value -> folded term -> occurrences in the partition's chunks
Usage = Mapping[str, Mapping[str, Mapping[str, int]]]


def synonym_groups(synonyms: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Each canonical term with its synonyms, folded, without punctuation, sorted; groups that share a
    term are one group."""
    groups: list[set[str]] = []
    for canonical, terms in sorted(synonyms.items()):
        group = {words(t) for t in (canonical, *terms)} - {""}
        for other in [g for g in groups if g & group]:
            group |= other
            groups.remove(other)
        groups.append(group)
    return sorted(sorted(g) for g in groups if len(g) > 1)


def count_terms(groups: Sequence[Sequence[str]], texts: Iterable[str]) -> dict[str, int]:
    """Whole-word occurrences of every group term in the texts (folded, punctuation removed)."""
    terms = sorted({t for g in groups for t in g}, key=lambda t: (-len(t), t))
    counts = dict.fromkeys(terms, 0)
    if not terms:
        return counts
    pattern = re.compile(r"(?<!\S)(?:" + "|".join(re.escape(t) for t in terms) + r")(?!\S)")
    for text in texts:
        for m in pattern.finditer(words(text)):
            counts[m.group(0)] += 1
    return counts


class Vocabulary:
    """Per partition, which synonym to say instead of a term its chunks never use."""

    def __init__(self, groups: Sequence[Sequence[str]] = (), usage: Usage | None = None) -> None:
        self.groups = [list(g) for g in groups]
        self.usage = {f: {v: dict(c) for v, c in by_value.items()} for f, by_value in (usage or {}).items()}
        self._swaps: dict[tuple[str, str], dict[str, str]] = {}
        for facet, by_value in self.usage.items():
            for value, counts in by_value.items():
                swaps = {}
                for group in self.groups:
                    used = [t for t in group if counts.get(t, 0) > 0]
                    if not used:
                        continue  # the partition says none of them: nothing to learn from it
                    best = min(used, key=lambda t: (-counts[t], t))
                    swaps.update({t: best for t in group if counts.get(t, 0) == 0})
                if swaps:
                    self._swaps[(facet, value)] = swaps
        terms = sorted({t for g in self.groups for t in g}, key=lambda t: (-len(t), t))
        alternatives = "|".join(r"[^\w{}]+".join(map(re.escape, t.split())) for t in terms)
        self._pattern = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE) if terms else None

    def __bool__(self) -> bool:
        return bool(self._swaps)

    def swaps(self, filters: Mapping[str, Any]) -> dict[str, str]:
        """Term -> the partition's word, for the concrete values among a step's filters (slots have none).

        With several filtered facets, only the swaps they agree on, and none whose word another one swaps."""
        found = [s for f, v in sorted(filters.items()) if (s := self._swaps.get((f, str(v))))]
        if len(found) == 1:
            return dict(found[0])
        out: dict[str, str] = {}
        clash: set[str] = set()
        for swaps in found:
            for term, word in swaps.items():
                if out.setdefault(term, word) != word:
                    clash.add(term)
        return {t: w for t, w in out.items() if t not in clash and w not in out}

    def rewrite(self, query: str, filters: Mapping[str, Any]) -> str:
        """The step query with each term its partition never uses replaced by the one it does."""
        swaps = self.swaps(filters) if self._pattern is not None else {}
        if not swaps:
            return query
        assert self._pattern is not None
        text = query if query.isascii() else fold(query)  # terms are folded: "crèche" is "creche"
        return self._pattern.sub(lambda m: swaps.get(words(m.group(0)), m.group(0)), text)

    def apply(self, plan: PlanDoc) -> PlanDoc:
        """A plan (as JSON) with every step's query in its partition's words; the same dict when nothing
        changes."""
        if not self._swaps:
            return plan
        steps: list[StepDoc] = [{**s, "query": self.rewrite(s["query"], s.get("filters") or {})}
                                for s in plan.get("steps", [])]
        if all(a["query"] == b["query"] for a, b in zip(steps, plan.get("steps", []), strict=True)):
            return plan
        return {**plan, "steps": steps}

    def digest(self) -> str:
        """What the rewrite does (its terms and swaps), as a hash: part of a template's signature."""
        swaps = sorted((list(k), sorted(v.items())) for k, v in self._swaps.items())
        return fingerprint([self.groups, swaps], sort_keys=False)

    def to_json(self) -> dict[str, Any]:
        return {"groups": self.groups, "usage": self.usage}

    @classmethod
    def read(cls, run_dir: Path) -> Vocabulary:
        """The publication's vocabulary; an empty one for a publication written before it existed."""
        path = run_dir / VOCABULARY.name
        if not path.exists():
            return cls()
        doc = json.loads(path.read_text(encoding="utf-8"))
        return cls(doc.get("groups", []), doc.get("usage", {}))
