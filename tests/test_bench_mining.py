"""The mining benchmark's generated log: kept between runs of the same parameters, never mixed with another."""

from __future__ import annotations

from pathlib import Path

from benchmarks.bench_mining import generate_logs


def test_a_kept_log_is_reused_only_for_the_same_parameters(tmp_path: Path) -> None:
    first = generate_logs(3_000, tmp_path, extra_days=2)
    assert not first["reused"] and first["days"] == first["files"] == 9
    again = generate_logs(3_000, tmp_path, extra_days=2)
    assert again == {**first, "generate_seconds": 0.0, "reused": True}
    # Fewer days: the log is made anew, and the two days the earlier one had beyond it are gone.
    shorter = generate_logs(3_000, tmp_path, extra_days=0)
    assert not shorter["reused"] and shorter["days"] == shorter["files"] == 7
    folders = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert folders == [f"date={d}" for d in sorted(shorter["rows_per_day"])]
    assert shorter["lines"] < first["lines"]


def test_the_plain_copy_holds_the_same_rows_and_follows_the_log(tmp_path: Path) -> None:
    """`--plain` scans and mines an uncompressed copy: the same rows in the same day folders, made again when the
    log is generated anew."""
    import duckdb

    from benchmarks.bench_mining import plain_copy, scan_sql

    generate_logs(3_000, tmp_path)
    logs = tmp_path / "logs"
    plain = plain_copy(logs)
    assert sorted(p.relative_to(plain).as_posix() for p in plain.rglob("*.jsonl")) == sorted(
        p.relative_to(logs).as_posix().removesuffix(".gz") for p in logs.rglob("*.jsonl.gz"))
    assert duckdb.sql(scan_sql(plain)).fetchall() == duckdb.sql(scan_sql(logs)).fetchall()
    generate_logs(2_000, tmp_path)
    assert duckdb.sql(scan_sql(plain_copy(logs))).fetchall() == duckdb.sql(scan_sql(logs)).fetchall()
