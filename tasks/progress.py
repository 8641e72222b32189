"""Progress for long steps: a live bar on a terminal, a line every ~10% in CI logs."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class _Lines:
    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.done, self.next_pct, self.t0 = label, total, 0, 10, time.perf_counter()

    def advance(self, n: int) -> None:
        self.done += n
        if self.next_pct > 100:
            return
        pct = 100 * self.done // max(self.total, 1)
        if pct >= self.next_pct or self.done >= self.total:
            print(f"{self.label}: {self.done}/{self.total} ({pct}%, {time.perf_counter() - self.t0:.1f}s)",
                  file=sys.stderr, flush=True)
            self.next_pct = pct - pct % 10 + 10


class _Bar:
    def __init__(self, progress: Progress, label: str, total: int) -> None:
        self.progress, self.task = progress, progress.add_task(label, total=total)

    def advance(self, n: int) -> None:
        self.progress.advance(self.task, n)


@contextmanager
def progress(label: str, total: int, quiet: bool = False) -> Iterator[_Lines | _Bar]:
    """Report progress of `total` units; `.advance(n)` as work gets done."""
    if quiet or total == 0:
        tracker = _Lines(label, total)
        tracker.next_pct = 10**9
        yield tracker
    elif sys.stderr.isatty():
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), transient=True) as bar:
            yield _Bar(bar, label, total)
    else:
        yield _Lines(label, total)
