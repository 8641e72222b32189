"""Numbering quarantined lines: DuckDB reads a log without line numbers, so the files holding a bad line are
read again, a block at a time, and each bad line is given the number an editor shows."""

from __future__ import annotations

import csv
import json
import re
import zlib
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from schemas.errors import LogError

if TYPE_CHECKING:
    pass
from tasks.ingest.checks import LOG_COLUMNS
from tasks.ingest.files import csv_header, open_log
from tasks.ingest.sql import AS_TEXT, reader_sql


def line_numbers(lines: list[tuple[str, str]], counted: dict[str, int] | None = None
                 ) -> dict[tuple[str, str], list[int]]:
    """(file, line text) -> the 1-based numbers of the lines of that file holding exactly that text, in order.

    DuckDB reads a JSONL log without line numbers; only the files holding a quarantined line are read again
    here, so a bad line can be found in its file. A line logged twice gets both numbers, one per record.
    `counted`, when given, gets each file's number of "\n" line breaks."""
    wanted: dict[str, set[str]] = {}
    for file, text in lines:
        wanted.setdefault(file, set()).add(text)
    out: dict[tuple[str, str], list[int]] = {}
    with ThreadPoolExecutor(2) as pool:  # two files at a time: decompressing releases the GIL
        for file, (found, breaks) in zip(wanted, pool.map(_numbers_of, wanted, wanted.values()), strict=True):
            out.update(found)
            if counted is not None:
                counted[file] = breaks
    return out


def _numbers_of(file: str, texts: set[str]) -> tuple[dict[tuple[str, str], list[int]], int]:
    """`line_numbers` for one file, read a block at a time, and its number of "\n" line breaks. A file that cannot
    be read now (or from some point on) leaves its lines (from there) without a number."""
    wanted = {text.encode("utf-8"): text for text in texts if text}  # an emptied line: `number_emptied`
    out: dict[tuple[str, str], list[int]] = {(file, text): [] for text in texts}
    before, lf = 0, 0  # the lines of the blocks before this one, and their "\n"
    for block, layout in blocks(file):
        for text, number in _numbers_in(block, wanted, layout):
            out[(file, text)].append(before + number)
        before += block.count(layout.mark)
        lf = before if layout.mark == b"\n" else 0
    return out, lf


def csv_line_numbers(rows: list[tuple[str, str]]) -> dict[tuple[str, str], list[int]]:
    """(file, a CSV row's fields as `FIND_AGAIN` gives them) -> the numbers of the lines that the rows of that file
    holding exactly those fields start on, in order: the header is line 1, and a value in quotes counts each line
    it spans. As for a JSONL log, only the files holding a quarantined row are read again, a line at a time."""
    wanted: dict[str, dict[tuple[str, ...], str]] = {}
    for file, fields in rows:  # DuckDB reads an empty value as NULL
        wanted.setdefault(file, {})[tuple(v or "" for v in json.loads(fields))] = fields
    out: dict[tuple[str, str], list[int]] = {(file, fields): [] for file, fields in rows}
    for file, found in wanted.items():
        for fields, number in _csv_rows_of(file, found):
            out[(file, fields)].append(number)
    return out


def parquet_row_numbers(con: duckdb.DuckDBPyConnection, rows: list[tuple[str, str]]
                        ) -> dict[tuple[str, str], list[int]]:
    """(file, a Parquet row's fields as `FIND_AGAIN` gives them) -> the numbers of the rows of that file holding exactly
    those fields, counted from 1, in order. Only the files holding a quarantined row are read again."""
    out: dict[tuple[str, str], list[int]] = {(file, fields): [] for file, fields in rows}
    if not out:
        return out
    values = [json.loads(fields) for _, fields in out]
    wanted = pa.table({"filename": [file for file, _ in out], "fields": [fields for _, fields in out],  # noqa: F841
                       **{c: [v[i] for v in values] for i, c in enumerate(LOG_COLUMNS)}})
    files = sorted({file for file, _ in out})
    same = " AND ".join(f'p."{c}" IS NOT DISTINCT FROM w."{c}"' for c in LOG_COLUMNS)
    found = con.execute(f"""
        SELECT w.filename, w.fields, p.file_row_number + 1 AS n
        FROM (SELECT filename, file_row_number, {AS_TEXT} FROM {reader_sql(files, "parquet")}) p
             JOIN wanted w ON p.filename = w.filename AND {same}
        ORDER BY w.filename, n""").fetchall()
    for file, fields, number in found:
        out[(file, fields)].append(number)
    return out


def _csv_rows_of(file: str, wanted: dict[tuple[str, ...], str]) -> list[tuple[str, int]]:
    """(fields, the line its row starts on) for the rows of a CSV log whose ts, user and query are a key of
    `wanted`. A file that cannot be read to its end (changed since, or holding a value Python's CSV reader refuses,
    such as a lone "\r" outside quotes) gives the rows before that point only."""
    out: list[tuple[str, int]] = []
    try:
        header = csv_header(file)
        at = [header.index(c) for c in LOG_COLUMNS]
        with open_log(file) as fh:
            reader = csv.reader(line.decode("utf-8", "replace") for line in fh)  # a binary file's lines end at "\n"
            next(reader, None)
            start = reader.line_num + 1
            for row in reader:
                fields = wanted.get(tuple(row[i] for i in at)) if len(row) == len(header) else None
                if fields is not None:
                    out.append((fields, start))
                start = reader.line_num + 1
    except (LogError, ValueError, OSError, EOFError, zlib.error, csv.Error):
        pass  # the rows after it keep no number
    return out


_FIND_UP_TO = 32  # wanted lines a file is searched for one by one (found up to 8 times each, in all); else one pass


def _numbers_in(data: bytes, wanted: dict[bytes, str], layout: _Layout) -> list[tuple[str, int]]:
    """(text, number) for the lines of a block of a file's bytes that are a key of `wanted`, in order, numbered from
    the block's first. A few wanted lines (most logs have a bad line or two a day) are searched for in the bytes,
    with the line ends before each counted in C; many, in one pass over its lines."""
    out: list[tuple[str, int]] = []
    if len(wanted) <= _FIND_UP_TO and sum(data.count(line) for line in wanted) <= _FIND_UP_TO * 8:
        found = sorted((at, hit) for line, hit in wanted.items() if b"\r" not in line and b"\n" not in line
                       for at in _line_starts_of(data, line, layout.eats))  # a text with a break: no line DuckDB read
        pos, number = 0, 1
        for at, hit in found:
            number += data.count(layout.mark, pos, at)
            pos = at
            out.append((hit, number))
        return out
    for number, line in split_lines(data, layout):
        text = wanted.get(line)
        if text is not None:
            out.append((text, number))
    return out


# Line numbers are those an editor shows (and grep -n, sed -n): a line ends with "\n" (or "\r\n"), and a lone "\r"
# is a character of its line; in a file with no "\n" at all (lines ending with a lone "\r", as old Mac files do), a
# line ends with "\r". DuckDB reads a lone "\r" as a line break anywhere, so it can read one line as two: both are
# numbered as the line they lie on.
_BREAK = re.compile(rb"\r\n|\r|\n")  # a line break as DuckDB reads them


_CUT = re.compile(rb"\r")  # where DuckDB cuts a line in two


_CUT_EATING = re.compile(rb"\r[\s\S]?")  # likewise, in a file it reads as one of "\r\n" lines (`_Layout`)


@dataclass(frozen=True)
class _Layout:
    """How a file's lines end, as its first block shows (`blocks`). `mark`: the byte that ends a line as an editor
    counts them: "\n", or "\r" in a file with no "\n". `eats`: whether DuckDB reads the file as one of "\r\n" lines
    (its first line break is one); a lone "\r" then ends a line and takes the byte after it along, which DuckDB
    reads as part of the break."""

    mark: bytes
    eats: bool


def _layout(data: bytes) -> _Layout:
    """The layout of a file whose first block (or whole bytes) is `data`."""
    first = _BREAK.search(data)
    return _Layout(b"\n" if b"\n" in data else b"\r", first is not None and first.group() == b"\r\n")


def _line_starts_of(data: bytes, line: bytes, eats: bool) -> list[int]:
    """Where the lines DuckDB reads of `data` that are exactly `line` (which holds no line break) start; `eats`:
    see `_Layout`."""
    out = []
    at = data.find(line)
    while at >= 0:
        end = at + len(line)
        before = data[at - 1] if at else 10
        if before == 10 or not eats:
            starts = before in (10, 13)
        elif before == 13:  # in a run of lone "\r", each cut eats the next one: an even run ends eaten
            starts = _crs_ending(data, at - 1) % 2 == 0
        else:  # the byte before was eaten by a cut: a "\r" that ends an odd run
            starts = _crs_ending(data, at - 2) % 2 == 1
        if starts and (end == len(data) or data[end] in b"\r\n"):
            out.append(at)
        at = data.find(line, at + 1)
    return out


def _crs_ending(data: bytes, at: int) -> int:
    """How many "\r" run back from byte `at` (0 where `at` is not one)."""
    n = 0
    while at - n >= 0 and data[at - n] == 13:
        n += 1
    return n


def split_lines(data: bytes, layout: _Layout) -> list[tuple[int, bytes]]:
    """The lines DuckDB reads of a block of a file, each with the number of the line it lies on, counted from the
    block's first (see `_Layout`): two lines DuckDB reads of one (cut by a lone "\r") have one number. A last break
    ends the last line: it does not start an empty one."""
    if layout.mark == b"\r":
        lines = _BREAK.split(data)  # "\r" ends each line
        return list(enumerate(lines[:-1] if lines and lines[-1] == b"" else lines, start=1))
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    if b"\r" not in data:
        return list(enumerate(lines, start=1))
    cut = _CUT_EATING if layout.eats else _CUT
    out: list[tuple[int, bytes]] = []
    for number, line in enumerate(lines, start=1):
        line = line.removesuffix(b"\r")
        if b"\r" in line:
            out.extend((number, part) for part in cut.split(line))
        else:
            out.append((number, line))
    return out


def number_emptied(numbers: dict[tuple[str, str], list[int]], files: set[str],
                    rejects: list[tuple[Any, ...]]) -> None:
    """Numbers for the lines the reader emptied (a line that is not UTF-8 after a lone "\r" in a file of
    "\r\n" lines): the lines of the file that are not UTF-8 and not already numbered among the rejects (a line
    DuckDB reads as two parts can be both: each reject numbers one part)."""
    for file in files:
        known = Counter(line for f, line, _, _ in rejects if f == file)
        numbers[(file, "")] = [n for n in _undecodable_lines(file) if not _take(known, n)]


def _take(counts: Counter[Any], key: Any) -> bool:
    """Take one of `key` from `counts`, if there is one left."""
    if counts[key] <= 0:
        return False
    counts[key] -= 1
    return True


def _undecodable_lines(file: str) -> list[int]:
    """The numbers of the lines of a file that are not UTF-8 (see `_Layout`), one for each line DuckDB reads of
    it. The byte after a lone "\r" stays in its line: DuckDB empties such a line (`number_emptied`) rather than
    dropping the byte."""
    out = []
    before = 0
    for block, layout in blocks(file):
        for number, line in split_lines(block, _Layout(layout.mark, eats=False)):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                out.append(before + number)
        before += block.count(layout.mark)
    return out


_BLOCK = 1 << 22  # bytes of a log file read at a time to number its bad lines


def blocks(file: str) -> Iterator[tuple[bytes, _Layout]]:
    """A log file's bytes, decompressed, a block of whole lines at a time (each block but the last ends with "\n";
    a file with none is one block), with the file's layout: memory holds a block (and a line longer than one), not
    the file. The blocks end where the file cannot be read (it changed, or its gzip data is damaged, which
    `_check_gzip` names)."""
    layout = None
    pending: list[bytes] = []  # a line that runs on into the next read
    try:
        with open_log(file) as fh:
            while chunk := fh.read(_BLOCK):
                end = chunk.rfind(b"\n") + 1
                if not end:
                    pending.append(chunk)
                    continue
                block = b"".join([*pending, chunk[:end]]) if pending else chunk[:end]
                pending = [chunk[end:]]
                layout = layout or _layout(block)
                yield block, layout
    except (OSError, EOFError, zlib.error):
        return
    rest = b"".join(pending)
    if rest:
        yield rest, layout or _layout(rest)


class _Reading:
    """A log file read a block at a time (`blocks`) to number the lines holding byte positions, given in order."""

    def __init__(self, file: str) -> None:
        self.blocks = blocks(file)
        self.data, self.layout = next(self.blocks, (b"", _layout(b"")))
        self._start, self._first = 0, 1  # where `data` starts in the file, and the number of its first line
        self._counted = (0, 1)  # the last line start counted in `data` and its number

    def number(self, at: int, undecodable: bool) -> int | None:
        """The number of the line holding byte `at` (for a line that is not UTF-8: of the first such line from
        there, see `_undecodable_start`); None past the file's end."""
        while at - self._start >= len(self.data) and self._next():
            pass
        at -= self._start
        start = min(at, len(self.data)) if not undecodable else _undecodable_start(self.data, at)
        while start == _RAN_OUT:  # the lines looked at run on past the block: look at the next one with it
            start = _undecodable_start(self.data, at) if self._next(keep=True) else None
        if start is None:
            return None
        pos, number = self._counted if self._counted[0] <= start else (0, self._first)
        self._counted = (start, number + self.data.count(self.layout.mark, pos, start))
        return self._counted[1]

    def _next(self, keep: bool = False) -> bool:
        """Read the next block, after `data` (`keep`) or in its place."""
        block = next(self.blocks, None)
        if block is None:
            return False
        if keep:
            self.data += block[0]
            return True
        pos, number = self._counted
        self._first = number + self.data.count(self.layout.mark, pos)
        self._counted = (0, self._first)
        self._start += len(self.data)
        self.data = block[0]
        return True


def rejected_lines(con: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    """Lines DuckDB could not read at all (bad encoding, broken quoting), with their line numbers. (In a file of
    "\r\n" lines, a rejected line's text opens with the "\n" of the break before: no sign of a runaway quote.)"""
    try:
        rows = con.execute("""
            SELECT s.file_path, e.line, e.line_byte_position, e.error_type,
                   e.error_type = 'UNQUOTED VALUE'
                   AND position(chr(10) IN ltrim(coalesce(e.csv_line, ''), chr(10))) > 0
            FROM reject_errors e JOIN reject_scans s USING (scan_id, file_id)
            ORDER BY s.file_path, e.line_byte_position""").fetchall()
    except duckdb.Error:
        return []
    reason = {"INVALID ENCODING": "not UTF-8 text"}
    out: list[tuple[Any, ...]] = []
    reading = None  # one file at a time, a block at a time: rejects come in byte order
    for f, line, at, kind, runaway in rows:
        # DuckDB's own number counts records, not lines (a CSV value in quotes can span lines); its byte position
        # points into the record's first line, counted here like every other quarantined line.
        if at is not None:
            if reading is None or reading[0] != f:
                reading = (f, _Reading(f))
            # For a line that is not UTF-8, DuckDB's byte position can point at a blank line before: the first
            # line from there on that is not UTF-8 is the one.
            line = reading[1].number(at, str(kind) == "INVALID ENCODING") or line
        if runaway:  # a CSV quote never closed: the lines after it became its value
            raise LogError(f"{f}:{line}: a quote opened on this line is never closed, so the lines after it cannot "
                           "be read as rows; close the quote, or write a quote inside a value as two (\"\")")
        out.append((f, line, reason.get(str(kind), f"unreadable line ({str(kind).lower()})"), ""))
    return _one_per_line(out)


def _one_per_line(rejects: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """One record per rejected line: DuckDB can report a line twice (a stray quote is an unquoted value and, as
    it runs into the next line, too many columns); the more telling reason is kept. (Two parts DuckDB reads of
    one line, cut by a lone "\r", are two records of that line, as two quarantined parts are.)"""
    told = {(r[0], r[1]) for r in rejects if r[1] is not None and not r[2].endswith("(too many columns)")}
    return [r for r in rejects if not (r[2].endswith("(too many columns)") and (r[0], r[1]) in told)]


def _undecodable_start(data: bytes, at: int, look: int = 4) -> int | None:
    """Where the first line that is not UTF-8 starts, among the `look` lines that are not blank from the one
    holding byte `at`; `_RAN_OUT` when `data` (a block, `blocks`) ends first."""
    if at >= len(data):
        return _RAN_OUT
    if data[at] == 10 and at > 0 and data[at - 1] == 13:
        at -= 1  # inside a "\r\n": that break ends the line before
    start = max(data.rfind(b"\n", 0, at), data.rfind(b"\r", 0, at)) + 1
    while look > 0:
        found = _BREAK.search(data, start)
        end = found.start() if found else len(data)
        try:
            data[start:end].decode("utf-8")
        except UnicodeDecodeError:
            return start
        if found is None:
            return _RAN_OUT
        look -= end > start  # blank lines do not count: the reader skips them, however many there are
        start = found.end()
    return None


_RAN_OUT = -1  # `_undecodable_start` reached the end of its bytes
