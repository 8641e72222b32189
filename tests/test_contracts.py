"""The layers' contracts, read from the source and from what the stages really write."""

from __future__ import annotations

import ast
from pathlib import Path

from tasks.ingest import tables
from tasks.ingest.stage import ingest
from tests.conftest import ROOT

LAYERS = ("schemas", "tasks", "flows", "planbake")  # each imports only those before it
# the parts of `tasks`, in the order a log row and a corpus document go through them: each imports only those before
STAGES = ("progress", "embed", "scale", "ingest", "index", "mine", "executor", "plan", "evaluate", "publish")
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
