"""Follow-ups in the logs: learn which skeletons are follow-ups, keep them out of the shapes, and resolve each
follow-up row against the same user's previous question (schemas/followup.py, the code `lookup` runs)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from schemas.config import Config
from schemas.constraint import Constraint
from schemas.extract import Skeleton, cache_key
from schemas.followup import Conversation, Followups, Turn, topic_words_sql
from schemas.instruction import score
from schemas.members import ShapeMembers
from tasks.ingest.stage import Ingested

FOLLOWUP_COLUMNS = ("question_id", "followup", "resolved_question", "resolved_shape_id", "resolved_key",
                    "followup_reason")
_RESOLVED = FOLLOWUP_COLUMNS[2:]


def _turns(con: Any, config: Config) -> None:
    """The view `turns`: each row of `q` with whether it came within the follow-up window of the same user's
    previous question, and that question's skeleton and constraints (`q` holds the previous question: the
    window pass that made it serves learn and replay)."""
    con.execute(f"""
        CREATE VIEW IF NOT EXISTS turns AS
        SELECT question_id, "user", ts, logged, sid, kid,
               coalesce(epoch(ts) - epoch(prev_ts) <= {int(config.mining.followup_seconds)}, false) AS near,
               prev_sid, prev_kid
        FROM q""")


def learn(ing: Ingested, config: Config) -> Followups:
    """Short skeletons with constraints that mostly come right after another question of the same user,
    from enough users: the follow-ups of these logs ("what about {office}")."""
    m = config.mining
    _turns(ing.con, config)
    # Only short skeletons can be learned: they are picked first, so the counts read their rows alone.
    short = f"SELECT sid FROM skeletons WHERE {topic_words_sql('skeleton')} <= {int(m.followup_learn_words)}"
    rows = ing.con.execute(f"""
        SELECT s.skeleton FROM (
            SELECT sid FROM turns SEMI JOIN ({short}) short USING (sid)
            WHERE kid IN (SELECT kid FROM value_sets WHERE constraints <> '[]') GROUP BY sid
            HAVING count(*) >= ? AND count(DISTINCT "user") >= ? AND avg(CASE WHEN near THEN 1.0 ELSE 0.0 END) >= ?)
        JOIN skeletons s USING (sid) ORDER BY s.skeleton""",
        [m.min_count, m.min_users, m.followup_min_share]).fetchall()
    return Followups(m, [r[0] for r in rows if not score(r[0]).instruction])  # published in the manifest


def drop_followup_shapes(shapes: list[dict[str, Any]], rules: Followups) -> None:
    """A follow-up has no topic of its own: never a shape to plan for (it resolves into the previous one's)."""
    for s in shapes:
        if rules.is_followup_text(s["skeleton"]):
            s["recurring"] = False


def shape_lookup(shapes: list[dict[str, Any]]) -> ShapeMembers:
    """Skeleton -> shape id, as the published cache maps them (a recurring shape's skeleton, its examples and
    the hashes of its rarer members)."""
    out = ShapeMembers()
    for s in shapes:
        if s["recurring"]:
            out.add(s["shape_id"], [s["skeleton"], *(s.get("examples") or [])], s.get("member_hashes") or [])
    return out


def _table(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pa.Table:
    return pa.table({name: [r[i] for r in rows] for i, name in enumerate(schema.names)}, schema=schema)


@dataclass
class Replayed:
    """The follow-up rows resolved into standalone skeletons (`replay`), before shape ids are known: the
    distinct (previous question, follow-up) pairs, and the rows of users whose follow-ups chain. Each turn's
    standalone question (`Turn.question`) is filled in by the replay too, so that work runs beside the merge."""

    pairs: list[tuple[Any, ...]]  # (constraints, near, prev_skeleton, prev_constraints, Turn, its question)
    chained: dict[int, tuple[Turn, str | None]]  # by question id: a line logged twice is one question


def replay(con: Any, config: Config, rules: Followups) -> Replayed:
    """Resolve every follow-up row of the table `q` into a standalone skeleton, on `con` (the session's
    connection or a cursor of it: it needs no shape, so it can run beside the merge).

    A follow-up after a question that is none resolves against that question alone, so each distinct
    (previous question, follow-up) pair is resolved once. A user with a follow-up right after another one
    (a chain) is replayed row by row. Both go through `Conversation`, the code `lookup` runs.
    """
    _turns(con, config)
    skeletons = con.sql("SELECT sid, skeleton FROM skeletons").fetchall()
    fu_sk = pa.table({"sid": pa.array([i for i, s in skeletons if rules.is_followup_text(s)], pa.int32())})  # noqa: F841
    # Tables, not temporary ones: `link` reads them on the session's connection.
    con.execute("""
        CREATE OR REPLACE TABLE fu_turns AS  -- the previous question only where it is this one's context
        SELECT t.question_id, t."user", s.skeleton, v.constraints, t.near,
               CASE WHEN t.near THEN ps.skeleton END AS prev_skeleton,
               CASE WHEN t.near THEN pv.constraints END AS prev_constraints,
               p.sid IS NOT NULL AND t.near AS after_followup
        FROM turns t SEMI JOIN fu_sk f USING (sid) JOIN skeletons s USING (sid) JOIN value_sets v USING (kid)
             LEFT JOIN skeletons ps ON ps.sid = t.prev_sid LEFT JOIN value_sets pv ON pv.kid = t.prev_kid
             LEFT JOIN fu_sk p ON p.sid = t.prev_sid""")
    con.execute("""CREATE OR REPLACE TABLE chain_users AS
                   SELECT DISTINCT "user" FROM fu_turns WHERE after_followup""")
    parsed: dict[tuple[str, str], Skeleton] = {}  # the same skeleton and values recur across rows

    def skeleton(text: str, constraints: str) -> Skeleton:
        sk = parsed.get((text, constraints))
        if sk is None:
            sk = parsed[text, constraints] = Skeleton(
                text, tuple(Constraint(f, v) for f, v in json.loads(constraints)))
        return sk

    # A follow-up's outcome depends on its values and the previous question, not on its own wording.
    talk = Conversation(rules)
    pairs = []
    for text, constraints, near, prev_text, prev_constraints in con.sql("""
            SELECT min(skeleton), constraints, near, prev_skeleton, prev_constraints
            FROM fu_turns ANTI JOIN chain_users USING ("user") GROUP BY ALL""").fetchall():
        talk.reset()
        if near:
            talk.add(skeleton(prev_text, prev_constraints))
        turn = talk.add(skeleton(text, constraints))
        pairs.append((constraints, near, prev_text, prev_constraints, turn, turn.question))
    chains = con.sql("""
        SELECT t.question_id, s.skeleton, v.constraints, t.near, f.sid IS NOT NULL AS fu
        FROM turns t SEMI JOIN chain_users c USING ("user") JOIN skeletons s USING (sid)
             JOIN value_sets v USING (kid) LEFT JOIN fu_sk f USING (sid)
        WHERE s.skeleton <> ''  -- filler alone ("thanks"): no turn of the conversation
        ORDER BY t."user", t.ts, t.logged""").fetchall()
    chained: dict[int, tuple[Turn, str | None]] = {}
    for qid, text, constraints, near, fu in chains:
        if not near:
            talk.reset()  # a new user, or past the window: nothing before is this row's context
        turn = talk.add(skeleton(text, constraints))
        if fu:
            chained[qid] = turn, turn.question
    return Replayed(pairs, chained)


def _resolved(turn: Turn, question: str | None, shape_of: ShapeMembers) -> tuple[str | None, ...]:
    """A follow-up's resolved columns (_RESOLVED): the standalone question, its shape and cache key, the reason.
    A standalone question that is instruction text is withheld, as `lookup` serves it no plan."""
    if turn.standalone is not None and (verdict := score(turn.standalone.text)).instruction:
        return None, None, None, verdict.reason
    sid = shape_of.get(turn.standalone.text) if turn.standalone else None
    key = cache_key(sid, turn.standalone) if sid and turn.standalone else None
    return question, sid, key, turn.reason


def link(ing: Ingested, config: Config, rules: Followups, shape_of: ShapeMembers,
         replayed: Replayed | None = None) -> dict[str, Any]:
    """Resolve every follow-up row (`replay`, unless done already) and give each its shape and cache key;
    writes the `followups` table (FOLLOWUP_COLUMNS) and returns the figures."""
    con = ing.con
    if replayed is None:
        replayed = replay(con, config, rules)
    columns = ["constraints", "near", "prev_skeleton", "prev_constraints", *_RESOLVED]
    resolved = _table([(*pair[:4], *_resolved(pair[4], pair[5], shape_of)) for pair in replayed.pairs],  # noqa: F841
                      pa.schema([(c, pa.bool_() if c == "near" else pa.string()) for c in columns]))
    chained = _table([(qid, *_resolved(turn, question, shape_of))  # noqa: F841
                      for qid, (turn, question) in replayed.chained.items()],
                     pa.schema([("question_id", pa.uint64()), *((c, pa.string()) for c in _RESOLVED)]))
    con.execute(f"""
        CREATE OR REPLACE TABLE followups AS
        SELECT t.question_id, true AS followup, {", ".join("r." + c for c in _RESOLVED)}
        FROM fu_turns t ANTI JOIN chain_users c USING ("user")
             JOIN resolved r ON r.constraints = t.constraints AND r.near = t.near
             AND r.prev_skeleton IS NOT DISTINCT FROM t.prev_skeleton
             AND r.prev_constraints IS NOT DISTINCT FROM t.prev_constraints
        UNION ALL
        SELECT question_id, true, {", ".join(_RESOLVED)} FROM chained""")
    total, found, answered, cached = con.sql("""
        SELECT (SELECT count(*) FROM q), count(*), count(resolved_question), count(resolved_shape_id)
        FROM followups""").fetchall()[0]
    return {"skeletons": sorted(rules.learned), "questions": int(total), "followups": int(found),
            "resolved": int(answered), "cached": int(cached)}
