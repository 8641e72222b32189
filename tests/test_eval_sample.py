"""`planbake eval` is out of sample by default: a question is scored by plans mined from other questions (k folds
by its id) or from a query log (`--logs`); in sample (the questions it scores are the ones it mines) only with
`--in-sample`, and the output says which it was."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from planbake.cli import app
from schemas.errors import LabelError
from schemas.files import TEMPLATES
from schemas.publication import current_run
from tasks.evaluate import Labeled, split_folds
from tests.conftest import SEED, SHARED

ROOT = Path(__file__).resolve().parent.parent
ITPOLICY = ROOT / "data" / "itpolicy"


def _labeled(ids: list[str], texts: list[str]) -> list[Labeled]:
    return [Labeled(i, t, [{"doc"}], None, None) for i, t in zip(ids, texts, strict=True)]


@given(st.lists(st.text(min_size=1, max_size=8), min_size=2, max_size=30, unique=True), st.integers(2, 6),
       st.data())
def test_each_question_is_scored_once_by_plans_mined_without_it(ids: list[str], k: int, data: st.DataObject) -> None:
    texts = data.draw(st.lists(st.sampled_from(["leave in Berlin?", "Leave in Berlin? ", "per diem in Lisbon",
                                                "VPN at Porto"]), min_size=len(ids), max_size=len(ids)))
    labeled = _labeled(ids, texts)
    if k > len(labeled):
        with pytest.raises(LabelError, match=f"--folds {k}: a labeled set of {len(labeled)} question"):
            split_folds(labeled, k)
        return
    folds = split_folds(labeled, k)
    assert len(folds) == k
    assert sorted(q.id for _, scored in folds for q in scored) == sorted(ids)  # each scored once
    for mined, scored in folds:
        asked = {q.question.strip().casefold() for q in scored}
        assert not {q.id for q in mined} & {q.id for q in scored}
        assert not {q.question.strip().casefold() for q in mined} & asked  # not even the same text elsewhere
    # the fold of a question follows its id alone: the same in any order
    again = split_folds(list(reversed(labeled)), k)
    assert [sorted(q.id for q in s) for _, s in again] == [sorted(q.id for q in s) for _, s in folds]


def _eval(*args: str) -> tuple[int, dict, str]:
    res = CliRunner().invoke(app, ["eval", "--budget", "4", "--json", *args])
    return res.exit_code, json.loads(res.stdout) if res.exit_code == 0 else {}, res.output


def test_eval_is_out_of_sample_by_default(tmp_path: Path, seed_eval: dict, prefect_harness: None) -> None:
    """Two folds of the seed handbook: every question scored once, by plans of the other fold; a question whose
    shape no other question has gets no plan, as a new question would; in sample every question hits."""
    code, doc, output = _eval("--corpus", str(SEED / "corpus.jsonl"), "--questions", str(SEED / "questions.jsonl"),
                              "--plot", str(tmp_path / "eval.png"))
    assert code == 0, output
    assert doc["sample"]["folds"] == 2 and not doc["sample"]["in_sample"]
    assert doc["sample"]["note"].startswith("out of sample: 2 folds")
    assert sorted(q["id"] for q in doc["questions"]) == sorted(q["id"] for q in seed_eval["questions"])
    hits = [q["id"] for q in doc["questions"] if q["route"] != "online_planner"]
    assert all(q["route"] != "online_planner" for q in seed_eval["questions"])
    assert len(hits) < len(seed_eval["questions"])
    assert seed_eval["sample"]["in_sample"] and seed_eval["sample"]["note"].startswith("in sample")
    one = next(r for r in doc["rows"] if r["system"] == "one-search" and r["shape"] == "ALL")
    assert one == next(r for r in seed_eval["rows"] if r["system"] == "one-search" and r["shape"] == "ALL")


def test_eval_with_a_log_scores_plans_mined_from_it_alone(tmp_path: Path, prefect_harness: None) -> None:
    """The itpolicy set, whose log holds none of its labeled questions: routed plans find at least what one
    search finds on every question type, and more overall (facet scope keeps the company-wide rules)."""
    code, doc, output = _eval("--config", str(ROOT / "data" / "configs" / "itpolicy.yaml"), "--corpus",
                              str(ITPOLICY / "corpus.jsonl"), "--questions", str(ITPOLICY / "questions.jsonl"),
                              "--logs", str(ITPOLICY / "logs"), "--plot", str(tmp_path / "eval.png"), "--out",
                              str(tmp_path / "out"))
    assert code == 0, output
    _assert_routes_find_more(tmp_path / "out")
    assert doc["sample"]["logs"] == str(ITPOLICY / "logs") and doc["sample"]["note"].startswith("out of sample")
    rows = {(r["system"], r["shape"]): r for r in doc["rows"]}
    types = {shape for _, shape in rows}
    assert {"comparison", "bridge", "temporal", "aggregation", "null", "single"} <= types
    for shape in types:
        assert rows[("routed", shape)]["part_coverage"] >= rows[("one-search", shape)]["part_coverage"], shape
    assert rows[("routed", "ALL")]["part_coverage"] > rows[("one-search", "ALL")]["part_coverage"]
    assert sum(q["route"] != "online_planner" for q in doc["questions"]) >= 15  # the log's shapes reach them (19 of 50)


def _assert_routes_find_more(out: Path) -> None:
    """No shape is routed to a plan that its own measure estimates finds less than one search, or no more."""
    templates = pq.read_table(current_run(out) / TEMPLATES.name).to_pylist()
    split = 0
    for t in templates:
        if t["route"] != "one_search" and t["evaluation"]:
            coverage = json.loads(t["evaluation"])["coverage"]
            assert coverage[t["route"]] > coverage["one_search"], (t["skeleton"], coverage)
            split += 1
    assert split > 0


def test_the_demo_routes_a_split_only_where_its_measure_finds_more(demo_publication: Path) -> None:
    _assert_routes_find_more(demo_publication)


def test_one_sample_option_at_a_time() -> None:
    for args in (["--in-sample", "--folds", "3"], ["--in-sample", "--logs", "x"], ["--folds", "3", "--logs", "x"]):
        res = CliRunner().invoke(app, ["eval", "--corpus", "c", "--questions", "q", *args])
        assert res.exit_code == 2 and "give one of --folds, --logs and --in-sample" in res.output, res.output


def test_the_halves_are_disjoint_and_follow_the_shared_split(tmp_path: Path) -> None:
    """`--half`: split.json beside the questions when there is one; else its rule (SHA-256 of the id, first half
    dev), which gives the shared sets' own split.json."""
    from tasks.evaluate import half, read_labeled

    labeled = _labeled([f"q{n}" for n in range(7)], ["a question"] * 7)
    dev, test = half(labeled, "dev", tmp_path / "q.jsonl"), half(labeled, "test", tmp_path / "q.jsonl")
    assert len(dev) == 4 and len(test) == 3 and sorted(q.id for q in dev + test) == sorted(q.id for q in labeled)
    shared = SHARED
    for name in ("multihop_rag_500", "hotpotqa_100"):
        if not (shared / name / "split.json").is_file():
            continue
        questions = read_labeled(shared / name / "questions.jsonl")
        split = json.loads((shared / name / "split.json").read_text(encoding="utf-8"))
        for which in ("dev", "test"):
            assert {q.id for q in half(questions, which, tmp_path / "q.jsonl")} == set(split[which]), name
            assert {q.id for q in half(questions, which, shared / name / "questions.jsonl")} == set(split[which])
    (tmp_path / "split.json").write_text(json.dumps({"dev": ["q1"], "test": []}), encoding="utf-8")
    assert [q.id for q in half(labeled, "dev", tmp_path / "q.jsonl")] == ["q1"]
    with pytest.raises(LabelError, match="no question of the test half"):
        half(labeled, "test", tmp_path / "q.jsonl")
