#!/usr/bin/env bash
# Create a venv in the repository root and install planbake with its dev tools.
#   scripts/setup.sh        .venv: the CPU build of torch first (a plain "torch" requirement would pull a
#                           multi-GB CUDA build), then planbake[dev]
#   scripts/setup.sh --gpu  .venv-gpu: the current vLLM release with the CUDA build of torch it pins, then
#                           planbake[gpu,dev]; checks that torch is a CUDA build (for a CUDA machine)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ "${1:-}" = "--gpu" ]; then
    VENV=.venv-gpu
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --upgrade pip
    # vLLM first, alone: the torch it pins (a CUDA build from PyPI) decides, and nothing else holds vLLM back
    "$VENV/bin/pip" install --quiet "vllm>=0.33"
    "$VENV/bin/pip" install --quiet -e ".[gpu,dev]"
    "$VENV/bin/python" - <<'PYCHECK'
import importlib.metadata as md
import sys

import torch

vllm = md.version("vllm")
if not torch.version.cuda:
    sys.exit(f".venv-gpu: torch {torch.__version__} is a CPU build; vLLM {vllm} needs its CUDA build. Remove "
             ".venv-gpu and run scripts/setup.sh --gpu where pip's index is PyPI (no CPU-only index or "
             "constraint on torch)")
print(f".venv-gpu: vLLM {vllm}, torch {torch.__version__} (CUDA {torch.version.cuda}); "
      f"GPUs torch sees: {torch.cuda.device_count()}")
PYCHECK
    exit 0
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
# Where pip's own index serves the CUDA build (PyPI's Linux wheel), point TORCH_INDEX_URL at a CPU index,
# e.g. https://download.pytorch.org/whl/cpu; by default pip's configured index decides.
.venv/bin/pip install --quiet ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} "torch==2.13.0"
.venv/bin/pip install --quiet -e ".[dev]"
