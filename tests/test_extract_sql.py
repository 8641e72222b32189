"""The SQL masking (schemas/extract_sql.py) against the Python extraction: for every question SQL takes, the
same skeleton and the same constraints, in the same order, as `Lexicon.skeleton(scrub(question))`."""

from __future__ import annotations

import re
from datetime import date

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from schemas.config import Facet, load_config
from schemas.extract import Lexicon
from schemas.extract_sql import _NEEDS, SqlSkeletons, _without_lookarounds
from schemas.pii import EMAIL, PATTERNS, PYTHON_ONLY, Scrubber, _sub_emails, replace_patterns
from tests.conftest import DEMO_CONFIG, ROOT

DEMO = load_config(DEMO_CONFIG)
MULTIHOP = load_config(ROOT / "data" / "configs" / "multihop_rag.yaml")
SOURCES = ["The Verge", "TechCrunch", "Cnbc | World Business News Leader", "Yahoo News", "The New York Times",
           "Sporting News", "Fortune"]


def _lexicons() -> dict[str, tuple[Lexicon, Scrubber]]:
    demo = Lexicon(DEMO)
    synthetic = DEMO.model_copy(deep=True)  # overlapping and multi-word forms, a name list, digits in a form
    synthetic.facets = [Facet(name="office", kind="category", values=["New York", "York", "Area 51", "Sao Paulo"],
                              aliases={"NYC": "New York", "S. Paulo": "Sao Paulo"}),
                        Facet(name="year", kind="year")]
    synthetic.qualifiers = {"this year": ["this year"], "part-time": ["part time", "part-time"]}
    multihop = Lexicon(MULTIHOP, {"source": SOURCES})
    edges = DEMO.model_copy(deep=True)  # forms SQL cannot match: punctuation at an edge, letters beyond ASCII
    edges.facets = [Facet(name="source", kind="category", values=["Yahoo!", "Berlin", "Łódź", "C++ Weekly", "Zürich"]),
                    Facet(name="year", kind="year")]
    names = DEMO.model_copy(update={"entity_slots": True})  # names by their capitals: SQL takes none of them
    return {
        "names": (ln := Lexicon(names, None, ["how", "many", "days", "office"]), ln.scrubber()),
        "edges": (lx := Lexicon(edges), Scrubber(keep=lx.name_words())),
        "demo": (demo, demo.scrubber()),
        "synthetic": (ls := Lexicon(synthetic), Scrubber(["Jan Kowalski", "Ann"], keep=ls.name_words())),
        "multihop": (multihop, multihop.scrubber()),
    }


LEXICONS = _lexicons()
CON = duckdb.connect()

TOKENS = [
    "berlin", "Berlin", "BERLIN", "amsterdam", "AMS", "ams", "lisboa", "Warszawa", "toronto", "London", "Berlín",
    "new york", "New York", "york", "NYC", "area 51", "sao paulo", "S. Paulo", "s paulo",
    "yahoo!", "Yahoo", "YAHOO!!", "c++ weekly", "C++", "zurich", "Zürich", "lodz", "Łódź",
    "the verge", "TechCrunch", "cnbc | world business news leader", "Yahoo News", "fortune", "the new york times",
    "2024", "2025", "1999", "2100", "20245", "2024-11-24", "November 2023", "in march 2024", "24 october 2023",
    "Oct 3, 2023", "sept 2023", "the 3rd of oct 2023", "2023-02-30", "February 30, 2023", "dec.", "2024-2025",
    "2024-11-24-1", "2024-11-24T09", "2024-11", "x2024-11-24", "2024-11-24x", "2024-13-01",
    "12026", "20261", "99999", "2026a", "2024-11-241", "12024-11-24", "1 january 99999", "january 1, 20261",
    "2000 euros", "2000 euro", "2000 europe", "2000$", "$2000", "2000 $", "2000 usd", "2000eur", "-2024", "2024-",
    "this year", "last year", "next year", "current year", "previous year", "coming year", "This Year", "years",
    "second parent", "non-birth parent", "part-time", "part time", "parttime", "intern", "interns", "foster",
    "hi", "hey", "please", "pls", "thank you", "thanks", "quick question", "question", "questions",
    "how many", "vacation", "days", "do", "we", "get", "in", "and", "or", "vs", "compare", "the", "per diem",
    "{office}", "{year}", "{email}", "{name}", "{", "}", "office", "year", "_", "x1", "a2024", "24", "123456",
    "Stanley Kubrick", "Bank of America", "Apollo 11", "How", "Office",
    "Jan Kowalski", "jan kowalski", "Ann", "my manager Sanne de Vries", "Mei-Ling Chau from HR", "EMP-123456",
    "MY MANAGER", "I'M", "THIS IS", "JAN KOWALSKI", "APPROVED REMOTE", "MEI-LING", "PER DIEM", "BERLIN OFFICE",
    "me@example.com", "www.example.com", "https://x.y", "+49 30 1234 5678", "employee id 123456", "staff",
    "my manager jan kowalski", "ask sanne de vries", "qq123456c", "ssn 123-45-6789", "4111 1111 1111 1111",
    "passport c01x00t47", "greta dot lindqvist at example dot com", "DE89 3704 0044 0532 0130 00", "at",
    "?", "??", "!", ",", ".", ":", ";", "-", "(", ")", "'", '"', "|", "/", "&", "$", "\u2026", "é", "\u00a0",
]
SEPARATORS = st.sampled_from([" ", "  ", "", ", ", "-", " - ", "? ", ". ", "\t", "/"])
ISO_DATES = st.dates(date(1900, 1, 1), date(2099, 12, 31)).map(date.isoformat)


@st.composite
def _question(draw: st.DrawFn) -> str:
    tokens = draw(st.lists(st.sampled_from(TOKENS) | ISO_DATES, min_size=1, max_size=10))
    seps = draw(st.lists(SEPARATORS, min_size=len(tokens), max_size=len(tokens)))
    return "".join(t + s for t, s in zip(tokens, seps, strict=True))


def _by_sql(sql: SqlSkeletons, questions: list[str], years: list[int]) -> list[tuple[str, int, str, list[str]]]:
    """(question, year, skeleton, markers) for the questions SQL takes."""
    batch = pa.table({"query": questions, "y": pa.array(years, pa.int32())})  # noqa: F841
    return CON.execute(f"""
        SELECT query, y, {sql.skeleton('m')}, {sql.markers('m')}
        FROM (SELECT query, y, {sql.masked('text')} AS m
              FROM (SELECT query, y, {sql.scrubbed('query')} AS text FROM batch)
              WHERE {sql.eligible('text')})""").fetchall()


def _assert_same(name: str, questions: list[str], years: list[int]) -> int:
    lexicon, scrub = LEXICONS[name]
    sql = SqlSkeletons(lexicon, scrub)
    assert sql.supported
    taken = _by_sql(sql, questions, years)
    for question, y, skeleton, markers in taken:
        expected = lexicon.skeleton(scrub(question), date(y, 7, 1))
        got = [(c.facet, c.value) for c in sql.constraints(markers)]
        assert (skeleton, got) == (expected.text, [(c.facet, c.value) for c in expected.constraints]), question
        assert not GLUED.search(skeleton), question  # a placeholder always stands as its own word
    return len(taken)


GLUED = re.compile(r"[^ ]\{[a-z_]+\}|\{[a-z_]+\}[^ ]")  # a placeholder merged with a word


@pytest.mark.parametrize("name", sorted(LEXICONS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(questions=st.lists(_question(), min_size=1, max_size=20), year=st.integers(1990, 2090))
@example(questions=["berlin berlin 2000$berlin "], year=1990)  # currency, then a lexicon word: still a year
@example(questions=["what did heisenberghttps://x.y say in Berlin", "x{email}y", "EMP-123456{id}"], year=2026)
def test_sql_and_python_give_the_same_skeleton_and_constraints(name: str, questions: list[str], year: int) -> None:
    _assert_same(name, questions, [year] * len(questions))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=60), min_size=1, max_size=20))
def test_arbitrary_text(questions: list[str]) -> None:
    _assert_same("demo", [q.replace("\x00", "") for q in questions], [2026] * len(questions))


def test_a_full_date_names_its_year_in_sql_as_in_python() -> None:
    """Without a date facet a date's year is a constraint in both: the same skeleton and cache key online."""
    questions = ["parental leave in Berlin from 2026-12-24", "leave from 2026-12-24,2027-01-05 in AMS",
                 "$2026-12-24 per diem", "ticket 2026-12-24-1", "leave 2024-2025 in Berlin"]
    # a run of years ("2024-2025") and a run of nine digits (which the libraries judge) go to Python
    assert _assert_same("demo", questions, [2026] * 5) == 3
    sql = SqlSkeletons(*LEXICONS["demo"])
    got = {q: (sk, [(c.facet, c.value) for c in sql.constraints(m)])
           for q, _, sk, m in _by_sql(sql, questions, [2026] * 5)}
    assert got["parental leave in Berlin from 2026-12-24"] == (
        "parental leave in {office} from {year} 12 24", [("office", "Berlin"), ("year", "2026")])
    assert got["leave from 2026-12-24,2027-01-05 in AMS"][1] == [("year", "2026"), ("year", "2027"),
                                                                 ("office", "Amsterdam")]
    assert LEXICONS["demo"][1]("ticket 2026-12-24-1") == "ticket {id}"  # a ticket number, judged in Python


def test_sql_scrubs_emails_and_ids_and_leaves_names_and_checked_numbers_to_python() -> None:
    taken = ["How many vacation days do we get in Berlin?", "compare parental leave in AMS and lisboa 2025",
             "per diem in London this year??", "hi, what about Toronto for interns last year",
             "budget of 2000 euros in 2024 for warsaw", "me@example.com: vacation in Berlin",
             "EMP-123456 here, per diem in Lisbon", "per diem at the 2024 offsite in Amsterdam",
             "sick leave in Toronto (employee id 884213)", "see www.example.com/leave for Lisbon in 2025"]
    held = ["my manager Sanne de Vries asked about Berlin", "vacation in Berlín",
            "leave calendar 2024 2025 2026 for Berlin",  # a name; not ASCII; a run of years the scrubber keeps
            "call +49 30 1234 5678 about Amsterdam", "iban DE89 3704 0044 0532 0130 00 for Berlin",  # libraries
            "my ni number is qq123456c", "passport c01x00t47", "jan dot k at example dot com in Lisbon",
            "my manager jan kowalski asked about Berlin"]
    assert _assert_same("demo", taken + held, [2026] * len(taken + held)) == len(taken)


PII_TOKENS = [
    "me@example.com", "o'brien+hr@mail.example.net", "a.b@c", "x@y.z.", "@example.com", "user@", "{x}@a.b",
    "https://intra.example/leave?x=1", "http://", "WWW.Example.Com", "www.", "EMP-123456", "emp_1234", "ID#12345",
    "abcdef123456", "employee id 123456", "Staff No. 98765", "badge#4321", "personnel number: 1234567",
    "+49 30 1234 5678", "(030) 1234-5678", "555.123.4567", "555-123-4567", "12345678", "123456789", "1234567890",
    "-123456789", "123456789-", "x123456789", "123456789x", "_123456789", "2024 2025 2026", "2023-11-24 2024-01-01",
    "2024-2025", "2026 555 1234", "DE89 3704 0044 0532 0130 00", "DE89370400440532013000", "GB12 ABCD 1234",
    "de89 3704 0044 0532 0130 00", "GB82 WEST 1234 5698 7654 32", "qq123456c", "QQ 12 34 56 C", "c01x00t47",
    "passport", "passport no. AB1234567", "123-45-6789", "1112.22.333", "4111-1111-1111-1111", "36574261809",
    "greta dot lindqvist at example dot com", "jan (at) example (dot) org", "a.b at example.com", " at ", " dot ",
    "x @ example . com", "ssn", "card", "call", "employee", "a1", "12345678Z",
    "Berlin", "2025", "this year", "in", "the", "?", "a", "(", ")", "+", "-", ".", ",", " ",
]


def test_each_scrubber_pattern_has_its_sql_gate() -> None:
    assert [kind for kind, _ in _NEEDS] == [kind for kind, _, _ in PATTERNS]
    for (_, needs), (_, pattern, _) in zip(_NEEDS, PATTERNS, strict=True):
        for text in ["me@example.com", "https://x.y", "www.x", "EMP-123456", "employee id 1234", "+49 30 1234 5678",
                     "1234567", "DE89 3704 0044 0532 0130 00"]:
            if pattern.search(text):
                assert re.search(needs, text), (pattern.pattern, text)


@st.composite
def _pii_question(draw: st.DrawFn) -> str:
    tokens = draw(st.lists(st.sampled_from(PII_TOKENS), min_size=1, max_size=8))
    seps = draw(st.lists(st.sampled_from(["", " ", "  ", ",", "-", ".", ": ", "é"]), min_size=len(tokens),
                         max_size=len(tokens)))
    return "".join(t + s for t, s in zip(tokens, seps, strict=True))


@settings(max_examples=300, deadline=None)
@given(st.lists(_pii_question(), min_size=1, max_size=20))
@example([" 123456789,123456789,123456789 "])  # phone numbers whose fences touch: the second pass finds them
def test_sql_scrubs_like_the_scrubber(questions: list[str]) -> None:
    batch = pa.table({"query": questions})  # noqa: F841
    sql = SqlSkeletons(*LEXICONS["demo"])
    got = CON.execute(f"SELECT query, {sql.scrubbed('query')} FROM batch").fetchall()
    for question, text in got:
        if text is not None:
            assert text == replace_patterns(question), question
    # SQL leaves only what it cannot prove to Python: text beyond ASCII, runs of years or dates, and what the
    # scrubber's Python-only steps may change (what the libraries judge, spelled-out emails, passports)
    assert all(text is not None for q, text in got if q.isascii() and not re.search(r"(19|20)\d\d[ .-]", q)
               and not _python_only(q))
    # and those steps change nothing else: a question none of their patterns matches scrubs as PATTERNS alone do
    for question in questions:
        if not _python_only(question):
            assert replace_patterns(question) == _patterns_alone(question), question


def _python_only(text: str) -> bool:
    """Whether a pattern of `PYTHON_ONLY`, its lookarounds dropped as SQL drops them, matches."""
    return any(re.search(_without_lookarounds(p.pattern), text, p.flags) for p in PYTHON_ONLY)


def _patterns_alone(text: str) -> str:
    for kind, pattern, _ in PATTERNS:
        text = _sub_emails(text) if pattern is EMAIL else pattern.sub("{" + kind + "}", text)
    return text


PLAIN = ["approved", "remote", "jan", "kowalski", "per", "diem", "mei", "ling"]  # every word below is one


@pytest.mark.parametrize("name", sorted(LEXICONS))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_question().map(lambda q: q.upper()) | _question() | st.text(max_size=30), min_size=1, max_size=20))
@example(["ＭＹ ＭＡＮＡＧＥＲ JAN KOWALSKI", "NAME\u00a0IS JAN KOWALSKI", "MY MANAGER APPROVED REMOTE",
          "MY MANAGER APPROVED REMOTE (jan@example.com)", "MY MANAGER APPROVED REMOTE, employee id 123456",
          "MY MANAGER APPROVED REMOTE jan kowalski", "\u24c2Y MANAGER APPROVED REMOTE", "my manager approved remote"])
def test_a_question_the_memos_keep_scrubs_the_same_whatever_the_plain_words(name: str, questions: list[str]) -> None:
    """The memos keep no question whose scrubbing read the plain words (`Scrubber.scrub`), and their fingerprint
    leaves the words out: any other question must scrub the same with any plain words. SQL takes none of those."""
    lexicon, scrub = LEXICONS[name]
    with_plain = Scrubber(scrub.names, keep=lexicon.name_words(), plain=PLAIN)
    for question in questions:
        text, read = scrub.scrub(question)
        assert with_plain.scrub(question)[1] == read, question
        if not read:
            assert with_plain(question) == text, question
    sql = SqlSkeletons(lexicon, scrub)
    batch = pa.table({"query": questions})  # noqa: F841
    taken = CON.execute(f"SELECT query FROM (SELECT query, {sql.scrubbed('query')} AS text FROM batch) "
                        f"WHERE {sql.eligible('text')}").fetchall()
    assert not [q for (q,) in taken if scrub.scrub(q)[1]]
    if "MY MANAGER APPROVED REMOTE jan kowalski" in questions and scrub.names:  # a listed name is no lower case
        assert scrub.scrub("MY MANAGER APPROVED REMOTE jan kowalski") == ("MY MANAGER {name} {name}", True)


def test_forms_sql_cannot_match_send_their_questions_to_python() -> None:
    lexicon, scrub = LEXICONS["edges"]
    sql = SqlSkeletons(lexicon, scrub)
    assert sql.supported and sql.python_forms == ["yahoo!"]  # the Polish city's form is not ASCII: no check
    ordinary = ["news from Berlin in 2024", "what did zurich report", "is Yahoo a source", "c++ weekly on berlin"]
    held = ["what did Yahoo! say", "YAHOO!! in 2025", "Łódź 2025"]
    assert _assert_same("edges", ordinary + held, [2026] * 7) == len(ordinary)


_RUN = st.text("0123456789", min_size=1, max_size=3)


@st.composite
def _embedded_year(draw: st.DrawFn) -> str:
    """A question whose year or full date runs on into more digits, or that a letter follows."""
    day = draw(st.dates(date(1900, 1, 1), date(2099, 12, 31)))
    before = draw(st.just("") | _RUN)
    after = draw((st.just("") | _RUN | st.sampled_from(["a", "x", "th"])) if before else
                 (_RUN | st.sampled_from(["a", "x", "th"])))
    run = draw(st.sampled_from([f"{before}{day.year}{after}", f"{before}{day.isoformat()}{after}"]))
    words = draw(st.sampled_from(["holidays in berlin in {}", "{}", "per diem {} please", "new york, {}, and ams",
                                  "{} this year"]))
    return words.format(run)


@pytest.mark.parametrize("name", sorted(LEXICONS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(questions=st.lists(_embedded_year(), min_size=1, max_size=20), year=st.integers(1990, 2090))
@example(questions=["20261", "99999", "2026a", "in 12026", "2024-11-241", "x 02026"], year=2026)
def test_a_year_inside_a_longer_run_of_digits_is_no_year_in_sql_either(name: str, questions: list[str],
                                                                       year: int) -> None:
    """SQL reads the same as Python, and neither reads a year inside a longer run of digits or before a letter
    (only "this year", where the lexicon does not take it as a qualifier, is one)."""
    _assert_same(name, questions, [year] * len(questions))
    lexicon, scrub = LEXICONS[name]
    sql = SqlSkeletons(lexicon, scrub)
    for question, y, _skeleton, markers in _by_sql(sql, questions, [year] * len(questions)):
        years = [c.value for c in sql.constraints(markers) if c.facet == lexicon.year_facet]
        assert set(years) <= ({str(y)} if "this year" in question else set()), question  # a relative year only
