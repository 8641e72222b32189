"""Skeletons of distinct questions in Python, in the flow's process or in worker processes.

Kept apart from `tasks.mine.mining` so that a spawned worker imports only `schemas`, not the mining stage's
DuckDB, Arrow and model imports.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from schemas.constraint import QUALIFIER, Constraint
from schemas.extract import Lexicon, Skeleton
from schemas.pii import Scrubber

MAPPING_COLUMNS = ("query", "y", "skeleton", "signature", "slots", "constraints")
Rows = list[tuple[Any, ...]]
_worker: dict[str, Any] = {}


def constraint_columns(constraints: tuple[Constraint, ...]) -> tuple[str, str, str]:
    """signature (with qualifiers), slots and constraints as stored in `q`."""
    sk = Skeleton("", constraints)
    quals = sorted({c.value for c in constraints if c.facet == QUALIFIER})
    return (sk.signature + ("|" + ",".join(quals) if quals else ""), json.dumps(sk.slots),
            json.dumps([[c.facet, c.value] for c in constraints]))


def init_worker(lexicon: Lexicon, scrub: Scrubber | None) -> None:
    _worker["lexicon"], _worker["scrub"] = lexicon, scrub


def in_worker(rows: Rows) -> dict[str, list[Any]]:
    """`skeleton_rows` in a worker process: the lexicon and scrubber come from `init_worker`."""
    return skeleton_rows(rows, _worker["lexicon"], _worker["scrub"])


def skeleton_rows(rows: Rows, lexicon: Lexicon, scrub: Scrubber | None) -> dict[str, list[Any]]:
    """Mapping columns for (text, year, query) rows; `scrub` is None when the text is already scrubbed."""
    out: dict[str, list[Any]] = {k: [] for k in MAPPING_COLUMNS}
    for text, y, query in rows:
        sk = lexicon.skeleton(scrub(text) if scrub else text, date(y, 7, 1))
        signature, slots, constraints = constraint_columns(sk.constraints)
        for k, v in zip(MAPPING_COLUMNS, (query, y, sk.text, signature, slots, constraints), strict=True):
            out[k].append(v)
    return out
