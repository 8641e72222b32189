"""Scrub personal data from question text before anything is stored: typed placeholders replace it."""

from __future__ import annotations

import re
from collections.abc import Iterable

# Order matters: emails before ids, ids before phone numbers, phone numbers before bare digit runs.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    # the local part takes every character RFC 5322 allows ("o'brien", "a=b"), not only letters, dots and +-
    ("email", re.compile(r"[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)+")),
    ("url", re.compile(r"https?://\S+|www\.\S+", re.IGNORECASE)),
    ("id", re.compile(r"\b[A-Za-z]{2,5}[-_#]?\d{4,}\b")),
    ("id", re.compile(r"\b(?:employee|staff|personnel|badge)\s*(?:id|number|no\.?|#)?\s*:?\s*#?\d{4,}\b",
                      re.IGNORECASE)),
    ("phone", re.compile(r"(?<![\w-])\+?\(?\d(?:[\d\s().-]*\d){8,}(?![\w-])")),
    ("id", re.compile(r"\b\d{6,}\b")),
    ("iban", re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){3,7}\b")),
]
# Runs of years and ISO dates look like phone numbers ("2024 2025 2026", "2023-11-24 2024-01-01"); they stay.
_YEAR_OR_DATE = r"(?:19|20)[0-9]{2}(?:-[0-9]{2}-[0-9]{2})?"
_DATES_ONLY = re.compile(_YEAR_OR_DATE + r"(?:[\s.-]+" + _YEAR_OR_DATE + ")*")
# A personal name: two or more capitalised words, joined by a space or a hyphen, with lower-case particles
# in between ("Sanne de Vries", "Mei-Ling Chau", "Ludwig van der Berg").
_NAME = (r"[A-Z\u00c0-\u00de][a-z\u00df-\u024f]+(?:(?:-|\s+(?:(?:de|da|das|do|dos|du|del|della|der|den|di|"
         r"la|le|van|von|ten|ter|bin|al)\s+)*)[A-Z\u00c0-\u00de][a-z\u00df-\u024f]+)+")
_CUE_NAME = re.compile(
    r"\b(?P<cue>(?:my|our)\s+(?:manager|colleague|boss|lead|partner|wife|husband)|i am|i'm|name is|"
    r"this is|called|from|with|ask)\s+(?P<name>" + _NAME + ")"
)
# A name that opens the text (or a sentence) and introduces the asker: "Jan Kowalski from HR told me ...".
_LEAD_NAME = re.compile(r"(?:^|(?<=[.!?:;]\s))(?P<cue>)(?P<name>" + _NAME + r")(?=\s+(?:from|here)\b)")


# Every pattern above needs a digit, an "@", a URL, or a name (two capitalised words, particles between).
_MAYBE_PII = re.compile(r"[0-9@]|://|www\.|" + _NAME)


class Scrubber:
    """Replaces emails, URLs, phone numbers, long ids and listed names with {email}, {phone}, {id}, {name}.

    `keep` holds words that look like names but are lexicon values (offices, sources) and stay.
    """

    def __init__(self, names: Iterable[str] = (), keep: Iterable[str] = ()) -> None:
        listed = sorted({n.strip() for n in names if n.strip()}, key=len, reverse=True)
        self._names = (
            re.compile(r"\b(?:" + "|".join(re.escape(n) for n in listed) + r")\b", re.IGNORECASE)
            if listed else None
        )
        self._keep = {k.casefold() for k in keep}

    def __call__(self, text: str) -> str:
        if self._names is None and not _MAYBE_PII.search(text):
            return text  # no digit, @, URL or two capitalised words in a row: nothing to scrub
        for kind, pattern in _PATTERNS:
            text = pattern.sub(_phone if kind == "phone" else "{" + kind + "}", text)
        if self._names is not None:
            text = self._names.sub("{name}", text)
        text = _CUE_NAME.sub(self._cue_name, text)
        return _LEAD_NAME.sub(self._cue_name, text)

    def _cue_name(self, m: re.Match[str]) -> str:
        name = m.group("name")
        if any(part.casefold() in self._keep for part in re.split(r"[\s-]+", name)):
            return m.group(0)
        return f"{m.group('cue')} {{name}}" if m.group("cue") else "{name}"


def _phone(m: re.Match[str]) -> str:
    return m.group(0) if _DATES_ONLY.fullmatch(m.group(0)) else "{phone}"
