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
- a run of one plain word ("which Artist is ...") is no name; a run of two or more words is ("Prime Time");
- a run of month or weekday names and numbers is a date, no name ("October 27", "Monday").

The corpus's titles (a chunk's metadata `title`, `Index.names`, published with each run as names.json) are names
it knows: at a capitalised word, a title the text spells from that word on (case aside, whole words: "Laie, Hawaii",
"Bible translations into Tibetan") is one name, unless the run of capitalised words read from there is as long;
capitals right after it go on with the name. Without them, "Laie, Hawaii" would be two names and its question a
comparison. A title of common words in sentence case ("Prime minister") is no name; from a sentence's first plain
word, only a title holding a word that is no plain word is read, or one the text writes in the title's own case as
the whole run of capitals from there ("Drew Fuller stared in ..."); from a question opener ("The", "What"), only
one written in the title's own case (`KnownNames`).

A lower-case name ("spy kids") stays text: the rule reads capitals only, and a title is only read from a capitalised
word, so a question without a capital letter holds no entity (the SQL fast path relies on that,
`schemas.extract_sql`).
"""

from __future__ import annotations

import calendar
import json
import re
from collections.abc import Collection, Iterable
from pathlib import Path

from schemas.files import NAMES
from schemas.text import MONTHS, fold_cased

ENTITY = "entity"
TITLE = "title"  # the metadata key of a document's title: the corpus's titles are names it knows

# A word: letters or digits, with inner apostrophes, periods, hyphens, plus signs or ampersands ("L'Enfant",
# "Start+Flug", "Jean-Luc").
_WORD = re.compile(r"[^\W_]+(?:['\u2019.+&-][^\W_]+)*")
_POSSESSIVE = re.compile(r"['\u2019]s$", re.IGNORECASE)
# Lower-case particles inside a name, between two capitalised words.
PARTICLES = frozenset({"of", "the", "de", "la", "le", "du", "del", "della", "da", "di", "van", "von", "der", "den",
                       "y", "al", "el", "bin", "ibn", "upon", "on"})
SUFFIXES = frozenset({"Jr", "Sr", "II", "III", "IV"})  # a name's generational suffix, after a comma
_TOPIC_BREAK = re.compile(r"[.!?:;\n]")  # between a word and a topic's title: a sentence or a line ends
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


_LETTERS = re.compile(r"[^\W\d_]+")  # a word's runs of letters ("Start+Flug" is two)
# A title's trailing sense in brackets, which questions leave out: "Kiss and Tell (1945 film)"; and punctuation
# at its edges, which may be the question's ("Who directed What About Bob?", "...Earth to the Dandy Warhols...").
SENSE = re.compile(r"\s*\([^()]*\)$")
_EDGES = re.compile(r"^[^\w(]+|[^\w)]+$")


def read_names(run_dir: Path) -> list[str]:
    """A publication's names (the corpus's titles); none for a publication written before they were kept."""
    path = run_dir / NAMES.name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


def title_forms(title: str) -> set[str]:
    """The forms a question may write a corpus title in, case-folded, as `KnownNames` reads them: as the corpus
    writes it and without a trailing sense in brackets, less punctuation at its edges."""
    return {fold_cased(_EDGES.sub("", t)).casefold() for t in (title, SENSE.sub("", title))}


class KnownNames:
    """The corpus's titles as names a question may write, indexed by their first word (case-folded), so reading
    them costs one dictionary look-up per capitalised word.

    Each title is read as the corpus writes it and without a trailing sense in brackets, less punctuation at its
    edges, which a question's own may be ("Kiss and Tell (1945 film)" is also "Kiss and Tell"; "What About Bob?"
    is "What About Bob"). A title of
    plain words only that capitalises none but its first ("Prime minister", "Aircraft carrier", the song "Tell
    me"; "Water") names a topic, not a thing: it is left out, so "Who is the Prime minister of France?" keeps one
    name (in a document's text it is read where written mid-sentence in its own capitals: `mentions`). A title of
    plain words that capitalises more ("Act of War: Direct Action", "Piano Sonata in C major") is
    kept, but read from a sentence's first word only when it holds a word the corpus never writes in lower case,
    and from a question opener only as the title writes it (`match`)."""

    def __init__(self, titles: Iterable[str] = (), plain: Collection[str] = ()) -> None:
        forms: dict[str, bool] = {}  # form -> whether it holds a word that is no plain word
        left_out: set[str] = set()
        for title in titles:
            for form in (_EDGES.sub("", title), _EDGES.sub("", SENSE.sub("", title))):
                form = fold_cased(form)
                if form in forms or form in left_out:
                    continue
                letters = _LETTERS.findall(form.casefold())
                common = all(w in plain for w in letters)
                if common and (not letters or not any(_capitalised(w) for w in _WORD.findall(form)[1:])):
                    left_out.add(form)  # common words in sentence case, or one common word: a topic
                    continue
                forms[form] = not common
        self._by_first = _by_first(forms)
        # the topics' own index, read only in a document's text, where a title written mid-sentence in its own
        # capitals is the title ("the Australian soap opera Neighbours"): `mentions(..., topics=True)`
        self._topics = _by_first({form: False for form in left_out - forms.keys()})

    def __bool__(self) -> bool:
        return bool(self._by_first)

    def __len__(self) -> int:
        return sum(len(forms) for lengths in self._by_first.values() for _, forms in lengths)

    def match(self, text: str, start: int, word: str, proper: bool = False, cased: bool = False,
              topics: bool = False) -> int:
        """The end of the longest title `text` spells from `start` (where the word `word` opens), case aside and
        ending where a word ends (a possessive "'s" after it is no part of it); 0 for none. `proper`: only a title
        that holds a word the corpus never writes in lower case (one read from a sentence's first word, whose
        capital is the sentence's); `cased`: only a title the text writes in its own case; `topics`: the titles
        left out as topics instead ("Neighbours", "Prime minister")."""
        table = self._topics if topics else self._by_first
        key = word.casefold()
        forms = table.get(key)
        if forms is None and (possessive := _POSSESSIVE.search(word)):
            forms = table.get(key[:-len(possessive.group(0))])
        room = len(text) - start
        for length, spelled in forms or ():
            if length > room:
                continue
            end = start + length
            found = spelled.get(text[start:end].casefold())
            if (found is not None and (found[0] or not proper) and (not cased or text[start:end] == found[1])
                    and _word_ends(text, end)):
                return end
        return 0

    def mentions(self, text: str) -> list[str]:
        """The titles a document's `text` writes, each as written in it, once, in order of first mention: at a
        capitalised word, the longest title spelled from there in the title's own case ("Two Dollar Radio", not
        the "two" of "two dollars"); a title left out as a topic only where it is written so mid-sentence, after
        a word in lower case on the same line ("the soap opera Neighbours"; not "Water is ...", nor the "Water" of
        "Thames Water")."""
        found: dict[str, None] = {}
        after = 0  # the end of the last title read: a title inside it is no mention of its own
        last = None  # the word before
        for m in _WORD.finditer(text):
            word, prev, last = m.group(0), last, m
            if m.start() < after or not _capitalised(word):
                continue
            end = self.match(text, m.start(), word, cased=True)
            if not end and prev is not None and prev.group(0).islower() and not _TOPIC_BREAK.search(
                    text, prev.end(), m.start()):
                end = self.match(text, m.start(), word, cased=True, topics=True)
            if end:
                found.setdefault(text[m.start():end])
                after = end
        return list(found)


def _by_first(forms: dict[str, bool]) -> dict[str, tuple[tuple[int, dict[str, tuple[bool, str]]], ...]]:
    """first word, case-folded -> (length as written -> case-folded form -> (proper, the form as written)), the
    longest first (the longest title the text spells wins); case folding may lengthen ("ß"). A look-up slices the
    text once per length, not once per title: "The ..." may open thousands."""
    by_first: dict[str, dict[int, dict[str, tuple[bool, str]]]] = {}
    for form, proper in forms.items():
        if first := _WORD.match(form):  # a form opens with a word ("(film)" alone does not)
            by_length = by_first.setdefault(first.group(0).casefold(), {})
            by_length.setdefault(len(form), {})[form.casefold()] = (proper, form)  # proper: of its folded words
    return {k: tuple(sorted(v.items(), reverse=True)) for k, v in by_first.items()}


NO_NAMES = KnownNames()


def _word_ends(text: str, at: int) -> bool:
    """Whether a word of `text` ends at `at` (or a possessive "'s" follows it)."""
    if at >= len(text):
        return True
    if text[at].isalnum():
        return False
    if text[at] in "'\u2019.+&-" and at + 1 < len(text) and text[at + 1].isalnum():  # inside a word ("L'Enfant")
        return bool(_POSSESSIVE.search(text[at:at + 2])) and (at + 2 == len(text) or not text[at + 2].isalnum())
    return True


def _capitalised(word: str) -> bool:
    return word[:1].isupper()


def entity_spans(text: str, plain: Collection[str], names: KnownNames = NO_NAMES) -> list[tuple[int, int]]:
    """(start, end) of each name in `text` (normalised but not case-folded: `schemas.text.fold_cased`), in order.
    `plain`: the corpus's plain words, case-folded; `names`: the corpus's titles (`KnownNames`)."""
    if text == text.lower():  # no capital: no name (most of a log, and fast to tell)
        return []
    words = [m.span() for m in _WORD.finditer(text)]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(words):
        start, end = words[i]
        if not text[start].isupper():  # the word is not `_capitalised` (a word is never empty)
            i += 1
            continue
        word = text[start:end]
        first_of_sentence = i == 0 or _SENTENCE_END.search(text, words[i - 1][1] - 1, start) is not None
        plain_first = first_of_sentence and _plain(word, plain)
        # from a question opener, a title written in its own case: "The Devil's Rejects", not "What about Bob
        # Dylan?" for the film "What About Bob?"
        title_end = names.match(text, start, word, proper=plain_first,
                                cased=plain_first and word.casefold() in OPENERS) if names else 0
        if plain_first and not title_end and names and word.casefold() not in OPENERS:
            # a title of plain words that is the run of capitals from here, as the title writes it: "Drew Fuller
            # stared in ...", "Thumb Wrestling Federation is ..." (without it: "Fuller", "Wrestling Federation")
            whole = names.match(text, start, word, cased=True)
            if whole > end and whole == _name_end(text, words, _run_end(text, words, i)):
                title_end = whole
        if plain_first and not title_end:
            i += 1
            continue
        j = _run_end(text, words, i)
        finish = _name_end(text, words, j)
        # a known title longer than the capitalised run: "Laie, Hawaii", not "Laie"; or as long, from a sentence's
        # first plain word, which alone would not start a name
        if title_end > finish or (plain_first and title_end == finish):
            j = _after(words, i, title_end)
            if words[j - 1][1] == title_end:  # capitals right after the title go on with the name
                j = _run_end(text, words, j - 1)
                finish = max(title_end, _name_end(text, words, j))
            else:  # the title ends inside a word: before its possessive ("Laie, Hawaii's")
                finish = title_end
            spans.append((start, finish))
            i = j
            continue
        if plain_first:  # the first word of a sentence, capitalised by convention: the run starts after it
            i += 1
            continue
        one, i = j == i + 1, j
        if one and _plain(text[start:finish], plain):
            continue  # "Artist" mid-sentence: a plain word written in capitals
        if _dated(text[start:finish]):
            continue  # "October 27", "Monday": a day, no name
        spans.append((start, finish))
    return spans


# Months and weekdays (as `schemas.extract` reads dates), written in capitals: a run of them and numbers is a date
CALENDAR = frozenset(MONTHS) | {day.casefold() for day in calendar.day_name}


def _dated(run: str) -> bool:
    """Whether a run of capitalised words holds only month or weekday names and numbers ("October 27", "Monday";
    not "August Rush")."""
    found = _WORD.findall(run)
    return any(w.casefold() in CALENDAR for w in found) and all(w.casefold() in CALENDAR or w.isdigit()
                                                                 for w in found)


def _run_end(text: str, words: list[tuple[int, int]], i: int) -> int:
    """The index after the last word of the run of capitalised words that goes on from word `i`."""
    j = i + 1
    while j < len(words):
        gap, last = text[words[j - 1][1]:words[j][0]], text[words[j - 1][0]:words[j - 1][1]]
        nxt = text[words[j][0]:words[j][1]]
        # the name's last word: "Deltha Lee O'Neal, III"; not after a one-word name or a numeral, which list
        # ("Rocky, II", "World War I, II")
        if gap == ", " and nxt in SUFFIXES and j - i >= 2 and last not in SUFFIXES and len(last) > 1:
            return j + 1
        # one space apart, or after an initial's period ("Stephen E. Ambrose"); a sentence's ends the name
        if not (gap == " " or (gap == ". " and len(last) == 1 and last.isupper())) or _POSSESSIVE.search(last):
            break
        if _capitalised(nxt) or nxt.isdigit():
            j += 1
            continue
        # a particle between two capitalised words
        if (nxt in PARTICLES and j + 1 < len(words) and text[words[j][1]:words[j + 1][0]] == " "
                and _capitalised(text[words[j + 1][0]:words[j + 1][1]])):
            j += 2
            continue
        break
    return j


def _name_end(text: str, words: list[tuple[int, int]], j: int) -> int:
    """Where the name whose last word is `j - 1` ends: a possessive "'s" is no part of it ("Network's")."""
    start, end = words[j - 1]
    possessive = _POSSESSIVE.search(text, start, end)
    return possessive.start() if possessive else end


def _plain(word: str, plain: Collection[str]) -> bool:
    """Whether a word is one the corpus writes in lower case (any of its letter runs: "Start+Flug" is two)."""
    if word.casefold() in OPENERS:
        return True
    runs = _LETTERS.findall(word.casefold())
    return bool(runs) and all(r in plain for r in runs)


def _after(words: list[tuple[int, int]], i: int, end: int) -> int:
    """The index of the first word from `i` on that starts at or after `end`."""
    while i < len(words) and words[i][0] < end:
        i += 1
    return i
