"""A corpus without a facet is first-class: `facets: []` runs every stage (index, mine, plan, publish, lookup,
search, eval); and a title facet learned from the index leaves out the titles that are ordinary words, the same
offline and in the published lexicon lookup reads."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
from typer.testing import CliRunner

from flows.nightly import nightly_flow
from planbake.cli import app
from schemas.cache import PlanCache
from schemas.config import load_config
from schemas.files import CHUNKS, LEXICON
from schemas.publication import current_run
from tasks.index.stage import check_corpus

DOCS = [  # encyclopedia paragraphs titled by their entity; "Time" and "Water" are also words of the texts
    ("stanley-kubrick", "Stanley Kubrick", "Stanley Kubrick was an American film director who directed thirteen "
     "feature films, among them 2001: A Space Odyssey and The Shining."),
    ("christopher-nolan", "Christopher Nolan", "Christopher Nolan is a British film director known for Inception, "
     "Interstellar and Oppenheimer; he has directed twelve feature films."),
    ("the-shining", "The Shining", "The Shining is a 1980 horror film directed by Stanley Kubrick, based on the "
     "novel by Stephen King."),
    ("inception", "Inception", "Inception is a 2010 science fiction film written and directed by Christopher Nolan. "
     "It was produced by Emma Thomas, Nolan's wife."),
    ("emma-thomas", "Emma Thomas", "Emma Thomas is a British film producer who has produced all of Christopher "
     "Nolan's films. She was born in London in 1971."),
    ("stephen-king", "Stephen King", "Stephen King is an American author of horror novels. He was born in Portland, "
     "Maine, in 1947."),
    ("time", "Time", "Time is the continued sequence of existence and events; at the time of writing it is measured "
     "in seconds."),
    ("water", "Water", "Water is an inorganic compound; the water of the oceans covers most of the Earth."),
]
QUESTIONS = ["How many films did Stanley Kubrick direct?", "How many films did Christopher Nolan direct?",
             "Who produced Inception?", "Where was Emma Thomas born?", "When was Stephen King born?",
             "What time is it in Portland?"]


def _inputs(root: Path, facets: str) -> Path:
    """A corpus, a log (each question from four users on three days) and a config with `facets`."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps({"id": i, "text": text, "metadata": {"title": title}}) + "\n"
                                               for i, title, text in DOCS), encoding="utf-8")
    rows = [{"ts": f"2026-03-0{day}T1{user}:00:00Z", "user": f"u{user}", "query": q}
            for day in (1, 2, 3) for user in range(4) for q in QUESTIONS]
    (root / "logs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (root / "labeled.jsonl").write_text("".join(json.dumps(q) + "\n" for q in [
        {"question": "How many films did Stanley Kubrick direct?", "parts": [["stanley-kubrick"]]},
        {"question": "Who produced Inception and where was she born?", "parts": [["inception"], ["emma-thomas"]]},
        {"question": "When was the author of the novel The Shining is based on born?",
         "parts": [["the-shining"], ["stephen-king"]]}]), encoding="utf-8")
    config = root / "config.yaml"
    config.write_text(f"facets: {facets}\ncorpus: corpus.jsonl\nlogs: logs.jsonl\n"
                      "mining: {min_count: 3, min_users: 2}\n", encoding="utf-8")
    return config


def test_a_corpus_without_facets_runs_every_stage(tmp_path: Path, prefect_harness: None) -> None:
    config = _inputs(tmp_path / "in", "[]")
    out = tmp_path / "out"
    summary = nightly_flow(config=str(config), out=str(out), quiet=True)
    assert summary["stages_run"] == ["index", "mine", "plan"]
    assert summary["index"]["chunks"] == len(DOCS) and summary["mine"]["shapes"] == len(QUESTIONS)
    assert summary["plan"]["templates"] == len(QUESTIONS) and summary["plan"]["rejected"] == 0
    run = current_run(out)
    columns = set(pq.read_schema(run / CHUNKS.name).names)
    assert "title" not in columns and "office" not in columns  # no facet, no facet column
    assert json.loads((run / LEXICON.name).read_text(encoding="utf-8")) == {}

    cache = PlanCache.open(out)
    assert cache.manifest["lexicon_hash"] == cache.lexicon.digest()
    hit = cache.lookup("how many films did Stanley Kubrick direct")
    assert hit.hit and hit.constraints == [] and hit.route == "one_search" and hit.plan is None
    miss = cache.lookup("How many films did Quentin Tarantino direct?")  # the shape recurs by its wording alone
    assert not miss.hit and miss.route == "online_planner"

    runner = CliRunner()
    found = runner.invoke(app, ["search", "Kubrick horror film", "-k", "2", "--config", str(config), "--out",
                                str(out), "--json"])
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)["hits"]
    assert [h["id"] for h in hits] == ["the-shining", "stanley-kubrick"] and hits[0]["facets"] == {}

    scored = runner.invoke(app, ["eval", "--corpus", str(tmp_path / "in" / "corpus.jsonl"), "--questions",
                                 str(tmp_path / "in" / "labeled.jsonl"), "--config", str(config), "--budget", "2",
                                 "--out", str(tmp_path / "eval"), "--json"])
    assert scored.exit_code == 0, scored.output
    rows = {r["system"]: r for r in json.loads(scored.stdout)["rows"] if r["shape"] == "ALL"}
    assert rows["one-search"]["n"] == rows["rules"]["n"] == 3
    assert rows["rules"]["part_coverage"] >= rows["one-search"]["part_coverage"] > 0.5


def test_titles_that_are_ordinary_words_leave_the_lexicon(tmp_path: Path, prefect_harness: None) -> None:
    """Titles from the index: "Time" (the texts say "at the time") is dropped from the lexicon with a warning
    naming it and the config line; "Water" too, unless listed under `values` (kept). The published lexicon that
    lookup reads drops the same values as the index run, and its digest is the offline lexicon's."""
    config = _inputs(tmp_path / "in", "[{name: title, values: [Water]}]")
    out = tmp_path / "out"
    summary = nightly_flow(config=str(config), out=str(out), quiet=True)
    (warning,) = summary["index"]["warnings"]
    assert warning.startswith(f"{tmp_path / 'in' / 'corpus.jsonl'}:7: title 'Time' is also a word the corpus "
                              "writes in lower case: dropped from the lexicon")
    assert warning.endswith(f"list it under the facet's values ({config}:1)")
    published = json.loads((current_run(out) / LEXICON.name).read_text(encoding="utf-8"))
    assert "Time" not in published["title"] and {"Water", "Stanley Kubrick"} <= set(published["title"])

    cache = PlanCache.open(out)
    offline = check_corpus(tmp_path / "in" / "corpus.jsonl", load_config(config))
    assert offline.dropped == {"title": ["Time"]}
    assert cache.lexicon.digest() == offline.lexicon.digest() == cache.manifest["lexicon_hash"]
    said = cache.lookup("what time did Stanley Kubrick direct water films")
    assert said.constraints == [("title", "Stanley Kubrick"), ("title", "Water")]
    hit = cache.lookup("How many films did Christopher Nolan direct?")  # titles recur as slots of one shape
    assert hit.hit and hit.constraints == [("title", "Christopher Nolan")]
