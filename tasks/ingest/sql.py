"""The DuckDB SQL that reads query logs: file lists, readers per format, timestamps, the window."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass
from schemas.sql import sql_files, sql_string
from tasks.ingest.files import csv_header

_NO_DELIMITER = "\x1e\x1f\x1e\x1f"


_NO_NULL = "\x1d\x1c\x1d\x1c"  # likewise for the NULL string: an empty line is skipped, not read as NULL


# For a line that is valid JSON: true when it is an object (it opens with "{" after JSON's whitespace). Cheaper
# than `json_type(line) = 'OBJECT'`, which parses the line once more; most lines open with "{" and skip the pattern.
IS_OBJECT = r"(starts_with(line, '{') OR regexp_matches(line, '^[ \t\n\r]*[{]'))"


def lines_sql(files: list[str]) -> str:
    """A JSONL log's lines as DuckDB reads them: (filename, line, logged)."""
    # Each line whole, as one column: the delimiter is a 4-byte sequence no text line holds in practice
    # (a one-byte one such as "\x1e" cut a line that held it, and a line holding only it was lost). The CSV
    # reader numbers no rows of a file (file_row_number is Parquet's): WITH ORDINALITY numbers the lines of all
    # the files in the order read, the files in list order.
    return (f"(SELECT filename, line, {logged_sql('ordinality')} AS logged "
            f"FROM read_csv({sql_files(files)}, columns={{'line': 'VARCHAR'}}, delim='{_NO_DELIMITER}', quote='', "
            f"escape='', nullstr='{_NO_NULL}', header=false, "
            "auto_detect=false, strict_mode=false, max_line_size=100000000, filename=true, store_rejects=true, "
            "ignore_errors=true, hive_partitioning=false) WITH ORDINALITY)")


def logged_sql(row: str, file: str = "file_index") -> str:
    """The order a row was logged in, as one number: its file's place among the log files read (`file`), then
    `row`, which grows with the row's line in that file. Rows of one user logged in the same second are read in
    this order, so a follow-up logged after its question comes after it. A row recalled from a line memo has
    its file's place alone (`_read_held`)."""
    return f"((CAST({file} AS BIGINT) << {_FILE_SHIFT}) | {row})"


_FILE_SHIFT = 40  # the bits of `logged` for a row's place in its file: a trillion lines


def source_sql(files: list[str], kind: str, lines: str | None = None) -> str:
    """A relation of (filename, line: a JSONL log's line, ts VARCHAR, user VARCHAR, query VARCHAR, bad VARCHAR,
    logged: `logged_sql`), and for `lines` (a relation of a JSONL log's lines with their memo keys) the columns key
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
                        FROM (SELECT filename, line, json_valid(line) AS ok{carry} FROM {lines or lines_sql(files)}
                              WHERE starts_with(line, '{{') OR line = '' OR trim(line) <> '')))"""
    return f"""
        SELECT filename, NULL AS line, NULL AS bad, {AS_TEXT}, logged FROM {reader_sql(files, kind, logged=True)}"""


AS_TEXT = 'CAST(ts AS VARCHAR) AS ts, CAST("user" AS VARCHAR) AS "user", CAST(query AS VARCHAR) AS query'


def reader_sql(files: list[str], kind: str, logged: bool = False) -> str:
    """DuckDB's reader of a Parquet or CSV log, every column as it is; with `logged`, the columns filename, ts,
    user and query and the order each row was logged in (`logged_sql`).

    A CSV log is read as RFC 4180 (comma, double quotes, a quote doubled inside one), never sniffed: one line with
    a stray quote would make a sniffer give up quoting for the whole file, and every quoted question with a comma
    would then be a bad row. Files are read per header (the columns each file's first line names)."""
    columns = 'filename, ts, "user", query'
    if kind == "parquet":
        read = f"read_parquet({sql_files(files)}, filename=true, hive_partitioning=false"
        if not logged:
            return read + ")"
        return f"(SELECT {columns}, {logged_sql('file_row_number')} AS logged FROM {read}, file_row_number=true))"
    by_header: dict[tuple[str, ...], list[str]] = {}
    for f in files:
        by_header.setdefault(csv_header(f), []).append(f)
    reads, place_of = [], {f: i for i, f in enumerate(files)}
    for header, group in by_header.items():
        types = ", ".join(f"{sql_string(c)}: 'VARCHAR'" for c in header)
        read = (f"read_csv({sql_files(group)}, header=true, auto_detect=false, delim=',', quote='\"', escape='\"', "
                f"columns={{{types}}}, filename=true, store_rejects=true, ignore_errors=true, hive_partitioning=false)")
        # a group's file_index counts its own files: the list gives each one's place among all the files read
        place = f"[{', '.join(str(place_of[f]) for f in group)}][CAST(file_index AS BIGINT) + 1]"
        reads.append(f"SELECT {columns}, {logged_sql('ordinality', place)} AS logged FROM {read} WITH ORDINALITY"
                     if logged else f"SELECT * FROM {read}")
    return "(" + " UNION ALL BY NAME ".join(reads) + ")"


def utc_sql(col: str) -> str:
    """A timestamp string as a UTC TIMESTAMP, in a session whose TimeZone is UTC: an offset ("+02:00") or a zone
    name is applied; "Z", or none, is UTC. The common forms (ISO with "Z", or no zone) take the cheaper cast, which
    would drop an offset: the one short form holding one, "2026-11-28T23:30-05", takes the other. The year is four
    digits: DuckDB reads "20261-01-01" as the year 20261 and "02026-01-01" as 2026, both bad timestamps here."""
    return (f"CASE WHEN NOT regexp_matches({col}, '^[ \\t]*[0-9]{{4}}-') THEN NULL "
            f"WHEN ends_with({col}, 'Z') OR (length({col}) <= 19 AND substr({col}, 17, 1) NOT IN ('+', '-')) "
            f"THEN try_cast({col} AS TIMESTAMP) ELSE timezone('UTC', try_cast({col} AS TIMESTAMPTZ)) END")


def window_sql(col: str, since: date | None, until: date | None) -> list[str]:
    """The conditions that a timestamp column lies in the window (none for an open window)."""
    window = []
    if since:
        window.append(f"{col} >= DATE '{since.isoformat()}'")
    if until:
        window.append(f"{col} < DATE '{until.isoformat()}' + 1")  # DuckDB's dates go past 9999-12-31
    return window


MEMO_KEYS = ", key, len"  # a line's memo key: a hash of its file's path and its text, and its length in bytes


UNMATCHED = "(SELECT filename, line, logged, key, len FROM split WHERE NOT matched)"


HELD = """(key UBIGINT, len BIGINT, t TIMESTAMP, uid UBIGINT, question_id UBIGINT, y INTEGER, skh UBIGINT,
            vsh UBIGINT, filename VARCHAR, log VARCHAR, logged BIGINT)"""


HELD_SK = "(skh UBIGINT, skeleton VARCHAR)"


HELD_VS = "(vsh UBIGINT, slots VARCHAR, constraints VARCHAR, signature VARCHAR)"


# What finds a quarantined row in its file again (`_fill_quarantine`), made for those rows only: a JSONL log's
# line itself; a CSV or Parquet row's fields as DuckDB read them, as a JSON list (`csv_line_numbers`,
# `parquet_row_numbers`).
_FIELDS = 'CAST(to_json([ts, "user", query]) AS VARCHAR)'


FIND_AGAIN = {"jsonl": "line", "csv": _FIELDS, "parquet": _FIELDS}
