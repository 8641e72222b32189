"""Clause splits: a long question asks for several facts, each in its own clause.

A slotted skeleton is cut into clauses at connective words (`planning.clause_words`); a clause keeps at least
`planning.clause_min_words` content words, shorter pieces join the clause before them. The question's slots
form groups, one per part: a facet named more than once starts a new group at each repeat, in text order
(`{source_1} on {published_date_1} and {source_2} on {published_date_2}` is two groups); a facet named once
applies to every group. Each clause is sent to the group where its best evidence scores highest (measured
against the index with the shape's sampled values, no labels), and the plan has one step per clause, steps
of different groups interleaved so that a round robin merge gives each group its share of the budget. A
question splits by clause only when two or more of its clauses find evidence at or above the null floor: the
clauses of a question the corpus cannot answer find none (MultiHop-RAG: 5 null questions of 33 qualify, 360
of 390 others).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from schemas.plan import Plan, Step

_SLOT = re.compile(r"\{([a-z_]+)_\d+\}")
_FUNCTION_WORDS = frozenset({  # not content: a clause needs words beyond these
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "about", "as", "and", "or", "but",
    "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "do", "does", "did", "its", "it",
    "their", "his", "her", "this", "that", "these", "those", "which", "who", "whom", "what", "when", "where",
    "how", "both"})

Reach = Callable[[str, dict[str, str]], float]  # (clause, filters with slots) -> best evidence score


def clauses(text: str, connectives: list[str], min_words: int) -> list[str]:
    """The clauses of a slotted skeleton, slots and connectives removed."""
    if not connectives:
        return []
    alternatives = "|".join(re.escape(c) for c in sorted(connectives, key=lambda c: (-len(c), c)))
    pieces = re.split(rf"\b(?:{alternatives})\b", _SLOT.sub(" ", text))
    out: list[str] = []
    lead: list[str] = []  # short pieces before the first clause: they open it
    for piece in pieces:
        words = piece.split()
        content = [w for w in words if w not in _FUNCTION_WORDS]
        if len(content) >= min_words:
            out.append(" ".join([*lead, *words]))
            lead = []
        elif out and content:
            out[-1] += " " + " ".join(words)
        elif content:
            lead += words
    return out or ([" ".join(lead)] if lead else [])  # no piece long enough: the whole text is one clause


def slot_groups(text: str) -> list[dict[str, str]]:
    """facet -> slot per part, in text order (see the module doc)."""
    slots = re.findall(r"\{([a-z_]+_\d+)\}", text)
    facet_of = {s: s.rsplit("_", 1)[0] for s in slots}
    counts: dict[str, int] = {}
    for s in slots:
        counts[facet_of[s]] = counts.get(facet_of[s], 0) + 1
    shared = {facet_of[s]: s for s in slots if counts[facet_of[s]] == 1}
    groups: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for s in slots:
        f = facet_of[s]
        if f in shared:
            continue
        if f in current:
            groups.append(current)
            current = {}
        current[f] = s
    if current:
        groups.append(current)
    return [{**g, **shared} for g in groups] or ([shared] if shared else [])


def clause_scores(parts: list[str], groups: list[dict[str, str]], reach: Reach) -> list[list[float]]:
    """Per clause, its best evidence score under each group's filters."""
    filters = _filters(groups)
    return [[reach(clause, f) for f in filters] for clause in parts]


def clause_plan(parts: list[str], groups: list[dict[str, str]], scores: list[list[float]],
                fallback: Callable[[int], str], max_steps: int) -> Plan:
    """One step per clause, filtered to the group where it reaches the best evidence (`clause_scores`); a group
    no clause went to searches `fallback(group index)`. Steps of different groups alternate; at most
    `max_steps`."""
    filters = _filters(groups)
    assigned: list[list[str]] = [[] for _ in groups]
    for clause, row in zip(parts, scores, strict=True):
        assigned[row.index(max(row))].append(clause)
    queries = [a or [fallback(i)] for i, a in enumerate(assigned)]
    order = [(i, q[rank]) for rank in range(max(map(len, queries))) for i, q in enumerate(queries) if rank < len(q)]
    return Plan(steps=[Step(id=f"s{n}", query=query, filters=filters[i])
                       for n, (i, query) in enumerate(order[:max_steps], 1)])


def _filters(groups: list[dict[str, str]]) -> list[dict[str, str]]:
    return [{facet: "{" + slot + "}" for facet, slot in g.items()} for g in groups]
