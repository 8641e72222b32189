"""The model writer on the demo shapes, against the rule writer: for a CUDA machine (vLLM) or a model server.

    scripts/gpu_check.sh /models/Qwen3-8B                        # vLLM, offline, a local model folder
    scripts/gpu_check.sh my-model --openai http://127.0.0.1:8000/v1   # an OpenAI-compatible server (vllm serve)

Publishes the demo data with the rule writer, then plans the same shapes with the model writer (a second
publication under the same root, forced past the gate, since the check compares the writers rather than guard a
service), and prints, and writes as JSON: the validity rate (shapes whose model plan passed validation and the
constraint check, of the shapes asked), rejected outputs by kind, shapes per second and output tokens per second
of the model's calls, and the share of shapes whose route agrees with the rule writer's.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import flows.run
from flows import stages
from flows.run import run_stages
from schemas.arrow import read_published
from schemas.config import Config, load_config
from schemas.files import TEMPLATES
from tasks.plan.model_writer import Completion, Generate

DEMO = Path(__file__).resolve().parent.parent / "data" / "configs" / "demo.yaml"


@dataclass
class Calls:
    """What the model's batches took: prompts, output tokens and seconds."""

    prompts: int = 0
    tokens: int = 0
    seconds: float = 0.0

    def timed(self, generate: Generate) -> Generate:
        def run(batch: list[list[dict[str, str]]]) -> list[Completion]:
            start = time.perf_counter()
            answers = generate(batch)
            self.seconds += time.perf_counter() - start
            self.prompts += len(batch)
            self.tokens += sum(a.tokens for a in answers)
            return answers

        return run


def templates(run: Path) -> dict[str, dict[str, Any]]:
    return {t["shape_id"]: t for t in read_published(run, TEMPLATES).to_pylist()}


def _unchecked(config: Config, writer: str) -> None:
    """A stand-in model has no model folder or GPU to check."""


def check(config: Config, writer: str, out: Path, quiet: bool = True,
          generator: Callable[[Config, str], Generate] | None = None) -> dict[str, Any]:
    """Both writers over the config's corpus and logs under `out`; `generator` stands in for the model's."""
    rules = run_stages(["index", "mine", "plan"], config=config, out=str(out), quiet=quiet, writer="rules")
    calls = Calls()
    make = generator or stages.model_generator
    with mock.patch.object(stages, "model_generator", lambda cfg, w: calls.timed(make(cfg, w))), \
            mock.patch.object(flows.run, "check_model", flows.run.check_model if generator is None else _unchecked):
        model = run_stages(["plan"], config=config, out=str(out), quiet=quiet, writer=writer, force=True)
    before, after = templates(Path(rules["publication"])), templates(Path(model["publication"]))
    asked = [t for t in after.values() if t["writer"] == writer or t["fallback"]]
    sound = [t for t in asked if t["writer"] == writer and t["valid"] and t["check_ok"]]
    both = [s for s in after if s in before]
    plan = model["stages"]["plan"] if "stages" in model else model.get("plan", {})
    return {
        "writer": writer,
        "model": config.planning.model,
        "shapes": len(after),
        "asked": len(asked),
        "validity": round(len(sound) / len(asked), 3) if asked else None,
        "fallbacks": plan.get("fallbacks"),
        "rejections": plan.get("rejections", {}),
        "model_seconds": round(calls.seconds, 2),
        "shapes_per_second": round(len(asked) / calls.seconds, 2) if calls.seconds else None,
        "output_tokens_per_second": round(calls.tokens / calls.seconds, 1) if calls.seconds else None,
        "route_agreement": round(sum(before[s]["route"] == after[s]["route"] for s in both) / len(both), 3)
        if both else None,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="planning.model: a local model folder (vLLM) or the server's model name")
    ap.add_argument("--openai", metavar="URL", help="an OpenAI-compatible endpoint instead of vLLM offline")
    ap.add_argument("--config", type=Path, default=DEMO)
    ap.add_argument("--out", type=Path, help="publication root (default: a temporary folder)")
    ap.add_argument("--json", type=Path, default=Path("gpu_check.json"), help="where the figures go")
    args = ap.parse_args(argv)
    config = load_config(args.config)
    config.planning.model = args.model
    if args.openai:
        config.planning.openai_base_url = args.openai
    with tempfile.TemporaryDirectory() as tmp:
        found = check(config, "openai" if args.openai else "vllm", args.out or Path(tmp), quiet=False)
    text = json.dumps(found, indent=2)
    print(text)
    args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
