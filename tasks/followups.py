"""Follow-ups in the logs: learn which skeletons are follow-ups, keep them out of the shapes, and resolve each
follow-up row against the same user's previous question (schemas/followup.py, the code `lookup` runs)."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from schemas.config import Config
from schemas.constraint import Constraint
from schemas.extract import Skeleton, cache_key
from schemas.followup import Conversation, Followups, Turn
from tasks.logs import Ingested

_WINDOW = 'WINDOW w AS (PARTITION BY "user" ORDER BY ts, question_id)'
FOLLOWUP_COLUMNS = ("question_id", "followup", "resolved_question", "resolved_shape_id", "resolved_key",
                    "followup_reason")


def learn(ing: Ingested, config: Config) -> Followups:
    """Short skeletons with constraints that mostly come right after another question of the same user,
    from enough users: the follow-ups of these logs ("what about {office}")."""
    m = config.mining
    rows = ing.con.execute(f"""
        WITH o AS (SELECT skeleton, constraints, "user", epoch(ts) - epoch(lag(ts) OVER w) AS gap FROM q {_WINDOW})
        SELECT skeleton FROM o WHERE constraints <> '[]' GROUP BY skeleton
        HAVING count(*) >= ? AND count(DISTINCT "user") >= ?
           AND avg(CASE WHEN gap <= ? THEN 1.0 ELSE 0.0 END) >= ?
        ORDER BY skeleton""", [m.min_count, m.min_users, m.followup_seconds, m.followup_min_share]).fetchall()
    rules = Followups(m)
    return Followups(m, [r[0] for r in rows if rules.topic_words(r[0]) <= m.followup_learn_words])


def drop_followup_shapes(shapes: list[dict[str, Any]], rules: Followups) -> None:
    """A follow-up has no topic of its own: never a shape to plan for (it resolves into the previous one's)."""
    for s in shapes:
        if rules.is_followup_text(s["skeleton"]):
            s["recurring"] = False


def shape_lookup(shapes: list[dict[str, Any]]) -> dict[str, str]:
    """Skeleton -> shape id, as the published cache maps them (a recurring shape's skeleton and examples)."""
    out: dict[str, str] = {}
    for s in shapes:
        if s["recurring"]:
            for sk in [s["skeleton"], *(s.get("examples") or [])]:
                out.setdefault(sk, s["shape_id"])
    return out


def _resolved(turn: Turn, shape_of: dict[str, str]) -> dict[str, Any]:
    """A follow-up row's columns: the standalone question, its shape and cache key when it has them."""
    sid = shape_of.get(turn.standalone.text) if turn.standalone else None
    key = cache_key(sid, turn.standalone) if sid and turn.standalone else None
    return {"followup": True, "resolved_question": turn.question, "resolved_shape_id": sid,
            "resolved_key": key, "followup_reason": turn.reason}


def link(ing: Ingested, config: Config, rules: Followups, shape_of: dict[str, str]) -> dict[str, Any]:
    """Resolve every follow-up row; writes the `followups` table (FOLLOWUP_COLUMNS) and returns the figures."""
    con = ing.con
    skeletons = [r[0] for r in con.sql("SELECT DISTINCT skeleton FROM q").fetchall()]
    fu_sk = pa.table({"skeleton": [s for s in skeletons if rules.is_followup_text(s)]})  # noqa: F841
    rows = con.execute(f"""
        WITH f AS (SELECT q.*, s.skeleton IS NOT NULL AS fu FROM q LEFT JOIN fu_sk s USING (skeleton)),
        o AS (SELECT question_id, "user", ts, skeleton, constraints, fu, epoch(ts) - epoch(lag(ts) OVER w) AS gap,
                     lead(fu) OVER w AS next_fu FROM f {_WINDOW})
        SELECT question_id, "user", skeleton, constraints, fu, gap FROM o WHERE fu OR next_fu
        ORDER BY "user", ts, question_id""").fetchall()
    found: dict[str, dict[str, Any]] = {}
    talk, user = Conversation(rules), None
    parsed: dict[tuple[str, str], Skeleton] = {}  # the same skeleton and values recur across rows
    outcome: dict[Turn, dict[str, Any]] = {}
    for qid, who, text, constraints, fu, gap in rows:
        if who != user or gap is None or gap > config.mining.followup_seconds:
            talk.reset()  # rows in between were no follow-ups, so nothing before them is this row's context
            user = who
        sk = parsed.get((text, constraints))
        if sk is None:
            sk = parsed[text, constraints] = Skeleton(
                text, tuple(Constraint(f, v) for f, v in json.loads(constraints)))
        turn = talk.add(sk)
        if fu:
            if turn not in outcome:
                outcome[turn] = _resolved(turn, shape_of)
            found[qid] = {"question_id": qid, **outcome[turn]}
    schema = pa.schema([(c, pa.bool_() if c == "followup" else pa.string()) for c in FOLLOWUP_COLUMNS])
    resolved = pa.Table.from_pylist(list(found.values()), schema)  # noqa: F841 - DuckDB reads it by name
    con.execute("CREATE OR REPLACE TABLE followups AS SELECT * FROM resolved")
    total = con.sql("SELECT count(*) FROM q").fetchall()[0][0]
    return {"skeletons": sorted(rules.learned), "questions": int(total), "followups": len(found),
            "resolved": sum(r["resolved_question"] is not None for r in found.values()),
            "cached": sum(r["resolved_shape_id"] is not None for r in found.values())}
