"""Publish atomically: stage a run directory, then switch one pointer. One publisher at a time."""

from __future__ import annotations

import errno
import fcntl
import json
import math
import os
import secrets
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from schemas.atomic import replace_atomically
from schemas.errors import DamagedPublication, InputError, NoPublication, PublishBusy
from schemas.files import MANIFEST, STAGES, Manifest, Stage, written_by
from schemas.publication import (
    EMBED_CACHE,
    POINTER,
    check_run,
    current_run,
    damage,
    publications,
    read_manifest,
)

STAGE_FILES = {stage: written_by(stage) for stage in STAGES}  # what a run that skips a stage carries over


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)


STAGING_DAYS = 1  # a staging folder untouched this long belongs to no running run: a night's run takes minutes


def stage_dir(out: str | Path, run_id: str) -> Path:
    """A fresh staging directory; readers never look inside `runs/.staging`."""
    path = Path(out) / "runs" / ".staging" / run_id
    path.mkdir(parents=True, exist_ok=False)
    return path


def previous_publication(out: str | Path) -> tuple[Path | None, Manifest]:
    """The live run and its manifest ((None, {}): nothing live); DamagedPublication when a file of it is."""
    try:
        run = current_run(out)
    except NoPublication:
        return None, {}
    check_run(run)
    return run, read_manifest(run)


def baseline(out: str | Path, redoes_all: bool) -> tuple[Path | None, Manifest, str]:
    """The publication a run follows, its manifest, and a warning. A run that redoes every stage needs nothing of
    a damaged live publication, or of a lost pointer: it follows the newest whole one before it instead, as if
    rolled back first. Any other stops at a damaged one, and publishes anew over a lost pointer."""
    try:
        run, manifest = previous_publication(out)
        if run is None and redoes_all and publications(out):
            current_run(out)  # runs are there but the pointer is lost: raises NoPublication saying so
        return run, manifest, ""
    except DamagedPublication as exc:
        if not redoes_all:
            raise
        problem = f"{exc.problem}: the live publication is damaged"
        whole = newest_whole(out, before=current_run(out))  # nor one rolled back from
    except NoPublication as exc:
        if not redoes_all:
            raise
        problem, whole = str(exc), newest_whole(out)
    follows = f"this run follows {whole.name}, the newest whole one" if whole else "no whole one is left"
    return whole, read_manifest(whole) if whole else {}, f"{problem}; {follows}"


def newest_whole(out: str | Path, before: Path | None = None) -> Path | None:
    """The newest publication under `out` whose files all read; with `before`, one older than that run (a run
    rolled back from is newer than the live one, and stays out)."""
    found = publications(out)
    if before is not None:
        names = [p.name for p in found]
        found = found[:names.index(before.name)] if before.name in names else found
    return next((p for p in reversed(found) if not damage(p)), None)


def carry_over(prev: Path | None, staging: Path, stages: list[Stage]) -> list[str]:
    """Copy the files of stages this run did not redo from the live publication, so every run is whole."""
    copied: list[str] = []
    if prev is None:
        return copied
    for stage in stages:
        for name in STAGE_FILES[stage]:
            src = prev / name
            if src.exists() and not (staging / name).exists():
                try:
                    os.link(src, staging / name)
                except OSError:
                    shutil.copy2(src, staging / name)
                copied.append(name)
    return copied


@contextmanager
def publish_lock(out: str | Path, wait_s: float = 0.0) -> Iterator[None]:
    """Hold the publication root's lock; wait up to `wait_s` seconds, then raise PublishBusy."""
    root = Path(out)
    try:
        root.mkdir(parents=True, exist_ok=True)
        fh = (root / ".publish.lock").open("a+")
    except OSError as exc:  # a read-only place, /proc, a path through a file
        raise InputError(f"--out {root}: cannot create the publication folder or its lock file there "
                         f"({exc.strerror or exc}); pass a folder you can write") from None
    deadline = time.monotonic() + wait_s
    try:
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    raise PublishBusy(f"{root}: another planbake run is publishing here; wait for it to "
                                      "finish, or pass --wait SECONDS") from None
                time.sleep(0.2)
        yield
    finally:
        fh.close()


def switch_pointer(out: str | Path, run_id: str) -> None:
    root = Path(out)
    def write(tmp: Path) -> None:
        tmp.write_text(run_id + "\n", encoding="utf-8")
        _fsync(tmp)

    replace_atomically(root / f".{POINTER}.{os.getpid()}.tmp", root / POINTER, write)
    _fsync(root)  # the rename itself


def _fsync(path: Path) -> None:
    """Flush a file, or a folder's entries, to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def flush_tree(folder: Path, since: float | None = None) -> None:
    """Flush every file and folder under `folder` (with `since`: the files changed since that time), so a
    pointer switched after it never names a run, or an index version, a crash of the machine left half-written."""
    for path in sorted(folder.rglob("*"), reverse=True):  # files before the folders holding them
        if since is None or path.is_dir() or path.stat().st_mtime >= since:
            _fsync(path)
    _fsync(folder)


PUBLISHED_HERE: list[str] = []  # the run ids this process published, in order (what the CLI reports after a failure)


def publish(out: str | Path, staging: Path, manifest: Manifest) -> Path:
    """Write the manifest, move the staged run into place, switch the pointer. Caller holds the lock."""
    run_id = staging.name
    if "previous" not in manifest:  # a Run names the one it followed; else it is the live one
        prev, _ = previous_publication(out)
        manifest = {**manifest, "previous": prev.name if prev else None}
    manifest = {**manifest, "run_id": run_id, "published_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "files": sorted(p.name for p in staging.iterdir() if p.is_file() and p.name != MANIFEST.name)}
    write_manifest(staging, manifest)
    flush_tree(staging)
    final = Path(out) / "runs" / run_id
    os.replace(staging, final)
    _fsync(final.parent)
    switch_pointer(out, run_id)
    PUBLISHED_HERE.append(run_id)
    return final


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    (run_dir / MANIFEST.name).write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n",
                                    encoding="utf-8")


def discard(staging: Path) -> None:
    shutil.rmtree(staging, ignore_errors=True)


def keep_rejected(out: str | Path, staging: Path, manifest: Manifest, keep: tuple[str, ...]) -> Path:
    """Keep what explains a rejected run (its manifest and the `keep` files or folders) under
    `<out>/rejected/<run id>/`; readers of the publication never look there. The caller discards the rest."""
    dest = Path(out) / "rejected" / staging.name
    dest.mkdir(parents=True, exist_ok=True)
    write_manifest(dest, manifest)
    for name in keep:
        src = staging / name
        if src.is_dir():
            shutil.copytree(src, dest / name, dirs_exist_ok=True)
        elif src.exists():
            shutil.copy2(src, dest / name)
    return dest


def prune(out: str | Path, keep_runs: int, keep_rejected: int, cache_days: int | None = None, *,
          indexed: bool = False) -> list[str]:
    """Delete the oldest publications beyond `keep_runs` and rejected runs beyond `keep_rejected`, never the
    live one or the one before it, staging folders untouched for `STAGING_DAYS` (a run killed before it could
    clean up), and the embedding shards kept for a run that fails (`tasks.scale.ShardStore`): all of them when
    the live publication is `indexed` by the run that just published (its index holds what they held), else
    those unused for `cache_days` (a later run that needs one embeds again). Caller holds the lock. Returns what
    went."""
    root = Path(out)
    live = current_run(root).name if (root / POINTER).exists() else None
    spared = {live, read_manifest(root / "runs" / live).get("previous") if live else None}
    gone = []
    for folder, keep in ((root / "runs", keep_runs), (root / "rejected", keep_rejected)):
        if not folder.is_dir():
            continue
        # by the second the run started, then (two runs in one second) by when its folder was written
        runs = sorted((p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")),
                      key=lambda p: (p.name.split("-")[0], p.stat().st_mtime, p.name))
        for old in runs[:max(0, len(runs) - keep)]:
            if old.name not in spared:
                shutil.rmtree(old, ignore_errors=True)
                gone.append(f"{folder.name}/{old.name}")
    staging = root / "runs" / ".staging"  # a killed run's staging folder: nothing reads it, nothing else removes it
    if staging.is_dir():
        cutoff = time.time() - STAGING_DAYS * 86_400
        for abandoned in sorted(p for p in staging.iterdir() if p.stat().st_mtime < cutoff):
            shutil.rmtree(abandoned, ignore_errors=True)
            gone.append(f"runs/.staging/{abandoned.name}")
    cache = root / EMBED_CACHE
    unused_since = math.inf if indexed else None if cache_days is None else time.time() - cache_days * 86_400
    if unused_since is not None and cache.is_dir():
        for old_result in sorted(p for p in cache.rglob("*") if p.is_file() and p.stat().st_mtime < unused_since):
            old_result.unlink(missing_ok=True)
            gone.append(f"{EMBED_CACHE}/{old_result.relative_to(cache)}")
    return gone


def rollback(out: str | Path, before_switch: Callable[[Manifest], None] | None = None,
             to: str | None = None) -> tuple[str, Manifest]:
    """Re-point to the previous publication (`to`: the one of that run id); returns its run id and manifest.
    Caller holds the lock. `before_switch(manifest)` runs first (the index table's restore): if it fails, the
    pointer stays."""
    root = Path(out)
    target = root / "runs" / to if to else _previous(root)
    if to is not None and (Path(to).name != to or to.startswith(".")) or not target.is_dir():
        raise NoPublication(f"{target}: no such publication; pass --to with the run id of a folder under "
                            f"{root / 'runs'}")
    if problem := damage(target):
        raise InputError(f"{problem}; cannot roll back to {target.name}: pass --to with the run id of a whole "
                         f"publication under {root / 'runs'}")
    manifest = read_manifest(target)
    if before_switch is not None:
        before_switch(manifest)
    switch_pointer(out, target.name)
    return target.name, manifest


def _previous(root: Path) -> Path:
    """What rollback returns to: the publication before the live one; with no live one (the pointer missing or
    naming no folder), the newest whole publication; with an unreadable live manifest, the newest whole one
    before the live run."""
    live = None
    try:
        live = current_run(root)
        previous = read_manifest(live).get("previous")
    except (NoPublication, DamagedPublication):
        whole = newest_whole(root, before=live)  # never the damaged live one, nor one rolled back from
        if whole is None:
            raise NoPublication(f"{root / 'runs'}: no whole publication to roll back to; run 'planbake nightly' "
                                "to publish anew") from None
        return whole
    if not previous:
        raise NoPublication(f"{root}: no earlier publication to roll back to")
    return root / "runs" / str(previous)
