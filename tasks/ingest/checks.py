"""Checks of a log's format before and after DuckDB reads it: encoding, gzip data, line breaks, columns."""

from __future__ import annotations

import gzip
import re
import shlex
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from schemas.errors import LogError

if TYPE_CHECKING:
    pass
from tasks.ingest.files import csv_header, log_window, near_window, open_log
from tasks.ingest.sql import reader_sql


def check_window(path: str | Path, since: date | None, until: date | None, last_days: int | None = None) -> None:
    """Refuse, before any stage runs, what `ingest` would refuse of the window it reads (`log_window`): no log
    files, mixed formats, a file in UTF-16 or UTF-32, and a window no `date=` folder of a log folder partitioned
    by date can hold rows of (a day's margin each side), which would mine nothing. Another layout is checked by
    the rows' own timestamps as they are read."""
    read = log_window(path, since, until, last_days)
    logged = sorted(day for day, _ in read.days or []) if since or until else []
    if logged and not any(near_window(day, since, until) for day in logged):
        window = f"from {since or 'the start'} to {until or 'the end'}"
        raise LogError(f"{path}: no date= folder within a day of the window {window} (the folders hold days from "
                       f"{logged[0]} to {logged[-1]}); pass --since/--until that cover logged days")
    check_encoding(read.files, read.kind)


def check_breaks(files: list[str]) -> None:
    """Refuse a CSV log whose lines end otherwise than its header ("\r\n" after "\n", or the reverse): DuckDB
    reads a file with the header's line break only, and stops at another. Looked for once a read failed."""
    for f in files:
        data = _file_bytes(f)
        first = data.find(b"\n") if data is not None else -1
        if data is None or first < 0:
            continue
        crlf = data[first - 1:first] == b"\r"
        pos, quotes = first, 0
        for other in re.compile(rb"(?<!\r)\n" if crlf else rb"\r\n").finditer(data, first + 1):
            quotes += data.count(b'"', pos, other.start())
            pos = other.start()
            if quotes % 2 == 0:  # a row's end, not a break inside a value in quotes (which may hold either)
                line = data.count(b"\n", 0, pos) + 1
                ends = r"\n, the header with \r\n" if crlf else r"\r\n, the header with \n"
                raise LogError(f"{f}:{line}: this line ends with {ends}; a CSV log's lines must all end alike: "
                               "convert the file's line breaks to one kind (such as with dos2unix)")


# A text log in UTF-16 or UTF-32: NUL bytes beside its first ASCII characters (blanks, then one that is not, and
# one more: "{\"" or a CSV header's start), after its byte order mark if it has one (UTF-32LE's begins with
# UTF-16LE's: UTF-32 is tried first). A UTF-8 mark is read as UTF-8.
_WIDE_TEXT = {"UTF-32LE": (b"\xff\xfe\0\0", re.compile(rb"(?:[\t\n\r ]\0\0\0)*[!-~]\0\0\0[\t\n\r -~]\0\0\0")),
              "UTF-32BE": (b"\0\0\xfe\xff", re.compile(rb"(?:\0\0\0[\t\n\r ])*\0\0\0[!-~]\0\0\0[\t\n\r -~]")),
              "UTF-16LE": (b"\xff\xfe", re.compile(rb"(?:[\t\n\r ]\0)*[!-~]\0[\t\n\r -~]\0")),
              "UTF-16BE": (b"\xfe\xff", re.compile(rb"(?:\0[\t\n\r ])*\0[!-~]\0[\t\n\r -~]"))}


def check_encoding(files: list[str], kind: str) -> None:
    """Refuse a JSONL or CSV log written in UTF-16 or UTF-32, naming the command that re-encodes it: read as UTF-8,
    each of its lines would be quarantined and its day would go missing from the shapes."""
    for f in files if kind != "parquet" else []:
        head = _head(f)
        for name, (mark, wide) in _WIDE_TEXT.items():
            marked = head.startswith(mark)
            if not wide.match(head, len(mark) if marked else 0):
                continue
            q = shlex.quote(f)
            encoding = name[:6] if marked else name  # iconv reads the mark and drops it
            says = f"it starts with a {encoding} byte order mark" if marked else "NUL bytes sit between its characters"
            recode = (f"gzip -dc {q} | iconv -f {encoding} -t UTF-8 | gzip > {q}.utf8" if f.lower().endswith(".gz")
                      else f"iconv -f {encoding} -t UTF-8 {q} > {q}.utf8")
            raise LogError(f"{f}:1: the file is {encoding} text ({says}), not UTF-8, so none of its lines can be read; "
                           f"re-encode it as UTF-8: {recode} && mv {q}.utf8 {q}")


def _head(file: str) -> bytes:
    """A log file's first bytes, decompressed; b"" when they cannot be read (`_check_gzip` names a damaged .gz)."""
    try:
        with open_log(file) as fh:
            return fh.read(64)
    except (OSError, EOFError, zlib.error):
        return b""


def checking_gzip(files: list[str], kind: str) -> Future[None] | None:
    """`_check_gzip` of a JSONL or CSV log's gzip files, in a thread beside DuckDB's read (zlib releases the GIL)."""
    gz = [f for f in files if f.lower().endswith(".gz")] if kind != "parquet" else []
    if not gz:
        return None
    pool = ThreadPoolExecutor(1)
    checked = pool.submit(_check_gzip, gz)
    pool.shutdown(wait=False)
    return checked


def _check_gzip(files: list[str]) -> None:
    """Refuse a gzip log that is empty, or whose data ends early or fails its checksum, naming the line where it
    does: DuckDB names the file only, or reads a damaged file's bytes as lines."""
    for f in (f for f in files if f.lower().endswith(".gz")):
        lines, problem = _gzip_lines(f)
        fix = "copy it again from its source (`gzip -t` checks it), or move it out of the logs folder"
        if "data check" in problem:  # a checksum at a member's end: damaged bytes, anywhere before
            raise LogError(f"{f}: the gzip data fails its checksum ({problem}), so some of its {lines} lines are "
                           f"damaged; {fix}")
        if problem:
            raise LogError(f"{f}:{lines + 1}: {problem}, after {lines} whole lines; the file is truncated or "
                           f"damaged: {fix}")
        if lines == 0 and Path(f).stat().st_size == 0:
            raise LogError(f"{f}:1: the file is empty (0 bytes), so it is no gzip file; delete it, or write its "
                           "log with gzip")


def _gzip_lines(file: str) -> tuple[int, str]:
    """The whole lines a gzip file's data holds up to where it breaks off, and how it does ("" if it does not).
    Members written one after another (`cat a.gz b.gz`) are read on."""
    lines, members, fed = 0, 0, False
    d = zlib.decompressobj(wbits=31)
    with open(file, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            while chunk:
                saved, opened = d.copy(), not fed
                fed = True
                try:
                    lines += d.decompress(chunk).count(b"\n")
                except zlib.error as exc:
                    if members and opened:  # which DuckDB's reader stops at
                        return lines, "bytes that are no gzip data follow the gzip data"
                    lines += _lines_before_error(saved, chunk)
                    return lines, str(exc) if "data check" in str(exc) else f"the gzip data breaks off ({exc})"
                if d.eof:
                    chunk, members, fed = d.unused_data, members + 1, False
                    d = zlib.decompressobj(wbits=31)
                else:
                    chunk = b""
    return lines, "the gzip data ends before its end marker" if fed else ""


def _lines_before_error(d: Any, chunk: bytes) -> int:
    """The line breaks a decompressor gives for `chunk` before the bytes it fails on, fed a few at a time."""
    lines = 0
    for at in range(0, len(chunk), 64):
        try:
            lines += d.decompress(chunk[at:at + 64]).count(b"\n")
        except zlib.error:
            break
    return lines


LOG_COLUMNS = ("ts", "user", "query")


def check_columns(con: duckdb.DuckDBPyConnection, path: str | Path, files: list[str], kind: str) -> None:
    """A Parquet or CSV log must have the columns ts, user and query (a JSONL line missing one is quarantined).
    Each CSV file by its own header: the files are read by name together, so one file's column would fill
    another's gap with NULLs."""
    if kind == "csv":
        for f in files:
            _need_columns(f"{f}:1", kind, list(csv_header(f)))
        return
    found = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {reader_sql(files, kind)}").fetchall()]
    _need_columns(str(path), kind, [c for c in found if c != "filename"])


def _need_columns(where: str, kind: str, found: list[str]) -> None:
    missing = [c for c in LOG_COLUMNS if c not in found]
    if missing:
        raise LogError(f"{where}: the {kind.upper()} log has no column {', '.join(missing)}; it needs ts, user "
                       f"and query (found {', '.join(found)}); rename the columns")


def _file_bytes(file: str) -> bytes | None:
    """A log file's bytes, decompressed; None when it cannot be read now."""
    try:
        data = Path(file).read_bytes()
        return gzip.decompress(data) if file.lower().endswith(".gz") else data
    except (OSError, EOFError, zlib.error):
        return None
