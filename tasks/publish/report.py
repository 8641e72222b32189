"""The run report: Markdown plus PNG plots, written into the publication (and shown as a Prefect artifact)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from schemas import class_routes
from schemas.bridge import Bridge, read_served
from schemas.config import Bill
from schemas.files import CONFIG, QUESTIONS, SHAPES, TEMPLATES
from tasks.ingest.files import outside_note
from tasks.plan.stage import multi_step
from tasks.publish.gate import report_lines


def bill(b: Bill, searches: int, rounds: int, planner_steps: int = 0) -> dict[str, float]:
    """Cost per 1,000 questions and seconds to the first answer token (seed 002, "The bill").

    `rounds`: retrieval rounds on the longest path; `planner_steps`: an online planner call writing that many
    steps before any retrieval (0 for a precomputed plan: no model call on the critical path).
    """
    tin, tout = b.answer_in + b.budget_chunks * b.chunk_tokens, b.answer_out
    before = rounds * b.retrieve_s
    if planner_steps:
        tin += b.plan_in
        tout += b.plan_per_step * planner_steps
        before += b.ttft_s + b.plan_per_step * planner_steps / b.tokens_per_s
    usd = (tin * b.price_in + tout * b.price_out) / 1e6 * 1000
    return {"usd_per_1k": round(usd, 2), "first_token_s": round(before + b.ttft_s, 2), "searches": searches}


def _plot(path: Path, kind: str, labels: list[str], values: list[float], title: str, xlabel: str = "") -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.2))
    if kind == "line":
        ax.plot(range(1, len(values) + 1), values, marker=".")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel or "shape rank")
    else:
        ax.barh(labels[::-1], values[::-1])
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def _grouped(path: Path, labels: list[str], series: dict[str, list[float]], title: str, xlabel: str) -> str:
    """Horizontal bars, one group per label and one bar per series (top label first)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.45 * len(labels) * max(1, len(series)) / 2))
    height = 0.8 / max(1, len(series))
    for i, (name, values) in enumerate(series.items()):
        ax.barh([y + i * height for y in range(len(labels))][::-1], values, height=height, label=name)
    ax.set_yticks([y + height * (len(series) - 1) / 2 for y in range(len(labels))][::-1], labels, fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def _short(text: str, n: int = 48) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def write_report(run_dir: Path, manifest: dict[str, Any], b: Bill) -> Path:
    """report/report.md with plots; returns the Markdown path."""
    out = run_dir / "report"
    out.mkdir(exist_ok=True)
    lines = [f"# planbake run {manifest.get('run_id', run_dir.name)}", ""]
    lines += report_lines(manifest.get("gate"))
    idx = manifest.get("index", {})
    if idx:
        lines += [
            "## Index",
            f"{idx['chunks']} chunks; {idx['embedded']} embedded, {idx['updated']} updated, "
            f"{idx['deleted']} deleted this run; table version {idx['version']}.",
            "",
        ]
    mine = manifest.get("mine", {})
    if mine:
        read = mine["rows"] + mine["quarantined"]
        lines += [
            "## Mining",
            f"{mine['rows']:,} log rows mined, {mine['quarantined']} quarantined; "
            f"{mine['recurring']} recurring shapes of {mine['shapes']} ({mine['recurring_questions']:,} "
            "questions).",
            "",
            f"Mined share of the log: {mine['rows'] / max(read, 1):.1%} of the rows read in the window "
            f"({mine['rows']:,} of {read:,}; the rest quarantined).",
            "",
        ]
        if held := mine.get("instruction_text"):
            lines += [f"{held['shapes']} shapes withheld as instruction text ({held['questions']:,} questions from "
                      f"{held['users']:,} users): not published (`schemas/instruction.py`).", ""]
        if note := outside_note(mine):
            lines += [f"- **Outside the window**: {note[0].upper()}{note[1:]}.", ""]
        lines += [f"- **No valid row in `{f}`**: every line is quarantined; is it a query log of this format?"
                  for f in mine.get("unreadable_files", [])] + ([""] if mine.get("unreadable_files") else [])
        lines += [f"- **`{f}` not read**: compressed otherwise than with gzip; decompress it, or compress it with "
                  "gzip" for f in mine.get("skipped_files", [])] + ([""] if mine.get("skipped_files") else [])
    shapes_path, tpl_path = run_dir / SHAPES.name, run_dir / TEMPLATES.name
    if shapes_path.exists():
        shapes = pq.read_table(shapes_path, columns=["count", "type"]).to_pylist()
        counts = sorted((s["count"] for s in shapes), reverse=True)
        freq = _plot(out / "shape_frequency.png", "line", [], counts, "Questions per recurring shape (long tail)")
        types = Counter(s["type"] for s in shapes).most_common()
        kinds = _plot(out / "shape_types.png", "bar", [t for t, _ in types], [n for _, n in types],
                      "Recurring shapes by type")
        lines += [f"![shape frequency]({freq})", f"![shape types]({kinds})", ""]
    if tpl_path.exists():
        lines += _plan_section(out, tpl_path, run_dir / QUESTIONS.name, manifest, b)
    path = out / "report.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _rejections(plan: dict[str, Any]) -> list[str]:
    """Fallbacks and rejections: model outputs that never reached the cache, counted per kind."""
    kinds = plan.get("rejections") or {}
    if not kinds and not plan.get("fallbacks"):
        return []
    return [
        "### Fallbacks and rejections",
        f"{sum(kinds.values())} model outputs rejected; {plan.get('fallbacks', 0)} shapes fell back to the "
        "rule writer.",
        "",
        "| kind | model outputs |",
        "|---|---|",
        *[f"| {kind} | {n} |" for kind, n in sorted(kinds.items())],
        "",
    ]


def _followup_lines(questions: Path) -> list[str]:
    """How much of the traffic is follow-ups, and how much of it resolved to a cached plan."""
    if "followup" not in pq.read_schema(questions).names:
        return []
    rows = pq.read_table(questions, columns=["followup", "resolved_question", "resolved_shape_id",
                                            "followup_reason"]).to_pylist()
    fu = [r for r in rows if r["followup"]]
    if not rows or not fu:
        return []
    resolved = sum(r["resolved_question"] is not None for r in fu)
    cached = sum(r["resolved_shape_id"] is not None for r in fu)
    # by the kind of reason: "ambiguous: ..." names its values, which would split it into rows of one or two
    refused = Counter((r["followup_reason"] or "").split(":")[0] for r in fu if r["resolved_question"] is None)
    return [
        "## Follow-ups",
        f"{len(fu):,} of {len(rows):,} questions ({len(fu) / len(rows):.1%}) are follow-ups; {resolved:,} resolved "
        f"to a standalone question, {cached:,} ({cached / max(resolved, 1):.1%}) of them to a recurring shape whose "
        "key hits the cache.",
        "",
        "| refused: reason | follow-ups |",
        "|---|---|",
        *[f"| {reason} | {n:,} |" for reason, n in refused.most_common()],
        "",
    ]


def _unlogged_lines(run_dir: Path) -> list[str]:
    """How a question no one logged is served: the classes routed to a split and the bridge terms served."""
    split = {k: c for k, c in class_routes.read(run_dir).items() if c.get("route") in class_routes.SPLITS}
    terms = read_served(run_dir)
    if not split and not terms:
        return []
    lines = ["### Questions no one logged", "",
             "A miss is planned by its class where the class's mined shapes measured a split above one search "
             "(`class_routes.json`), or through a thing the log's bridge shapes asked about (`bridge_terms.json`).",
             ""]
    lines += [f"- class `{k}`: {c['route']}, over {c['shapes']} shapes (the split found more on {c['won']}, less on "
              f"{c['lost']})" for k, c in sorted(split.items())]
    for term, doc in sorted(terms.items()):
        b = Bridge.from_doc(doc["bridge"])
        lines.append(f"- bridge term `{term}`: its {b.facet} ({b.places()}); {doc['route']}, "
                     f"{doc['split_shapes']} of {doc['shapes']} shapes split")
    return [*lines, ""]


def _vocabulary_lines(tpls: list[dict[str, Any]]) -> list[str]:
    """Shapes whose sub-queries the corpus vocabulary rewrites: how often each finds its partition unfiltered."""
    measured = [(t, json.loads(t["evaluation"] or "{}").get("vocabulary")) for t in tpls]
    measured = [(t, v) for t, v in measured if v]
    if not measured:
        return []
    lines = ["### Corpus vocabulary",
             "Sub-queries run without their filters, each to its share of the budget: the share that reaches "
             "its own partition in the question's words and in the corpus's words (config `synonyms`, counted "
             "per partition). The corpus's words are used where they reach more.", "",
             "| shape | questions | question's words | corpus's words | used |", "|---|---|---|---|---|"]
    for t, v in sorted(measured, key=lambda tv: -tv[0]["count"])[:20]:
        lines.append(f"| `{t['skeleton']}` | {v['questions']} | {v['question_words']:.2f} | "
                     f"{v['corpus_words']:.2f} | {'yes' if v['used'] else 'no'} |")
    return [*lines, ""]


def _steps_line(routes: Counter[str], multi: dict[str, int]) -> list[str]:
    """How many planned shapes search in two or more steps: a route `split` serves any plan, one filtered search
    too."""
    planned = {r: routes[r] for r in multi if routes[r]}
    if not planned:
        return []
    parts = [f"{r}: {multi[r]} of {n}" for r, n in planned.items()]
    return [f"Plans of two or more steps ({', '.join(parts)}); the other planned shapes search once, with a "
            "filter.", ""]


def _plan_section(out: Path, tpl_path: Path, questions: Path, manifest: dict[str, Any], b: Bill) -> list[str]:
    tpls = pq.read_table(tpl_path).to_pylist()
    routes = Counter(t["route"] for t in tpls)
    rejected = [t for t in tpls if not (t["valid"] and t["check_ok"])]
    lines = [
        "## Plans",
        f"{len(tpls)} templates; routes: "
        + ", ".join(f"{r} {n}" for r, n in sorted(routes.items()))
        + f"; {len(rejected)} rejected by validation or the constraint check (served as one search).",
        "",
        *_steps_line(routes, multi_step(tpls)),
    ]
    config_path = tpl_path.parent / CONFIG.name
    if config_path.exists():
        p = json.loads(config_path.read_text(encoding="utf-8")).get("planning", {})
        lines += [f"Routes were measured with {p.get('search', 'vector')} search, merge `{p.get('merge')}`"
                  + (", chunks re-ranked against the question within each part" if p.get("rerank") else "")
                  + f", a context of {p.get('budget')} chunks and {p.get('per_step_k')} chunks per step.", ""]
    lines += [
        f"![routes]({_plot(out / 'routes.png', 'bar', list(routes), list(routes.values()), 'Route per shape')})",
        "",
    ]
    split = [t for t in tpls if t["route"] != "one_search"]
    if split:
        lines += [
            "### Coverage per split shape (facet coverage over its logged questions)",
            "",
            "| shape | type | questions | one search | plan | plan + original | route |",
            "|---|---|---|---|---|---|---|",
        ]
        top = sorted(split, key=lambda t: -t["count"])[:20]
        covs = [json.loads(t["evaluation"])["coverage"] for t in top]
        for t, cov in zip(top, covs, strict=True):
            lines.append(
                f"| `{t['skeleton']}` | {t['type']} | {t['count']} | {cov['one_search']:.2f} | "
                f"{cov['split']:.2f} | {cov['split_original']:.2f} | {t['route']} |"
            )
        series = {name: [c[key] for c in covs[:12]] for name, key in
                  (("one search", "one_search"), ("plan", "split"), ("plan + original", "split_original"))}
        plot = _grouped(out / "coverage.png", [_short(t["skeleton"]) for t in top[:12]], series,
                        "Facet coverage per split shape (most asked first)", "coverage")
        lines += ["", f"![coverage per shape]({plot})", ""]
    lines += _vocabulary_lines(tpls)
    lines += _unlogged_lines(tpl_path.parent)
    if rejected:
        lines += (
            ["### Rejected templates", ""] + [f"- `{t['skeleton']}`: {t['complaint']}" for t in rejected[:20]] + [""]
        )
    lines += _rejections(manifest.get("plan", {}))
    if questions.exists():
        q = pq.read_table(questions, columns=["shape_id", "ts"]).to_pylist()
        if q:
            last = max(r["ts"] for r in q).date()
            day = [r for r in q if r["ts"].date() == last]
            hit = sum(r["shape_id"] is not None for r in day)
            lines += [
                "## Cache coverage",
                f"{hit:,} of {len(day):,} questions on {last} ({hit / len(day):.1%}) "
                "have a recurring shape, so their key hits the cache.",
                "",
            ]
        lines += _followup_lines(questions)
    lines += [
        "## The bill per route",
        "Assumptions (configurable under `bill:`): "
        f"{b.price_in}/{b.price_out} USD per million input/output tokens, {b.ttft_s} s to first token, "
        f"{b.tokens_per_s} tokens/s, {b.retrieve_s} s per retrieval round, {b.chunk_tokens} tokens per "
        "chunk.",
        "",
        "| design | searches | USD / 1k questions | first token (s) |",
        "|---|---|---|---|",
    ]
    rows = {
        "one search": bill(b, 1, 1),
        "precomputed split, 2 parts": bill(b, 2, 1),
        "precomputed bridge (code extracts the slot)": bill(b, 2, 2),
        "online planner, 2 parts": bill(b, 2, 1, planner_steps=2),
    }
    lines += [
        f"| {name} | {r['searches']} | {r['usd_per_1k']:.2f} | {r['first_token_s']:.1f} |" for name, r in rows.items()
    ]
    names = list(rows)
    cost = _plot(out / "bill_cost.png", "bar", names, [r["usd_per_1k"] for r in rows.values()],
                 "USD per 1,000 questions, by design")
    wait = _plot(out / "bill_latency.png", "bar", names, [r["first_token_s"] for r in rows.values()],
                 "Seconds to the first answer token, by design")
    return lines + ["", f"![bill: cost]({cost})", f"![bill: latency]({wait})", ""]
