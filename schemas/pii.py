"""Scrub personal data from question text before anything is stored: typed placeholders replace it.

What is found how, in `replace_patterns`' order, then the name rules (`Scrubber.scrub`):

- {email}, {url}: patterns; a spelled-out email ("greta dot lindqvist at example dot com", "jan [at] example
  [dot] org") by a pattern of its spellings.
- {iban}, {card}, {national_id}, {phone}: identifiers with check digits or a numbering plan are recognised by a
  maintained library, not by hand-written patterns. A loose pattern finds a candidate (two letters and two
  digits, a run of nine or more digits with separators, a token of letters and digits); python-stdnum validates
  IBANs (ISO 13616 mod 97, each country's length and structure), card numbers (Luhn) and national ids (US SSN
  and ITIN, NL BSN, DE tax id, PL PESEL, FR NIR, BE national number, CA SIN, CH AHV number, SE personnummer, ES
  DNI/NIE, IT codice fiscale); its `format` gives an id's customary grouping, so "1112.22.333" is a BSN and
  "030 12345678" no PESEL. phonenumbers (Google's libphonenumber metadata) validates phone numbers, with "+" or
  "00" in their country's plan, else in `PHONE_REGIONS`' plans. A word before the number ("ssn", "card", "call",
  "employee") says which kind to try first. A long number no library accepts is an {id}.
  Why libraries: checksums tell an id from a phone number where a pattern cannot (SSNs, BSNs, cards and tax ids
  were typed {phone}; a spaced IBAN lost its digits to the phone rule, which came first), and the tables behind
  them (IBAN lengths, numbering plans, which change every few months) are maintained upstream. Their versions
  are part of `Scrubber.digest`, so memos of another release's judgement are not reused.
- {passport}: no check digit and no library; the token after "passport" (in several languages). UK NINO
  ({national_id}): no check digit and no python-stdnum module; HMRC's format (two letters, six digits, A-D).
- {id}: employee and other prefixed ids, long numbers, and tokens of letters and four or more digits.
- {name}: listed names; a name after a cue, capitalised, in a question of capitals, or in lower case ("my
  manager jan kowalski approved ..."), where two words the corpus writes in lower case are no name.

SQL (`schemas.extract_sql`) runs PATTERNS as Python does and leaves every question a Python-only step may touch
(`PYTHON_ONLY`) to Python.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType

import phonenumbers
import stdnum
from stdnum import iban, luhn
from stdnum.be import nn
from stdnum.ca import sin
from stdnum.ch import ssn as ch_ssn
from stdnum.de import idnr
from stdnum.es import dni, nie
from stdnum.exceptions import InvalidLength, ValidationError
from stdnum.fr import nir
from stdnum.it import codicefiscale
from stdnum.nl import bsn
from stdnum.pl import pesel
from stdnum.se import personnummer
from stdnum.us import itin, ssn

from schemas.digest import fingerprint
from schemas.files import PLAIN_WORDS
from schemas.text import fold


def read_plain_words(run_dir: Path) -> list[str]:
    """A publication's plain words; none for a publication written before they were kept."""
    path = run_dir / PLAIN_WORDS.name  # the index's `plain_words`, for the online scrubber
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []


# The patterns SQL runs as Python does (`schemas.extract_sql`), in the order `replace_patterns` applies them;
# the library-checked steps (`_STEPS`) come between them. Each pattern has a cheap gate that any match needs; a
# replacement never creates what a gate looks for.
_RUN4 = re.compile(r"\d{4}").search


def _has_url(text: str) -> bool:
    return "://" in text or "www." in text.lower()


# A run of digits: a digit, then at least 8 more, each after optional separators, and a "+" or "(" before it.
# Separators and digits are disjoint, so a failed match does not try every way to split a digit run; input length
# is capped before (lookup's MAX_QUESTION_CHARS, mining's max_query_chars). Each run is judged by the libraries
# (`_number_kind`): a phone number, a card, a national id, else an {id}.
PHONE = re.compile(r"(?<![\w-])\+?\(?\d(?:[\s().-]*\d){8,}(?![\w-])")
# the local part takes every character RFC 5322 allows ("o'brien", "a=b"), not only letters, dots and +-
_LOCAL = r"[\w.!#$%&'*+/=?^`{|}~-]"
EMAIL = re.compile(_LOCAL + r"+@[\w-]+(?:\.[\w-]+)+")
_URL = ("url", re.compile(r"https?://\S+|www\.\S+", re.IGNORECASE), _has_url)
_EMPLOYEE_CUES = ("employee", "staff", "personnel", "badge")


def _has_employee_cue(text: str) -> bool:
    """A run of four digits and a cue word; casefold() folds every letter IGNORECASE matches to the cues' ("ſ")."""
    if not _RUN4(text):
        return False
    folded = text.casefold()
    return any(cue in folded for cue in _EMPLOYEE_CUES)


_EMPLOYEE_ID = ("id", re.compile(r"\b(?:" + "|".join(_EMPLOYEE_CUES) + r")\s*(?:id|number|no\.?|#)?\s*:?\s*#?\d{4,}\b",
                                 re.IGNORECASE), _has_employee_cue)
_PREFIXED_ID = ("id", re.compile(r"\b[A-Za-z]{2,5}[-_#]?\d{4,}\b"), _RUN4)
_LONG_ID = ("id", re.compile(r"\b\d{6,}\b"), _RUN4)
_IBAN_SHAPE = ("iban", re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){3,7}\b"), re.compile(r"[A-Z]{2}\d{2}").search)
PATTERNS: list[tuple[str, re.Pattern[str], Callable[[str], object]]] = [
    ("email", EMAIL, lambda t: "@" in t), _URL, _PREFIXED_ID, _EMPLOYEE_ID, _LONG_ID, _IBAN_SHAPE]
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


# A name in lower case ("my manager jan kowalski approved ...", "ask sanne de vries about ...") shows no name by
# its case either: after a cue that introduces a person, two lower-case words (particles between) are a name unless
# one is a function word, a lexicon word or a word that follows such a cue ("my manager said yes"), or both are
# words the corpus writes in lower case. One lower-case word alone stays ("ask jan about"): too many words follow.
_LOWER_CUES = ["my" + _ROLE, "our" + _ROLE, "name is", "ask"]
LOWER_CUE = r"\b(?:" + "|".join(_LOWER_CUES) + r")\b"
_NOT_A_NAME = _FUNCTION_WORDS | frozenset([
    "said", "says", "asked", "asks", "told", "tells", "wants", "wanted", "approved", "approves", "needs", "needed",
    "thinks", "thought", "mentioned", "suggested", "agreed", "signed", "gave", "sent", "just", "also", "only",
    "still", "already", "never", "always", "now", "then", "yesterday", "today", "recently", "please", "again"])
_LOWER_WORD = f"(?!(?:{'|'.join(sorted(_NOT_A_NAME))})(?![{_LOWER}'-]))[{_LOWER}][{_LOWER}'-]*"
_PARTICLE = r"(?:de|da|das|do|dos|du|del|della|der|den|di|la|le|van|von|ten|ter|bin|al)"
LOWER_NAME = re.compile(r"(?P<cue>(?i:" + LOWER_CUE + r"))\s+(?P<name>" + _LOWER_WORD + r"(?:\s+" + _PARTICLE
                        + r")*\s+" + _LOWER_WORD + r")(?![\w'-])")
_MAYBE_NAME = re.compile(NAME)


class Scrubber:
    """Replaces personal data with typed placeholders: {email}, {url}, {iban}, {passport}, {national_id}, {card},
    {phone}, {id} (`replace_patterns`) and {name} (listed names, and names after a cue).

    `keep` holds words that look like names but are lexicon values (offices, sources) and stay; `plain`, words
    the corpus writes in lower case (`Index.plain_words`): two of them after a cue in capitals, or in lower case,
    are no name.
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
        """A hash of what the scrubber replaces and keeps besides its patterns and plain words (see `scrub`): its
        names and kept words, the kinds it types, the ids and phone regions it checks, and the versions of the
        libraries that check them (a release changes checksums' tables and numbering plans)."""
        return fingerprint([self.names, sorted(self._keep), RULES], sort_keys=False)

    def __call__(self, text: str) -> str:
        return self.scrub(text)[0]

    def scrub(self, text: str) -> tuple[str, bool]:
        """The scrubbed text, and whether a name rule that reads the plain words (in capitals, in lower case) read
        it: only then does the result depend on them (the extraction memos keep no such question, so their
        fingerprint leaves the words out)."""
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
        read = False
        if LOWER_NAME.search(text):
            text, read = LOWER_NAME.sub(self._lower_name, text), True
        if shouted(text) and _SHOUTED_NAME.search(text):
            return _SHOUTED_NAME.sub(self._shouted_name, text), True
        return text, read

    def _lower_name(self, m: re.Match[str]) -> str:
        words = m.group("name").split()
        if any(fold(w) in self._keep for w in words) or all(w.casefold() in self._plain for w in words):
            return m.group(0)
        return f"{m.group('cue')} {{name}}"

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


PLACEHOLDER = re.compile(r"\{[a-z_]+\}")  # what the patterns put in: "{national_id}" is no lower-case writing


def shouted(text: str) -> bool:
    """Whether a text has no lower-case letter (placeholders aside) and a strong cue (see _SHOUTED_NAME)."""
    return not any(c.islower() for c in PLACEHOLDER.sub("", text)) and SHOUTED_CUE.search(text) is not None


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


# --- identifiers the libraries judge -------------------------------------------------------------------------
# A loose pattern finds a candidate; python-stdnum's checksums (and its `format`, an id's customary grouping) and
# phonenumbers' numbering plans say what it is. National ids without a check digit (US SSN, ITIN) count only in their
# own grouping ("123-45-6789") or after a cue ("ssn 123456789"); any 9 digits pass their check.
_CHECKED_IDS = (ssn, itin, bsn, idnr, pesel, nir, nn, sin, ch_ssn, personnummer)
_NO_CHECK_DIGIT = (ssn, itin)
_LETTERED_IDS = (dni, nie, codicefiscale, nir)  # ids with letters, found among the tokens of letters and digits
# National numbers ("030 12345678", "(416) 555-0142") are read in these regions' numbering plans; a number with
# "+" or "00" in its own. A number valid in none is no phone number.
PHONE_REGIONS = ("US", "GB", "IE", "DE", "AT", "CH", "NL", "BE", "FR", "ES", "PT", "IT", "PL", "SE", "DK", "NO", "FI")
# phonenumbers compiles its metadata's patterns on every call, through the re module's bounded cache; its own
# cache keeps each one compiled (the same verdicts, fewer lookups on a path that runs cold between phone numbers)
if hasattr(phonenumbers, "enable_pattern_cache"):  # phonenumbers 9.0.43 and later
    phonenumbers.enable_pattern_cache()
LIBRARIES = {"python-stdnum": stdnum.__version__, "phonenumbers": phonenumbers.__version__}
# A word before a number that says what it is; the nearest wins. "id" numbers (employee, account, ticket) are ids
# whatever their digits pass.
_KIND_CUE = re.compile(
    r"\b(?:(?P<national_id>ssn|social\s+security|bsn|burgerservicenummer|sofi(?:nummer)?|national\s+insurance|nino|"
    r"tax\s+(?:id|number|no)|tin|steuer[\s-]?id|steuernummer|idnr|pesel|nir|insee|dni|nie|nif|codice\s+fiscale|"
    r"sin|personnummer|personal\s+(?:id|number)|national\s+id|id\s+card)|"
    r"(?P<card>card|visa|mastercard|amex|maestro)|"
    r"(?P<phone>phone|call|ring|tel|telephone|mobile|cell|whatsapp|fax)|"
    r"(?P<id>employee|staff|personnel|badge|member(?:ship)?|customer|account|order|ticket|invoice|ref(?:erence)?))"
    r"\b", re.IGNORECASE)
_CUE_WINDOW = 32  # characters before a candidate where its cue is looked for


# The same, matched in lower case: for ASCII text, lower() is what IGNORECASE matches, in a third of the time.
_KIND_CUE_LOWER = re.compile(_KIND_CUE.pattern)


def _cue(text: str, start: int) -> str | None:
    if text.isascii():  # the window alone lowered, with the character before it, which its first \b reads
        left = max(0, start - _CUE_WINDOW - 1)
        cues = list(_KIND_CUE_LOWER.finditer(text[left:start].lower(), max(0, start - _CUE_WINDOW) - left))
    else:
        cues = list(_KIND_CUE.finditer(text, max(0, start - _CUE_WINDOW), start))
    return cues[-1].lastgroup if cues else None


_DIGIT_RUN = re.compile(r"\d+")
_AREA_CODE = re.compile(r"\(\d+\)")  # an area code in brackets opens a number written as a phone number


def _groups(text: str) -> tuple[int, ...]:
    return tuple(len(g) for g in _DIGIT_RUN.findall(text))


_NOT_ASCII_DIGIT = re.compile(r"[^0-9]+")


def _ascii_digits(text: str) -> str:
    if text.isascii():
        return _NOT_ASCII_DIGIT.sub("", text)
    return "".join(str(unicodedata.decimal(c)) for c in text if c.isdecimal())


def _refused_lengths(module: ModuleType) -> frozenset[int]:
    """The digit counts up to 64 the module refuses as the wrong length (python-stdnum's InvalidLength): a run of
    one of them skips its checks, which could not pass."""
    refused = set()
    for n in range(1, 65):
        try:
            module.validate("1" * n)
        except InvalidLength:
            refused.add(n)
        except ValidationError:
            pass
    return frozenset(refused)


_REFUSED_LENGTHS = {module: _refused_lengths(module) for module in _CHECKED_IDS}


@lru_cache(maxsize=1024)
def format_groups(module: ModuleType, length: int) -> tuple[int, ...] | None:
    """The digit groups of the module's format for a number of `length` ASCII digits (None: no format). Each
    format here cuts at fixed places, so they depend on the length alone (`tests/test_pii_numbers.py` checks it
    on random digits); formatting costs microseconds, a number checked against ten modules tens of them."""
    return _groups(module.format("0" * length)) if hasattr(module, "format") else None


def _national_id(number: str, digits: str, cued: bool) -> bool:
    """A national id whose checksum passes, written unspaced or grouped as the library formats it. The way it is
    written is looked at before the checksum, which costs more: "030 84426310" is grouped as no id is."""
    groups = _groups(number)
    for module in _CHECKED_IDS:
        if len(digits) in _REFUSED_LENGTHS[module]:
            continue
        written = (cued or (len(groups) == 1 and module not in _NO_CHECK_DIGIT)
                   or groups == format_groups(module, len(digits)))
        if written and module.is_valid(digits):
            return True
    return False


def _card(number: str, digits: str, cued: bool) -> bool:
    """A payment card: 13 to 19 digits passing Luhn, of a card network's first digit (2-6: Mastercard, Amex, Diners,
    JCB, Visa, Discover), unspaced or in a card's groups (4-4-4-4, 4-6-5, 4-6-4)."""
    if not 13 <= len(digits) <= 19 or digits[0] not in "23456" or not luhn.is_valid(digits):
        return False
    groups = _groups(number)
    return (cued or len(groups) == 1 or groups in ((4, 6, 5), (4, 6, 4))
            or (all(g == 4 for g in groups[:-1]) and 1 <= groups[-1] <= 4))


# The kinds of number a numbering plan describes: a valid number is of one of them (phonenumbers' number type).
_NUMBER_KINDS = ("fixed_line", "mobile", "toll_free", "premium_rate", "shared_cost", "personal_number", "voip",
                 "pager", "uan", "voicemail")


@dataclass(frozen=True)
class _Dialing:
    """What of a region's numbering plan (phonenumbers' metadata) says which national numbers it cannot read."""

    international: re.Pattern[str]  # its international prefix: a number after it names another country
    code: str  # its country code, which a national number may repeat ("49 30 ...")
    prefix: re.Pattern[str] | None  # its national prefix ("0"), which parsing drops
    lengths: frozenset[int]  # the lengths of a national number of a region of its country code
    numbers: re.Pattern[str]  # the national number patterns of the regions of its country code, as one
    kinds: re.Pattern[str]  # their patterns of each kind of number (fixed line, mobile, toll free, ...), as one


def _dialing(region: str) -> _Dialing | None:
    """None where the region's parsing rewrites the number in ways a prefix check does not follow."""
    meta = phonenumbers.PhoneMetadata.metadata_for_region(region)
    if (meta is None or meta.national_prefix_transform_rule or meta.international_prefix is None
            or meta.country_code is None):
        return None
    prefix = re.compile(meta.national_prefix_for_parsing) if meta.national_prefix_for_parsing else None
    if prefix is not None and prefix.groups:
        return None
    patterns: set[str] = set()
    kinds: set[str] = set()
    lengths: set[int] = set()
    for other in phonenumbers.region_codes_for_country_code(meta.country_code):
        other_meta = phonenumbers.PhoneMetadata.metadata_for_region(other)
        desc = other_meta.general_desc if other_meta is not None else None
        if other_meta is None or desc is None or desc.national_number_pattern is None or not desc.possible_length:
            return None
        patterns.add(f"(?:{desc.national_number_pattern})")
        lengths.update(desc.possible_length)
        kinds.update(f"(?:{kind.national_number_pattern})" for name in _NUMBER_KINDS
                     if (kind := getattr(other_meta, name)) is not None and kind.national_number_pattern)
    return _Dialing(re.compile(meta.international_prefix), str(meta.country_code), prefix, frozenset(lengths),
                    re.compile("|".join(sorted(patterns))), re.compile("|".join(sorted(kinds)) or "(?!)"))


_DIALING = {region: _dialing(region) for region in PHONE_REGIONS}


def _readable_in(digits: str, region: str) -> bool:
    """False only where parsing `digits` (a national number, no "+") in `region` cannot give a valid number: no
    reading of it that parsing may take (as written, its country code dropped, its national prefix dropped) fits a
    national number pattern of the region's country code and a pattern of one kind of number, as every valid number
    does. A shortcut that skips a parse (tens of microseconds); `tests/test_pii_numbers.py` checks it never changes
    `is_phone`'s verdict."""
    plan = _DIALING[region]
    if plan is None or plan.international.match(digits):
        return True
    readings = [digits, digits[len(plan.code):]] if digits.startswith(plan.code) else [digits]
    if plan.prefix is not None:
        readings += [r[m.end():] for r in readings if (m := plan.prefix.match(r))]
    return any(len(r) in plan.lengths and plan.numbers.fullmatch(r) and plan.kinds.fullmatch(r) for r in readings)


def is_phone(number: str, digits: str, cued: bool = False) -> bool:
    """A number phonenumbers finds valid: with "+" or "00" in its country's plan, else in one of PHONE_REGIONS."""
    if number.startswith("+") or digits.startswith("00"):
        tries: Iterable[tuple[str, str | None]] = (("+" + digits.removeprefix("00"), None),)
    else:  # lazily: the regions after the first that reads it valid are never checked
        tries = ((number, region) for region in PHONE_REGIONS if _readable_in(digits, region))
    for text, region in tries:
        try:
            if phonenumbers.is_valid_number(phonenumbers.parse(text, region)):
                return True
        except phonenumbers.NumberParseException:
            continue
    return False


_CHECKS: dict[str, Callable[[str, str, bool], bool]] = {"national_id": _national_id, "card": _card,
                                                          "phone": is_phone}


def _number_kind(number: str, cue: str | None) -> str:
    """What a run of digits is: the cued kind if its check passes, a phone number first when written as one
    ("+", "00", an area code in brackets), then a card, a national id, a phone number; an {id} when none passes.
    A card comes before a national id: unspaced, 15 digits can be both an Amex number and a French NIR."""
    if cue == "id":
        return "id"
    digits = _ascii_digits(number)
    order = [cue] if cue in _CHECKS else []
    if number.startswith("+") or digits.startswith("00") or _AREA_CODE.match(number):
        order.append("phone")
    for kind in [*order, "card", "national_id", "phone"]:
        if _CHECKS[kind](number, digits, kind == cue):
            return kind
    return "id"


def _numbers(text: str) -> str:
    """Runs of 9 or more digits, each replaced by its kind (`_number_kind`); runs of years and dates stay."""
    def kind(m: re.Match[str]) -> str:
        number, bracket = m.group(0), ""
        if number.startswith("(") and ")" not in number:  # "(2984.64.536)": the bracket holds the number
            number, bracket = number[1:], "("
        if _DATES_ONLY.fullmatch(number):
            return m.group(0)
        return bracket + "{" + _number_kind(number, _cue(text, m.start())) + "}"
    return PHONE.sub(kind, text)


# An IBAN: two letters and two digits start it; tokens of letters and digits (a space or "-" between) follow, and
# the longest run of them whose compact form python-stdnum validates (ISO 13616 mod 97 and the country's length and
# structure) is the IBAN. The phone rule took a spaced IBAN's digits when it came first.
_IBAN_START = re.compile(r"(?<![\w-])[A-Za-z]{2}\d{2}")
_IBAN_TOKEN = re.compile(r"[ -]?([A-Za-z0-9]+)")


def _ibans(text: str) -> str:
    out, last = [], 0
    for m in _IBAN_START.finditer(text):
        if m.start() < last:
            continue
        ends, compact, pos = [], "", m.start()
        while (t := _IBAN_TOKEN.match(text, pos)) and len(compact) + len(t.group(1)) <= 34:
            compact += t.group(1)
            pos = t.end()
            if not (pos < len(text) and (text[pos].isalnum() or text[pos] in "_")):
                ends.append((pos, compact))
        found = next((end for end, number in reversed(ends) if iban.is_valid(number)), None)
        if found is not None:
            out += [text[last:m.start()], "{iban}"]
            last = found
    return "".join(out) + text[last:] if out else text


# A passport number has no check digit and no library: after the word "passport" (or "Reisepass", "paspoort", ...),
# a token of letters and digits with a digit ("C01X00T47", "123456789", "NL1234567").
_PASSPORT_CUE = r"\b(?:passport|reisepass|paspoort|passeport|pasaporte|passaporto|paszport)"
_PASSPORT = re.compile(r"(?P<cue>" + _PASSPORT_CUE + r"(?:\s+(?:number|no\.?|nr\.?|num|id|#))?\s*(?:is\s+|[:#=(]\s*)?)"
                       r"(?P<number>(?=[A-Za-z]*\d)[A-Za-z0-9]+)\b", re.IGNORECASE)
# A UK national insurance number has no check digit either, and python-stdnum no module for it: HMRC's format, two
# letters, six digits, a letter A-D, spaced or not ("QQ 12 34 56 C", "qq123456c"; QQ is HMRC's specimen prefix and
# unallocated prefixes are scrubbed too).
_NINO = re.compile(r"(?<![\w-])[A-Za-z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-Da-d](?![\w-])")
# A token of letters and digits, 8 to 20 long with at least four digits and a letter: a lettered national id
# (Spanish DNI/NIE, Italian codice fiscale, a Corsican NIR) when python-stdnum validates it, else an {id} (a
# passport or document number written without its cue: "c01x00t47").
_MIXED = re.compile(r"(?<![\w-])(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{8,20}(?![\w-])")


def _mixed_kind(m: re.Match[str]) -> str:
    token = m.group(0)
    if any(module.is_valid(token) for module in _LETTERED_IDS):
        return "{national_id}"
    return "{id}" if sum(c.isdigit() for c in token) >= 4 else token


_PASSPORT_GATE = re.compile("pas", re.IGNORECASE)  # in every cue of _PASSPORT_CUE


def _tokens(text: str) -> str:
    if _PASSPORT_GATE.search(text):
        text = _PASSPORT.sub(lambda m: m.group("cue") + "{passport}", text)
    return _NINO.sub("{national_id}", text)


# An email spelled out to pass a filter: "greta dot lindqvist at example dot com", "jan [at] example [dot] org",
# "greta.lindqvist at example.com". Taken when it spells something ("dot", a bracket, a spaced "@" or ".") or its
# local part has a dot: "the form at intranet.example.com" is a place, not an address.
_DOT = r"(?:\.|\s+\.\s+|\s*[(\[<]dot[)\]>]\s*|\s+dot\s+)"
_AT = r"(?:\s*@\s*|\s*[(\[<]at[)\]>]\s*|\s+at\s+)"
_TLD = r"(?:com|org|net|edu|gov|mil|int|info|biz|name|mail|pro|[a-z]{2})"
# At most five words on each side of the "at": each start then scans a bounded stretch ("a dot a dot ..." took
# quadratic time).
SPELLED_EMAIL = re.compile(r"(?<![\w.+'@-])(?P<local>[\w+'-]+(?:" + _DOT + r"[\w+'-]+){0,4})" + _AT
                           + r"[\w-]+(?:" + _DOT + r"[\w-]+){0,3}" + _DOT + _TLD + r"(?![\w-])", re.IGNORECASE)
# What SQL leaves to Python for them: every address the step takes spells its "at", or is "@" with a spelled dot
# after it (one with a plain "@" and plain dots is an email EMAIL took before).
_SPELLED_DOT = r"(?:\s+\.\s+|\s*[(\[<]dot[)\]>]\s*|\s+dot\s+)"
_SPELLED_AT = r"(?:\s+@\s*|\s*@\s+|\s*[(\[<]at[)\]>]\s*|\s+at\s+)"
_SPELLED_WIDE = re.compile(r"[\w+'-]" + _SPELLED_AT + r"[\w-]+(?:" + _DOT + r"[\w-]+)*" + _DOT + _TLD + r"\b|@[\w-]+"
                           r"(?:\.[\w-]+)*" + _SPELLED_DOT + r"[\w-]", re.IGNORECASE)
_PLAIN_AT = re.compile(r"[\w+'-]+\s+at\s+[\w-]+(?:\.[\w-]+)+", re.IGNORECASE)  # "form at intranet.example.com"
_SPELLED_GATE = re.compile(r"\bdot\b|[(\[<]at[)\]>]|\sat\s|\s@|@\s", re.IGNORECASE)


def _maybe_spelled(text: str) -> bool:
    """What a spelled address needs: a dot ("." or "dot": its domain has one), looked for first as it costs a
    tenth of the scan for a spelled "at"."""
    return ("." in text or "dot" in text.casefold()) and _SPELLED_GATE.search(text) is not None


def _spelled_emails(text: str) -> str:
    if not _maybe_spelled(text):
        return text
    return SPELLED_EMAIL.sub(lambda m: m.group(0) if _PLAIN_AT.fullmatch(m.group(0)) else "{email}", text)


def _pattern(rule: tuple[str, re.Pattern[str], Callable[[str], object]]) -> Callable[[str], str]:
    kind, pattern, gate = rule
    if pattern is EMAIL:
        return lambda t: _sub_emails(t) if gate(t) else t
    return lambda t: pattern.sub("{" + kind + "}", t) if gate(t) else t


_DIGIT = re.compile(r"\d")
# A letter next to a digit, or a "-", "_" or "#" between them: what an IBAN, a lettered id ("c01x00t47") and a
# prefixed id ("HR-2024-0042") need. Looked for once; a text without one (most numbers in questions: "030 1234567",
# "in 2026") skips the steps that need it. No step writes a letter next to a digit: a placeholder is in braces.
_LETTER_DIGIT = re.compile(r"\d(?:(?<=[A-Za-z]\d)|(?<=[A-Za-z][-_#]\d)|[A-Za-z])")  # a digit first: a fast scan
# `replace_patterns`' steps in order, each with whether it needs _LETTER_DIGIT: emails and URLs first; an IBAN
# before anything takes its digits; a passport's cue, a NINO and lettered ids before the prefixed-id pattern reads
# "AB1234567" as an id; the employee-id cue before a long number is judged; the plain patterns SQL runs (PATTERNS)
# in their own order between.
_STEPS: list[tuple[Callable[[str], str], bool]] = [
    (_pattern(PATTERNS[0]), False), (_pattern(_URL), False), (_spelled_emails, False),
    (_ibans, True), (lambda t: _tokens(t) if _DIGIT.search(t) else t, False),
    (lambda t: _MIXED.sub(_mixed_kind, t), True),
    (_pattern(_PREFIXED_ID), True), (_pattern(_EMPLOYEE_ID), False),
    (lambda t: _numbers(t) if len(_DIGIT.findall(t)) >= 9 else t, False),
    (_pattern(_LONG_ID), False), (_pattern(_IBAN_SHAPE), True)]


def maybe_pattern(text: str) -> bool:
    """What every step needs: a digit (of any script: \\d), an "@", a URL, or a spelled address. Plain tests
    before any scan: most questions hold none of them."""
    return (_DIGIT.search(text) is not None or "@" in text or "://" in text or "www." in text.casefold()
            or _maybe_spelled(text))


# Each text a step beyond PATTERNS may change matches one of these (lookarounds aside, which only widen them): SQL
# leaves such a question to Python (`SqlSkeletons.scrubbed`).
KINDS = ["email", "url", "iban", "passport", "national_id", "card", "phone", "id", "name"]
RULES = {"kinds": KINDS, "national_ids": [m.__name__ for m in (*_CHECKED_IDS, *_LETTERED_IDS)],
         "phone_regions": PHONE_REGIONS, "libraries": LIBRARIES}
PYTHON_ONLY: list[re.Pattern[str]] = [_SPELLED_WIDE, re.compile(_PASSPORT_CUE, re.IGNORECASE), _NINO,
                                      re.compile(r"[A-Za-z]\d|\d[A-Za-z]"), PHONE]  # the last but one: IBANs, ids


def replace_patterns(text: str) -> str:
    """The scrubber's first step: emails, URLs, IBANs, passport and national ids, card and phone numbers and other
    ids replaced (names are the second)."""
    if maybe_pattern(text):
        lettered = _LETTER_DIGIT.search(text) is not None
        for step, needs_letter in _STEPS:
            if lettered or not needs_letter:
                text = step(text)
    return text
