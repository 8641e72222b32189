"""Choose a config's hand-set routing settings on the dev half of a labeled set, by a small coordinate search.

    .venv/bin/python -m benchmarks.tune_on_dev --config data/configs/multihop_rag.yaml \\
        --set ../shared/benchmarks/multihop_rag_500 --results /tmp/tune      # add --write to update the config

A labeled set is a folder with `corpus.jsonl`, `questions.jsonl` and `split.json` (its dev and test halves). The
candidates are the config's current values, then each setting of the grid moved alone to each of its alternatives,
the others kept (by default `planning.split_floor`, `mining.null_floor` and `planning.evidence_margin`, each one
step below and above its current value, inside the setting's range; `--grid` names others). A setting's kind in
schemas.config decides its alternatives when `--grid` names it without values:
- a decimal setting: one step below and above its current value (STEPS; 0.05 where none is set);
- an integer setting: the values of CHOICES other than its current one, else its half and its double. For
  `planning.hybrid_depth` they are 20, 50, 100 and 200: the default, then about twice as deep each time up to
  twice the MultiHop-RAG value. Depth changes the ranking only a little at a time, so nearer values would cost an
  eval each for no new information; a depth under 20 is hardly deeper than a step's own search (the budget, 4 to
  10); and 200 already takes in half of the MultiHop-RAG corpus unfiltered and every chunk of any one source;
- a list setting (such as `planning.frame_words`): its default ([]), when that is not its current value; a word
  list has no steps between, so the procedure asks only whether the hand-written list is worth keeping.

  .venv/bin/python -m benchmarks.tune_on_dev --config data/configs/multihop_rag.yaml \\
      --set ../shared/benchmarks/multihop_rag_500 --grid planning.hybrid_depth planning.frame_words

Each candidate runs
`planbake eval --in-sample --half dev --budget 4 --json` on a copy of the config in a temporary folder (relative
paths in it made absolute). The routing settings decide what is mined and routed, so nothing short of a new eval
scores them (the tools that re-read an eval publication, such as `sweep_hybrid`, keep its routes as published).

The chosen candidate has the highest routed part coverage on dev among those where routed finds at least what one
search finds, in part coverage, on every question type; a tie keeps the current values, and so does a grid where
no candidate holds. The table of every candidate is printed; the config changes only with `--write` (the values
edited in place, its comments kept). Run it again on the config it wrote (the same `--results` re-reads the
candidates already scored) until the current values win: a coordinate search's first move can make another
setting's alternative the better one. Report the chosen settings on the test half, which took no part in the choice.
A corpus without such a labeled set needs none of this: the defaults of docs/configuration.md hold there.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml
from pydantic.fields import FieldInfo

from schemas.config import Config

DEFAULT_SETTINGS = ("planning.split_floor", "mining.null_floor", "planning.evidence_margin")
STEPS = {"planning.split_floor": 0.04, "mining.null_floor": 0.05, "planning.evidence_margin": 0.25}
CHOICES: dict[str, list[float]] = {"planning.hybrid_depth": [20, 50, 100, 200]}  # an integer's candidates (above)
PATH_KEYS = ("corpus", "logs", "model_path")  # resolved against the config's folder (schemas.config.load_config)

Value = float | list[str]  # a decimal or integer setting, or a word list
Values = dict[str, Value]


def field(key: str) -> FieldInfo:
    """The field of `section.name` in schemas.config."""
    section, name = key.split(".")
    return Config.model_fields[section].annotation.model_fields[name]  # type: ignore[union-attr]


def read_current(raw: Mapping[str, Any], settings: Sequence[str]) -> Values:
    """Each setting's value in a config's YAML mapping, else its default in schemas.config: a list, an int for an
    integer field, else a float."""
    current: Values = {}
    for key in settings:
        section, name = key.split(".")
        value = (raw.get(section) or {}).get(name, field(key).get_default(call_default_factory=True))
        current[key] = list(value) if isinstance(value, list) else int(value) if field(key).annotation is int \
            else float(value)
    return current


def bounds(key: str) -> tuple[float, float]:
    """A setting's range, from the ge/le of its field in schemas.config (unbounded sides: +-inf)."""
    low, high = float("-inf"), float("inf")
    for meta in field(key).metadata:
        low = float(getattr(meta, "ge", low) if getattr(meta, "ge", None) is not None else low)
        high = float(getattr(meta, "le", high) if getattr(meta, "le", None) is not None else high)
    return low, high


def default_grid(current: Values) -> dict[str, list[Value]]:
    """Each setting's alternatives (the module's docstring), the ones outside its range left out: a list its
    default; an integer the values of CHOICES, else its half and double; a decimal one step below and above."""
    grid: dict[str, list[Value]] = {}
    for key, value in current.items():
        if isinstance(value, list):
            default = field(key).get_default(call_default_factory=True)
            grid[key] = [default] if default != value else []
            continue
        low, high = bounds(key)
        if isinstance(value, int):
            alts = CHOICES.get(key, [value // 2, value * 2])
        else:
            step = STEPS.get(key, 0.05)
            alts = [round(value - step, 4), round(value + step, 4)]
        grid[key] = [v for v in alts if low <= v <= high and v != value]
    return grid


def candidates(current: Values, grid: Mapping[str, Sequence[Value]]) -> list[Values]:
    """The current values first, then each setting moved alone to each of its alternatives."""
    out = [dict(current)]
    for key, alternatives in grid.items():
        for v in alternatives:
            moved = {**current, key: v}
            if moved not in out:
                out.append(moved)
    return out


def per_type(doc: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """Question type -> (routed, one search) part coverage, from an eval's JSON document."""
    cov: dict[str, dict[str, float]] = {}
    for row in doc["rows"]:
        if row["shape"] != "ALL":
            cov.setdefault(row["shape"], {})[row["system"]] = row["part_coverage"]
    return {shape: (c["routed"], c["one-search"]) for shape, c in cov.items()}


def overall(doc: Mapping[str, Any], system: str = "routed") -> float:
    return float(next(r["part_coverage"] for r in doc["rows"] if r["system"] == system and r["shape"] == "ALL"))


def holds(doc: Mapping[str, Any]) -> bool:
    """Routed finds at least what one search finds, in part coverage, on every question type."""
    return all(routed >= one for routed, one in per_type(doc).values())


def choose(docs: Sequence[Mapping[str, Any] | None], current: int = 0) -> int:
    """The index of the chosen candidate: the highest routed part coverage among those that hold on every type;
    a tie, or no candidate that holds, keeps `current`. A None document (its eval failed) is never chosen."""
    best, mine = current, docs[current]
    best_score = overall(mine) if mine is not None and holds(mine) else None
    for i, doc in enumerate(docs):
        if doc is None or i == current or not holds(doc):
            continue
        if best_score is None or overall(doc) > best_score:
            best, best_score = i, overall(doc)
    return best


def candidate_yaml(raw: Mapping[str, Any], config: Path, values: Values, folder: Path) -> Path:
    """A copy of the config with `values` set, written in `folder`; its relative paths made absolute."""
    data = json.loads(json.dumps(raw))  # a deep copy
    for key in PATH_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value and not Path(value).is_absolute() and "://" not in value:
            data[key] = str((config.parent / value).resolve())
    if data.get("labeled"):
        data["labeled"] = [x if Path(x).is_absolute() else str((config.parent / x).resolve()) for x in data["labeled"]]
    for key, value in values.items():
        section, name = key.split(".")
        data.setdefault(section, {})[name] = value
    path = folder / f"candidate-{label(values)}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def label(values: Values) -> str:
    return hashlib.sha256(json.dumps(sorted(values.items())).encode()).hexdigest()[:10]


def run_eval(planbake: list[str], config: Path, labeled_set: Path, half: str, budget: int, results: Path,
             values: Values, retries: int = 2) -> dict[str, Any] | None:
    """One candidate's eval JSON document, re-read from `results` when an earlier run left it there; a failed
    eval is run again up to `retries` times."""
    done = results / f"{half}-b{budget}-{label(values)}.json"
    if done.exists():
        return dict(json.loads(done.read_text(encoding="utf-8")))
    cmd = [*planbake, "eval", "--config", str(config), "--corpus", str(labeled_set / "corpus.jsonl"),
           "--questions", str(labeled_set / "questions.jsonl"), "--in-sample", "--half", half,
           "--budget", str(budget), "--json"]
    for attempt in range(1, retries + 2):  # a loaded machine's temporary Prefect server can fail to answer
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode == 0:
            break
        print(f"eval failed for {values} (attempt {attempt}): {proc.stderr.strip()[-500:]}", file=sys.stderr,
              flush=True)
    else:
        return None
    doc = dict(json.loads(proc.stdout))
    doc["tune_values"] = values
    done.write_text(json.dumps(doc), encoding="utf-8")
    return doc


def table(cands: Sequence[Values], docs: Sequence[Mapping[str, Any] | None], chosen: int) -> list[str]:
    """Markdown rows: each candidate's values, routed and one-search part coverage overall and per type."""
    keys = list(cands[0])
    shapes = sorted({s for d in docs if d is not None for s in per_type(d)})
    lines = ["| " + " | ".join([f"`{k}`" for k in keys] + ["routed", "one search"] + shapes +
                               ["every type", ""]) + " |",
             "|" + "---:|" * (len(keys) + 2) + "---|" * len(shapes) + "---|---|"]
    for i, (values, doc) in enumerate(zip(cands, docs, strict=True)):
        cells = [shown(values[k]) for k in keys]
        if doc is None:
            cells += ["failed", ""] + [""] * len(shapes) + ["", ""]
        else:
            types = per_type(doc)
            cells += [f"{overall(doc):.3f}", f"{overall(doc, 'one-search'):.3f}"]
            cells += [f"{types[s][0]:.3f} / {types[s][1]:.3f}" if s in types else "" for s in shapes]
            cells += ["yes" if holds(doc) else "no", ("chosen" if i == chosen else "") + (" (current)" if i == 0
                                                                                          else "")]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def shown(value: Value) -> str:
    """A value in the table: a number as `%g`, a list as its length."""
    if isinstance(value, list):
        return f"[{len(value)} words]" if value else "[]"
    return f"{value:g}"


def dumped(value: Value) -> str:
    """A value as YAML text: a number as `%g`, a list in flow style."""
    if isinstance(value, list):
        return yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()
    return f"{value:g}"


def write_values(config: Path, values: Values) -> None:
    """Set each `section.name` in the config file by editing its text (comments kept): the value after `name:`
    inside the section's flow mapping (`planning: {...}`, over one line or several) or block under `section:`; a
    list's value is a flow list (`[a, b]`, over one line or several)."""
    text = config.read_text(encoding="utf-8")
    old_value = r"(?:\[[^\]]*\]|[-+0-9.eE]+)"  # a flow list or a number
    for key, v in values.items():
        section, name = key.split(".")
        value = dumped(v)
        repl = value.replace("\\", "\\\\")  # as re.subn's replacement
        head = re.search(rf"^{re.escape(section)}:[ \t]*", text, re.M)
        if head is None:
            text = text.rstrip("\n") + f"\n{section}: {{{name}: {value}}}\n"
            continue
        start = head.end()
        if text.startswith("{", start):
            depth, end = 0, start
            for end in range(start, len(text)):
                depth += {"{": 1, "}": -1}.get(text[end], 0)
                if depth == 0:
                    break
            body = text[start:end + 1]
            new, n = re.subn(rf"(?<![\w.]){re.escape(name)}:\s*{old_value}", f"{name}: {repl}", body, count=1)
            if n == 0:
                new = "{" + f"{name}: {value}, " + body[1:]
        else:
            nxt = re.search(r"^\S", text[start:], re.M)  # the next top-level key
            end_at = start + (nxt.start() if nxt else len(text) - start)
            body = text[start:end_at]
            new, n = re.subn(rf"^([ \t]+){re.escape(name)}:[ \t]*{old_value}", rf"\g<1>{name}: {repl}", body,
                             count=1, flags=re.M)
            if n == 0:
                new = body.rstrip("\n") + f"\n  {name}: {value}\n"
            text = text[:start] + new + text[end_at:]
            continue
        text = text[:start] + new + text[start + len(body):]
    raw = yaml.safe_load(text)
    if read_current(raw, list(values)) != values:
        raise SystemExit(f"{config}: could not set {values} by editing its text; set them by hand")
    config.write_text(text, encoding="utf-8")


def parse_grid(items: Sequence[str], current: Values) -> dict[str, list[Value]]:
    """`--grid planning.split_floor=0.44,0.52 planning.hybrid_depth=50,200 planning.frame_words`: the alternatives
    of each named setting (a number's type is its setting's); a setting named alone gets its default grid's."""
    grid: dict[str, list[Value]] = {}
    for item in items:
        key, _, alts = item.partition("=")
        if not alts:
            grid[key] = default_grid({key: current[key]})[key]
        elif isinstance(current[key], list):
            raise SystemExit(f"--grid {item}: a list setting's only alternative is its default; name it alone")
        else:
            kind = int if field(key).annotation is int else float
            grid[key] = [kind(v) for v in alts.split(",") if v]
    return grid


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, required=True)
    ap.add_argument("--set", type=Path, required=True, dest="labeled_set",
                    help="folder with corpus.jsonl, questions.jsonl and split.json")
    ap.add_argument("--grid", nargs="*", default=None,
                    help="SETTING=v1,v2 (SETTING alone: one step either side, an integer's CHOICES, a list's "
                    "default); default: the three routing settings")
    ap.add_argument("--budget", type=int, default=4)
    ap.add_argument("--half", default="dev", choices=["dev", "test"])
    ap.add_argument("--results", type=Path, default=None,
                    help="keep each candidate's eval JSON here; a later run re-reads them (default: a temporary "
                    "folder)")
    ap.add_argument("--jobs", type=int, default=1, help="evals at once")
    ap.add_argument("--planbake", default=f"{sys.executable} -m planbake.cli", help="the command that runs planbake")
    ap.add_argument("--write", action="store_true", help="set the chosen values in the config file")
    args = ap.parse_args(argv)
    if args.half == "test":
        print("warning: choosing on the test half leaves no clean half to report on", file=sys.stderr)
    for name in ("corpus.jsonl", "questions.jsonl", "split.json"):
        if not (args.labeled_set / name).is_file():
            raise SystemExit(f"{args.labeled_set}: no {name}; a labeled set needs corpus, questions and split")
    raw = yaml.safe_load(args.config.read_text(encoding="utf-8")) or {}
    settings = [g.partition("=")[0] for g in args.grid] if args.grid else list(DEFAULT_SETTINGS)
    current = read_current(raw, settings)
    grid = parse_grid(args.grid, current) if args.grid else default_grid(current)
    cands = candidates(current, grid)
    print(f"{len(cands)} candidates on the {args.half} half, budget {args.budget}", flush=True)
    with tempfile.TemporaryDirectory(prefix="tune-on-dev-") as tmp:
        results = args.results or Path(tmp)
        results.mkdir(parents=True, exist_ok=True)

        def one(values: Values) -> dict[str, Any] | None:
            path = candidate_yaml(raw, args.config.resolve(), values, Path(tmp))
            doc = run_eval(args.planbake.split(), path, args.labeled_set, args.half, args.budget, results, values)
            done = ", ".join(f"{k} {shown(v)}" for k, v in values.items())
            print(f"done: {done}" + (f", routed {overall(doc):.3f}" if doc else " (failed)"), flush=True)
            return doc
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            docs = list(pool.map(one, cands))
    chosen = choose(docs)
    print()
    print("\n".join(table(cands, docs, chosen)))
    print(f"\nchosen: {cands[chosen]}" + (" (the current values)" if chosen == 0 else ""))
    if args.write and chosen != 0:
        write_values(args.config, {k: v for k, v in cands[chosen].items() if v != current[k]})
        print(f"written to {args.config}")


if __name__ == "__main__":
    main()
