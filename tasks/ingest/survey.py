"""A survey of a query log, for `planbake init`: its format, the columns it names, and, when it names the ones
ingest reads (ts, user, query), its valid rows, users and time span, read as `ingest` reads them."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import duckdb

from schemas.errors import LogError
from tasks.ingest.checks import LOG_COLUMNS, check_encoding
from tasks.ingest.files import csv_header, log_files, open_log
from tasks.ingest.sql import reader_sql, source_sql, utc_sql

# Names logs often give what ingest reads as ts, user and query: offered when one of those is missing.
LIKELY = {"ts": ("timestamp", "time", "datetime", "date", "created_at", "logged_at", "event_time"),
          "user": ("user_id", "userid", "uid", "session", "session_id", "client_id", "visitor_id"),
          "query": ("question", "q", "text", "prompt", "query_text", "search", "message")}
HEAD_LINES = 200  # lines of a JSONL log whose keys name its columns


@dataclass
class LogSurvey:
    path: str
    kind: str  # jsonl, parquet or csv
    files: int
    columns: list[str]  # as the files name them, in order of first appearance
    rows: int = 0  # valid rows: a readable timestamp, a user and a question
    other: int = 0  # rows ingest would quarantine (unparsable, a field missing, a bad timestamp)
    users: int = 0
    first: datetime | None = None  # the earliest and latest valid timestamps, UTC
    last: datetime | None = None
    renames: dict[str, str] = field(default_factory=dict)  # a missing column -> the found column that may be it

    @property
    def missing(self) -> list[str]:
        """The columns ingest reads that the log does not name."""
        return [c for c in LOG_COLUMNS if c not in self.columns]

    @property
    def days(self) -> int:
        """The calendar days from the first valid row's to the last's, both counted (0: no valid row)."""
        return (self.last.date() - self.first.date()).days + 1 if self.first and self.last else 0


def survey_logs(path: str | Path) -> LogSurvey:
    """The survey of the logs under `path` (a file or a folder, as `--logs` takes them): LogError when they are
    no logs ingest reads (no log file, mixed formats, a file in UTF-16)."""
    files, kind = log_files(path)
    check_encoding(files, kind)
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    try:
        columns = _columns(con, files, kind)
        survey = LogSurvey(str(path), kind, len(files), columns)
        if survey.missing:
            lowered = {c.casefold(): c for c in columns}
            survey.renames = {want: lowered[name] for want in survey.missing
                              for name in LIKELY[want] if name in lowered and lowered[name] not in LOG_COLUMNS}
            return survey
        ok = """bad IS NULL AND t IS NOT NULL AND "user" IS NOT NULL AND trim(coalesce(query, '')) <> ''"""
        rows, other, users, first, last = con.execute(f"""
            SELECT count(*) FILTER (WHERE ok), count(*) FILTER (WHERE NOT ok),
                   count(DISTINCT "user") FILTER (WHERE ok), min(t) FILTER (WHERE ok), max(t) FILTER (WHERE ok)
            FROM (SELECT {ok} AS ok, "user", t FROM (SELECT *, {utc_sql('ts')} AS t FROM ({source_sql(files, kind)})))
            """).fetchall()[0]
    except duckdb.Error as exc:
        raise LogError(f"{path}: cannot read the logs ({str(exc).splitlines()[0]}); check the format") from None
    finally:
        con.close()
    survey.rows, survey.other, survey.users, survey.first, survey.last = rows, other, users, first, last
    return survey


def _columns(con: duckdb.DuckDBPyConnection, files: list[str], kind: str) -> list[str]:
    """The column names the log files give: a CSV file's header, a Parquet file's schema, the keys of a JSONL
    log's first objects (`HEAD_LINES` lines of each file)."""
    found: dict[str, None] = {}
    if kind == "csv":
        for f in files:
            found.update(dict.fromkeys(csv_header(f)))
    elif kind == "parquet":
        described = con.execute(f"DESCRIBE SELECT * FROM {reader_sql(files, kind)}").fetchall()
        found.update(dict.fromkeys(r[0] for r in described if r[0] != "filename"))
    else:
        for f in files:
            try:
                with open_log(f) as fh:
                    head = [raw for _, raw in zip(range(HEAD_LINES), fh, strict=False)]
            except (OSError, EOFError, zlib.error) as exc:
                raise LogError(f"{f}: cannot read it ({exc}); check the file") from None
            for raw in head:
                try:
                    rec = json.loads(raw.decode("utf-8-sig"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    continue  # a row ingest quarantines: no column of the log
                if isinstance(rec, dict):
                    found.update(dict.fromkeys(rec))
    return list(found)
