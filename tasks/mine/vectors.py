"""Skeleton vectors kept between runs, so a nightly run embeds only the skeletons it has not seen before.

Keyed by the model and a hash of the text: no question or skeleton text is written to disk. A store holds
the vectors of the last run and of the `IDLE_RUNS` runs before it (a skeleton whose second user leaves the
window often comes back within days), so it stays about as large as one log window. A pure cache: any run may
add to it, and losing it costs time, nothing else (last night's merge is kept by the publication:
`tasks/mine/memory.py`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from schemas.atomic import replace_atomically
from schemas.digest import text_digest
from tasks.embed import Embedder

IDLE_RUNS = 7  # runs a vector is kept without being used: a week of nights


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


class VectorStore:
    def __init__(self, folder: Path | None, embedder: Embedder, model_id: str) -> None:
        self.embedder = embedder
        name = text_digest(f"{model_id}|{embedder.dim}", 12)
        self.path = folder / f"skeletons-{name}.npz" if folder is not None else None
        self.known: dict[bytes, np.ndarray] = {}
        self.idle: dict[bytes, int] = {}  # runs since a known vector was last used
        self.used: dict[bytes, np.ndarray] = {}
        self.hits = 0
        if self.path is not None and self.path.exists():
            try:
                with np.load(self.path) as data:
                    keys, vecs = data["keys"], data["vectors"]
                    idle = data["idle"] if "idle" in data.files else np.zeros(len(keys), dtype=np.uint8)
                self.known = {k.tobytes(): v for k, v in zip(keys, vecs, strict=True)}
                self.idle = {k.tobytes(): int(n) for k, n in zip(keys, idle, strict=True)}
            except (OSError, ValueError, KeyError):
                self.known, self.idle = {}, {}  # rebuilt, never trusted

    def encode(self, texts: Sequence[str], label: str = "embedding", quiet: bool = False) -> np.ndarray:
        """Unit vectors for `texts`, embedding only those not in the store."""
        keys = [text_key(t) for t in texts]
        todo = sorted({i for i, k in enumerate(keys) if k not in self.known and k not in self.used},
                      key=lambda i: keys[i])
        fresh = self.embedder.encode([texts[i] for i in todo], label=label, quiet=quiet)
        for i, vec in zip(todo, fresh, strict=True):
            self.used[keys[i]] = vec
        out = np.empty((len(texts), self.embedder.dim), dtype=np.float32)
        for n, k in enumerate(keys):
            vec = self.used.get(k)
            if vec is None:
                vec = self.used[k] = self.known[k]
                self.hits += 1
            out[n] = vec
        return out

    def save(self) -> None:
        """Write the vectors this run used, and those unused for at most `IDLE_RUNS` runs (atomically: a crash
        leaves the old store or the new one)."""
        if self.path is None or not self.used:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        kept = {k: v for k, v in self.known.items() if k not in self.used and self.idle.get(k, 0) < IDLE_RUNS}
        vectors = {**self.used, **kept}
        idle = [0] * len(self.used) + [self.idle.get(k, 0) + 1 for k in kept]
        # raw bytes as rows of uint8: a bytes dtype ("S16") would drop a key's trailing zero bytes
        keys = np.frombuffer(b"".join(vectors), dtype=np.uint8).reshape(len(vectors), -1)
        replace_atomically(self.path.with_suffix(".tmp.npz"), self.path, lambda tmp: np.savez(
            tmp, keys=keys, vectors=np.stack(list(vectors.values())).astype(np.float32),
            idle=np.array(idle, dtype=np.uint8)))
