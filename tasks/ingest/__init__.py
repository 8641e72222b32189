"""Ingest: read a window of query logs (JSONL, Parquet or CSV, optionally gzip and hive-partitioned by date) into
one DuckDB connection, bad rows to a quarantine.

Reads: the log files under a path (`files`), checked before and after DuckDB reads them (`checks`), with the SQL
of `sql`; a line memo of earlier runs (`lines`, under `<out>/vectors`) for the lines it holds.
Writes: the tables of `tables.OUTPUTS` on `Ingested.con` (`rows`, `recalled_lines`, `held_sk`, `held_vs`,
`quarantine`), which the mining stage reads; `numbering` gives each quarantined line its number in its file.
Its own working tables (`staged`, `held`, the views `src` and `split`) are read by no other stage, but for the
line memo's `keep`, which the mining stage calls once it knows which shapes recur (it reads `rows`, `staged`,
`held` and the mining stage's `mapping`).

Entry point: `stage.ingest` (and `checks.check_window`, which refuses a bad window before any stage runs);
`survey.survey_logs` reads a log's columns, rows, users and time span for `planbake init`.
"""
