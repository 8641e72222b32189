"""Extraction spread over worker processes equals the serial loop; skeleton vectors persist between runs."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

import tasks.mine.mining as mining
from schemas.config import load_config
from schemas.extract import Lexicon
from schemas.files import MERGE
from schemas.pii import Scrubber
from tasks.embed import Embedder
from tasks.ingest.stage import ingest
from tasks.mine.memory import MergeMemory
from tasks.mine.vectors import IDLE_RUNS, VectorStore
from tasks.mine.vectors import text_key as vectors_key
from tests.conftest import DEMO_CONFIG

CONFIG = load_config(DEMO_CONFIG)
LEX = Lexicon(CONFIG)
SCRUB = Scrubber(keep=LEX.name_words())
_PARTS = ["how many vacation days in", "per diem for", "parental leave Berlin", "Lisbon", "Amsterdam vs Berlin",
          "this year", "last year", "2025", "mail me at a.b@example.com", "call +49 30 1234567", "Jan Kowalski from",
          "remote work", "what about", "São Paulo", "2026-03-01", "?", "compare"]


def _mapping(path: Path, workers: int) -> list[tuple]:
    ing = ingest(path, now=datetime(2030, 1, 1), scrub=SCRUB)
    try:
        mining.extract_distinct(ing, LEX, SCRUB, quiet=True, workers=workers)
        return ing.con.sql("SELECT * FROM q_text ORDER BY question_id").fetchall()
    finally:
        ing.con.close()


def test_worker_processes_give_the_serial_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    t0 = datetime(2025, 12, 20)
    path = tmp_path / "log.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for i in range(600):
            query = " ".join(rng.choice(_PARTS) for _ in range(rng.randint(1, 5)))
            ts = t0 + timedelta(hours=rng.randint(0, 24 * 30))
            f.write(json.dumps({"ts": ts.isoformat(), "user": f"u{i % 17}", "query": query}) + "\n")
    serial = _mapping(path, workers=1)
    monkeypatch.setattr(mining, "_PARALLEL_FROM", 1)
    monkeypatch.setattr(mining, "_CHUNK", 50)
    parallel = _mapping(path, workers=2)
    assert len(serial) == 600
    assert parallel == serial
    skeletons = {row[3] for row in serial}  # q_text: ts, user, question_id, skeleton, ...
    assert "parental leave {office}" in skeletons
    assert not any("example.com" in s or "1234567" in s for s in skeletons)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def test_vector_store_embeds_each_skeleton_once(tmp_path: Path, embedder: Embedder) -> None:
    texts = ["per diem for {office}", "parental leave {office} {year}", "per diem for {office}"]
    first = VectorStore(tmp_path, embedder, "m")
    v1 = first.encode(texts, quiet=True)
    assert first.hits == 0 and len(first.used) == 2
    assert np.allclose(v1[0], v1[2])
    first.save()
    raw = next(tmp_path.glob("skeletons-*.npz")).read_bytes()
    assert b"per diem" not in raw and b"office" not in raw  # hashes only, no text on disk

    second = VectorStore(tmp_path, embedder, "m")
    v2 = second.encode([texts[1], "vacation days {office}"], quiet=True)
    assert second.hits == 1  # the known skeleton came from the store, the new one was embedded
    assert np.allclose(v2[0], v1[1], atol=1e-6)
    assert np.allclose(v2[1], embedder.encode(["vacation days {office}"], quiet=True)[0], atol=1e-6)
    second.save()
    with np.load(next(tmp_path.glob("skeletons-*.npz"))) as data:
        assert len(data["keys"]) == 3 and sorted(data["idle"]) == [0, 0, 1]  # the first run's other one waits

    for _ in range(IDLE_RUNS):  # runs that use only the new skeleton: the unused one is dropped after IDLE_RUNS
        store = VectorStore(tmp_path, embedder, "m")
        assert vectors_key(texts[0]) in store.known
        store.encode(["vacation days {office}"], quiet=True)
        store.save()
    assert vectors_key(texts[0]) not in VectorStore(tmp_path, embedder, "m").known

    other_model = VectorStore(tmp_path, embedder, "another-model")
    other_model.encode(texts[:1], quiet=True)
    assert other_model.hits == 0


def test_damaged_vector_store_is_rebuilt(tmp_path: Path, embedder: Embedder) -> None:
    store = VectorStore(tmp_path, embedder, "m")
    store.encode(["per diem for {office}"], quiet=True)
    store.save()
    path = next(tmp_path.glob("skeletons-*.npz"))
    path.write_bytes(b"not a numpy file")
    again = VectorStore(tmp_path, embedder, "m")
    vec = again.encode(["per diem for {office}"], quiet=True)
    assert again.hits == 0 and vec.shape == (1, embedder.dim)


def test_keys_ending_in_zero_bytes_survive_a_round_trip(tmp_path: Path, embedder: Embedder) -> None:
    texts = [f"per diem for {{office}} {n}" for n in range(3000)]
    assert any(vectors_key(t).endswith(b"\0") for t in texts)  # about 1 key in 256 ends in a zero byte
    store = VectorStore(tmp_path, embedder, "m")
    store.known = {vectors_key(t): np.zeros(embedder.dim, dtype=np.float32) for t in texts}  # no model calls
    store.encode(texts, quiet=True)
    store.save()
    again = VectorStore(tmp_path, embedder, "m")
    again.encode(texts, quiet=True)
    assert again.hits == len(texts)
    memory = MergeMemory()
    memory.remember_seeds({vectors_key(t): vectors_key(texts[0]) for t in texts})
    memory.name_shapes(texts[:300])
    memory.remember_examples(texts[-300:])
    memory.save(tmp_path)
    last = MergeMemory(tmp_path)
    assert all(last.seed_of(vectors_key(t)) == vectors_key(texts[0]) for t in texts)  # the merge, remembered
    assert last.seed_of(vectors_key("vacation days {office}")) is None
    assert all(last.named_a_shape(t) for t in texts[:300]) and not last.named_a_shape(texts[300])
    assert all(last.was_example(t) for t in texts[-300:]) and not last.was_example(texts[0])
    (tmp_path / MERGE.name).write_bytes(b"PK not a memory")
    assert MergeMemory(tmp_path).seeds == {}  # a corrupt memory is no memory
    # a publication made before runs kept their memory: the vector store's file held names and seeds then
    older = tmp_path / "older-run"
    older.mkdir()
    legacy = tmp_path / "skeletons-old.npz"
    np.savez(legacy, keys=np.zeros((0, 16), np.uint8), named=np.frombuffer(vectors_key(texts[0]), np.uint8)[None],
             seeds=np.frombuffer(vectors_key(texts[1]) + vectors_key(texts[0]), np.uint8)[None])
    upgraded = MergeMemory(older, legacy=legacy)
    assert upgraded.named_a_shape(texts[0]) and upgraded.seed_of(vectors_key(texts[1])) == vectors_key(texts[0])
    assert MergeMemory(None, legacy=legacy).seeds == {}  # no publication at all: no memory
