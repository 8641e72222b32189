"""The flow engine's temporary local server, tied to the planbake process that starts it.

With no PREFECT_API_URL, Prefect runs a flow against a temporary server it starts in a child process
(`SubprocessASGIServer`) and stops at exit; Ctrl-C and SIGTERM unwind the run to that exit. A process killed
outright (SIGKILL: the OOM killer, `kill -9`, a scheduler's hard timeout) runs nothing more, and the server would
outlive it, holding its port and memory. Here the server is started as Prefect starts it, beside a guard process
(`server_guard.py`) that stops it as soon as this process is gone.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from prefect.server.api.server import SubprocessASGIServer

GUARD = Path(__file__).with_name("server_guard.py")


class TiedServer(SubprocessASGIServer):
    """Prefect's temporary server with a guard that stops it when this process ends. Made first, it is the one
    Prefect's own calls get (`SubprocessASGIServer()` returns one instance per port, as the test harness relies on),
    and Prefect starts it, as before, only when a flow needs its API."""

    guard: subprocess.Popen[bytes] | None = None

    def _run_uvicorn_command(self) -> subprocess.Popen[Any]:
        server = super()._run_uvicorn_command()
        self._release_guard()  # of a server that could not take its port (Prefect starts another on a new one)
        # The guard's stdin is a pipe only this process holds open: it closes when this process ends, however.
        # A session of its own: Ctrl-C in a terminal is this process's to handle, and the guard must outlive it.
        try:
            self.guard = subprocess.Popen([sys.executable, "-I", "-S", str(GUARD), str(server.pid)],
                                          stdin=subprocess.PIPE, start_new_session=True)
        except OSError:  # no guard (no process to spare): the server still stops at this process's exit
            self.guard = None
        return server

    def stop(self) -> None:
        super().stop()
        self._release_guard()

    def _release_guard(self) -> None:
        """Let the guard go once its server has stopped: closing its pipe ends it at once."""
        if self.guard is not None:
            if self.guard.stdin is not None:
                self.guard.stdin.close()
            self.guard.wait()
            self.guard = None
