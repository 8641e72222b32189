"""The DuckDB tables ingest leaves on its connection (`Ingested.con`) for the mining stage: names and columns,
declared once. `tests/test_contracts.py` holds each to what DuckDB reports after a real ingest."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[str, ...]
    about: str
    memo_columns: tuple[str, ...] = ()  # added after `columns` when a line memo is read

    def column_sets(self) -> list[tuple[str, ...]]:
        """The columns the table has without a line memo, and with one."""
        return [self.columns, self.columns + self.memo_columns]


ROWS = Table("rows", ("ts", "user", "query", "logged"),
             "a view of the window's valid rows read this run: UTC time, user id, question, the order it was logged "
             "in; with a line memo also (filename, key, len), the line's memo key", ("filename", "key", "len"))
RECALLED_LINES = Table("recalled_lines", ("ts", "user", "question_id", "y", "skh", "vsh", "logged"),
                       "a view of the window's rows a line memo held (their lines were not parsed): user is a hash, "
                       "skh and vsh name the skeleton and value set in HELD_SK and HELD_VS; empty without a memo")
HELD_SK = Table("held_sk", ("skh", "skeleton"), "the skeletons of the memo's rows, by 64 bits of their MD5")
HELD_VS = Table("held_vs", ("vsh", "slots", "constraints", "signature"),
                "the value sets of the memo's rows, by 64 bits of their MD5")
QUARANTINE = Table("quarantine", ("file", "line", "reason", "raw"),
                   "the window's bad rows and unreadable lines: file, line number (a Parquet row's number), why, "
                   "the raw text scrubbed and cut to 200 characters; whole once `Ingested.finish` returns")

OUTPUTS = (ROWS, RECALLED_LINES, HELD_SK, HELD_VS, QUARANTINE)
