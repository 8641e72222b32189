"""Benchmark `PlanCache.lookup` with 100,000 cache entries against an embedding-similarity lookup, side by side.

    .venv/bin/python -m benchmarks.bench_lookup [--entries N] [--questions Q] [--embed-questions E] [--json]

The publication is built in a temporary directory in the plan stage's output format (manifest.json,
config.json, lexicon.json, templates.parquet and cache.parquet with the schemas `schemas.files` declares for
them), with the product's own functions and without LanceDB or a model:

* a mined sample like the demo log (data/demo/generate_logs.py imported: its shapes, phrasings, Zipf
  frequencies, noise, PII and follow-ups; 60,000 questions) is scrubbed and skeletonised with
  `schemas.extract.Lexicon` (facet values from data/demo/corpus.jsonl, as `build_index` derives them);
  every skeleton seen at least `mining.min_count` times is a shape, typed by the generator's ground truth;
* a template per shape from `tasks.plan.rules_writer.write_template`, validated with `schemas.plan.validate_plan`;
  route by type (single and null: one search; comparison, temporal, bridge: split; aggregation and
  verification: split plus the original question);
* a cache entry (key from `schemas.extract.cache_key`, plan from `fill_slots`) per shape and constraint
  values seen; then synthetic shapes (a real shape's skeleton with "for project <word>" appended, the same
  constraint values) until there are N entries.

Questions (default 20,000) are drawn like the demo logs: phrasings with noise, offices and years (some years
and offices outside the lexicon or the log), PII, follow-ups, odd one-offs, plus questions for the synthetic
shapes; hits and misses. Each `lookup(question, now=...)` is timed alone, in wall time (what a caller waits,
including preemption by other processes on the shared machine) and in CPU time of the thread.

Side by side, interleaved in blocks, an embedding-similarity lookup over the same N entries:
`tasks.embed.Embedder.encode_one` (memo cleared, so every question is encoded), a dot product with an
N x 384 float32 matrix of unit vectors, argmax, and the entry's plan parsed. The matrix holds random unit
vectors: the cost of the product does not depend on the values, and encoding 100,000 entry texts would take
most of an hour on this machine.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import itertools
import json
import math
import os
import platform
import pstats
import random
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.bench_mining import current_rss_mb, load_generator, peak_rss_mb
from schemas.arrow import KEYS
from schemas.cache import LookupResult, PlanCache
from schemas.config import Config, load_config
from schemas.constraint import QUALIFIER, Constraint
from schemas.extract import Lexicon, Skeleton, cache_key
from schemas.files import CACHE, LEXICON, MANIFEST, TEMPLATES
from schemas.files import CONFIG as PUBLISHED_CONFIG
from schemas.plan import Plan, PlanError, fill_slots, validate_plan

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "data" / "configs" / "demo.yaml"
CORPUS = ROOT / "data" / "demo" / "corpus.jsonl"
SEED = 20261130
NOW = date(2026, 11, 25)  # the demo logs' week: "this year" is 2026
MINED_QUESTIONS = 60_000
GOAL_P99_US = 200.0
ROUTE_BY_TYPE = {"single": "one_search", "null": "one_search", "comparison": "split", "temporal": "split",
                 "bridge": "split", "aggregation": "split_original", "verification": "split_original"}
SYLLABLES = ["ka", "ro", "mi", "ne", "tu", "sa", "lo", "vi", "pe", "da", "go", "fu", "ri", "zo", "be", "ha"]


def corpus_values(config: Config) -> dict[str, list[str]]:
    """Category facet values named in the demo corpus: what `Index.facet_values()` returns after indexing."""
    from tasks.index.corpus import read_corpus

    docs = read_corpus(CORPUS)
    cats = [f.name for f in config.facets if f.kind == "category"]
    return {c: sorted({str(d.metadata[c]) for d in docs if d.metadata.get(c)}) for c in cats}


def project_word(n: int) -> str:
    """A distinct lower-case word per n ("kakaro", ...), no digits, no lexicon term."""
    out = []
    for _ in range(3):
        n, r = divmod(n, len(SYLLABLES))
        out.append(SYLLABLES[r])
    return "".join(out) + (SYLLABLES[n % len(SYLLABLES)] if n else "")


def realize(skeleton: str, constraints: tuple[Constraint, ...]) -> str:
    """A question for a skeleton: its facet placeholders filled with the constraint values in order."""
    values = iter(c.value for c in constraints if c.facet != QUALIFIER)
    facets = {c.facet for c in constraints if c.facet != QUALIFIER}
    return " ".join(next(values, "") if w.startswith("{") and w.endswith("}") and w[1:-1] in facets else w
                    for w in skeleton.split(" "))


def has_pii_placeholder(skeleton: str, config: Config) -> bool:
    return any(w.startswith("{") and w.endswith("}") and w[1:-1] not in config.facet_names
               for w in skeleton.split(" "))


class QuestionMaker:
    """Questions as the demo logs phrase them: generate_logs.py's shapes, fill() and add_noise()."""

    def __init__(self, seed: int) -> None:
        self.gen: Any = load_generator()
        self.rng = random.Random(seed)
        self.stats = self.gen.Stats()
        counts = self.gen.zipf_counts(53_000, len(self.gen.SHAPES))
        self.shape_cum = list(itertools.accumulate(counts))

    def shape(self) -> Any:
        return self.rng.choices(self.gen.SHAPES, cum_weights=self.shape_cum)[0]

    def question(self, years: list[int] | None = None) -> tuple[str, str]:
        """(question, generator shape type); `years` overrides the generator's 2024-2027."""
        gen, rng = self.gen, self.rng
        shape = self.shape()
        k = rng.choices(range(len(shape.phrasings)), weights=gen.PHRASING_WEIGHTS[: len(shape.phrasings)])[0]
        saved = gen.YEARS
        if years:
            gen.YEARS = years
        try:
            text, _, _ = gen.fill(rng, shape.phrasings[k], self.stats)
        finally:
            gen.YEARS = saved
        text = gen.add_noise(rng, text, self.stats)
        if rng.random() < 3_000 / 53_000:
            text, _, _ = gen.plant_pii(rng, text)
        return text, shape.type

    def follow_up(self) -> str:
        gen, rng = self.gen, self.rng
        kind = rng.choices(["office", "parent", "staff", "year"], weights=[6, 1, 1, 2])[0]
        if kind == "office":
            return str(rng.choice(gen.FOLLOW_UP_OFFICE).format(office=rng.choice(gen.OFFICES)))
        if kind == "parent":
            return str(rng.choice(gen.FOLLOW_UP_PARENT).format(parent=rng.choice(gen.PARENTS)))
        if kind == "staff":
            return str(rng.choice(gen.FOLLOW_UP_STAFF).format(staff=rng.choice(gen.STAFF)))
        return str(rng.choice(gen.FOLLOW_UP_YEAR).format(year=rng.choice(gen.YEARS)))


def evaluation(route: str, questions: int) -> dict[str, Any]:
    """What tasks.plan.routing.decide_route records for a shape, with made-up coverage figures."""
    from tasks.plan.routing import ROUTES, ShapeEvaluation

    if route == "one_search":
        return ShapeEvaluation("one_search", questions, searches={"one_search": 1.0}).to_json()
    return ShapeEvaluation(route, questions, coverage={r: 0.75 + 0.25 * (r == route) for r in ROUTES},
                           searches={r: float(n) for n, r in enumerate(ROUTES, 1)}).to_json()


def build_publication(run_dir: Path, entries_target: int, config: Config) -> dict[str, Any]:
    """Write a complete publication with about `entries_target` cache entries; what is in it."""
    from tasks.plan.rules_writer import write_template

    values = corpus_values(config)
    lexicon = Lexicon(config, values)
    scrub = lexicon.scrubber()
    maker = QuestionMaker(SEED)

    # 1. "Mining": skeleton counts, their constraint values, their generator type.
    count: Counter[str] = Counter()
    combos: dict[str, Counter[tuple[Constraint, ...]]] = defaultdict(Counter)
    types: dict[str, Counter[str]] = defaultdict(Counter)
    for n in range(MINED_QUESTIONS):
        if n % 20 == 19:
            text, kind = maker.follow_up(), "single"
        else:
            text, kind = maker.question()
        sk = lexicon.skeleton(scrub(text), NOW)
        count[sk.text] += 1
        combos[sk.text][tuple(Constraint(c.facet, c.value) for c in sk.constraints)] += 1
        types[sk.text][kind] += 1
    recurring = [s for s, n in count.most_common() if n >= config.mining.min_count]

    # 2. Templates, routes, entries for the real shapes.
    from tasks.mine.mining import shape_id as make_shape_id

    facets: dict[str, set[str]] = {f.name: set() for f in config.facets}
    facets.update(lexicon.known_values())
    templates: list[dict[str, Any]] = []
    entries: list[dict[str, Any]] = []
    real: list[tuple[str, str, Plan, str]] = []  # skeleton, type, template, route
    invalid = 0

    def add_shape(skeleton: str, shape_type: str, template: Plan, route: str, valid: bool,
                  seen: Counter[tuple[Constraint, ...]]) -> None:
        sid = make_shape_id(skeleton)
        templates.append({
            "shape_id": sid, "skeleton": skeleton, "type": shape_type,
            "template": template.model_dump_json(exclude_defaults=True), "writer": "rules", "model": "",
            "valid": valid, "check_ok": valid, "complaint": "", "route": route,
            "evaluation": json.dumps(evaluation(route, sum(seen.values()))), "members": [skeleton],
            "count": sum(seen.values()),
        })
        for cs, n in seen.items():
            sk = Skeleton(skeleton, cs)
            plan = None
            if route != "one_search":
                filled = fill_slots(template, sk.slots)
                filled.keep_original = route == "split_original"
                plan = filled.model_dump_json(exclude_defaults=True)
            entries.append({"key": cache_key(sid, sk), "shape_id": sid, "route": route, "plan": plan,
                            "slots": json.dumps(sk.slots), "questions": n})

    for skeleton in recurring:
        shape_type = types[skeleton].most_common(1)[0][0]
        template = write_template(skeleton, shape_type, config)
        valid = True
        try:
            validate_plan(template, max_steps=config.planning.max_steps, facets=facets)
        except PlanError:
            valid = False
            invalid += 1
        route = ROUTE_BY_TYPE[shape_type] if valid else "one_search"
        add_shape(skeleton, shape_type, template, route, valid, combos[skeleton])
        real.append((skeleton, shape_type, template, route))
    real_entries = len(entries)
    real_shapes = len(templates)

    # 3. Synthetic shapes: a real skeleton plus "for project <word>", the same constraint values.
    synthetic: list[tuple[str, tuple[Constraint, ...]]] = []
    bases = [r for r in real if not has_pii_placeholder(r[0], config)]
    n = 0
    while len(entries) < entries_target:
        skeleton, shape_type, _, route = bases[n % len(bases)]
        word = project_word(n)
        new = f"{skeleton} for project {word}"
        template = write_template(new, shape_type, config)
        seen = combos[skeleton]
        add_shape(new, shape_type, template, route, True, seen)
        synthetic += [(new, cs) for cs in seen]
        n += 1
    del entries[entries_target:]

    run_dir.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(templates, TEMPLATES.schema), run_dir / TEMPLATES.name)
    pq.write_table(pa.Table.from_pylist(sorted(entries, key=lambda e: e["key"]), CACHE.schema), run_dir / CACHE.name)
    (run_dir / PUBLISHED_CONFIG.name).write_text(config.model_dump_json(indent=2), encoding="utf-8")
    (run_dir / LEXICON.name).write_text(json.dumps(values, indent=2, sort_keys=True), encoding="utf-8")
    routes = Counter(t["route"] for t in templates)
    manifest = {"run_id": run_dir.name, "lexicon_hash": lexicon.digest(),  # no index: lookup needs none
                "counts": {"shapes": len(templates), "cache_entries": len(entries), "routes": dict(routes)},
                "synthetic": "benchmarks/bench_lookup.py", "plan": {"cache_keys": KEYS}}
    (run_dir / MANIFEST.name).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return {"entries": len(entries), "real_entries": real_entries, "shapes": len(templates),
            "real_shapes": real_shapes, "invalid_templates": invalid, "routes": dict(routes),
            "entries_with_plan": sum(e["plan"] is not None for e in entries),
            "mined_sample": MINED_QUESTIONS, "synthetic_questions": synthetic}


def make_questions(n: int, synthetic: list[tuple[str, tuple[Constraint, ...]]], seed: int) -> list[tuple[str, str]]:
    """(question, kind) pairs: demo phrasings (most), other years, unknown offices, follow-ups, odd one-offs,
    and questions for the synthetic shapes."""
    maker = QuestionMaker(seed)
    rng = random.Random(seed + 1)
    gen = maker.gen
    out: list[tuple[str, str]] = []
    kinds = ["demo", "other_years", "unknown_office", "follow_up", "odd", "synthetic"]
    weights = [60, 8, 4, 5, 3, 20]
    for _ in range(n):
        kind = rng.choices(kinds, weights=weights)[0]
        if kind == "demo":
            text = maker.question()[0]
        elif kind == "other_years":
            text = maker.question(years=list(range(2019, 2032)))[0]
        elif kind == "unknown_office":
            text = maker.question()[0]
            for office in gen.OFFICES:
                text = text.replace(office, rng.choice(["Paris", "Madrid", "Oslo", "Dublin"]))
        elif kind == "follow_up":
            text = maker.follow_up()
        elif kind == "odd":
            text = rng.choice([*gen.ODD_QUESTIONS, gen.INJECTION_TEXT])
        else:
            skeleton, cs = rng.choice(synthetic)
            text = realize(skeleton, cs)
            if rng.random() < 0.3:
                text = text.capitalize() + "?"
        out.append((text, kind))
    return out


def outcome(res: LookupResult) -> str:
    if not res.hit:
        return "miss"
    if res.route == "one_search":
        return "hit: one search"
    return f"hit: {res.source}"


def percentiles(values_ns: list[int] | list[float], scale: float) -> dict[str, float]:
    xs = sorted(values_ns)
    if not xs:
        return {}

    def pct(p: float) -> float:
        return float(xs[min(len(xs) - 1, max(0, math.ceil(p / 100 * len(xs)) - 1))]) / scale

    return {"n": len(xs), "p50": pct(50), "p95": pct(95), "p99": pct(99), "max": xs[-1] / scale,
            "mean": statistics.fmean(xs) / scale}


def run(entries_target: int, n_questions: int, n_embed: int, workdir: Path, profile: bool = False,
        entity_slots: bool = False) -> dict[str, Any]:
    from tasks.embed import Embedder

    config = load_config(CONFIG)
    config.entity_slots = entity_slots  # names read by their capitals in every question (schemas/entity.py)
    t0 = time.perf_counter()
    built = build_publication(workdir / "run", entries_target, config)
    build_seconds = time.perf_counter() - t0
    synthetic = built.pop("synthetic_questions")
    print(f"publication: {built['entries']:,} entries, {built['shapes']:,} shapes ({built['real_shapes']} mined, "
          f"{built['real_entries']:,} of their entries); {build_seconds:.1f}s", file=sys.stderr, flush=True)

    rss0 = current_rss_mb()
    t0 = time.perf_counter()
    cache = PlanCache.open(workdir / "run")
    open_seconds = time.perf_counter() - t0
    cache_mb = current_rss_mb() - rss0
    assert len(cache.entries) == built["entries"], (len(cache.entries), built["entries"])

    questions = make_questions(n_questions, synthetic, SEED + 7)
    for q, _ in questions[:2000]:  # warm-up, untimed: regex caches, pydantic validators
        cache.lookup(q, now=NOW)

    # Pass 1, before the model is loaded: the lookups alone, as a service that only reads the cache runs them.
    alone_ns: list[int] = []
    alone_cpu_ns: list[int] = []
    for q, _ in questions:
        c = time.thread_time_ns()
        t = time.perf_counter_ns()
        cache.lookup(q, now=NOW)
        alone_ns.append(time.perf_counter_ns() - t)
        alone_cpu_ns.append(time.thread_time_ns() - c)

    # Pass 2: the same lookups interleaved in blocks with the embedding lookups.
    embedder = Embedder(config.model_path, config.embed_batch_size)
    rng = np.random.default_rng(SEED)
    matrix = rng.standard_normal((built["entries"], embedder.dim), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    plans = [e.plan for e in cache.entries.values()]
    embed_qs = [q for q, _ in random.Random(SEED).sample(questions, min(n_embed, len(questions)))]
    for q in embed_qs[:5]:  # warm-up
        embedder.encode_one(q)

    def embed_lookup(question: str) -> int:
        embedder._memo.clear()  # every question is encoded, as for an unseen question online
        vec = embedder.encode_one(question)
        j = int(np.argmax(matrix @ vec))
        plan = plans[j]
        if plan:
            json.loads(plan)
        return j

    lookup_ns: list[int] = []
    lookup_cpu_ns: list[int] = []
    by_outcome: dict[str, list[int]] = defaultdict(list)
    by_kind: dict[str, list[int]] = defaultdict(list)
    outcomes_by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    embed_ns: list[int] = []
    block = math.ceil(len(questions) / max(len(embed_qs), 1))
    perf, cpu = time.perf_counter_ns, time.thread_time_ns
    t_start = time.perf_counter()

    def constraint_block(i: int) -> None:
        for q, kind in questions[i * block:(i + 1) * block]:
            c = cpu()
            t = perf()
            res = cache.lookup(q, now=NOW)
            dt = perf() - t
            lookup_cpu_ns.append(cpu() - c)
            lookup_ns.append(dt)
            o = outcome(res)
            by_outcome[o].append(dt)
            by_kind[kind].append(dt)
            outcomes_by_kind[kind][o] += 1

    def embed_one(i: int) -> None:
        if i < len(embed_qs):
            t = perf()
            embed_lookup(embed_qs[i])
            embed_ns.append(perf() - t)

    rounds = max(len(embed_qs), math.ceil(len(questions) / block))
    for i in range(rounds):
        if i % 2 == 0:
            constraint_block(i)
            embed_one(i)
        else:
            embed_one(i)
            constraint_block(i)
    wall = time.perf_counter() - t_start

    lk = percentiles(lookup_ns, 1e3)
    em = percentiles(embed_ns, 1e6)
    prof_text = ""
    if profile:
        prof = cProfile.Profile()
        prof.enable()
        for q, _ in questions:
            cache.lookup(q, now=NOW)
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
        prof_text = buf.getvalue()
    hits = sum(len(v) for k, v in by_outcome.items() if k != "miss")
    return {
        "entries": built["entries"], "publication": built, "build_seconds": build_seconds,
        "open_seconds": open_seconds, "cache_rss_mb": cache_mb,
        "questions": len(lookup_ns), "hit_rate": hits / max(len(lookup_ns), 1),
        "lookup_us": lk, "lookup_cpu_us": percentiles(lookup_cpu_ns, 1e3),
        "alone_us": percentiles(alone_ns, 1e3), "alone_cpu_us": percentiles(alone_cpu_ns, 1e3),
        "lookup_us_by_outcome": {k: percentiles(v, 1e3) for k, v in sorted(by_outcome.items())},
        "lookup_us_by_question_kind": {k: percentiles(v, 1e3) for k, v in sorted(by_kind.items())},
        "outcomes_by_question_kind": {k: dict(v) for k, v in sorted(outcomes_by_kind.items())},
        "embedding_ms": em, "embedding_questions": len(embed_ns),
        "embedding_matrix": list(matrix.shape),
        "p50_ratio": (em["p50"] * 1e3) / lk["p50"], "p99_ratio": (em["p99"] * 1e3) / lk["p99"],
        "goal_p99_us": GOAL_P99_US, "wall_seconds": wall, "gc_enabled": gc.isenabled(),
        "cpus": _cpus(), "python": platform.python_version(), "load_average": os.getloadavg(),
        "peak_rss_mb": peak_rss_mb(), **({"profile": prof_text} if prof_text else {}),
    }


def _cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # pragma: no cover - not Linux


def row(label: str, p: dict[str, float]) -> str:
    return f"{label:<44}{p['n']:>7}{p['p50']:>10.1f}{p['p95']:>10.1f}{p['p99']:>10.1f}{p['max']:>10.0f}"


def render(r: dict[str, Any]) -> str:
    pub, lk, em, cu = r["publication"], r["lookup_us"], r["embedding_ms"], r["lookup_cpu_us"]
    lines = [
        f"publication: {r['entries']:,} cache entries ({pub['entries_with_plan']:,} with a plan), {pub['shapes']:,} "
        f"shapes ({pub['real_shapes']} mined from {pub['mined_sample']:,} demo-like questions with "
        f"{pub['real_entries']:,} entries, the rest synthetic); routes {pub['routes']}",
        f"PlanCache.open: {r['open_seconds']:.2f}s, +{r['cache_rss_mb']:.0f} MB RSS; {r['cpus']} CPUs; load average "
        + ", ".join(f"{x:.1f}" for x in r["load_average"]),
        "",
        f"{'measurement':<44}{'n':>7}{'p50':>10}{'p95':>10}{'p99':>10}{'max':>10}",
        row("PlanCache.lookup alone, wall (us)", r["alone_us"]),
        row("PlanCache.lookup alone, CPU (us)", r["alone_cpu_us"]),
        row("PlanCache.lookup interleaved, wall (us)", lk),
        row("PlanCache.lookup interleaved, CPU (us)", cu),
    ]
    for name, p in r["lookup_us_by_outcome"].items():
        lines.append(row("  " + name, p))
    lines.append(row("embedding lookup interleaved, wall (ms)", em))
    goal = r["goal_p99_us"]
    verdicts = ", ".join(f"{'met' if r[k]['p99'] < goal else 'missed'} ({name})" for k, name in
                         [("alone_us", "alone, wall"), ("alone_cpu_us", "alone, CPU"),
                          ("lookup_us", "interleaved, wall"), ("lookup_cpu_us", "interleaved, CPU")])
    lines += [
        "",
        f"hit rate {r['hit_rate']:.1%}; embedding / constraint lookup: p50 {r['p50_ratio']:,.0f}x, "
        f"p99 {r['p99_ratio']:,.0f}x (interleaved, wall)",
        f"goal p99 < {goal:.0f} us: {verdicts}",
        "outcomes by question kind: " + "; ".join(
            f"{k} {dict(v)}" for k, v in r["outcomes_by_question_kind"].items()),
        f"peak RSS: {r['peak_rss_mb']:.0f} MB",
    ]
    if "profile" in r:
        lines += ["", r["profile"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_lookup", description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=100_000, help="cache entries (default 100,000)")
    ap.add_argument("--questions", type=int, default=20_000, help="questions for PlanCache.lookup (default 20,000)")
    ap.add_argument("--embed-questions", type=int, default=300,
                    help="of those, questions for the embedding lookup (default 300)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    ap.add_argument("--profile", action="store_true", help="also cProfile one extra pass of the lookups")
    ap.add_argument("--entity-slots", action="store_true", help="publish and look up with `entity_slots: true`")
    args = ap.parse_args(argv)
    if args.entries < 1 or args.questions < 1 or args.embed_questions < 1:
        ap.error("--entries, --questions and --embed-questions must be at least 1")
    with tempfile.TemporaryDirectory(prefix="bench_lookup_") as tmp:
        report = run(args.entries, args.questions, args.embed_questions, Path(tmp), args.profile, args.entity_slots)
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
