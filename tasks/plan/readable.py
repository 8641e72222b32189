"""Step queries a person would write: a question or a keyword query, not the leftovers of cutting one up.

`unreadable` says why a query is not one ("" when it is): no text, a slot left unfilled or empty, a function word
left dangling at an end ("when did invade the"), a gap where a word was cut out ("the of", "did invade the"), or
"this year" in a step whose filter holds the year. A step that asks the question in its own words (a one-step plan)
is judged by its slots and year text alone: what a person typed is a person's query. `check_readable` applies it
to every step of a plan; the plan stage rejects a written template that fails it
(`tasks.plan.check.check_template`), as it rejects an invalid one. `tidy` mends the leftovers the rule writer makes
when it cuts a question up: it drops the dangling or orphaned function words the check names.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from schemas.plan import CONSTRAINT_SLOT, STEP_SLOT, Plan, PlanError

ARTICLES = frozenset({"a", "an", "the"})
PREPOSITIONS = frozenset({
    "of", "in", "on", "at", "for", "to", "from", "by", "with", "about", "into", "onto", "over", "under", "after",
    "before", "during", "since", "within", "without", "between", "per", "than", "as", "via", "through", "against",
    "among", "upon", "towards", "toward"})
CONJUNCTIONS = frozenset({"and", "or", "but", "nor", "vs", "versus", "whereas", "while", "because", "although", "if"})
AUXILIARIES = frozenset({
    "do", "does", "did", "is", "are", "was", "were", "am", "be", "been", "being", "has", "have", "had", "can",
    "could", "will", "would", "shall", "should", "may", "might", "must"})
FUNCTION_WORDS = ARTICLES | PREPOSITIONS | CONJUNCTIONS | AUXILIARIES
# Words after which a preposition or an auxiliary may end a query ("what is Kubrick known for", "where the office
# is"): a question or a relative clause strands them.
_STRANDERS = frozenset({"what", "which", "who", "whom", "whose", "where", "when", "how", "why", "that"})
_OPENERS = frozenset({"and", "or", "but", "nor", "vs", "versus"})  # dangling at the start ("if ..." opens a question)
# "a" is a letter too ("Serie A", "from a to z", "Joshua A. Siegel"): only "the" and "an" dangle or mark a gap.
_CUT = frozenset({"the", "an"})
# "the" or "an" right before one of these marks a word cut out ("the of", "the and", "an is")
_NOT_AFTER_ARTICLE = ARTICLES | CONJUNCTIONS | frozenset({
    "of", "in", "at", "to", "from", "by", "with", "for", "on", "is", "are", "was", "were", "did", "has", "had"})
_DO = frozenset({"do", "does", "did"})
_QUANTIFIERS = frozenset({"both", "all", "each", "either", "neither", "any", "every", "some"})  # "did both the ..."
_RELATIVE_YEAR = re.compile(r"\b(?:this|last|next|current|previous|coming) year\b", re.IGNORECASE)
_TOKEN = re.compile(r"\{[^{}]*\}|[^\W_]+(?:['’-][^\W_]+)*")  # a {slot}, or a word (hyphens and apostrophes inside)


def unreadable(query: str, *, filled: bool = False, year_filter: bool = False, own: bool = False) -> str:
    """Why `query` is no question or keyword query a person would write; "" when it is one.

    A template's query (`filled` False) may hold constraint slots (`{office_1}`) and step slots (`{s1}`); a filled
    plan's only step slots, which code fills when the step runs. `year_filter`: the step's filter holds the year, so
    relative-year text ("this year") would search for words the filter already says. `own`: the query is the
    question's own wording (a one-step plan of the skeleton), whose words a person did write, typos and all: only
    its slots and year text are checked."""
    tokens = _TOKEN.findall(query)
    if not tokens:
        return "no text"
    for t in tokens:
        if t.startswith("{") and not (STEP_SLOT.fullmatch(t) or (not filled and CONSTRAINT_SLOT.fullmatch(t))):
            return f"slot {t} is {'empty' if not t[1:-1].strip() else 'never filled'}"
    if year_filter and (m := _RELATIVE_YEAR.search(query)):
        return f"says {m.group(0)!r}, but its filter holds the year"
    if own:
        return ""
    return _fault([t if t.startswith("{") else t.casefold() for t in tokens])[0]


def _fault(low: list[str]) -> tuple[str, int]:
    """Why the folded words `low` are no query ("" when they are one), and the position of the word to drop to
    mend it: the dangling word, the article before a gap, the "do" left without its subject (-1: none)."""
    if all(t in FUNCTION_WORDS for t in low):
        return "no word but function words", -1
    if low[0] in _OPENERS:
        return f"starts with {low[0]!r}", 0
    last, stranded = low[-1], any(t in _STRANDERS for t in low[:-1])
    if last in _CUT | CONJUNCTIONS or (last in PREPOSITIONS | AUXILIARIES and not stranded):
        return f"ends with {last!r}", len(low) - 1
    for i, (word, after) in enumerate(zip(low, low[1:], strict=False)):
        if word in _CUT and after in _NOT_AFTER_ARTICLE and after != word:  # "the the" is a typo, not a cut
            return f"{word!r} right before {after!r}", i
        if (word in _DO and i + 2 < len(low) and low[i + 2] in _CUT and not after.startswith("{")
                and after not in FUNCTION_WORDS | _QUANTIFIERS):
            return f"{word!r} {after!r} {low[i + 2]!r}: a word is missing", i  # "did invade the": no subject
    return "", -1


def tidy(query: str) -> str:
    """`query` with the leftovers of cutting a question up dropped, word by word, where `unreadable` finds them:
    "the from credit ratings" -> "from credit ratings", "articles discussed in from" -> "articles discussed",
    "does describe the match" -> "describe the match". A query that reads, or that it cannot mend so that it reads,
    is returned as it is (the check refuses the latter)."""
    words = query.split()
    if not unreadable(query) or not all(_TOKEN.fullmatch(w) for w in words):  # punctuation: no word to drop
        return query
    low = [w if w.startswith("{") else w.casefold() for w in words]
    while low:
        why, at = _fault(low)
        if not why or at < 0:
            break
        del words[at], low[at]
    mended = " ".join(words)
    return mended if not unreadable(mended) else query


def check_readable(plan: Plan, year_facet: str | None, *, filled: bool = False, own: Collection[str] = ()) -> None:
    """Raise PlanError("unreadable") naming the first step whose query `unreadable` refuses; `own`: the ids of the
    steps whose query is the question's own wording."""
    for step in plan.steps:
        why = unreadable(step.query, filled=filled, year_filter=year_facet in step.filters, own=step.id in own)
        if why:
            raise PlanError("unreadable", f"{step.id}: query {step.query!r}: {why}")
