"""Clause splits: a long question asks for several facts, each in its own clause.

A slotted skeleton is cut into clauses at connective words (`planning.clause_words`); a clause keeps at least
`planning.clause_min_words` content words (words outside PLAN_WORDS and `planning.frame_words`), shorter
pieces join a neighbour. The question's slots form groups, one per part. Facets named more than once and
equally often pair up by position (`{source_1} and {source_2} on {published_date_1} and {published_date_2}` is
two groups); otherwise a repeat starts a new group, in text order. A facet named once applies to every group.
Each clause is sent to the group where its best evidence scores highest (measured against the index with the
shape's sampled values, no labels; a group no clause went to searches the clause of its own best evidence), and
the plan has one step per clause, steps of different groups interleaved so that a round robin merge gives each
group its share of the budget. The rule writer splits by clause only when two or more clauses find evidence at
or above the null floor (the clauses of a question the corpus cannot answer rarely do: `git log -p BENCHMARKS.md`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

from schemas.plan import CONSTRAINT_SLOT, PLAN_WORDS, Extract, Plan, Step, slots_by_facet
from schemas.text import words as folded
from tasks.plan.readable import tidy

Reach = Callable[[str, dict[str, str]], float]  # (clause, filters with slots) -> best evidence score


def clauses(text: str, connectives: list[str], min_words: int, frame_words: Collection[str] = ()) -> list[str]:
    """The clauses of a slotted skeleton, slots and connectives removed, and tidied (`readable.tidy`: "articles
    discussed in {source}" leaves no dangling "in"). `frame_words` (the question's framing, "as mentioned by
    {source}") count as no content."""
    ignored = PLAN_WORDS | {w for f in frame_words for w in folded(f).split()}
    forms = sorted({f for c in connectives if (f := folded(c))}, key=lambda c: (-len(c), c))  # as skeletons are
    if not forms:
        return []
    alternatives = "|".join(re.escape(c) for c in forms)
    pieces = re.split(rf"\b(?:{alternatives})\b", CONSTRAINT_SLOT.sub(" ", text))
    out: list[str] = []
    lead: list[str] = []  # short pieces before the first clause: they open it
    for piece in pieces:
        words = piece.split()
        content = [w for w in words if w not in ignored]
        if len(content) >= min_words:
            out.append(" ".join([*lead, *words]))
            lead = []
        elif out and content:
            out[-1] += " " + " ".join(words)
        elif content:
            lead += words
    if not out:
        return [tidy(" ".join(lead))] if lead else []  # no piece long enough: the whole text is one clause
    return list(dict.fromkeys(map(tidy, out)))  # a clause said twice is searched once


def slot_groups(text: str) -> list[dict[str, str]]:
    """facet -> slot per part, in text order (see the module doc)."""
    by_facet = slots_by_facet(text)
    shared = {f: ss[0] for f, ss in by_facet.items() if len(ss) == 1}
    repeated = {f: ss for f, ss in by_facet.items() if len(ss) > 1}
    groups: list[dict[str, str]] = []
    if len({len(ss) for ss in repeated.values()}) == 1:  # equally often: pair by position
        n = len(next(iter(repeated.values())))
        groups = [{f: ss[i] for f, ss in repeated.items()} for i in range(n)]
    else:
        current: dict[str, str] = {}
        for f, pos in CONSTRAINT_SLOT.findall(text):
            s = f"{f}_{pos}"
            if f in shared:
                continue
            if f in current:
                groups.append(current)
                current = {}
            current[f] = s
        if current:
            groups.append(current)
    return [{**g, **shared} for g in groups] or ([shared] if shared else [])


NO_CHUNK = -1.0  # what `Reach` gives for filters no chunk matches


def fit_shared(groups: list[dict[str, str]], text: str, reach: Reach, facets: set[str]) -> list[dict[str, str]]:
    """A value named once filters every group; one of `facets` is dropped from a group that no chunk matches
    with it but some chunk does without it ("the Sporting News report on December 5 and the CBSSports.com
    report": CBSSports.com published nothing that day), while another group keeps it."""
    shared = {f: ss[0] for f, ss in slots_by_facet(text).items() if len(ss) == 1 and f in facets}
    if len(groups) < 2 or not shared:
        return groups
    out = [dict(g) for g in groups]
    for facet in shared:
        empty = [i for i, g in enumerate(out) if reach(text, _filters([g])[0]) <= NO_CHUNK
                 and reach(text, _filters([{f: s for f, s in g.items() if f != facet}])[0]) > NO_CHUNK]
        if len(empty) < len(out):
            for i in empty:
                del out[i][facet]
    return out


def clause_scores(parts: list[str], groups: list[dict[str, str]], reach: Reach) -> list[list[float]]:
    """Per clause, its best evidence score under each group's filters."""
    filters = _filters(groups)
    return [[reach(clause, f) for f in filters] for clause in parts]


def clause_plan(parts: list[str], groups: list[dict[str, str]], scores: list[list[float]], max_steps: int) -> Plan:
    """One step per clause, filtered to the group where it reaches the best evidence (`clause_scores`); a group
    no clause went to searches the clause of its own best evidence ("{source_2} and {source_3} articles imply
    ...": one clause for two groups). Steps of different groups alternate; at most `max_steps`."""
    filters = _filters(groups)
    assigned: list[list[str]] = [[] for _ in groups]
    for clause, row in zip(parts, scores, strict=True):
        assigned[row.index(max(row))].append(clause)
    own_best = [parts[max(range(len(parts)), key=lambda c: scores[c][g])] for g in range(len(groups))]
    queries = [a or [own_best[g]] for g, a in enumerate(assigned)]
    order = [(i, q[rank]) for rank in range(max(map(len, queries))) for i, q in enumerate(queries) if rank < len(q)]
    return Plan(steps=[Step(id=f"s{n}", query=query, filters=filters[i])
                       for n, (i, query) in enumerate(order[:max_steps], 1)])


NAME_TOP = 10  # chunks of the whole question a name bridge reads for the name


def asks_for_name(text: str, openers: list[str]) -> bool:
    """Whether a skeleton opens with one of `openers` ("which", "who", ...): it asks for something it does not
    name, which its clauses describe."""
    first = text.split(maxsplit=1)[:1]
    return bool(first) and first[0] in {folded(w) for w in openers}


def name_bridge(text: str, plan: Plan, max_steps: int) -> Plan:
    """A clause plan that first finds the name the question asks for: s1 searches the whole skeleton and
    extracts the name most of its top chunks share (schemas/answers.extract_name); every clause step then
    searches with that name in front ("{s1} clause"), so the chunks about it rank first. A refused name leaves
    the clause as it was."""
    steps = [Step(id="s1", query=text, extract=Extract(kind="name", top=NAME_TOP))]
    steps += [Step(id=f"s{n}", query=tidy("{s1} " + s.query), depends_on=["s1"], filters=s.filters)
              for n, s in enumerate(plan.steps[:max_steps - 1], 2)]
    return Plan(steps=steps)


def _filters(groups: list[dict[str, str]]) -> list[dict[str, str]]:
    return [{facet: "{" + slot + "}" for facet, slot in g.items()} for g in groups]
