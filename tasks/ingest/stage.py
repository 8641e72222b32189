"""The ingest itself: read a window of logs into DuckDB (`rows`, `recalled_lines`, ...: see `tables`), recall
what a line memo holds, and fill the quarantine (its line numbers from `numbering`) beside the caller's work."""

from __future__ import annotations

import functools
import re
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from schemas.errors import LogError
from schemas.files import QUARANTINE
from schemas.pii import Scrubber
from schemas.sql import sql_files, sql_strings
from tasks.ingest.checks import check_breaks, check_columns, check_encoding, checking_gzip
from tasks.ingest.files import log_window, skipped_files
from tasks.ingest.numbering import (
    blocks,
    csv_line_numbers,
    line_numbers,
    number_emptied,
    parquet_row_numbers,
    rejected_lines,
    split_lines,
)
from tasks.ingest.sql import (
    FIND_AGAIN,
    HELD,
    HELD_SK,
    HELD_VS,
    MEMO_KEYS,
    UNMATCHED,
    lines_sql,
    logged_sql,
    source_sql,
    utc_sql,
    window_sql,
)

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
    outside: dict[str, Any] | None = None  # how much of the log lies outside the window (`outside_window`)

    def finish(self) -> None:
        """Wait until the table `quarantine` is complete."""
        if self.numbering is not None:
            self.unreadable = self.numbering.result()
            self.numbering = None


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
    check_encoding(files, kind)
    con = duckdb.connect()
    # Timestamps are UTC: a log's offsets and zone names are applied. GLOBAL: a cursor (the quarantine's numbering,
    # `mine`'s threads) starts in the machine's zone otherwise, and reads a Parquet log's zoned times as other text.
    con.execute("SET GLOBAL TimeZone = 'UTC'")
    if threads:
        con.execute(f"SET threads = {int(threads)}")
    memo = lines if lines is not None and lines.dir is not None and kind == "jsonl" else None
    gzipped = checking_gzip(files, kind)
    try:
        if kind != "jsonl":
            check_columns(con, path, files, kind)
        con.execute("SET preserve_insertion_order = false")
        _hold(con, memo, files, future)
        if memo is not None:
            _split(con, files)
        con.execute(f"CREATE TEMP VIEW src AS {source_sql(files, kind, UNMATCHED if memo else None)}")
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
            check_breaks(files)
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
    window = window_sql("t", since, until)
    where = " AND ".join(["reason IS NULL", *window])
    outside = outside_window(con, bool(memo), since, until, [(d, f) for d, f in days or [] if d <= future.date()],
                             set(files))
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
    con.execute(f'CREATE VIEW rows AS SELECT t AS ts, "user", query, logged{", filename" + MEMO_KEYS if memo else ""} '
                f'FROM staged WHERE {where}')
    _recalled(con, memo, " AND ".join(window) or "true")
    rejects = [r for r in rejected_lines(con) if own is None or r[0] in own]  # no time: its folder's day's
    con.from_arrow(QUARANTINE.schema.empty_table()).create("quarantine")  # as published
    n_rows = con.sql("SELECT (SELECT count(*) FROM rows) + (SELECT count(*) FROM recalled_lines)").fetchall()[0][0]
    n_files = len(files)
    # Numbering the quarantined lines reads their files again, in Python: with `defer_quarantine`, a thread does
    # it while the caller goes on (`Ingested.finish` waits for it).
    pool = ThreadPoolExecutor(1)
    numbering = pool.submit(_fill_quarantine, con.cursor(), bad, rejects, scrub or Scrubber(), kind)
    pool.shutdown(wait=False)
    ing = Ingested(con, int(n_files), int(n_rows), len(bad) + len(rejects), numbering, since=since, until=until,
                   read=files, whole=own if own is not None else files, lines=memo,
                   skipped=skipped_files(path, since, until), outside=outside)
    if not defer_quarantine:
        ing.finish()
    return ing


def outside_window(con: duckdb.DuckDBPyConnection, memo: bool, since: date | None, until: date | None,
                   days: list[tuple[date, str]], read: set[str]) -> dict[str, Any]:
    """How much of the log the window leaves out: the valid rows read that lie before it or after it (a file not
    partitioned by date is read whole, and its rows filtered by their times), the `date=` folders not read
    (`days`, but for those `read`), and the first and last logged day. One count over the rows already staged
    (and those a line memo holds): no file is read for it."""
    held = " UNION ALL SELECT t FROM held" if memo else ""
    lo = f"t < DATE '{since.isoformat()}'" if since else "false"
    hi = f"t >= DATE '{until.isoformat()}' + 1" if until else "false"
    before, after, first, last = con.sql(f"""
        SELECT count(*) FILTER (WHERE {lo}), count(*) FILTER (WHERE {hi}), min(t)::DATE, max(t)::DATE
        FROM (SELECT t FROM staged WHERE reason IS NULL{held})""").fetchall()[0]
    unread = sorted({day for day, f in days if f not in read})
    logged = [d for d in (first, last, *unread[:1], *unread[-1:]) if d is not None]
    return {"rows_before": int(before), "rows_after": int(after), "days_not_read": len(unread),
            "first_day": min(logged).isoformat() if logged else None,
            "last_day": max(logged).isoformat() if logged else None}


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
                           {logged_sql("0", "f.place")} AS logged
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
    A view: the lines are read once, by the parse of those not held (`UNMATCHED`), never stored whole."""
    keyed = f"SELECT filename, line, logged, hash(filename, line) AS key, strlen(line) AS len FROM {lines_sql(files)}"
    con.execute(f"""
        CREATE TEMP VIEW split AS
        SELECT l.filename, l.line, l.logged, l.key, l.len, k.key IS NOT NULL AS matched
        FROM ({keyed}) l LEFT JOIN (SELECT DISTINCT key, len, log FROM held) k
             ON l.key = k.key AND l.len = k.len AND l.filename = k.log""")


def _stage(con: duckdb.DuckDBPyConnection, memo: LineMemo | None, future: datetime, max_query_chars: int,
           kind: str) -> None:
    """The table `staged`: each line read (`src`) with its reason to be quarantined, or none, and for a quarantined
    one where it is in its file (`line`, see `FIND_AGAIN`)."""
    # The raw line and file name are kept for quarantined rows only: the valid ones do not need them (but for
    # their memo key, with a line memo). The rows are stored in any order (cheaper to read): whatever reads them
    # in an order sorts them.
    more = "" if kind == "jsonl" else ", ts"
    con.execute(f"""
            CREATE TABLE staged AS
            SELECT CASE WHEN reason IS NOT NULL OR {'true' if memo else 'false'} THEN filename END AS filename,
                   CASE WHEN reason IS NOT NULL THEN {FIND_AGAIN[kind]} END AS line, t, "user", query, reason,
                   logged{MEMO_KEYS if memo else ""}
            FROM (SELECT filename, line, t, "user", query, logged{MEMO_KEYS if memo else ""}{more}, coalesce(bad,
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


def _hold_none(con: duckdb.DuckDBPyConnection) -> None:
    """The memo's tables, empty: a run without a line memo."""
    con.execute(f"CREATE TABLE held {HELD}")
    con.execute(f"CREATE TABLE held_sk {HELD_SK}")
    con.execute(f"CREATE TABLE held_vs {HELD_VS}")


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
    """The table `quarantine`: the quarantined rows (file, where in it: see `FIND_AGAIN`, reason, raw text) with
    their line numbers (a Parquet row's number) and scrubbed raw text, and the lines DuckDB could not read
    (`rejected_lines`); on a cursor of its own. Returns the JSONL files whose every line is quarantined (not a log,
    or not of this format)."""
    with cursor:
        lines: dict[str, int] = {}
        located = [(f, where) for f, where, _, _ in bad if where is not None]
        if kind == "jsonl":
            numbers = line_numbers(located, lines)
            number_emptied(numbers, {f for f, where, _, _ in bad if where == ""}, rejects)
        elif kind == "csv":
            numbers = csv_line_numbers(located)
        else:
            numbers = parquet_row_numbers(cursor, located)
        # Each record takes the next number of its line (a line logged twice has two); a question quarantined
        # for its timestamp often recurs, so each distinct raw text is scrubbed once.
        taken = {key: iter(found) for key, found in numbers.items()}
        # A JSONL line that is no row, or a question that is a list or an object, is JSON text: only its log fields
        # are kept, and its escapes are read before the scrubber reads it ("in\u00eas" is a name too).
        scrubbed = functools.cache(lambda raw, as_json: scrub(
            json_unescaped(only_log_fields(without_user(raw))) if as_json else without_user(raw))[:200])
        records: list[tuple[Any, ...]] = [(f, next(taken.get((f, text), iter(())), None), r,
                                           scrubbed(str(raw), kind == "jsonl" and r in JSON_TEXT))
                                          for f, text, r, raw in bad]
        records += rejects
        if records:  # one insert from Arrow: a row-by-row executemany took minutes for many quarantined rows
            schema = QUARANTINE.schema
            columns = {name: [rec[i] for rec in records] for i, name in enumerate(schema.names)}
            cursor.from_arrow(pa.table(columns, schema=schema)).insert_into("quarantine")
        if kind != "jsonl":  # a CSV or Parquet file of another format stops the run instead (`check_columns`)
            return []
        return _unreadable(Counter(str(rec[0]) for rec in records if rec[0] is not None), lines)


def _unreadable(bad: Counter[str], lines: dict[str, int]) -> list[str]:
    """The files with as many quarantined records as lines that are not blank. `lines`: the files' "\n" line
    breaks, where `line_numbers` counted them; the few files near the mark are counted exactly."""
    out = []
    for file, n in bad.items():
        if n < lines.get(file, 2 * n) / 2:
            continue  # most lines of the file are rows
        rows = sum(1 for block, layout in blocks(file) for _, line in split_lines(block, layout) if line.strip(b" \r"))
        if rows and n >= rows:
            out.append(file)
    return sorted(out)


# A quarantined line's user field, written as JSON or loosely ('user': ..., user: ..., user=...; a value quoted, an
# object, a list, cut off, or bare); not "username" or "superuser".
_USER_FIELD = re.compile(r"""((?<![\w"'])["']?user["']?\s*[:=]\s*)"""
                         r"""(?:"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|\{[^}]*\}?|\[[^\]]*\]?|[^\s,}\]]+)""",
                         re.IGNORECASE)


def without_user(raw: str) -> str:
    """A quarantined line with its user field's value replaced by "{user}": no output holds a user id (a pseudonym
    the scrubber's patterns catch only sometimes: "u-123456" looks like an id, "u-e3f3d4" does not)."""
    return _USER_FIELD.sub(r'\1"{user}"', raw)


# The quarantine reasons of a JSONL row whose raw text is JSON: the line itself, or the question's list or object.
JSON_TEXT = frozenset({"unparsable line", "query is not text"})
LOG_FIELDS = frozenset({"ts", "user", "query"})
# A field's key in JSON or a Python literal, quoted, not inside a string (there its quote is escaped).
_KEY = re.compile(r"""(?<![\w"'\\])(["'])([^"'\\\n]{1,64}?)\1\s*:\s*""")


def only_log_fields(raw: str) -> str:
    """A quarantined JSON text with the value of every field that is not a log field (`ts`, `user`, `query`, any
    case) replaced by "{field}", at any depth: a log's other fields (a session, earlier turns, a contact) are
    read by no stage, and a bare value there (a name, a reference) has no cue the scrubber could know it by. A
    value cut off by the line's end is replaced to the end."""
    out: list[str] = []
    pos = 0
    while (m := _KEY.search(raw, pos)) is not None:
        if m[2].casefold() in LOG_FIELDS:  # kept; a list or an object there is read for fields, a string is not
            pos, start = (_value_end(raw, m.end()) if raw[m.end():m.end() + 1] in ("'", '"') else m.end()), pos
            out.append(raw[start:pos])
            continue
        out.append(raw[pos:m.end()] + '"{field}"')
        pos = _value_end(raw, m.end())
    return "".join(out) + raw[pos:]


_BARE = re.compile(r"[^\s,}\]]*")


def _value_end(text: str, at: int) -> int:
    """Where the JSON (or Python literal) value starting at `at` ends: after its closing quote or bracket, at the
    end of the text when it is cut off; a bare value (a number, true) at the next comma, bracket or blank."""
    if at >= len(text):
        return at
    if text[at] not in "\"'{[":
        bare = _BARE.match(text, at)
        return bare.end() if bare else at
    depth, quote, i = 0, "", at
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
                if not depth:
                    return i + 1
        elif c in "\"'":
            quote = c
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if not depth:
                return i + 1
        i += 1
    return len(text)


_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])')
_ESCAPED = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def json_unescaped(text: str) -> str:
    """JSON text with its string escapes read ("\\u00ea" is "\u00ea", "\\"" is '"'), as a question parsed from a
    row reads; a surrogate half alone becomes U+FFFD."""
    out = _ESCAPE.sub(lambda m: chr(int(m[0][2:], 16)) if m[0][1] == "u" else _ESCAPED[m[0][1]], text)
    return out.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
