"""Scrub personal data from question text before anything is stored: typed placeholders replace it."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path

from schemas.digest import fingerprint
from schemas.files import PLAIN_WORDS
from schemas.text import fold


def read_plain_words(run_dir: Path) -> list[str]:
    """A publication's plain words; none for a publication written before they were kept."""
    path = run_dir / PLAIN_WORDS.name  # the index's `plain_words`, for the online scrubber
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


# Order matters: emails before ids, ids before phone numbers, phone numbers before bare digit runs.
# Each pattern has a cheap gate that any match needs; a replacement never creates what a gate looks for.
_DIGIT = re.compile(r"\d")
_RUN4 = re.compile(r"\d{4}").search


def _has_url(text: str) -> bool:
    return "://" in text or "www." in text.lower()


def _nine_digits(text: str) -> bool:
    return len(_DIGIT.findall(text)) >= 9


# A phone number: a digit, then at least 8 more, each after optional separators. Separators and digits are
# disjoint, so a failed match no longer tries every way to split a digit run (the old pattern did); input
# length is capped before (lookup's MAX_QUESTION_CHARS, mining's max_query_chars).
PHONE = re.compile(r"(?<![\w-])\+?\(?\d(?:[\s().-]*\d){8,}(?![\w-])")
# the local part takes every character RFC 5322 allows ("o'brien", "a=b"), not only letters, dots and +-
_LOCAL = r"[\w.!#$%&'*+/=?^`{|}~-]"
EMAIL = re.compile(_LOCAL + r"+@[\w-]+(?:\.[\w-]+)+")
PATTERNS: list[tuple[str, re.Pattern[str], Callable[[str], object]]] = [
    ("email", EMAIL, lambda t: "@" in t),
    ("url", re.compile(r"https?://\S+|www\.\S+", re.IGNORECASE), _has_url),
    ("id", re.compile(r"\b[A-Za-z]{2,5}[-_#]?\d{4,}\b"), _RUN4),
    ("id", re.compile(r"\b(?:employee|staff|personnel|badge)\s*(?:id|number|no\.?|#)?\s*:?\s*#?\d{4,}\b",
                      re.IGNORECASE), _RUN4),
    ("phone", PHONE, _nine_digits),
    ("id", re.compile(r"\b\d{6,}\b"), _RUN4),
    ("iban", re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){3,7}\b"), re.compile(r"[A-Z]{2}\d{2}").search),
]
# Runs of years and ISO dates look like phone numbers ("2024 2025 2026", "2023-11-24 2024-01-01"); they stay.
YEAR_OR_DATE = r"(?:19|20)[0-9]{2}(?:-[0-9]{2}-[0-9]{2})?"
DATE_SEPARATORS = r"[\s.-]+"
_DATES_ONLY = re.compile(YEAR_OR_DATE + r"(?:" + DATE_SEPARATORS + YEAR_OR_DATE + ")*")
# A personal name: two or more capitalised (or upper-case) words, joined by a space or a hyphen, with lower-case
# particles in between ("Sanne de Vries", "Mei-Ling Chau", "Ludwig van der Berg", "Łukasz Nowak", "JAN KOWALSKI"),
# in Latin script (the scrubber reads the text in NFKC: composed accents, ASCII for full-width letters).


def _letters(test: Callable[[str], bool]) -> str:
    """A character class body of the Latin letters (up to U+024F) that pass `test`, as \\u ranges."""
    codes = [c for c in range(0x41, 0x250) if chr(c).isalpha() and test(chr(c))]
    runs: list[list[int]] = []
    for c in codes:
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return "".join(f"\\u{a:04x}" + (f"-\\u{b:04x}" if b > a else "") for a, b in runs)


_UPPER, _LOWER = _letters(str.isupper), _letters(str.islower)
# An upper-case word starts where its run of capitals does: tried from inside a long run ("AAAA..."), each start
# would scan the rest of the run again (quadratic; 0.25 s for 4,000 capitals).
_NAME_WORD = f"(?:[{_UPPER}][{_LOWER}]+|(?<![{_UPPER}])[{_UPPER}]{{2,}})"
NAME = (_NAME_WORD + r"(?:(?:-|\s+(?:(?:de|da|das|do|dos|du|del|della|der|den|di|"
        r"la|le|van|von|ten|ter|bin|al)\s+)*)" + _NAME_WORD + ")+")
# A cue before a name, in lower case anywhere ("asking for my colleague ..."), and capitalised where a sentence
# opens ("This is ..."), or "I am" anywhere. A capitalised cue inside a sentence is not one: in a question typed in
# Title Case, "... Working From Home In Toronto" names nobody.
_ROLE = r"\s+(?:manager|colleague|boss|lead|partner|wife|husband)(?:\s+(?:is|was))?"  # "my manager is ..."
_CUES = ["my" + _ROLE, "our" + _ROLE, "name is", "this is", "called", "from", "with", "ask"]
_TITLES = ["Dr", "Mr", "Mrs", "Ms", "Mx", "Prof"]
_TITLE = r"(?:\s+(?:" + "|".join(_TITLES) + r")\.?)?"  # kept: "this is Dr. {name}"
_CUE = (r"\b(?:" + "|".join(_CUES) + r"|i am|i'm|I am|I'm)|(?:^|[.!?:;]\s+)(?:"
        + "|".join(c[0].upper() + c[1:] for c in _CUES) + ")")
CUE_NAME = re.compile(r"(?P<cue>(?:" + _CUE + ")" + _TITLE + r")\s+(?P<name>" + NAME + ")")
# One capitalised word after a cue that introduces a person ("Hi, I am Maria", "my manager Sanne said"), unless it
# is a lexicon or function word ("this is Berlin"). An upper-case word ("I am HR") is no name.
_PERSON_CUES = ["my" + _ROLE, "our" + _ROLE, "name is", "this is"]
_PERSON_CUE = (r"\b(?:" + "|".join(_PERSON_CUES) + r"|i am|i'm|I am|I'm)|(?:^|[.!?:;]\s+)(?:"
               + "|".join(c[0].upper() + c[1:] for c in _PERSON_CUES) + ")")
CUE_FIRST_NAME = re.compile(r"(?P<cue>(?:" + _PERSON_CUE + ")" + _TITLE + r")\s+(?P<name>[" + _UPPER + "]["
                            + _LOWER + r"]+)(?![\w'-])")
# A name that opens the text (or a sentence) and introduces the asker: "Jan Kowalski from HR told me ...".
_LEAD_NAME = re.compile(r"(?:^|(?<=[.!?:;]\s))(?P<cue>)(?P<name>" + NAME + r")(?=\s+(?:from|here)\b)")
# A question typed in capitals alone ("MY MANAGER JAN KOWALSKI ASKED ...") shows no name by its case: after a
# strong cue (any case), its next two words are a name unless one is a function word ("THIS IS THE PER DIEM") or
# both are words the corpus writes in lower case ("MY MANAGER APPROVED REMOTE WORK").
_STRONG_CUES = ["my" + _ROLE, "our" + _ROLE, "name is", "this is", "called", "i am", "i'm"]
SHOUTED_CUE = re.compile(r"\b(?:" + "|".join(_STRONG_CUES) + r")\b", re.IGNORECASE)
_SHOUTED_WORD = f"[{_UPPER}]{{2,}}(?:-[{_UPPER}]{{2,}})*"  # "MEI-LING" is one word of a name
_SHOUTED_NAME = re.compile(r"(?P<cue>" + SHOUTED_CUE.pattern + r")\s+(?P<name>" + _SHOUTED_WORD + r"\s+"
                           + _SHOUTED_WORD + r")(?![" + _UPPER + r"-])", re.IGNORECASE)
_FUNCTION_WORDS = frozenset([
    "a", "an", "the", "this", "that", "these", "those", "is", "are", "was", "were", "be", "been", "am", "do", "does",
    "did", "can", "could", "should", "would", "will", "may", "must", "what", "which", "who", "whom", "whose", "how",
    "when", "where", "why", "if", "whether", "in", "on", "at", "of", "for", "to", "from", "with", "by", "about",
    "into", "over", "under", "per", "and", "or", "but", "not", "no", "my", "our", "your", "their", "his", "her",
    "its", "me", "us", "them", "we", "you", "he", "she", "it", "they", "i", "there", "here", "any", "all", "some"
])


# Every pattern above needs a digit (of any script: \\d), an "@" or a URL; the name rules need a name.
MAYBE_PATTERN = re.compile(r"[\d@]|://|www\.", re.IGNORECASE)
_MAYBE_NAME = re.compile(NAME)


class Scrubber:
    """Replaces emails, URLs, phone numbers, long ids and listed names with {email}, {phone}, {id}, {name}.

    `keep` holds words that look like names but are lexicon values (offices, sources) and stay; `plain`, words
    the corpus writes in lower case (`Index.plain_words`): two of them after a cue in capitals are no name.
    """

    def __init__(self, names: Iterable[str] = (), keep: Iterable[str] = (), plain: Iterable[str] = ()) -> None:
        self.names = sorted({n.strip() for n in names if n.strip()}, key=lambda n: (-len(n), n))
        self._names = (
            re.compile(r"\b(?:" + "|".join(re.escape(n) for n in self.names) + r")\b", re.IGNORECASE)
            if self.names else None
        )
        self._keep = {fold(k) for k in keep}
        self._plain = frozenset(w.casefold() for w in plain)

    def digest(self) -> str:
        """A hash of what the scrubber replaces and keeps besides its patterns and plain words (see `scrub`)."""
        return fingerprint([self.names, sorted(self._keep)], sort_keys=False)

    def __call__(self, text: str) -> str:
        return self.scrub(text)[0]

    def scrub(self, text: str) -> tuple[str, bool]:
        """The scrubbed text, and whether the capitals name rule read it: only then does the result depend on the
        plain words (the extraction memos keep no such question, so their fingerprint leaves the words out)."""
        if not text.isascii():  # "＠" is "@", "２０２６" is "2026", a decomposed "é" one letter, as lookup reads them
            text = unicodedata.normalize("NFKC", text)
        text = replace_patterns(text)
        if self._names is not None:
            text = self._names.sub("{name}", text)
        if _MAYBE_NAME.search(text):  # two capitalised words in a row
            text = CUE_NAME.sub(self._cue_name, text)
            if "from" in text or "here" in text:  # what _LEAD_NAME's lookahead needs
                text = _LEAD_NAME.sub(self._cue_name, text)
        text = CUE_FIRST_NAME.sub(self._first_name, text)
        if shouted(text) and _SHOUTED_NAME.search(text):
            return _SHOUTED_NAME.sub(self._shouted_name, text), True
        return text, False

    def _first_name(self, m: re.Match[str]) -> str:
        word = fold(m.group("name"))  # lexicon words are folded: "Zürich" is "zurich"
        if word in _FUNCTION_WORDS or word in self._keep or m.group("name") in _TITLES:
            return m.group(0)
        return f"{m.group('cue')} {{name}}"

    def _shouted_name(self, m: re.Match[str]) -> str:
        words = re.split(r"[\s-]+", m.group("name"))
        if (any(fold(w) in _FUNCTION_WORDS or fold(w) in self._keep for w in words)
                or all(w.casefold() in self._plain for w in words)):
            return m.group(0)
        return f"{m.group('cue')} {{name}}"

    def _cue_name(self, m: re.Match[str]) -> str:
        """Replace the name, but keep lexicon words at its edges ("Lisbon Jan Kowalski" -> "Lisbon {name}")."""
        parts = re.split(r"([\s-]+)", m.group("name"))  # words at even positions, separators between
        words = parts[::2]
        i, j = 0, len(words)
        while i < j and fold(words[i]) in self._keep:
            i += 1
        while j > i and fold(words[j - 1]) in self._keep:
            j -= 1
        if j - i < 2 or any(fold(w) in self._keep for w in words[i:j]):
            return m.group(0)
        name = "".join(parts[:2 * i]) + "{name}" + "".join(parts[2 * j - 1:])
        return f"{m.group('cue')} {name}" if m.group("cue") else name


PLACEHOLDER = re.compile(r"\{[a-z]+\}")  # what the patterns put in: "{email}" is no lower-case writing


def shouted(text: str) -> bool:
    """Whether a text has no lower-case letter (placeholders aside) and a strong cue (see _SHOUTED_NAME)."""
    return not any(c.islower() for c in PLACEHOLDER.sub("", text)) and SHOUTED_CUE.search(text) is not None


def replace_patterns(text: str) -> str:
    """The scrubber's first step: emails, URLs, ids and phone numbers replaced (names are the second)."""
    if MAYBE_PATTERN.search(text):
        for kind, pattern, gate in PATTERNS:
            if gate(text):
                text = _sub_emails(text) if pattern is EMAIL else pattern.sub(
                    _phone if kind == "phone" else "{" + kind + "}", text)
    return text


# EMAIL's matches in linear time. A match ends an "@" and its domain, and starts where the run of local-part
# characters before that "@" does, or where the match before it ended; EMAIL itself tries each character of a long
# run as a start ("a" * 4000 + "@!" took quadratic time).
_AT_DOMAIN = re.compile(r"@[\w-]+(?:\.[\w-]+)+")
_LOCAL_CHAR = re.compile(_LOCAL)


def email_spans(text: str) -> list[tuple[int, int]]:
    """The spans `EMAIL.finditer(text)` finds."""
    spans: list[tuple[int, int]] = []
    last = 0
    for m in _AT_DOMAIN.finditer(text):
        start = m.start()
        while start > last and _LOCAL_CHAR.match(text, start - 1):
            start -= 1
        if start < m.start():
            spans.append((start, m.end()))
            last = m.end()
    return spans


def _sub_emails(text: str) -> str:
    out, last = [], 0
    for start, end in email_spans(text):
        out += [text[last:start], "{email}"]
        last = end
    return "".join(out) + text[last:]


def _phone(m: re.Match[str]) -> str:
    return m.group(0) if _DATES_ONLY.fullmatch(m.group(0)) else "{phone}"
