"""Last night's merge, read from the live publication and kept in the run's own folder (`merge.npz`).

Which skeletons named a recurring shape, which seeded each skeleton's shape, and which question was each shape's
example: the next night keeps its shapes' members, names and examples while counts shuffle. Read from the
publication, not from a shared folder, so a run that is never published (rejected by the quality gate, failed)
leaves the next night as it was, and a rollback brings back the memory of the run it returns to. Hashes only,
no text. Losing it costs fresh names, nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from schemas.atomic import replace_atomically
from schemas.files import MERGE
from tasks.mine.vectors import text_key


class MergeMemory:
    def __init__(self, last_run: Path | None = None, legacy: Path | None = None) -> None:
        """Last night's memory from `last_run` (the live publication's folder), or, for a publication made before
        runs kept one, from `legacy` (the vector store's file, which held names and seeds then)."""
        self.named: set[bytes] = set()  # skeletons that named a recurring shape last night
        self.seeds: dict[bytes, bytes] = {}  # skeleton -> the skeleton that seeded its shape last night
        self.examples: set[bytes] = set()  # the shapes' example questions last night
        self.new_named: set[bytes] = set()  # and tonight
        self.new_seeds: dict[bytes, bytes] = {}
        self.new_examples: set[bytes] = set()
        path = last_run / MERGE.name if last_run is not None else None
        if path is not None and not path.exists():
            path = legacy
        if path is not None and path.exists():
            try:
                with np.load(path) as data:
                    self.named = {k.tobytes() for k in data["named"]}
                    self.seeds = {row[:16].tobytes(): row[16:].tobytes() for row in data["seeds"]}
                    self.examples = {k.tobytes() for k in data["examples"]} if "examples" in data.files else set()
            except (OSError, ValueError, KeyError):
                self.named, self.seeds, self.examples = set(), {}, set()  # rebuilt, never trusted

    def named_a_shape(self, skeleton: str) -> bool:
        return text_key(skeleton) in self.named

    def seed_of(self, key: bytes) -> bytes | None:
        """The key of the skeleton that seeded the shape of the skeleton with this key last night."""
        return self.seeds.get(key)

    def was_example(self, question: str) -> bool:
        return text_key(question) in self.examples

    def name_shapes(self, skeletons: Iterable[str]) -> None:
        self.new_named.update(text_key(s) for s in skeletons)

    def remember_seeds(self, seeds: dict[bytes, bytes]) -> None:
        """Tonight's merge, skeleton key -> its seed's key."""
        self.new_seeds.update(seeds)

    def remember_examples(self, questions: Iterable[str]) -> None:
        self.new_examples.update(text_key(q) for q in questions)

    def save(self, folder: Path) -> None:
        """Tonight's memory into `folder` (the run's staging folder), atomically."""
        def rows(keys: Iterable[bytes], width: int) -> np.ndarray:
            # raw bytes as rows of uint8: a bytes dtype ("S16") would drop a key's trailing zero bytes
            joined = b"".join(sorted(keys))
            return np.frombuffer(joined, dtype=np.uint8).reshape(len(joined) // width, width)

        replace_atomically(folder / (MERGE.name + ".tmp.npz"), folder / MERGE.name, lambda tmp: np.savez(
            tmp, named=rows(self.new_named, 16), examples=rows(self.new_examples, 16),
            seeds=rows((k + v for k, v in self.new_seeds.items()), 32)))
