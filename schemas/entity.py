"""Entity slots: the names a question is about (a person, a film, a company), read from how it writes them.

With `entity_slots: true` in the config, a run of capitalised words that is not a facet value, a year or a
qualifier becomes an `{entity}` placeholder, so "How many movies did Stanley Kubrick direct?" and "How many
movies did Ridley Scott direct?" share one skeleton and one shape, keyed by `entity_1`. An entity fills query
text only, never a filter: no facet holds it.

What counts as a name is decided from the question and the corpus's plain words alone (the words the corpus
writes in lower case somewhere, `schemas.text.plain_words`, published with each run), so mining and lookup read
the same names from the same question:

- a run of words that each open with a capital letter (or are a number inside such a run: "Apollo 11"), joined
  by single spaces or by a lower-case particle between two capitalised words ("Bank of America", "Vincent van
  Gogh"); a possessive "'s" ends it ("Network's" is "Network");
- the first word of a sentence is capitalised by convention: it starts a run only when it is no plain word
  ("Kubrick directed what?"), else the run starts at the next word;
- a run of one plain word ("which Artist is ...") is no name; a run of two or more words is ("Prime Time").

A lower-case name ("spy kids") stays text: the rule reads capitals only, so a question without a capital letter
holds no entity (the SQL fast path relies on that, `schemas.extract_sql`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

ENTITY = "entity"

# A word: letters or digits, with inner apostrophes, periods, hyphens, plus signs or ampersands ("L'Enfant",
# "Start+Flug", "Jean-Luc"); an initial keeps its period ("E." in "Stephen E. Ambrose").
_WORD = re.compile(r"[^\W_]+(?:['\u2019.+&-][^\W_]+)*(?:\.(?=\s|$))?")
_POSSESSIVE = re.compile(r"['\u2019]s$", re.IGNORECASE)
# Lower-case particles inside a name, between two capitalised words.
PARTICLES = frozenset({"of", "the", "de", "la", "le", "du", "del", "della", "da", "di", "van", "von", "der", "den",
                       "y", "al", "el", "bin", "ibn", "upon", "on"})
_SENTENCE_END = re.compile(r"[.!?:;]")  # between two words: the second opens a sentence
# Words that open a question or a request, plain whatever the corpus writes: "Are" in "Are Ang Lee and ..." is no
# part of a name even in a corpus that never writes "are".
OPENERS = frozenset({
    "a", "an", "the", "is", "are", "was", "were", "am", "be", "do", "does", "did", "has", "have", "had", "can",
    "could", "will", "would", "shall", "should", "may", "might", "must", "who", "whom", "whose", "what", "which",
    "where", "when", "why", "how", "in", "on", "at", "for", "of", "to", "from", "by", "with", "about", "and", "or",
    "but", "if", "i", "i'm", "my", "we", "our", "you", "your", "it", "its", "this", "that", "these", "those",
    "there", "please", "name", "list", "tell", "give", "show", "find", "count", "compare", "between", "both",
})


def _capitalised(word: str) -> bool:
    return word[:1].isupper()


def entity_spans(text: str, plain: Collection[str]) -> list[tuple[int, int]]:
    """(start, end) of each name in `text` (normalised but not case-folded: `schemas.text.fold_cased`), in order.
    `plain`: the corpus's plain words, case-folded."""
    if text.islower() or text == text.lower():  # no capital: no name (most of a log, and fast to tell)
        return []
    words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        start, end = words[i]
        word = text[start:end]
        if not _capitalised(word):
            i += 1
            continue
        first_of_sentence = i == 0 or _SENTENCE_END.search(text, words[i - 1][1] - 1, start) is not None
        if first_of_sentence and _plain(word, plain):
            i += 1
            continue
        run = [i]
        j = i + 1
        while j < len(words):
            gap = text[words[j - 1][1]:words[j][0]]
            if gap != " " or _POSSESSIVE.search(text[words[j - 1][0]:words[j - 1][1]]):
                break
            nxt = text[words[j][0]:words[j][1]]
            if _capitalised(nxt) or nxt.isdigit():
                run.append(j)
                j += 1
                continue
            # a particle between two capitalised words
            if (nxt in PARTICLES and j + 1 < len(words) and text[words[j][1]:words[j + 1][0]] == " "
                    and _capitalised(text[words[j + 1][0]:words[j + 1][1]])):
                run += [j, j + 1]
                j += 2
                continue
            break
        i = j
        begin, finish = words[run[0]][0], words[run[-1]][1]
        name = text[begin:finish]
        if possessive := _POSSESSIVE.search(name):
            finish -= len(possessive.group(0))
        if len(run) == 1 and _plain(text[begin:finish], plain):
            continue  # "Artist" mid-sentence: a plain word written in capitals
        spans.append((begin, finish))
    return spans


def _plain(word: str, plain: Collection[str]) -> bool:
    """Whether a word is one the corpus writes in lower case (any of its letter runs: "Start+Flug" is two)."""
    if word.casefold() in OPENERS:
        return True
    runs = re.findall(r"[^\W\d_]+", word.casefold())
    return bool(runs) and all(r in plain for r in runs)
