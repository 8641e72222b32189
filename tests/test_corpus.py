"""Chunking and effective-date parsing, as properties."""

from __future__ import annotations

from datetime import date

from hypothesis import assume, example, given
from hypothesis import strategies as st

from schemas.config import Chunking
from tasks.index.corpus import Document, chunk_document
from tasks.index.enrich import parse_effective, policy_keys

sentences = st.lists(
    st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=120).map(lambda s: s.strip() + "."),
    min_size=1,
    max_size=60,
)


@given(sentences, st.integers(200, 900), st.integers(0, 150))
def test_chunks_cover_the_text_within_size(parts: list[str], size: int, overlap: int) -> None:
    text = " ".join(parts)
    doc = Document("d", text, {"office": "Berlin"}, "x:1")
    chunks = chunk_document(doc, Chunking(size=size, overlap=overlap))
    normalised = " ".join(text.split())
    assert all(len(c.text) <= size for c in chunks)
    assert all(c.doc_id == "d" and c.metadata == {"office": "Berlin"} for c in chunks)
    assert len({c.id for c in chunks}) == len(chunks)
    # every word of the document is in some chunk, in order
    joined = " ".join(c.text for c in chunks)
    assert set(normalised.split()) <= set(joined.split())
    if len(normalised) <= size:
        assert [c.id for c in chunks] == ["d"]


@given(st.lists(sentences, min_size=1, max_size=8), st.sampled_from(["\n\n", "\n \n\n", "\r\n\r\n", "\n## Travel\n"]),
       st.integers(200, 900), st.integers(0, 150))
def test_a_chunk_ends_at_a_paragraph_end_where_one_is_past_half_its_window(
        paragraphs: list[list[str]], gap: str, size: int, overlap: int) -> None:
    texts = [" ".join(" ".join(p).split()) for p in paragraphs]
    heading = "## Travel " if "#" in gap else ""
    flat = (" " + heading).join(texts)  # the text as chunks write it: one space between words
    ends, at = set(), 0  # where each paragraph ends in `flat`
    for t in texts:
        ends.add(at + len(t))
        at += len(t) + 1 + len(heading)
    chunks = chunk_document(Document("d", gap.join(" ".join(p) for p in paragraphs), {}, "x:1"),
                            Chunking(size=size, overlap=overlap))
    assert all(len(c.text) <= size and c.text == " ".join(c.text.split()) for c in chunks)  # one space, none at an end
    assert set(flat.split()) <= set(" ".join(c.text for c in chunks).split())
    start = 0
    for c in chunks[:-1]:
        start = flat.index(c.text, start)
        if any(start + size // 2 < e <= start + size for e in ends):  # a paragraph ends past half the window
            assert start + len(c.text) in ends


@given(st.dates(min_value=date(1990, 1, 1), max_value=date(2099, 12, 31)))
def test_effective_dates_parse_in_three_forms(day: date) -> None:
    for month in (day.strftime("%B"), day.strftime("%b")):  # the month's name or its abbreviation
        assert parse_effective(f"Allowance, effective {day.day} {month} {day.year}: 75 euros.") == day
        assert parse_effective(f"effective from {month} {day.day}, {day.year}") == day
    assert parse_effective(f"Effective {day.isoformat()}.") == day


def test_no_effective_date() -> None:
    assert parse_effective("Engineering offsite 2025 was held in Berlin, 8-10 October 2025.") is None


_DIGITS = st.text("0123456789", min_size=1, max_size=3)


@given(day=st.dates(min_value=date(1990, 1, 1), max_value=date(2099, 12, 31)), before=st.just("") | _DIGITS,
       after=st.just("") | _DIGITS | st.sampled_from(["a", "x", "Z", "é", "٣"]))
@example(day=date(2026, 1, 1), before="", after="1")  # "20261" is no year
@example(day=date(9999, 1, 1), before="", after="9")  # "Effective from 1 January 99999"
def test_a_year_inside_a_longer_run_of_digits_or_a_word_is_no_effective_date(day: date, before: str,
                                                                              after: str) -> None:
    """An effective date's year is four digits standing alone: five digits, or a year a letter or digit follows,
    give no date (nor the date of four of the digits)."""
    assume(before or after)
    month, year = day.strftime("%B"), f"{before}{day.year}{after}"
    assert parse_effective(f"Allowance, effective from {day.day} {month} {year}: 75 euros.") is None
    assert parse_effective(f"effective from {month} {day.day}, {year}") is None
    assert parse_effective(f"Effective {before}{day.isoformat()}{after}.") is None


@given(year=st.integers(1900, 2099), before=_DIGITS, after=st.sampled_from(["", "-v2", ".md", "#3"]))
def test_a_year_inside_a_longer_run_of_digits_stays_in_the_policy_key(year: int, before: str, after: str) -> None:
    """A document id loses its year for its policy key ("leave-2026" -> "leave"), not four digits of a longer
    number ("grant-12026" keeps them)."""
    doc = Document(f"grant-{before}{year}{after}", "t", {}, "x:1")
    assert policy_keys([doc], {doc.id: None})[doc.id] == doc.id
    plain = Document(f"grant-{year}{after}", "t", {}, "x:1")
    assert policy_keys([plain], {plain.id: None})[plain.id] == f"grant{after}"
