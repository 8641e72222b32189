"""The mining stage on the demo logs (against their ground truth), and ingest on small logs."""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
import os
import re
import shutil
import sys
import zlib
from collections import Counter, defaultdict
from datetime import date, datetime
from pathlib import Path
from typing import Any
from unittest.mock import patch

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401 - pa.compute
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import tasks.ingest.sql as ingest_sql
from flows.stages import mine_logs
from schemas.config import Config, load_config
from schemas.errors import LogError
from schemas.extract import Lexicon
from schemas.pii import Scrubber, read_plain_words
from schemas.publication import current_run, read_manifest
from schemas.text import fold
from tasks.index.store import Index
from tasks.ingest.checks import check_window
from tasks.ingest.files import log_files
from tasks.ingest.stage import ingest
from tasks.mine import followups
from tasks.mine.mining import NEAR_TOP_SQL, _seed, near_top, roles
from tests.conftest import DEMO_CONFIG, ROOT
from tests.test_privacy import NEAR_DUPLICATE, OFFICES, UNIQUE, build_seed_index, find_leaks, write_log

DEMO = ROOT / "data" / "demo"
TRUTH = json.loads((DEMO / "log_shapes.json").read_text(encoding="utf-8"))
CONFIG = load_config(DEMO_CONFIG)
LEX = Lexicon(CONFIG)
SCRUB = Scrubber(keep=LEX.name_words())

# Measured on the demo (merge_similarity 0.9, min_count 5, min_users 3); the floors sit a little below.
# Fraction of a generated shape's rows in its biggest mined shape. Phrasings merge only as far as the
# threshold lets them, and qualifiers ("second parent", "foster parent") are part of a skeleton by design,
# so parental leave splits four ways before any phrasing does.
WHOLE_SHAPE_FLOOR = {"vacation_days": 0.62, "parental_leave": 0.15, "per_diem": 0.44, "remote_allowance": 0.29,
                     "compare_parental_leave": 0.2}
# Fraction of the rows of one phrasing (one clean skeleton: case, spaces, typos and PII wrappers varied)
# in its biggest mined shape, for every clean skeleton with at least 100 rows; and row-weighted over them.
PHRASING_FLOOR, PHRASING_WEIGHTED_FLOOR = 0.75, 0.85


def _question_ids(rows: list[tuple[str, str, str]]) -> list[int]:
    """What the mining stage computes for logged (ts, user, query) rows: DuckDB's hash(ts, user, query), the
    timestamp cast as the log is read."""
    table = pa.table({"ts": [r[0] for r in rows], "user": [r[1] for r in rows],  # noqa: F841
                      "query": [r[2] for r in rows]})
    return [r[0] for r in duckdb.sql('SELECT hash(try_cast(ts AS TIMESTAMP), "user", query) FROM "table"').fetchall()]


def _ids_of(rows: list[dict[str, Any]]) -> list[int]:
    return _question_ids([(r["ts"], r["user"], r["query"]) for r in rows])


def _log_rows() -> list[dict[str, Any]]:
    rows = []
    for f in sorted((DEMO / "logs").rglob("*.jsonl.gz")):
        for line in gzip.decompress(f.read_bytes()).splitlines():
            try:
                row = json.loads(line)
            except (ValueError, UnicodeDecodeError):
                continue
            if isinstance(row, dict) and isinstance(row.get("query"), str) and row["query"].strip():
                row["file"] = f
                rows.append(row)
    return rows


@pytest.fixture(scope="module")
def small_index(tmp_path_factory: pytest.TempPathFactory, seed_corpus: Path) -> tuple[Config, Index]:
    return build_seed_index(tmp_path_factory, seed_corpus)


@pytest.fixture(scope="module")
def run_dir(demo_publication: Path) -> Path:
    return current_run(demo_publication)


@pytest.fixture(scope="module")
def questions(run_dir: Path) -> dict[int, dict[str, Any]]:
    return {r["question_id"]: r for r in pq.read_table(run_dir / "questions.parquet").to_pylist()}


@pytest.fixture(scope="module")
def shapes(run_dir: Path) -> list[dict[str, Any]]:
    return sorted(pq.read_table(run_dir / "shapes.parquet").to_pylist(), key=lambda s: (-s["count"], s["skeleton"]))


@pytest.fixture(scope="module")
def labels(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[str, str]]:
    """question id -> (generated shape, skeleton of the clean question before noise and PII), by re-running the
    deterministic generator and checking that it writes exactly the committed logs."""
    spec = importlib.util.spec_from_file_location("demo_generate_logs", DEMO / "generate_logs.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = gen  # its dataclasses look their module up
    spec.loader.exec_module(gen)
    clean: list[str] = []
    captured: dict[str, Any] = {}
    add_noise, pick_follow_ups = gen.add_noise, gen.pick_follow_ups

    def noise(rng: Any, text: str, stats: Any) -> str:
        clean.append(text)
        return add_noise(rng, text, stats)

    def follow_ups(rng: Any, events: list[Any], n: int, stats: Any) -> Any:
        captured["events"] = list(events)
        return pick_follow_ups(rng, events, n, stats)

    gen.add_noise, gen.pick_follow_ups = noise, follow_ups
    out = tmp_path_factory.mktemp("regenerated")
    gen.generate(out)
    for f in sorted((DEMO / "logs").rglob("*.jsonl.gz")):
        again = out / f.relative_to(DEMO)
        same = gzip.decompress(again.read_bytes()) == gzip.decompress(f.read_bytes())
        assert same, f"{f}: not what the generator writes; the labels would not match"
    events = captured["events"]
    pairs = list(zip(events, clean, strict=False))
    ids = _question_ids([(gen.fmt_ts(e.sec), e.user, e.query) for e, _ in pairs])
    return {qid: (e.shape, LEX.skeleton(c, date(2026, 6, 1)).text) for qid, (e, c) in zip(ids, pairs, strict=True)}


# --- the demo -----------------------------------------------------------------------------------


def test_every_row_is_mined_or_quarantined(run_dir: Path, questions: dict[int, dict[str, Any]]) -> None:
    mined = read_manifest(run_dir)["mine"]
    assert mined["rows"] == TRUTH["valid_rows"]
    assert mined["rows"] + mined["quarantined"] == TRUTH["total_lines"]
    assert pq.read_metadata(run_dir / "questions.parquet").num_rows == TRUTH["valid_rows"]
    assert len(questions) > 0.99 * TRUTH["valid_rows"]  # ids are unique but for identical (ts, user, query)
    # follow-ups ("what about Lisbon?") are no shapes of their own: they are served through the shape they resolve to
    served = mined["recurring_questions"] + mined["followups"]["cached"]
    assert served > 0.9 * TRUTH["valid_rows"], (mined["recurring_questions"], mined["followups"])


REASON = {"truncated_json": "unparsable line", "binary_junk": "not UTF-8 text", "missing_query": "missing query",
          "bad_timestamp": "bad timestamp", "empty_query": "empty query", "whitespace_query": "empty query",
          "long_query": "query too long"}


def test_malformed_rows_are_quarantined_with_their_reason(run_dir: Path) -> None:
    rows = pq.read_table(run_dir / "quarantine.parquet").to_pylist()
    malformed = TRUTH["malformed"]
    assert len(rows) == malformed["rows"] == 30
    want = Counter({REASON[k]: 0 for k in REASON})
    for kind, n in malformed["by_kind"].items():
        want[REASON[kind]] += n
    assert Counter(r["reason"] for r in rows) == +want
    # by file and line: each one where it was written, with its reason
    where = Counter((Path(m["file"]).parent.name, m["line"], REASON[m["kind"]]) for m in malformed["lines"])
    assert Counter((Path(r["file"]).parent.name, r["line"], r["reason"]) for r in rows) == where
    assert all(len(r["raw"]) <= 200 for r in rows)
    # no user id, whether or not it looks like one to the scrubber ("u-e3f3d4" and "u-123456" alike)
    users = [m.group(1) for r in rows for m in re.finditer(r'"user"\s*:\s*"([^"]*)', r["raw"])]
    assert users and set(users) == {"{user}"}, users


def test_top_shapes_are_the_ones_generated_most(shapes: list[dict[str, Any]], labels: dict[int, tuple[str, str]],
                                               questions: dict[int, dict[str, Any]]) -> None:
    generated = sorted(TRUTH["shapes"], key=lambda name: TRUTH["shapes"][name]["rank"])
    # the top recurring shape is a phrasing of the top generated shape, read from the skeleton alone
    top_phrasings = {LEX.skeleton(p.format(office="Berlin")).text for p in TRUTH["shapes"][generated[0]]["phrasings"]}
    assert shapes[0]["skeleton"] in top_phrasings
    assert shapes[0]["type"] == "single" and shapes[0]["users"] >= 1000
    # each mined shape, named after the generated shape most of its questions come from
    by_shape: dict[str, Counter[str]] = defaultdict(Counter)
    for qid, (name, _) in labels.items():
        by_shape[questions[qid]["shape_id"]][name] += 1
    major = [by_shape[s["shape_id"]].most_common(1)[0][0] if by_shape[s["shape_id"]] else None for s in shapes]
    assert major[:3] == [generated[0], generated[2], generated[0]]  # vacation days, per diem, vacation days
    first_rank = {name: major.index(name) for name in generated[:5]}
    assert max(first_rank.values()) < 25, first_rank  # measured: 0, 3, 1, 6, 22
    # rows in recurring shapes per generated shape: the generated order of the top six, and the long tail
    mined_rows = Counter({n: 0 for n in generated})
    for s, name in zip(shapes, major, strict=True):
        if name:
            mined_rows[name] += s["count"]
    assert [n for n, _ in mined_rows.most_common(6)] == generated[:6]
    assert _spearman([TRUTH["shapes"][n]["rows"] for n in generated], [mined_rows[n] for n in generated]) > 0.95


def _spearman(a: list[float], b: list[float]) -> float:
    def ranks(x: list[float]) -> list[float]:
        order = sorted(range(len(x)), key=lambda i: x[i])
        r = [0.0] * len(x)
        for pos, i in enumerate(order):
            r[i] = pos
        return r

    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    return cov / math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))


def purity(labels: dict[int, tuple[str, str]], questions: dict[int, dict[str, Any]]) -> tuple[dict, dict]:
    """(generated shape -> (rows, fraction in its biggest mined shape, fraction in no recurring shape)),
    and the same per clean skeleton (one phrasing with one qualifier)."""
    by_name: dict[str, Counter[str | None]] = defaultdict(Counter)
    by_clean: dict[tuple[str, str], Counter[str | None]] = defaultdict(Counter)
    for qid, (name, clean) in labels.items():
        sid = questions[qid]["shape_id"]
        by_name[name][sid] += 1
        by_clean[(name, clean)][sid] += 1

    def summary(c: Counter[str | None]) -> tuple[int, float, float]:
        n = sum(c.values())
        biggest = max((v for k, v in c.items() if k is not None), default=0)
        return n, biggest / n, c[None] / n

    return {k: summary(c) for k, c in by_name.items()}, {k: summary(c) for k, c in by_clean.items()}


def test_phrasings_of_one_shape_land_in_one_shape(labels: dict[int, tuple[str, str]],
                                                 questions: dict[int, dict[str, Any]]) -> None:
    whole, per_phrasing = purity(labels, questions)
    for name, floor in WHOLE_SHAPE_FLOOR.items():
        assert whole[name][1] >= floor, (name, whole[name])
    big = {k: v for k, v in per_phrasing.items() if v[0] >= 100}
    assert len(big) >= 100
    worst = min(big.items(), key=lambda kv: kv[1][1])
    assert worst[1][1] >= PHRASING_FLOOR, worst
    weighted = sum(n * f for n, f, _ in big.values()) / sum(n for n, _, _ in big.values())
    assert weighted >= PHRASING_WEIGHTED_FLOOR
    # and few of a phrasing's rows end in no recurring shape at all (a typo or a PII wrapper that fewer than
    # min_users people share); measured at most 21% for the phrasings of 100-130 rows, 1-8% for the big ones
    assert max(v[2] for v in big.values()) < 0.25
    assert max(v[2] for v in big.values() if v[0] >= 1000) < 0.05


def test_same_skeleton_different_values_is_one_shape(shapes: list[dict[str, Any]],
                                                     questions: dict[int, dict[str, Any]]) -> None:
    slots: dict[str, list[dict[str, str]]] = defaultdict(list)
    for q in questions.values():
        slots[q["shape_id"]].append(json.loads(q["slots"]))
    by_skeleton = {s["skeleton"]: s["shape_id"] for s in shapes}
    offices = set(CONFIG.facet("office").values)
    top = slots[shapes[0]["shape_id"]]
    assert {s["office_1"] for s in top} == offices and all(set(s) == {"office_1"} for s in top)
    holidays = slots[by_skeleton["which public holidays does {office} have in {year}"]]
    assert {s["office_1"] for s in holidays} == offices
    assert {s["year_1"] for s in holidays} == {"2024", "2025", "2026", "2027"}
    compare = slots[by_skeleton["compare parental leave for the second parent in {office} and {office}"]]
    pairs = {(s["office_1"], s["office_2"]) for s in compare}
    assert len(pairs) == 30 and all(a != b for a, b in pairs)  # every ordered pair of two offices
    change = slots[by_skeleton["how did the remote work allowance change between {year} and {year}"]]
    assert len({(s["year_1"], s["year_2"]) for s in change}) == 6
    # one shape id per skeleton: no shape is split by its values
    assert len(by_skeleton) == len(shapes) == len({s["shape_id"] for s in shapes})


def test_published_values_and_shapes_are_each_questions_own(run_dir: Path, questions: dict[int, dict[str, Any]],
                                                            shapes: list[dict[str, Any]]) -> None:
    """questions.parquet names each question's constraints, slots and shape by number inside the stage; the
    values written must be the ones the Python extractor (the code `lookup` runs) gives that very question."""
    lexicon = Lexicon(CONFIG, json.loads((run_dir / "lexicon.json").read_text(encoding="utf-8")))
    scrub = lexicon.scrubber(read_plain_words(run_dir))
    shape_of = followups.shape_lookup([{**s, "recurring": True} for s in shapes])  # as the cache reads them
    checked = with_shape = rare = 0
    rows = _log_rows()[::5]
    for row, qid in zip(rows, _ids_of(rows), strict=True):
        q = questions.get(qid)
        if q is None:  # quarantined
            continue
        sk = lexicon.skeleton(scrub(row["query"]), date(int(row["ts"][:4]), 7, 1))
        assert json.loads(q["constraints"]) == [[c.facet, c.value] for c in sk.constraints], (row, q)
        assert json.loads(q["slots"]) == sk.slots, (row, q)
        if not q["followup"]:  # the shape a lookup finds for the question is the one mining gave it, or none
            assert shape_of.get(sk.text) == q["shape_id"], (row, q)
            with_shape += q["shape_id"] is not None
            rare += q["shape_id"] is not None and sk.text not in shape_of.by_text
        checked += 1
    assert checked > 10_000 and with_shape > 5_000 and rare > 0, (checked, with_shape, rare)


def test_relative_years_resolve_against_the_row(questions: dict[int, dict[str, Any]]) -> None:
    seen: Counter[str] = Counter()
    rows = _log_rows()
    for row, qid in zip(rows, _ids_of(rows), strict=True):
        text = fold(row["query"])
        for phrase, year in (("this year", "2026"), ("last year", "2025"), ("next year", "2027")):
            if phrase in text:
                assert row["ts"].startswith("2026-")
                q = questions[qid]
                years = [v for f, v in json.loads(q["constraints"]) if f == "year"]
                assert year in years, (row, q)
                seen[phrase] += 1
    assert min(seen.values()) > 500, seen


def test_one_user_alone_is_never_recurring(demo_publication: Path, shapes: list[dict[str, Any]],
                                           questions: dict[int, dict[str, Any]]) -> None:
    poison = TRUTH["poisoning"]
    injection = poison["injection"]
    rows = [r for r in _log_rows() if r["user"] == injection["user"]]
    assert len(rows) == injection["rows"] == 400
    assert {questions[qid]["shape_id"] for qid in _ids_of(rows)} == {None}
    odd = [o["text"] for o in poison["odd_questions"]]
    published = [s["skeleton"] for s in shapes] + [e for s in shapes for e in s["examples"]]
    assert not any("instructions" in s or "klingon" in s or "swallow" in s for s in published)
    leaks = find_leaks(demo_publication, [injection["text"], *odd, "previous instructions", "unladen swallow"])
    assert not leaks, leaks
    # every published shape has at least min_users users and min_count questions
    assert min(s["users"] for s in shapes) >= CONFIG.mining.min_users
    assert min(s["count"] for s in shapes) >= CONFIG.mining.min_count


def test_published_shapes_are_classified(shapes: list[dict[str, Any]]) -> None:
    assert {s["type"] for s in shapes} == {"single", "comparison", "temporal", "bridge", "aggregation",
                                          "verification", "null"}
    assert all(s["reason"] for s in shapes)
    assert all(s["first_seen"] <= s["last_seen"] for s in shapes)


# --- small logs ---------------------------------------------------------------------------------


def test_single_user_shape_is_not_recurring_however_often(tmp_path: Path, small_index: tuple[Config, Index]) -> None:
    config, index = small_index
    rows = [("solo", "what is the per diem in Lisbon for the chess tournament")] * 1000
    rows += [(f"u{i}", f"what is the per diem in {o}") for i in range(3) for o in ("Berlin", "Lisbon")]
    staging = tmp_path / "staging"
    staging.mkdir()
    result, _ = mine_logs(write_log(tmp_path / "log.jsonl", rows), config, index, staging, now=datetime(2026, 12, 1),
                          quiet=True)
    assert (result.rows, result.recurring, result.recurring_questions) == (1006, 1, 6)
    shapes = pq.read_table(staging / "shapes.parquet").to_pylist()
    assert [s["skeleton"] for s in shapes] == ["what is the per diem in {office}"]
    q = pq.read_table(staging / "questions.parquet").to_pylist()
    assert sum(r["shape_id"] is None for r in q) == 1000
    assert not find_leaks(staging, ["chess tournament"])


def test_the_reverse_trip_is_a_shape_of_its_own(tmp_path: Path, small_index: tuple[Config, Index]) -> None:
    """"from Berlin to Lisbon" and "to Berlin from Lisbon" skeletonise alike but for their words' order, which
    embeds almost the same (cosine 0.99): merged, both would fill office_1 with Berlin and share one plan and one
    cache key. A source word before a later placeholder of its kind keeps them apart; without one they merge."""
    config, index = small_index[0].model_copy(deep=True), small_index[1]
    pairs = [("Berlin", "Lisbon"), ("Amsterdam", "Berlin"), ("Lisbon", "Amsterdam")]
    rows = [(f"u{i}", f"relocating from {a} to {b}, who pays the movers") for i, (a, b) in enumerate(pairs * 2)]
    rows += [(f"v{i}", f"relocating to {a} from {b}, who pays the movers") for i, (a, b) in enumerate(pairs * 2)]
    log = write_log(tmp_path / "log.jsonl", rows)
    skeletons = {}
    for words in (["from"], []):
        config.mining.source_words = words
        staging = tmp_path / f"staging-{len(words)}"
        staging.mkdir()
        mine_logs(log, config, index, staging, now=datetime(2026, 12, 1), quiet=True)
        skeletons[len(words)] = sorted(s["skeleton"] for s in pq.read_table(staging / "shapes.parquet").to_pylist())
    assert skeletons[1] == ["relocating from {office} to {office} who pays the movers",
                            "relocating to {office} from {office} who pays the movers"]
    assert len(skeletons[0]) == 1


def test_roles_mark_the_repeated_placeholders_a_source_word_precedes() -> None:
    words = frozenset(["from"])
    assert roles("moving from the {office} office to {office}", words) == ""  # in order, as "between .. and .."
    assert roles("moving to the {office} office from {office}", words) == "office_2"
    assert roles("from {office} to {office}, or back to {office} from {office}", words) == "office_1,office_4"
    assert roles("compare {office} and {office}", words) == ""
    assert roles("trip from {office} in {year} and {year}", words) == ""  # {office} is not repeated
    assert roles("from {office} to {office} in {year}", frozenset()) == ""


def _ingest_rows(path: Path, **kw: Any) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    ing = ingest(path, now=datetime(2026, 12, 1), **kw)
    try:
        rows = ing.con.sql('SELECT ts, "user", query FROM rows ORDER BY ts').fetchall()
        bad = ing.con.sql("SELECT reason, raw FROM quarantine ORDER BY reason").fetchall()
        assert (ing.rows, ing.quarantined) == (len(rows), len(bad))
        return rows, bad
    finally:
        ing.con.close()


TS = [datetime(2026, 11, 23, 9), datetime(2026, 11, 24, 10), datetime(2026, 11, 25, 11), datetime(2026, 11, 26, 12)]


def test_ingest_parquet_hive_partitioned_with_window(tmp_path: Path) -> None:
    for i, ts in enumerate(TS):
        part = tmp_path / "logs" / f"date={ts.date()}"
        part.mkdir(parents=True)
        pq.write_table(pa.table({"ts": [ts, ts, None], "user": ["u1", "u2", "u3"],
                                 "query": [f"per diem in Berlin {i}", None, "vacation days in Lisbon"],
                                 "extra": [1, 2, 3]}), part / "part-0.parquet")
    rows, bad = _ingest_rows(tmp_path / "logs")
    assert [r[2] for r in rows] == [f"per diem in Berlin {i}" for i in range(4)]
    assert rows[0][0] == TS[0] and rows[0][1] == "u1"
    assert Counter(r for r, _ in bad) == {"missing query": 4, "missing timestamp": 4}
    rows, _ = _ingest_rows(tmp_path / "logs", since=date(2026, 11, 24), until=date(2026, 11, 25))
    assert [r[2] for r in rows] == ["per diem in Berlin 1", "per diem in Berlin 2"]
    rows, _ = _ingest_rows(tmp_path / "logs", since=date(2026, 11, 26))
    assert [r[2] for r in rows] == ["per diem in Berlin 3"]
    rows, _ = _ingest_rows(tmp_path / "logs", until=date(2026, 11, 23))
    assert [r[2] for r in rows] == ["per diem in Berlin 0"]


def test_a_broken_link_in_a_log_folder_is_named(tmp_path: Path) -> None:
    """A link to a log file that is gone was passed over without a word, and its rows went missing. It is named
    with its target and the fix; a link that resolves is read, and a broken link of no log format is ignored."""
    day = tmp_path / "logs" / "date=2026-11-24"
    day.mkdir(parents=True)
    (tmp_path / "kept.jsonl").write_text('{"ts": "2026-11-24T09:00:00Z", "user": "u1", "query": "per diem"}\n',
                                         encoding="utf-8")
    (day / "part-0.jsonl").symlink_to(tmp_path / "kept.jsonl")
    (day / "notes.txt").symlink_to(tmp_path / "gone.txt")
    assert log_files(tmp_path / "logs") == ([str(day / "part-0.jsonl")], "jsonl")
    (day / "part-1.jsonl.gz").symlink_to(tmp_path / "gone.jsonl.gz")
    with pytest.raises(LogError, match=r"part-1\.jsonl\.gz: a link to .*gone\.jsonl\.gz, which does not exist; "
                                       r"restore what it points to, or remove the link"):
        log_files(tmp_path / "logs")


def test_a_relative_log_path_names_the_files_as_an_absolute_one_does(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The files (their line memo, their rows in the quarantine) are named the same from any working folder."""
    day = tmp_path / "logs" / "date=2026-11-24"
    day.mkdir(parents=True)
    (day / "part-0.jsonl").write_text('{"ts": "2026-11-24T09:00:00Z", "user": "u1", "query": "per diem"}\n'
                                      "not json\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert log_files("logs") == log_files(tmp_path / "logs") == ([str(day / "part-0.jsonl")], "jsonl")
    rows, bad = _ingest_rows(Path("logs"), since=date(2026, 11, 24), until=date(2026, 11, 24))
    assert [r[2] for r in rows] == ["per diem"] and [r for r, _ in bad] == ["unparsable line"]


def test_ingest_parquet_string_timestamps(tmp_path: Path) -> None:
    path = tmp_path / "log.parquet"
    pq.write_table(pa.table({"ts": ["2026-11-24T09:13:02Z", "not-a-date", "2026-11-24 10:00:00", "2099-01-01"],
                             "user": ["u1", "u2", "u3", "u4"], "query": ["a question", "b", "c question", "d"]}), path)
    rows, bad = _ingest_rows(path)
    assert rows == [(datetime(2026, 11, 24, 9, 13, 2), "u1", "a question"),
                    (datetime(2026, 11, 24, 10), "u3", "c question")]
    assert sorted(r for r, _ in bad) == ["bad timestamp", "timestamp in the future"]


def test_a_query_that_is_a_json_list_or_object_is_quarantined(tmp_path: Path) -> None:
    """A JSONL row whose query is a list or an object is no question: quarantined with its reason, never mined as
    its JSON text. A question that merely starts with a bracket, and a numeric user id, are kept."""
    path = tmp_path / "log.jsonl"
    lines = [{"ts": "2026-11-24T09:00:00Z", "user": 123, "query": "per diem in Berlin"},
             {"ts": "2026-11-24T09:01:00Z", "user": "u2", "query": ["per diem in Berlin"]},
             {"ts": "2026-11-24T09:02:00Z", "user": "u3", "query": {"text": "per diem"}},
             {"ts": "2026-11-24T09:03:00Z", "user": "u4", "query": "[urgent] vacation days in Lisbon"}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    rows, bad = _ingest_rows(path)
    assert [(r[1], r[2]) for r in rows] == [("123", "per diem in Berlin"), ("u4", "[urgent] vacation days in Lisbon")]
    assert [r for r, _ in bad] == ["query is not text", "query is not text"]


def test_ingest_csv(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text('ts,user,query\n'
                    '2026-11-24T09:00:00Z,u1,"per diem in Berlin, please"\n'
                    '2026-11-24T09:01:00Z,u2,"he said ""hi"" about Lisbon"\n'
                    '2026-11-24T09:02:00Z,u3,\n'
                    'yesterday,u4,vacation days\n'
                    '2026-11-24T09:04:00Z,,vacation days in Warsaw\n'
                    '2026-11-24T09:05:00Z,u5,"   "\n'
                    '2026-11-25T09:06:00Z,u6,remote allowance in Toronto\n', encoding="utf-8")
    rows, bad = _ingest_rows(path)
    assert [(r[1], r[2]) for r in rows] == [("u1", "per diem in Berlin, please"), ("u2", 'he said "hi" about Lisbon'),
                                            ("u6", "remote allowance in Toronto")]
    assert sorted(r for r, _ in bad) == ["bad timestamp", "empty query", "missing query", "missing user"]
    rows, _ = _ingest_rows(path, since=date(2026, 11, 25), until=date(2026, 11, 25))
    assert [r[1] for r in rows] == ["u6"]
    # the same rows from a pyarrow-written CSV of a Parquet-like table (typed timestamps)
    typed = tmp_path / "typed" / "log.csv"
    typed.parent.mkdir()
    pacsv.write_csv(pa.table({"ts": TS, "user": ["a", "b", "c", "d"], "query": ["q1", "q2", "q3", "q4"]}), typed)
    rows, bad = _ingest_rows(typed.parent, since=date(2026, 11, 24), until=date(2026, 11, 25))
    assert [r[2] for r in rows] == ["q2", "q3"] and bad == []
    # columns named otherwise: the error says which are missing and what it found
    other = tmp_path / "other.csv"
    other.write_text("time,who,text\n2026-11-24T09:00:00Z,u1,per diem in Berlin\n", encoding="utf-8")
    with pytest.raises(LogError, match=r"other\.csv:1: the CSV log has no column ts, user, query; .*found time, who"):
        ingest(other)


def test_a_misnamed_csv_header_among_good_files_stops_the_run(tmp_path: Path) -> None:
    """Read by name beside a good file, a file whose header misnames a column had every row quarantined as
    "missing query"; it stops the run, naming that file and the fix, as it does alone."""
    log = tmp_path / "logs"
    log.mkdir()
    (log / "a.csv").write_text("ts,user,query\n2026-11-24T09:00:00Z,u1,per diem in Berlin\n", encoding="utf-8")
    (log / "b.csv").write_text("ts,user,question\n2026-11-24T09:01:00Z,u2,per diem in Lisbon\n", encoding="utf-8")
    with pytest.raises(LogError, match=r"b\.csv:1: the CSV log has no column query; .*found ts, user, question\); "
                                       r"rename the columns"):
        ingest(log)


def test_a_stray_quote_in_a_csv_log_costs_its_own_line_or_stops_the_run(tmp_path: Path) -> None:
    """A CSV log is read as RFC 4180, not sniffed: a sniffer that met one stray quote read the whole file without
    quoting, and every quoted question with a comma became a bad row. A quote closed on its own line costs that
    line; one never closed would swallow the lines after it as its value, so the run stops there, naming it."""
    good = [f'2026-11-24T09:{m:02d}:00Z,u{m},"Hi, how many vacation days in Berlin, {m}?"' for m in range(40)]
    log = tmp_path / "logs"
    log.mkdir()
    (log / "a.csv").write_text("\n".join(["ts,user,query", *good[:20], '2026-11-24T10:00:00Z,ux,"closed"late',
                                          *good[20:]]) + "\n", encoding="utf-8")
    (log / "b.csv").write_text('query,ts,user\n"per diem, Lisbon",2026-11-24T11:00:00Z,uy\n', encoding="utf-8")
    rows, bad = _ingest_rows(log)
    assert {r[1] for r in rows} == {f"u{m}" for m in range(40)} | {"uy"}  # another column order, by name
    assert len(bad) == 1
    plain = [f"2026-11-24T09:{m:02d}:00Z,u{m},per diem {m}" for m in range(40)]
    (log / "a.csv").write_text("\n".join(["ts,user,query", *plain[:20], '2026-11-24T10:00:00Z,ux,"unterminated',
                                          *plain[20:]]) + "\n", encoding="utf-8")
    with pytest.raises(LogError, match=r"a\.csv:22: a quote opened on this line is never closed, so the lines "
                                       r"after it cannot be read"):
        ingest(log)
    (log / "c.csv").write_text("ts,user,ts\n2026-11-24T09:00:00Z,u,q\n", encoding="utf-8")
    with pytest.raises(LogError, match=r"c\.csv:1: the CSV header 'ts,user,ts' must name each column once"):
        ingest(log)


@pytest.mark.parametrize("end", ["\n", "\r\n"])
def test_csv_line_numbers_count_the_lines_of_a_value_in_quotes(tmp_path: Path, end: str) -> None:
    """A bad CSV row is named by the line it starts on: DuckDB counts records, so a question in quotes spanning
    three lines put every later number two lines early. (With "\r\n" breaks, a misplaced but closed quote was
    taken for one never closed.)"""
    log = tmp_path / "logs"
    log.mkdir()
    head = ["ts,user,query", '2026-11-28T10:00:00Z,u1,"vacation days', 'in Berlin"',
            '2026-11-28T10:01:00Z,u2,"per diem', "in", 'Lisbon"']
    tail = ["2026-11-28T10:06:00Z,u8,ok Warsaw"]
    (log / "a.csv").write_bytes(end.join([*head, '2026-11-28T10:05:00Z,u6,"bad"quote', *tail, ""]).encode())
    rows, _ = _ingest_rows(log)
    assert [r[1] for r in rows] == ["u1", "u2", "u8"]
    ing = ingest(log, now=datetime(2026, 12, 1))
    try:
        assert ing.con.sql("SELECT line, reason FROM quarantine").fetchall() == [
            (7, "unreadable line (unquoted value)")]
    finally:
        ing.con.close()
    (log / "a.csv").write_bytes(end.join([*head, '2026-11-28T10:05:00Z,u7,"never closed', *tail, ""]).encode())
    with pytest.raises(LogError, match=r"a\.csv:7: a quote opened on this line is never closed"):
        ingest(log)


@pytest.mark.parametrize(("name", "end"), [("a.csv", "\n"), ("a.csv", "\r\n"), ("a.csv.gz", "\n")])
def test_a_csv_logs_bad_rows_are_named_by_the_line_they_start_on(tmp_path: Path, name: str, end: str) -> None:
    """A CSV log's bad rows had no line number. Each is named by the line it starts on: the header is line 1, and
    a question in quotes spanning lines counts them all; a bad row logged twice has both its lines."""
    log = tmp_path / "logs"
    log.mkdir()
    lines = ["query,ts,user", '"vacation days,",2026-11-28T10:00:00Z,u1', '"per diem', 'in Lisbon",n/a,u2',
             '"per diem', 'in Lisbon",n/a,u2', "sick leave,2026-11-28T10:02:00Z,", '"""quoted""",n/a,u3',
             "parental leave,2026-11-28T10:03:00Z,u4"]
    data = end.join([*lines, ""]).encode()
    (log / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    ing = ingest(log, now=datetime(2026, 12, 1))
    try:
        got = ing.con.sql("SELECT line, reason FROM quarantine ORDER BY line").fetchall()
        assert ing.rows == 2
    finally:
        ing.con.close()
    assert got == [(3, "bad timestamp"), (5, "bad timestamp"), (7, "missing user"), (8, "bad timestamp")]


def test_a_parquet_logs_bad_rows_are_named_by_their_row_number(tmp_path: Path) -> None:
    """A Parquet log has no lines: a bad row is named by its row number in the file, counted from 1."""
    log = tmp_path / "logs"
    log.mkdir()
    queries = ["q1", None, "q3", "q4", ""]
    pq.write_table(pa.table({"ts": [str(TS[1])] * 5, "user": ["a", "b", "c", "d", "e"], "query": queries}),
                   log / "a.parquet", row_group_size=2)  # row numbers run on across row groups
    pq.write_table(pa.table({"ts": ["soon", str(TS[1])], "user": ["f", "g"], "query": ["q6", "q7"]}),
                   log / "b.parquet")
    ing = ingest(log, now=datetime(2026, 12, 1))
    try:
        got = ing.con.sql("SELECT parse_filename(file), line, reason, raw FROM quarantine "
                          "ORDER BY file, line").fetchall()
    finally:
        ing.con.close()
    assert got == [("a.parquet", 2, "missing query", ""), ("a.parquet", 5, "empty query", ""),
                   ("b.parquet", 1, "bad timestamp", "q6")]


def test_a_parquet_logs_zoned_times_number_its_bad_rows_on_a_machine_off_utc(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A Parquet log's times with a zone (TIMESTAMPTZ) read as text by the numbering's cursor, which started in the
    machine's zone rather than the run's UTC: no bad row matched its row, so none had a number."""
    import time

    log = tmp_path / "logs"
    log.mkdir()
    ts = pa.array([datetime(2026, 11, 28, 10)] * 3, pa.timestamp("us", tz="UTC"))
    pq.write_table(pa.table({"ts": ts, "user": ["a", "b", "c"], "query": ["q1", None, "q3"]}), log / "a.parquet")
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        ing = ingest(log, now=datetime(2026, 12, 1))
        try:
            got = ing.con.sql("SELECT line, reason FROM quarantine").fetchall()
        finally:
            ing.con.close()
    finally:
        monkeypatch.undo()
        time.tzset()
    assert got == [(2, "missing query")]


@pytest.mark.parametrize(("head", "end", "says"), [("\n", "\r\n", r"\\r\\n, the header with \\n"),
                                                  ("\r\n", "\n", r"\\n, the header with \\r\\n")])
def test_a_csv_log_whose_rows_end_otherwise_than_its_header_is_named(tmp_path: Path, head: str, end: str,
                                                                     says: str) -> None:
    """DuckDB reads a CSV file with its header's line break only: the run stopped naming only the folder. It names
    the file, the first line ending otherwise and the fix; a quoted value may hold either break."""
    log = tmp_path / "logs"
    log.mkdir()
    (log / "a.csv").write_text('ts,user,query\n2026-11-28T10:00:00Z,u1,"vacation\r\ndays Berlin"\n', newline="")
    (log / "b.csv").write_text(f"ts,user,query{head}2026-11-28T10:00:00Z,u2,per diem in Lisbon{head}"
                               f"2026-11-28T10:01:00Z,u3,vacation days Berlin{end}", newline="")
    with pytest.raises(LogError, match=rf"b\.csv:3: this line ends with {says}; .* convert the file's line breaks"):
        ingest(log)


def test_timestamps_with_offsets_are_read_as_utc(tmp_path: Path) -> None:
    """An offset or zone name moves a row to its UTC time (and so, near midnight, to another day of the window)."""
    path = tmp_path / "log.jsonl"
    stamps = ["2026-11-23T10:00:00+02:00", "2026-11-23T23:30:00-05:00", "2026-11-24T09:13:02Z",
              "2026-11-24 10:00:00", "2026-11-24T09:13:02.5+05:30", "2026-11-24T12:00:00.25"]
    path.write_text("".join(json.dumps({"ts": t, "user": f"u{i}", "query": f"per diem {i}"}) + "\n"
                            for i, t in enumerate(stamps)), encoding="utf-8")
    rows, bad = _ingest_rows(path)
    assert bad == [] and sorted((r[2], r[0]) for r in rows) == [
        ("per diem 0", datetime(2026, 11, 23, 8)), ("per diem 1", datetime(2026, 11, 24, 4, 30)),
        ("per diem 2", datetime(2026, 11, 24, 9, 13, 2)), ("per diem 3", datetime(2026, 11, 24, 10)),
        ("per diem 4", datetime(2026, 11, 24, 3, 43, 2, 500000)),
        ("per diem 5", datetime(2026, 11, 24, 12, 0, 0, 250000))]
    rows, _ = _ingest_rows(path, since=date(2026, 11, 24))
    assert "per diem 1" in {r[2] for r in rows}  # 23:30 in New York is the next day in UTC
    typed = tmp_path / "typed.parquet"  # a zoned timestamp column
    pq.write_table(pa.table({"ts": pa.array([datetime(2026, 11, 24, 1, 30)], pa.timestamp("us", tz="Asia/Tokyo")),
                             "user": ["u1"], "query": ["per diem"]}), typed)
    assert _ingest_rows(typed)[0][0][0] == datetime(2026, 11, 24, 1, 30)  # stored as UTC, read as UTC


def test_every_iso_offset_form_is_applied(tmp_path: Path) -> None:
    """An offset as ±HH, ±HHMM or ±HH:MM, or "Z", with or without seconds: the short "23:30-05" too, which the
    cheaper cast for timestamps without a zone read as 23:30 UTC."""
    path = tmp_path / "log.jsonl"
    stamps = [f"2026-11-28T23:30{s}{z}" for s in ("", ":00") for z in ("-05", "-0500", "-05:00")]
    stamps += ["2026-11-29T04:30Z", "2026-11-29T04:30:00Z", "2026-11-29T10:00+05:30", "2026-11-29 04:30+00"]
    path.write_text("".join(json.dumps({"ts": t, "user": f"u{i}", "query": f"per diem {i}"}) + "\n"
                            for i, t in enumerate(stamps)), encoding="utf-8")
    rows, bad = _ingest_rows(path)
    assert bad == [] and len(rows) == len(stamps)
    assert {r[0] for r in rows} == {datetime(2026, 11, 29, 4, 30)}


def test_a_folder_reads_exactly_the_files_of_its_log_format(tmp_path: Path) -> None:
    """.jsonl, .ndjson and .json(.gz) are read alike; a README or a .json.bak beside them is not read."""
    logs = tmp_path / "logs"
    logs.mkdir()
    line = '{{"ts": "2026-11-24T09:0{}:00Z", "user": "u{}", "query": "per diem in Berlin {}"}}\n'
    (logs / "a.jsonl").write_text(line.format(1, 1, "a"), encoding="utf-8")
    (logs / "b.ndjson").write_text(line.format(2, 2, "b"), encoding="utf-8")
    with gzip.open(logs / "c.json.gz", "wt", encoding="utf-8") as f:
        f.write(line.format(3, 3, "c"))
    (logs / "d.json.bak").write_text(line.format(4, 4, "d") + "not json\n", encoding="utf-8")
    (logs / "README").write_text("what these logs are\n", encoding="utf-8")
    rows, bad = _ingest_rows(logs)
    assert [r[2] for r in rows] == ["per diem in Berlin a", "per diem in Berlin b", "per diem in Berlin c"]
    assert bad == []
    only = tmp_path / "only"
    only.mkdir()
    (only / "x.ndjson").write_text(line.format(5, 5, "x"), encoding="utf-8")
    assert [r[2] for r in _ingest_rows(only)[0]] == ["per diem in Berlin x"]
    mixed = tmp_path / "mixed"  # one odd file among many days: named, so it can be found
    for day in range(3):
        (mixed / f"date=2026-11-2{day}").mkdir(parents=True)
        (mixed / f"date=2026-11-2{day}" / "part.jsonl").write_text(line.format(day, day, "x"), encoding="utf-8")
    (mixed / "date=2026-11-21" / "extra.csv").write_text("ts,user,query\n", encoding="utf-8")
    with pytest.raises(LogError, match=r"formats \['csv', 'jsonl'\] \(the fewer: .*date=2026-11-21/extra.csv\)"):
        _ingest_rows(mixed)
    globs = tmp_path / "globs"  # DuckDB takes a file name as a glob: "e[1]" must not read "e1" instead
    globs.mkdir()
    for i, name in enumerate(["e[1]", "e1", "f*", "fx", "g?"]):
        (globs / f"{name}.jsonl").write_text(line.format(i, i, name), encoding="utf-8")
    assert sorted(r[2] for r in _ingest_rows(globs)[0]) == [f"per diem in Berlin {n}" for n in
                                                            ["e1", "e[1]", "f*", "fx", "g?"]]


def test_a_damaged_gzip_log_is_named_with_its_line_and_the_fix(tmp_path: Path) -> None:
    """An empty or truncated .gz failed as "cannot read the logs (...); check the format", naming no line; a .gz
    whose bytes were damaged passed DuckDB's reader (it checks no checksum) and its garbled lines were mined."""
    text = "".join(json.dumps({"ts": f"2026-11-24T09:{i // 60:02d}:{i % 60:02d}Z", "user": f"u{i % 7}",
                               "query": f"how many vacation days do we get in Berlin {i}"}) + "\n" for i in range(3000))
    whole = gzip.compress(text.encode(), mtime=0)
    cases = {"empty": (b"", r"empty\.jsonl\.gz:1: the file is empty \(0 bytes\), so it is no gzip file; delete it"),
             "cut": (whole[:len(whole) // 2], r"cut\.jsonl\.gz:\d+: the gzip data ends before its end marker, after "
                                              r"\d+ whole lines; .*copy it again from its source"),
             "flipped": (whole[:-8] + bytes([whole[-8] ^ 1]) + whole[-7:],
                         r"flipped\.jsonl\.gz: the gzip data fails its checksum .*copy it again")}
    for name, (data, says) in cases.items():
        logs = tmp_path / name
        logs.mkdir()
        (logs / "a.jsonl.gz").write_bytes(whole)
        (logs / f"{name}.jsonl.gz").write_bytes(data)
        with pytest.raises(LogError, match=says):
            _ingest_rows(logs)
    # the line the cut falls in: one after the whole lines before it
    line = zlib.decompressobj(wbits=31).decompress(whole[:len(whole) // 2]).count(b"\n") + 1
    with pytest.raises(LogError, match=rf"cut\.jsonl\.gz:{line}: "):
        _ingest_rows(tmp_path / "cut" / "cut.jsonl.gz")
    joined = tmp_path / "joined"  # members written one after another are one log
    joined.mkdir()
    (joined / "a.jsonl.gz").write_bytes(whole + gzip.compress(b'{"ts": "2026-11-24T10:00:00Z", "user": "u1", '
                                                                b'"query": "per diem in Lisbon"}\n'))
    assert len(_ingest_rows(joined)[0]) == 3001


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_a_log_in_utf16_or_utf32_is_refused_naming_the_file_and_the_fix(tmp_path: Path, kind: str) -> None:
    """A JSONL log exported as UTF-16 had each of its lines quarantined and its day went missing from the shapes
    (a CSV one was refused for a header it did not have); a UTF-8 byte order mark is read as UTF-8."""
    rows = [(t, f"u{i}", f"per diem in Berlín {i}") for i, t in enumerate(TS)]
    lines = [json.dumps({"ts": f"{t:%Y-%m-%dT%H:%M:%S}Z", "user": u, "query": q}, ensure_ascii=False) if kind == "jsonl"
             else f"{t:%Y-%m-%dT%H:%M:%S}Z,{u},{q}" for t, u, q in rows]
    text = ("" if kind == "jsonl" else "ts,user,query\n") + "".join(line + "\n" for line in lines)
    for encoding, named, says in [("utf-16", "UTF-16", "it starts with a UTF-16 byte order mark"),
                                  ("utf-16-le", "UTF-16LE", "NUL bytes sit between its characters"),
                                  ("utf-16-be", "UTF-16BE", "NUL"), ("utf-32", "UTF-32", "UTF-32 byte order mark"),
                                  ("utf-32-le", "UTF-32LE", "NUL")]:
        for gz in (False, True):
            logs = tmp_path / f"{encoding}-{gz}"
            logs.mkdir()
            (logs / f"a.{kind}").write_text(text, encoding="utf-8")
            log = logs / f"b.{kind}{'.gz' if gz else ''}"
            log.write_bytes(gzip.compress(text.encode(encoding)) if gz else text.encode(encoding))
            recode = (f"gzip -dc {log} | iconv -f {named} -t UTF-8 | gzip > {log}.utf8" if gz
                      else f"iconv -f {named} -t UTF-8 {log} > {log}.utf8")
            with pytest.raises(LogError, match=re.escape(f"{log}:1: the file is {named} text (") + f".*{says}.*"
                               + re.escape(f"re-encode it as UTF-8: {recode} && mv {log}.utf8 {log}")):
                _ingest_rows(logs)
            assert (gzip.decompress(log.read_bytes()) if gz else log.read_bytes()).decode(named) == text
    marked = tmp_path / "marked"  # a UTF-8 byte order mark: the same rows as without it
    marked.mkdir()
    (marked / f"a.{kind}.gz").write_bytes(gzip.compress(text.encode("utf-8-sig")))
    (marked / f"b.{kind}").write_text(text.replace("2026-11", "2026-10"), encoding="utf-8-sig")
    got, bad = _ingest_rows(marked)
    assert bad == [] and [q for _, _, q in got] == [q for _, _, q in rows] * 2


def test_a_log_compressed_otherwise_than_with_gzip_is_named(tmp_path: Path, small_index: tuple[Config, Index]) -> None:
    """DuckDB reads no .zst, .bz2 or .xz: such a log beside readable ones was passed over without a word (and the
    default window moved back to the newest day read). It is named, if its day is the window's; alone, it is the
    error's cause."""
    config, index = small_index
    logs = tmp_path / "logs"
    for day in ("2026-11-20", "2026-11-24", "2026-11-25"):
        (logs / f"date={day}").mkdir(parents=True)
    rows = [(f"u{i}", f"what is the per diem in {o}") for i in range(3) for o in ("Berlin", "Lisbon")]
    write_log(logs / "date=2026-11-24" / "a.jsonl", rows, start=datetime(2026, 11, 24, 9))
    for name in ("date=2026-11-25/b.jsonl.zst", "date=2026-11-25/c.json.BZ2", "date=2026-11-24/d.csv.xz",
                 "date=2026-11-20/e.jsonl.zst", "date=2026-11-25/notes.txt.xz"):
        (logs / name).write_bytes(b"\x28\xb5\x2f\xfd")
    staging = tmp_path / "staging"
    staging.mkdir()
    result, _ = mine_logs(logs, config, index, staging, since=date(2026, 11, 24), until=date(2026, 11, 25),
                          now=datetime(2026, 12, 1), quiet=True)
    assert result.rows == len(rows)
    assert result.skipped_files == [str(logs / n) for n in ("date=2026-11-24/d.csv.xz", "date=2026-11-25/b.jsonl.zst",
                                                            "date=2026-11-25/c.json.BZ2")]
    ing = ingest(logs, now=datetime(2026, 12, 1))  # no window: every such file
    ing.con.close()
    assert ing.skipped is not None and len(ing.skipped) == 4
    with pytest.raises(LogError, match=r"no \.jsonl.* here \(.*e\.jsonl\.zst is compressed otherwise: decompress it"):
        ingest(logs / "date=2026-11-20")


def test_a_file_with_no_valid_row_is_named(tmp_path: Path) -> None:
    """A file none of whose lines is a log row (another program's output, a binary) is named, so a wrong file in
    the log folder is not only a count of quarantined rows; a file with some bad lines is not."""
    logs = tmp_path / "logs"
    logs.mkdir()
    line = '{{"ts": "2026-11-24T09:00:{:02d}Z", "user": "u{}", "query": "per diem in Berlin"}}\n'
    (logs / "a.jsonl").write_text("".join(line.format(i, i) for i in range(6)) + "not json\n{}\n", encoding="utf-8")
    (logs / "server.jsonl").write_text("\n".join(f"12:00:{i:02d} INFO served in {i} ms" for i in range(5)) + "\n\n")
    (logs / "blob.jsonl").write_bytes(b"\xff\xfe\x00garbage\n\x80\x81\n")
    ing = ingest(logs, now=datetime(2026, 12, 1))
    try:
        assert ing.rows == 6 and ing.quarantined == 2 + 5 + 2
        assert ing.unreadable == [str(logs / "blob.jsonl"), str(logs / "server.jsonl")]
    finally:
        ing.con.close()


def test_ingest_window_on_the_demo_logs() -> None:
    """--since/--until on the hive-partitioned demo: exactly the valid rows of those days."""
    days = ["2026-11-28", "2026-11-29"]
    bad_lines = Counter(Path(m["file"]).parent.name for m in TRUTH["malformed"]["lines"])
    want = sum(TRUTH["rows_per_day"][d] - bad_lines[f"date={d}"] for d in days)
    ing = ingest(DEMO / "logs", since=date(2026, 11, 28), until=date(2026, 11, 29), now=datetime(2026, 12, 1))
    try:
        got = ing.con.sql("SELECT min(ts)::DATE, max(ts)::DATE FROM rows").fetchall()[0]
        assert ing.rows == want
        assert got == (date(2026, 11, 28), date(2026, 11, 29))
        assert ing.files == 3  # 11-27 to 11-29: the window's days and a day's margin, not all seven
    finally:
        ing.con.close()


def test_a_window_to_the_ends_of_the_calendar_reads_every_day(tmp_path: Path) -> None:
    """--since 0001-01-01 or --until 9999-12-31 takes every logged day: the day's margin past them is no date (it
    was an OverflowError's traceback)."""
    from typer.testing import CliRunner

    from planbake.cli import app

    check_window(DEMO / "logs", date.min, date.max)
    counts = []
    for since, until in ((date(2026, 11, 1), date(2026, 12, 31)), (date.min, date.max)):
        ing = ingest(DEMO / "logs", since=since, until=until, now=datetime(2026, 12, 1))
        try:
            counts.append((ing.files, ing.rows))
        finally:
            ing.con.close()
    assert counts[1] == counts[0] and counts[0][0] == 7
    res = CliRunner().invoke(app, ["mine", "--since", "0001-01-01", "--until", "9999-12-31", "--out", str(tmp_path)])
    assert res.exit_code == 4 and "no published index" in res.output, res.output


def test_a_window_reads_only_its_days_partitions(tmp_path: Path) -> None:
    """A hive-partitioned log is read for the window's days and a day either side (a row logged near midnight
    can sit in the next day's folder); days further out are not opened. Only the window's own days' bad lines are
    its quarantine (one with no time is its folder's day's). A folder not partitioned by date is read whole."""
    logs = tmp_path / "logs"
    for day in range(1, 11):
        part = logs / f"date=2026-01-{day:02d}"
        part.mkdir(parents=True)
        lines = [json.dumps({"ts": f"2026-01-{day:02d}T12:00:00Z", "user": "u1", "query": f"per diem {day}"}),
                 "{not json"]
        if day == 5:  # logged in the next day's folder, a minute before midnight
            lines.append(json.dumps({"ts": "2026-01-04T23:59:00Z", "user": "u2", "query": "late per diem"}))
        (part / "part-0.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        if day in (2, 4, 5):  # a line DuckDB cannot read at all (not UTF-8): it has no time either
            with (part / "part-0.jsonl").open("ab") as fh:
                fh.write(b'{"ts": "?", "query": "caf\xe9"}\n')
    ing = ingest(logs, since=date(2026, 1, 3), until=date(2026, 1, 4), now=datetime(2026, 2, 1))
    try:
        got = [r[0] for r in ing.con.sql("SELECT query FROM rows ORDER BY ts").fetchall()]
        assert got == ["per diem 3", "per diem 4", "late per diem"]
        ing.finish()
        assert (ing.files, ing.quarantined) == (4, 3)  # days 2 to 5 read; the bad lines of days 3 and 4
        assert ing.con.sql("SELECT file, reason FROM quarantine WHERE reason = 'not UTF-8 text'").fetchall() == [
            (str(logs / "date=2026-01-04" / "part-0.jsonl"), "not UTF-8 text")]
    finally:
        ing.con.close()
    ing = ingest(logs, since=date(2025, 1, 1), until=date(2025, 1, 7), now=datetime(2026, 2, 1))
    try:
        assert (ing.rows, ing.quarantined) == (0, 0)  # no day of the window is logged: no bad line is its
    finally:
        ing.con.close()
    (logs / "date=2026-01-07" / "part-0.jsonl").rename(logs / "loose.jsonl")  # not every file under a date
    ing = ingest(logs, since=date(2026, 1, 3), until=date(2026, 1, 4), now=datetime(2026, 2, 1))
    try:
        assert (ing.files, ing.quarantined, ing.rows) == (10, 13, 3)
    finally:
        ing.con.close()


def test_the_log_outside_the_window_is_counted_with_the_option_that_mines_it(tmp_path: Path) -> None:
    """A log longer than the window is not mined silently short: ingest counts the valid rows it read outside the
    window and the `date=` folders it did not open, and the note names --since or `mining.window_days`."""
    from tasks.ingest.files import outside_note

    flat = tmp_path / "flat.jsonl"  # one row a day for 30 days, in one file
    flat.write_text("".join(json.dumps({"ts": f"2026-01-{d:02d}T12:00:00Z", "user": "u1", "query": f"per diem {d}"})
                            + "\n" for d in range(1, 31)) + "{not json\n", encoding="utf-8")
    ing = ingest(flat, last_days=7, now=datetime(2026, 2, 1))
    ing.con.close()
    assert (ing.rows, ing.since, ing.until) == (7, date(2026, 1, 24), date(2026, 1, 30))
    assert ing.outside == {"rows_before": 23, "rows_after": 0, "days_not_read": 0, "first_day": "2026-01-01",
                           "last_day": "2026-01-30"}
    mined = {"since": "2026-01-24", "until": "2026-01-30", "outside_window": ing.outside}
    assert outside_note(mined) == (
        "the window mined, 2026-01-24 to 2026-01-30, leaves out 23 log rows (the log runs from 2026-01-01 to "
        "2026-01-30); to mine them, run with --since 2026-01-01 (or `mining.window_days: 30` in the config)")
    ing = ingest(flat, since=date(2026, 1, 10), until=date(2026, 1, 19))
    ing.con.close()
    assert (ing.outside or {})["rows_before"] == 9 and (ing.outside or {})["rows_after"] == 11
    assert "--since 2026-01-01 (or `mining.window_days: 19` in the config) and --until 2026-01-30" in (
        outside_note({"since": "2026-01-10", "until": "2026-01-19", "outside_window": ing.outside}) or "")
    logs = tmp_path / "logs"  # a log partitioned by date: the folders outside the window are not opened
    for day in range(1, 11):
        (logs / f"date=2026-01-{day:02d}").mkdir(parents=True)
        (logs / f"date=2026-01-{day:02d}" / "part-0.jsonl").write_text(json.dumps(
            {"ts": f"2026-01-{day:02d}T12:00:00Z", "user": "u1", "query": f"per diem {day}"}) + "\n", encoding="utf-8")
    ing = ingest(logs, last_days=3, now=datetime(2026, 2, 1))
    ing.con.close()
    assert ing.outside == {"rows_before": 1, "rows_after": 0, "days_not_read": 6, "first_day": "2026-01-01",
                           "last_day": "2026-01-10"}  # the day before the window is read: its rows near midnight
    note = outside_note({"since": "2026-01-08", "until": "2026-01-10", "outside_window": ing.outside}) or ""
    assert "leaves out 1 log row and 6 logged days (date= folders, not read)" in note
    assert ingest(flat, now=datetime(2026, 2, 1)).outside == {  # no window: nothing left out
        "rows_before": 0, "rows_after": 0, "days_not_read": 0, "first_day": "2026-01-01", "last_day": "2026-01-30"}
    assert outside_note({"outside_window": {"rows_before": 0, "rows_after": 0, "days_not_read": 0}}) is None


def test_without_a_window_the_last_days_are_mined(tmp_path: Path) -> None:
    """With no --since/--until, the window is the last `mining.window_days` days up to the newest logged day:
    the newest `date=` folder of a partitioned log (older folders are not opened), else the newest row."""
    logs = tmp_path / "logs"
    for day in range(1, 11):
        part = logs / f"date=2026-01-{day:02d}"
        part.mkdir(parents=True)
        line = json.dumps({"ts": f"2026-01-{day:02d}T12:00:00Z", "user": "u1", "query": f"per diem {day}"})
        (part / "part-0.jsonl").write_text(line + "\n{not json\n", encoding="utf-8")
    future = logs / "date=2099-01-01"  # a folder dated in the future (its rows are quarantined) ends no window
    future.mkdir()
    (future / "part-0.jsonl").write_text(json.dumps({"ts": "2099-01-01T12:00:00Z", "user": "u1", "query": "later"})
                                         + "\n", encoding="utf-8")
    ing = ingest(logs, last_days=3, now=datetime(2026, 2, 1))
    try:
        got = [r[0] for r in ing.con.sql("SELECT query FROM rows ORDER BY ts").fetchall()]
        assert got == ["per diem 8", "per diem 9", "per diem 10"]
        assert (ing.since, ing.until, ing.files, ing.quarantined) == (date(2026, 1, 8), date(2026, 1, 10), 4, 3)
    finally:
        ing.con.close()
    flat = tmp_path / "flat.jsonl"  # one row a day, 01-01 to 01-05, in one file
    flat.write_text("".join(json.dumps({"ts": f"2026-01-0{i + 1}T12:00:00Z", "user": "u1", "query": f"per diem {i}"})
                            + "\n" for i in range(5)), encoding="utf-8")
    ing = ingest(flat, last_days=2, now=datetime(2026, 2, 1))
    try:
        assert [r[0] for r in ing.con.sql("SELECT query FROM rows ORDER BY ts").fetchall()] == ["per diem 3",
                                                                                                 "per diem 4"]
        assert (ing.since, ing.until) == (date(2026, 1, 4), date(2026, 1, 5))
    finally:
        ing.con.close()


def test_mine_with_window(tmp_path: Path, small_index: tuple[Config, Index]) -> None:
    config, index = small_index
    rows = [(f"u{i}", f"what is the per diem in {o}") for i in range(3) for o in ("Berlin", "Lisbon")] * 4
    path = write_log(tmp_path / "log.jsonl", rows, start=datetime(2026, 11, 23, 22))  # 24 rows, 1 minute apart
    staging = tmp_path / "staging"
    staging.mkdir()
    result, _ = mine_logs(path, config, index, staging, since=date(2026, 11, 23), until=date(2026, 11, 23),
                          now=datetime(2026, 12, 1), quiet=True)
    assert result.rows == 24
    result, _ = mine_logs(path, config, index, staging, since=date(2026, 11, 24), now=datetime(2026, 12, 1), quiet=True)
    assert result.rows == 0 and result.recurring == 0
    assert pq.read_metadata(staging / "shapes.parquet").num_rows == 0


def test_a_window_of_no_rows_keeps_the_last_runs_memos(tmp_path: Path, small_index: tuple[Config, Index]) -> None:
    """Its stage fails (nothing to publish), so the extraction and line memos stay the last run's: a mistyped
    --since emptied them, and the next night parsed and skeletonised every line again."""
    config, index = small_index
    rows = [(f"u{i}", f"what is the per diem in {o}") for i in range(3) for o in ("Berlin", "Lisbon")] * 4
    path = write_log(tmp_path / "log.jsonl", rows, start=datetime(2026, 11, 23, 22))
    staging = tmp_path / "staging"
    staging.mkdir()
    result, _ = mine_logs(path, config, index, staging, since=date(2026, 11, 23), now=datetime(2026, 12, 1), quiet=True)
    vectors = Path(index.uri).parent / "vectors"

    def memos() -> dict[str, bytes]:
        return {str(p.relative_to(vectors)): p.read_bytes() for p in sorted(vectors.rglob("*"))
                if p.is_file() and (p.name.startswith("extracted-") or p.parent.name.startswith("lines-"))}

    kept = memos()
    assert result.rows == 24 and any(n.startswith("extracted-") for n in kept) and any("lines-" in n for n in kept)
    result, _ = mine_logs(path, config, index, staging, since=date(2026, 11, 25), now=datetime(2026, 12, 1), quiet=True)
    assert result.rows == 0 and memos() == kept


@pytest.mark.parametrize("setup", ["missing", "empty_dir", "no_logs", "mixed", "corrupt_parquet", "no_query_column"])
def test_bad_log_path_is_a_clear_error(tmp_path: Path, setup: str) -> None:
    path = tmp_path / "logs"
    if setup != "missing":
        path.mkdir()
    if setup == "no_logs":
        (path / "notes.txt").write_text("hello", encoding="utf-8")
    if setup == "mixed":
        (path / "a.jsonl").write_text('{"ts": "2026-11-24", "user": "u", "query": "q"}\n', encoding="utf-8")
        (path / "b.csv").write_text("ts,user,query\n2026-11-24,u,q\n", encoding="utf-8")
    if setup == "corrupt_parquet":
        (path / "a.parquet").write_bytes(b"PAR1 this is not parquet")
    if setup == "no_query_column":
        pq.write_table(pa.table({"ts": TS, "user": ["a", "b", "c", "d"], "text": ["q"] * 4}), path / "a.parquet")
    with pytest.raises(LogError) as err:
        ingest(path, now=datetime(2026, 12, 1))
    assert str(path) in str(err.value)
    assert len(str(err.value)) < 400


def test_bad_log_path_writes_nothing(tmp_path: Path, small_index: tuple[Config, Index]) -> None:
    config, index = small_index
    staging = tmp_path / "staging"
    staging.mkdir()
    with pytest.raises(LogError, match=re.escape(str(tmp_path / "nope"))):
        mine_logs(tmp_path / "nope", config, index, staging, quiet=True)
    assert list(staging.iterdir()) == []


def _next_staging(tmp_path: Path) -> Path:
    """A fresh staging folder for the next night; the last night's (its merge memory) moves to `last`."""
    staging, last = tmp_path / "staging", tmp_path / "last"
    shutil.rmtree(last, ignore_errors=True)
    if staging.exists():
        staging.rename(last)
    staging.mkdir()
    return staging


def test_an_example_stays_put_while_its_slot_set_is_near_the_top(tmp_path: Path,
                                                                  small_index: tuple[Config, Index]) -> None:
    """As the log window moves on, a shape's most frequent slot set can change by a question: the example
    embedded the night before stays, one that falls behind by more than a tenth and more than chance explains
    gives way, and with no stored vectors the most frequent one is the example."""
    config, index = small_index
    question = "what is the per diem in {}"

    def example(rows: list[tuple[str, str]], fresh: bool) -> str:
        staging = _next_staging(tmp_path)
        mine_logs(write_log(tmp_path / "log.jsonl", rows), config, index, staging, now=datetime(2026, 12, 1),
                  quiet=True, last_run=None if fresh else tmp_path / "last")
        (shape,) = pq.read_table(staging / "shapes.parquet").to_pylist()
        return str(shape["example"])

    even = [(f"u{i % 5}", question.format(office)) for i in range(10) for office in ("Berlin", "Lisbon")]
    assert "Berlin" in example(even, fresh=True)  # 10 and 10: the first slot set
    assert "Berlin" in example(even + [("u0", question.format("Lisbon"))], fresh=False)  # 10 against 11
    assert "Berlin" in example(even + [("u0", question.format("Lisbon"))] * 5, fresh=False)  # 10 against 15: noise
    assert "Lisbon" in example(even + [("u0", question.format("Lisbon"))] * 20, fresh=False)  # 10 against 30
    assert "Lisbon" in example(even + [("u0", question.format("Lisbon"))], fresh=True)


def test_a_shape_keeps_its_name_while_its_members_trade_places(tmp_path: Path,
                                                                small_index: tuple[Config, Index]) -> None:
    """Two near-duplicate skeletons merge into one shape named by the more frequent. When the other overtakes it
    by a few questions, the shape keeps last night's name (and id); when it falls behind by more than chance
    explains, or nothing is stored, the more frequent one names it."""
    config, index = small_index
    real, typo = "how many vacation days do we get in {}", NEAR_DUPLICATE.replace("{office}", "{}")

    def named(n_real: int, n_typo: int, fresh: bool) -> str:
        rows = ([(f"u{i % 5}", real.format(OFFICES[i % 5])) for i in range(n_real)]
                + [(f"v{i % 5}", typo.format(OFFICES[i % 5])) for i in range(n_typo)])
        staging = _next_staging(tmp_path)
        mine_logs(write_log(tmp_path / "log.jsonl", rows), config, index, staging, now=datetime(2026, 12, 1),
                  quiet=True, last_run=None if fresh else tmp_path / "last")
        (shape,) = pq.read_table(staging / "shapes.parquet").to_pylist()
        assert shape["count"] == n_real + n_typo  # one shape: the two merged
        return str(shape["skeleton"])

    assert "days" in named(20, 19, fresh=True)
    assert "days" in named(19, 20, fresh=False)  # within a tenth: the name stays
    assert "days" in named(12, 20, fresh=False)  # more than a tenth behind, but within chance: it stays
    assert "dayz" in named(8, 30, fresh=False)
    assert "dayz" in named(19, 20, fresh=True)


def test_near_top_allows_a_tenth_or_chance() -> None:
    assert near_top(90, 100) and not near_top(3000, 3400)  # a tenth; a gap of 400 is 5 standard deviations (√6,400)
    assert near_top(12, 20) and not near_top(8, 30)  # gaps 8 and 22; two standard deviations 2√32 = 11.3, 2√38 = 12.3
    assert near_top(5, 5) and near_top(7, 5)
    pairs = [(n, top) for top in range(0, 120) for n in range(0, top + 1)] + [(3000, 3400), (3100, 3400)]
    sql = duckdb.sql(f"SELECT n, top, {NEAR_TOP_SQL} FROM (SELECT unnest(?) AS n, unnest(?) AS top)",
                     params=[[n for n, _ in pairs], [t for _, t in pairs]]).fetchall()
    assert sorted(sql) == sorted((n, top, near_top(n, top)) for n, top in pairs)  # the SQL twin agrees


def test_a_merge_remembers_its_seeds_when_the_order_changes() -> None:
    """A is like B and B like C (more so), but A not like C. A first: A seeds {A, B}, C its own shape. B first,
    with no memory, all three join B; with last night's seeds, A and C seed again and B rejoins A, though it is
    more like C."""
    config = load_config(DEMO_CONFIG)
    config.mining.merge_similarity = 0.8
    # unit vectors at angles 0, 0.6 and 1 radian: cosines A-B 0.83, B-C 0.92, A-C 0.54
    vecs = np.array([[math.cos(t), math.sin(t)] for t in (0.0, 0.6, 1.0)], dtype=np.float32)
    rows = [("a", "", 30, 5), ("b", "", 20, 5), ("c", "", 10, 5)]
    assert _seed([0, 1, 2], rows, vecs, config, {}) == {0: 0, 1: 0, 2: 2}
    rows_b_first = [("b", "", 30, 5), ("a", "", 20, 5), ("c", "", 10, 5)]
    vecs_b_first = vecs[[1, 0, 2]]
    assert _seed([0, 1, 2], rows_b_first, vecs_b_first, config, {}) == {0: 0, 1: 0, 2: 0}
    remembered = {1: 1, 0: 1, 2: 2}  # b -> a, a -> a, c -> c (indices of this night's rows)
    assert _seed([0, 1, 2], rows_b_first, vecs_b_first, config, remembered) == {1: 1, 0: 1, 2: 2}
    config.mining.merge_similarity = 0.9  # raised since last night: B is too far from A now, not from C
    assert _seed([0, 1, 2], rows_b_first, vecs_b_first, config, remembered) == {1: 1, 0: 2, 2: 2}


def test_a_remembered_seed_of_too_few_users_seeds_nothing() -> None:
    """Last night's seed has lost users: it stands alone, and its member goes its own way rather than join it."""
    config = load_config(DEMO_CONFIG)
    config.mining.min_users = 3
    vecs = np.array([[1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    rows = [("j", "", 30, 2), ("i", "", 20, 2)]  # both of 2 users now
    assert _seed([0, 1], rows, vecs, config, {0: 0, 1: 0}) == {0: 0, 1: 1}


def _drop_line_memo(memo_dir: Path) -> None:
    for folder in memo_dir.glob("lines-*"):
        shutil.rmtree(folder)



def test_questions_of_one_second_keep_their_logged_order_with_the_line_memo(
        tmp_path: Path, small_index: tuple[Config, Index]) -> None:
    """A row recalled from the line memo has its file's place, not its line's: a question that shares its user
    and second with another question of its file is kept out of the memo and read anew, so a follow-up logged
    right after its question in the same second resolves against it on the next night too, and one logged
    right before it has no question before it."""
    from schemas.followup import NO_PREVIOUS

    config, index = small_index
    memo_dir = Path(index.uri).parent / "vectors"
    shutil.rmtree(memo_dir, ignore_errors=True)
    berlin, lisbon = "how many vacation days do we get in Berlin", "what about Lisbon?"
    log = write_log(tmp_path / "logs" / "date=2026-11-28" / "part-000.jsonl",
                    [(f"u{i}", f"how many vacation days do we get in {o}") for i in range(6) for o in OFFICES[:2]],
                    start=datetime(2026, 11, 28, 8))
    pairs = [("a", berlin), ("a", lisbon), ("b", lisbon), ("b", berlin)]  # the same second, in this order
    same = [("2026-11-28T12:00:00", user, q) for user, q in pairs]
    with log.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps({"ts": ts, "user": user, "query": q}) + "\n" for ts, user, q in same)
    ids = dict(zip(["a_question", "a_followup", "b_followup", "b_question"], _question_ids(same), strict=True))

    def run() -> dict[str, dict[str, Any]]:
        staging = tmp_path / "staging"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        mine_logs(tmp_path / "logs", config, index, staging, now=datetime(2026, 12, 1), quiet=True,
                  since=date(2026, 11, 28), until=date(2026, 11, 28))
        rows = {r["question_id"]: r for r in pq.read_table(staging / "questions.parquet").to_pylist()}
        return {name: rows[qid] for name, qid in ids.items()}

    first = run()
    assert first["a_followup"]["resolved_question"] == "how many vacation days do we get in Lisbon"
    assert (first["b_followup"]["resolved_question"], first["b_followup"]["followup_reason"]) == (None, NO_PREVIOUS)
    kept = [r for f in memo_dir.glob("lines-*/*.parquet") for r in pq.read_table(f).to_pylist() if r["kind"] == "row"]
    assert run() == first
    assert len(kept) == 12  # the questions of that second were read anew, not recalled

def test_a_next_run_recalls_the_lines_of_the_last(tmp_path: Path, small_index: tuple[Config, Index]) -> None:
    """A run keeps, per log file read whole, the rows of its lines whose shapes recur, keyed by a hash of the
    file's path and the line (no question text, no personal data, no user id as text on disk). The next run takes those
    lines from it unparsed and publishes what a run without it publishes; a changed line is read anew, a line of
    the memo dated after the run's `now` is quarantined as it would be, and an unreadable memo is ignored."""
    config, index = small_index
    memo_dir = Path(index.uri).parent / "vectors"
    shutil.rmtree(memo_dir, ignore_errors=True)
    logs = tmp_path / "logs"
    rows = [(f"u{i % 4}", q.format(o)) for i in range(12) for o in OFFICES[:3] for q in (
        "what is the per diem in {} this year", "mail jane.doe@example.com about parental leave in {}")]
    for day in ("2026-11-28", "2026-11-29"):
        write_log(logs / f"date={day}" / "part-000.jsonl", rows + [("solo", UNIQUE.format(office="Berlin"))] * 6,
                  start=datetime.fromisoformat(f"{day}T08:00:00"))
    first_day = logs / "date=2026-11-28" / "part-000.jsonl"
    first_day.write_text(first_day.read_text() + first_day.read_text().splitlines()[0] + "\n")  # logged twice
    window = {"since": date(2026, 11, 28), "until": date(2026, 11, 29)}

    def run(now: datetime = datetime(2026, 12, 1)) -> list[list[dict[str, Any]]]:
        staging = tmp_path / "staging"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        mine_logs(logs, config, index, staging, now=now, quiet=True, **window)
        return [pq.read_table(staging / f).to_pylist() for f in ("questions.parquet", "quarantine.parquet")] + [
            pq.read_table(staging / "shapes.parquet").drop(["first_seen", "last_seen"]).to_pylist()]

    first = run()
    (folder,) = memo_dir.glob("lines-*")
    held = sorted(folder.glob("*.parquet"))
    assert len(held) == 2  # one per day's file
    kept = [r for f in held for r in pq.read_table(f).to_pylist()]
    lines_kept = [r for r in kept if r["kind"] == "row"]
    assert len(lines_kept) == 2 * len(rows) + 1  # a row per line of the recurring shapes (not the lone user's)
    assert {r["skeleton"] for r in kept if r["kind"] == "sk"} == {s["skeleton"] for s in first[2]}  # texts once
    assert len([r for r in first[0] if r["question_id"] == first[0][0]["question_id"]]) == 2  # the twice-logged
    on_disk = b"".join(f.read_bytes() for f in held) + str(kept).encode()
    assert not any(w in on_disk for w in (b"jane", b"example.com", b"per diem in Berlin", b"quokka", b"'u1'"))
    with patch("tasks.ingest.stage.source_sql", wraps=ingest_sql.source_sql) as parse:
        assert run() == first
    assert "split WHERE NOT matched" in parse.call_args.args[2]  # the held lines were not parsed again
    # The memo's rows, not a new extraction: a skeleton changed in it shows through; one hash naming two texts
    # (one file changed, not the other) is no memo to trust.
    def rename_skeletons(memo: Path) -> None:
        table = pq.read_table(memo)
        sk = pa.array(["what does the line memo recall" if r["kind"] == "sk" else None for r in table.to_pylist()],
                      pa.string())
        pq.write_table(table.set_column(table.schema.get_field_index("skeleton"), "skeleton", sk), memo)

    rename_skeletons(held[0])
    assert run() == first
    shutil.rmtree(memo_dir)
    run()
    for memo in held:
        rename_skeletons(memo)
    assert [s["skeleton"] for s in run()[2]] == ["what does the line memo recall"]
    shutil.rmtree(memo_dir)  # both memos were made from the changed one
    assert run() == first
    held[0].write_bytes(b"PAR1 not a memo")
    assert run() == first  # unreadable: dropped, every line read anew
    assert len(list(folder.glob("*.parquet"))) == 2  # and made again
    # A memo naming a skeleton it does not hold is dropped, not half used.
    table = pq.read_table(held[1])
    pq.write_table(table.filter(pa.compute.not_equal(table["kind"], "sk")), held[1])
    assert run() == first
    # A memo that cannot be written costs the next run time, not this run its outputs.
    with patch("tasks.ingest.lines.LineMemo.keep", side_effect=OSError("disk full")):
        shutil.rmtree(memo_dir)
        assert run() == first
    assert not list(memo_dir.glob("lines-*/*.parquet"))
    # A file rewritten in place, same size and modification time, is not its memo's file: read whole.
    day = logs / "date=2026-11-29" / "part-000.jsonl"
    run()
    stat = day.stat()
    day.write_text(day.read_text().replace("Lisbon", "London"))  # same length
    os.utime(day, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert day.stat().st_size == stat.st_size and day.stat().st_mtime_ns == stat.st_mtime_ns
    renamed = run()
    _drop_line_memo(memo_dir)
    assert run() == renamed != first
    # A changed line is read anew: its file's other lines still come from the memo.
    lines = day.read_text().splitlines()
    lines[0] = lines[0].replace("per diem", "vacation days")
    day.write_text("\n".join(lines) + "\n")
    fresh = run()
    _drop_line_memo(memo_dir)
    assert run() == fresh
    # Dated after `now`: quarantined as the log reader finds it, memo or not.
    late = run(now=datetime(2026, 11, 28, 6))  # the second day's rows are more than a day after it
    assert late[1] and all(r["reason"] == "timestamp in the future" for r in late[1])
    _drop_line_memo(memo_dir)
    assert run(now=datetime(2026, 11, 28, 6)) == late


def test_a_next_run_recalls_the_extraction_of_the_last(tmp_path: Path, small_index: tuple[Config, Index]) -> None:
    """A run keeps each distinct question's extraction beside the skeleton vectors, keyed by a hash of the
    question (no raw text, no personal data on disk); the next run with the same lexicon recalls it and publishes
    the same files, a corrupt memo is ignored, and a changed lexicon starts an empty one."""
    config, index = small_index
    memo_dir = Path(index.uri).parent / "vectors"  # where mining keeps them
    shutil.rmtree(memo_dir, ignore_errors=True)
    rows = [(f"u{i % 4}", q.format(o)) for i in range(12) for o in OFFICES[:3] for q in (
        "what is the per diem in {} this year", "mail jane.doe@example.com about parental leave in {}",
        "how many vacation days do we get in {} in 2025")]
    log = write_log(tmp_path / "log.jsonl", rows + [("solo", UNIQUE.format(office="Berlin"))] * 20)

    def run(cfg: Config) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        staging = tmp_path / "staging"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        mine_logs(log, cfg, index, staging, now=datetime(2026, 12, 1), quiet=True)
        return (pq.read_table(staging / "questions.parquet").to_pylist(),
                pq.read_table(staging / "shapes.parquet").drop(["first_seen", "last_seen"]).to_pylist())

    first = run(config)
    (memo,) = memo_dir.glob("extracted-*.parquet")
    kept = pq.read_table(memo).to_pylist()
    assert len(kept) == 9  # one row per distinct question and year of a recurring shape
    assert not any(w in str(kept).encode() + memo.read_bytes() for w in (b"jane", b"per diem in Berlin", b"quokka"))
    # Each run below reads every line (no line memo: `test_a_next_run_recalls_the_lines_of_the_last`), so the
    # extraction memo is what saves the extraction; it keeps the questions a run read.
    _drop_line_memo(memo_dir)
    assert run(config) == first
    assert len(pq.read_table(memo)) == 9

    # Recalled, not extracted again: a memo whose skeletons were changed shows through.
    recalled = "what does the memo recall for {office}"
    table = pq.read_table(memo)
    pq.write_table(table.set_column(table.schema.get_field_index("skeleton"), "skeleton",
                                    pa.array([recalled] * len(kept))), memo)
    _drop_line_memo(memo_dir)
    _, shapes = run(config)
    assert [s["skeleton"] for s in shapes] == [recalled]
    memo.write_bytes(b"PAR1 not a memo")
    _drop_line_memo(memo_dir)
    assert run(config) == first

    aliased = config.model_copy(deep=True)
    next(f for f in aliased.facets if f.name == "office").aliases["bln"] = "Berlin"
    _drop_line_memo(memo_dir)
    assert run(aliased) == first  # no question names the alias: the same extraction, made afresh
    (new_memo,) = memo_dir.glob("extracted-*.parquet")
    assert new_memo != memo  # the old fingerprint's memo is gone


@pytest.mark.parametrize("partitioned", [True, False])
def test_the_default_window_ends_before_the_day_still_being_logged(tmp_path: Path, partitioned: bool) -> None:
    """A nightly run at 02:30 sees two and a half hours of today: the window is the last complete days."""
    log = tmp_path / "logs"
    days = [date(2026, 11, 28), date(2026, 11, 29), date(2026, 11, 30)]
    for day in days:
        folder = log / f"date={day}" if partitioned else log
        folder.mkdir(parents=True, exist_ok=True)
        rows = [{"ts": f"{day}T{h:02d}:00:00Z", "user": f"u{h}", "query": f"per diem {day}"} for h in range(3)]
        (folder / f"{day}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ing = ingest(log, now=datetime(2026, 11, 30, 2, 30), last_days=2)
    assert (ing.since, ing.until) == (date(2026, 11, 28), date(2026, 11, 29))
    ing.con.close()
    only_today = tmp_path / "today.jsonl"  # nothing logged before today: today is the window
    only_today.write_text(json.dumps({"ts": "2026-11-30T01:00:00Z", "user": "u", "query": "q"}) + "\n")
    ing = ingest(only_today, now=datetime(2026, 11, 30, 2, 30), last_days=2)
    assert ing.until == date(2026, 11, 30) and ing.rows == 1
    ing.con.close()


@pytest.mark.parametrize("ts", ["20261-11-24T09:13:02Z", "20261-11-24T09:13:02", "02026-11-24 09:13:02",
                                "12026-11-24T09:13-05", "20261-11-24T09:13:02+02:00", "-2026-11-24T09:13:02"])
def test_a_timestamp_whose_year_is_not_four_digits_is_bad(tmp_path: Path, ts: str) -> None:
    """DuckDB reads "20261-11-24" as the year 20261 and "02026-11-24" as 2026: neither is a logged year."""
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps({"ts": "2026-11-24T09:00:00Z", "user": "u1", "query": "a question"}) + "\n"
                    + json.dumps({"ts": ts, "user": "u2", "query": "b question"}) + "\n", encoding="utf-8")
    rows, bad = _ingest_rows(path)
    assert [r[1] for r in rows] == ["u1"]
    assert [r for r, _ in bad] == ["bad timestamp"]
