"""Writing a file atomically: into a temporary file beside it, then renamed over it. A failure (a full disk, a
read-only file system) leaves the old file or none, and no temporary file."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from pathlib import Path

# The system refuses to write anything more there: the disk or the user's quota is full, or the file system is
# read-only. The CLI reports these as one line naming the path and the fix.
NO_ROOM_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)


def no_room(exc: BaseException) -> bool:
    """Whether `exc` is an out-of-space, over-quota or read-only file system error."""
    return isinstance(exc, OSError) and exc.errno in NO_ROOM_ERRNOS


def replace_atomically(tmp: Path, target: Path, write: Callable[[Path], object]) -> None:
    """`write(tmp)`, then rename `tmp` over `target`. On any failure `tmp` is removed; an OSError that names no
    file (a full disk while writing, as numpy and zipfile raise it) is given `target`'s name."""
    try:
        write(tmp)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(target)
        elif isinstance(exc, Exception) and not isinstance(exc, OSError):  # DuckDB's IOException says it in words
            code = next((e for e in NO_ROOM_ERRNOS if os.strerror(e) in str(exc)), None)
            if code is not None:
                raise OSError(code, os.strerror(code), str(target)) from exc
        raise
