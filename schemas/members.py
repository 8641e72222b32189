"""Which recurring shape a skeleton belongs to, as a publication maps them (offline and online alike).

A shape's skeleton and its examples (members asked by at least `mining.min_users` users) are published as text;
its rarer members (a misspelling one user typed) only as a hash, so no wording one user wrote is published, and
a lookup of that wording still finds the shape mining gave it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def member_hash(skeleton: str) -> str:
    """How a rare member of a shape is published."""
    return hashlib.sha1(skeleton.encode()).hexdigest()[:16]


class ShapeMembers:
    """Skeleton -> shape id; the first shape to claim a skeleton keeps it."""

    def __init__(self) -> None:
        self.by_text: dict[str, str] = {}
        self.by_hash: dict[str, str] = {}

    def add(self, shape_id: str, texts: Iterable[str], hashes: Iterable[str] = ()) -> None:
        for text in texts:
            self.by_text.setdefault(text, shape_id)
        for h in hashes:
            self.by_hash.setdefault(h, shape_id)

    def get(self, skeleton: str) -> str | None:
        found = self.by_text.get(skeleton)
        if found is None and self.by_hash:
            found = self.by_hash.get(member_hash(skeleton))
        return found
