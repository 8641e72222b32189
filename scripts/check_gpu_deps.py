"""Resolve the GPU set-up's dependencies for a CUDA Linux machine, without installing them.

    python3 scripts/check_gpu_deps.py [--json FILE]

Runs uv's resolver (installed into a throwaway venv from the package index) on pyproject.toml with the `gpu`
extra, for CPython 3.11 on manylinux_2_28 x86_64, against PyPI. Fails (exit 1) when planbake's requirements hold
vLLM below the newest release that resolves on its own, or when torch would not be a CUDA build. Prints what it
found, and why a newer published vLLM, if any, does not resolve even alone. Downloads metadata only; needs the
package index, so it is not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INDEX = "https://pypi.org/simple"
TARGET = ["--python-version", "3.11", "--python-platform", "x86_64-manylinux_2_28"]


def resolve(uv: Path, inputs: list[str], extra: list[str]) -> tuple[dict[str, str], str]:
    """Pinned versions by package name, or ({}, the resolver's reason)."""
    out = subprocess.run([str(uv), "pip", "compile", "--no-config", "--no-header", "--index-url", INDEX,
                          *TARGET, *extra, *inputs], capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        return {}, " ".join(out.stderr.split())
    pins = dict(m.groups() for m in re.finditer(r"^([A-Za-z0-9_.-]+)==(\S+)", out.stdout, re.MULTILINE))
    return {k.lower(): v for k, v in pins.items()}, ""


def published(name: str) -> list[str]:
    """Final release versions on the index, oldest first (pre-releases and post-releases left out)."""
    req = urllib.request.Request(f"{INDEX}/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        versions = json.load(r)["versions"]
    releases = [v for v in versions if re.fullmatch(r"[0-9]+(\.[0-9]+)*", v)]
    return sorted(releases, key=lambda v: tuple(int(n) for n in v.split(".")))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", type=Path, help="also write the findings here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "venv", tmp], check=True)
        subprocess.run([f"{tmp}/bin/pip", "install", "--quiet", "uv"], check=True)
        uv = Path(tmp) / "bin" / "uv"
        with tempfile.NamedTemporaryFile("w", suffix=".in") as alone:
            alone.write("vllm\n")
            alone.flush()
            newest_alone, _ = resolve(uv, [alone.name], [])
            ours, why_not = resolve(uv, ["pyproject.toml"], ["--extra", "gpu"])
            newest = published("vllm")[-1]
            why_newest = ""
            if newest != newest_alone.get("vllm"):
                alone.seek(0)
                alone.truncate()
                alone.write(f"vllm=={newest}\n")
                alone.flush()
                _, why_newest = resolve(uv, [alone.name], [])
    found = {
        "vllm_published": newest,
        "vllm_resolvable_alone": newest_alone.get("vllm"),
        "why_newest_does_not_resolve": why_newest,
        "vllm_with_planbake": ours.get("vllm"),
        "torch_with_planbake": ours.get("torch"),
        "cuda_runtime": next((f"{k}=={v}" for k, v in sorted(ours.items()) if k.startswith("nvidia-cuda-runtime")),
                             None),
        "packages": len(ours),
    }
    problems = []
    if not newest_alone:
        problems.append("vLLM alone does not resolve for this target: check the index and the target platform")
    if why_not:
        problems.append(f"planbake[gpu] does not resolve: {why_not}")
    elif found["vllm_with_planbake"] != found["vllm_resolvable_alone"]:
        problems.append(f"planbake[gpu] holds vLLM at {found['vllm_with_planbake']}, below "
                        f"{found['vllm_resolvable_alone']}: loosen the requirement that caps it")
    if ours and ("+cpu" in (found["torch_with_planbake"] or "+cpu") or not found["cuda_runtime"]):
        problems.append(f"torch {found['torch_with_planbake']} would not be a CUDA build (no nvidia-cuda-runtime)")
    found["problems"] = problems
    print(json.dumps(found, indent=2))
    if args.json:
        args.json.write_text(json.dumps(found, indent=2) + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
