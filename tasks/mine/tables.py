"""The DuckDB tables the mining stage makes on ingest's connection (`Ingested.con`), declared once: names and
columns, by the module that makes them. It reads ingest's outputs (`tasks.ingest.tables.OUTPUTS`). The line memo's
`keep` (ingest's) reads `mapping`. `tests/test_contracts.py` holds each to what DuckDB reports after a real run.
Scratch tables dropped where they are made (`numbered`, `joined`, `recalled_texts`) are not listed."""

from __future__ import annotations

from tasks.ingest.tables import Table

# mining.extract_distinct: the window's distinct questions, extracted in SQL where it is safe, else in Python
WINDOW_Q = Table("window_q", ("query", "y"), "each distinct (question, year) of the rows read")
DISTINCT_Q = Table("distinct_q", ("query", "y"), "those the extraction memo did not hold")
BY_SQL = Table("by_sql", ("query", "y", "skeleton", "markers"), "skeletons made in SQL (`schemas.extract_sql`)")
TAKEN = Table("taken", ("query", "y", "text", "ok"), "questions with their text for the SQL path, `ok` if it may")
TAKEN_SCRUBBED = Table("taken_scrubbed", ("query", "y", "text", "ok"), "the same, once scrubbed in Python")
READS_PLAIN = Table("reads_plain", ("query",), "questions whose scrubbing read the corpus's plain words")
RECALLED = Table("recalled", ("query", "y", "skeleton", "signature", "slots", "constraints"),
                 "the extraction memo's rows for this window (`tasks.mine.extracted`)")
MAPPING = Table("mapping", ("query", "y", "skeleton", "signature", "slots", "constraints"),
                "every distinct (question, year) with its skeleton, signature, slots and constraints")
# mining: numbers for the passes over every row
SKELETONS = Table("skeletons", ("sid", "skeleton"), "each skeleton, numbered from 1 without gaps")
VALUE_SETS = Table("value_sets", ("kid", "slots", "constraints", "signature", "gid"),
                   "each value set, numbered from 1 without gaps; `gid` numbers its signature")
SIGNATURES = Table("signatures", ("gid", "signature"), "each signature")
Q = Table("q", ("ts", "user", "question_id", "sid", "kid", "logged", "prev_ts", "prev_sid", "prev_kid"),
          "every row of the window by number, with the same user's previous row")
Q_TEXT = Table("q_text", ("ts", "user", "question_id", "skeleton", "signature", "slots", "constraints"),
               "a view of `q` with its texts")
RECURRING_REPS = Table("recurring_reps", ("rep",), "the skeletons that name a recurring shape")
SK_REP = Table("sk_rep", ("sid", "rep"), "each skeleton's shape, by the skeleton that names it")
Q_OUT = Table("q_out", ("question_id", "sid", "ts", "kid", "followup", "resolved_question", "resolved_shape_id",
                        "resolved_key", "followup_reason"), "every row in the order of questions.parquet")
TEXTS = Table("texts", ("shape_id", "slots", "constraints"), "the texts `q_out`'s numbers stand for, as lists")
# followups
TURNS = Table("turns", ("question_id", "user", "ts", "logged", "sid", "kid", "near", "prev_sid", "prev_kid"),
              "a view of each row beside the same user's previous one, `near` within `mining.followup_seconds`")
FU_TURNS = Table("fu_turns", ("question_id", "user", "skeleton", "constraints", "near", "prev_skeleton",
                              "prev_constraints", "after_followup"), "the turns of follow-up skeletons")
CHAIN_USERS = Table("chain_users", ("user",), "users with a follow-up right after another, replayed row by row")
FOLLOWUPS = Table("followups", ("question_id", "followup", "resolved_question", "resolved_shape_id", "resolved_key",
                                "followup_reason"), "each follow-up row resolved against its user's previous question")

MADE = (WINDOW_Q, DISTINCT_Q, BY_SQL, TAKEN, TAKEN_SCRUBBED, READS_PLAIN, RECALLED, MAPPING, SKELETONS, VALUE_SETS,
        SIGNATURES, Q, Q_TEXT, RECURRING_REPS, SK_REP, Q_OUT, TEXTS, TURNS, FU_TURNS, CHAIN_USERS, FOLLOWUPS)
