"""Scale-out: the nightly flow with the embedding and mining tasks on a local Ray cluster publishes the same
index, shapes, templates and cache as with the default runner."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from prefect.settings import PREFECT_TASKS_REFRESH_CACHE, temporary_settings

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
    with temporary_settings({PREFECT_TASKS_REFRESH_CACHE: True}):  # both runners embed; no cached vectors
        default = _nightly(tmp_path, "default")
        assert submitted == []
        ray = _nightly(tmp_path, "ray")
    assert submitted.count("mine-logs") == 1 and submitted.count("embed") >= 2  # embedding shards fan out

    assert _manifest(ray) == _manifest(default)
    for name in TABLES:
        assert pq.read_table(ray / name).equals(pq.read_table(default / name)), name
    chunks = {run: pq.read_table(run / "chunks.parquet") for run in (default, ray)}
    assert chunks[ray].drop_columns(["vector"]).equals(chunks[default].drop_columns(["vector"]))
    vectors = {run: np.array(chunks[run].column("vector").to_pylist()) for run in (default, ray)}
    np.testing.assert_allclose(vectors[ray], vectors[default], atol=1e-5)


def test_embedding_is_cached_on_its_inputs(prefect_harness: None) -> None:
    from tasks.scale import embed_task, model_ref

    fresh = f"parental leave policy, note {uuid.uuid4().hex}"
    params: dict[str, Any] = {"texts": [fresh, "per diem in Lisbon"], "model": model_ref(""), "model_path": "",
                              "batch_size": 4}
    first = embed_task(**params, return_state=True)
    again = embed_task(**params, return_state=True)
    other = embed_task(**{**params, "batch_size": 8}, return_state=True)
    assert first.name == "Completed" and again.name == "Cached" and other.name == "Completed"
    np.testing.assert_array_equal(again.result(), first.result())


def test_embedding_results_stay_under_the_root_and_old_ones_are_pruned(tmp_path: Path, prefect_harness: None) -> None:
    from schemas.publication import EMBED_CACHE
    from tasks.publish.root import prune
    from tasks.scale import TaskEmbedder

    cache = tmp_path / EMBED_CACHE
    embedder = TaskEmbedder(load_config(DEMO_CONFIG), results=cache)
    texts = [f"remote work allowance, note {uuid.uuid4().hex}", "per diem in Warsaw"]
    first = embedder.encode(texts, quiet=True)
    stored = [p for p in cache.rglob("*") if p.is_file()]
    assert stored, "the embedding task's result is written under the root"
    np.testing.assert_array_equal(embedder.encode(texts, quiet=True), first)

    old = time.time() - 20 * 86_400
    os.utime(stored[0], (old, old))
    fresh = embedder.encode(["sick leave in Toronto"], quiet=True)
    assert fresh.shape == (1, 384)
    gone = prune(tmp_path, keep_runs=2, keep_rejected=1, cache_days=14)
    assert gone == [f"{EMBED_CACHE}/{stored[0].relative_to(cache)}"]
    assert not stored[0].exists() and len([p for p in cache.rglob("*") if p.is_file()]) == len(stored)


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
