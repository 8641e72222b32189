#!/usr/bin/env bash
# Create .venv in the repository root and install planbake with its dev tools.
# CPU torch goes in first: a plain "torch" requirement would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/pip install --quiet --upgrade pip
# Where pip's own index serves the CUDA build (PyPI's Linux wheel), point TORCH_INDEX_URL at a CPU index,
# e.g. https://download.pytorch.org/whl/cpu; by default pip's configured index decides.
.venv/bin/pip install --quiet ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} "torch==2.13.0"
.venv/bin/pip install --quiet -e ".[dev]"
