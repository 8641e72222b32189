"""Failures a library reports as ValueError, which the command line took for bad input whatever their cause: named
where they are raised, as the expected failure they are (schemas/errors.py), with the file and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planbake.cli import app
from schemas.errors import ConfigError, DamagedPublication, IndexUnreachable, InputError


def test_a_pointer_or_report_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "runs" / "r1" / "report").mkdir(parents=True)
    (out / "CURRENT").write_bytes(b"\xff\xfe")
    res = CliRunner().invoke(app, ["report", "--out", str(out)])
    assert res.exit_code == 2 and f"{out / 'CURRENT'}: not UTF-8 text" in res.stderr, res.output
    (out / "CURRENT").write_text("r1\n", encoding="utf-8")
    (out / "runs" / "r1" / "report" / "report.md").write_bytes(b"# report \xff\n")
    res = CliRunner().invoke(app, ["report", "--out", str(out)])
    assert res.exit_code == 2 and "report.md: not UTF-8 text; the publication is damaged" in res.stderr, res.output


def test_a_published_config_that_is_no_config_is_a_damaged_publication(tmp_path: Path) -> None:
    from schemas.config import read_published_config

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"facets": [{"name": "Office"}]}), encoding="utf-8")
    with pytest.raises(DamagedPublication, match=r"config.json: field 'facets.0.name': facet name 'Office' must be"):
        read_published_config(path)


def test_an_index_store_or_version_lancedb_refuses_is_named(tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    from tasks.index.store import open_table, restore

    with pytest.raises(IndexUnreachable, match="foo://bucket/index: the index store did not answer .*scheme"):
        open_table("foo://bucket/index", "chunks")
    table = lancedb.connect(str(tmp_path)).create_table("chunks", pa.table({"id": ["a"]}))
    for checkout in (True, False):
        with pytest.raises(InputError, match="table 'chunks' no longer holds version 99 .*planbake rollback --to"):
            restore(table, 99, str(tmp_path), "chunks", checkout=checkout)


def test_a_model_path_sentence_transformers_cannot_load_is_a_config_error(tmp_path: Path) -> None:
    from tasks.embed import load_model

    (tmp_path / "modules.json").write_text("not json", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"model_path {tmp_path}: sentence-transformers cannot load it"):
        load_model(str(tmp_path))


def test_a_ray_address_ray_cannot_read_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("prefect_ray")
    from schemas.config import Runner
    from tasks.scale import task_runner

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(ConfigError, match="runner.address head: Invalid address format"), \
            task_runner(Runner(kind="ray", address="head")):  # refused before any connection
        pass
