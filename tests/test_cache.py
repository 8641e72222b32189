"""The plan stage and the online lookup: the seed handbook table, bridges, keys, and the demo cache."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from schemas.cache import PlanCache
from schemas.config import Config, Facet
from schemas.extract import fill_skeleton
from schemas.plan import Plan, fill_slots
from tasks.evaluate import bridge_right, markdown_rows
from tasks.executor import Retrieved, StepResult, retrieve, run_plan
from tasks.index.store import Hit, Index
from tasks.plan.routing import (
    decide_route,
    evidence_depth,
    facet_coverage,
    has_evidence,
    original_top,
    part_targets,
    parts_find_evidence,
)
from tests.conftest import ROOT


def _row(doc: dict, system: str, shape: str = "ALL") -> dict:
    return next(r for r in doc["rows"] if r["system"] == system and r["shape"] == shape)


def test_seed_handbook_table(seed_eval: dict) -> None:
    one = _row(seed_eval, "one-search")
    assert (one["part_coverage"], one["all_parts_count"]) == (0.9, 8)  # the lesson's plain baseline
    routed = _row(seed_eval, "routed")
    assert routed["part_coverage"] == 1.0 and routed["all_parts_count"] == 10
    assert routed["searches_per_question"] <= 1.5
    # question 2 (Lisbon or Amsterdam) splits against its label: both offices' steps find the company-wide
    # parental leave policy (facet scope), which one search leaves out; no part is lost either way
    assert routed["split_against_label"] <= 2
    assert routed["missed_splits"] == 0
    plus = _row(seed_eval, "routed+original")
    assert plus["part_coverage"] == 1.0
    systems = {r["system"] for r in seed_eval["rows"]}
    assert systems == {"one-search", "rules", "routed", "routed+original"}


def test_seed_handbook_plan_columns(seed_eval: dict) -> None:
    one = _row(seed_eval, "one-search")
    assert (one["bridge_accuracy"], one["plan_validity"], one["steps_per_plan"], one["plans"]) == (None, None, None, 0)
    for system in ("rules", "routed"):
        bridge = _row(seed_eval, system, "bridge")  # question 7: s1 must extract Lisbon from the offsite chunk
        assert (bridge["bridges"], bridge["bridges_right"], bridge["bridge_accuracy"]) == (1, 1, 1.0)
        assert _row(seed_eval, system)["plan_validity"] == 1.0
    rules, routed = _row(seed_eval, "rules"), _row(seed_eval, "routed")
    # every question planned; a plan whose steps leave the context short searches the whole question too
    assert rules["plans"] == 10 and rules["steps_per_plan"] < rules["searches_per_question"]
    assert 0 < routed["plans"] < 10 and routed["steps_per_plan"] >= 2  # split questions only, each with 2+ steps
    assert _row(seed_eval, "routed", "comparison")["steps_per_plan"] == 2.0
    plus = _row(seed_eval, "routed+original")  # the kept whole question is a search, not a step of the plan
    assert plus["plans"] == routed["plans"] and plus["steps_per_plan"] == routed["steps_per_plan"]
    assert plus["searches_per_question"] > routed["searches_per_question"]
    png = Path(seed_eval["plot"])
    assert png == Path(seed_eval["out"]) / "eval.png" and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = markdown_rows(seed_eval["rows"])
    assert len(table) == 2 + len(seed_eval["rows"])
    # steps s1 and s2, the original kept beside them: three searches, two steps
    assert "| routed | bridge | 1 | 1.000 | 1.000 (1/1) | 3.00 | 1 | 0 | 0 | 1/1 | 1.00 | 2.00 |" in table
    # every routed plan has two or more steps; every question of the set says whether it should split
    assert routed["multi_step"] == routed["plans"] and one["multi_step"] == 0
    assert routed["labeled_splits"] == 10 and seed_eval["notes"] == []


def test_wrong_or_refused_bridge_value_counts_wrong() -> None:
    facets = {"offsite-2026": {"year": "2026"}, "perdiem-lisbon": {"office": "Lisbon"}}
    parts = [{"offsite-2026"}, {"perdiem-lisbon"}]

    def run(answer: str | None) -> Retrieved:
        s1 = StepResult("s1", "where is the 2026 engineering offsite held", {"year": "2026"}, answer=answer,
                        answer_facet="office")
        return Retrieved([], [s1, StepResult("s2", "per diem in {s1}", {})], 2)

    assert bridge_right(run("Lisbon"), parts, facets) is True
    assert bridge_right(run("Berlin"), parts, facets) is False
    assert bridge_right(run(None), parts, facets) is False  # the extractor refused
    assert bridge_right(Retrieved([], [StepResult("s1", "q", {})], 1), parts, facets) is None


def test_a_name_step_is_right_when_the_labels_answer_holds_the_name() -> None:
    def run(answer: str | None) -> Retrieved:
        s1 = StepResult("s1", "which company was fined", {}, answer=answer, answer_kind="name")
        return Retrieved([], [s1, StepResult("s2", "{s1} fined", {})], 2)

    assert bridge_right(run("Bankman-Fried"), [], {}, "Sam Bankman-Fried") is True
    assert bridge_right(run("Bank"), [], {}, "Sam Bankman-Fried") is False  # whole words only
    assert bridge_right(run(None), [], {}, "Google") is False  # refused
    assert bridge_right(run("Google"), [], {}, None) is None  # the label has no answer to judge by


def _hit(cid: str, score: float, **facets: str) -> Hit:
    return Hit(cid, score, "", facets, None, None, None, True)


def test_no_evidence_above_floor_is_not_split() -> None:
    need = {("source", "A"), ("source", "B")}
    weak = Retrieved(["a1", "b1"], [StepResult("s1", "q", {"source": "A"}, [_hit("a1", 0.22, source="A")]),
                                    StepResult("s2", "q", {"source": "B"}, [_hit("b1", 0.18, source="B")])], 2)
    assert not has_evidence(need, weak, floor=0.35)
    assert has_evidence(need, weak, floor=0.2)
    assert has_evidence({("year", "2026")}, weak, floor=0.35)  # no step filters on it: nothing to judge
    # a hybrid ranking can put a word match above the best cosine: the best is the best, not the first
    fused = Retrieved(["a2", "a1"], [StepResult("s1", "q", {"source": "A"},
                                                [_hit("a2", 0.20, source="A"), _hit("a1", 0.40, source="A")])], 1)
    assert has_evidence({("source", "A")}, fused, floor=0.35)
    assert part_targets({("source", "A")}, fused, depth=2, margin=0.1) == {("source", "A"): {"a1"}}


def test_split_whose_parts_find_little_is_no_evidence() -> None:
    """A question the corpus cannot answer: one clause lands near a chunk of the named source, the rest find
    little. Its steps' best cosines average below the floor, so the split is no evidence."""
    def step(sid: str, score: float, error: str | None = None) -> StepResult:
        hits = [] if error else [_hit(f"{sid}-a", score, source="A")]
        return StepResult(sid, "q", {"source": "A"}, hits, error=error)

    null_like = Retrieved([], [step("s1", 0.43), step("s2", 0.25), step("s3", 0.28)], 3)
    assert not parts_find_evidence(null_like, floor=0.35)  # mean 0.32
    answered = Retrieved([], [step("s1", 0.43), step("s2", 0.36), step("s3", 0.31)], 3)
    assert parts_find_evidence(answered, floor=0.35)  # mean 0.367: one weak clause does not veto the split
    refused = Retrieved([], [step("s1", 0.40), step("s2", 0.0, error="input s1 has no value")], 2)
    assert parts_find_evidence(refused, floor=0.35)  # a step that never ran is not a miss
    assert parts_find_evidence(Retrieved([], [], 0), floor=0.35)


def test_evidence_depth_is_the_part_share_of_the_budget() -> None:
    assert [evidence_depth(4, n) for n in (1, 2, 3, 5)] == [1, 2, 2, 1]  # 4 over 3 parts: 2, 1, 1
    hits = [_hit("a1", 0.70, source="A"), _hit("a2", 0.60, source="A"), _hit("a3", 0.40, source="A")]
    split = Retrieved(["a1", "a2"], [StepResult("s1", "q", {"source": "A"}, hits)], 1)
    need = {("source", "A")}
    assert part_targets(need, split, depth=3) == {("source", "A"): {"a1", "a2"}}  # a3 is 0.3 below the best
    one = Retrieved(["a1", "x"], [StepResult("original", "q", {}, [hits[0], _hit("x", 0.65, source="B")])], 1)
    targets = part_targets(need, split, depth=2)
    config = Config(facets=[Facet(name="source")])
    assert facet_coverage(need, one, targets, config) == 0.5 and facet_coverage(need, split, targets, config) == 1.0


def test_original_top_share_skips_superseded_chunks() -> None:
    old = Hit("leave-2025", 0.81, "", {}, None, None, "leave-2026", False)  # the whole question searches every version
    hits = [old, _hit("leave-2026", 0.80), _hit("travel", 0.52), _hit("wifi", 0.30)]
    one = Retrieved([h.id for h in hits], [StepResult("original", "q", {}, hits)], 1)
    assert original_top(one, budget=4, steps=1) == ["leave-2026", "travel"]  # 4 // 2 chunks, current ones
    assert original_top(one, budget=4, steps=3) == ["leave-2026"]  # never less than one


def _seed_cache(seed_eval: dict) -> tuple[PlanCache, Index]:
    cache = PlanCache.open(seed_eval["out"])
    idx = cache.manifest["index"]
    return cache, Index(idx["uri"], cache.lexicon.config, idx["version"])


@pytest.mark.parametrize(("year", "office", "chunk"), [("2026", "Lisbon", "perdiem-lisbon"),
                                                       ("2025", "Berlin", "perdiem-berlin")])
def test_bridge_slot_filled_from_evidence(seed_eval: dict, year: str, office: str, chunk: str) -> None:
    cache, index = _seed_cache(seed_eval)
    question = f"What per diem do I get at the {year} engineering offsite?"
    res = cache.lookup(question)
    assert res.hit and res.shape_type == "bridge" and res.plan is not None
    s2 = res.plan["steps"][1]
    assert s2["filters"] == {"office": "{s1}"}  # never filled by a writer
    got = retrieve(question, Plan.model_validate(res.plan), index, cache.lexicon, 4, 4,
                   keep_original=bool(res.plan.get("keep_original")))
    step = {p.id: p for p in got.parts}
    assert step["s1"].answer == office
    assert step["s2"].filters == {"office": office}
    assert step["s2"].hits[0].id == chunk
    assert chunk in got.context


def test_keys_differ_by_constraints(seed_eval: dict) -> None:
    cache, _ = _seed_cache(seed_eval)
    a = cache.lookup("Compare parental leave for the second parent in Berlin and Amsterdam.")
    b = cache.lookup("Compare parental leave for the second parent in Berlin and Lisbon.")
    noisy = cache.lookup("  COMPARE parental leave for the second parent in berlin and AMSTERDAM??")
    assert a.hit and b.hit and a.shape_id == b.shape_id
    assert a.key != b.key and a.key == noisy.key
    assert a.plan is not None and b.plan is not None
    filters = lambda plan: [s["filters"] for s in plan["steps"]]  # noqa: E731
    assert filters(a.plan) == [{"office": "Berlin"}, {"office": "Amsterdam"}]
    assert filters(b.plan) == [{"office": "Berlin"}, {"office": "Lisbon"}]
    assert a.plan == noisy.plan


def test_a_plan_reads_by_attribute_and_by_key_and_serialises_as_before(seed_eval: dict) -> None:
    """`res.plan.steps[0].query`, as the README reads it, and `res.plan["steps"][0]["query"]` give the same; a
    field the JSON leaves out reads its model's default; the plan cannot be changed; and its JSON (`lookup
    --json`) is the text plain dicts give."""
    cache, _ = _seed_cache(seed_eval)
    for question in ("Compare parental leave for the second parent in Berlin and Amsterdam.",
                     "Compare parental leave for the second parent in Lisbon and Lisboa."):  # cache, template
        res = cache.lookup(question)
        assert res.plan is not None and res.plan.steps
        assert [(s.id, s.query, s.filters, s.depends_on, s.extract) for s in res.plan.steps] == [
            (s["id"], s["query"], s.get("filters", {}), s.get("depends_on", []), s.get("extract"))
            for s in res.plan["steps"]]
        assert res.plan.keep_original is res.plan["keep_original"]
        assert Plan.model_validate(res.plan) == Plan.model_validate(json.loads(json.dumps(res.plan)))
        plain = json.loads(json.dumps(res.to_json(), default=str))
        assert json.dumps(res.to_json(), indent=2, default=str) == json.dumps(plain, indent=2)
        with pytest.raises(TypeError, match="read-only"):
            res.plan.steps[0]["query"] = "something else"
        with pytest.raises(TypeError, match="read-only"):
            res.plan.steps.append(res.plan.steps[0])


def test_a_lookup_gives_each_step_the_where_clause_the_executor_searches_with(seed_eval: dict) -> None:
    """Facet scope online: an office step searches its office's chunks and the company-wide ones; a step whose
    filter waits on an answer gets its clause once the answer fills it."""
    cache, _ = _seed_cache(seed_eval)
    res = cache.lookup("Compare parental leave for the second parent in Berlin and Amsterdam.")
    assert res.where == {"s1": "(office = 'Berlin' OR office IS NULL OR office = '') AND is_current",
                         "s2": "(office = 'Amsterdam' OR office IS NULL OR office = '') AND is_current"}
    assert res.to_json()["where"] == res.where
    bridge = cache.lookup("What per diem do I get at the 2026 engineering offsite?")
    assert bridge.where == {"s1": "year = 2026"}  # s2's office is {s1}
    assert cache.where({"office": "Lisbon"}) == "(office = 'Lisbon' OR office IS NULL OR office = '') AND is_current"


def test_one_office_named_twice_gets_one_search(seed_eval: dict) -> None:
    """Two spellings of one office fill both slots of a comparison: the plan the template gives (no question of
    the log named Lisbon twice, so no cache entry holds this key) searches it once."""
    cache, _ = _seed_cache(seed_eval)
    res = cache.lookup("Compare parental leave for the second parent in Lisbon and Lisboa.")
    assert res.hit and res.key and res.key.endswith("office_1=Lisbon|office_2=Lisbon") and res.plan is not None
    assert res.source == "template"
    assert [s["filters"] for s in res.plan["steps"]] == [{"office": "Lisbon"}]


@pytest.mark.parametrize("question", ["", "   ", "x" * 100_000, "\x00\x01\x1b[31m", "what is the wifi \u202e password"])
def test_lookup_never_crashes(seed_eval: dict, question: str) -> None:
    cache, _ = _seed_cache(seed_eval)
    res = cache.lookup(question)
    assert res.hit is False and res.reason
    json.dumps(res.to_json())


def test_reader_imports_without_prefect() -> None:
    code = ("import sys; import schemas.answers, schemas.cache, schemas.extract, schemas.plan; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('prefect', 'lancedb', 'torch', 'duckdb')]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_demo_cache(demo_publication: Path) -> None:
    cache = PlanCache.open(demo_publication)
    manifest = cache.manifest
    assert manifest["plan"]["templates"] > 0 and manifest["plan"]["cache_entries"] > 0
    assert manifest["lexicon_hash"] == cache.lexicon.digest()
    routes = {t["route"] for t in cache.templates.values()}
    assert {"one_search", "split"} <= routes  # routes are measured per shape, not fixed per type
    # a planned route serves any plan, one filtered search too: the manifest and report count the multi-step ones
    steps = {s: len(json.loads(t["template"])["steps"]) for s, t in cache.templates.items()
             if t["route"] != "one_search"}
    multi = manifest["plan"]["multi_step"]
    assert multi == {r: sum(n > 1 for s, n in steps.items() if cache.templates[s]["route"] == r)
                     for r in ("split", "split_original")}
    assert 0 < sum(multi.values()) <= len(steps)
    report = (cache.run_dir / "report" / "report.md").read_text(encoding="utf-8")
    assert f"Plans of two or more steps (split: {multi['split']} of " in report
    # what a question no one logged is served: the classes split and the bridge terms, as published
    assert "### Questions no one logged" in report
    assert all(f"- class `{k}`: {c['route']}" in report
               for k, c in cache.class_routes.items() if c["route"] != "one_search")
    assert cache.bridge_terms and all(f"- bridge term `{t}`: its office" in report for t in cache.bridge_terms)
    comparisons = [t for t in cache.templates.values() if t["type"] == "comparison" and t["route"] != "one_search"]
    top = max(comparisons, key=lambda t: t["count"])
    question = top["skeleton"].replace("{office}", "Warsaw", 1).replace("{office}", "Toronto", 1)
    hit = cache.lookup(question)
    assert hit.hit and hit.shape_id == top["shape_id"] and hit.route == top["route"] and hit.plan is not None
    assert [s["filters"].get("office") for s in hit.plan["steps"]] == ["Warsaw", "Toronto"]
    assert hit.plan["keep_original"] == (top["route"] == "split_original")
    for route in ("split", "split_original"):  # a stored plan says it too, though stored without its default
        entry = next(e for e in cache.entries.values() if e.plan and e.route == route  # a skeleton whose
                     and "{phone}" not in cache.templates[e.shape_id]["skeleton"])  # question is its values alone
        cached = cache.lookup(fill_skeleton(cache.templates[entry.shape_id]["skeleton"], json.loads(entry.slots)))
        assert cached.source == "cache" and cached.key == entry.key
        assert cached.plan is not None and cached.plan["keep_original"] == (route == "split_original")
    single = cache.lookup("how many vacation days do we get in Warsaw")
    assert single.hit and single.route == "one_search"
    miss = cache.lookup("what colour is the CEO's car")
    assert not miss.hit and miss.route == "online_planner"
    this_year = cache.lookup("how did the remote work allowance change between last year and this year",
                             now=None)
    today = __import__("datetime").datetime.now(__import__("datetime").UTC).date()  # the default: today in UTC
    assert ("year", str(today.year)) in this_year.constraints


DAMAGES = {  # a file of the live run, and how a failing disk or an edit by hand leaves it
    "manifest.json": lambda p: p.write_text('{"run_id":\n'),
    "lexicon.json": lambda p: p.write_text('{"run_id":\n'),
    "config.json": lambda p: p.write_text('{"run_id":\n'),
    "plain_words.json": lambda p: p.write_text('{"run_id":\n'),
    "names.json": lambda p: p.write_text('{"run_id":\n'),
    "cache.parquet": lambda p: p.write_bytes(p.read_bytes()[:1000]),
    "templates.parquet": lambda p: p.unlink(),
}


@pytest.mark.parametrize("name", list(DAMAGES))
def test_a_damaged_file_of_the_publication_is_named_with_its_fix(demo_publication: Path, tmp_path: Path,
                                                                   name: str) -> None:
    """A reader names the damaged file (and its line), says what is wrong and how to fix it: bad input (exit 2),
    not "nothing published" (exit 4) nor a bare JSON error."""
    from typer.testing import CliRunner

    from planbake.cli import app
    from schemas.errors import DamagedPublication
    from schemas.publication import current_run

    live = current_run(demo_publication)
    out = tmp_path / "out"
    shutil.copytree(live, out / "runs" / live.name)
    (out / "CURRENT").write_text(live.name + "\n")
    damaged = out / "runs" / live.name / name
    DAMAGES[name](damaged)
    with pytest.raises(DamagedPublication, match="planbake rollback") as exc:
        PlanCache.open(out)
    line = ", line 2: not valid JSON" if name.endswith(".json") else ""
    assert str(exc.value).startswith(f"{damaged}{line}"), exc.value
    res = CliRunner().invoke(app, ["lookup", "parental leave in Berlin", "--out", str(out), "--json"])
    assert res.exit_code == 2 and json.loads(res.stdout)["message"] == str(exc.value), res.output


@pytest.mark.parametrize("name", ["plain_words.json", "names.json", "vocabulary.json"])
def test_a_file_the_manifest_lists_is_needed_where_lookup_reads_it(demo_publication: Path, tmp_path: Path,
                                                                  name: str) -> None:
    """Deleted by hand, the plain words would scrub capitals the corpus writes plainly, the vocabulary word no
    plan: named as missing, as the manifest lists them. A publication made before they were kept (no list) still
    opens without them."""
    from schemas.errors import DamagedPublication
    from schemas.publication import current_run, damage

    live = current_run(demo_publication)
    out = tmp_path / "out"
    run = out / "runs" / live.name
    shutil.copytree(live, run)
    (out / "CURRENT").write_text(live.name + "\n")
    manifest = json.loads((run / "manifest.json").read_text())
    assert name in manifest["files"] and "templates.parquet" in manifest["files"]
    (run / name).unlink()
    with pytest.raises(DamagedPublication, match="planbake rollback") as exc:
        PlanCache.open(out)
    assert str(exc.value).startswith(f"{run / name}: missing"), exc.value
    assert damage(run, ("mine",)) == ""  # a reader of the shapes alone reads neither
    del manifest["files"]
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert PlanCache.open(out).lookup("parental leave in Berlin").skeleton


@pytest.mark.parametrize("change", ["dropped", "retyped"])
def test_a_cache_without_a_declared_column_is_damaged(demo_publication: Path, tmp_path: Path, change: str) -> None:
    """The reader reads cache.parquet by its declared schema: a file lacking one of its columns, or holding one with
    another type, is named as damaged with the fix, not read into a KeyError or a wrong value at lookup."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from schemas.errors import DamagedPublication
    from schemas.files import CACHE
    from schemas.publication import current_run

    live = current_run(demo_publication)
    out = tmp_path / "out"
    run = out / "runs" / live.name
    shutil.copytree(live, run)
    (out / "CURRENT").write_text(live.name + "\n")
    table = pq.read_table(run / CACHE.name)
    if change == "dropped":
        table, problem = table.drop_columns(["slots"]), "no column slots"
    else:
        i = table.schema.get_field_index("questions")
        table = table.set_column(i, "questions", table.column(i).cast(pa.string()))
        problem = "column questions is string, declared int64"
    pq.write_table(table, run / CACHE.name)
    with pytest.raises(DamagedPublication, match="planbake rollback") as exc:
        PlanCache.open(out)
    assert str(exc.value).startswith(f"{run / CACHE.name}: {problem};"), exc.value


def test_templates_made_before_member_hashes_still_open(demo_publication: Path, tmp_path: Path) -> None:
    """A column the declaration marks optional (templates.parquet's member_hashes, kept since 2026-12-05) reads as
    nulls in a publication made before it: its shapes are found by their members' text, as they were then."""
    import pyarrow.parquet as pq

    from schemas.files import TEMPLATES
    from schemas.publication import current_run

    live = current_run(demo_publication)
    run = tmp_path / "runs" / live.name
    shutil.copytree(live, run)
    pq.write_table(pq.read_table(run / TEMPLATES.name).drop_columns(["member_hashes"]), run / TEMPLATES.name)
    old, new = PlanCache.open(run), PlanCache.open(live)
    assert old.templates.keys() == new.templates.keys()
    assert all(t["member_hashes"] is None for t in old.templates.values())
    skeleton = next(t["skeleton"] for t in new.templates.values() if t["route"] != "one_search")
    question = fill_skeleton(skeleton, json.loads(next(e.slots for e in new.entries.values()
                                                       if new.templates[e.shape_id]["skeleton"] == skeleton)))
    assert old.lookup(question).to_json() == new.lookup(question).to_json()


def test_one_search_serves_current_versions_unless_a_year_is_named(demo_publication: Path) -> None:
    """The whole question's search reads the versions in force; one naming a year reads every version, as a step
    filtered on that year does."""
    from tasks.index.store import Index

    cache = PlanCache.open(demo_publication)
    config = cache.lexicon.config
    index = Index(cache.index_uri, config, cache.manifest["index"]["version"])
    hits = {h.id: h for h in index.search("What is the remote work allowance?", 50, all_versions=True)}
    assert any(not h.is_current for h in hits.values())  # the demo keeps older versions of the allowance
    plain = retrieve("What is the remote work allowance?", None, index, cache.lexicon, 4, 4, False)
    assert all(plain.hits_by_id()[c].is_current for c in plain.context)
    dated = retrieve("What was the remote work allowance in 2024?", None, index, cache.lexicon, 4, 4, False)
    assert not all(dated.hits_by_id()[c].is_current for c in dated.context)


def test_trace_leads_to_template_and_run(seed_eval: dict) -> None:
    cache, _ = _seed_cache(seed_eval)
    res = cache.lookup("What per diem do I get at the 2026 engineering offsite?")
    assert res.hit
    trace = res.trace
    assert trace["run_id"] == cache.manifest["run_id"] == cache.run_dir.name
    assert trace["lexicon_hash"] == cache.manifest["lexicon_hash"]
    assert trace["index_version"] == cache.manifest["index"]["version"]
    row = cache.templates[trace["template"]["shape_id"]]
    assert row["skeleton"] == trace["skeleton"] and row["route"] == res.route
    assert trace["evaluation"]["coverage"]["split"] >= trace["evaluation"]["coverage"]["one_search"]
    miss = cache.lookup("what colour is the office cat")
    assert not miss.hit and miss.trace["reason"] == miss.reason and "template" not in miss.trace
    # each trace is the caller's own: changing it changes neither the cache nor the next lookup's
    trace["evaluation"].clear()
    trace["template"]["route"] = "changed"
    again = cache.lookup("What per diem do I get at the 2026 engineering offsite?")
    assert again.trace["evaluation"] and again.trace["template"]["route"] == res.route == again.route


def test_lookup_scrubs_with_the_words_mining_scrubbed_with(demo_publication: Path) -> None:
    """The publication carries the words its chunks write in lower case (office names are capitalised there):
    the online scrubber is the one mining used, so a question in capitals keeps "APPROVED REMOTE" after "MY
    MANAGER" and still loses a name there."""
    cache = PlanCache.open(demo_publication)
    index = Index(cache.index_uri, cache.lexicon.config, cache.manifest["index"]["version"])
    words = index.plain_words()
    assert {"approved", "remote", "allowance"} <= set(words) and not {"berlin", "lisbon", "kowalski"} & set(words)
    shouted = "MY MANAGER APPROVED REMOTE WORK. WHAT IS THE REMOTE WORK ALLOWANCE IN BERLIN FOR 2026"
    assert cache.scrub(shouted) == cache.lexicon.scrubber(words)(shouted) != cache.lexicon.scrubber()(shouted)
    kept = cache.lookup(shouted)
    assert kept.skeleton is not None and kept.skeleton.startswith("my manager approved remote work")
    scrubbed = cache.lookup("MY MANAGER JAN KOWALSKI ASKED ABOUT THE REMOTE WORK ALLOWANCE IN BERLIN")
    assert scrubbed.skeleton is not None and "kowalski" not in scrubbed.skeleton


def test_cache_entries_record_provenance(demo_publication: Path) -> None:
    import pyarrow.parquet as pq

    from schemas.publication import current_run

    run = current_run(demo_publication)
    manifest = json.loads((run / "manifest.json").read_text())
    rows = pq.read_table(run / "cache.parquet").to_pylist()
    assert rows and all(r["writer"] == "rules" and r["lexicon_hash"] == manifest["lexicon_hash"] for r in rows)
    assert {r["index_version"] for r in rows} == {manifest["index"]["version"]}
    split = [r for r in rows if r["plan"]]
    assert split and all(json.loads(r["coverage"])["split"] >= 0 for r in split)


def test_route_without_evidence_is_one_search(seed_eval: dict) -> None:
    cache, index = _seed_cache(seed_eval)
    question = "Compare parental leave for the second parent in Berlin and Amsterdam."
    res = cache.lookup(question)
    assert res.route == "split"
    template = Plan.model_validate_json(cache.templates[res.shape_id or ""]["template"])
    sk = cache.lexicon.skeleton(question)
    assert decide_route(template, [sk], index, cache.lexicon, 4, 4, floor=0.35).route == "split"
    assert decide_route(template, [sk], index, cache.lexicon, 4, 4, floor=0.99).route == "one_search"
    # a split needs one chunk at the split floor, found by the question or a step (the best here is about 0.73)
    found = [index.search(question, 4, all_versions=True), *(p.hits for p in run_plan(fill_slots(template, sk.slots),
                                                                                     index, cache.lexicon, 4))]
    best = max(h.score for hits in found for h in hits)
    assert 0.6 < best < 0.9
    route = partial(decide_route, template, [sk], index, cache.lexicon, 4, 4, floor=0.35)
    assert route(split_floor=best).route == "split"
    assert route(split_floor=best + 0.01).route == "one_search"


REPORT_PLOTS = ["shape_frequency.png", "shape_types.png", "routes.png", "coverage.png", "bill_cost.png",
                "bill_latency.png"]


def test_report_plots_open_as_images(demo_publication: Path) -> None:
    """Each plot of the nightly report is a drawn PNG, shown in the Markdown beside its figures."""
    import matplotlib.image as mpimg

    from schemas.publication import current_run

    report = current_run(demo_publication) / "report"
    text = (report / "report.md").read_text(encoding="utf-8")
    for name in REPORT_PLOTS:
        image = mpimg.imread(report / name)
        assert image.shape[0] > 150 and image.shape[1] > 500, name
        assert image[..., :3].std() > 0.05, f"{name} is blank"
        assert f"]({name})" in text, name
    section = text.split("### Coverage per split shape", 1)[1].split("![coverage per shape]", 1)[0]
    assert section.count("| `") >= 2  # the plotted shapes are in the table above the plot


def test_a_publication_config_with_fields_this_version_lacks_still_loads() -> None:
    """An online service upgraded after the nightly reads its config.json: the fields a newer version added are
    dropped, where the strict model would refuse the whole cache; the fields this version knows keep their values."""
    from schemas.config import load_config, published_config

    config = load_config(ROOT / "data" / "configs" / "demo.yaml")
    config.mining.min_users = 7
    saved = json.loads(config.model_dump_json())
    saved["newer_top"] = 1
    saved["mining"]["newer_knob"] = [1, 2]
    saved["facets"][0]["newer_facet_field"] = "x"
    assert published_config(json.dumps(saved)).model_dump() == config.model_dump()


def test_labels_that_cannot_be_scored_are_refused(tmp_path: Path) -> None:
    """'parts' that is not a list of lists, or names a document the corpus does not hold, is bad input naming
    the file (and the line or the question): scored, either would only count as a missed question."""
    from types import SimpleNamespace

    import pyarrow as pa

    from schemas.errors import LabelError
    from tasks.evaluate import check_parts, doc_facets, read_labeled

    bad = tmp_path / "q.jsonl"
    bad.write_text('{"question": "a?", "parts": [["d1"]]}\n{"question": "b?", "parts": "oops"}\n', encoding="utf-8")
    with pytest.raises(LabelError, match=f"{bad}:2: expected JSON .* 'parts' is \"oops\""):
        read_labeled(bad)
    bad.write_text('{"question": "a?", "parts": [["d1"]]}\n\n{"question": "b?"\n', encoding="utf-8")
    with pytest.raises(LabelError, match=f"{bad}:3: not JSON \\(Expecting ',' delimiter at column 18\\); each "
                                         "line is one JSON object") as caught:
        read_labeled(bad)
    assert "line 2" not in str(caught.value)  # the file's line, not the decoder's count within it
    bad.write_text('{"question": "a?", "parts": [["d1"]]}\n{"question": " ? ", "parts": [["d1"]]}\n', encoding="utf-8")
    with pytest.raises(LabelError, match=f"{bad}:2: 'question' has no words"):  # not the eval's own log file
        read_labeled(bad)
    for said in ("null", "42", '["a?"]'):  # scored as the question "None", "42", "['a?']"
        bad.write_text('{"question": "a?", "parts": [["d1"]]}\n{"question": ' + said + ', "parts": [["d1"]]}\n',
                       encoding="utf-8")
        with pytest.raises(LabelError, match=re.escape(f"{bad}:2: expected JSON with 'question' and 'parts'") +
                           f".*'question' is {re.escape(said)}, not a string"):
            read_labeled(bad)
    for said in ('"yes"', "1"):  # scored, either would count as no label at all
        bad.write_text('{"question": "a?", "parts": [["d1"]], "should_split": ' + said + '}\n', encoding="utf-8")
        with pytest.raises(LabelError, match=f"{bad}:1: .*'should_split' is {said}, not true, false or null"):
            read_labeled(bad)
    bad.write_text('{"id": "1", "question": "a?", "parts": []}\n{"id": "1", "question": "b?", "parts": []}\n',
                   encoding="utf-8")  # the scores would name one question for two
    with pytest.raises(LabelError, match=f"{bad}:2: id '1' given twice \\(first on line 1\\)"):
        read_labeled(bad)
    bad.write_text('{"id": "q1", "question": "a?", "parts": [["d1"], ["d2", "d3"]]}\n', encoding="utf-8")
    index = SimpleNamespace(config=SimpleNamespace(facet_names=["office"]),
                            columns=lambda names: pa.table({"doc_id": ["d1", "d2"], "office": ["Berlin", None]})
                            .select(names))
    with pytest.raises(LabelError, match=f"{bad}:1: 1 part\\(s\\) name documents the corpus does not hold "
                                         "\\(line 1, question q1: d3\\)"):
        check_parts(read_labeled(bad), doc_facets(index).keys(), str(bad))  # type: ignore[arg-type]


def test_a_split_of_a_null_question_is_a_split_against_the_label(tmp_path: Path) -> None:
    """A question labeled null (the corpus holds no answer) should not be split unless its label says
    otherwise; a question of another type without `should_split` is not judged."""
    from collections import defaultdict

    from tasks.evaluate import _score, read_labeled
    from tasks.executor import Retrieved, StepResult

    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "n", "question": "a?", "shape": "null", "parts": []}\n'
                    '{"id": "m", "question": "b?", "shape": "null", "parts": [], "should_split": true}\n'
                    '{"id": "o", "question": "d?", "shape": "null", "parts": [], "should_split": null}\n'
                    '{"id": "c", "question": "c?", "shape": "comparison", "parts": [["d1"]]}\n', encoding="utf-8")
    null, marked, unsaid, other = read_labeled(path)
    assert (null.should_split, marked.should_split, unsaid.should_split, other.should_split) == (False, True, False,
                                                                                                   None)
    split = Retrieved(["d1#0"], [StepResult("s1", "a", {}), StepResult("s2", "b", {})], 2)
    counts: dict[str, float] = defaultdict(float)
    for q in (null, marked, unsaid, other):
        _score(counts, q, split, "routed", None, None)
    assert counts["split_against_label"] == 2 and counts["missed_splits"] == 0


def test_split_counts_without_split_labels_are_null_with_a_note(tmp_path: Path) -> None:
    """A set no question of which says `should_split` (nor is labeled null) cannot count splits against its
    labels: those counts are null, not 0, and a note says why; `multi_step` counts the questions a plan of two
    or more steps served, and a plan of one filtered step is none of them."""
    from collections import defaultdict

    from tasks.evaluate import NO_SPLIT_LABELS, _row, _score, notes, read_labeled
    from tasks.executor import Retrieved, StepResult

    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "question": "a?", "parts": [["d1"]]}\n'
                    '{"id": "b", "question": "b?", "shape": "comparison", "parts": [["d1"], ["d2"]]}\n',
                    encoding="utf-8")
    one_step, two_steps = read_labeled(path)
    counts: dict[str, float] = defaultdict(float)
    _score(counts, one_step, Retrieved(["d1"], [StepResult("s1", "a", {"office": "Berlin"})], 1), "routed", None,
           None)
    _score(counts, two_steps, Retrieved(["d1", "d2#0"], [StepResult("s1", "b", {}), StepResult("s2", "b", {})], 2),
           "routed", None, None)
    row = _row("routed", "ALL", counts)
    assert (row["split_against_label"], row["missed_splits"], row["labeled_splits"]) == (None, None, 0)
    assert (row["plans"], row["multi_step"]) == (2, 1)
    assert notes([one_step, two_steps]) == [NO_SPLIT_LABELS]
    assert "| - | - |" in markdown_rows([row])[2]


def test_eval_refuses_before_any_work(tmp_path: Path) -> None:
    """eval checks its labels against the corpus before it builds anything, and never publishes into a folder
    whose live publication another command made (it would replace it, index table and all)."""
    from typer.testing import CliRunner

    from planbake.cli import EVAL_MARK, EXIT_INPUT, app
    from tasks.publish.root import switch_pointer
    from tests.conftest import SEED

    corpus, questions = SEED / "corpus.jsonl", SEED / "questions.jsonl"
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"id": "q1", "question": "leave in Berlin?", "parts": [["leave-berlinn"]]}\n', encoding="utf-8")
    res = CliRunner().invoke(app, ["eval", "--corpus", str(corpus), "--questions", str(bad)])
    assert res.exit_code == EXIT_INPUT
    assert "q.jsonl:1: 1 part(s) name documents the corpus does not hold (line 1, question q1: leave-berlinn)" in (
        " ".join(res.output.split()))
    out = tmp_path / "out"
    (out / "runs" / "r1").mkdir(parents=True)
    switch_pointer(out, "r1")  # a live publication of `nightly`, say
    res = CliRunner().invoke(app, ["eval", "--corpus", str(corpus), "--questions", str(questions), "--out", str(out)])
    assert res.exit_code == EXIT_INPUT and "that eval did not build" in " ".join(res.output.split())
    assert (out / "CURRENT").read_text().strip() == "r1" and not (out / EVAL_MARK).exists()


def test_eval_refuses_a_plot_path_it_cannot_write_before_any_work(tmp_path: Path) -> None:
    """A --plot that is a folder, has no image suffix or lies under a file is refused before the build: after it,
    the refusal cost the run and its scores (and a folder was written as "<folder>.png")."""
    from typer.testing import CliRunner

    from planbake.cli import EXIT_INPUT, app
    from tests.conftest import SEED

    (tmp_path / "file").write_text("x", encoding="utf-8")
    for plot, said in [(tmp_path, "is a folder; pass a file name such as"),
                       (tmp_path / "eval.txt", "expected an image file name such as eval.png (formats: "),
                       (tmp_path / "eval", "expected an image file name such as eval.png"),
                       (tmp_path / "file" / "eval.png", f"{tmp_path / 'file'} is a file, not a folder")]:
        res = CliRunner().invoke(app, ["eval", "--corpus", str(SEED / "corpus.jsonl"), "--questions",
                                       str(SEED / "questions.jsonl"), "--plot", str(plot), "--out",
                                       str(tmp_path / "out")])
        assert res.exit_code == EXIT_INPUT and f"--plot {plot}: {said}" in " ".join(res.output.split()), res.output
        assert not (tmp_path / "out").exists() and not tmp_path.with_suffix(".png").exists()


def test_a_labeled_set_without_questions_is_refused(tmp_path: Path) -> None:
    """An empty or blank questions file is bad input naming the file, before any build (eval would otherwise
    fail on its own temporary log file; the gate would guard nothing)."""
    from schemas.errors import LabelError
    from tasks.evaluate import read_labeled

    bad = tmp_path / "q.jsonl"
    for text in ("", "\n\n", "  \r\n"):
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(LabelError, match=f"{bad}: holds no labeled question; write one JSON object a line"):
            read_labeled(bad)
