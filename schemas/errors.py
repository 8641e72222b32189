"""The failures planbake expects, in one hierarchy: each class carries the exit code the CLI exits with and the
word it prints before the message. The CLI maps `PlanbakeError` and nothing else of planbake's (besides a path
the system refuses, a lost flow engine API and an interrupt); any other exception is a bug and keeps its traceback.
Raise one of these, never a bare built-in, for bad input or an expected condition that reaches the CLI.

Each class also keeps the built-in base it had before the hierarchy (`ValueError` for bad input, and so on), so
code that catches the built-in type still does.

Some exceptions stay outside the hierarchy on purpose, as they never reach the CLI: `schemas.answers.ExtractRefused`
(an extraction refusing to guess; the executor records it as the step's error), `schemas.config.DuplicateKey` and
`BooleanKey` (raised by the YAML loader; `load_config` and the corpus reader turn them into ConfigError and
CorpusError at their line), `MemoError` of `tasks.ingest` (a line memo that does not hold together; ingest reads the
file instead), and `schemas.plan.PlanError` (a plan that fails validation; the plan stage counts and replaces it, so
one that escapes is a bug). The `ValueError`s of the config's pydantic validators reach the user through
`load_config`'s ConfigError, and the `TypeError`s of `PlanCache.lookup` are a Python caller's mistake.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

REPAIR = ("the publication is damaged: 'planbake rollback' returns to the previous one ('--to RUN_ID': to a named "
          "one), 'planbake nightly' publishes a new one over it")
EXIT_INTERNAL, EXIT_INPUT, EXIT_BUSY, EXIT_NOT_PUBLISHED, EXIT_GATE = 1, 2, 3, 4, 5


class PlanbakeError(Exception):
    """The root of every expected failure; its message names what failed and the fix."""

    exit_code = EXIT_INTERNAL
    kind = "error"  # the word the CLI prints before the message, and the `error` field of its --json

    def fields(self) -> dict[str, Any]:
        """What the CLI's --json document says besides `error`, `message` and `exit_code`."""
        return {}


class InputError(PlanbakeError, ValueError):
    """Input that cannot be used: a file, one of its lines, an option or a config key. Nothing was published."""

    exit_code = EXIT_INPUT


class ConfigError(InputError):
    """A config file that cannot be used; the message names the file, the field and the fix."""


class LogError(InputError):
    """Log input that cannot be read at all (no files, unknown format)."""


class CorpusError(InputError):
    """Bad corpus input. The message names the file, the line and the fix; nothing is written."""


class LabelError(InputError):
    """A labeled-questions file that cannot be read; the message names the file and the line."""


class IndexUnreachable(InputError):
    """A remote index (`index_uri`) whose store does not answer: a bad address or credentials, bad input."""


class FacetColumnsMissing(InputError):
    """A table version without a column for a facet of the config: indexed before the config had that facet."""


class ModelServerRefused(InputError):
    """The model server refused the API key (HTTP 401 or 403): no retry or fallback mends that; the run fails."""

    def __init__(self, base_url: str, status: int, api_key_env: str) -> None:
        super().__init__(f"{base_url}: the model server refused the API key (HTTP {status}); set ${api_key_env} "
                         "to a key it accepts (planning.openai_api_key_env names the variable), or use --writer rules")


class DamagedPublication(InputError):
    """A file of a published run is missing or unreadable (a failing disk, an edit by hand)."""

    def __init__(self, problem: str) -> None:
        super().__init__(f"{problem}; {REPAIR}")
        self.problem = problem  # the file and what is wrong with it


class PublishBusy(PlanbakeError, RuntimeError):
    """Another run holds the publish lock."""

    exit_code = EXIT_BUSY
    kind = "busy"


class NoPublication(PlanbakeError, FileNotFoundError):
    """Nothing has been published under this root yet."""

    exit_code = EXIT_NOT_PUBLISHED


class GateRejected(PlanbakeError, RuntimeError):
    """The quality gate stopped a publication; the last publication stays live. `kept`: the kept run folder."""

    exit_code = EXIT_GATE
    kind = "rejected"

    def __init__(self, message: str, kept: Path) -> None:
        super().__init__(message)
        self.kept = kept

    def fields(self) -> dict[str, Any]:
        return {"report": str(self.kept / "report" / "report.md")}
