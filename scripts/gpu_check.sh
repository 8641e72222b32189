#!/usr/bin/env bash
# The model writer on the demo shapes against the rule writer, on a CUDA machine set up with
# scripts/setup.sh --gpu (no network needed with a local model folder). Usage and output: benchmarks/gpu_check.py.
#   scripts/gpu_check.sh /models/Qwen3-8B
#   scripts/gpu_check.sh Qwen/Qwen3-8B --openai http://127.0.0.1:8000/v1
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv-gpu/bin/python
[ -x "$PY" ] || PY=.venv/bin/python
exec timeout 600 "$PY" -m benchmarks.gpu_check "$@"
