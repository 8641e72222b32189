"""Wrong-plan rate of a similarity-keyed plan cache against the constraint-keyed `PlanCache`, side by side.

    .venv/bin/python -m benchmarks.bench_similarity_cache [--publication DIR] [--pairs-per-shape N] [--json]

Question pairs that differ only in one constraint value (an office, a year, a parent or staff qualifier):

* demo pairs: for every shape of the demo log generator (data/demo/generate_logs.py, the ground truth of
  data/demo/log_shapes.json) that has a constraint slot, N pairs per shape; each pair is one phrasing filled
  twice with the same values except one slot (office, office2, year, year2, parent or staff) changed to another
  value of the generator's lists. Years are written as the phrasing writes them ("in 2026", "the 2026"), with
  no relative forms and no office aliases, so the two texts differ only in the constraint;
* seed pairs: every question of ../shared/benchmarks/seed_handbook/questions.jsonl that names an office or a
  year, with that office (or year) replaced by each other demo office (year 2024-2027), one at a time.

The ground truth of a question is its shape (the generator's shape, or the seed question's id) and the multiset
of its constraint values (offices, years and qualifiers, canonical: "interns" is the qualifier "intern"; seed
questions: offices and years only).

Both caches answer every second question of a pair (the asked question); the first (the cached question) is what
a similarity cache learned from the log:

* similarity-keyed cache, in two settings: "pair" holds only the asked question's partner (the seed's case: two
  questions that differ in their year); "pool" holds every cached question of every pair of the same source
  (demo or seed), and the nearest one (all-MiniLM-L6-v2 through `tasks.embed.Embedder`, cosine of unit
  vectors) is served. A lookup hits when the best cosine is at least the threshold (0.8, 0.9, 0.95), and serves
  a wrong plan when the served question's shape or constraint values differ from the asked question's;
* constraint-keyed cache: `schemas.cache.PlanCache.lookup(question, now=2026-11-25)` on a real publication (the
  nightly pipeline on the embedded demo; built with `planbake nightly` into a temporary directory unless
  `--publication` names one). A hit serves a wrong plan when the constraints it keyed on differ from the
  asked question's, or when its plan's filters name a value the question does not.

Hit rate and wrong-plan rate are over all asked questions; "wrong / hits" is the share of hits that were wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench_mining import load_generator
from schemas.cache import LookupResult, PlanCache
from schemas.constraint import QUALIFIER

ROOT = Path(__file__).resolve().parent.parent
SEED_QUESTIONS = ROOT / "tests" / "fixtures" / "seed_handbook" / "questions.jsonl"  # the shipped copy
NOW = date(2026, 11, 25)  # the demo logs' week: "this year" is 2026
THRESHOLDS = (0.8, 0.9, 0.95)
SEED = 20261207
VARIED = ("office", "office2", "year", "year2", "parent", "staff")
# The generator's qualifier phrases as the demo lexicon names them (data/configs/demo.yaml `qualifiers`).
QUALIFIER_OF = {"second parent": "second parent", "birth parent": "birth parent", "adoptive parent": "adoptive",
                "foster parent": "foster", "part-time employees": "part-time", "part-time staff": "part-time",
                "interns": "intern", "contractors": "contractor"}
YEAR_STYLES = {"year": "{}", "in_year": "in {}", "the_year": "the {}", "since_year": "since {}"}

Truth = tuple[str, tuple[tuple[str, str], ...]]  # shape, sorted constraint values


@dataclass
class Pair:
    source: str  # demo | seed
    shape: str
    varied: str  # office | year | qualifier
    cached: str
    asked: str
    cached_truth: Truth
    asked_truth: Truth


def truth(shape: str, values: dict[str, str]) -> Truth:
    """Ground truth from the filled slot values: ("office", "Berlin"), ("year", "2026"), ("qualifier", ...)."""
    out: list[tuple[str, str]] = []
    for slot, value in values.items():
        kind = slot.rstrip("2")
        if kind in ("office", "year"):
            out.append((kind, value))
        elif kind in ("parent", "staff"):
            out.append((QUALIFIER, QUALIFIER_OF[value]))
    return shape, tuple(sorted(out))


def year_slot(slot: str) -> str:
    """A phrasing's slot with the year styles folded together ("in_year2" -> "year2")."""
    return "year2" if slot.rstrip("2") in YEAR_STYLES and slot.endswith("2") else (
        "year" if slot in YEAR_STYLES else slot)


def render(phrasing: str, values: dict[str, str]) -> str:
    """A phrasing filled with canonical values; year slots in the phrasing's style, never relative."""
    filled: dict[str, str] = {}
    for slot in re.findall(r"\{(\w+)\}", phrasing):
        style = slot.rstrip("2")
        if style in YEAR_STYLES:
            filled[slot] = YEAR_STYLES[style].format(values["year2" if slot.endswith("2") else "year"])
        else:
            filled[slot] = values[slot]
    return phrasing.format(**filled)


def demo_pairs(per_shape: int, seed: int) -> list[Pair]:
    gen: Any = load_generator()
    rng = random.Random(seed)
    pools: dict[str, list[str]] = {"office": list(gen.OFFICES), "year": [str(y) for y in gen.YEARS],
                                   "parent": list(gen.PARENTS), "staff": list(gen.STAFF),
                                   "n_days": list(gen.N_DAYS_CLAIMED), "n_weeks": list(gen.N_WEEKS_CLAIMED),
                                   "amount": list(gen.AMOUNTS_CLAIMED)}
    pairs: list[Pair] = []
    for shape in gen.SHAPES:
        slots = sorted({year_slot(s) for s in re.findall(r"\{(\w+)\}", shape.phrasings[0])})
        variable = [s for s in slots if s in VARIED]
        if not variable:
            continue
        for n in range(per_shape):
            phrasing = shape.phrasings[n % len(shape.phrasings)]
            values: dict[str, str] = {}
            for kind in ("office", "year"):
                if kind in slots:
                    k = 2 if f"{kind}2" in slots else 1
                    picked = rng.sample(pools[kind], k)
                    if kind == "year":
                        picked.sort()
                    values[kind] = picked[0]
                    if k == 2:
                        values[f"{kind}2"] = picked[1]
            for kind in ("parent", "staff", "n_days", "n_weeks", "amount"):
                if kind in slots:
                    values[kind] = rng.choice(pools[kind])
            slot = variable[n % len(variable)]
            kind = slot.rstrip("2")
            taken = {v for s, v in values.items() if s.rstrip("2") == kind}
            other = dict(values)
            other[slot] = rng.choice([v for v in pools[kind] if v not in taken])
            if kind == "year" and "year2" in other and int(other["year"]) > int(other["year2"]):
                continue  # keep "between 2025 and 2026" in order, as the generator writes it
            varied = "qualifier" if kind in ("parent", "staff") else kind
            pairs.append(Pair("demo", shape.name, varied, render(phrasing, values), render(phrasing, other),
                              truth(shape.name, values), truth(shape.name, other)))
    return pairs


def seed_pairs(path: Path, offices: list[str], years: list[str]) -> list[Pair]:
    """Each seed question naming an office or a year, with one of them replaced by every other value."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: the seed questions are missing; restore tests/fixtures/seed_handbook")
    pairs: list[Pair] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        question, shape = row["question"], f"seed-{row['id']}"

        def named(text: str) -> dict[str, str]:
            found: dict[str, str] = {}
            for i, office in enumerate(o for o in offices if re.search(rf"\b{o}\b", text)):
                found["office" + ("2" if i else "")] = office
            for i, year in enumerate(y for y in years if re.search(rf"\b{y}\b", text)):
                found["year" + ("2" if i else "")] = year
            return found

        values = named(question)
        for slot, value in values.items():
            pool = offices if slot.startswith("office") else years
            for new in pool:
                if new in values.values():
                    continue
                asked = re.sub(rf"\b{value}\b", new, question)
                pairs.append(Pair("seed", shape, slot.rstrip("2"), question, asked, truth(shape, values),
                                  truth(shape, named(asked))))
    return pairs


def constraint_truth(res: LookupResult) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((f, v) for f, v in res.constraints))


def plan_values(plan: Mapping[str, Any] | None) -> set[str]:
    """Facet values the plan's steps filter on (step-answer slots such as {s1} left out)."""
    out: set[str] = set()
    for step in (plan or {}).get("steps", []):
        for value in (step.get("filters") or {}).values():
            values = value if isinstance(value, list) else [value]
            out |= {str(v) for v in values if not (isinstance(v, str) and v.startswith("{"))}
    return out


def constraint_keyed(cache: PlanCache, pairs: list[Pair]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """PlanCache.lookup on every asked question; per source and overall counts, and the wrong hits."""
    rows: dict[str, Counter[str]] = {"ALL": Counter()}
    wrong_examples: list[dict[str, Any]] = []
    times: list[float] = []
    for p in pairs:
        t0 = time.perf_counter()
        res = cache.lookup(p.asked, now=NOW)
        times.append(time.perf_counter() - t0)
        asked_values = dict(Counter(p.asked_truth[1]))
        # seed questions are labeled with their offices and years only: their qualifiers are not compared
        got = dict(Counter(c for c in constraint_truth(res) if p.source == "demo" or c[0] != QUALIFIER))
        stray = plan_values(res.plan) - {v for _, v in p.asked_truth[1]}
        wrong = res.hit and (got != asked_values or bool(stray))
        for key in ("ALL", p.source):
            c = rows.setdefault(key, Counter())
            c["asked"] += 1
            c["hits"] += res.hit
            c["hits_with_plan"] += res.hit and res.plan is not None
            c["wrong"] += wrong
        if wrong and len(wrong_examples) < 10:
            wrong_examples.append({"asked": p.asked, "constraints": res.constraints, "stray_filters": sorted(stray),
                                   "truth": p.asked_truth[1]})
    out: dict[str, Any] = {k: dict(v) for k, v in rows.items()}
    out["ALL"]["lookup_p50_us"] = statistics.median(times) * 1e6
    return out, wrong_examples


def similarity_keyed(pairs: list[Pair], cached_vecs: np.ndarray, asked_vecs: np.ndarray,
                     cache: PlanCache) -> dict[str, Any]:
    """Per setting (pair, pool) and threshold: hits and wrong plans; plus how often the served plan differs from
    the plan the constraint-keyed cache gives the asked question."""
    pair_cos = np.einsum("ij,ij->i", cached_vecs, asked_vecs)
    sims = asked_vecs @ cached_vecs.T  # asked x cached
    sources = np.array([p.source for p in pairs])
    sims[sources[:, None] != sources[None, :]] = -2.0  # each source is its own cache: shape names differ
    nearest = sims.argmax(axis=1)
    pool_cos = sims[np.arange(len(pairs)), nearest]
    plans: dict[str, str] = {}

    def plan_of(question: str) -> str:
        if question not in plans:
            res = cache.lookup(question, now=NOW)
            plans[question] = json.dumps([res.hit, res.route, res.key, res.plan], sort_keys=True)
        return plans[question]

    out: dict[str, Any] = {}
    for setting in ("pair", "pool"):
        for t in THRESHOLDS:
            rows: dict[str, Counter[str]] = {"ALL": Counter()}
            for i, p in enumerate(pairs):
                if setting == "pair":
                    cos, served = float(pair_cos[i]), p
                else:
                    cos, served = float(pool_cos[i]), pairs[int(nearest[i])]
                hit = cos >= t
                wrong = hit and served.cached_truth != p.asked_truth
                differs = wrong and plan_of(served.cached) != plan_of(p.asked)
                for key in ("ALL", p.source):
                    c = rows.setdefault(key, Counter())
                    c["asked"] += 1
                    c["hits"] += hit
                    c["wrong"] += wrong
                    c["wrong_other_shape"] += wrong and served.cached_truth[0] != p.asked_truth[0]
                    c["served_plan_differs"] += differs
            out[f"{setting}@{t}"] = {k: dict(v) for k, v in rows.items()}
    return out


def cosine_summary(pairs: list[Pair], cached_vecs: np.ndarray, asked_vecs: np.ndarray) -> dict[str, Any]:
    pair_cos = np.einsum("ij,ij->i", cached_vecs, asked_vecs)
    groups: dict[str, list[float]] = {}
    for p, cos in zip(pairs, pair_cos, strict=True):
        groups.setdefault(f"{p.source}: {p.varied}", []).append(float(cos))
        groups.setdefault("ALL", []).append(float(cos))
    return {k: {"n": len(v), "min": min(v), "p10": float(np.percentile(v, 10)), "median": statistics.median(v),
                "p90": float(np.percentile(v, 90)), "max": max(v), **{f">={t}": sum(x >= t for x in v) / len(v)
                                                                        for t in THRESHOLDS}}
            for k, v in sorted(groups.items())}


def build_publication(dest: Path) -> Path:
    """`planbake nightly` on the embedded demo into `dest`; the publication root."""
    cmd = [str(ROOT / ".venv" / "bin" / "planbake"), "nightly", "--out", str(dest), "--json"]
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return dest


def run(publication: Path | None, per_shape: int, seed: int) -> dict[str, Any]:
    from tasks.embed import Embedder

    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench_simcache_") as tmp:
        built = publication is None
        t0 = time.perf_counter()
        root = publication or build_publication(Path(tmp) / "out")
        build_s = time.perf_counter() - t0
        cache = PlanCache.open(root)
        gen: Any = load_generator()
        pairs = demo_pairs(per_shape, seed) + seed_pairs(SEED_QUESTIONS, list(gen.OFFICES),
                                                          [str(y) for y in gen.YEARS])
        constraint, wrong_examples = constraint_keyed(cache, pairs)
        t0 = time.perf_counter()
        embedder = Embedder()
        texts = sorted({p.cached for p in pairs} | {p.asked for p in pairs})
        vecs = dict(zip(texts, embedder.encode(texts, quiet=True), strict=True))
        embed_s = time.perf_counter() - t0
        cached_vecs = np.stack([vecs[p.cached] for p in pairs])
        asked_vecs = np.stack([vecs[p.asked] for p in pairs])
        similarity = similarity_keyed(pairs, cached_vecs, asked_vecs, cache)
        examples = [{"cached": p.cached, "asked": p.asked, "cosine": float(vecs[p.cached] @ vecs[p.asked])}
                    for p in pairs[:: max(1, len(pairs) // 8)]]
        return {
            "benchmark": "similarity_cache", "python": platform.python_version(),
            "load_average": os.getloadavg(), "cpus": os.cpu_count(),
            "publication": "built with planbake nightly (temporary)" if built else str(root),
            "publication_run": cache.manifest.get("run_id"), "build_publication_s": build_s if built else None,
            "cache_entries": len(cache.entries), "shapes": len(cache.templates),
            "pairs": {"total": len(pairs), **Counter(f"{p.source}: {p.varied}" for p in pairs)},
            "pairs_per_shape": per_shape, "seed": seed, "now": NOW.isoformat(), "model": "all-MiniLM-L6-v2",
            "embed_s": embed_s, "texts_embedded": len(texts),
            "cosine": cosine_summary(pairs, cached_vecs, asked_vecs),
            "constraint_keyed": constraint, "constraint_wrong_examples": wrong_examples,
            "similarity_keyed": similarity, "examples": examples,
            "seconds": time.perf_counter() - t_start,
        }


def _rate(c: dict[str, Any], key: str, of: str = "asked") -> str:
    return f"{c.get(key, 0) / c[of]:.3f}" if c.get(of) else "-"


def render_report(r: dict[str, Any]) -> str:
    lines = [f"similarity-keyed vs constraint-keyed plan cache: {r['pairs']['total']} question pairs "
             f"differing in one constraint value; load average {', '.join(f'{x:.2f}' for x in r['load_average'])}",
             f"publication {r['publication']} (run {r['publication_run']}): {r['shapes']} shapes, "
             f"{r['cache_entries']} cache entries; {r['texts_embedded']} texts embedded in {r['embed_s']:.1f} s",
             "pairs: " + ", ".join(f"{k} {v}" for k, v in r["pairs"].items() if k != "total"), "",
             "cosine of the two questions of a pair:",
             f"| {'pairs':<22} | {'n':>4} | {'min':>5} | {'p10':>5} | {'median':>6} | {'p90':>5} | {'max':>5} "
             f"| {'>=0.8':>5} | {'>=0.9':>5} | {'>=0.95':>6} |",
             f"|{'-' * 24}|{'-' * 5}:|{'-' * 6}:|{'-' * 6}:|{'-' * 7}:|{'-' * 6}:|{'-' * 6}:|{'-' * 6}:|"
             f"{'-' * 6}:|{'-' * 7}:|"]
    for k, s in r["cosine"].items():
        lines.append(f"| {k:<22} | {s['n']:>4} | {s['min']:.3f} | {s['p10']:.3f} | {s['median']:>6.3f} | "
                     f"{s['p90']:.3f} | {s['max']:.3f} | {s['>=0.8']:>5.2f} | {s['>=0.9']:>5.2f} | "
                     f"{s['>=0.95']:>6.2f} |")
    head = (f"| {'cache':<37} | {'source':<6} | {'asked':>5} | {'hits':>5} | {'hit rate':>8} | {'wrong':>5} "
            f"| {'wrong-plan rate':>15} | {'wrong / hits':>12} |")
    rule = f"|{'-' * 39}|{'-' * 8}|{'-' * 6}:|{'-' * 6}:|{'-' * 9}:|{'-' * 6}:|{'-' * 16}:|{'-' * 13}:|"
    lines += ["", head, rule]

    def row(name: str, source: str, c: dict[str, Any]) -> str:
        return (f"| {name:<37} | {source:<6} | {c['asked']:>5} | {c.get('hits', 0):>5} | {_rate(c, 'hits'):>8} | "
                f"{c.get('wrong', 0):>5} | {_rate(c, 'wrong'):>15} | {_rate(c, 'wrong', 'hits'):>12} |")

    for source in ("ALL", "demo", "seed"):
        for setting, label in (("pair", "similarity, partner only"), ("pool", "similarity, all cached")):
            for t in THRESHOLDS:
                c = r["similarity_keyed"][f"{setting}@{t}"].get(source)
                if c:
                    lines.append(row(f"{label}, cos >= {t}", source, c))
        c = r["constraint_keyed"].get(source)
        if c:
            lines.append(row("constraint-keyed PlanCache.lookup", source, c))
    pool = r["similarity_keyed"]
    lines += ["", "similarity, all cached: wrong hits that served another shape / whose served plan differs from "
              "the constraint-keyed plan for the asked question: "
              + "; ".join(f"{t}: {pool[f'pool@{t}']['ALL'].get('wrong_other_shape', 0)} / "
                          f"{pool[f'pool@{t}']['ALL'].get('served_plan_differs', 0)}" for t in THRESHOLDS),
              f"constraint-keyed lookup p50 {r['constraint_keyed']['ALL']['lookup_p50_us']:.0f} us; "
              f"hits with a split plan {r['constraint_keyed']['ALL'].get('hits_with_plan', 0)}; "
              f"total {r['seconds']:.0f} s"]
    for ex in r["constraint_wrong_examples"]:
        lines.append(f"  constraint-keyed wrong: {ex}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_similarity_cache",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--publication", type=Path, default=None,
                    help="a publication root or run directory (default: planbake nightly into a temporary dir)")
    ap.add_argument("--pairs-per-shape", type=int, default=40, help="demo pairs per generator shape (default 40)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--json", action="store_true", help="print the report as JSON instead of tables")
    args = ap.parse_args(argv)
    if args.pairs_per_shape < 1:
        ap.error("--pairs-per-shape must be at least 1")
    report = run(args.publication, args.pairs_per_shape, args.seed)
    print(json.dumps(report, indent=2, default=str) if args.json else render_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
