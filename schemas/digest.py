"""Content fingerprints, written once: a SHA-256 of a value's JSON or of a text, cut to `length` hex digits.

A fingerprint names what a stored result depends on (a config, a lexicon, a memo's inputs), so a change to any
of it starts anew. The JSON form is part of each published fingerprint: `sort_keys` stays what each caller had
when its fingerprints were first published, or every published key would change with no change of input.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any


def text_digest(data: str | bytes, length: int = 64) -> str:
    """The fingerprint of a text (UTF-8) or of bytes."""
    raw = data.encode() if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()[:length]


def fingerprint(value: Any, length: int = 16, *, sort_keys: bool = True) -> str:
    """The fingerprint of a JSON value; a value JSON cannot hold (a date) is written as its text."""
    return text_digest(json.dumps(value, sort_keys=sort_keys, default=str), length)


def source_digest(module: str) -> str:
    """The fingerprint of a module's source file (found by its dotted name, not run): what a memo made by other
    code must not be trusted for."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ImportError(f"no source file for the module {module}")
    return text_digest(Path(spec.origin).read_bytes())
