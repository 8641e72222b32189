"""The types of the shapes' entity slots, from the corpus's titles and the names that fill them in the log."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from schemas.entity_types import slot_types_json
from tasks.ingest.stage import Ingested


def type_slots(ing: Ingested, shapes: list[dict[str, Any]], types: Mapping[str, str]) -> None:
    """Set each shape's `slot_types` (`schemas.entity_types.slot_types`, as JSON; None where no slot is typed)
    from the distinct value sets of its questions. After `build_shapes` (its `sk_rep`: skeleton -> its shape's)."""
    filled: dict[str, list[str]] = {}
    if types and any("{entity" in s["skeleton"] for s in shapes):
        filled = dict(ing.con.sql("""
            SELECT s.skeleton, list(DISTINCT v.slots)
            FROM q JOIN sk_rep k USING (sid) JOIN skeletons s ON s.sid = k.rep JOIN value_sets v USING (kid)
            WHERE s.skeleton LIKE '%{entity%'
            GROUP BY s.skeleton""").fetchall())
    for shape in shapes:
        shape["slot_types"] = slot_types_json(filled.get(shape["skeleton"], []), types)
