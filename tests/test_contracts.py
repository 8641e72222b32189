"""The layers' contracts, read from the source and from what the stages really write."""

from __future__ import annotations

import ast
import json
import re
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pyarrow.parquet as pq
import pytest
from pydantic import BaseModel

from schemas.arrow import CACHE_SCHEMA, CacheRow, chunk_schema, schema_problems
from schemas.config import published_config
from schemas.files import CHUNKS, CONFIG, FILES, MANIFEST, QUARANTINE, QUESTIONS, Manifest
from schemas.plan import Extract, ExtractDoc, Plan, PlanDoc, Step, StepDoc
from schemas.publication import NEEDED, READS, current_run
from tasks.ingest import tables
from tasks.ingest.stage import ingest
from tasks.mine import tables as mine_tables
from tests.conftest import ROOT

LAYERS = ("schemas", "tasks", "flows", "planbake")  # each imports only those before it
# the parts of `tasks`, in the order a log row and a corpus document go through them: each imports only those before
STAGES = ("progress", "embed", "scale", "ingest", "index", "starter", "mine", "executor", "plan", "evaluate", "publish")
HEAVY = ("prefect", "duckdb", "lancedb", "torch", "sentence_transformers", "vllm")  # what `schemas` never imports


def _imports(path: Path) -> set[str]:
    """Every module a source file imports, at its top or inside a function or an `if TYPE_CHECKING` block."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)  # `from tasks import followups`
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def _sources(root: Path, layer: str) -> list[Path]:
    return sorted((root / layer).rglob("*.py"))


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "tasks" and len(parts) > 1 and parts[1] in STAGES else None


def layer_violations(root: Path) -> list[str]:
    """Imports of a later layer (`LAYERS`), and of an engine from `schemas`."""
    wrong = []
    for i, layer in enumerate(LAYERS):
        later = LAYERS[i + 1:] + (HEAVY if layer == "schemas" else ())
        for path in _sources(root, layer):
            wrong += [f"{path.relative_to(root)} imports {m}" for m in sorted(_imports(path))
                      if m.split(".")[0] in later]
    return wrong


def stage_violations(root: Path) -> list[str]:
    """Imports of a later stage (`STAGES`) from a module of `tasks/`, and modules in no stage."""
    wrong = []
    for path in _sources(root, "tasks"):
        if path.relative_to(root) == Path("tasks/__init__.py"):
            continue
        own = _stage("tasks." + ".".join(path.relative_to(root / "tasks").with_suffix("").parts))
        if own is None:
            wrong.append(f"{path.relative_to(root)} is in no stage: add it to STAGES in its place")
            continue
        for m in sorted(_imports(path)):
            other = _stage(m)
            if other is not None and STAGES.index(other) > STAGES.index(own):
                wrong.append(f"{path.relative_to(root)} ({own}) imports {m} ({other}, a later stage)")
    return wrong


def test_imports_point_one_way() -> None:
    assert layer_violations(ROOT) == []
    assert stage_violations(ROOT) == []


def test_no_import_by_a_name_in_a_string() -> None:
    """The checks read the source: a module imported by a name in a string would escape them."""
    found = [str(p.relative_to(ROOT)) for layer in LAYERS for p in _sources(ROOT, layer)
             if "import_module(" in p.read_text(encoding="utf-8") or "__import__(" in p.read_text(encoding="utf-8")]
    assert found == []


def test_the_checks_catch_a_wrong_import(tmp_path: Path) -> None:
    for path, text in {"schemas/a.py": "import duckdb\n",
                       "schemas/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tasks import x\n",
                       "tasks/ingest/c.py": "def f():\n    from tasks.mine.stage import mine\n",
                       "tasks/odd.py": "", "flows/d.py": "import planbake.cli\n"}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    assert layer_violations(tmp_path) == ["schemas/a.py imports duckdb", "schemas/b.py imports tasks",
                                          "schemas/b.py imports tasks.x", "flows/d.py imports planbake.cli"]
    assert stage_violations(tmp_path) == [
        "tasks/ingest/c.py (ingest) imports tasks.mine.stage (mine, a later stage)",
        "tasks/ingest/c.py (ingest) imports tasks.mine.stage.mine (mine, a later stage)",
        "tasks/odd.py is in no stage: add it to STAGES in its place"]


def test_ingest_writes_the_tables_it_declares(tmp_path: Path) -> None:
    """Each table of `tables.OUTPUTS` exists on the connection after a real ingest, with its declared columns."""
    log = tmp_path / "log.jsonl"
    log.write_text('{"ts": "2026-11-20T10:00:00Z", "user": "u1", "query": "vacation days in Berlin"}\n'
                   '{"ts": "2026-11-20T10:00:05Z", "user": "u2"}\nnot json\n', encoding="utf-8")
    ing = ingest(log)
    held = {t.name: tuple(r[0] for r in ing.con.execute(f"DESCRIBE {t.name}").fetchall()) for t in tables.OUTPUTS}
    assert held == {t.name: t.columns for t in tables.OUTPUTS}
    assert ing.con.execute("SELECT count(*) FROM rows").fetchall() == [(1,)]
    assert ing.con.execute("SELECT reason FROM quarantine ORDER BY line").fetchall() == [
        ("missing query",), ("unparsable line",)]


def test_mining_makes_the_tables_it_declares(tmp_path: Path, seed_corpus: Path,
                                             tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every table a real mining run leaves on the connection is declared (by ingest or the mining stage), with
    its declared columns."""
    import tasks.mine.stage as stage
    from flows.stages import mine_logs
    from tests.test_privacy import build_seed_index, write_log

    config, index = build_seed_index(tmp_path_factory, seed_corpus)
    found: dict[str, tuple[str, ...]] = {}

    def spy(ing: Any, shapes: Any) -> Any:  # the last call before the connection closes
        for (name,) in ing.con.execute("SELECT table_name FROM information_schema.tables").fetchall():
            found[name] = tuple(r[0] for r in ing.con.execute(f'DESCRIBE "{name}"').fetchall())
        return real(ing, shapes)

    real = stage.summarize
    rows = [(f"u{i}", f"how many vacation days in {o}") for i in range(3) for o in ("Berlin", "Lisbon")]
    rows += [("u9", "what is the per diem in Berlin"), ("u9", "and in Lisbon?")]
    staging = tmp_path / "staging"
    staging.mkdir()
    with patch.object(stage, "summarize", spy):
        mine_logs(write_log(tmp_path / "log.jsonl", rows), config, index, staging, now=datetime(2026, 12, 1),
                  quiet=True)
    declared = {t.name: t.column_sets() for t in (*tables.OUTPUTS, *mine_tables.MADE)}
    working = {"staged", "held", "reject_errors", "reject_scans"}  # ingest's own, and DuckDB's rejects
    assert set(found) - working - set(declared) == set(), "a table neither stage declares"
    assert [n for n, columns in found.items() if n in declared and columns not in declared[n]] == []
    assert {"rows", "quarantine", "mapping", "q", "q_out", "skeletons", "value_sets", "followups"} <= set(found)
# A file name as a value: the name of a run's file is written once, in `schemas/files.py`.
FILE_NAME = re.compile(r"[\w-]+(?:\.[\w-]+)*\.(?:parquet|json|npz)")
# files of a model folder (sentence-transformers, a vLLM model), not of a run
NOT_PUBLISHED = {"flows/run.py": {"modules.json", "config.json"}, "tasks/plan/model_writer.py": {"config.json"},
                 "tasks/evaluate.py": {"split.json"}}  # a labeled set's dev and test halves, beside its questions


def named_files(root: Path) -> list[str]:
    """String literals (f-string parts too) of the production sources that are a file's name, but those of
    `schemas/files.py` and `NOT_PUBLISHED`; prose that mentions a name (a docstring, a message) is no name."""
    found = []
    for layer in LAYERS:
        for path in _sources(root, layer):
            rel = str(path.relative_to(root))
            if rel == "schemas/files.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
                if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                        and FILE_NAME.fullmatch(node.value.lstrip("/"))
                        and node.value not in NOT_PUBLISHED.get(rel, ())):
                    found.append(f"{rel}:{node.lineno} {node.value}")
    return found


def test_a_run_files_names_are_written_once() -> None:
    assert named_files(ROOT) == []
    assert len({f.name for f in FILES}) == len(FILES)


def test_the_scan_catches_a_file_name(tmp_path: Path) -> None:
    for path, text in {"schemas/a.py": 'NAME = "cache.parquet"\n', "tasks/b.py": "p = run / f'{x}/merge.npz'\n",
                       "flows/c.py": '"""Writes shapes.parquet."""\nLOG = "see shapes.parquet"\n',
                       "flows/run.py": 'MODEL = ("modules.json", "config.json")\n',
                       "schemas/files.py": 'CACHE = "cache.parquet"\n'}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    assert named_files(tmp_path) == ["schemas/a.py:1 cache.parquet", "tasks/b.py:1 /merge.npz"]


def test_the_readers_lists_derive_from_the_files() -> None:
    from tasks.publish.root import STAGE_FILES

    assert STAGE_FILES == {
        "index": ("chunks.parquet",),
        "mine": ("shapes.parquet", "questions.parquet", "quarantine.parquet", "merge.npz", "plain_words.json",
                 "names.json"),
        "plan": ("templates.parquet", "cache.parquet", "config.json", "lexicon.json", "vocabulary.json",
                 "class_routes.json", "bridge_terms.json")}
    assert NEEDED == {"mine": ("shapes.parquet", "questions.parquet"),
                      "plan": ("templates.parquet", "cache.parquet", "config.json", "lexicon.json")}
    assert READS.keys() == NEEDED.keys() and READS["mine"] == NEEDED["mine"]
    assert READS["plan"] == ("plain_words.json", "names.json", *NEEDED["plan"], "vocabulary.json",
                             "class_routes.json", "bridge_terms.json")


def test_a_published_run_holds_the_declared_files_with_their_schemas(demo_publication: Path) -> None:
    """The writers' files, read back: every file of the run folder is declared, and each Parquet file has its
    declared columns and types (with the nullability pyarrow writes; DuckDB marks some columns not null)."""
    run = current_run(demo_publication)
    assert {p.name for p in run.iterdir() if p.is_file()} == {f.name for f in FILES}
    manifest = json.loads((run / MANIFEST.name).read_text(encoding="utf-8"))
    assert set(manifest) <= Manifest.__required_keys__ | Manifest.__optional_keys__
    for f in FILES:
        if not f.schema_name:
            continue
        held = pq.read_schema(run / f.name)
        assert held.names == f.schema.names and schema_problems(held, f.schema) == {}, f.name
        assert held.equals(f.schema) or f in (QUESTIONS, QUARANTINE), f.name  # DuckDB writes those two
    config = published_config((run / CONFIG.name).read_text(encoding="utf-8"))
    held = pq.read_schema(run / CHUNKS.name)
    assert held.equals(chunk_schema(config, held.field("vector").type.list_size))


def test_a_cache_row_has_the_cache_files_columns() -> None:
    assert [f.name for f in fields(CacheRow)] == CACHE_SCHEMA.names


def test_a_plans_json_form_has_the_models_fields() -> None:
    docs: list[tuple[type, type[BaseModel]]] = [(PlanDoc, Plan), (StepDoc, Step), (ExtractDoc, Extract)]
    for doc, model in docs:
        assert list(doc.__annotations__) == list(model.model_fields), doc
