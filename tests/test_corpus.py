"""Chunking and effective-date parsing, as properties."""

from __future__ import annotations

from datetime import date

from hypothesis import given
from hypothesis import strategies as st

from schemas.config import Chunking
from tasks.index.corpus import Document, chunk_document
from tasks.index.enrich import parse_effective

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


@given(st.dates(min_value=date(1990, 1, 1), max_value=date(2099, 12, 31)))
def test_effective_dates_parse_in_three_forms(day: date) -> None:
    month = day.strftime("%B")
    assert parse_effective(f"Allowance, effective {day.day} {month} {day.year}: 75 euros.") == day
    assert parse_effective(f"effective from {month} {day.day}, {day.year}") == day
    assert parse_effective(f"Effective {day.isoformat()}.") == day


def test_no_effective_date() -> None:
    assert parse_effective("Engineering offsite 2025 was held in Berlin, 8-10 October 2025.") is None
