"""What the tests of a labeled set under data/ share: its generators as modules, and its chunks as the index
stage reads them (`tasks.index.stage.check_corpus`, then `enrich`), with nothing embedded."""

from __future__ import annotations

import importlib.util
import sys
from datetime import date
from pathlib import Path
from types import ModuleType

from schemas.config import Config
from tasks.index.corpus import Document
from tasks.index.enrich import EnrichedChunk, enrich
from tasks.index.stage import check_corpus


def generator(folder: Path, name: str) -> ModuleType:
    """`folder/name.py` imported as a module of its own (a set's generator script)."""
    spec = importlib.util.spec_from_file_location(f"{folder.name}_{name}", folder / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def indexed(config: Config, run_date: date) -> tuple[list[Document], list[EnrichedChunk]]:
    """The corpus's documents and the chunks the index would hold, with facets and version markers as of
    `run_date`: the lexicon less the ordinary words it drops, the corpus's lower-case words, as `build_index`."""
    checked = check_corpus(config.corpus or "", config)
    return checked.docs, enrich(checked.chunks, checked.docs, config, checked.lexicon, run_date, checked.plain)
