"""Conversational follow-ups ("what about Lisbon?"): detected, then resolved into the previous question's shape.

One implementation for mining (each log row against the same user's previous question) and for `lookup`
(against the caller's history): the same history gives the same standalone skeleton, hence the same key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from schemas.config import Mining
from schemas.constraint import QUALIFIER, Constraint
from schemas.extract import Skeleton, fill_skeleton
from schemas.text import words

NO_PREVIOUS = "follow-up with no previous question"
_CHAINED = "the previous question did not resolve: "
MAX_CHAIN = 32  # follow-ups in a row after a standalone question that still resolve (offline and online alike)
CHAIN_TOO_LONG = f"more than {MAX_CHAIN} follow-ups in a row since the last standalone question"
_MEMO = 20_000  # skeletons whose answer a Followups remembers, before it forgets them all
_MEMO_CHARS = 200  # and only skeletons this short: a follow-up is short, a long one is asked again rarely
_EXISTENTIAL = re.compile(r"(?<!\S)(?:is|are|was|were) there(?!\S)")  # "is there a budget" asks, not refers


@dataclass(frozen=True)
class Turn:
    """One question of a conversation: a follow-up or not, and the standalone skeleton it stands for."""

    followup: bool
    standalone: Skeleton | None  # None: a follow-up that could not be resolved
    reason: str = ""

    @property
    def question(self) -> str | None:
        """The standalone question in lexicon words (what a resolved follow-up asks)."""
        return fill_skeleton(self.standalone.text, self.standalone.slots) if self.standalone else None


def topic_words_sql(col: str) -> str:
    """`Followups.topic_words` of a skeleton column in DuckDB SQL (a skeleton's words are single-spaced)."""
    return f"len(list_filter(string_split({col}, ' '), lambda w: w <> '' AND NOT starts_with(w, '{{')))"


class Followups:
    """Which skeletons are follow-ups: learned from the logs, or short and referring back by a cue."""

    def __init__(self, mining: Mining, learned: Iterable[str] = ()) -> None:
        self.learned = frozenset(learned)
        self.max_words = mining.followup_max_words
        cues = sorted({words(c) for c in mining.followup_cues if words(c)}, key=lambda c: (-len(c), c))
        self._cue = re.compile(r"(?<!\S)(?:" + "|".join(map(re.escape, cues)) + r")(?!\S)") if cues else None
        openers = sorted({words(c) for c in mining.followup_openers if words(c)}, key=lambda c: (-len(c), c))
        self._opener = re.compile(r"(?:" + "|".join(map(re.escape, openers)) + r")(?!\S)") if openers else None
        self._memo: dict[str, bool] = {}  # is_followup_text by skeleton: a log repeats its skeletons

    @staticmethod
    def topic_words(text: str) -> int:
        """Words of a skeleton besides its placeholders (`topic_words_sql` in DuckDB)."""
        return sum(not w.startswith("{") for w in text.split())

    def refers_back(self, text: str) -> bool:
        """A cue anywhere ("what about"), or an opener at the start ("and for"; inside, it joins two parts)."""
        if self._opener is not None and self._opener.match(text):
            return True
        return self._cue is not None and self._cue.search(_EXISTENTIAL.sub(" ", text)) is not None

    def is_followup(self, sk: Skeleton) -> bool:
        return self.is_followup_text(sk.text)

    def is_followup_text(self, text: str) -> bool:
        """Learned, or short and referring back; the skeleton text alone decides."""
        found = self._memo.get(text)
        if found is None:
            found = text in self.learned or (self.topic_words(text) <= self.max_words and self.refers_back(text))
            if len(text) <= _MEMO_CHARS:
                if len(self._memo) >= _MEMO:
                    self._memo.clear()
                self._memo[text] = found
        return found

    def resolve(self, prev: Skeleton, fu: Skeleton) -> Turn:
        """The follow-up's values put into the previous question's slots of the same facet, or a refusal."""
        if not fu.constraints:
            return Turn(True, None, "the follow-up names no value to put into the previous question")
        new: dict[str, list[str]] = {}
        for c in fu.constraints:
            new.setdefault(c.facet, []).append(c.value)
        constraints, text = list(prev.constraints), prev.text
        for facet, values in new.items():
            at = [i for i, c in enumerate(constraints) if c.facet == facet]
            if not at:
                return Turn(True, None, f"the previous question has no {facet} slot for {', '.join(values)}")
            if len(at) != len(values):
                named, given = ", ".join(constraints[i].value for i in at), ", ".join(values)
                if len(values) > len(at):
                    return Turn(True, None, f"ambiguous: the follow-up names {len(values)} {facet} values ({given}) "
                                            f"for the previous question's {len(at)} ({named}); which goes where "
                                            "would be a guess")
                return Turn(True, None, f"ambiguous: the previous question names {len(at)} {facet} values "
                                        f"({named}); which one {given} replaces would be a guess")
            for i, value in zip(at, values, strict=True):
                if facet == QUALIFIER:
                    text, n = re.subn(r"(?<!\S)" + re.escape(words(constraints[i].value)) + r"(?!\S)",
                                      words(value), text)
                    if n != 1:
                        return Turn(True, None, f"ambiguous: the previous question's qualifier "
                                                f"{constraints[i].value} is not one slot")
                constraints[i] = Constraint(facet, value)
        return Turn(True, Skeleton(text, tuple(constraints)))


class Conversation:
    """One user's questions in order; each follow-up resolves against the standalone form of the one before."""

    def __init__(self, rules: Followups) -> None:
        self.rules = rules
        self.reset()

    def reset(self, reason: str = NO_PREVIOUS) -> None:
        """Forget the previous question (a new conversation, or one past the follow-up window)."""
        self._prev: Skeleton | None = None
        self._why = reason
        self._chain = 0  # follow-ups since the last standalone question

    def add(self, sk: Skeleton) -> Turn:
        if not self.rules.is_followup(sk):
            turn, self._chain = Turn(False, sk), 0
        elif self._chain >= MAX_CHAIN:  # a lookup reads no further back than this (schemas.cache)
            turn = Turn(True, None, CHAIN_TOO_LONG)
        elif self._prev is None:
            why = self._why if self._why.startswith(_CHAINED) or self._why == NO_PREVIOUS else _CHAINED + self._why
            turn = Turn(True, None, why)
        else:
            turn = self.rules.resolve(self._prev, sk)
        self._chain += turn.followup
        self._prev, self._why = turn.standalone, turn.reason
        return turn
