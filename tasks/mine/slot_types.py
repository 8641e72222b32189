"""The types of the shapes' entity slots, from the corpus's titles and the names that fill them in the log."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from schemas.entity import ENTITY
from schemas.entity_types import slot_types
from tasks.ingest.stage import Ingested


def type_slots(ing: Ingested, shapes: list[dict[str, Any]], types: Callable[[], Mapping[str, str]]) -> None:
    """Set each shape's `slot_types` (`schemas.entity_types.slot_types`, as JSON; None where no slot is typed)
    from the distinct value sets of its questions, for the slots its skeleton holds (a merged member's may hold
    more). `types`: the titles' types, read only where a recurring shape has an entity slot. After `build_shapes`
    (its `sk_rep`: skeleton -> its shape's)."""
    known = types() if any(s["recurring"] and "{" + ENTITY in s["skeleton"] for s in shapes) else {}
    filled: dict[str, list[str]] = {}
    if known:
        filled = dict(ing.con.sql("""
            SELECT s.skeleton, list(DISTINCT v.slots)
            FROM q JOIN sk_rep k USING (sid) JOIN skeletons s ON s.sid = k.rep JOIN value_sets v USING (kid)
            WHERE s.skeleton LIKE '%{entity%'
            GROUP BY s.skeleton""").fetchall())
    for shape in shapes:
        slots = {f"{ENTITY}_{n}" for n in range(1, shape["skeleton"].count("{" + ENTITY + "}") + 1)}
        typed = slot_types((json.loads(v) for v in filled.get(shape["skeleton"], []) if v), known)
        kept = {slot: kind for slot, kind in typed.items() if slot in slots}
        shape["slot_types"] = json.dumps(kept, sort_keys=True) if kept else None
