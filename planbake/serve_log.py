"""The request log: each served question as a log row `planbake mine` reads ({ts, user, query}, JSONL), scrubbed
of personal data before it is written, one folder a day (`date=YYYY-MM-DD/part-000.jsonl`)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

from schemas.digest import text_digest

PART = "part-000"
SUFFIX = ".jsonl"
ANONYMOUS = "anonymous"  # a request naming no user: all such rows count as one user, so they alone make no shape


@lru_cache(maxsize=4096)  # a user asks again and again
def pseudonym(user: str | None) -> str:
    """A user id as the log keeps it: a fingerprint, so an id that is personal data (an email) is never written."""
    return ANONYMOUS if not user else "u-" + text_digest(user, 16)


def day_file(folder: Path, day: str) -> Path:
    return folder / f"date={day}" / (PART + SUFFIX)


class RequestLog:
    """Appends one line per served question, whole (one `write` on an O_APPEND file), under a lock."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._day = ""
        self._fd: int | None = None

    def append(self, query: str, user: str | None, scrub: Callable[[str], str], now: datetime | None = None) -> None:
        """Scrub the question with the served publication's scrubber (the one mining uses), then write its row."""
        when = (now or datetime.now(UTC)).astimezone(UTC)
        row = {"ts": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"), "user": pseudonym(user),
               "query": scrub(query)}
        line = (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")
        day = when.date().isoformat()
        with self._lock:
            if day != self._day or self._fd is None:
                self._open(day)
            assert self._fd is not None
            os.write(self._fd, line)

    def _open(self, day: str) -> None:
        self.close_file()
        path = day_file(self.folder, day)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        self._day = day

    def close_file(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        with self._lock:
            self.close_file()
