"""Text normalisation shared by extraction, skeletons and keys (offline and online alike)."""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections.abc import Iterable

# Month names and abbreviations, case-folded -> the month's number ("sept" too): how dates and names read months
MONTHS = ({name.casefold(): i for i, name in enumerate(calendar.month_name) if name}
          | {abbr.casefold(): i for i, abbr in enumerate(calendar.month_abbr) if abbr} | {"sept": 9})
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u2028-\u202e\ufeff]")
# Invisible inside a word: a soft hyphen ("Ber\u00adlin"), zero-width (non-)joiners, the word joiner.
_JOINERS = re.compile(r"[\u00ad\u200c\u200d\u2060]")
_NON_WORD = re.compile(r"[^\w{}]+")
# The Unicode hyphen (and the non-breaking one, which NFKC makes it) is "-": "non\u2011birth parent" is "non-birth
# parent", never "non" and a "birth parent". So is a dash or minus sign between two letters ("non\u2013birth"); one
# between digits stays ("2025\u20132026" is a range).
_HYPHEN = str.maketrans({"\u2010": "-"})
_DASH_IN_WORD = re.compile(r"(?<=[^\W\d_])[\u2012\u2013\u2014\u2212](?=[^\W\d_])")


def fold(text: str) -> str:
    """NFKC, hyphens made "-", accents stripped, case folded, control characters made spaces and invisible joiners
    removed, whitespace collapsed.

    Character offsets in the result are what constraint spans refer to.
    """
    return fold_cased(text).casefold()  # case folding maps no character to or from whitespace


def fold_cased(text: str) -> str:
    """`fold` without the case folding: where names are read by their capitals (`schemas.entity`)."""
    if not text.isascii():  # ASCII is already NFKC and has no combining marks
        text = _DASH_IN_WORD.sub("-", unicodedata.normalize("NFKC", text).translate(_HYPHEN))
        text = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    if not text.isprintable():  # every control character is unprintable; most questions skip the pass
        text = _CONTROL.sub(" ", _JOINERS.sub("", text))
    # str.split() and the regex \s agree on what whitespace is (both use str.isspace)
    return " ".join(text.split())


def words(text: str) -> str:
    """Folded text with punctuation removed: the form skeletons are compared in."""
    return folded_words(fold(text))


def folded_words(folded: str) -> str:
    """`words` of a text that is already folded."""
    return " ".join(_NON_WORD.sub(" ", folded).split())


_LETTERS = re.compile(r"[^\W\d_]+")


def letter_runs(text: str) -> list[str]:
    """The runs of letters of a text, in order: its words without digits, marks or apostrophes."""
    return _LETTERS.findall(text)


def plain_words(texts: Iterable[str]) -> set[str]:
    """The words the texts write in lower case somewhere (casefolded): ordinary words, not names."""
    found: set[str] = set()
    for text in texts:
        found.update(w for w in letter_runs(text or "") if w.islower())
    return {w.casefold() for w in found}


def opens_sentence(text: str, start: int) -> bool:
    """Whether `text[start:]` opens a sentence, a heading or a quote: nothing before it but white space, or a
    mark that ends one (". ", "? ", ": ", a line break) or opens one ("(", a quote). A capital there says
    nothing of a name."""
    before = text[:start].rstrip()
    return not before or before[-1] in ".!?:\n\"'("
