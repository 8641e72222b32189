"""Constraint extraction and skeletons: the one implementation used offline (mining) and online (lookup)."""

from __future__ import annotations

import bisect
import calendar
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime

from schemas.config import Config
from schemas.constraint import QUALIFIER, Constraint
from schemas.digest import fingerprint
from schemas.entity import ENTITY, NO_NAMES, KnownNames, entity_spans
from schemas.errors import ConfigError
from schemas.pii import PLACEHOLDER, Scrubber
from schemas.text import MONTHS, fold, fold_cased, folded_words, opens_sentence, words

# ASCII digits only: \d would also take other scripts' digits ("20٢٥") and make a year value no filter matches.
# An amount is no year: "$2000", "2000 euros", "2000€" stay text.
_AMOUNT_AFTER = r"(?! ?(?:€|\$|£|euros?|eur|usd|dollars?|gbp|pounds?|chf|francs?)(?!\w))"
_YEAR = re.compile(r"(?<![\w$€£-])((?:19|20)[0-9]{2})(?![\w-])" + _AMOUNT_AFTER)
_YEARISH = re.compile(r"(?:19|20)[0-9]{2}")  # what every date and year pattern below holds
_RELATIVE_YEAR = re.compile(r"\b(this|last|next|current|previous|coming) year\b")
_RELATIVE_OFFSET = {"this": 0, "current": 0, "last": -1, "previous": -1, "next": 1, "coming": 1}
_ISO_DATE = re.compile(r"(?<![\w-])((?:19|20)[0-9]{2})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(?![\w-])")
MONTH_WORDS = sorted(MONTHS, key=lambda m: (-len(m), m))  # longest first: "september" before "sep"
_MONTH = "(" + "|".join(MONTH_WORDS) + r")\.?"  # "october", "oct", "oct."
_MONTH_DAY_YEAR = re.compile(
    r"\b" + _MONTH + r" ([0-9]{1,2})(?:st|nd|rd|th)?,? ((?:19|20)[0-9]{2})(?![\w-])"
)
_DAY_MONTH_YEAR = re.compile(
    r"\b([0-9]{1,2})(?:st|nd|rd|th)? (?:of )?" + _MONTH + r",? ((?:19|20)[0-9]{2})(?![\w-])"
)
_MONTH_YEAR = re.compile(
    r"\b(?:in |of |during )?" + _MONTH + r",? ((?:19|20)[0-9]{2})(?![\w-])"
)


def _day(year: str, month: int, day: str) -> str | None:
    """YYYY-MM-DD for a day the calendar has (not February 30), else None."""
    y, d = int(year), int(day)
    return f"{y}-{month:02d}-{d:02d}" if 1 <= d <= calendar.monthrange(y, month)[1] else None


@dataclass(frozen=True)
class Skeleton:
    """A question with its constraint values replaced by typed placeholders, plus those values in slot order."""

    text: str
    constraints: tuple[Constraint, ...]

    @property
    def slots(self) -> dict[str, str]:
        """Constraint slots in order: {"office_1": "Berlin", "office_2": "Amsterdam", "year_1": "2026"}."""
        out: dict[str, str] = {}
        seen: dict[str, int] = {}
        for c in self.constraints:
            if c.facet == QUALIFIER:
                continue
            seen[c.facet] = seen.get(c.facet, 0) + 1
            out[f"{c.facet}_{seen[c.facet]}"] = c.value
        return out

    @property
    def signature(self) -> str:
        """The multiset of placeholders, e.g. "office,office,year"."""
        return ",".join(sorted(c.facet for c in self.constraints if c.facet != QUALIFIER))


class Lexicon:
    """Facet values, aliases and qualifier terms, matched case- and accent-insensitively on whole words."""

    def __init__(self, config: Config, index_values: Mapping[str, Iterable[str]] | None = None,
                 plain: Iterable[str] = (), names: Iterable[str] = ()) -> None:
        """`plain`: the corpus's plain words (`Index.plain_words`, published with each run), which tell a name
        from a word written in capitals when `entity_slots` is on (`schemas.entity`); `names`: the corpus's titles
        (`Index.names`, published with each run), each read as one name where a question spells it."""
        self.config = config
        self.entity_slots = config.entity_slots
        self.plain = frozenset(plain) if self.entity_slots else frozenset()
        self.names = frozenset(names) if self.entity_slots else frozenset()
        self.known_names = KnownNames(self.names, self.plain) if self.names else NO_NAMES
        self.kinds = {f.name: f.kind for f in config.facets}
        self.values: dict[str, set[str]] = {}
        surface: list[tuple[str, str, str]] = []  # (folded surface form, facet, canonical value)
        for f in config.facets:
            if f.kind != "category":
                continue
            vals = set(f.values)
            if f.from_index and index_values:  # a listed value's other spelling never takes its place
                listed = {fold(v) for v in vals}
                vals |= {str(v) for v in index_values.get(f.name, ())
                         if v not in (None, "") and (str(v) in vals or fold(str(v)) not in listed)}
            self.values[f.name] = vals
            surface += [(fold(v), f.name, v) for v in vals]
            surface += [(fold(a), f.name, v) for a, v in f.aliases.items()]
        for canonical, terms in config.qualifiers.items():
            surface += [(fold(t), QUALIFIER, canonical) for t in {canonical, *terms}]
        surface = [s for s in surface if s[0]]
        # folded surface form -> (facet, canonical value)
        self.forms = {form: (facet, value) for form, facet, value in sorted(surface)}
        forms = sorted(self.forms, key=lambda s: (-len(s), s))
        self._pattern = (
            re.compile(r"(?<!\w)(" + "|".join(re.escape(s) for s in forms) + r")(?!\w)") if forms else None
        )
        self.filler_words = sorted({words(f) for f in config.fillers if words(f)}, key=lambda s: (-len(s), s))
        self._fillers = (re.compile(r"(?<!\S)(?:" + "|".join(re.escape(f) for f in self.filler_words) + r")(?!\S)")
                         if self.filler_words else None)
        # A placeholder typed literally ("{office}") would pass for a constraint the question does not name.
        # what fills a placeholder: the facets, and the names with entity slots
        self.slot_names = [f.name for f in config.facets] + ([ENTITY] if self.entity_slots else [])
        self._literal_slot = re.compile(r"\{(" + "|".join(re.escape(fold(f)) for f in self.slot_names) + r")\}")
        self.year_facet = next((f.name for f in config.facets if f.kind == "year"), None)
        self.date_facet = next((f.name for f in config.facets if f.kind == "date"), None)

    def check_aliases(self) -> None:
        """Refuse an alias whose value is not one of its facet's, when the config lists the facet's `values:` (a
        closed list: the alias is a typo, and its filter would match nothing). A facet whose values come from the
        index alone may name a value this corpus lacks: a config serves more than one corpus. Refuse an alias
        that is spelled as a value or qualifier term of another meaning: every question naming that value would
        be read as the alias's."""
        owners: dict[str, set[tuple[str, str]]] = {}  # folded form -> (facet, value) it stands for
        for name, vals in self.values.items():
            for v in vals:
                owners.setdefault(fold(v), set()).add((name, v))
        for canonical, terms in self.config.qualifiers.items():
            for t in sorted({canonical, *terms}):
                if named := sorted(owners.get(fold(t), set())):
                    facet, value = named[0]
                    raise ConfigError(
                        f"{self.config.place(['qualifiers', canonical])}: qualifier term {t!r} of {canonical!r} is "
                        f"also {facet} value {value!r}: questions naming {value!r} would be read as the qualifier; "
                        "remove the term")
                owners.setdefault(fold(t), set()).add((QUALIFIER, canonical))
        for at, f in enumerate(self.config.facets):
            for alias, value in f.aliases.items():
                other = sorted(owners.get(fold(alias), set()) - {(f.name, value)})
                if other:
                    facet, meant = other[0]
                    what = "a qualifier term" if facet == QUALIFIER else f"{facet} value {meant!r}"
                    raise ConfigError(
                        f"{self.config.place(['facets', at, 'aliases', alias])}: alias {alias!r} of facet {f.name!r} "
                        f"names {value!r}, but {alias!r} is also {what}: questions naming it would be read as "
                        f"{value!r}; remove the alias")
                owners.setdefault(fold(alias), set()).add((f.name, value))
        for at, f in enumerate(self.config.facets):
            known = self.values.get(f.name, set())
            for alias, value in f.aliases.items() if f.values and f.name in self.values else ():
                if value not in known:
                    shown = ", ".join(sorted(known)[:8]) + (", ..." if len(known) > 8 else "")
                    raise ConfigError(
                        f"{self.config.place(['facets', at, 'aliases', alias])}: alias {alias!r} of facet "
                        f"{f.name!r} names {value!r}, which is not one of its values ({shown}); name one of them, "
                        f"or add {value!r} to the facet's `values:`")

    def known_values(self) -> dict[str, set[str]]:
        """Facet -> the values a filter may name (categories only; years and dates are open)."""
        return {name: set(vals) for name, vals in self.values.items()}

    def name_words(self) -> set[str]:
        """Words of facet values, aliases, qualifier terms and synonyms, kept by the PII scrubber's name rules
        ("I AM PART TIME IN BERLIN" names nobody)."""
        terms = [v for vals in self.values.values() for v in vals] + list(self.forms)
        terms += [t for canonical, group in self.config.synonyms.items() for t in (canonical, *group)]
        return {w for t in terms for w in words(t).split()}

    def scrubber(self, plain: Iterable[str] = ()) -> Scrubber:
        """The PII scrubber mining and lookup share: the config's names replaced, this lexicon's words kept, and
        `plain`, the corpus's lower-case words (`Index.plain_words`), read as no name in capitals."""
        return Scrubber(self.config.pii_names, keep=self.name_words(), plain=plain)

    def digest(self) -> str:
        """The lexicon hash recorded in the manifest: a cache is only valid with the same lexicon."""
        body = {"lookup": sorted(self.forms.items()), "kinds": sorted(self.kinds.items()),
                "fillers": self._fillers.pattern if self._fillers else ""}
        if self.entity_slots:  # names are read against the plain words and titles: others, other skeletons
            body["entities"] = fingerprint(sorted(self.plain))
            if self.names:  # a lexicon without titles keeps the hash it had before they were read
                body["names"] = fingerprint(sorted(self.names))
        return fingerprint(body, sort_keys=False)

    def extract(self, question: str, now: date | datetime | None = None) -> list[Constraint]:
        """Constraints named in a question, in order of appearance, with spans into fold(question).

        Relative years resolve against `now` (the log row's timestamp); without it they are left out.
        """
        cased = fold_cased(question)
        return self._extract_folded(cased.casefold(), now, cased)

    def written_values(self, text: str, plain: Collection[str] = ()) -> list[Constraint]:
        """The category facet values a document's text names, read as a question's are, but where written as a
        word: a value with a capital written all in lower case ("a slot is free", "two business days" are no plans
        Free and Business; a question's "free plan" still reads as Free), and a value that is one of `plain` (the
        corpus's words in lower case, `schemas.text.plain_words`) where a sentence or heading opens with it ("Free
        trials last 14 days")."""
        cased = fold_cased(text)
        folded = cased.casefold()
        at = _cased_offsets(cased) if len(folded) != len(cased) else None  # "Straße" folds longer: map back
        out = []
        for c in self.extract(text):
            start, end = (at[c.start], at[c.end]) if at is not None else (c.start, c.end)
            written = cased[start:end]
            if self.kinds.get(c.facet) != "category" or (written.islower() and not c.value.islower()):
                continue
            if fold(c.value) in plain and opens_sentence(cased, start):
                continue
            out.append(c)
        return out

    def _extract_folded(self, text: str, now: date | datetime | None, cased: str) -> list[Constraint]:
        """Constraints of `text`, the case-folded `cased` (`schemas.text.fold_cased`)."""
        found: list[Constraint] = []
        spans: list[tuple[int, int]] = []  # taken by the passes so far: disjoint and sorted
        starts: list[int] = []

        def take(matches: Iterable[tuple[str, str | None, int, int]]) -> None:
            """One pass's matches (disjoint among themselves), each kept unless it overlaps an earlier pass's; a
            match without a value (a day the calendar lacks) is kept as no constraint, so no later pass reads a
            part of it ("30 February 2023" is no date, not February 2023)."""
            nonlocal spans, starts
            kept = []
            for facet, value, start, end in matches:
                at = bisect.bisect_right(starts, start)
                if (at and spans[at - 1][1] > start) or (at < len(spans) and spans[at][0] < end):
                    continue
                kept.append((start, end))
                if value is not None:
                    found.append(Constraint(facet, value, start, end))
            if kept:  # two sorted runs, merged in linear time: a long text stays linear
                spans = sorted(spans + kept)
                starts = [s for s, _ in spans]

        # every date and year pattern holds a year ("19xx", "20xx"), every relative one the word "year": most
        # questions skip their passes
        dated = _YEARISH.search(text) is not None
        if self.date_facet and dated:
            day = self.date_facet
            take((day, _day(m.group(1), int(m.group(2)), m.group(3)), m.start(), m.end())
                 for m in _ISO_DATE.finditer(text))
            take((day, _day(m.group(3), MONTHS[m.group(1)], m.group(2)), m.start(), m.end())
                 for m in _MONTH_DAY_YEAR.finditer(text))
            take((day, _day(m.group(3), MONTHS[m.group(2)], m.group(1)), m.start(), m.end())
                 for m in _DAY_MONTH_YEAR.finditer(text))
            take((day, f"{m.group(2)}-{MONTHS[m.group(1)]:02d}", m.start(1), m.end())
                 for m in _MONTH_YEAR.finditer(text))
        if self._pattern is not None:
            take((*self.forms[m.group(1)], m.start(), m.end()) for m in self._pattern.finditer(text))
        if self.year_facet:
            year = self.year_facet
            if dated:
                if not self.date_facet:  # a full date names its year: "from 2026-12-24" is 2026
                    take((year, m.group(1), m.start(1), m.end(1)) for m in _ISO_DATE.finditer(text))
                take((year, m.group(1), m.start(), m.end()) for m in _YEAR.finditer(text))
            if now is not None and "year" in text:
                take((year, str(now.year + _RELATIVE_OFFSET[m.group(1)]), m.start(), m.end())
                     for m in _RELATIVE_YEAR.finditer(text))
        if self.entity_slots:  # last: a facet value, year or qualifier written in capitals is that, no name
            take(_names(cased, text, self.plain, self.known_names))
        return sorted(found, key=lambda c: c.start)

    def skeleton(self, question: str, now: date | datetime | None = None) -> Skeleton:
        """Normalised question with each constraint value replaced by {facet}; qualifiers by their term."""
        cased = fold_cased(question)
        text = cased.casefold()
        constraints = self._extract_folded(text, now, cased)
        literal = (lambda t: self._literal_slot.sub(r" \1 ", t)) if "{" in text else (lambda t: t)
        parts: list[str] = []
        pos = 0
        for c in constraints:  # a literal "{office}" typed by the user is a word, not a placeholder
            parts.append(literal(text[pos:c.start]))
            parts.append(f" {fold(c.value)} " if c.facet == QUALIFIER else f" {{{c.facet}}} ")
            pos = c.end
        parts.append(literal(text[pos:]))
        skeleton = folded_words(own_words("".join(parts)))
        if self._fillers is not None:
            skeleton = " ".join(self._fillers.sub(" ", skeleton).split())
        return Skeleton(skeleton, tuple(constraints))


def _names(cased: str, folded: str, plain: frozenset[str],
           names: KnownNames) -> Iterable[tuple[str, str | None, int, int]]:
    """`entity_spans` of the cased text as matches at their offsets in the folded text (the same offsets, unless
    case folding lengthened a character before them: "Straße" folds to "strasse")."""
    same = len(cased) == len(folded)
    for start, end in entity_spans(cased, plain, names):
        at = (start, end) if same else (len(cased[:start].casefold()), len(cased[:end].casefold()))
        yield ENTITY, cased[start:end], at[0], at[1]


def _cased_offsets(cased: str) -> list[int]:
    """For each offset into `cased.casefold()`, the offset into `cased` of the character it folds from (and the
    length of `cased` at the end)."""
    at = [i for i, ch in enumerate(cased) for _ in ch.casefold()]
    return [*at, len(cased)]


def own_words(text: str) -> str:
    """Each placeholder as a word of its own: the scrubber's "{url}" glued to a word ("heisenberg{url}") would
    make a skeleton word that no template may write. `SqlSkeletons.skeleton` does the same."""
    return PLACEHOLDER.sub(r" \g<0> ", text) if "{" in text else text


def fill_skeleton(skeleton: str, slots: dict[str, str]) -> str:
    """The skeleton with its placeholders filled from `slots` (office_1, year_1, ...): lexicon text only."""
    counters: dict[str, int] = {}
    out = []
    for word in skeleton.split(" "):
        if word.startswith("{") and word.endswith("}"):
            facet = word[1:-1]
            counters[facet] = counters.get(facet, 0) + 1
            out.append(slots.get(f"{facet}_{counters[facet]}", ""))
        else:
            out.append(word)
    return " ".join(w for w in out if w)


def cache_key(shape_id: str, skeleton: Skeleton) -> str:
    """Shape id plus the question's constraint values by slot name; never a similarity."""
    return slots_key(shape_id, skeleton.slots)


def slots_key(shape_id: str, slots: dict[str, str]) -> str:
    """The key of a shape's slot values, whatever order the question named them in ("2026 in Berlin")."""
    return "|".join([shape_id, *(f"{slot}={value}" for slot, value in sorted(slots.items()))])
