"""Reading a publication: the pointer file names the live run directory; its manifest says what is in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

from schemas.errors import DamagedPublication, InputError, NoPublication
from schemas.files import MANIFEST, READERS, Manifest, Stage, needed_by, read_by

POINTER = "CURRENT"
EMBED_CACHE = "embed-cache"  # under the root: embedding shards a failed run leaves to the next (tasks.scale)


# what every reader of a stage's outputs needs in a run folder (besides its manifest)
NEEDED = {stage: needed_by(stage) for stage in READERS}
# files a reader of a stage reads, the needed ones and those it reads where the manifest lists them (`files`; a
# publication made before a file was kept reads without it): lookup scrubs with the plain words and words plans
# with the vocabulary
READS = {stage: read_by(stage) for stage in READERS}


ROOT_FOLDERS = ("runs", "rejected", "lancedb", "vectors", EMBED_CACHE)  # what runs write under the root






def current_run(out: str | Path) -> Path:
    """The live run directory; raises NoPublication when nothing is published."""
    root = Path(out)
    if root.is_file():
        raise InputError(f"--out {root}: is a file; pass the publication folder")
    try:
        run_id = (root / POINTER).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise NoPublication(_unpointed(root, f"{root / POINTER} is missing") if publications(root) else
                            f"{root}: nothing published yet; run 'planbake nightly' (or 'planbake index')") from None
    except UnicodeDecodeError:  # overwritten by a failing disk or by hand
        raise InputError(f"{root / POINTER}: not UTF-8 text; it names the live run: write the id of a folder under "
                         f"{root / 'runs'} into it") from None
    run = root / "runs" / run_id
    if not run_id or run_id in (".", "..") or Path(run_id).name != run_id or not run.is_dir():
        # damaged by hand or by a failing disk: as good as nothing published, so a nightly run publishes anew
        raise NoPublication(_unpointed(root, f"{root / POINTER} names run {run_id!r}, which is not a folder under "
                                             f"{root / 'runs'}; the live publication is lost"))
    return run


def enclosing_root(path: str | Path) -> Path | None:
    """The publication root whose own folders (`runs`, a run folder, `lancedb`, ...) `path` lies in, or None. An
    `--out` there names the wrong folder: a reader finds nothing published, and a run would publish a second root
    inside the first."""
    try:
        p = Path(path).resolve()
    except (OSError, RuntimeError):  # a loop of symbolic links: the command names it as it reads the folder
        return None
    return next((f.parent for f in (p, *p.parents) if f.name in ROOT_FOLDERS and _is_root(f.parent)), None)


def _is_root(folder: Path) -> bool:
    """Whether `folder` holds a pointer, or a run folder under `runs` (a root whose pointer is lost)."""
    try:
        return (folder / POINTER).is_file() or any((r / MANIFEST.name).is_file() for r in (folder / "runs").iterdir())
    except OSError:  # no `runs` folder, or one that cannot be read
        return False


def _unpointed(root: Path, problem: str) -> str:
    """What to do about a pointer that names no publication: restore it, or publish anew."""
    found = publications(root)
    if not found:
        return f"{problem}: run 'planbake nightly' to publish again"
    return (f"{problem}, but {len(found)} publication{'s are' if len(found) > 1 else ' is'} under {root / 'runs'} "
            f"(newest {found[-1].name}): 'planbake rollback' points {POINTER} at the newest whole one, 'planbake "
            "rollback --to RUN_ID' at a named one; 'planbake nightly' publishes anew")


def publications(out: str | Path) -> list[Path]:
    """The run folders under `<out>/runs`, oldest first: by the second each run started, then by folder time."""
    runs = Path(out) / "runs"
    found = [p for p in runs.iterdir() if p.is_dir() and not p.name.startswith(".")] if runs.is_dir() else []
    return sorted(found, key=lambda p: (p.name.split("-")[0], p.stat().st_mtime, p.name))


def damage(run_dir: str | Path, stages: tuple[Stage, ...] = READERS) -> str:
    """What makes a run folder unreadable ("" when whole): its manifest, a file the readers of `stages` (those
    the manifest records) need, or read and the manifest lists (all it lists when every stage is asked for), that
    is missing; or a JSON file, or a Parquet file of `stages` (of any stage when all are asked for), that does not
    read whole. A reader of the plans alone asks for "plan" only."""
    import pyarrow.parquet as pq  # here: the command line starts without pyarrow

    run = Path(run_dir)
    try:
        manifest = read_manifest(run)
        every = set(stages) >= set(NEEDED)
        needed = {name for stage in stages if stage in manifest for name in NEEDED[stage]}
        needed |= {name for name in listed_files(run, manifest)
                   if every or any(name in READS[stage] for stage in stages)}
        for name in sorted(needed):
            if not (run / name).exists():
                return f"{run / name}: missing"
        for path in sorted(run.glob("*.json")):
            read_json(path)
    except DamagedPublication as exc:
        return exc.problem
    for path in sorted(p for p in run.glob("*.parquet") if every or p.name in needed):
        try:
            pq.read_metadata(path)
        except (OSError, ValueError):  # pyarrow's ArrowIOError, ArrowInvalid
            return f"{path}: not a whole Parquet file (truncated or overwritten)"
    return ""


def listed_files(run_dir: str | Path, manifest: Manifest) -> list[str]:
    """The run's files its manifest lists (`files`; none in a publication made before they were listed);
    DamagedPublication when `files` is no list of plain file names (an edit by hand)."""
    files = manifest.get("files", [])
    if not isinstance(files, list) or not all(
            isinstance(name, str) and name not in ("", ".", "..") and Path(name).name == name for name in files):
        raise DamagedPublication(f"{Path(run_dir) / MANIFEST.name}: \"files\" is not a list of the run's file names "
                                 f"(got {json.dumps(files)[:80]})")
    return files


def check_run(run_dir: str | Path, stages: tuple[Stage, ...] = READERS) -> None:
    """Raise DamagedPublication naming the first file of the run a reader of `stages` could not read."""
    problem = damage(run_dir, stages)
    if problem:
        raise DamagedPublication(problem)


def run_root(run_dir: str | Path) -> Path:
    """The publication root of a run folder: `<root>/runs/<id>`, or `<root>/runs/.staging/<id>` while staged."""
    parent = Path(run_dir).resolve().parent
    return (parent.parent if parent.name == ".staging" else parent).parent


def memo_folder(index_uri: str) -> Path | None:
    """Where the memos kept between runs live (skeleton vectors, extracted questions, log lines): beside a local
    index (`<root>/vectors`); a remote index keeps none."""
    return None if "://" in index_uri else Path(index_uri).parent / "vectors"


def index_location(section: dict[str, Any], root: str | Path) -> str:
    """Where a manifest's index section says the table is. An index inside the publication root is named by its
    `path` in the root, so a publication copied or moved elsewhere reads and writes its own table, from any working
    folder; any other index by its `uri` (absolute, or a remote URI)."""
    path, uri = section.get("path"), str(section["uri"])
    if path:
        return str(Path(root).resolve() / path)
    return uri if "://" in uri else str(Path(uri).resolve())  # an older manifest's: as its writer's folder saw it


def read_json(path: Path) -> Any:
    """A run's JSON file; DamagedPublication when it is missing or does not parse."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DamagedPublication(f"{path}: missing") from None
    except json.JSONDecodeError as exc:
        raise DamagedPublication(f"{path}, line {exc.lineno}: not valid JSON ({exc.msg})") from None
    except UnicodeDecodeError:
        raise DamagedPublication(f"{path}: not UTF-8 text") from None
    except OSError as exc:  # a folder in its place, no permission to read it
        raise DamagedPublication(f"{path}: cannot be read ({exc.strerror or exc})") from None


def read_manifest(run_dir: str | Path) -> Manifest:
    manifest = read_json(Path(run_dir) / MANIFEST.name)
    if not isinstance(manifest, dict):
        raise DamagedPublication(f"{Path(run_dir) / MANIFEST.name}: not a JSON object")
    return cast(Manifest, manifest)  # as tasks.publish.root.write_manifest writes it


def current_manifest(out: str | Path) -> Manifest:
    return read_manifest(current_run(out))
