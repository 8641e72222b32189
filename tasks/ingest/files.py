"""The log files a run reads: finding them under a path, their format, and the date window."""

from __future__ import annotations

import csv
import gzip
import io
import os
import re
import zlib
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schemas.errors import LogError
from schemas.sql import has_glob

if TYPE_CHECKING:
    pass



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
        if "\\" in f and has_glob(f):  # DuckDB finds no file by such a path, escaped or not
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


_PARTITION = re.compile(r"date=([0-9]{4}-[0-9]{2}-[0-9]{2})")  # fullmatch: a year of four digits


def csv_header(file: str) -> tuple[str, ...]:
    """The column names a CSV log's first line gives."""
    try:
        with open_log(file) as fh:  # the first line alone: a bad byte further on is a row's problem
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


def outside_note(mine: dict[str, Any]) -> str | None:
    """What the window of a mining run (the manifest's `mine` section) left out of the log, and the option that
    takes it in; None when it left nothing out."""
    out = mine.get("outside_window") or {}
    rows, days = out.get("rows_before", 0) + out.get("rows_after", 0), out.get("days_not_read", 0)
    if not rows and not days:
        return None
    since, until, first, last = mine.get("since"), mine.get("until"), out.get("first_day"), out.get("last_day")
    left = [f"{rows:,} log row{'s' * (rows != 1)}"] if rows else []
    left += [f"{days} logged day{'s' * (days != 1)} (date= folders, not read)"] if days else []
    fixes = []
    if first and since and first < since:
        span = (date.fromisoformat(until) - date.fromisoformat(first)).days + 1 if until else None
        fixes.append(f"--since {first}" + (f" (or `mining.window_days: {span}` in the config)" if span else ""))
    if last and until and last > until:
        fixes.append(f"--until {last}")
    return (f"the window mined, {since or 'the first day'} to {until or 'the last'}, leaves out {' and '.join(left)} "
            f"(the log runs from {first} to {last}); to mine them, run with {' and '.join(fixes)}")


def open_log(file: str) -> gzip.GzipFile | io.BufferedReader:
    """A log file's bytes, decompressed as they are read."""
    return gzip.open(file, "rb") if file.lower().endswith(".gz") else open(file, "rb")
