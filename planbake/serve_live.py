"""The live publication a server answers from: loaded whole, swapped in one reference when CURRENT switches."""

from __future__ import annotations

import gc
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from schemas.cache import PlanCache
from schemas.errors import PlanbakeError
from schemas.publication import POINTER

log = logging.getLogger("planbake.serve")


@dataclass
class Served:
    """One loaded publication. A request takes one and answers from it alone, whatever is swapped in meanwhile."""

    cache: PlanCache
    run_id: str
    published_at: datetime | None
    embedders: dict[tuple[Any, ...], Any] = field(default_factory=dict, repr=False)  # shared by a server's publications
    _index: Any = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def index(self) -> Any:
        """The published index version (`tasks.index.store.Index`), opened at the first retrieve; the embedding
        model is loaded once per server, not once per publication."""
        with self._lock:
            if self._index is None:
                from tasks.embed import Embedder
                from tasks.index.store import Index

                cfg = self.cache.lexicon.config
                model = (cfg.model_path, cfg.embed_batch_size, cfg.embed_dtype)
                if model not in self.embedders:
                    self.embedders[model] = Embedder(*model)
                self._index = Index(self.cache.index_uri, cfg, self.cache.manifest["index"]["version"],
                                    embedder=self.embedders[model])
            return self._index


def load(path: Path, embedders: dict[tuple[Any, ...], Any] | None = None) -> Served:
    """A publication opened fully (`PlanCache.open` checks its files), ready to be swapped in."""
    cache = PlanCache.open(path)
    stamp = cache.manifest.get("published_at")
    try:
        published = datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None
    except ValueError:
        published = None
    if published is not None and published.tzinfo is None:
        published = published.replace(tzinfo=UTC)
    return Served(cache, str(cache.manifest.get("run_id") or cache.run_dir.name), published,
                  embedders if embedders is not None else {})


class Live:
    """Follows a publication root's CURRENT: `check()` stats the pointer (its inode, size and mtime) and, when it
    changed, opens the run it names and swaps it in; a run that fails to open is refused and the old one stays.
    `served` is read without a lock: one reference, replaced whole."""

    def __init__(self, root: Path, on_reload: Any = None, on_refused: Any = None, served: Served | None = None) -> None:
        """`served`: the publication CURRENT names, loaded already (not loaded again unless CURRENT switches)."""
        self.root = root
        self.served: Served | None = served
        self.reloads = 0
        self.refused = 0
        self.last_error = ""
        self._embedders: dict[tuple[Any, ...], Any] = served.embedders if served is not None else {}
        self._seen: tuple[int, int, int] | None | str = "unread"
        self._on_reload, self._on_refused = on_reload, on_refused
        self._check_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.root / POINTER)
        except OSError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def check(self) -> bool:
        """Swap in the publication CURRENT names if the pointer changed since the last check; True if swapped."""
        with self._check_lock:
            sig = self._signature()
            if sig == self._seen:
                return False
            self._seen = sig
            try:
                run = (self.root / POINTER).read_text(encoding="utf-8").strip() if sig else ""
            except OSError:
                run = ""
            if self.served is not None and run == self.served.run_id:
                return False
            collecting = gc.isenabled()
            gc.disable()  # a collection amid a load walks both publications' objects holding the GIL (0.2 s at 100k)
            try:
                new = load(self.root, self._embedders)
            except (PlanbakeError, OSError, ValueError) as exc:
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.warning("publication %s refused, still serving %s: %s", run or "(none)",
                            self.served.run_id if self.served else "nothing", self.last_error)
                if sig is not None:
                    self.refused += 1
                    if self._on_refused:
                        self._on_refused(run)
                return False
            finally:
                if collecting:
                    gc.enable()
            old, self.served = self.served, new
            if old is not None:
                self.reloads += 1
                log.info("publication %s swapped in for %s", new.run_id, old.run_id)
            if self._on_reload:
                self._on_reload(new, old)
            return True

    def start(self, every_ms: int) -> None:
        """Check the pointer every `every_ms` ms in a daemon thread, until `stop()`."""
        def loop() -> None:
            while not self._stop.wait(every_ms / 1000):
                try:
                    self.check()
                except Exception:  # a bug in one check must not end the following
                    log.exception("publication check failed")

        self._stop.clear()
        self._thread = threading.Thread(target=loop, name="planbake-serve-reload", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def age_s(self) -> float:
        """Seconds since the served publication was published (0 when unknown or none)."""
        served = self.served
        if served is None or served.published_at is None:
            return 0.0
        return max(0.0, time.time() - served.published_at.timestamp())
