"""Scale-out: the nightly flow with the embedding and mining tasks on a local Ray cluster publishes the same
index, shapes, templates and cache as with the default runner."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from schemas.config import load_config
from schemas.publication import current_run
from tasks.evaluate import questions_as_log, read_labeled
from tests.conftest import DEMO_CONFIG, SEED

TABLES = ("shapes.parquet", "questions.parquet", "templates.parquet", "cache.parquet", "quarantine.parquet")


def _nightly(tmp_path: Path, kind: str) -> Path:
    """The reduced demo (the seed handbook, its labeled questions as one day of logs) through `nightly`."""
    from flows.nightly import nightly_flow

    cfg = load_config(DEMO_CONFIG)
    cfg.mining.min_count = cfg.mining.min_users = 1
    cfg.embed_batch_size = 4  # 17 chunks in 5 batches: on Ray, shards go to more than one worker
    cfg.labeled = []
    cfg.runner.kind = kind
    cfg.runner.num_cpus = 2
    work = tmp_path / kind
    work.mkdir()
    config = work / "config.yaml"
    config.write_text(yaml.safe_dump(cfg.model_dump(mode="json")), encoding="utf-8")
    log = questions_as_log(read_labeled(SEED / "questions.jsonl"), work / "log.jsonl", "2026-11-29T10:00:00")
    nightly_flow(corpus=str(SEED / "corpus.jsonl"), logs=str(log), config=str(config), out=str(work / "out"),
                 quiet=True)
    return current_run(work / "out")


def _manifest(run_dir: Path) -> dict[str, Any]:
    """The manifest's counts, without what names a run (ids, time, paths, tags)."""
    doc = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    index = {k: v for k, v in doc["index"].items() if k not in ("uri", "tag", "corpus")}
    mine = {k: v for k, v in doc["mine"].items() if k != "logs"}
    return {"index": index, "mine": mine, "plan": doc["plan"], "lexicon_hash": doc["lexicon_hash"]}


def test_ray_runner_publishes_what_the_default_runner_does(tmp_path: Path, prefect_harness: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect_ray import RayTaskRunner

    submitted: list[str] = []
    submit = RayTaskRunner.submit

    def record(self: RayTaskRunner, task: Any, parameters: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        submitted.append(task.name)
        return submit(self, task, parameters, *args, **kwargs)

    monkeypatch.setattr(RayTaskRunner, "submit", record)
    default = _nightly(tmp_path, "default")
    assert submitted == []
    ray = _nightly(tmp_path, "ray")  # under a root of its own: no shard of the default run's is there
    assert submitted.count("mine-logs") == 1 and submitted.count("embed") >= 2  # embedding shards fan out

    assert _manifest(ray) == _manifest(default)
    for name in TABLES:
        assert pq.read_table(ray / name).equals(pq.read_table(default / name)), name
    chunks = {run: pq.read_table(run / "chunks.parquet") for run in (default, ray)}
    assert chunks[ray].drop_columns(["vector"]).equals(chunks[default].drop_columns(["vector"]))
    vectors = {run: np.array(chunks[run].column("vector").to_pylist()) for run in (default, ray)}
    np.testing.assert_allclose(vectors[ray], vectors[default], atol=1e-5)


def test_a_shard_key_names_what_fixes_its_vectors(tmp_path: Path) -> None:
    from tasks.scale import ShardStore, model_ref

    store = ShardStore(tmp_path, 384)
    params: dict[str, Any] = {"texts": ["parental leave policy", "per diem in Lisbon"], "model": model_ref(""),
                              "model_path": "", "batch_size": 4, "dtype": "float32"}
    others = [{**params, "texts": params["texts"][::-1]}, {**params, "batch_size": 8},
              {**params, "model": model_ref("", "bfloat16"), "dtype": "bfloat16"}, {**params, "model": "/models/e5"}]
    assert store.key(dict(params)) == store.key(params)  # a new run (a new run id) finds the same key
    assert len({store.key(p) for p in (params, *others)}) == 5


def _shards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[str]]:
    """A TaskEmbedder keeping its shards in `tmp_path`, and six texts it embeds in three shards of one batch."""
    import tasks.scale

    monkeypatch.setattr(tasks.scale, "SHARD_BATCHES", 1)
    cfg = load_config(DEMO_CONFIG)
    cfg.embed_batch_size = 2
    texts = [f"{topic} in {office}" for topic in ("parental leave", "per diem rates", "remote work allowance")
             for office in ("Berlin", "Lisbon")]
    return tasks.scale.TaskEmbedder(cfg, store=tmp_path), texts


def test_a_cut_short_or_damaged_shard_is_embedded_again(tmp_path: Path, prefect_harness: None,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    embedder, texts = _shards(tmp_path, monkeypatch)
    first = embedder.encode(texts, quiet=True)
    files = sorted(tmp_path.glob("*.npz"))
    assert len(files) == 3
    cut, damaged, whole = files
    cut.write_bytes(cut.read_bytes()[:len(cut.read_bytes()) // 2])  # a write that a crash cut short
    raw = bytearray(damaged.read_bytes())
    raw[len(raw) // 2] ^= 0xFF  # a vector's byte flipped: the zip member's CRC no longer matches
    damaged.write_bytes(bytes(raw))
    whole.with_suffix(".tmp.npz").write_bytes(b"a killed write's temporary file")

    calls = _counting_model(monkeypatch)
    np.testing.assert_array_equal(embedder.encode(texts, quiet=True), first)
    assert calls == [2, 2], "the cut and the damaged shard are embedded again, the whole one read"
    np.testing.assert_array_equal(embedder.encode(texts, quiet=True), first)
    assert calls == [2, 2], "and written anew"


def test_embedding_shards_stay_under_the_root_and_go_when_no_longer_needed(
        tmp_path: Path, prefect_harness: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from schemas.publication import EMBED_CACHE
    from tasks.publish.root import prune

    cache = tmp_path / EMBED_CACHE
    embedder, texts = _shards(cache, monkeypatch)
    embedder.encode(texts[:2], quiet=True)
    stored = [p for p in cache.rglob("*") if p.is_file()]
    assert len(stored) == 1, "the shard's vectors are written under the root"

    old = time.time() - 20 * 86_400
    os.utime(stored[0], (old, old))
    embedder.encode(texts[:2], quiet=True)  # used again: its age starts anew
    assert prune(tmp_path, keep_runs=2, keep_rejected=1, cache_days=14) == []
    os.utime(stored[0], (old, old))
    embedder.encode(texts[2:4], quiet=True)
    assert prune(tmp_path, keep_runs=2, keep_rejected=1, cache_days=14) == [f"{EMBED_CACHE}/{stored[0].name}"]
    assert not stored[0].exists() and len(list(cache.glob("*.npz"))) == 1
    # a run that publishes its index: every shard is in the published index now
    assert len(prune(tmp_path, keep_runs=2, keep_rejected=1, cache_days=14, indexed=True)) == 1
    assert not any(cache.iterdir())


def test_a_ray_address_nobody_answers_at_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Ray client gives up on a dead address after half a minute with a ConnectionError (which the runner
    stands in for here): one line naming runner.address, not a traceback of the Ray client."""
    import prefect_ray

    from schemas.config import Runner
    from schemas.errors import ConfigError
    from tasks.scale import task_runner

    class DeadCluster:
        def __init__(self, **kwargs: Any) -> None:
            pass

        def __enter__(self) -> None:
            raise ConnectionError("ray client connection timeout")

        def __exit__(self, *exc: object) -> None:
            raise AssertionError("a runner that never started is not stopped")

    monkeypatch.setattr(prefect_ray, "RayTaskRunner", DeadCluster)
    runner = task_runner(Runner(kind="ray", address="ray://127.0.0.1:1"))
    with pytest.raises(ConfigError, match=r"runner.address ray://127.0.0.1:1: no Ray cluster answered \(ray client "
                                          r"connection timeout\); start it"):
        runner.__enter__()


KILLED_RUN = """
import os, sys
from tasks import embed, scale
scale.SHARD_BATCHES = 1
finished, encode = 0, embed.Embedder.encode
def killing(self, texts, label="embedding", quiet=False):
    global finished
    if finished == int(sys.argv[1]):
        os._exit(9)  # killed: no cleanup of any kind runs
    finished += 1
    return encode(self, texts, label, quiet)
embed.Embedder.encode = killing
from flows.index import index_flow
index_flow(corpus=sys.argv[2], config=sys.argv[3], out=sys.argv[4], run_date=sys.argv[5], quiet=True)
"""


def _index_config(tmp_path: Path) -> Path:
    """The demo config embedding in batches of 4: the seed handbook's 17 chunks in 5 batches."""
    cfg = load_config(DEMO_CONFIG)
    cfg.embed_batch_size = 4
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg.model_dump(mode="json")), encoding="utf-8")
    return path


def _counting_model(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of texts of each call of the model's `encode` from here on."""
    from tasks.embed import load_model

    model, calls = load_model(""), []
    encode = model.encode

    def counted(texts: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(len(texts))
        return encode(texts, *args, **kwargs)

    monkeypatch.setattr(model, "encode", counted)
    return calls


def test_a_killed_runs_finished_shards_are_kept_and_the_next_run_embeds_the_rest(
        tmp_path: Path, prefect_harness: None, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    from prefect.settings import PREFECT_API_URL

    from flows.index import index_flow
    from schemas.publication import EMBED_CACHE
    from tests.conftest import ROOT

    config, corpus, day = _index_config(tmp_path), SEED / "corpus.jsonl", "2026-11-29"
    killed = tmp_path / "resumed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
           "PREFECT_API_URL": str(PREFECT_API_URL.value())}
    proc = subprocess.run([sys.executable, "-c", KILLED_RUN, "2", str(corpus), str(config), str(killed), day],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 9, proc.stderr  # killed at its third shard, after two whole ones
    assert not (killed / "CURRENT").exists()

    import tasks.scale

    monkeypatch.setattr(tasks.scale, "SHARD_BATCHES", 1)
    calls = _counting_model(monkeypatch)
    index_flow(corpus=str(corpus), config=str(config), out=str(killed), run_date=day, quiet=True)
    assert calls == [4, 4, 1], "only the three shards the killed run did not finish are embedded"
    assert not any((killed / EMBED_CACHE).iterdir()), "its published index holds what the shards held"

    whole = tmp_path / "whole"
    index_flow(corpus=str(corpus), config=str(config), out=str(whole), run_date=day, quiet=True)
    assert calls[3:] == [4, 4, 4, 4, 1]
    runs = {out: current_run(out) for out in (killed, whole)}
    assert pq.read_table(runs[killed] / "chunks.parquet").equals(pq.read_table(runs[whole] / "chunks.parquet"))
    index = {out: {k: v for k, v in json.loads((run / "manifest.json").read_text(encoding="utf-8"))["index"].items()
                   if k not in ("uri", "tag", "corpus")} for out, run in runs.items()}
    assert index[killed] == index[whole]
