"""The mining stage: constraints -> skeletons -> shapes (merged, recurring, classified), with DuckDB."""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing
import re
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from schemas.arrow import check_written
from schemas.config import Config
from schemas.extract import Lexicon, fill_skeleton
from schemas.extract_sql import SqlSkeletons
from schemas.files import QUARANTINE, QUESTIONS, SHAPES
from schemas.instruction import is_instruction
from schemas.members import member_hash
from schemas.pii import Scrubber
from schemas.sql import sql_string
from tasks.embed import Embedder
from tasks.ingest.stage import Ingested
from tasks.mine import extract_rows
from tasks.mine.classify import classify
from tasks.mine.extracted import ExtractionMemo, key_sql
from tasks.mine.memory import MergeMemory
from tasks.mine.vectors import VectorStore, text_key
from tasks.progress import progress

log = logging.getLogger("planbake")


WITHHELD_COUNTS = ("shapes", "questions", "users")


@dataclass
class MineResult:
    rows: int
    quarantined: int
    skeletons: int
    shapes: int
    recurring: int
    recurring_questions: int
    by_type: dict[str, int]
    # shapes withheld as instruction text (`schemas.instruction`): shapes, questions, distinct users; no text
    instruction_text: dict[str, int] = field(default_factory=lambda: dict.fromkeys(WITHHELD_COUNTS, 0))
    followups: dict[str, Any] = field(default_factory=dict)  # learned skeletons and counts (tasks/mine/followups.py)
    since: str | None = None  # the log window mined (ISO dates; None: open on that side)
    until: str | None = None
    unreadable_files: list[str] = field(default_factory=list)  # no line of theirs is a valid row: not logs?
    skipped_files: list[str] = field(default_factory=list)  # compressed otherwise than with gzip: not read
    outside_window: dict[str, Any] = field(default_factory=dict)  # the log the window left out (ingest)

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


def shape_id(skeleton: str) -> str:
    return "sh_" + hashlib.sha1(skeleton.encode()).hexdigest()[:10]


_CHUNK = 20_000  # questions per unit of work in Python
# Below this many Python skeletons (~70 µs each), a spawned worker's start-up (it imports the main module: the
# CLI, Prefect) costs more than it saves. Scrubbing (~30 µs a question) always stays in this process.
_PARALLEL_FROM = 100_000


def extract_distinct(ing: Ingested, lexicon: Lexicon, scrub: Scrubber, quiet: bool = False,
                     workers: int = 1, memo: ExtractionMemo | None = None) -> None:
    """Scrub and skeletonise each distinct (query, year) once, into the table `q` (one row per log row).

    DuckDB SQL (`schemas.extract_sql`) scrubs and skeletonises the questions it provably handles like Python.
    The others are scrubbed in Python; those SQL takes after scrubbing go back to it, and the rest get the
    Python skeleton, the code `lookup` runs. With `workers` > 1, many questions are split over that many
    processes. With a `memo`, the questions the last run extracted are recalled, not extracted again
    (`keep_extraction` keeps this run's for the next).
    """
    con = ing.con
    con.execute("CREATE TABLE window_q AS SELECT query, CAST(year(ts) AS INTEGER) AS y FROM rows GROUP BY ALL")
    recalled = memo.recall(con, "window_q", "recalled") if memo else 0
    con.execute("CREATE TABLE distinct_q AS SELECT * FROM window_q" +
                (" ANTI JOIN recalled USING (query, y)" if recalled else ""))
    sql = SqlSkeletons(lexicon, scrub)
    if sql.supported:
        # Each pass runs Python and DuckDB (which releases the GIL) side by side: first Python scrubs the
        # questions SQL cannot take while SQL skeletonises the others; then SQL takes the scrubbed questions
        # it can while Python skeletonises the rest.
        con.execute("CREATE TABLE by_sql (query VARCHAR, y INTEGER, skeleton VARCHAR, markers VARCHAR)")
        con.execute(f"""CREATE TABLE taken AS SELECT query, y, text, coalesce({sql.eligible('text')}, false) AS ok
                        FROM (SELECT query, y, {sql.scrubbed('query')} AS text FROM distinct_q)""")
        rest = con.sql("SELECT query, y FROM taken WHERE NOT ok").fetchall()
        with progress("scrubbing questions", len(rest), quiet=quiet) as bar, ThreadPoolExecutor(1) as pool:
            scrubbing = pool.submit(lambda: [scrub.scrub(query) for query, _ in rest])
            _sql_skeletons(con, sql, "text", "taken WHERE ok")
            results = scrubbing.result()
            bar.advance(len(rest))
        # Questions SQL takes never meet a name rule, in capitals or in lower case (`SqlSkeletons.eligible`)
        _reads_plain(con, [q for (q, _), (_, read) in zip(rest, results, strict=True) if read])
        scrubbed = pa.table({"query": [r[0] for r in rest], "y": [r[1] for r in rest],  # noqa: F841
                             "text": [text for text, _ in results]})
        con.execute(f"CREATE TABLE taken_scrubbed AS SELECT query, y, text, {sql.eligible('text')} AS ok "
                    "FROM scrubbed")
        rest = con.sql("SELECT text, y, query FROM taken_scrubbed WHERE NOT ok").fetchall()
        with ThreadPoolExecutor(1) as pool:
            by_python_rows = pool.submit(_skeletons, rest, lexicon, None, quiet, workers)
            _sql_skeletons(con, sql, "text", "taken_scrubbed WHERE ok")
            _sql_mapping(con, sql)
            out = by_python_rows.result()
    else:
        rows = con.sql("SELECT query, y, query FROM distinct_q").fetchall()
        _reads_plain(con, [q for q, _, _ in rows if scrub.scrub(q)[1]])
        out = _skeletons(rows, lexicon, scrub, quiet, workers)
    by_python = pa.table(out, schema=_MAPPING_SCHEMA)  # noqa: F841 - DuckDB reads the local variable by name
    con.execute("CREATE TABLE IF NOT EXISTS mapping AS SELECT * FROM by_python LIMIT 0")
    con.execute("INSERT INTO mapping SELECT * FROM by_python")
    if recalled:
        con.execute("INSERT INTO mapping SELECT * FROM recalled")
    _question_table(con)


def keep_extraction(con: Any, memo: ExtractionMemo, shapes: list[dict[str, Any]], ing: Ingested | None = None
                    ) -> None:
    """Keep the extraction of this run's questions whose shapes recur, for the next run to recall; and, with a
    line memo (`ing.lines`), the rows of the lines read anew whose shapes recur. A window of no rows fails its
    stage, so the last run's memos stay for the next."""
    if ing is not None and not ing.rows:
        return
    reps = pa.table({"rep": [s["skeleton"] for s in shapes if s["recurring"]]})  # noqa: F841
    con.execute("CREATE TABLE recurring_reps AS SELECT * FROM reps")
    recurring = """SELECT s.skeleton FROM skeletons s JOIN sk_rep k USING (sid) JOIN skeletons r ON r.sid = k.rep
                   SEMI JOIN recurring_reps t ON t.rep = r.skeleton"""
    # Both memos are caches: one that cannot be written (a full disk, a folder made read-only) costs the next run
    # time, never this run its outputs, which are written by then or beside it. The extraction memo keeps the
    # questions read from the logs this run (a line the line memo held was not read): mostly the newest day's,
    # which the next run's newest day mostly repeats. Neither keeps a question whose scrubbing read the corpus's
    # plain words (`reads_plain`): those change with the corpus, and the memos' fingerprints leave them out.
    try:
        memo.keep(con, f"""SELECT {key_sql('query')}, y, skeleton, signature, slots, constraints
                           FROM mapping SEMI JOIN ({recurring}) k USING (skeleton)
                                ANTI JOIN reads_plain USING (query)""")
    except (OSError, duckdb.Error) as exc:
        log.warning("the extraction memo was not kept: %s", exc)
    if ing is not None and ing.lines is not None:
        try:
            ing.lines.keep(con, ing.whole or [], ing.read or [], recurring)
        except (OSError, duckdb.Error) as exc:
            log.warning("the line memo was not kept (the next run reads every line): %s", exc)
            ing.lines.discard()


def _question_table(con: Any) -> None:
    """The table `q`, one row per log row: (ts, user, question_id, sid, kid, logged), and the same user's previous
    question (prev_ts, prev_sid, prev_kid), which follow-ups read (`tasks.mine.followups`). Skeletons and value sets
    are numbered in the tables `skeletons` (sid, skeleton) and `value_sets` (kid, slots, constraints, and the
    signature they make, numbered gid in `signatures`), so the passes over every row group and sort numbers, not
    text; the view `q_text` shows them as text."""
    # Only the texts of the window's recalled rows: a memo of a day beside the window names others
    con.execute("""CREATE TEMP TABLE recalled_texts AS SELECT DISTINCT skh, vsh FROM recalled_lines""")
    con.execute("""CREATE TABLE skeletons AS SELECT CAST(row_number() OVER (ORDER BY skeleton) AS INTEGER) AS sid,
                   skeleton FROM (SELECT skeleton FROM mapping
                                  UNION SELECT skeleton FROM held_sk SEMI JOIN recalled_texts USING (skh))""")
    # gid numbers the signatures in their order, so the passes over every row group by it, not by the text
    con.execute("""CREATE TABLE value_sets AS
                   SELECT CAST(row_number() OVER (ORDER BY constraints, slots, signature) AS INTEGER) AS kid, slots,
                          constraints, signature, CAST(dense_rank() OVER (ORDER BY signature) AS INTEGER) AS gid
                   FROM (
                       SELECT slots, constraints, signature FROM mapping
                       UNION SELECT slots, constraints, signature FROM held_vs SEMI JOIN recalled_texts USING (vsh))""")
    con.execute("CREATE TABLE signatures AS SELECT DISTINCT gid, signature FROM value_sets")
    # One statement per step: each distinct question's numbers, every row's, then the window. In one statement
    # DuckDB joined every row to the skeleton and value-set texts and windowed the join: 0.82 s against 0.50 s.
    con.execute("""
        CREATE TEMP TABLE numbered AS
        SELECT m.query, m.y, s.sid, v.kid
        FROM mapping m JOIN skeletons s USING (skeleton) JOIN value_sets v USING (slots, constraints, signature)""")
    # The question id is a 64-bit hash: md5 text cost 0.17 s to make and as much again to sort and write (1M rows).
    # A user is a hash of its id, as the line memo keeps it (`recalled_lines`: rows read from it, numbered here).
    con.execute("""
        CREATE TEMP TABLE joined AS
        SELECT r.ts, hash(r."user") AS "user", hash(r.ts, r."user", r.query) AS question_id, m.sid, m.kid, r.logged
        FROM rows r JOIN numbered m ON r.query = m.query AND CAST(year(r.ts) AS INTEGER) = m.y
        UNION ALL
        SELECT l.ts, l."user", l.question_id, s.sid, v.kid, l.logged
        FROM recalled_lines l JOIN (SELECT skh, sid FROM held_sk JOIN skeletons USING (skeleton)) s USING (skh)
             JOIN (SELECT vsh, kid FROM held_vs JOIN value_sets USING (slots, constraints, signature)) v USING (vsh)
        """)
    # A row of filler alone ("thanks") is no one's previous question: a follow-up after it reads the one before,
    # as `lookup` reads a history (schemas/cache.py). Rows of a user logged in the same second keep the order
    # they were logged in (`logged`: file, then line), so a follow-up logged after its question comes after it.
    con.execute("""
        CREATE TABLE q AS
        WITH filler AS (SELECT sid FROM skeletons WHERE skeleton = '')
        SELECT *, lag(ts) OVER w AS prev_ts, lag(sid) OVER w AS prev_sid, lag(kid) OVER w AS prev_kid
        FROM joined ANTI JOIN filler USING (sid) WINDOW w AS (PARTITION BY "user" ORDER BY ts, logged)
        UNION ALL
        SELECT *, NULL, NULL, NULL FROM joined SEMI JOIN filler USING (sid)""")
    con.execute("DROP TABLE joined")
    con.execute("DROP TABLE numbered")
    con.execute("DROP TABLE recalled_texts")
    con.execute("""CREATE VIEW q_text AS SELECT q.ts, q."user", q.question_id, s.skeleton, v.signature, v.slots,
                   v.constraints FROM q JOIN skeletons s USING (sid) JOIN value_sets v USING (kid)""")


_MAPPING_SCHEMA = pa.schema([(k, pa.int32() if k == "y" else pa.string()) for k in extract_rows.MAPPING_COLUMNS])


def _sql_skeletons(con: Any, sql: SqlSkeletons, col: str, source: str) -> None:
    """Skeletons and marker lists of the questions in column `col` of `source`, into `by_sql`: masked and
    skeletonised once per distinct folded text and year."""
    con.execute(f"""
        INSERT INTO by_sql
        WITH src AS (SELECT query, y, {sql.folded(col)} AS folded FROM {source}),
             masked AS (SELECT folded, y, {sql.marked('folded')} AS m FROM (SELECT DISTINCT folded, y FROM src)),
             done AS (SELECT folded, y, {sql.skeleton('m')} AS skeleton,
                             array_to_string({sql.markers('m')}, chr(2)) AS markers FROM masked)
        SELECT src.query, src.y, done.skeleton, done.markers FROM src JOIN done USING (folded, y)""")


def _reads_plain(con: Any, queries: list[str]) -> None:
    """The table `reads_plain`: the questions whose scrubbing read the corpus's plain words (`Scrubber.scrub`),
    which neither memo keeps."""
    read = pa.table({"query": queries}, schema=pa.schema([("query", pa.string())]))  # noqa: F841
    con.execute("CREATE TABLE reads_plain AS SELECT DISTINCT query FROM read")


def _sql_mapping(con: Any, sql: SqlSkeletons) -> None:
    """The table `mapping` for the questions in `by_sql`: constraint columns from Python once per distinct
    marker list."""
    lists = [r[0] for r in con.sql("SELECT DISTINCT markers FROM by_sql").fetchall()]
    cols = [extract_rows.constraint_columns(sql.constraints(m.split("\x02") if m else [])) for m in lists]
    names = ["markers", "signature", "slots", "constraints"]
    by_markers = pa.table([lists, *(list(c) for c in zip(*cols, strict=True))] if cols else [[]] * 4,  # noqa: F841
                          schema=pa.schema([(n, pa.string()) for n in names]))
    con.execute("CREATE TABLE mapping AS SELECT b.query, b.y, b.skeleton, m.signature, m.slots, m.constraints "
                "FROM by_sql b JOIN by_markers m USING (markers)")


def _skeletons(rows: extract_rows.Rows, lexicon: Lexicon, scrub: Scrubber | None, quiet: bool,
               workers: int) -> dict[str, list[Any]]:
    """Mapping columns for (text, year, query) rows in Python, over worker processes when there are many."""
    chunks = [rows[i:i + _CHUNK] for i in range(0, len(rows), _CHUNK)]
    out: dict[str, list[Any]] = {k: [] for k in extract_rows.MAPPING_COLUMNS}
    with progress("extracting constraints", len(rows), quiet=quiet) as bar:
        if workers > 1 and len(rows) >= _PARALLEL_FROM:
            ctx = multiprocessing.get_context("spawn")  # no fork of a process holding DuckDB, LanceDB, torch threads
            with ProcessPoolExecutor(min(workers, len(chunks)), mp_context=ctx,
                                     initializer=extract_rows.init_worker, initargs=(lexicon, scrub)) as pool:
                for chunk, cols in zip(chunks, pool.map(extract_rows.in_worker, chunks), strict=True):
                    _extend(out, cols)
                    bar.advance(len(chunk))
        else:
            for chunk in chunks:
                _extend(out, extract_rows.skeleton_rows(chunk, lexicon, scrub))
                bar.advance(len(chunk))
    return out


def _extend(out: dict[str, list[Any]], cols: dict[str, list[Any]]) -> None:
    for k, v in cols.items():
        out[k].extend(v)


def near_top(n: int, top: int) -> bool:
    """Whether a count `n` is near enough the top count `top` to have changed places with it by chance: within a
    tenth of it, or within two standard deviations of the difference of two such counts (Poisson: top + n).
    A name or example that was chosen last night stays while it is near the top, so a moving log window does
    not swap it for a near tie every night."""
    return n * 10 >= top * 9 or (top - n) ** 2 <= 4 * (top + n)


NEAR_TOP_SQL = "(n * 10 >= top * 9 OR (top - n) * (top - n) <= 4 * (top + n))"  # near_top(n, top) in SQL


def merge_skeletons(ing: Ingested, config: Config, embedder: Embedder | VectorStore,
                    quiet: bool = False, memory: MergeMemory | None = None) -> dict[str, str]:
    """Skeleton -> representative skeleton. Near duplicates (same placeholders and qualifiers, the same
    `roles`, similar skeleton text) merge. Similarity compares skeletons only, never questions with their
    values. Skeletons of a single user and instruction text are never embedded (neither can join a shape:
    instruction text is not published, `build_shapes`); only a skeleton with at least
    `min_users` users can seed a shape or name it (its text is what gets published): one of fewer users may
    join a shape.

    A shape is named by its most frequent member of enough users. With a `memory` of last night's merge, the
    shapes stay put as the log window moves on: last night's seeds seed again, a
    member rejoins its seed while that seeds a shape, and the member that named a shape names it again while its
    count is near the top (`near_top`). Without that memory, near-equal variants ("26 days" and "24 days")
    change places as counts change, the greedy merge groups them differently, and the shapes' ids change.
    """
    rows = ing.con.sql("""
        SELECT s.skeleton, sig.signature, g.n, g.users
        FROM (SELECT sid, gid, count(*) AS n, count(DISTINCT "user") AS users
              FROM q JOIN (SELECT kid, gid FROM value_sets) v USING (kid) GROUP BY ALL
              HAVING count(DISTINCT "user") >= 2) g
             JOIN skeletons s USING (sid) JOIN signatures sig USING (gid)
        WHERE s.skeleton <> ''  -- filler only: a shape of none (`build_shapes`)
        ORDER BY n DESC, skeleton LIMIT 50000""").fetchall()
    rows = [r for r in rows if not is_instruction(r[0])]  # alone, never embedded: `build_shapes` withholds it
    vecs = embedder.encode([r[0] for r in rows], label="embedding skeletons", quiet=quiet)
    keys = [text_key(r[0]) for r in rows] if memory else []
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    source_words = frozenset(w.lower() for w in config.mining.source_words)
    for i, row in enumerate(rows):
        groups[(row[1], roles(row[0], source_words))].append(i)
    rep_of: dict[str, str] = {}
    seeds: dict[bytes, bytes] = {}
    for members in groups.values():
        last: dict[int, int] = {}  # member -> the member that seeded its shape last night
        if memory:
            at = {keys[i]: i for i in members}
            last = {i: at[k] for i in members if (k := memory.seed_of(keys[i])) is not None and k in at}
        seed_of = _seed(members, rows, vecs, config, last)
        for i in members:
            rep_of.setdefault(rows[i][0], rows[i][0])
        for seed, cluster in _clusters(seed_of).items():
            name = _name(cluster, rows, config.mining.min_users, memory.named_a_shape if memory else None)
            for i in cluster:  # the name keeps its mapping: a skeleton in two groups goes where the first put it
                if i != name:
                    rep_of[rows[i][0]] = rep_of[rows[name][0]]
            if memory and rows[seed][3] >= config.mining.min_users:  # not a lone skeleton of too few users
                seeds.update((keys[i], keys[seed]) for i in cluster)
    if memory:
        memory.remember_seeds(seeds)
    return rep_of


_TOKEN = re.compile(r"\{[a-z_]+\}|[^\W_]+")


def roles(skeleton: str, source_words: frozenset[str]) -> str:
    """Which of a skeleton's repeated placeholders a source word comes just before (within two words), when that
    is not the first of its kind: "office_2" for "to {office} from {office}"; "" for "from {office} to {office}",
    which reads in the order "between {office} and {office}" does. Skeletons merge only within one pattern: their
    slots are filled in order, and the reverse trip is another question."""
    if skeleton.count("{") < 2 or not any(w in skeleton for w in source_words):
        return ""  # most skeletons: no repeated placeholder or no source word
    tokens = _TOKEN.findall(skeleton.lower())
    seen: dict[str, int] = defaultdict(int)
    marked = []
    for at, token in enumerate(tokens):
        if token.startswith("{"):
            seen[token] += 1
            if source_words.intersection(tokens[max(0, at - 2):at]):
                marked.append((token, seen[token]))
    repeated = [(t, n) for t, n in marked if seen[t] > 1]
    return ",".join(f"{t[1:-1]}_{n}" for t, n in repeated) if any(n > 1 for _, n in repeated) else ""


def _seed(members: list[int], rows: list[tuple[Any, ...]], vecs: np.ndarray, config: Config,
          last: dict[int, int]) -> dict[int, int]:
    """Member -> the member that seeds its shape, for one group of skeletons with the same placeholders (`rows`
    most frequent first). Greedy: in turn, each skeleton joins the most similar seed at or above the merge
    threshold, or seeds a shape itself if it has enough users. Last night's seeds (`last[i] == i`) go first, and
    a member whose seed of last night seeds again rejoins it while still similar enough."""
    min_users, threshold = config.mining.min_users, config.mining.merge_similarity
    eligible = [i for i in members if rows[i][3] >= min_users]
    first = [i for i in eligible if last.get(i) == i]
    order = first + [i for i in eligible if last.get(i) != i] + [i for i in members if rows[i][3] < min_users]
    seed_of: dict[int, int] = {}
    seeds: list[int] = []  # members of enough users that seed a shape, in order
    seed_vecs = np.empty((len(eligible), vecs.shape[1]), dtype=vecs.dtype)  # seeds' vectors, filled in order
    for i in order:
        if ((j := last.get(i)) is not None and j != i and seed_of.get(j) == j and rows[j][3] >= min_users
                and vecs[i] @ vecs[j] >= threshold):  # j seeds tonight; the threshold may have changed since
            seed_of[i] = j
            continue
        if seeds:
            sims = seed_vecs[:len(seeds)] @ vecs[i]
            k = int(np.argmax(sims))
            if sims[k] >= threshold:
                seed_of[i] = seeds[k]
                continue
        seed_of[i] = i  # it seeds a shape, or, of too few users, stands alone (and never recurs)
        if rows[i][3] >= min_users:
            seed_vecs[len(seeds)] = vecs[i]
            seeds.append(i)
    return seed_of


def _clusters(seed_of: dict[int, int]) -> dict[int, list[int]]:
    """Seed -> its members (itself among them), each list in row order (most frequent first)."""
    out: dict[int, list[int]] = defaultdict(list)
    for i in sorted(seed_of):
        out[seed_of[i]].append(i)
    return out


def _name(cluster: list[int], rows: list[tuple[Any, ...]], min_users: int,
          named: Callable[[str], bool] | None) -> int:
    """The member that names a shape: its most frequent member of enough users, or the one of them that named
    it last night (`named`) while that one's count is near the top."""
    eligible = [i for i in cluster if rows[i][3] >= min_users] or cluster  # a lone skeleton names its own shape
    if named is not None:
        for i in eligible:
            if named(rows[i][0]) and near_top(rows[i][2], rows[eligible[0]][2]):
                return i
    return eligible[0]


def build_shapes(ing: Ingested, config: Config, rep_of: dict[str, str]) -> list[dict[str, Any]]:
    """Every shape (skeletons merged by `rep_of`) with its counts; `recurring` if it has enough questions and
    users, unless its skeleton is instruction text (`schemas.instruction`): that shape is `withheld`, its text
    never published, and only counted (`withheld_counts`)."""
    con = ing.con
    reps = pa.table({"skeleton": list(rep_of), "rep": list(rep_of.values())})  # noqa: F841
    # sid -> the sid of its shape's representative (itself when it merged with none)
    con.execute("""CREATE TABLE sk_rep AS SELECT s.sid, coalesce(rs.sid, s.sid) AS rep
                   FROM skeletons s LEFT JOIN reps r USING (skeleton) LEFT JOIN skeletons rs ON rs.skeleton = r.rep""")
    m = config.mining
    shapes = con.sql(f"""
        WITH qr AS (SELECT q."user", q.ts, q.sid, v.gid, q.kid, k.rep
                    FROM q JOIN sk_rep k USING (sid) JOIN (SELECT kid, gid FROM value_sets) v USING (kid)),
        member AS (SELECT rep, sid, count(DISTINCT "user") AS users, count(*) AS n FROM qr GROUP BY ALL),
        top_slots AS (  -- the slot sets near the most frequent one's count (near_top), most frequent first
            SELECT rep, list(slots ORDER BY n DESC, slots) FILTER (WHERE {NEAR_TOP_SQL}) AS example_slots FROM (
                SELECT *, max(n) OVER (PARTITION BY rep) AS top FROM (
                    SELECT rep, v.slots, sum(n) AS n FROM (SELECT rep, kid, count(*) AS n FROM qr GROUP BY ALL)
                         JOIN value_sets v USING (kid) GROUP BY ALL)) GROUP BY rep),
        agg AS (SELECT rep, min(gid) AS gid, count(*) AS count, count(DISTINCT "user") AS users,
                       min(ts) AS first_seen, max(ts) AS last_seen FROM qr GROUP BY rep)
        SELECT s.skeleton, sig.signature, agg.count, agg.users, agg.first_seen, agg.last_seen,
               (SELECT list(ms.skeleton ORDER BY member.n DESC, ms.skeleton)
                FROM member JOIN skeletons ms USING (sid)
                WHERE member.rep = agg.rep AND member.users >= {m.min_users}) AS examples,
               (SELECT list(ms.skeleton) FROM member JOIN skeletons ms USING (sid)
                WHERE member.rep = agg.rep AND member.users < {m.min_users}) AS rare,
               t.example_slots
        FROM agg JOIN skeletons s ON s.sid = agg.rep JOIN top_slots t ON t.rep = agg.rep
             JOIN signatures sig ON sig.gid = agg.gid
        WHERE s.skeleton <> ''  -- only greetings or filler ("thanks"): no shape, as lookup answers them
        ORDER BY agg.count DESC, s.skeleton""").fetchall()
    cols = ["skeleton", "signature", "count", "users", "first_seen", "last_seen", "examples", "rare",
            "example_slots"]
    out = []
    for row in shapes:
        rec = dict(zip(cols, row, strict=True))
        rec["shape_id"] = shape_id(rec["skeleton"])
        rec["member_hashes"] = sorted(member_hash(sk) for sk in rec.pop("rare") or [])  # the texts go no further
        rec["recurring"] = rec["count"] >= m.min_count and rec["users"] >= m.min_users
        # instruction text merged with no other skeleton (`merge_skeletons`): the shape is it alone
        rec["withheld"] = rec["recurring"] and is_instruction(rec["skeleton"])
        rec["recurring"] = rec["recurring"] and not rec["withheld"]
        out.append(rec)
    return out


def classify_shapes(shapes: list[dict[str, Any]], config: Config, best_scores: Any, encode: Any,
                    known: Callable[[str], bool] = lambda text: False) -> None:
    """Type and reason for each recurring shape. Null shapes are found by `best_scores(vectors)`, each example's
    best chunk score, over the examples embedded in one batch by `encode(texts)`.

    A shape's example is the question of its most frequent slot set, or of one whose count is near the top
    (`near_top`) and whose example is `known` (the shape's example last night): as the log window moves on, near
    ties change places every night, and the example, its classification and its embedding stay put instead of
    changing with them."""
    recurring = [s for s in shapes if s["recurring"]]
    for s in recurring:
        # filled one by one, up to the first that was last night's example (most often the first)
        candidates = (fill_skeleton(s["skeleton"], json.loads(slots or "{}")) for slots in s["example_slots"])
        first = next(candidates)
        s["example"] = first if known(first) else next((c for c in candidates if known(c)), first)
    scores = best_scores(encode([s["example"] for s in recurring])) if recurring else []
    for s, score in zip(recurring, scores, strict=True):
        s["type"], s["reason"] = classify(s["skeleton"], s["signature"], config, score)


def sort_questions(con: Any) -> None:
    """The table `q_out`: one row per question in the order of questions.parquet (time, then question id), as
    numbers (skeleton and value set), its follow-up columns still empty, for `write_questions` to fill. `mine`
    sorts it on a second cursor while the later phases run in Python; made here when it is not there yet."""
    con.execute("""
        CREATE TABLE IF NOT EXISTS q_out AS
        SELECT question_id, sid, ts, kid,
               CAST(NULL AS BOOLEAN) AS followup, CAST(NULL AS VARCHAR) AS resolved_question,
               CAST(NULL AS VARCHAR) AS resolved_shape_id, CAST(NULL AS VARCHAR) AS resolved_key,
               CAST(NULL AS VARCHAR) AS followup_reason
        FROM q ORDER BY ts, question_id""")


def write_outputs(ing: Ingested, shapes: list[dict[str, Any]], staging: Path) -> None:
    """shapes.parquet (recurring shapes only, with text), questions.parquet, quarantine.parquet."""
    write_questions(ing.con, ing, shapes, staging)
    write_shapes(shapes, staging)


def write_shapes(shapes: list[dict[str, Any]], staging: Path) -> None:
    """shapes.parquet: the recurring shapes, classified (`classify_shapes`)."""
    recurring = [s for s in shapes if s["recurring"]]
    schema = SHAPES.schema
    table = pa.Table.from_pylist([{k: s.get(k) for k in schema.names} for s in recurring], schema)
    pq.write_table(table, staging / SHAPES.name)


def write_questions(con: Any, ing: Ingested, shapes: list[dict[str, Any]], staging: Path) -> None:
    """questions.parquet and quarantine.parquet, on `con` (the session's connection or a cursor of it); needs
    the shapes' ids and whether they recur, and the table `followups` (`tasks.mine.followups.link`), not their types."""
    recurring = [s for s in shapes if s["recurring"]]
    ids = pa.table({"rep": [s["skeleton"] for s in recurring],  # noqa: F841
                    "shape_id": [s["shape_id"] for s in recurring]},
                   schema=pa.schema([("rep", pa.string()), ("shape_id", pa.string())]))  # typed when none recurs
    # Texts by number, as lists indexed by sid and kid (both number from 1 without gaps): a lookup in the COPY's
    # projection keeps the rows' order, which a join would not, and costs less than sorting the texts along.
    con.execute("""CREATE TABLE texts AS SELECT
        (SELECT list(ids.shape_id ORDER BY k.sid) FROM sk_rep k LEFT JOIN skeletons s ON s.sid = k.rep
                LEFT JOIN ids ON ids.rep = s.skeleton) AS shape_id,
        (SELECT list(slots ORDER BY kid) FROM value_sets) AS slots,
        (SELECT list(constraints ORDER BY kid) FROM value_sets) AS constraints""")
    con.execute("""CREATE TABLE IF NOT EXISTS followups (question_id UBIGINT, followup BOOLEAN,
        resolved_question VARCHAR, resolved_shape_id VARCHAR, resolved_key VARCHAR, followup_reason VARCHAR)""")
    # The follow-up rows are filled where they stand (an UPDATE keeps the order of a table's rows) and written in
    # that order: a COPY from one table keeps it, so no second sort. A question id has at most one follow-up row.
    sort_questions(con)
    con.execute("""UPDATE q_out SET followup = f.followup, resolved_question = f.resolved_question,
                   resolved_shape_id = f.resolved_shape_id, resolved_key = f.resolved_key,
                   followup_reason = f.followup_reason
                   FROM followups f WHERE f.question_id = q_out.question_id""")
    con.execute(f"""
        COPY (SELECT question_id, (SELECT shape_id FROM texts)[sid] AS shape_id, ts,
                     (SELECT slots FROM texts)[kid] AS slots, (SELECT constraints FROM texts)[kid] AS constraints,
                     coalesce(followup, false) AS followup, resolved_question, resolved_shape_id, resolved_key,
                     followup_reason FROM q_out)
        TO {sql_string(staging / QUESTIONS.name)} (FORMAT parquet)""")
    check_written(staging / QUESTIONS.name, QUESTIONS.schema)
    ing.finish()  # the quarantine is complete
    con.execute("COPY (SELECT * FROM quarantine ORDER BY file, line, reason, raw) "
                f"TO {sql_string(staging / QUARANTINE.name)} (FORMAT parquet)")
    check_written(staging / QUARANTINE.name, QUARANTINE.schema)


def withheld_counts(con: Any, shapes: list[dict[str, Any]]) -> dict[str, int]:
    """The shapes withheld as instruction text (`build_shapes`): how many, their questions, their distinct users."""
    skeletons = [s["skeleton"] for s in shapes if s.get("withheld")]
    instruction_sk = pa.table({"skeleton": skeletons}, schema=pa.schema([("skeleton", pa.string())]))  # noqa: F841
    questions, users = con.sql("""SELECT count(*), count(DISTINCT q."user") FROM q JOIN skeletons s USING (sid)
                                  SEMI JOIN instruction_sk USING (skeleton)""").fetchall()[0]
    return dict(zip(WITHHELD_COUNTS, (len(skeletons), int(questions), int(users)), strict=True))


def summarize(ing: Ingested, shapes: list[dict[str, Any]]) -> MineResult:
    recurring = [s for s in shapes if s["recurring"]]
    withheld = withheld_counts(ing.con, shapes)
    by_type: dict[str, int] = defaultdict(int)
    for s in recurring:
        by_type[s["type"]] += 1
    skeletons = ing.con.sql("SELECT count(*) FROM skeletons").fetchall()[0][0]  # each one is some row's
    ing.finish()
    return MineResult(ing.rows, ing.quarantined, int(skeletons), len(shapes), len(recurring),
                      sum(s["count"] for s in recurring), dict(sorted(by_type.items())), withheld,
                      since=ing.since.isoformat() if ing.since else None,
                      until=ing.until.isoformat() if ing.until else None, unreadable_files=ing.unreadable or [],
                      skipped_files=ing.skipped or [], outside_window=ing.outside or {})
