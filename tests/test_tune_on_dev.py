"""benchmarks.tune_on_dev chooses on fake eval documents: the best dev candidate that keeps every question type at
least at one search, a tie keeping the current values; its grid (decimal, integer and list settings) and its text
edit of a config. No eval runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.tune_on_dev import (
    candidates,
    choose,
    default_grid,
    holds,
    parse_grid,
    read_current,
    table,
    write_values,
)
from schemas.config import load_config


def doc(routed: dict[str, float], one: dict[str, float], overall: float) -> dict[str, Any]:
    """An eval JSON document's rows: routed and one search per type, and routed overall."""
    rows = [{"system": "routed", "shape": "ALL", "part_coverage": overall},
            {"system": "one-search", "shape": "ALL", "part_coverage": 0.7}]
    rows += [{"system": "routed", "shape": s, "part_coverage": v} for s, v in routed.items()]
    rows += [{"system": "one-search", "shape": s, "part_coverage": v} for s, v in one.items()]
    return {"rows": rows}


ONE = {"comparison": 0.8, "inference": 0.6, "null": 1.0}


def test_the_best_candidate_that_holds_on_every_type_is_chosen() -> None:
    docs = [doc({"comparison": 0.85, "inference": 0.65, "null": 1.0}, ONE, 0.80),  # current
            doc({"comparison": 0.95, "inference": 0.55, "null": 1.0}, ONE, 0.90),  # best, but inference falls
            doc({"comparison": 0.86, "inference": 0.66, "null": 1.0}, ONE, 0.82),  # best that holds
            doc({"comparison": 0.85, "inference": 0.60, "null": 1.0}, ONE, 0.81)]  # holds (a tie with one search)
    assert not holds(docs[1]) and holds(docs[3])
    assert choose(docs) == 2


def test_a_tie_keeps_the_current_values() -> None:
    same = {"comparison": 0.85, "inference": 0.65, "null": 1.0}
    assert choose([doc(same, ONE, 0.80), doc(same, ONE, 0.80), doc(same, ONE, 0.79)]) == 0


def test_the_current_values_stay_when_no_candidate_holds_or_an_eval_failed() -> None:
    low = {"comparison": 0.70, "inference": 0.65, "null": 1.0}
    assert choose([doc(low, ONE, 0.80), doc(low, ONE, 0.90), None]) == 0
    # a current that fails is beaten by any candidate that holds, even a lower one
    assert choose([doc(low, ONE, 0.80), None, doc({"comparison": 0.8, "inference": 0.6, "null": 1.0}, ONE,
                                                  0.75)]) == 2


def test_the_grid_moves_one_setting_at_a_time_inside_its_range() -> None:
    current = read_current({"planning": {"split_floor": 0.48, "evidence_margin": 1.0}},
                           ["planning.split_floor", "mining.null_floor", "planning.evidence_margin"])
    assert current == {"planning.split_floor": 0.48, "mining.null_floor": 0.35, "planning.evidence_margin": 1.0}
    grid = default_grid(current)
    assert grid["planning.split_floor"] == [0.44, 0.52]
    cands = candidates(current, grid)
    assert cands[0] == current and len(cands) == 7
    assert all(sum(c[k] != current[k] for k in current) == 1 for c in cands[1:])
    assert default_grid({"planning.split_floor": -1.0})["planning.split_floor"] == [-0.96]  # -1.04 is out of range
    assert default_grid({"planning.evidence_margin": 0.1})["planning.evidence_margin"] == [0.35]


def test_an_integer_setting_takes_its_choices_and_a_list_setting_its_default() -> None:
    keys = ["planning.hybrid_depth", "planning.frame_words", "planning.max_steps"]
    current = read_current({"planning": {"hybrid_depth": 100, "frame_words": ["does", "article"]}}, keys)
    assert current == {"planning.hybrid_depth": 100, "planning.frame_words": ["does", "article"],
                       "planning.max_steps": 6}
    assert isinstance(current["planning.hybrid_depth"], int)
    grid = default_grid(current)
    assert grid == {"planning.hybrid_depth": [20, 50, 200], "planning.frame_words": [[]],
                    "planning.max_steps": [3, 12]}  # no CHOICES: its half and double
    cands = candidates(current, grid)
    assert cands[0] == current and len(cands) == 7
    assert {"planning.hybrid_depth": 100, "planning.frame_words": [], "planning.max_steps": 6} in cands
    assert all(sum(c[k] != current[k] for k in current) == 1 for c in cands[1:])
    # at its default a list has no alternative; an integer's range bounds its half and double (max_steps <= 32)
    assert default_grid(read_current({}, keys)) == {"planning.hybrid_depth": [50, 100, 200],
                                                   "planning.frame_words": [], "planning.max_steps": [3, 12]}
    assert default_grid({"planning.max_steps": 32}) == {"planning.max_steps": [16]}


def test_the_grid_option_parses_each_setting_by_its_kind() -> None:
    current = read_current({"planning": {"frame_words": ["does"]}}, ["planning.hybrid_depth", "planning.frame_words",
                                                                     "planning.split_floor"])
    grid = parse_grid(["planning.hybrid_depth=50,200", "planning.frame_words", "planning.split_floor=0.4"], current)
    assert grid == {"planning.hybrid_depth": [50, 200], "planning.frame_words": [[]], "planning.split_floor": [0.4]}
    assert all(isinstance(v, int) for v in grid["planning.hybrid_depth"])
    with pytest.raises(SystemExit):
        parse_grid(["planning.frame_words=does"], current)


def test_the_table_marks_the_chosen_candidate() -> None:
    cands = [{"planning.split_floor": 0.48}, {"planning.split_floor": 0.52}]
    one = {"comparison": 0.8}
    lines = table(cands, [doc({"comparison": 0.85}, one, 0.8), doc({"comparison": 0.9}, one, 0.85)], 1)
    assert "chosen" in lines[3] and "(current)" in lines[2] and "0.900 / 0.800" in lines[3]
    lists = table([{"planning.frame_words": ["does", "article"]}, {"planning.frame_words": []}],
                  [doc({"comparison": 0.85}, one, 0.8), None], 0)
    assert lists[2].startswith("| [2 words] |") and lists[3].startswith("| [] | failed |")


@pytest.mark.parametrize("text", [
    "# a comment\nmining: {min_count: 1, null_floor: 0.35}  # kept\nplanning: {writer: rules, evidence_margin: 1.0,\n"
    "           split_floor: 0.48, frame_words: [does]}\nfacets: []\n",
    "planning:\n  writer: rules\n  split_floor: 0.48\n# between\nfacets: []\n",
])
def test_write_edits_the_values_and_keeps_the_comments(tmp_path: Path, text: str) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(text, encoding="utf-8")
    write_values(config, {"planning.split_floor": 0.52, "mining.null_floor": 0.3})
    out = config.read_text(encoding="utf-8")
    assert [line.split("#")[1] for line in out.splitlines() if "#" in line] == \
        [line.split("#")[1] for line in text.splitlines() if "#" in line]
    raw = yaml.safe_load(out)
    assert raw["planning"]["split_floor"] == 0.52 and raw["mining"]["null_floor"] == 0.3
    assert raw["planning"]["writer"] == "rules"


def test_write_keeps_the_committed_config_valid(tmp_path: Path) -> None:
    config = tmp_path / "multihop_rag.yaml"
    config.write_text((Path(__file__).resolve().parent.parent / "data/configs/multihop_rag.yaml").read_text(
        encoding="utf-8"), encoding="utf-8")
    before = load_config(config)
    write_values(config, {"planning.split_floor": 0.44, "planning.evidence_margin": 0.75})
    cfg = load_config(config)
    assert (cfg.planning.split_floor, cfg.planning.evidence_margin) == (0.44, 0.75)
    assert cfg.mining == before.mining and cfg.planning.hybrid_depth == before.planning.hybrid_depth


def test_write_sets_an_integer_and_a_list_over_several_lines(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("planning: {writer: rules, hybrid_depth: 100,  # kept\n"
                      "           frame_words: [does, article,\n             suggest], split_floor: 0.48}\n",
                      encoding="utf-8")
    write_values(config, {"planning.hybrid_depth": 50, "planning.frame_words": []})
    assert config.read_text(encoding="utf-8") == ("planning: {writer: rules, hybrid_depth: 50,  # kept\n"
                                                  "           frame_words: [], split_floor: 0.48}\n")
    write_values(config, {"planning.frame_words": ["does", "article"]})
    assert yaml.safe_load(config.read_text(encoding="utf-8"))["planning"]["frame_words"] == ["does", "article"]
    block = tmp_path / "block.yaml"
    block.write_text("planning:\n  frame_words: [does,\n    do]  # kept\n  hybrid_depth: 100\n", encoding="utf-8")
    write_values(block, {"planning.frame_words": [], "planning.hybrid_depth": 200})
    assert block.read_text(encoding="utf-8") == "planning:\n  frame_words: []  # kept\n  hybrid_depth: 200\n"
    absent = tmp_path / "absent.yaml"  # a key the section lacks is added to it
    absent.write_text("planning: {writer: rules}\n", encoding="utf-8")
    write_values(absent, {"planning.frame_words": ["does"]})
    assert yaml.safe_load(absent.read_text(encoding="utf-8")) == {"planning": {"frame_words": ["does"],
                                                                        "writer": "rules"}}
