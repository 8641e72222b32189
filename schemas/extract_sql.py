"""Skeletons and constraints in DuckDB SQL: `Lexicon.skeleton(scrub(q))` for the questions SQL can take.

Mining runs this over every distinct (question, year) of a log; the questions it cannot take, and lookup
always, go through the Python implementation in `schemas.extract`. A question is taken when SQL gives the
same answer by construction:

- printable ASCII, so case folding is `lower` and RE2's ASCII word classes equal Python's;
- personal data SQL scrubs like Python (`scrubbed`): emails, URLs and ids by pattern become the same
  placeholders; what the scrubber's libraries judge (IBANs, national ids, cards, phone numbers: a run of nine
  digits, letters beside digits) or its other Python-only steps read (spelled-out emails, a passport's cue:
  `schemas.pii.PYTHON_ONLY`), a name (listed, or after a cue, in lower case or in a question of capitals alone
  too) and a run of years or dates send the question to Python;
- no lexicon form SQL cannot match (one that ends in punctuation, such as "yahoo!");
- no placeholder typed literally ("{office}"); and, when the config has a date facet, nothing that looks like a date.

Constraint values become markers, `\\x01L<form>\\x03` for lexicon forms and `\\x01Y<year>\\x03` for years
(relative years resolved against the row's year; without a date facet, a full date's year), in the Python
extractor's order (lexicon, a date's year, years, relative years), so a span taken first is not matched again.
Where Python uses a lookaround RE2 lacks, the pattern consumes its boundary characters instead and runs twice,
which also finds neighbours that share a boundary. Markers then become `{facet}` placeholders (or the
qualifier's term) in the skeleton, and every placeholder is a word of its own ("heisenberg{url}" as "heisenberg
{url}"); the list of markers maps to constraint values once per distinct list.
`tests/test_extract_sql.py` holds SQL and Python to identical skeletons and constraints.
"""

from __future__ import annotations

import re

from schemas.constraint import QUALIFIER, Constraint
from schemas.extract import MONTH_WORDS, Lexicon
from schemas.pii import (
    CUE_FIRST_NAME,
    CUE_NAME,
    DATE_SEPARATORS,
    LOWER_CUE,
    NAME,
    PATTERNS,
    PLACEHOLDER,
    PYTHON_ONLY,
    SHOUTED_CUE,
    YEAR_OR_DATE,
    Scrubber,
)
from schemas.sql import sql_string
from schemas.text import fold

START, END, NOT_A_YEAR = "\x01", "\x03", "\x04"
_WORD = re.compile(r"[A-Za-z0-9_]")
_CURRENCY = r"\$|euros?|eur|usd|dollars?|gbp|pounds?|chf|francs?"  # the ASCII part of extract._AMOUNT_AFTER
_RELATIVE = {"this|current": 0, "last|previous": -1, "next|coming": 1}
_MONTHS = "|".join(MONTH_WORDS)  # any question naming a month goes to Python, which reads dates
_YEAR = r"((?:19|20)[0-9]{2})"


def _escape(text: str) -> str:
    """An RE2 literal: punctuation escaped; letters, digits and spaces as they are."""
    return "".join(c if c.isalnum() or c == " " else "\\" + c for c in text)


def _re2(pattern: str) -> str:
    """A Python pattern without lookarounds, as RE2 (\\uXXXX escapes become \\x{XXXX})."""
    return re.sub(r"\\u([0-9a-fA-F]{4})", r"\\x{\1}", pattern)


def _without_lookarounds(pattern: str, flags: int = 0) -> str:
    """The pattern with its (unnested) lookarounds removed, case-insensitive where the flags say so."""
    bare = re.sub(r"\(\?<?[!=][^()]*\)", "", pattern)
    return f"(?i:{bare})" if flags & re.IGNORECASE else bare


def _replace(sql: str, pattern: str, replacement: str) -> str:
    return f"regexp_replace({sql}, {sql_string(pattern)}, {replacement}, 'g')"


# What any match of each scrubber pattern needs (in `PATTERNS`' order), so most questions skip the steps;
# `test_sql_scrubs_like_the_scrubber` holds each one to its pattern
_NEEDS = [("email", "@"), ("url", r"://|(?i:www\.)"), ("id", "[A-Za-z][-_#]?[0-9]{4}"),
          ("id", "(?i:employee|staff|personnel|badge)"), ("id", "[0-9]{6}"), ("iban", "[A-Z]{2}[0-9]{2}")]


def _scrub_step(sql: str, kind: str, pattern: re.Pattern[str]) -> str:
    """One scrubber pattern as SQL on ASCII text: each match becomes "{kind}", as `Scrubber` replaces it."""
    if re.search(r"\(\?<?[=!]", pattern.pattern) or pattern.groups:
        raise ValueError(f"scrubber pattern {pattern.pattern!r}: SQL takes no lookaround or group; "
                         "write its SQL form in schemas/extract_sql.py")
    core = _re2(pattern.pattern)
    return _replace(sql, f"(?i:{core})" if pattern.flags & re.IGNORECASE else core, sql_string("{" + kind + "}"))


def _python_only() -> str:
    """The scrubber's steps SQL does not run, as one RE2 pattern that matches wherever they may change a text."""
    return "|".join(_re2(_without_lookarounds(p.pattern, p.flags)) for p in PYTHON_ONLY)


def _ascii_word_edged(text: str) -> bool:
    """Printable ASCII that starts and ends with a word character: RE2's \\b then agrees with Python."""
    return (bool(text) and text.isascii() and text.isprintable() and bool(_WORD.fullmatch(text[0]))
            and bool(_WORD.fullmatch(text[-1])))


class SqlSkeletons:
    """SQL expressions over a question column `query` and a year column `y`, built from one lexicon."""

    def __init__(self, lexicon: Lexicon, scrub: Scrubber) -> None:
        self.lexicon = lexicon
        # what each form becomes in a skeleton: " {facet} ", or the qualifier's folded term
        targets = {form: f" {fold(value)} " if facet == QUALIFIER else f" {{{facet}}} "
                   for form, (facet, value) in sorted(lexicon.forms.items())}
        in_sql = {f for f, t in targets.items() if _ascii_word_edged(f) and t.isascii() and t.isprintable()}
        self.forms = sorted(in_sql, key=lambda s: (-len(s), s))  # the Python pattern's order
        self.targets = {f: t for f, t in targets.items() if f in in_sql}
        # A form SQL cannot match ("yahoo!") sends the questions holding it to Python. One that is not ASCII
        # needs no check: folded ASCII text cannot hold it, and SQL takes ASCII text only.
        self.python_forms = sorted(f for f in targets if f not in in_sql and f.isascii())
        self.names = scrub.names
        # Filler words outside the shared domain send the whole log through Python.
        self.supported = all(_ascii_word_edged(f) for f in lexicon.filler_words)

    @staticmethod
    def scrubbed(col: str = "query") -> str:
        """The question with the scrubber's patterns (emails, URLs, ids) replaced as Python replaces them; NULL for
        a question SQL cannot scrub: one that is not printable ASCII, that holds a run of years or dates, or
        anything a library judges (a run of nine digits, letters beside digits: IBANs, national ids, cards, phone
        numbers) or a rule SQL lacks reads (a spelled-out email, a passport's cue): `PYTHON_ONLY`. Names are the
        scrubber's last step: `eligible` sends a question that may hold one to Python."""
        chain = col
        for kind, pattern, _ in PATTERNS:
            chain = _scrub_step(chain, kind, pattern)
        dates = _re2(YEAR_OR_DATE + DATE_SEPARATORS + YEAR_OR_DATE)
        maybe = "|".join(needs for _, needs in _NEEDS)
        return (f"CASE WHEN NOT regexp_full_match({col}, '[ -~]*') OR regexp_matches({col}, {sql_string(dates)}) "
                f"OR regexp_matches({col}, {sql_string(_python_only())}) "
                f"THEN NULL WHEN regexp_matches({col}, {sql_string(maybe)}) THEN {chain} ELSE {col} END")

    def eligible(self, col: str = "query") -> str:
        """True for a question SQL takes (see the module docstring)."""
        # Each scrubber pattern, its lookarounds dropped (which only widens it), or a gate it needs.
        slot = r"(?i:\{(?:" + "|".join(_escape(fold(f)) for f in self.lexicon.kinds) + r")\})"  # typed "{office}"
        scrubbed = "|".join([slot, *(_re2(_without_lookarounds(p.pattern, p.flags)) for _, p, _ in PATTERNS),
                             _python_only()])
        if self.lexicon.date_facet:
            scrubbed += r"|(?:19|20)[0-9]{2}-[0-9]|(?i:\b(?:" + _MONTHS + r")\b)"
        named = (_re2(_without_lookarounds(CUE_NAME.pattern)) + "|" + _re2(_without_lookarounds(CUE_FIRST_NAME.pattern))
                 + r"|(?:^|[.!?:;] )" + _re2(_without_lookarounds(NAME))
                 + r" +(?:from|here)\b|(?i:" + _re2(LOWER_CUE) + ")")  # a name in lower case after a cue
        shouted = "(?i:" + _re2(SHOUTED_CUE.pattern) + ")"  # in a question without a lower-case letter
        parts = [f"regexp_full_match({col}, '[ -~]*')", f"NOT regexp_matches({col}, {sql_string(scrubbed)})",
                 f"NOT regexp_matches({col}, {sql_string(named)})",
                 f"(regexp_matches(regexp_replace({col}, {sql_string(PLACEHOLDER.pattern)}, '', 'g'), '[a-z]') "
                 f"OR NOT regexp_matches({col}, {sql_string(shouted)}))"]
        if self.names:
            listed = r"(?i:\b(?:" + "|".join(_escape(n) for n in self.names) + r")\b)"
            parts.append(f"NOT regexp_matches({col}, {sql_string(listed)})")
        if self.lexicon.entity_slots:  # a name is read by its capitals (schemas/entity.py): Python reads them
            parts.append(f"NOT regexp_matches({col}, '[A-Z]')")
        if self.python_forms:  # anywhere, boundaries or not: a wider check only sends more to Python
            forms = "|".join(_escape(f) for f in self.python_forms)
            parts.append(f"NOT regexp_matches(lower({col}), {sql_string(forms)})")
        return " AND ".join(parts)

    def masked(self, col: str = "query") -> str:
        """The folded question with its constraint values as markers."""
        return self.marked(self.folded(col))

    @staticmethod
    def folded(col: str = "query") -> str:
        """The question in lower case, runs of spaces as one, trimmed: all of the question `marked` reads (with
        the year), so questions that differ only in case and spacing (a third of a log's distinct questions)
        are masked once."""
        return f"trim(regexp_replace(lower({col}), '  +', ' ', 'g'))"  # two or more: a lone space is kept as is

    def marked(self, folded: str) -> str:
        """A folded question (`folded`) with its constraint values as markers."""
        sql = folded
        if self.forms:
            lexicon = r"\b(" + "|".join(_escape(f) for f in self.forms) + r")\b"
            sql = _replace(sql, lexicon, sql_string(START + r"L\1" + END))
        if self.lexicon.year_facet:
            before, after = r"(^|[^A-Za-z0-9_$" + NOT_A_YEAR + r"-])", r"($|[^a-z0-9_-])"
            # "2000 euros" is no year; a lexicon marker after the currency stands for the word it replaced
            amount = before + _YEAR + r"( ?(?:" + _CURRENCY + r"))($|[^a-z0-9_" + START + r"])"
            years = "s"
            for _ in range(2):
                years = _replace(years, amount, sql_string(r"\1" + NOT_A_YEAR + r"\2\3\4"))
            if not self.lexicon.date_facet:  # a full date's year ("2026-12-24"), as `Lexicon` reads it
                iso = r"(^|[^a-z0-9_-])" + _YEAR + r"(-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01]))" + after
                for _ in range(2):
                    years = _replace(years, iso, sql_string(r"\1" + START + r"Y\2" + END + r"\3\4"))
            for _ in range(2):
                years = _replace(years, before + _YEAR + after, sql_string(r"\1" + START + r"Y\2" + END + r"\3"))
            relative = "s"
            for words, offset in _RELATIVE.items():
                year = f"CAST(y + {offset} AS VARCHAR)"
                relative = _replace(relative, r"\b(?:" + words + r") year\b",
                                    f"{sql_string(START + 'Y')} || {year} || {sql_string(END)}")
            # only text with a year's digits pays for the year passes, and only text with " year" for the relative
            # ones (a one-item list names the text once)
            sql = (f"list_transform([{sql}], lambda s: CASE WHEN regexp_matches(s, {sql_string(_YEAR)}) "
                   f"THEN replace({years}, {sql_string(NOT_A_YEAR)}, '') ELSE s END)[1]")
            sql = f"list_transform([{sql}], lambda s: CASE WHEN contains(s, ' year') THEN {relative} ELSE s END)[1]"
        return sql

    def markers(self, masked: str) -> str:
        """The markers of a masked question in order, without their delimiters: ['Lberlin', 'Y2026']."""
        return f"regexp_extract_all({masked}, {sql_string(START + '([LY][^' + END + ']*)' + END)}, 1)"

    def skeleton(self, masked: str) -> str:
        """The skeleton of a masked question: markers as placeholders, punctuation and fillers gone."""
        # Split at the delimiters, pieces alternate text and marker bodies; text is lower case, so a piece that
        # starts with "L" or "Y" is a marker, and each one becomes its target.
        cases = []
        if self.targets:
            lookup = ", ".join(f"{sql_string('L' + form)}: {sql_string(target)}"
                               for form, target in self.targets.items())
            cases.append(f"WHEN p[1] = 'L' THEN MAP {{{lookup}}}[p]")
        if self.lexicon.year_facet:
            cases.append(f"WHEN p[1] = 'Y' THEN {sql_string(f' {{{self.lexicon.year_facet}}} ')}")
        # each placeholder the scrubber put in a word of its own (`extract.own_words`); markers' targets are spaced
        spaced = _replace("s", PLACEHOLDER.pattern, sql_string(r" \0 "))
        masked = f"list_transform([{masked}], lambda s: CASE WHEN contains(s, '{{') THEN {spaced} ELSE s END)[1]"
        pieces = f"string_split_regex({masked}, {sql_string('[' + START + END + ']')})"
        sql = (f"array_to_string(list_transform({pieces}, lambda p: CASE {' '.join(cases)} ELSE p END), '')"
               if cases else masked)  # no lexicon and no year facet: no markers
        # Punctuation to spaces, then runs of spaces to one: a pattern that matched lone spaces too would
        # rewrite every gap between words.
        sql = f"trim({_replace(_replace(sql, '[^A-Za-z0-9_{} ]+', sql_string(' ')), '  +', sql_string(' '))})"
        if self.lexicon.filler_words:  # spaces doubled: each word keeps its own boundary, one pass finds all
            words = "|".join(_escape(f) for f in self.lexicon.filler_words)
            fillers = " (?:" + words.replace(" ", "  ") + ") "
            dropped = _replace("' ' || replace(s, ' ', '  ') || ' '", fillers, "' '")
            # only questions that hold a filler word pay for the doubling (a one-item list names the text once)
            has_filler = sql_string(r"\b(?:" + words + r")\b")
            sql = (f"list_transform([{sql}], lambda s: CASE WHEN regexp_matches(s, {has_filler}) "
                   f"THEN trim({_replace(dropped, '  +', sql_string(' '))}) ELSE s END)[1]")
        return sql

    def constraints(self, markers: list[str]) -> tuple[Constraint, ...]:
        """The constraints a marker list stands for, in the question's order."""
        out = []
        for marker in markers:
            if marker.startswith("L"):
                facet, value = self.lexicon.forms[marker[1:]]
                out.append(Constraint(facet, value))
            else:
                out.append(Constraint(self.lexicon.year_facet or "", marker[1:]))
        return tuple(out)
