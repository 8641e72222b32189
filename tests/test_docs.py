"""The documentation keeps up with the code: every configuration key is in docs/configuration.md, the README
stays short, and every docs/ page it links to exists."""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from schemas.config import Config

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CONFIGURATION = ROOT / "docs" / "configuration.md"
README_MAX_LINES = 160


def _models(annotation: object) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds: itself, or inside Optional, Union, list, dict, Annotated."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if typing.get_origin(annotation) is None and not isinstance(annotation, types.UnionType):
        return []
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def config_keys(model: type[BaseModel] = Config, prefix: str = "") -> list[str]:
    """Every key's dotted path (`mining.window_days`; a list of models such as `facets` gives `facets.name`)."""
    keys = []
    for name, field in model.model_fields.items():
        path = prefix + name
        keys.append(path)
        for inner in _models(field.annotation):
            keys += config_keys(inner, path + ".")
    return keys


def code_spans(markdown: str) -> set[str]:
    return set(re.findall(r"`([^`\n]+)`", markdown))


def test_the_walk_reaches_nested_sections() -> None:
    keys = config_keys()
    assert {"mining.window_days", "facets.name", "gate.max_question_drop", "runner.num_cpus"} <= set(keys)
    assert len(keys) == len(set(keys))


def test_every_config_key_is_documented() -> None:
    documented = code_spans(CONFIGURATION.read_text(encoding="utf-8"))
    missing = [key for key in config_keys() if key not in documented]
    assert not missing, f"keys of schemas.config without a `code span` in {CONFIGURATION.name}: {missing}"


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move reference to docs/"


def test_docs_pages_linked_from_the_readme_exist() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    pages = [link for link in links if link.startswith("docs/")]
    assert pages, "README.md links no docs/ page"
    missing = [page for page in pages if not (ROOT / page).is_file()]
    assert not missing, f"README.md links docs pages that do not exist: {missing}"


def test_the_labeled_questions_example_reads_and_names_documents_of_the_handbook(tmp_path: Path) -> None:
    """The example under "Labeled questions" (docs/publication.md) is a labeled set `eval` reads: its parts name
    document ids of the seed handbook (a document cut into chunks is still one id), and a chunk id is refused."""
    from schemas.errors import LabelError
    from tasks.evaluate import check_parts, read_labeled
    from tasks.index.corpus import read_corpus

    page = (ROOT / "docs" / "publication.md").read_text(encoding="utf-8")
    section = page.split("## Labeled questions", 1)[1].split("\n## ", 1)[0]
    example = re.search(r"```json\n(.*?)```", section, re.S)
    assert example is not None
    path = tmp_path / "questions.jsonl"
    path.write_text(example.group(1), encoding="utf-8")
    [labeled] = read_labeled(path)
    assert labeled.parts == [{"leave-berlin"}, {"leave-amsterdam"}] and labeled.should_split is True
    held = {d.id for d in read_corpus(ROOT / "tests" / "fixtures" / "seed_handbook" / "corpus.jsonl")}
    check_parts([labeled], held, str(path))
    path.write_text(example.group(1).replace('["leave-berlin"]', '["leave-berlin#0"]'), encoding="utf-8")
    with pytest.raises(LabelError, match=r"questions.jsonl:1: .*leave-berlin#0"):
        check_parts(read_labeled(path), held, str(path))
