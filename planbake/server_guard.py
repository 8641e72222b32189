"""Stop the flow engine's temporary server once the planbake process that started it is gone, however it ended.

Run as `python server_guard.py SERVER_PID` with stdin a pipe whose other end only that process holds: the pipe
reads end-of-file when the process ends, killed outright included (SIGKILL, the OOM killer), which no handler of
its own sees. The server is held by a pid file descriptor, so a pid the system has since given to another process
is never signalled. Linux only (`os.pidfd_open`). Standard library only: it starts in a moment.
"""

from __future__ import annotations

import os
import select
import signal
import sys

STOP_S = 5.0  # how long the server has to stop on SIGTERM before SIGKILL, as Prefect gives it


def guard(server_pid: int) -> None:
    """Wait until the server stops (its owner stopped it) or stdin closes (its owner is gone: stop the server)."""
    try:
        server = os.pidfd_open(server_pid)
    except OSError:  # gone, or refused (a container's seccomp profile from before pidfd_open): no traceback on
        return  # the run's stderr; the run's own exit stops the server, as with no guard
    ready, _, _ = select.select([sys.stdin, server], [], [])
    if server in ready:
        return
    try:
        signal.pidfd_send_signal(server, signal.SIGTERM)
        if not select.select([server], [], [], STOP_S)[0]:
            signal.pidfd_send_signal(server, signal.SIGKILL)
    except ProcessLookupError:  # it stopped meanwhile
        pass


if __name__ == "__main__":
    guard(int(sys.argv[1]))
