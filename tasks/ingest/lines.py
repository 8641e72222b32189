"""Log lines read in an earlier run, kept per log file, so a nightly run parses and extracts only the lines it has
not seen before.

A nightly window shares all but a day with last night's. For each JSONL log file of one of the window's own days,
the memo holds the rows of its lines whose shape recurred, keyed by DuckDB's 64-bit hash of the file's path and the
line, beside the line's length in bytes: the row as mining made it (UTC time, a hash of the user, question id, year,
and 64 bits of the MD5 of its skeleton and of its value set, whose texts the file holds once each). A line's row
depends only on its text and on the extraction, and a memo is named for its file's identity (size, modification and
change times, inode), so the memo of an unchanged file is that file's rows; its other lines (of shapes that did not
recur, quarantined) are read as usual, and a changed file is read whole. Nor does it hold a row that shares its
user and second with another question of its file: such rows are read anew, in the order they were logged. As in
the extraction memo (`tasks.mine.extracted`), no raw question is kept, and nothing of a shape that did not recur
when the memo was written; a user is kept as DuckDB's unkeyed hash of the log's id, which confirms an id already
guessed, as the logs themselves name every id. The memo of each fingerprint (the extraction's, the log reader's code and
`mining.max_query_chars`) is a folder of its own; a changed config or code starts an empty one. Losing it costs
time, nothing else.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from schemas.atomic import replace_atomically
from schemas.digest import fingerprint, source_digest, text_digest
from schemas.extract import Lexicon
from schemas.pii import Scrubber
from schemas.sql import sql_string

ROW = ("key", "len", "t", "uid", "question_id", "y", "skh", "vsh")  # a line's row; then its texts by hash
TEXTS = ("skeleton", "slots", "constraints", "signature")
# the modules whose code reads a log line into its row: a memo made by other code starts anew
# the modules whose code extracts a question from a line's text (the SQL passes are in `tasks.mine.mining`)
EXTRACTION_MODULES = ("schemas.constraint", "schemas.entity", "schemas.extract", "schemas.extract_sql", "schemas.pii",
                      "schemas.text", "tasks.mine.extract_rows", "tasks.mine.mining")
READER_MODULES = tuple(f"tasks.ingest.{m}" for m in ("files", "sql", "checks", "numbering", "stage", "lines"))
REFRESH_SHARE = 0.1  # a file's memo is written again when its rows read anew that recur reach this share of it


def extraction_fingerprint(lexicon: Lexicon, scrub: Scrubber) -> str:
    """What the extraction of a question depends on besides the question and its year: the line memo's rows and
    the extraction memo (`tasks.mine.extracted`) are valid for one such fingerprint only."""
    # The lexicon's digest holds its forms, facet kinds and fillers.
    body = {"lexicon": lexicon.digest(), "scrubber": scrub.digest(), "duckdb": duckdb.__version__,
            "code": [source_digest(m) for m in EXTRACTION_MODULES]}
    return fingerprint(body, sort_keys=False)


class LineMemo:
    """The line memo in `folder` (None: no memo) for one extraction. A log file's memo is named for the file's
    path and identity (`_identity`) when it was read, and only a file unchanged since then recalls from it."""

    def __init__(self, folder: Path | None, lexicon: Lexicon, scrub: Scrubber, max_query_chars: int) -> None:
        body = [extraction_fingerprint(lexicon, scrub), *(source_digest(m) for m in READER_MODULES), max_query_chars]
        name = "lines-" + fingerprint(body, sort_keys=False)
        self.dir = folder / name if folder is not None else None
        self.identity: dict[str, str] = {}  # log file -> its `_identity` before this run read it
        self.trusted: dict[str, Path] = {}  # log file -> the memo this run recalls its lines from
        self.recalled: dict[str, int] = {}  # log file -> rows recalled from its memo by this run

    def _path(self, file: str, identity: str) -> Path:
        assert self.dir is not None
        return self.dir / f"{_stem(file)}-{identity}.parquet"

    def look(self, files: list[str]) -> list[str]:
        """Note each log file's identity before it is read; the memos of those unchanged since theirs was made."""
        if self.dir is None:
            return []
        for file in files:
            identity = _identity(file)
            if identity is None:
                continue
            self.identity[file] = identity
            path = self._path(file, identity)
            if path.exists():
                self.trusted[file] = path
        return [str(p) for p in self.trusted.values()]

    def changed(self) -> bool:
        """Whether a file whose memo this run trusts has changed since `look` (while it was being read)."""
        return any(_identity(file) != self.identity.get(file) for file in self.trusted)

    def count(self, con: Any, held: str) -> None:
        """How many rows each log file recalled, from the table `held` of memo rows (with their memo's filename)."""
        of = {str(path): file for file, path in self.trusted.items()}
        self.recalled = {of[m]: int(n) for m, n in con.sql(f"SELECT filename, count(*) FROM {held} GROUP BY ALL")
                         .fetchall() if m in of}

    def discard(self) -> None:
        """Delete this fingerprint's memo (one of its files could not be read or trusted)."""
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.trusted, self.recalled = {}, {}

    def keep(self, con: Any, files: list[str], read: list[str], recurring: str) -> list[str]:
        """Write the memo of each of `files` (log files of the window's own days; their rows outside the window
        are not kept) that has none, or whose rows read anew that recur (`rows` joined to `mapping`; `recurring`
        selects the skeletons of recurring shapes) reach `REFRESH_SHARE` of its recalled rows; each atomically.
        Then delete the memos of the log files this run did not `read`, of their earlier contents, and of other
        fingerprints. Returns the log files whose memo was written."""
        if self.dir is None:
            return []
        # Only files that may be written: those with no trusted memo, and those with enough rows read anew
        parsed = dict(con.sql("SELECT filename, count(*) FROM rows GROUP BY ALL").fetchall())
        files = [f for f in files if f not in self.trusted
                 or parsed.get(f, 0) >= max(1, REFRESH_SHARE * self.recalled.get(f, 0))]
        wanted = pa.table({"filename": files}, schema=pa.schema([("filename", pa.string())]))  # noqa: F841
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE fresh_lines AS
            SELECT r.filename, r.key, r.len, r.ts AS t, hash(r."user") AS uid,
                   hash(r.ts, r."user", r.query) AS question_id, m.y, m.skeleton, m.signature, m.slots,
                   m.constraints
            FROM rows r SEMI JOIN wanted USING (filename)
                 JOIN mapping m ON r.query = m.query AND CAST(year(r.ts) AS INTEGER) = m.y
                 SEMI JOIN ({recurring}) k USING (skeleton)
                 ANTI JOIN reads_plain p ON p.query = r.query""")
        # DuckDB's 64-bit hash is fast, not collision-proof: a line whose key another line of its file shares (one
        # that reads as another question, or a quarantined one) is kept for neither, or the other would be taken
        # for it. Every line of a file without a trusted memo is in `staged` (a trusted memo's were checked so).
        con.execute("""
            CREATE OR REPLACE TEMP TABLE shared_keys AS
            SELECT filename, key, len FROM staged SEMI JOIN wanted USING (filename)
            GROUP BY ALL HAVING count(DISTINCT CASE WHEN reason IS NULL THEN hash(t, "user", query) END) > 1
                                OR (bool_or(reason IS NULL) AND bool_or(reason IS NOT NULL))""")
        con.execute("DELETE FROM fresh_lines f USING shared_keys k "
                    "WHERE f.filename = k.filename AND f.key = k.key AND f.len = k.len")
        # A row recalled from the memo has its file's place, not its line's (`tasks.ingest.stage.read_held`): a row that
        # shares its user and second with another question of its file is read anew each run, so the two keep
        # the order they were logged in. Every row of such a second is in `rows` (none was kept for the memo).
        con.execute("""
            DELETE FROM fresh_lines f USING (SELECT filename, hash("user") AS uid, ts FROM rows SEMI JOIN wanted
                                             USING (filename) GROUP BY ALL HAVING min(query) <> max(query)) s
            WHERE f.filename = s.filename AND f.uid = s.uid AND f.t = s.ts""")
        counts = dict(con.sql("SELECT filename, count(*) FROM fresh_lines GROUP BY ALL").fetchall())
        written = []
        self.dir.mkdir(parents=True, exist_ok=True)
        for file in files:
            new, old, trusted = int(counts.get(file, 0)), self.recalled.get(file, 0), self.trusted.get(file)
            if file not in self.identity or new == 0 or (trusted is not None and new < REFRESH_SHARE * old):
                continue
            target = self._path(file, self.identity[file])
            kept = (f""" UNION ALL SELECT {', '.join('h.' + c for c in ROW)}, {', '.join(TEXTS)}
                         FROM held h JOIN held_sk USING (skh) JOIN held_vs USING (vsh)
                         SEMI JOIN ({recurring}) k USING (skeleton)
                         WHERE h.filename = {sql_string(str(trusted))}""" if trusted is not None else "")
            # A row per line of the file (a line logged twice, twice); a key whose rows differ (a hash collision)
            # is kept for none of them, so those lines are read anew. Then each skeleton and value set once, by
            # its MD5 (`kind` "sk", "vs"): the line rows hold numbers only, which the next run reads fast.
            nulls = ", ".join(f"NULL AS {c}" for c in TEXTS)
            def copy(tmp: Path, file: str = file, kept: str = kept, nulls: str = nulls) -> None:
                con.execute(f"""
                COPY (WITH lines AS (
                          SELECT * FROM (SELECT {', '.join(ROW[:-2])}, md5_number_lower(skeleton) AS skh,
                                                md5_number_lower(concat_ws(chr(31), slots, constraints, signature))
                                                AS vsh,
                                                {', '.join(TEXTS)}
                                         FROM fresh_lines WHERE filename = {sql_string(file)}
                                         {kept})
                          WINDOW w AS (PARTITION BY key, len)
                          QUALIFY min(question_id) OVER w = max(question_id) OVER w)
                      SELECT 'row' AS kind, {', '.join(ROW)}, {nulls} FROM lines
                      UNION ALL SELECT DISTINCT 'sk', {', '.join('NULL' for _ in ROW[:-2])}, skh, NULL, skeleton,
                                                NULL, NULL, NULL FROM lines
                      UNION ALL SELECT DISTINCT 'vs', {', '.join('NULL' for _ in ROW[:-1])}, vsh, NULL, slots,
                                                constraints, signature FROM lines)
                TO {sql_string(str(tmp))} (FORMAT parquet)""")

            replace_atomically(target.with_suffix(".tmp.parquet"), target, copy)
            written.append(file)
        con.execute("DROP TABLE fresh_lines")
        con.execute("DROP TABLE shared_keys")
        self._prune(read)
        return written

    def _prune(self, files: list[str]) -> None:
        assert self.dir is not None
        keep = {self._path(f, self.identity[f]).name for f in files if f in self.identity}
        for old in self.dir.glob("*.parquet"):
            if old.name not in keep:
                old.unlink(missing_ok=True)
        for other in self.dir.parent.glob("lines-*"):
            if other != self.dir and other.is_dir():
                shutil.rmtree(other, ignore_errors=True)


def _identity(file: str) -> str | None:
    """A log file's size, modification and change times, and inode: a write changes the change time, which no
    call can set back, so a file with the same identity holds the same lines."""
    try:
        st = os.stat(file)
    except OSError:
        return None
    return f"{st.st_size}-{st.st_mtime_ns}-{st.st_ctime_ns}-{st.st_ino}"


def _stem(file: str) -> str:
    return text_digest(file, 24)
