"""Reading a publication: the pointer file names the live run directory; its manifest says what is in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

POINTER = "CURRENT"
EMBED_CACHE = "embed-cache"  # under the root: the embedding tasks' results, pruned by age
MANIFEST = "manifest.json"


class NoPublication(FileNotFoundError):
    """Nothing has been published under this root yet."""


def current_run(out: str | Path) -> Path:
    """The live run directory; raises NoPublication when nothing is published."""
    root = Path(out)
    if root.is_file():
        raise ValueError(f"--out {root}: is a file; pass the publication folder")
    try:
        run_id = (root / POINTER).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise NoPublication(f"{root}: nothing published yet; run 'planbake nightly' (or 'planbake index')") from None
    run = root / "runs" / run_id
    if not run_id or run_id in (".", "..") or Path(run_id).name != run_id or not run.is_dir():
        # damaged by hand or by a failing disk: as good as nothing published, so a nightly run publishes anew
        raise NoPublication(f"{root / POINTER} names run {run_id!r}, which is not a folder under {root / 'runs'}; "
                            "the live publication is lost: run 'planbake nightly' to publish again")
    return run


def run_root(run_dir: str | Path) -> Path:
    """The publication root of a run folder: `<root>/runs/<id>`, or `<root>/runs/.staging/<id>` while staged."""
    parent = Path(run_dir).resolve().parent
    return (parent.parent if parent.name == ".staging" else parent).parent


def index_location(section: dict[str, Any], root: str | Path) -> str:
    """Where a manifest's index section says the table is. An index inside the publication root is named by its
    `path` in the root, so a publication copied or moved elsewhere reads and writes its own table, from any working
    folder; any other index by its `uri` (absolute, or a remote URI)."""
    path, uri = section.get("path"), str(section["uri"])
    if path:
        return str(Path(root).resolve() / path)
    return uri if "://" in uri else str(Path(uri).resolve())  # an older manifest's: as its writer's folder saw it


def read_manifest(run_dir: str | Path) -> dict[str, Any]:
    return json.loads((Path(run_dir) / MANIFEST).read_text(encoding="utf-8"))


def current_manifest(out: str | Path) -> dict[str, Any]:
    return read_manifest(current_run(out))
