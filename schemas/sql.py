"""SQL literals, written once: every statement that puts a text, a list of texts or a file path into DuckDB SQL
quotes it here. Plain strings: `schemas` imports no DuckDB."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

_GLOB = re.compile(r"[*?\[]")  # the characters DuckDB's file readers take as a glob


def sql_string(value: str | Path) -> str:
    """A text (or a path) as a SQL string literal: in single quotes, a quote inside doubled."""
    return "'" + str(value).replace("'", "''") + "'"


def sql_strings(values: Iterable[str]) -> str:
    """A list of texts as a SQL list literal."""
    return "[" + ", ".join(sql_string(v) for v in values) + "]"


def sql_files(files: Iterable[str]) -> str:
    """A list of files as the SQL list literal DuckDB's readers take. The readers take each name as a glob, so the
    glob's characters are escaped: "a[1].jsonl" is that file, never "a1.jsonl"."""
    return sql_strings(_GLOB.sub(r"[\g<0>]", f) for f in files)


def has_glob(path: str) -> bool:
    """Whether a path holds a character DuckDB's readers take as a glob."""
    return _GLOB.search(path) is not None
