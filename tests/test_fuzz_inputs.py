"""Malformed input of every kind: never a crash, always a quarantined row or a clear error."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime
from pathlib import Path
from unittest.mock import patch

import duckdb
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from schemas.config import load_config
from schemas.errors import ConfigError, CorpusError
from tasks.index.corpus import read_corpus
from tasks.ingest.numbering import line_numbers
from tasks.ingest.sql import IS_OBJECT
from tasks.ingest.stage import ingest

GOOD = {"ts": "2026-11-24T09:00:00Z", "user": "u-1", "query": "how many vacation days in Berlin"}
json_values = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=30),
                        st.lists(st.integers(), max_size=3))
bad_rows = st.one_of(
    st.binary(min_size=1, max_size=200).filter(lambda b: b"\n" not in b and b.strip()),
    st.fixed_dictionaries({}, optional={"ts": json_values, "user": json_values, "query": json_values}).map(
        lambda d: json.dumps(d).encode()),
    st.just(json.dumps({**GOOD, "ts": "2999-01-01T00:00:00Z"}).encode()),
    st.just(json.dumps({**GOOD, "query": "x" * 50_000}).encode()),
    st.text(min_size=1, max_size=80).filter(lambda t: "\n" not in t and "\r" not in t and t.strip()).map(
        lambda t: t.encode("utf-16")),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(bad_rows, min_size=1, max_size=8))
@example(rows=[b"\x1e"])  # a line of only the old column delimiter was lost, not quarantined
@example(rows=[b"\r\x80"])  # DuckDB reads a lone "\r" as a line break: both parts are the second line
@example(rows=[b"\x00\r", b"\x80"])  # DuckDB's reject said line 4 for the third line (it counted "\r\n" twice)
@example(rows=[b"\x00", b'{"ts": "2026-11-24T10:00:00Z", "user": "u\x1e2", "query": "per diem\x1e Lisbon"}'])
@example(rows=[b"\xff\xfe\n\x01"])  # "\u010a" in UTF-16 holds a "\n" byte: the row is two lines, numbered 2 and 3
def test_log_rows_are_mined_or_quarantined(tmp_path: Path, rows: list[bytes]) -> None:
    path = tmp_path / "logs.jsonl"
    data = b"\n".join([json.dumps(GOOD).encode(), *rows]) + b"\n"
    path.write_bytes(data)
    lines = editor_lines(data)  # a row's bytes can hold a "\n" (a UTF-16 one's can): it is more than one line
    ing = ingest(path, now=datetime(2026, 11, 30))
    try:
        reasons = [r[0] for r in ing.con.sql("SELECT reason FROM quarantine").fetchall()]
        numbered = [r[0] for r in ing.con.sql("SELECT line FROM quarantine WHERE line IS NOT NULL").fetchall()]
        # A line is numbered as an editor shows it; DuckDB reads a line holding a lone "\r" as one more per "\r".
        assert all(2 <= n <= len(lines) for n in numbered)  # 1 is GOOD
        assert all(k <= 1 + lines[n - 1].count(b"\r") for n, k in Counter(numbered).items())
        mined = ing.con.sql("SELECT count(*) FROM rows").fetchall()[0][0]
        assert mined >= 1 and all(reasons)
        nonblank = sum(1 for line in lines if line.strip())  # each yields a row or a record at least
        assert mined + len(reasons) >= nonblank  # nothing lost, whatever the line breaks
        assert "2999" not in str(ing.con.sql("SELECT max(ts) FROM rows").fetchall())
    finally:
        ing.con.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_corpus_files_fail_clearly(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(data)
    try:
        docs = read_corpus(path)
    except CorpusError as exc:
        assert str(path) in str(exc)
    else:
        assert all(d.text.strip() for d in docs)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300))
def test_config_files_fail_clearly(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        load_config(path)
    except ConfigError as exc:
        assert str(path) in str(exc)


def test_config_error_names_each_field_its_line_and_the_likely_name(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("facets:\n  - name: office\n    kind: category\n    valuess: [Berlin]\n"
                    "planning: {budget: four}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).splitlines() == [
        f"{path}:4: field 'facets.0.valuess': Extra inputs are not permitted (did you mean 'values'?)",
        f"{path}:5: field 'planning.budget': Input should be a valid integer, unable to parse string as an integer",
    ]


def test_a_key_given_twice_is_refused(tmp_path: Path) -> None:
    """YAML keeps the last of two equal keys: a second `mining:` block would drop the first one's settings."""
    path = tmp_path / "config.yaml"
    path.write_text("mining:\n  merge_similarity: 0.9\nplanning: {budget: 4}\nmining: {min_count: 3}\n",
                    encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == (f"{path}:4: key 'mining' is given twice (first at line 1) and only the last would "
                              "count; keep one")
    path.write_text("mining:\n  min_count: 2\n  Off: 1\n", encoding="utf-8")  # YAML 1.1 reads "Off" as false
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == (f"{path}:3: key 'Off' is read by YAML as false, not as a name; quote it (\"Off\":) "
                              "if it is meant")
    path.write_text("base: &b {budget: 4}\nplanning:\n  <<: *b\n  budget: 6\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="field 'base'"):  # a merge key may be overridden; `base` is unknown
        load_config(path)


def test_a_pii_name_that_is_a_listed_value_is_refused(tmp_path: Path) -> None:
    """`pii_names: [Sanne, berlin]` beside the office Berlin would scrub Berlin from every question."""
    path = tmp_path / "config.yaml"
    path.write_text("facets:\n  - name: office\n    values: [Berlin]\n    aliases: {Berlijn: Berlin}\n"
                    "pii_names:\n  - Sanne\n  - berlin\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == (f"{path}:7: pii name 'berlin' is also the office 'Berlin': every question naming "
                              "that office would lose it to {name}; remove it from pii_names (or rename the value)")
    path.write_text(path.read_text(encoding="utf-8").replace("- berlin", "- Berlijn"), encoding="utf-8")
    with pytest.raises(ConfigError, match=":7: pii name 'Berlijn' is also the office 'Berlijn'"):  # an alias
        load_config(path)
    path.write_text(path.read_text(encoding="utf-8").replace("  - Berlijn\n", ""), encoding="utf-8")
    assert load_config(path).pii_names == ["Sanne"]


def test_two_year_facets_are_refused(tmp_path: Path) -> None:
    """A question's years fill one year facet: a second (`fiscal_year`) would never get a value."""
    path = tmp_path / "config.yaml"
    path.write_text("facets:\n  - name: year\n    kind: year\n  - name: fiscal_year\n    kind: year\n",
                    encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == (f"{path}:5: facets year, fiscal_year are both of kind year, but a question's years "
                              "fill the first alone; keep one year facet (make the other a category)")
    # a publication made before the check (its config.json) still loads
    from schemas.config import published_config
    assert len(published_config(json.dumps({"facets": [{"name": "year", "kind": "year"},
                                                       {"name": "fiscal_year", "kind": "year"}]})).facets) == 2
    path.write_text("facets:\n  - name: year\n    kind: year\n  - name: published\n    kind: date\n",
                    encoding="utf-8")
    assert [f.kind for f in load_config(path).facets] == ["year", "date"]  # one of each is fine


def test_a_config_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(b"facets:\n  - name: office\n    values: [Z\xfcrich]\n")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}:3: not UTF-8 text; re-encode the file as UTF-8"


def test_a_config_without_facets_is_accepted(tmp_path: Path) -> None:
    """A corpus with no facet is first-class: `facets: []` reads, and a question has no constraint but its
    qualifiers; shapes recur by their wording alone."""
    from schemas.extract import Lexicon

    path = tmp_path / "config.yaml"
    path.write_text("facets: []\nqualifiers: {part-time: [part time]}\n", encoding="utf-8")
    config = load_config(path)
    assert config.facets == [] and config.facet_names == []
    skeleton = Lexicon(config).skeleton("Vacation days in Berlin in 2026 for part time staff?")
    assert skeleton.text == "vacation days in berlin in 2026 for part time staff" and skeleton.slots == {}


@pytest.mark.parametrize(("text", "message"), [
    ("", ": the config is empty; copy data/configs/demo.yaml"),
    ("# only a comment\n", ": the config is empty"),
    ("- a\n- b\n", ": expected a YAML mapping of setting: value at the top level, got a list"),
    ("planning: {budget: 4\nmining: {}\n", ":2: not valid YAML: expected ',' or '}'"),
    ("facets:\n\t- name: office\n", ":2: not valid YAML: found character '\\t' that cannot start any token "
     "(while scanning for the next token); indent with spaces: YAML allows no tab there"),
    ("facets: [{name: office}]\npii_names: [2026-02-30]\n", None),  # a date is its text: no bare "day is out of range"
    ("facets:\n  - name: office\n  - name: office\n", ":1: field 'facets': facet office is named twice"),
    ("facets: [{name: office}]\nbill: {tokens_per_s: 0}\n", ":2: field 'bill.tokens_per_s': Input should be greater "
     "than 0"),
    ("facets: [{name: office}]\nbill: {price_in: -3}\n", ":2: field 'bill.price_in': Input should be greater than or "
     "equal to 0"),
])
def test_config_mistakes_name_the_line_and_the_fix(tmp_path: Path, text: str, message: str | None) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    if message is None:
        assert load_config(path).pii_names == ["2026-02-30"]
        return
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(f"{path}{message}"), str(err.value)


@pytest.mark.parametrize(("name", "fix"), [("Source", "'source'): it names slots; a corpus metadata key spelled "
                                                    "otherwise is read with `key: Source`"), ("region2", "'region'"),
                                         ("published-date", "'published_date'"), ("qualifier", "reserved")])
def test_a_facet_name_that_cannot_be_a_slot_is_refused(tmp_path: Path, name: str, fix: str) -> None:
    """A facet's name is its placeholder and its slots' stem ({source_1}): one that cannot be would leave its
    slots unfilled and every shape that names it to one search."""
    path = tmp_path / "config.yaml"
    path.write_text(f"facets:\n  - name: office\n  - name: {name}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(f"{path}:3: field 'facets.1.name'") and fix in str(err.value)


json_documents = st.recursive(json_values, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)), max_leaves=6)
json_space = st.text(alphabet=" \t\r\n", max_size=3)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.tuples(json_space, json_documents, json_space).map(
    lambda t: t[0] + json.dumps(t[1]) + t[2]), st.text(max_size=20)), min_size=1, max_size=10))
def test_object_check_agrees_with_the_json_type(lines: list[str]) -> None:
    """Ingest tells a JSON object from other JSON by its first character; DuckDB's json_type must agree."""
    import pyarrow as pa

    batch = pa.table({"line": [line.replace("\x00", "") for line in lines]})  # noqa: F841
    rows = duckdb.sql(f"SELECT line, {IS_OBJECT}, json_type(line) = 'OBJECT' FROM batch "
                      "WHERE json_valid(line)").fetchall()
    for line, by_prefix, by_type in rows:
        assert by_prefix == by_type, line


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([json.dumps(GOOD).encode(), b"", b" ", b"\x80", b"ab\xffcd", b"\x00"]), min_size=1,
                max_size=8), st.sampled_from([b"\n", b"\r\n", b"\r"]))
@example(texts=[json.dumps(GOOD).encode(), b"", b"\x80"], end=b"\r\n")  # DuckDB's byte position: the blank line
@example(texts=[b"\x80", b"", b"\x80"], end=b"\n")
def test_lines_that_are_not_utf8_are_quarantined_with_their_numbers(tmp_path: Path, texts: list[bytes],
                                                                     end: bytes) -> None:
    """Each line that is not UTF-8 is quarantined under its own number, in a file with one kind of line break.
    (In a file that mixes "\r\n" with a lone "\r", DuckDB can read such a line as blank: not covered.)"""
    data = b"".join(text + end for text in texts)
    path = tmp_path / "logs.jsonl"
    path.write_bytes(data)
    expected = []
    for number, line in enumerate(data.splitlines(), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            expected.append(number)
    ing = ingest(path, now=datetime(2026, 11, 30))
    try:
        got = ing.con.sql("SELECT line FROM quarantine WHERE reason = 'not UTF-8 text' ORDER BY line").fetchall()
    finally:
        ing.con.close()
    assert [r[0] for r in got] == expected


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from([json.dumps(GOOD).encode(), b"", b"\x80", b"ab\xffcd"]),
                          st.sampled_from([b"\n", b"\r\n", b"\r"])), min_size=1, max_size=8),
       st.sampled_from([1 << 22, 8]))
@example(lines=[(json.dumps(GOOD).encode(), b"\r\n"), (json.dumps(GOOD).encode(), b"\r"), (b"\x80", b"\n")], block=8)
# Two parts of the second line are not UTF-8 (DuckDB rejected both), and the third line's part after its "\r" too (read
# as empty): the two rejects were taken for one, and the empty part got the second line's number.
@example(lines=[(json.dumps(GOOD).encode(), b"\r\n"), (b"\x80", b"\r"), (b"ab\xffcd", b"\n"),
                (json.dumps(GOOD).encode(), b"\r"), (b"\x80", b"\n")], block=8)
# DuckDB's byte position pointed at a "\r\n" four blank lines before the bad one: they are skipped, not counted
@example(lines=[(json.dumps(GOOD).encode(), b"\n"), (b"", b"\r\n"), (b"", b"\n"), (b"", b"\n"), (b"", b"\n"),
                (b"\x80", b"\n")], block=8)
def test_lines_that_are_not_utf8_keep_their_numbers_when_line_breaks_mix(tmp_path: Path,
                                                                         lines: list[tuple[bytes, bytes]],
                                                                         block: int) -> None:
    """Mixed line breaks: every line that is not UTF-8 is quarantined under its number as an editor shows it
    (a part of it that DuckDB reads after a lone "\\r", too), whether DuckDB rejected it or read it as empty; read
    whole, or a block of a line or two at a time."""
    data = b"".join(text + end for text, end in lines)
    path = tmp_path / "logs.jsonl"
    path.write_bytes(data)
    expected = []
    for number, line in enumerate(editor_lines(data), start=1):
        for part in line.split(b"\r"):
            try:
                part.decode("utf-8")
            except UnicodeDecodeError:
                expected.append(number)
    with patch("tasks.ingest.numbering._BLOCK", block):
        ing = ingest(path, now=datetime(2026, 11, 30))
    try:
        got = ing.con.sql("SELECT line FROM quarantine WHERE reason = 'not UTF-8 text' OR raw = '' "
                          "ORDER BY line").fetchall()
    finally:
        ing.con.close()
    assert [r[0] for r in got] == expected


def test_a_line_the_reader_empties_is_quarantined_not_dropped(tmp_path: Path) -> None:
    """In a file of "\\r\\n" lines, DuckDB read a line that is not UTF-8, after a lone "\\r", as empty; it was
    dropped as a blank line. It is quarantined now, under the number of the line it is part of."""
    path = tmp_path / "logs.jsonl"
    good = json.dumps(GOOD).encode()
    path.write_bytes(good + b"\r\n" + good + b"\r\x80\n")
    ing = ingest(path, now=datetime(2026, 11, 30))
    try:
        assert ing.rows == 2 and ing.quarantined == 1
        assert ing.con.sql("SELECT reason, line FROM quarantine").fetchall() == [("unparsable line", 2)]
    finally:
        ing.con.close()


def editor_lines(data: bytes) -> list[bytes]:
    """A file's lines as an editor shows them: each ends with "\\n", or with "\\r" in a file with no "\\n"."""
    lines = data.split(b"\n" if b"\n" in data else b"\r")
    return lines[:-1] if lines[-1] == b"" else lines


def duckdb_parts(data: bytes, line: bytes) -> list[bytes]:
    """The parts DuckDB reads of one line an editor shows (it skips the empty ones): DuckDB reads a lone "\\r" as a
    line break, and in a file whose first line break is "\\r\\n" it takes the byte after the "\\r" along."""
    first = re.search(rb"\r\n|\r|\n", data)
    eats = first is not None and first.group() == b"\r\n"
    return re.split(rb"\r[\s\S]?" if eats else rb"\r", line.removesuffix(b"\r"))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "ab", "", "x y"]), st.sampled_from(["\n", "\r\n", "\r"])),
                min_size=1, max_size=12), st.sets(st.sampled_from(["a", "b", "ab", "x y"]), min_size=1))
@example(lines=[("a", "\r\n"), ("a", "\r"), ("", "\r"), ("ab", "\n")], wanted={"a", "b"})  # "\r\r": the second is eaten
def test_line_numbers_match_a_plain_split(tmp_path_factory: pytest.TempPathFactory,
                                          lines: list[tuple[str, str]], wanted: set[str]) -> None:
    """Every line DuckDB reads that is exactly a wanted text, numbered as the line an editor shows it on."""
    path = tmp_path_factory.mktemp("lines") / "logs.jsonl"
    data = "".join(text + end for text, end in lines).encode()
    path.write_bytes(data)
    parts = [(n, part) for n, line in enumerate(editor_lines(data), start=1) for part in duckdb_parts(data, line)]
    expected = {(str(path), text): [n for n, part in parts if part == text.encode()] for text in wanted}
    assert line_numbers([(str(path), text) for text in wanted]) == expected  # each text searched for
    with patch("tasks.ingest.numbering._FIND_UP_TO", 0):  # one pass over the lines, as for a file with many bad lines
        assert line_numbers([(str(path), text) for text in wanted]) == expected
    for find_up_to in (0, 32):  # a block of a line or two at a time: the numbers run on across blocks
        with patch("tasks.ingest.numbering._BLOCK", 4), patch("tasks.ingest.numbering._FIND_UP_TO", find_up_to):
            assert line_numbers([(str(path), text) for text in wanted]) == expected


def test_a_day_of_future_timestamps_is_quarantined_line_by_line(tmp_path: Path) -> None:
    """A clock gone wrong quarantines most of a log: every line keeps its number, reason and scrubbed text.
    (Numbering searched the file once per line and the rows went in one by one: 600,000 took 8 minutes.)"""
    path = tmp_path / "logs.jsonl"
    bad = [{**GOOD, "ts": "2999-01-01T00:00:00Z", "query": f"per diem {i % 50} for jane.doe@example.com"}
           for i in range(30_000)]
    path.write_text("\n".join(json.dumps(r) for r in [GOOD, *bad, GOOD]) + "\n")
    ing = ingest(path, now=datetime(2026, 11, 30))
    try:
        assert (ing.rows, ing.quarantined) == (2, 30_000)
        got = ing.con.sql("SELECT line, reason, raw FROM quarantine ORDER BY line").fetchall()
    finally:
        ing.con.close()
    assert [r[0] for r in got] == list(range(2, 30_002))
    assert {r[1] for r in got} == {"timestamp in the future"}
    assert got[0][2] == "per diem 0 for {email}" and not any("jane.doe" in r[2] for r in got)


def test_a_bad_line_logged_many_times_gets_each_number_once(tmp_path: Path) -> None:
    path = tmp_path / "logs.jsonl"
    path.write_text("not json\n" * 5_000 + json.dumps(GOOD) + "\n" + "not json\n" * 5)
    ing = ingest(path, now=datetime(2026, 11, 30))
    try:
        lines = [r[0] for r in ing.con.sql("SELECT line FROM quarantine ORDER BY line").fetchall()]
    finally:
        ing.con.close()
    assert lines == [*range(1, 5_001), *range(5_002, 5_007)]


@pytest.mark.parametrize("block", [1 << 22, 1 << 12])
def test_a_latin1_log_quarantines_every_line_under_its_own_number(tmp_path: Path, block: int) -> None:
    """A log exported as Latin-1: every line with an accent is not UTF-8. Each keeps its number, counted on from
    the one before (it was counted from the top of the file each time), blank lines before the last included."""
    path = tmp_path / "logs.jsonl"
    lines = [json.dumps({**GOOD, "query": f"congé à Zürich {i}"}, ensure_ascii=False) for i in range(3_000)]
    path.write_bytes("\n".join(lines).encode("latin-1") + b"\n" * 10 + "congé".encode("latin-1") + b"\n")
    with patch("tasks.ingest.numbering._BLOCK", block):  # read whole, or some 40 lines at a time
        ing = ingest(path, now=datetime(2026, 11, 30))
    try:
        got = ing.con.sql("SELECT line, reason FROM quarantine ORDER BY line").fetchall()
    finally:
        ing.con.close()
    assert got == [(n, "not UTF-8 text") for n in [*range(1, 3_001), 3_010]]


@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
def test_a_carriage_return_inside_a_line_keeps_the_numbers_an_editor_shows(tmp_path: Path, end: bytes) -> None:
    """A raw "\\r" inside a JSONL line: DuckDB reads the line as two, both quarantined under the line's number as
    an editor (and grep -n, sed) shows it; the lines after it keep theirs. (The second part had no number in a
    file of "\\r\\n" lines, and in a file of "\\n" lines every later line was numbered one too many.)"""
    path = tmp_path / "logs.jsonl"
    torn = b'{"ts": "2026-11-24T09:00:00Z", "user": "u-1", "query": "per diem\rLisbon"}'
    path.write_bytes(end.join([json.dumps(GOOD).encode(), torn, b"not json", json.dumps(GOOD).encode()]) + end)
    ing = ingest(path, now=datetime(2026, 11, 30))
    try:
        got = ing.con.sql("SELECT line, reason FROM quarantine ORDER BY line, raw").fetchall()
        assert ing.rows == 2
    finally:
        ing.con.close()
    assert got == [(2, "unparsable line"), (2, "unparsable line"), (3, "unparsable line")]


def test_a_log_whose_lines_end_with_a_carriage_return_alone_is_numbered_by_it(tmp_path: Path) -> None:
    """A log with no "\\n" at all (lines ending with a lone "\\r", as old Mac files do) is numbered by its "\\r"."""
    path = tmp_path / "logs.jsonl"
    path.write_bytes(b"\r".join([json.dumps(GOOD).encode(), b"not json", json.dumps(GOOD).encode(), b"\x80"]) + b"\r")
    ing = ingest(path, now=datetime(2026, 11, 30))
    try:
        got = ing.con.sql("SELECT line, reason FROM quarantine ORDER BY line").fetchall()
    finally:
        ing.con.close()
    assert got == [(2, "unparsable line"), (4, "not UTF-8 text")]


def test_a_large_log_is_numbered_a_block_at_a_time(tmp_path: Path) -> None:
    """Numbering a log's bad lines read the whole file into memory, decompressed: a day of a large log held its
    whole size. It reads a block of lines at a time now, across which the numbers run on."""
    import gzip
    import tracemalloc

    path = tmp_path / "logs.jsonl.gz"
    good = [json.dumps({**GOOD, "query": f"how many vacation days in office {i}"}).encode() for i in range(200_000)]
    lines = [*good[:120_000], b"not json", *good[120_000:190_000], b"\x80 not UTF-8", *good[190_000:], b"not json"]
    path.write_bytes(gzip.compress(b"\n".join(lines) + b"\n", compresslevel=1))  # 16 MB of lines
    tracemalloc.start()
    try:
        with patch("tasks.ingest.numbering._BLOCK", 1 << 20):
            ing = ingest(path, now=datetime(2026, 11, 30))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    try:
        got = ing.con.sql("SELECT line, reason FROM quarantine ORDER BY line").fetchall()
    finally:
        ing.con.close()
    assert got == [(120_001, "unparsable line"), (190_002, "not UTF-8 text"), (200_003, "unparsable line")]
    assert peak < 8 << 20  # a few blocks, never the file's 16 MB
