"""Ingest query logs with DuckDB: JSONL, Parquet or CSV, optionally hive-partitioned; bad rows to quarantine."""

from __future__ import annotations

import csv
import functools
import gzip
import io
import json
import os
import re
import shlex
import zlib
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from schemas.errors import LogError
from schemas.pii import Scrubber

if TYPE_CHECKING:
    from tasks.ingest.lines import LineMemo




@dataclass
class Ingested:
    con: duckdb.DuckDBPyConnection  # holds `rows` (ts, user, query; a view of the table `staged`) and `quarantine`
    files: int
    rows: int
    quarantined: int
    numbering: Future[list[str]] | None = None  # filling `quarantine`, when `ingest` deferred it
    since: date | None = None  # the window the rows are from (None: open on that side)
    until: date | None = None
    unreadable: list[str] | None = None  # files none of whose lines is a valid row: known once `finish` returns
    read: list[str] | None = None  # the log files read
    whole: list[str] | None = None  # those of the window's own days (a line memo is written for each)
    lines: LineMemo | None = None  # the line memo the rows were read with (`recalled_lines`), if any
    skipped: list[str] | None = None  # the window's log files in a compression DuckDB does not read: not read

    def finish(self) -> None:
        """Wait until the table `quarantine` is complete."""
        if self.numbering is not None:
            self.unreadable = self.numbering.result()
            self.numbering = None


def log_files(path: str | Path) -> tuple[list[str], str]:
    """The log files DuckDB reads, as absolute paths in path order, and their format: jsonl, parquet or csv. In a
    folder, every file of that format (a file of no log format, such as a README or a `.bak`, is not read).
    Absolute: a file's line memo and its rows in the quarantine name it the same way from any working folder."""
    p = Path(path)
    if p.is_file():
        files = [p.resolve()]
    elif p.is_dir():
        found_here = [f for f in p.resolve().rglob("*") if not f.name.startswith(".")]
        files = sorted(f for f in found_here if f.is_file())
        for link in sorted(found_here):
            if link.is_symlink() and not link.exists() and _kind(link):  # its rows would go missing unsaid
                raise LogError(f"{link}: a link to {os.readlink(link)}, which does not exist; restore what it "
                               "points to, or remove the link")
    else:
        raise LogError(f"{p}: logs not found; pass --logs with a file or a folder of JSONL, Parquet or CSV files")
    kinds = {_kind(f) for f in files} - {None}
    if not kinds:
        other = [str(f) for f in files if _compressed_otherwise(f)]
        shown = f" ({other[0]} is compressed otherwise: decompress it or compress it with gzip)" if other else ""
        raise LogError(f"{p}: no .jsonl, .ndjson, .json, .parquet or .csv files (optionally .gz) here{shown}")
    if len(kinds) > 1:
        counts = Counter(k for f in files if (k := _kind(f)))
        top = counts.most_common(1)[0][0]
        odd = [str(f) for f in files if _kind(f) not in (None, top)]
        shown = ", ".join(odd[:3]) + (f" and {len(odd) - 3} more" if len(odd) > 3 else "")
        raise LogError(f"{p}: mixed log formats {sorted(counts)} (the fewer: {shown}); keep one format under "
                       "the logs folder")
    kind = kinds.pop() or ""
    found = [str(f) for f in files if _kind(f) == kind]
    for f in found:
        if "\\" in f and _GLOB.search(f):  # DuckDB finds no file by such a path, escaped or not
            raise LogError(f"{f}: a log path holding both a backslash and one of * ? [ cannot be read; rename it")
    return found, kind


def _kind(f: Path) -> str | None:
    name = f.name.lower().removesuffix(".gz")
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(".csv"):
        return "csv"
    return None


def _compressed_otherwise(f: Path) -> bool:
    """A log file compressed otherwise than with gzip (`a.jsonl.zst`), which DuckDB does not read."""
    return f.suffix.lower() in _OTHER_COMPRESSIONS and _kind(f.with_suffix("")) is not None


_OTHER_COMPRESSIONS = {".zst", ".zstd", ".bz2", ".xz", ".lz4", ".lzma", ".lz", ".br", ".z", ".zip", ".7z"}


def skipped_files(path: str | Path, since: date | None, until: date | None) -> list[str]:
    """The log files of a folder that are compressed otherwise than with gzip (not read: each is named in a
    warning), those of a `date=` folder within a day of the window only."""
    folder = Path(path).resolve()
    if not folder.is_dir():
        return []
    files = sorted(str(f) for f in folder.rglob("*") if f.is_file() and not f.name.startswith(".")
                   and _compressed_otherwise(f))
    days = _partition_days(folder, files) if files else None
    if days is None or not (since or until):
        return files
    return [f for day, f in days if near_window(day, since, until)]


_NO_DELIMITER = "\x1e\x1f\x1e\x1f"
_NO_NULL = "\x1d\x1c\x1d\x1c"  # likewise for the NULL string: an empty line is skipped, not read as NULL
# For a line that is valid JSON: true when it is an object (it opens with "{" after JSON's whitespace). Cheaper
# than `json_type(line) = 'OBJECT'`, which parses the line once more; most lines open with "{" and skip the pattern.
IS_OBJECT = r"(starts_with(line, '{') OR regexp_matches(line, '^[ \t\n\r]*[{]'))"


def sql_files(files: list[str]) -> str:
    """A list of files as the SQL literal DuckDB's readers take. The readers take each name as a glob, so the
    glob's characters are escaped: "a[1].jsonl" is that file, never "a1.jsonl"."""
    return sql_strings([_GLOB.sub(r"[\g<0>]", f) for f in files])


def sql_strings(values: list[str]) -> str:
    """A list of strings as a SQL list literal."""
    return "[" + ", ".join(_sql_string(v) for v in values) + "]"


_GLOB = re.compile(r"[*?\[]")


def _partition_days(path: str | Path, files: list[str]) -> list[tuple[date, str]] | None:
    """(day, file) for every log file of a folder hive-partitioned by date (`date=YYYY-MM-DD/`); None when the
    path is one file, or a file lies outside any `date=` folder (or names no real date)."""
    folder = Path(path).resolve()
    if not folder.is_dir():
        return None
    days: list[tuple[date, str]] = []
    for f in files:
        found = [m.group(1) for part in Path(f).relative_to(folder).parts[:-1] if (m := _PARTITION.fullmatch(part))]
        try:
            days.append((date.fromisoformat(found[-1]), f))
        except (IndexError, ValueError):
            return None
    return days


def window_files(files: list[str], days: list[tuple[date, str]] | None, since: date | None,
                 until: date | None) -> list[str]:
    """The files of a log folder hive-partitioned by date (`days`, see `_partition_days`) whose day can hold rows
    of the window, a day's margin each side for timestamps near midnight: a nightly run reads its window, not
    every day ever logged. All the files when there is no window, the folder is not partitioned by date, or no
    day is left (the rows' own timestamps then decide, and an empty window is reported as such)."""
    if days is None or not (since or until):
        return files  # every file is read
    kept = [f for day, f in days if near_window(day, since, until)]
    return kept or files


def near_window(day: date, since: date | None, until: date | None) -> bool:
    """Whether a `date=` folder's day can hold rows of the window: within a day of it (a row logged near midnight
    sits in the next day's folder). Counted in days between, so a window to 9999-12-31 needs no later date."""
    return (not since or (since - day).days <= 1) and (not until or (day - until).days <= 1)


_PARTITION = re.compile(r"date=(\d{4}-\d{2}-\d{2})")


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
    _check_encoding(read.files, read.kind)


def _lines_sql(files: list[str]) -> str:
    """A JSONL log's lines as DuckDB reads them: (filename, line, logged)."""
    # Each line whole, as one column: the delimiter is a 4-byte sequence no text line holds in practice
    # (a one-byte one such as "\x1e" cut a line that held it, and a line holding only it was lost). The CSV
    # reader numbers no rows of a file (file_row_number is Parquet's): WITH ORDINALITY numbers the lines of all
    # the files in the order read, the files in list order.
    return (f"(SELECT filename, line, {_logged('ordinality')} AS logged "
            f"FROM read_csv({sql_files(files)}, columns={{'line': 'VARCHAR'}}, delim='{_NO_DELIMITER}', quote='', "
            f"escape='', nullstr='{_NO_NULL}', header=false, "
            "auto_detect=false, strict_mode=false, max_line_size=100000000, filename=true, store_rejects=true, "
            "ignore_errors=true, hive_partitioning=false) WITH ORDINALITY)")


def _logged(row: str, file: str = "file_index") -> str:
    """The order a row was logged in, as one number: its file's place among the log files read (`file`), then
    `row`, which grows with the row's line in that file. Rows of one user logged in the same second are read in
    this order, so a follow-up logged after its question comes after it. A row recalled from a line memo has
    its file's place alone (`_read_held`)."""
    return f"((CAST({file} AS BIGINT) << {_FILE_SHIFT}) | {row})"


_FILE_SHIFT = 40  # the bits of `logged` for a row's place in its file: a trillion lines


def _source_sql(files: list[str], kind: str, lines: str | None = None) -> str:
    """A relation of (filename, line: a JSONL log's line, ts VARCHAR, user VARCHAR, query VARCHAR, bad VARCHAR,
    logged: `_logged`), and for `lines` (a relation of a JSONL log's lines with their memo keys) the columns key
    and len."""
    if kind == "jsonl":
        carry = ", logged, key, len" if lines else ", logged"
        # Each line is parsed twice at most: once to validate, once to take the three fields. Valid JSON that
        # opens with "{" (after JSON's whitespace) is an object: no third parse for its type. Empty lines are
        # skipped by the reader, so an empty value is a line it could not read (one that is not UTF-8, after a
        # lone "\r" in a file of "\r\n" lines): quarantined with the rest, never dropped as blank.
        return f"""
            SELECT filename, line, CASE WHEN obj THEN NULL ELSE 'unparsable line' END AS bad,
                   v[1] AS ts, v[2] AS "user", v[3] AS query{carry}
            FROM (SELECT filename, line, obj,
                         CASE WHEN obj THEN json_extract_string(line, ['$.ts', '$.user', '$.query']) END AS v{carry}
                  FROM (SELECT filename, line,
                               ok AND {IS_OBJECT} AS obj{carry}
                        FROM (SELECT filename, line, json_valid(line) AS ok{carry} FROM {lines or _lines_sql(files)}
                              WHERE starts_with(line, '{{') OR line = '' OR trim(line) <> '')))"""
    return f"""
        SELECT filename, NULL AS line, NULL AS bad, {_AS_TEXT}, logged FROM {_reader(files, kind, logged=True)}"""


_AS_TEXT = 'CAST(ts AS VARCHAR) AS ts, CAST("user" AS VARCHAR) AS "user", CAST(query AS VARCHAR) AS query'


def _reader(files: list[str], kind: str, logged: bool = False) -> str:
    """DuckDB's reader of a Parquet or CSV log, every column as it is; with `logged`, the columns filename, ts,
    user and query and the order each row was logged in (`_logged`).

    A CSV log is read as RFC 4180 (comma, double quotes, a quote doubled inside one), never sniffed: one line with
    a stray quote would make a sniffer give up quoting for the whole file, and every quoted question with a comma
    would then be a bad row. Files are read per header (the columns each file's first line names)."""
    columns = 'filename, ts, "user", query'
    if kind == "parquet":
        read = f"read_parquet({sql_files(files)}, filename=true, hive_partitioning=false"
        if not logged:
            return read + ")"
        return f"(SELECT {columns}, {_logged('file_row_number')} AS logged FROM {read}, file_row_number=true))"
    by_header: dict[tuple[str, ...], list[str]] = {}
    for f in files:
        by_header.setdefault(csv_header(f), []).append(f)
    reads, place_of = [], {f: i for i, f in enumerate(files)}
    for header, group in by_header.items():
        types = ", ".join(f"{_sql_string(c)}: 'VARCHAR'" for c in header)
        read = (f"read_csv({sql_files(group)}, header=true, auto_detect=false, delim=',', quote='\"', escape='\"', "
                f"columns={{{types}}}, filename=true, store_rejects=true, ignore_errors=true, hive_partitioning=false)")
        # a group's file_index counts its own files: the list gives each one's place among all the files read
        place = f"[{', '.join(str(place_of[f]) for f in group)}][CAST(file_index AS BIGINT) + 1]"
        reads.append(f"SELECT {columns}, {_logged('ordinality', place)} AS logged FROM {read} WITH ORDINALITY"
                     if logged else f"SELECT * FROM {read}")
    return "(" + " UNION ALL BY NAME ".join(reads) + ")"


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def csv_header(file: str) -> tuple[str, ...]:
    """The column names a CSV log's first line gives."""
    try:
        with _open_log(file) as fh:  # the first line alone: a bad byte further on is a row's problem
            head = fh.readline(1 << 20).decode("utf-8-sig")
        first = next(csv.reader([head]), [])
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, csv.Error) as exc:
        raise LogError(f"{file}:1: cannot read the CSV header ({exc}); the first line must name the columns, "
                       "such as ts,user,query") from None
    names = tuple(c.strip() for c in first)
    if not names or any(not c for c in names) or len(set(names)) < len(names):
        raise LogError(f"{file}:1: the CSV header {','.join(first)!r} must name each column once, such as "
                       "ts,user,query")
    return names


def utc_sql(col: str) -> str:
    """A timestamp string as a UTC TIMESTAMP, in a session whose TimeZone is UTC: an offset ("+02:00") or a zone
    name is applied; "Z", or none, is UTC. The common forms (ISO with "Z", or no zone) take the cheaper cast, which
    would drop an offset: the one short form holding one, "2026-11-28T23:30-05", takes the other."""
    return (f"CASE WHEN ends_with({col}, 'Z') OR (length({col}) <= 19 AND substr({col}, 17, 1) NOT IN ('+', '-')) "
            f"THEN try_cast({col} AS TIMESTAMP) ELSE timezone('UTC', try_cast({col} AS TIMESTAMPTZ)) END")


def _check_breaks(files: list[str]) -> None:
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


def _check_encoding(files: list[str], kind: str) -> None:
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
        with _open_log(file) as fh:
            return fh.read(64)
    except (OSError, EOFError, zlib.error):
        return b""


def _checking_gzip(files: list[str], kind: str) -> Future[None] | None:
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


def _check_columns(con: duckdb.DuckDBPyConnection, path: str | Path, files: list[str], kind: str) -> None:
    """A Parquet or CSV log must have the columns ts, user and query (a JSONL line missing one is quarantined).
    Each CSV file by its own header: the files are read by name together, so one file's column would fill
    another's gap with NULLs."""
    if kind == "csv":
        for f in files:
            _need_columns(f"{f}:1", kind, list(csv_header(f)))
        return
    found = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {_reader(files, kind)}").fetchall()]
    _need_columns(str(path), kind, [c for c in found if c != "filename"])


def _need_columns(where: str, kind: str, found: list[str]) -> None:
    missing = [c for c in LOG_COLUMNS if c not in found]
    if missing:
        raise LogError(f"{where}: the {kind.upper()} log has no column {', '.join(missing)}; it needs ts, user "
                       f"and query (found {', '.join(found)}); rename the columns")


@dataclass
class LogWindow:
    """The log files a run reads and the days it mines (`since`/`until` None: up to the rows' own newest day)."""

    files: list[str]
    kind: str
    days: list[tuple[date, str]] | None  # the `date=` folders, for a log partitioned by date
    since: date | None
    until: date | None
    today: date
    future: datetime  # a row after this is dated in the future


def log_window(path: str | Path, since: date | None = None, until: date | None = None,
               last_days: int | None = None, now: datetime | None = None) -> LogWindow:
    """The window `ingest` reads (see there): with neither `since` nor `until`, the last `last_days` days up to
    the newest complete `date=` folder."""
    every, kind = log_files(path)
    clock = now or datetime.now(UTC).replace(tzinfo=None)  # timestamps are UTC
    today, future = clock.date(), clock + timedelta(days=1)
    days = _partition_days(path, every) if since or until or last_days else None
    logged = [day for day, _ in days or [] if day <= future.date()]  # a folder dated in the future holds no window
    if last_days and not (since or until) and logged:  # the newest complete `date=` folder ends the window
        until = max([d for d in logged if d < today] or logged)  # today is still being logged
        since = until - timedelta(days=last_days - 1)
    return LogWindow(window_files(every, days, since, until), kind, days, since, until, today, future)


def ingest(path: str | Path, *, since: date | None = None, until: date | None = None,
           max_query_chars: int = 2000, now: datetime | None = None, scrub: Scrubber | None = None,
           threads: int | None = None, defer_quarantine: bool = False, last_days: int | None = None,
           lines: LineMemo | None = None) -> Ingested:
    """Load valid rows into `rows` and everything else into `quarantine` with a reason, in one DuckDB session.

    `since`/`until` (inclusive dates) restrict the window; with neither, `last_days` makes it the last that many
    days up to the newest logged day before today (UTC; today only when no earlier day is logged, since a day
    still being logged is incomplete): a folder partitioned by date by its `date=` folders, else by the valid
    rows' timestamps. Quarantined raw text is scrubbed and cut to 200 characters, so no personal data reaches
    an output through it. With `defer_quarantine`, the table `quarantine` is complete only once
    `Ingested.finish` returns.

    With a line memo (`tasks.ingest.lines`; a JSONL log), the lines it holds are not parsed: their rows, extracted by
    an earlier run, are the view `recalled_lines` (ts, user as its hash, question_id, y, and skh and vsh, 64 bits
    of the MD5 of its skeleton and of its value set, whose texts are the tables `held_sk` and `held_vs`); `rows`
    holds the others, with their memo key (filename, key, len). Without one, `recalled_lines` is empty.
    """
    w = log_window(path, since, until, last_days, now)
    files, kind, days, since, until, today, future = w.files, w.kind, w.days, w.since, w.until, w.today, w.future
    _check_encoding(files, kind)
    con = duckdb.connect()
    # Timestamps are UTC: a log's offsets and zone names are applied. GLOBAL: a cursor (the quarantine's numbering,
    # `mine`'s threads) starts in the machine's zone otherwise, and reads a Parquet log's zoned times as other text.
    con.execute("SET GLOBAL TimeZone = 'UTC'")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    memo = lines if lines is not None and lines.dir is not None and kind == "jsonl" else None
    gzipped = _checking_gzip(files, kind)
    try:
        if kind != "jsonl":
            _check_columns(con, path, files, kind)
        con.execute("SET preserve_insertion_order = false")
        _hold(con, memo, files, future)
        if memo is not None:
            _split(con, files)
        con.execute(f"CREATE TEMP VIEW src AS {_source_sql(files, kind, _UNMATCHED if memo else None)}")
        _stage(con, memo, future, max_query_chars, kind)
        if memo is not None and memo.changed():  # a file changed while it was read: its memo is not its lines
            con.execute("DROP TABLE staged")
            _drop_held(con)
            memo.discard()
            _hold(con, None, files, future)
            _stage(con, memo, future, max_query_chars, kind)
        con.execute("RESET preserve_insertion_order")
    except duckdb.Error as exc:
        if kind == "csv":
            _check_breaks(files)
        if gzipped is not None:
            gzipped.result()
        raise LogError(f"{path}: cannot read the logs ({str(exc).splitlines()[0]}); check the format") from None
    if gzipped is not None:
        gzipped.result()  # DuckDB checks no gzip checksum: a damaged file's garbled lines would pass as rows
    if last_days and not (since or until):  # not partitioned by date: the newest valid row's day ends the window,
        recalled = " UNION ALL SELECT t FROM held" if memo else ""  # the newest before today if there is one
        newest = con.sql(f"""SELECT coalesce(max(t) FILTER (WHERE t < DATE '{today}'), max(t))::DATE
                             FROM (SELECT t FROM staged WHERE reason IS NULL{recalled})""").fetchall()[0][0]
        if newest is not None:
            since, until = newest - timedelta(days=last_days - 1), newest
    window = _window_sql("t", since, until)
    where = " AND ".join(["reason IS NULL", *window])
    # A bad row is this window's when its time is in the window; one with no time, when its file's day is (a
    # folder partitioned by date; the days either side are read for rows near midnight) or always (any other
    # layout). One dated in the future is always reported.
    own = [f for day, f in days if (not since or day >= since) and (not until or day <= until)] if (
        days is not None and (since or until)) else None
    undated = "true" if own is None else f"list_contains({sql_strings(own)}, filename)" if own else "false"
    raw = "coalesce(query, line, '')" if kind == "jsonl" else "coalesce(query, '')"
    bad = con.execute(f"""SELECT filename, line, reason, {raw} FROM staged
                          WHERE reason IS NOT NULL AND (reason = 'timestamp in the future'
                                OR (t IS NOT NULL AND {" AND ".join(window) or "true"}) OR (t IS NULL AND {undated}))
                       """).fetchall()
    # the valid rows are read where they are, not copied
    con.execute(f'CREATE VIEW rows AS SELECT t AS ts, "user", query, logged{", filename" + _KEYS if memo else ""} '
                f'FROM staged WHERE {where}')
    _recalled(con, memo, " AND ".join(window) or "true")
    rejects = [r for r in _rejects(con) if own is None or r[0] in own]  # no time: its folder's day's
    con.from_arrow(_QUARANTINE.empty_table()).create("quarantine")
    n_rows = con.sql("SELECT (SELECT count(*) FROM rows) + (SELECT count(*) FROM recalled_lines)").fetchall()[0][0]
    n_files = len(files)
    # Numbering the quarantined lines reads their files again, in Python: with `defer_quarantine`, a thread does
    # it while the caller goes on (`Ingested.finish` waits for it).
    pool = ThreadPoolExecutor(1)
    numbering = pool.submit(_fill_quarantine, con.cursor(), bad, rejects, scrub or Scrubber(), kind)
    pool.shutdown(wait=False)
    ing = Ingested(con, int(n_files), int(n_rows), len(bad) + len(rejects), numbering, since=since, until=until,
                   read=files, whole=own if own is not None else files, lines=memo,
                   skipped=skipped_files(path, since, until))
    if not defer_quarantine:
        ing.finish()
    return ing


def _window_sql(col: str, since: date | None, until: date | None) -> list[str]:
    """The conditions that a timestamp column lies in the window (none for an open window)."""
    window = []
    if since:
        window.append(f"{col} >= DATE '{since.isoformat()}'")
    if until:
        window.append(f"{col} < DATE '{until.isoformat()}' + 1")  # DuckDB's dates go past 9999-12-31
    return window


_KEYS = ", key, len"  # a line's memo key: a hash of its file's path and its text, and its length in bytes
_UNMATCHED = "(SELECT filename, line, logged, key, len FROM split WHERE NOT matched)"
_HELD = """(key UBIGINT, len BIGINT, t TIMESTAMP, uid UBIGINT, question_id UBIGINT, y INTEGER, skh UBIGINT,
            vsh UBIGINT, filename VARCHAR, log VARCHAR, logged BIGINT)"""
_HELD_SK = "(skh UBIGINT, skeleton VARCHAR)"
_HELD_VS = "(vsh UBIGINT, slots VARCHAR, constraints VARCHAR, signature VARCHAR)"


class MemoError(ValueError):
    """A line memo that cannot be trusted (one hash for two texts, or a hash with no text)."""


def _hold(con: duckdb.DuckDBPyConnection, memo: LineMemo | None, files: list[str], future: datetime) -> None:
    """The tables `held` (the rows of the memos of the unchanged log files, but those dated in the future: such a
    line is read, and quarantined, anew; `log` names the row's log file, `logged` has that file's place among
    `files` alone: a memo keeps no row that shares its user and second with another question of its file, so
    its rows need no line order, `tasks.ingest.lines`), `held_sk` and `held_vs` (the skeletons and value sets they name
    by hash): empty without a memo. Every memo is read whole here, and checked, so an
    unreadable or inconsistent one is dropped (its lines are read anew) before any of it is used."""
    paths = memo.look(files) if memo is not None else []
    if memo is None or not paths:
        _hold_none(con)
        return
    try:
        _read_held(con, memo, files, paths, future)
    except (duckdb.Error, MemoError):
        _drop_held(con)
        memo.discard()
        _hold_none(con)
    memo.count(con, "held")


def _read_held(con: duckdb.DuckDBPyConnection, memo: LineMemo, logs: list[str], paths: list[str],
               future: datetime) -> None:
    place_of = {f: i for i, f in enumerate(logs)}
    files = pa.table({"filename": [str(p) for p in memo.trusted.values()],  # noqa: F841 - read by name
                      "log": list(memo.trusted), "place": [place_of[f] for f in memo.trusted]})
    read = f"read_parquet({sql_files(paths)}, filename=true)"
    con.execute(f"""CREATE TABLE held AS SELECT key, len, t, uid, question_id, y, skh, vsh, filename, f.log,
                           {_logged("0", "f.place")} AS logged
                    FROM {read} JOIN files f USING (filename)
                    WHERE kind = 'row' AND t <= TIMESTAMP '{future:%Y-%m-%d %H:%M:%S}'""")
    con.execute(f"CREATE TABLE held_sk AS SELECT DISTINCT skh, skeleton FROM {read} WHERE kind = 'sk'")
    con.execute(f"""CREATE TABLE held_vs AS SELECT DISTINCT vsh, slots, constraints, signature FROM {read}
                    WHERE kind = 'vs'""")
    bad = con.sql("""SELECT (SELECT count(*) - count(DISTINCT skh) FROM held_sk)
                            + (SELECT count(*) - count(DISTINCT vsh) FROM held_vs)
                            + (SELECT count(*) FROM held_sk WHERE skeleton IS NULL OR skh IS NULL)
                            + (SELECT count(*) FROM held_vs WHERE slots IS NULL OR constraints IS NULL
                                                                  OR signature IS NULL OR vsh IS NULL)
                            + (SELECT count(*) FROM held WHERE key IS NULL OR len IS NULL OR question_id IS NULL
                                                                OR uid IS NULL OR y IS NULL)
                            + (SELECT count(*) FROM (SELECT DISTINCT skh FROM held) ANTI JOIN held_sk USING (skh))
                            + (SELECT count(*) FROM (SELECT DISTINCT vsh FROM held) ANTI JOIN held_vs USING (vsh))
                  """).fetchall()[0][0]
    if bad:
        raise MemoError("a line memo names a text twice, or a text it does not hold")


def _drop_held(con: duckdb.DuckDBPyConnection) -> None:
    for table in ("held", "held_sk", "held_vs"):
        con.execute(f"DROP TABLE IF EXISTS {table}")


def _split(con: duckdb.DuckDBPyConnection, files: list[str]) -> None:
    """The view `split`: every line of the log with its memo key and whether its file's memo holds it (`held`).
    A view: the lines are read once, by the parse of those not held (`_UNMATCHED`), never stored whole."""
    keyed = f"SELECT filename, line, logged, hash(filename, line) AS key, strlen(line) AS len FROM {_lines_sql(files)}"
    con.execute(f"""
        CREATE TEMP VIEW split AS
        SELECT l.filename, l.line, l.logged, l.key, l.len, k.key IS NOT NULL AS matched
        FROM ({keyed}) l LEFT JOIN (SELECT DISTINCT key, len, log FROM held) k
             ON l.key = k.key AND l.len = k.len AND l.filename = k.log""")


def _stage(con: duckdb.DuckDBPyConnection, memo: LineMemo | None, future: datetime, max_query_chars: int,
           kind: str) -> None:
    """The table `staged`: each line read (`src`) with its reason to be quarantined, or none, and for a quarantined
    one where it is in its file (`line`, see `_WHERE`)."""
    # The raw line and file name are kept for quarantined rows only: the valid ones do not need them (but for
    # their memo key, with a line memo). The rows are stored in any order (cheaper to read): whatever reads them
    # in an order sorts them.
    more = "" if kind == "jsonl" else ", ts"
    con.execute(f"""
            CREATE TABLE staged AS
            SELECT CASE WHEN reason IS NOT NULL OR {'true' if memo else 'false'} THEN filename END AS filename,
                   CASE WHEN reason IS NOT NULL THEN {_WHERE[kind]} END AS line, t, "user", query, reason,
                   logged{_KEYS if memo else ""}
            FROM (SELECT filename, line, t, "user", query, logged{_KEYS if memo else ""}{more}, coalesce(bad,
                    CASE WHEN query IS NULL THEN 'missing query'
                         -- a JSON list or object where the question should be (only such a value is parsed again)
                         WHEN (starts_with(query, '[') OR starts_with(query, '{{'))
                              AND json_type(line, '$.query') IN ('ARRAY', 'OBJECT') THEN 'query is not text'
                         WHEN NOT regexp_matches(query, '[^[:space:]\u00a0\u3000]') THEN 'empty query'
                         WHEN length(query) > {int(max_query_chars)} THEN 'query too long'
                         WHEN "user" IS NULL OR trim("user") = '' THEN 'missing user'
                         WHEN ts IS NULL THEN 'missing timestamp'
                         WHEN t IS NULL THEN 'bad timestamp'
                         WHEN t > TIMESTAMP '{future:%Y-%m-%d %H:%M:%S}' THEN 'timestamp in the future' END) AS reason
                  FROM (SELECT *, {utc_sql('ts')} AS t FROM src))""")


# What finds a quarantined row in its file again (`_fill_quarantine`), made for those rows only: a JSONL log's
# line itself; a CSV or Parquet row's fields as DuckDB read them, as a JSON list (`csv_line_numbers`,
# `parquet_row_numbers`).
_FIELDS = 'CAST(to_json([ts, "user", query]) AS VARCHAR)'
_WHERE = {"jsonl": "line", "csv": _FIELDS, "parquet": _FIELDS}


def _hold_none(con: duckdb.DuckDBPyConnection) -> None:
    """The memo's tables, empty: a run without a line memo."""
    con.execute(f"CREATE TABLE held {_HELD}")
    con.execute(f"CREATE TABLE held_sk {_HELD_SK}")
    con.execute(f"CREATE TABLE held_vs {_HELD_VS}")


def _recalled(con: duckdb.DuckDBPyConnection, memo: LineMemo | None, window: str) -> None:
    """The view `recalled_lines` (ts, user: a hash, question_id, y, skh, vsh, logged): the window's rows of the
    lines the memo held (`_split`); empty without a memo."""
    con.execute(f"""CREATE VIEW recalled_lines AS SELECT t AS ts, uid AS "user", question_id, y, skh, vsh, logged
                    FROM held WHERE {window if memo is not None else "false"}""")
    if memo is not None:
        con.execute("DROP VIEW src")
        con.execute("DROP VIEW split")


def _fill_quarantine(cursor: duckdb.DuckDBPyConnection, bad: list[tuple[Any, ...]], rejects: list[tuple[Any, ...]],
                     scrub: Scrubber, kind: str) -> list[str]:
    """The table `quarantine`: the quarantined rows (file, where in it: see `_WHERE`, reason, raw text) with their
    line numbers (a Parquet row's number) and scrubbed raw text, and the lines DuckDB could not read (`_rejects`); on
    a cursor of its own. Returns the JSONL files whose every line is quarantined (not a log, or not of this
    format)."""
    with cursor:
        lines: dict[str, int] = {}
        located = [(f, where) for f, where, _, _ in bad if where is not None]
        if kind == "jsonl":
            numbers = line_numbers(located, lines)
            _number_emptied(numbers, {f for f, where, _, _ in bad if where == ""}, rejects)
        elif kind == "csv":
            numbers = csv_line_numbers(located)
        else:
            numbers = parquet_row_numbers(cursor, located)
        # Each record takes the next number of its line (a line logged twice has two); a question quarantined
        # for its timestamp often recurs, so each distinct raw text is scrubbed once.
        taken = {key: iter(found) for key, found in numbers.items()}
        scrubbed = functools.cache(lambda raw: scrub(without_user(raw))[:200])
        records: list[tuple[Any, ...]] = [(f, next(taken.get((f, text), iter(())), None), r, scrubbed(str(raw)))
                                          for f, text, r, raw in bad]
        records += rejects
        if records:  # one insert from Arrow: a row-by-row executemany took minutes for many quarantined rows
            columns = {name: [rec[i] for rec in records] for i, name in enumerate(_QUARANTINE.names)}
            cursor.from_arrow(pa.table(columns, schema=_QUARANTINE)).insert_into("quarantine")
        if kind != "jsonl":  # a CSV or Parquet file of another format stops the run instead (`_check_columns`)
            return []
        return _unreadable(Counter(str(rec[0]) for rec in records if rec[0] is not None), lines)


def _unreadable(bad: Counter[str], lines: dict[str, int]) -> list[str]:
    """The files with as many quarantined records as lines that are not blank. `lines`: the files' "\n" line
    breaks, where `line_numbers` counted them; the few files near the mark are counted exactly."""
    out = []
    for file, n in bad.items():
        if n < lines.get(file, 2 * n) / 2:
            continue  # most lines of the file are rows
        rows = sum(1 for block, layout in _blocks(file) for _, line in _lines(block, layout) if line.strip(b" \r"))
        if rows and n >= rows:
            out.append(file)
    return sorted(out)


# A quarantined line's user field, written as JSON or loosely ('user': ..., user: ...; a value quoted, an object, a
# list, cut off, or bare); not "username" or "superuser".
_USER_FIELD = re.compile(r"""((?<![\w"'])["']?user["']?\s*:\s*)"""
                         r"""(?:"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|\{[^}]*\}?|\[[^\]]*\]?|[^\s,}\]]+)""",
                         re.IGNORECASE)


def without_user(raw: str) -> str:
    """A quarantined line with its user field's value replaced by "{user}": no output holds a user id (a pseudonym
    the scrubber's patterns catch only sometimes: "u-123456" looks like an id, "u-e3f3d4" does not)."""
    return _USER_FIELD.sub(r'\1"{user}"', raw)

_QUARANTINE = pa.schema([("file", pa.string()), ("line", pa.int64()), ("reason", pa.string()), ("raw", pa.string())])


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
    wanted = {text.encode("utf-8"): text for text in texts if text}  # an emptied line: `_number_emptied`
    out: dict[tuple[str, str], list[int]] = {(file, text): [] for text in texts}
    before, lf = 0, 0  # the lines of the blocks before this one, and their "\n"
    for block, layout in _blocks(file):
        for text, number in _numbers_in(block, wanted, layout):
            out[(file, text)].append(before + number)
        before += block.count(layout.mark)
        lf = before if layout.mark == b"\n" else 0
    return out, lf


def csv_line_numbers(rows: list[tuple[str, str]]) -> dict[tuple[str, str], list[int]]:
    """(file, a CSV row's fields as `_WHERE` gives them) -> the numbers of the lines that the rows of that file
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
    """(file, a Parquet row's fields as `_WHERE` gives them) -> the numbers of the rows of that file holding exactly
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
        FROM (SELECT filename, file_row_number, {_AS_TEXT} FROM {_reader(files, "parquet")}) p
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
        with _open_log(file) as fh:
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


def _open_log(file: str) -> gzip.GzipFile | io.BufferedReader:
    """A log file's bytes, decompressed as they are read."""
    return gzip.open(file, "rb") if file.lower().endswith(".gz") else open(file, "rb")


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
    for number, line in _lines(data, layout):
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
    """How a file's lines end, as its first block shows (`_blocks`). `mark`: the byte that ends a line as an editor
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


def _lines(data: bytes, layout: _Layout) -> list[tuple[int, bytes]]:
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


def _number_emptied(numbers: dict[tuple[str, str], list[int]], files: set[str],
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
    it. The byte after a lone "\r" stays in its line: DuckDB empties such a line (`_number_emptied`) rather than
    dropping the byte."""
    out = []
    before = 0
    for block, layout in _blocks(file):
        for number, line in _lines(block, _Layout(layout.mark, eats=False)):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                out.append(before + number)
        before += block.count(layout.mark)
    return out


def _file_bytes(file: str) -> bytes | None:
    """A log file's bytes, decompressed; None when it cannot be read now."""
    try:
        data = Path(file).read_bytes()
        return gzip.decompress(data) if file.lower().endswith(".gz") else data
    except (OSError, EOFError, zlib.error):
        return None


_BLOCK = 1 << 22  # bytes of a log file read at a time to number its bad lines


def _blocks(file: str) -> Iterator[tuple[bytes, _Layout]]:
    """A log file's bytes, decompressed, a block of whole lines at a time (each block but the last ends with "\n";
    a file with none is one block), with the file's layout: memory holds a block (and a line longer than one), not
    the file. The blocks end where the file cannot be read (it changed, or its gzip data is damaged, which
    `_check_gzip` names)."""
    layout = None
    pending: list[bytes] = []  # a line that runs on into the next read
    try:
        with _open_log(file) as fh:
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
    """A log file read a block at a time (`_blocks`) to number the lines holding byte positions, given in order."""

    def __init__(self, file: str) -> None:
        self._blocks = _blocks(file)
        self.data, self.layout = next(self._blocks, (b"", _layout(b"")))
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
        block = next(self._blocks, None)
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


def _rejects(con: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
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
    holding byte `at`; `_RAN_OUT` when `data` (a block, `_blocks`) ends first."""
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
