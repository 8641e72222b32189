"""Conversational follow-ups: detected, resolved into the previous question's shape, refused when ambiguous;
the same code and the same keys in mining (per log row) and in `lookup` (per history)."""

from __future__ import annotations

import json
from contextlib import closing
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemas.arrow import CACHE_SCHEMA, TEMPLATE_SCHEMA
from schemas.cache import PlanCache
from schemas.config import Config, load_config
from schemas.extract import Lexicon
from schemas.followup import NO_PREVIOUS, Conversation, Followups, topic_words_sql
from schemas.members import ShapeMembers
from tasks.ingest.stage import ingest
from tasks.mine import followups
from tasks.mine.mining import build_shapes, extract_distinct, shape_id, write_outputs
from tasks.publish.report import _followup_lines
from tests.conftest import DEMO_CONFIG, ROOT

CONFIG = load_config(DEMO_CONFIG)
LEX = Lexicon(CONFIG)
SCRUB = LEX.scrubber()
NOW = date(2026, 7, 1)
LEARNED = ["and in {office}", "and in {year}", "and for the birth parent"]
RULES = Followups(CONFIG.mining, LEARNED)

VACATION = "how many vacation days do we get in {office}"
COMPARE = "compare vacation days in {office} and {office}"
LEAVE = "how long is parental leave for the second parent in {office}"
LEAVE_BIRTH = "how long is parental leave for the birth parent in {office}"
HOLIDAYS = "which public holidays does {office} have in {year}"
PLAN = {"steps": [{"id": "s1", "query": "vacation days {office_1}", "filters": {"office": "{office_1}"}}]}


def turns(*questions: str) -> list[Any]:
    talk = Conversation(RULES)
    return [talk.add(LEX.skeleton(SCRUB(q), NOW)) for q in questions]


# --- resolution, on skeletons ---------------------------------------------------------------------


@given(st.lists(st.text(alphabet="ab{}_ \t\u00a0\u2003é", max_size=12), max_size=8))
def test_topic_words_in_sql_and_python_agree(parts: list[str]) -> None:
    skeleton = " ".join(" ".join(parts).split())  # skeletons are single-spaced, as normalised text is
    with duckdb.connect() as con:  # its own connection: the module's default one is shared by every test
        got = con.execute(f"SELECT {topic_words_sql('?')}", [skeleton]).fetchall()
    assert got == [(Followups.topic_words(skeleton),)]



def test_office_followup_takes_the_office_slot() -> None:
    first, fu = turns("How many vacation days do we get in Berlin?", "what about Lisbon??")
    assert not first.followup and fu.followup and fu.standalone is not None
    assert fu.standalone.text == VACATION and fu.standalone.slots == {"office_1": "Lisbon"}
    assert fu.question == "how many vacation days do we get in Lisbon"


def test_two_offices_before_one_after_is_refused() -> None:
    _, fu = turns("compare vacation days in Berlin and Amsterdam", "what about Lisbon?")
    assert fu.followup and fu.standalone is None and fu.question is None
    assert "ambiguous" in fu.reason and "Berlin, Amsterdam" in fu.reason
    _, fu = turns("how many vacation days do we get in Warsaw", "how about Lisbon and Berlin?")
    assert fu.standalone is None and fu.reason == (
        "ambiguous: the follow-up names 2 office values (Lisbon, Berlin) for the previous question's 1 (Warsaw); "
        "which goes where would be a guess")


def test_no_previous_question_and_no_slot_are_refused() -> None:
    [fu] = turns("what about Lisbon?")
    assert fu.followup and fu.standalone is None and fu.reason == NO_PREVIOUS
    _, year = turns("how many vacation days do we get in Berlin", "what about 2025?")
    assert year.standalone is None and "no year slot" in year.reason


def test_year_and_qualifier_followups() -> None:
    _, year = turns("which public holidays does Berlin have in 2026", "and in 2027?")
    assert year.standalone is not None and year.standalone.text == HOLIDAYS
    assert year.standalone.slots == {"office_1": "Berlin", "year_1": "2027"}
    _, parent = turns("how long is parental leave for the second parent in Berlin", "and for the birth parent?")
    assert parent.standalone is not None and parent.standalone.text == LEAVE_BIRTH
    assert parent.question == "how long is parental leave for the birth parent in Berlin"


def test_chain_and_standalone_questions() -> None:
    _, a, b = turns("how many vacation days do we get in Berlin", "what about Lisbon?", "and in Warsaw?")
    assert a.question == "how many vacation days do we get in Lisbon"
    assert b.question == "how many vacation days do we get in Warsaw"
    _, refused, after = turns("compare vacation days in Berlin and Amsterdam", "what about Lisbon?", "and in Warsaw?")
    assert refused.standalone is None and after.standalone is None and "did not resolve" in after.reason
    # a question with a topic of its own is no follow-up, even with "there" in it
    _, own = turns("how many vacation days do we get in Berlin",
                   "is there a relocation package for moving to the Lisbon office")
    assert not own.followup and own.standalone is not None and own.standalone.slots == {"office_1": "Lisbon"}


# --- lookup, on a small publication ----------------------------------------------------------------


def publish_small(run: Path, learned: list[str], config: Config = CONFIG) -> PlanCache:
    """A hand-made publication: vacation days (split, a one-step plan), parental leave, a comparison."""
    run.mkdir(parents=True, exist_ok=True)
    shapes = [(VACATION, "single", "split", json.dumps(PLAN)), (LEAVE, "single", "one_search", ""),
              (LEAVE_BIRTH, "single", "one_search", ""), (COMPARE, "comparison", "one_search", ""),
              (HOLIDAYS, "single", "one_search", "")]
    rows = [{"shape_id": shape_id(sk), "skeleton": sk, "type": t, "route": r, "template": tpl, "members": [sk],
             "writer": "rules", "evaluation": "{}", "count": 10} for sk, t, r, tpl in shapes]
    pq.write_table(pa.Table.from_pylist(rows, TEMPLATE_SCHEMA), run / "templates.parquet")
    pq.write_table(pa.Table.from_pylist([], CACHE_SCHEMA), run / "cache.parquet")
    (run / "config.json").write_text(config.model_dump_json(), encoding="utf-8")
    (run / "lexicon.json").write_text("{}", encoding="utf-8")
    manifest = {"run_id": run.name, "mine": {"followups": {"skeletons": learned}}}
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return PlanCache.open(run)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> PlanCache:
    return publish_small(tmp_path_factory.mktemp("pub") / "run", LEARNED)


def test_lookup_resolves_a_followup_to_the_standalone_plan(cache: PlanCache) -> None:
    res = cache.lookup("what about Lisbon?", history=["How many vacation days do we get in Berlin?"])
    direct = cache.lookup("how many vacation days do we get in Lisbon")
    assert res.hit and res.followup and res.resolved == "how many vacation days do we get in Lisbon"
    assert res.key == direct.key and res.plan == direct.plan and res.plan is not None
    assert [s["filters"] for s in res.plan["steps"]] == [{"office": "Lisbon"}]
    doc = res.to_json()
    assert doc["resolved"] == res.resolved and doc["followup"] and doc["trace"]["resolved"] == res.resolved


def test_lookup_refuses_ambiguous_and_orphan_followups(cache: PlanCache) -> None:
    res = cache.lookup("what about Lisbon?", history=["compare vacation days in Berlin and Amsterdam"])
    assert not res.hit and res.plan is None and res.route == "online_planner" and "ambiguous" in res.reason
    assert res.followup and res.resolved is None and res.trace["reason"] == res.reason
    for history in (None, [], ["", "   "]):
        orphan = cache.lookup("what about Lisbon?", history=history)
        assert not orphan.hit and orphan.followup and orphan.reason == NO_PREVIOUS
    plain = cache.lookup("how many vacation days do we get in Warsaw", history=["compare per diem in Berlin"])
    assert plain.hit and not plain.followup and plain.resolved is None


def test_cli_lookup_history(cache: PlanCache) -> None:
    from typer.testing import CliRunner

    from planbake.cli import app

    res = CliRunner().invoke(app, ["lookup", "what about Lisbon?", "--history", "compare vacation days in Berlin "
                                   "and Amsterdam", "--history", "how many vacation days do we get in Berlin",
                                   "--out", str(cache.run_dir), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["hit"] and doc["resolved"] == "how many vacation days do we get in Lisbon"


# --- mining: the same code per log row --------------------------------------------------------------


def write_log(path: Path, conversations: list[tuple[str, list[str]]], gap_s: int = 30) -> None:
    start = datetime(2026, 11, 24, 9)
    lines = []
    for n, (user, questions) in enumerate(conversations):
        for i, q in enumerate(questions):
            ts = start + timedelta(hours=n, seconds=i * gap_s)
            lines.append(json.dumps({"ts": ts.isoformat(), "user": user, "query": q}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def mine_followups(path: Path, learned: list[str] | None = None, shape_of: ShapeMembers | None = None,
                   on_cursor: bool = False, max_query_chars: int = CONFIG.mining.max_query_chars,
                   ) -> tuple[Followups, dict[str, Any], list[dict[str, Any]]]:
    """Ingest, extract, learn, link: the mining stage's follow-up steps, without the embedding model. With
    `on_cursor`, the replay runs on a cursor of its own first, as `mine` runs it beside the merge."""
    ing = ingest(path, now=datetime(2030, 1, 1), scrub=SCRUB, max_query_chars=max_query_chars)
    try:
        extract_distinct(ing, LEX, SCRUB, quiet=True)
        rules = Followups(CONFIG.mining, learned) if learned is not None else followups.learn(ing, CONFIG)
        distinct = [r[0] for r in ing.con.sql("SELECT DISTINCT skeleton FROM q_text").fetchall()]
        shapes = build_shapes(ing, CONFIG, {sk: sk for sk in distinct})
        followups.drop_followup_shapes(shapes, rules)
        replayed = None
        if on_cursor:
            with closing(ing.con.cursor()) as cursor:
                replayed = followups.replay(cursor, CONFIG, rules)
        figures = followups.link(ing, CONFIG, rules, shape_of if shape_of is not None else
                                 followups.shape_lookup(shapes), replayed)
        # `q` holds a hash of each user id: the log's own ids back for the assertions
        rows = ing.con.sql('SELECT u."user", q.ts, f.* FROM q LEFT JOIN followups f USING (question_id) '
                           'JOIN (SELECT DISTINCT hash("user") AS h, "user" FROM rows) u ON u.h = q."user" '
                           'ORDER BY u."user", q.ts').fetchall()
        cols = ["user", "ts", *followups.FOLLOWUP_COLUMNS]
        out = path.parent / "out"
        out.mkdir(exist_ok=True)
        write_outputs(ing, shapes, out)
    finally:
        ing.con.close()
    return rules, figures, [dict(zip(cols, r, strict=True)) for r in rows]


def test_mining_learns_and_resolves_followups(tmp_path: Path) -> None:
    offices = ["Berlin", "Amsterdam", "Warsaw", "Toronto", "London", "Berlin"]
    talks = [(f"u{i}", [f"how many vacation days do we get in {o}", "what about Lisbon?"]) for i, o in
             enumerate(offices)]
    talks += [(f"c{i}", ["compare vacation days in Berlin and Amsterdam", "and in Lisbon?"]) for i in range(6)]
    talks += [("late", ["how many vacation days do we get in Berlin"]), ("late", ["and in Lisbon?"])]  # an hour on
    write_log(tmp_path / "log.jsonl", talks)
    rules, figures, rows = mine_followups(tmp_path / "log.jsonl")
    assert {"what about {office}", "and in {office}"} <= rules.learned
    assert VACATION not in rules.learned and COMPARE not in rules.learned
    fu = [r for r in rows if r["followup"]]
    assert len(fu) == figures["followups"] == 13 and figures["questions"] == 26
    resolved = [r for r in fu if r["resolved_question"]]
    assert {r["resolved_question"] for r in resolved} == {"how many vacation days do we get in Lisbon"}
    assert {r["user"] for r in resolved} == {f"u{i}" for i in range(6)} and figures["cached"] == 6
    assert {r["resolved_key"] for r in resolved} == {f"{shape_id(VACATION)}|office_1=Lisbon"}
    reasons = {r["user"]: r["followup_reason"] for r in fu if not r["resolved_question"]}
    assert all("ambiguous" in reasons[f"c{i}"] for i in range(6)) and reasons["late"] == NO_PREVIOUS
    # follow-up skeletons are no shapes; questions.parquet records every row's follow-up columns
    shapes = pq.read_table(tmp_path / "out" / "shapes.parquet").to_pylist()
    assert {s["skeleton"] for s in shapes} == {VACATION, COMPARE}
    q = pq.read_table(tmp_path / "out" / "questions.parquet").to_pylist()
    assert len(q) == 26 and sum(r["followup"] for r in q) == 13
    lines = "\n".join(_followup_lines(tmp_path / "out" / "questions.parquet"))
    assert "13 of 26 questions (50.0%) are follow-ups; 6 resolved" in lines and "6 (100.0%) of them" in lines
    assert "| ambiguous | 6 |" in lines and f"| {NO_PREVIOUS} | 1 |" in lines  # refusals by kind, not by value


def test_a_followup_after_thanks_resolves_against_the_question_before(tmp_path: Path, cache: PlanCache) -> None:
    """"thanks" between a question and its follow-up is no turn of the conversation, offline and online."""
    berlin = "how many vacation days do we get in Berlin"
    talks = [("a", [berlin, "thanks!", "what about Lisbon?"]),
             ("b", [berlin, "what about Lisbon?", "thanks", "and in Toronto?"])]  # a chain across the filler
    write_log(tmp_path / "log.jsonl", talks)
    _, figures, rows = mine_followups(tmp_path / "log.jsonl", sorted(cache.followups.learned), cache.shape_of)
    got = {(r["user"], r["resolved_question"]) for r in rows if r["followup"]}
    assert got == {("a", "how many vacation days do we get in Lisbon"),
                   ("b", "how many vacation days do we get in Lisbon"),
                   ("b", "how many vacation days do we get in Toronto")}
    assert figures["resolved"] == 3
    for (_, questions), city in zip(talks, ["Lisbon", "Toronto"], strict=True):
        online = cache.lookup(questions[-1], NOW, history=questions[:-1])
        assert online.hit and online.followup and online.resolved == f"how many vacation days do we get in {city}"


@pytest.mark.parametrize("between", ["   ", "\u3000", "\u2003", "\x1c", "x" * 2500, "x" * 5000])
def test_a_blank_or_too_long_entry_between_is_no_turn_online_as_its_log_row_is_none(
        tmp_path: Path, cache: PlanCache, between: str) -> None:
    """Mining quarantines a log row of blanks or longer than `mining.max_query_chars` (or, of blanks Unicode
    calls spaces, reads it as filler): no turn, so the follow-up after it resolves against the question before.
    The same history online must resolve alike, not stop at the entry."""
    assert CONFIG.mining.max_query_chars < 2500
    history = ["how many vacation days do we get in Berlin", between, "what about Lisbon?"]
    write_log(tmp_path / "log.jsonl", [("u", history)])
    _, _, rows = mine_followups(tmp_path / "log.jsonl", sorted(cache.followups.learned), cache.shape_of)
    [offline] = [r for r in rows if r["followup"]]
    online = cache.lookup(history[-1], NOW, history=history[:-1])
    assert offline["resolved_question"] == "how many vacation days do we get in Lisbon"
    assert (online.followup, online.resolved, online.key) == (True, offline["resolved_question"],
                                                              offline["resolved_key"]), online.reason


def test_an_entry_longer_than_a_lookup_question_is_a_turn_online_as_its_log_row_is(tmp_path: Path) -> None:
    """With `mining.max_query_chars` above a lookup's own limit, a log row between the two lengths is a turn
    of its user's conversation: online, the same history entry is one too, not the end of the history."""
    from schemas.cache import MAX_QUESTION_CHARS

    long = CONFIG.mining.model_copy(update={"max_query_chars": MAX_QUESTION_CHARS + 1000})
    pub = publish_small(tmp_path / "pub" / "run", LEARNED, CONFIG.model_copy(update={"mining": long}))
    berlin = "how many vacation days do we get in Berlin"
    for between in ["what about Warsaw?" + " " * MAX_QUESTION_CHARS, "wifi " * (MAX_QUESTION_CHARS // 4)]:
        history = [berlin, between, "what about Lisbon?"]
        folder = tmp_path / str(len(between))
        folder.mkdir()
        write_log(folder / "log.jsonl", [("u", history)])
        _, _, rows = mine_followups(folder / "log.jsonl", sorted(pub.followups.learned), pub.shape_of,
                                    max_query_chars=long.max_query_chars)
        assert len(rows) == 3
        online = pub.lookup(history[-1], NOW, history=history[:-1])
        assert (online.followup, online.resolved, online.key if online.resolved else None, online.reason) == (
            True, rows[-1]["resolved_question"], rows[-1]["resolved_key"], rows[-1]["followup_reason"] or "")



def write_rows(path: Path, rows: list[dict[str, str]]) -> None:
    """Log rows as a JSONL, CSV or Parquet file, by the path's suffix."""
    if path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    elif path.suffix == ".csv":
        path.write_text("ts,user,query\n" + "".join(f'{r["ts"]},{r["user"]},"{r["query"]}"\n' for r in rows))
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.parametrize("kind", ["jsonl", "csv", "parquet"])
@pytest.mark.parametrize("files", [1, 2])
def test_questions_logged_in_the_same_second_keep_the_order_they_were_logged_in(
        tmp_path: Path, files: int, kind: str) -> None:
    """A follow-up logged in the same second as its question is read after it when it comes after it in the
    log (in the same file, or in a later file), whatever a hash of the rows would say; logged before it, it has
    no question before it."""
    berlin, lisbon = "how many vacation days do we get in Berlin", "what about Lisbon?"
    for order in ([berlin, lisbon], [lisbon, berlin]):
        logs = tmp_path / f"{order[0][:4]}"
        logs.mkdir()
        rows = [{"ts": "2026-11-24T09:00:00", "user": "u", "query": q} for q in order]
        for name, part in ([("a", rows)] if files == 1 else [("a", rows[:1]), ("b", rows[1:])]):
            write_rows(logs / f"{name}.{kind}", part)
        _, _, mined = mine_followups(logs, LEARNED)
        assert len(mined) == 2 and mined[0]["ts"] == mined[1]["ts"]
        [followup] = [r for r in mined if r["followup"]]
        if order[0] == berlin:
            assert followup["resolved_question"] == "how many vacation days do we get in Lisbon"
        else:
            assert (followup["resolved_question"], followup["followup_reason"]) == (None, NO_PREVIOUS)


def test_batched_link_equals_a_replay_of_every_user(tmp_path: Path) -> None:
    """`link` resolves each distinct (previous question, follow-up) once and replays chained users; both
    must give what a plain replay of each user's questions gives, row by row."""
    talks = [
        ("a", ["how many vacation days do we get in Berlin", "what about Lisbon?"]),
        ("b", ["how many vacation days do we get in Warsaw", "and in Lisbon?"]),  # same values, other wording
        ("c", ["how many vacation days do we get in Berlin", "what about Lisbon?", "and in Toronto?"]),  # chain
        ("d", ["what about Lisbon?", "compare vacation days in Berlin and Amsterdam", "and in Lisbon?"]),
        ("e", ["which public holidays does Berlin have in 2025", "and in 2026?", "what about Warsaw?"]),  # chain
        ("f", ["how many vacation days do we get in Berlin"]), ("f", ["what about Lisbon?"]),  # an hour apart
    ]
    write_log(tmp_path / "log.jsonl", talks)
    with (tmp_path / "log.jsonl").open("a", encoding="utf-8") as fh:  # user c's chained follow-up logged twice
        fh.write((tmp_path / "log.jsonl").read_text(encoding="utf-8").splitlines()[6] + "\n")
    _, figures, rows = mine_followups(tmp_path / "log.jsonl", LEARNED)
    assert len(rows) == 16  # 15 lines and the copy, each once
    assert len({r["question_id"] for r in rows if r["followup"]}) == figures["followups"]  # one row per question id
    rows = list({(r["user"], r["ts"]): r for r in rows}.values())  # the copy is the same question
    expected: list[tuple[Any, ...]] = []
    talk = Conversation(RULES)
    for user, questions in talks:
        talk.reset()  # each conversation starts an hour after the one before
        for q in questions:
            turn = talk.add(LEX.skeleton(SCRUB(q), NOW))
            expected.append((user, turn.followup, turn.question if turn.followup else None,
                             turn.reason if turn.followup else None))
    got = [(r["user"], bool(r["followup"]), r["resolved_question"], r["followup_reason"]) for r in rows]
    assert sorted(got, key=str) == sorted(expected, key=str)
    assert figures["followups"] == sum(e[1] for e in expected) == 9
    assert figures["resolved"] == sum(e[2] is not None for e in expected) == 6


def test_a_replay_on_its_own_cursor_links_the_same(tmp_path: Path) -> None:
    """`mine` replays the follow-ups on a cursor beside the merge and links them on the session's connection
    afterwards: the rows must be those of one `link` call, resolved shapes and cache keys included."""
    talks = [(f"u{i}", [f"how many vacation days do we get in {o}", "what about Lisbon?", "and in Toronto?"])
             for i, o in enumerate(["Berlin", "Amsterdam", "Warsaw", "Berlin", "London", "Toronto"])]
    talks += [(f"c{i}", ["compare vacation days in Berlin and Amsterdam", "and in Lisbon?"]) for i in range(4)]
    write_log(tmp_path / "log.jsonl", talks)
    _, figures, rows = mine_followups(tmp_path / "log.jsonl", LEARNED)
    (tmp_path / "again").mkdir()
    write_log(tmp_path / "again" / "log.jsonl", talks)
    _, figures_on_cursor, rows_on_cursor = mine_followups(tmp_path / "again" / "log.jsonl", LEARNED, on_cursor=True)
    assert figures_on_cursor == figures and figures["cached"] > 0
    assert rows_on_cursor == rows and sum(bool(r["resolved_key"]) for r in rows) == figures["cached"]


# --- offline equals online (property) ----------------------------------------------------------------

_STANDALONE = st.sampled_from([
    "how many vacation days do we get in {o}", "compare vacation days in {o} and {p}",
    "how long is parental leave for the second parent in {o}", "which public holidays does {o} have in {y}",
    "what is the wifi password",
])
_FOLLOWUP = st.sampled_from(["what about {o}?", "and in {o}?", "and in {y}?", "and for the birth parent?",
                             "what about {o} and {p}?", "the same there?"])


@st.composite
def _history(draw: st.DrawFn) -> list[str]:
    offices = sorted(CONFIG.facet("office").values)
    out = []
    for _ in range(draw(st.integers(1, 5))):
        text = draw(st.one_of(_STANDALONE, _FOLLOWUP, st.sampled_from(["thanks!", "hi"])))
        o, p = draw(st.permutations(offices))[:2]
        out.append(text.format(o=o, p=p, y=draw(st.sampled_from(["2025", "2026", "2027"]))))
    return out


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(_history())
def test_same_history_same_key_offline_and_online(tmp_path_factory: pytest.TempPathFactory, cache: PlanCache,
                                                  history: list[str]) -> None:
    path = tmp_path_factory.mktemp("log") / "log.jsonl"
    write_log(path, [("u", history)])
    _, _, rows = mine_followups(path, sorted(cache.followups.learned), cache.shape_of)
    assert len(rows) == len(history)
    for i, (q, row) in enumerate(zip(history, rows, strict=True)):
        online = cache.lookup(q, NOW, history=history[:i])
        assert online.to_json() == cache.lookup(q, NOW, history=history[:i]).to_json()  # deterministic
        assert bool(row["followup"]) == online.followup, q
        if online.followup:
            assert row["resolved_question"] == online.resolved
            assert row["resolved_key"] == (online.key if online.resolved else None)
            assert (row["followup_reason"] or "") == (online.reason if not online.resolved else "")


# --- the demo publication ---------------------------------------------------------------------------


def test_demo_followups(demo_publication: Path) -> None:
    cache = PlanCache.open(demo_publication)
    assert "what about {office}" in cache.followups.learned
    res = cache.lookup("what about Lisbon?", history=["how many vacation days do we get in Toronto"])
    direct = cache.lookup("how many vacation days do we get in Lisbon")
    assert direct.hit and res.hit and res.resolved == "how many vacation days do we get in Lisbon"
    assert (res.key, res.route, res.plan) == (direct.key, direct.route, direct.plan)
    assert ("office", "Lisbon") in res.constraints and ("office", "Toronto") not in res.constraints
    compared = cache.lookup("what about Lisbon?", history=["compare vacation days in London and Amsterdam"])
    assert not compared.hit and compared.plan is None and "ambiguous" in compared.reason
    orphan = cache.lookup("what about Lisbon?")
    assert not orphan.hit and orphan.reason == NO_PREVIOUS
    truth = json.loads((ROOT / "data" / "demo" / "log_shapes.json").read_text(encoding="utf-8"))["follow_ups"]
    from schemas.publication import current_run

    q = pq.read_table(current_run(demo_publication) / "questions.parquet",
                      columns=["followup", "resolved_shape_id"]).to_pylist()
    found = sum(r["followup"] for r in q)
    assert 0.9 * truth["rows"] <= found <= 1.1 * truth["rows"]
    assert sum(r["resolved_shape_id"] is not None for r in q if r["followup"]) > 0.5 * truth["by_kind"]["office"]


def test_lookup_refuses_input_of_the_wrong_type(cache: PlanCache) -> None:
    berlin = "how many vacation days do we get in Berlin"
    for call in (lambda: cache.lookup(berlin.encode()),  # type: ignore[arg-type]
                 lambda: cache.lookup("what about Lisbon?", history=berlin),
                 lambda: cache.lookup("what about Lisbon?", history=[berlin, None]),  # type: ignore[list-item]
                 lambda: cache.lookup("holidays this year", now="2026-11-30")):  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            call()


@pytest.mark.parametrize("question", ["?", "\u200b", "\x00", " ... ", "\u3000!"])
def test_a_question_with_no_words_is_an_empty_question(cache: PlanCache, question: str) -> None:
    for history in (None, ["how many vacation days do we get in Berlin"]):
        res = cache.lookup(question, history=history)
        assert not res.hit and res.route == "one_search" and res.reason == "empty question"


@pytest.mark.parametrize("question", ["hello", "Thanks!", "hi, thank you"])
def test_a_question_of_fillers_alone_says_so(cache: PlanCache, question: str) -> None:
    res = cache.lookup(question)
    assert not res.hit and res.route == "one_search" and res.reason == "only greetings or filler words"


def test_a_question_of_fillers_alone_is_no_shape_offline_either(tmp_path: Path) -> None:
    """"thanks" from a dozen users: lookup answers it as filler, so mining makes no shape of its empty skeleton
    (a template of no words would be rejected and lower the plan validity the gate checks)."""
    path = tmp_path / "log.jsonl"
    write_log(path, [(f"u{n}", ["how big is the learning budget in Berlin", "thanks"]) for n in range(12)])
    ing = ingest(path, now=datetime(2030, 1, 1), scrub=SCRUB)
    try:
        extract_distinct(ing, LEX, SCRUB, quiet=True)
        distinct = [r[0] for r in ing.con.sql("SELECT DISTINCT skeleton FROM q_text").fetchall()]
        assert "" in distinct
        shapes = build_shapes(ing, CONFIG, {sk: sk for sk in distinct})
    finally:
        ing.con.close()
    assert [s["skeleton"] for s in shapes] == ["how big is the learning budget in {office}"]


def test_a_time_zone_counts_in_utc(cache: PlanCache) -> None:
    """The same instant resolves "this year" to the same year wherever the service runs, as mining does
    with each row's UTC time."""
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    instant = datetime(2026, 12, 31, 23, 30, tzinfo=UTC)
    years = {cache.lookup("public holidays this year", now=now).constraints[0]
             for now in (instant, instant.astimezone(ZoneInfo("Europe/Berlin")), instant.replace(tzinfo=None))}
    assert years == {("year", "2026")}


def test_history_is_read_back_to_the_last_standalone_question(cache: PlanCache) -> None:
    """A follow-up resolves against the last earlier question that is none; what came before it is not read,
    so a long history costs no more than a short one. Filler is no turn (the lookup reads past it, within
    `lookup.history_entries`); a chain of more than MAX_CHAIN follow-ups stops resolving."""
    from schemas.followup import CHAIN_TOO_LONG, MAX_CHAIN

    berlin = "how many vacation days do we get in Berlin"
    short = cache.lookup("what about Lisbon?", history=[berlin])
    noisy = cache.lookup("what about Lisbon?", history=["x" * 10_000, "compare vacation days in Berlin and Amsterdam",
                                                        *["a" * 3998 + "@!"] * 50, berlin, *["thanks!"] * 40])
    assert short.hit and noisy.hit and noisy.key == short.key
    chain = [berlin, *["what about Warsaw?", "thanks"] * (MAX_CHAIN - 1)]
    assert cache.lookup("what about Lisbon?", history=chain).key == short.key
    for extra in (0, 1, 5):
        too_long = cache.lookup("what about Lisbon?", history=[berlin, *["what about Warsaw?"] * (MAX_CHAIN + extra)])
        assert not too_long.hit and too_long.followup and too_long.reason == CHAIN_TOO_LONG


def test_a_long_chain_of_followups_is_cut_offline_as_online(tmp_path: Path, cache: PlanCache) -> None:
    """The MAX_CHAIN + 1st follow-up in a row resolves neither in mining nor in a lookup of the same history
    (the lookup reads no further back), and a standalone question starts a new chain in both."""
    from schemas.followup import CHAIN_TOO_LONG, MAX_CHAIN

    history = ["how many vacation days do we get in Berlin", "thanks",
               *["what about Warsaw?", "and in Lisbon?"] * ((MAX_CHAIN + 3) // 2),
               "how many vacation days do we get in Toronto", "what about Berlin?"]
    write_log(tmp_path / "log.jsonl", [("u", history)], gap_s=5)
    _, _, rows = mine_followups(tmp_path / "log.jsonl", sorted(cache.followups.learned), cache.shape_of)
    reasons = []
    for i, (q, row) in enumerate(zip(history, rows, strict=True)):
        online = cache.lookup(q, NOW, history=history[:i])
        assert (bool(row["followup"]), row["resolved_key"]) == (online.followup, online.key if online.resolved
                                                               else None), (i, q)
        if online.followup:
            assert (row["followup_reason"] or "") == (online.reason if not online.resolved else ""), (i, q)
            reasons.append(online.reason)
    assert reasons.count(CHAIN_TOO_LONG) == len(history) - 4 - MAX_CHAIN > 0
    assert rows[-1]["resolved_key"] and CHAIN_TOO_LONG not in reasons[:MAX_CHAIN] + reasons[-1:]


def test_lookup_names_a_history_entry_of_the_wrong_type_wherever_it_is(cache: PlanCache) -> None:
    """An entry older than the question the history is read back to is checked too (the docs promise it)."""
    berlin = "how many vacation days do we get in Berlin"
    for history, index in (([None, berlin], 0), ([berlin, b"x", berlin], 1), ([berlin, 7], 1)):
        with pytest.raises(TypeError, match=rf"history\[{index}\] must be a str"):
            cache.lookup("what about Lisbon?", history=history)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=rf"history\[{index}\]"):  # a question of its own checks it as well
            cache.lookup(berlin, history=history)  # type: ignore[arg-type]


@pytest.mark.parametrize("entry", ["thanks", "thanks " * 285, "what about Warsaw?", "wifi " * 400])
def test_a_hostile_history_is_read_no_further_than_the_lookup_settings(cache: PlanCache, entry: str) -> None:
    """A history of 100,000 entries costs what its newest `lookup.history_entries` entries of at most
    `lookup.history_chars` characters in all cost: the lookup skeletonises nothing beyond them."""
    read: list[str] = []
    skeleton = cache._skeleton

    def counted(question: str, when: date) -> Any:
        read.append(question)
        return skeleton(question, when)

    cache._skeleton = counted  # type: ignore[method-assign]
    try:
        cache.lookup("what about Lisbon?", NOW, history=[entry] * 100_000)
    finally:
        del cache._skeleton
    limits = CONFIG.lookup
    earlier = read[1:]  # the question itself first
    assert len(earlier) <= limits.history_entries and sum(map(len, earlier)) <= limits.history_chars


def test_the_history_limits_are_configurable_and_keep_a_normal_conversation(tmp_path: Path) -> None:
    berlin = "how many vacation days do we get in Berlin"
    history = [berlin, "thanks", "what about Warsaw?", "thanks"]
    normal = publish_small(tmp_path / "a" / "run", LEARNED)
    assert normal.lookup("what about Lisbon?", NOW, history=history).resolved == \
        "how many vacation days do we get in Lisbon"
    for update in ({"history_entries": 3}, {"history_chars": len(berlin) + 5}):
        short = CONFIG.model_copy(update={"lookup": CONFIG.lookup.model_copy(update=update)})
        pub = publish_small(tmp_path / str(update) / "run", LEARNED, short)
        res = pub.lookup("what about Lisbon?", NOW, history=history)
        assert (res.followup, res.resolved) == (True, None), update  # Berlin lies beyond what it reads
        assert pub.lookup("what about Lisbon?", NOW, history=history[:1]).resolved == normal.lookup(
            "what about Lisbon?", NOW, history=history).resolved
