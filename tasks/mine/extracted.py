"""Extracted questions kept between runs, so a nightly run scrubs and skeletonises only the questions it has not
seen before.

A moving log window shares all but a day with last night's, and so most of its distinct questions. The memo
holds, for each distinct (question, year) of the last run whose shape recurred, its skeleton, signature, slots and
constraints (rows of the table `mapping` of `tasks.mine.mining`), keyed by the MD5 of the raw question: no raw
question is written to disk (a key can only confirm a question already guessed whole), what
is stored is as scrubbed as questions.parquet, and, as there, nothing of a shape that does not recur. It is valid
for one extraction only: its file name carries a fingerprint of the lexicon, the scrubber, the DuckDB version and
the source of every module the extraction runs, so a changed lexicon, config or code starts an empty memo. Losing
it costs time, nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from schemas.atomic import replace_atomically
from schemas.extract import Lexicon
from schemas.pii import Scrubber
from schemas.sql import sql_files, sql_string
from tasks.ingest.lines import extraction_fingerprint


def key_sql(column: str) -> str:
    """The memo's key of the raw question in `column`, in DuckDB SQL: its MD5 as two 64-bit halves (a 128-bit
    number would be written to Parquet as a DOUBLE, which keeps 53 bits of it)."""
    return f"md5_number_lower({column}) AS key_lo, md5_number_upper({column}) AS key_hi"


class ExtractionMemo:
    """The memo in `folder` (None: no memo) for one lexicon and scrubber."""

    def __init__(self, folder: Path | None, lexicon: Lexicon, scrub: Scrubber) -> None:
        name = f"extracted-{extraction_fingerprint(lexicon, scrub)}.parquet"
        self.path = folder / name if folder is not None else None

    def recall(self, con: Any, questions: str, into: str) -> int:
        """Create table `into` with the mapping rows of the (query, y) rows of table `questions` extracted by the
        last run; the number of rows recalled. An unreadable memo recalls nothing (it is rewritten by `keep`)."""
        con.execute(f"CREATE TABLE {into} (query VARCHAR, y INTEGER, skeleton VARCHAR, signature VARCHAR, "
                    "slots VARCHAR, constraints VARCHAR)")
        if self.path is None or not self.path.exists():
            return 0
        try:
            con.execute(f"""INSERT INTO {into}
                SELECT d.query, d.y, m.skeleton, m.signature, m.slots, m.constraints
                FROM {questions} d JOIN read_parquet({sql_files([str(self.path)])}) m
                     ON m.key_lo = md5_number_lower(d.query) AND m.key_hi = md5_number_upper(d.query)
                        AND m.y = d.y""")
        except duckdb.Error:
            con.execute(f"DELETE FROM {into}")
            return 0
        return int(con.sql(f"SELECT count(*) FROM {into}").fetchall()[0][0])

    def keep(self, con: Any, rows: str) -> None:
        """Write the rows the query `rows` selects (key_lo, key_hi: `key_sql` of the raw question; y, skeleton,
        signature, slots, constraints), one per key and year, as the memo for the next run (atomically: a crash
        leaves the old memo or the new one), and delete the memos of other fingerprints."""
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(self.path.with_suffix(".tmp.parquet"), self.path, lambda tmp: con.execute(f"""
            COPY (SELECT key_lo, key_hi, y, any_value(skeleton) AS skeleton, any_value(signature) AS signature,
                         any_value(slots) AS slots, any_value(constraints) AS constraints
                  FROM ({rows}) GROUP BY key_lo, key_hi, y)
            TO {sql_string(tmp)} (FORMAT parquet)"""))
        for old in self.path.parent.glob("extracted-*.parquet"):
            if old != self.path:
                old.unlink(missing_ok=True)
