"""`planbake init`: a starting config from a sample of the corpus's metadata and the logs, every line with its
reason, what it cannot decide said; and a nightly run with the config it wrote, on each shared benchmark corpus
and on the demo."""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planbake.cli import app
from schemas.config import Config, load_config, read_yaml
from tasks.index.corpus import Document
from tasks.starter import _facet_lines, judge_keys
from tests.conftest import ROOT, SHARED

DEMO = ROOT / "data" / "demo"


def _docs(metadata: list[dict[str, Any]], text: str = "Staff share the hub.") -> list[Document]:
    return [Document(f"d{n}", text, m, f"c.jsonl:{n + 1}") for n, m in enumerate(metadata)]


def test_each_metadata_key_gets_a_verdict_with_its_reason() -> None:
    """Few values over many documents: a category facet; years: a year facet; ISO dates: a date facet. A key of
    about one value per document, of ordinary words, of numbers, of true or false, or a version marker is no
    facet; dates written otherwise, and a key with too few documents per value, are said, not guessed."""
    offices = ["Berlin", "Lisbon", "Warsaw"]
    docs = _docs([{"office": offices[n % 3], "year": 2025 + n % 2, "published": f"2026-01-{n + 1:02d}",
                   "title": f"Policy {n}", "topic": ["leave", "travel"][n % 2], "pages": n, "draft": n % 2 == 0,
                   "policy": "p", "updated": f"{n + 1:02d}/01/2026", "team": ["A", "B", "C", "D", "E"][n % 5]}
                  for n in range(12)], "Our leave and travel rules.")
    verdicts = {v.key: v for v in judge_keys(docs)}
    assert {k: v.kind for k, v in verdicts.items()} == {
        "office": "category", "year": "year", "published": "date", "title": None, "topic": None, "pages": None,
        "draft": None, "policy": None, "updated": None, "team": None}
    assert verdicts["office"].why == ("3 values over 12 of 12 documents (Berlin, Lisbon, Warsaw); its values come "
                                      "from the index")
    assert verdicts["year"].why == "12 of 12 documents give a year (2025 to 2026)"
    assert "about one per document" in verdicts["title"].why and not verdicts["title"].note
    assert "2 of its 2 values are words the texts write in lower case (leave, travel): " in verdicts["topic"].why
    assert verdicts["topic"].note and verdicts["pages"].note and verdicts["team"].note
    assert verdicts["updated"].note.startswith("updated: 12 of 12 values are dates, but not all written YYYY-MM-DD "
                                               "(01/01/2026, 02/01/2026, 03/01/2026)")
    assert not verdicts["policy"].note and not verdicts["draft"].note


def test_values_the_texts_write_as_names_are_listed_and_a_facet() -> None:
    """Plan tiers named by common words: the texts say "business days" and "a free trial", but more often "the
    Business plan"; the facet is made, its values listed so the lexicon keeps them. Topic words a text writes as
    a name only to open a sentence stay words."""
    tiers = ["Free", "Team", "Business", "Enterprise"]
    text = ("Workspaces on the {} plan get this. Replies come within two business days; a free trial lasts 14 days; "
            "the Business plan and the Free plan are compared in the Team guide for your team. Leave is granted. "
            "Travel is booked. We leave early and travel light.")
    docs = [Document(f"d{n}", text.format(tiers[n % 4]), {"tier": tiers[n % 4], "topic": ["Leave", "Travel"][n % 2]},
                     f"c.jsonl:{n + 1}") for n in range(12)]
    verdicts = {v.key: v for v in judge_keys(docs)}
    assert verdicts["tier"].kind == "category" and verdicts["tier"].keep == ["Business", "Free", "Team"]
    assert "listed, so the lexicon keeps them: 'Business', 'Free', 'Team'" in verdicts["tier"].why
    # "the Business plan", "the Team guide": "plan" is beside every tier, "guide" beside one; the topic has none
    assert verdicts["tier"].nouns == ["plan"] and not verdicts["topic"].nouns
    assert verdicts["topic"].kind is None and not verdicts["topic"].keep
    lines = _facet_lines(list(verdicts.values()))
    assert '    values: ["Business", "Free", "Team"]' in lines and '    nouns: ["plan"]' in lines
    loaded = Config.model_validate(read_yaml("\n".join(lines) + "\n"))
    assert (loaded.facets[0].values, loaded.facets[0].nouns) == (["Business", "Free", "Team"], ["plan"])


def test_one_value_spelled_two_ways_is_said_not_guessed() -> None:
    verdicts = judge_keys(_docs([{"office": v} for v in ["Berlin", "berlin", "Lisbon"] * 4]))
    assert verdicts[0].kind is None and "'Berlin' and 'berlin' are one value spelled two ways" in verdicts[0].note


def test_init_writes_a_loadable_config_and_refuses_to_overwrite_it(tmp_path: Path) -> None:
    out = tmp_path / "conf" / "planbake.yaml"
    out.parent.mkdir()
    args = ["init", "--corpus", str(DEMO / "corpus.jsonl"), "--logs", str(DEMO / "logs"), "--out", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert " ".join(res.stdout.split()) == (f"wrote {out}: facets office (category), year (year); not facets: "
                                            "policy, topic, title; mining window 7 days")
    config = load_config(out)
    assert [(f.name, f.kind, f.values) for f in config.facets] == [("office", "category", []), ("year", "year", [])]
    assert config.corpus == str(DEMO / "corpus.jsonl") and config.logs == str(DEMO / "logs")
    assert config.mining.window_days == 7
    assert "# office: 6 values over 73 of 184 documents" in out.read_text(encoding="utf-8")
    written = out.read_text(encoding="utf-8")
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and f"{out}: exists; pass --force to overwrite it" in res.output
    assert out.read_text(encoding="utf-8") == written
    assert CliRunner().invoke(app, [*args, "--force", "--sample", "20"]).exit_code == 0
    assert "from the first 20 documents of" in out.read_text(encoding="utf-8")


def test_init_says_what_it_cannot_read_of_the_logs(tmp_path: Path) -> None:
    """Ingest reads ts, user and query: a log naming its columns otherwise is named with the likely renames, and
    the config leaves `logs:` commented out; one or two users lower min_users, and say so."""
    csv = tmp_path / "log.csv"
    csv.write_text("timestamp,user_id,question\n2026-11-20T10:00:00Z,u1,vacation days in Berlin\n", encoding="utf-8")
    out = tmp_path / "c.yaml"
    res = CliRunner().invoke(app, ["init", "--corpus", str(DEMO / "corpus.jsonl"), "--logs", str(csv), "--out",
                                   str(out), "--json"])
    assert res.exit_code == 0, res.output
    (note,) = [n for n in json.loads(res.stdout)["notes"] if n.startswith(str(csv))]
    assert "(missing: ts, user, query); `timestamp` may be `ts`; `user_id` may be `user`; `question` may be " \
           "`query`" in note
    assert load_config(out).logs == "" and '# logs: "log.csv"' in out.read_text(encoding="utf-8")
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"ts": f"2026-11-{d}T10:00:00Z", "user": f"u{d % 2}", "query": "hi there"})
                           + "\n" for d in (20, 21, 23)), encoding="utf-8")
    res = CliRunner().invoke(app, ["init", "--corpus", str(DEMO / "corpus.jsonl"), "--logs", str(log), "--out",
                                   str(out), "--force"])
    assert res.exit_code == 0, res.output
    config = load_config(out)
    assert (config.mining.window_days, config.mining.min_users) == (4, 2)
    assert "2 users only; min_users set to 2" in res.output


# The shared corpora: the corpus file, the documents indexed (its first ones, to keep the run short), and the
# facets init finds in them. lcquad_test_1000 has no corpus: its questions are the documents (with their template
# id as metadata), which init reads as a corpus without facets. No shared set has logs: the test logs its first
# questions, each asked by five users over the three days before today.
LOGGED_QUESTIONS, ASKED_BY = 16, 5
CORPORA: dict[str, tuple[str | None, int, list[str]]] = {
    "seed_handbook": ("corpus.jsonl", 17, ["office", "year"]),
    "multihop_rag_500": ("corpus.jsonl", 438, ["source", "published_date"]),
    "hotpotqa_100": ("corpus.jsonl", 150, []),
    "lcquad_test_1000": (None, 200, []),
}
DEMO_ROWS = 2_000  # of the demo's last logged day, 2026-11-29


def _shared_inputs(name: str, folder: Path) -> tuple[Path, Path, list[str]]:
    source = SHARED / name
    if not source.is_dir():
        pytest.skip(f"{source} not available (set PLANBAKE_BENCHMARKS to the shared benchmarks folder)")
    questions = [json.loads(line) for line in (source / "questions.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    corpus_file, documents, _ = CORPORA[name]
    if corpus_file is None:
        records = [{"id": q["id"], "text": q["question"], "metadata": {"template_id": q["template_id"]}}
                   for q in questions]
    else:
        records = [json.loads(line) for line in (source / corpus_file).read_text(encoding="utf-8").splitlines()
                   if line.strip()]
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records[:documents]), encoding="utf-8")
    asked = [q["question"] for q in questions[:LOGGED_QUESTIONS]]
    logs = folder / "logs" / "log.jsonl"
    logs.parent.mkdir()
    start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=3)
    rows = [{"ts": (start + timedelta(days=k % 3, minutes=7 * n + k)).strftime("%Y-%m-%dT%H:%M:%SZ"),
             "user": f"u{(n + k) % 12}", "query": q} for n, q in enumerate(asked) for k in range(ASKED_BY)]
    logs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return corpus, logs.parent, asked


@pytest.mark.parametrize("name", ["demo", *CORPORA])
def test_init_then_nightly_publishes(name: str, tmp_path: Path, prefect_harness: None) -> None:
    """`planbake init` on the corpus and its logs, then `planbake nightly` with the config it wrote: the run
    publishes, its report names the mined share of the log, and a logged question is a hit. The demo's logs are
    the first rows of its last logged day, to keep the run short (init on its whole week: the test above)."""
    out, config = tmp_path / "out", tmp_path / "planbake.yaml"
    if name == "demo":
        corpus, logs, facets = DEMO / "corpus.jsonl", tmp_path / "logs", ["office", "year"]
        day = gzip.decompress((DEMO / "logs" / "date=2026-11-29" / "part-000.jsonl.gz").read_bytes())
        (logs / "date=2026-11-29").mkdir(parents=True)
        (logs / "date=2026-11-29" / "part-000.jsonl").write_bytes(b"".join(day.splitlines(True)[:DEMO_ROWS]))
        rows = [json.loads(line) for line in day.splitlines()[:DEMO_ROWS]]
        asked = [Counter(r["query"] for r in rows).most_common(1)[0][0]]
    else:
        corpus, logs, asked = _shared_inputs(name, tmp_path)
        facets = CORPORA[name][2]
    res = CliRunner().invoke(app, ["init", "--corpus", str(corpus), "--logs", str(logs), "--out", str(config),
                                   "--json"])
    assert res.exit_code == 0, res.output
    written = json.loads(res.stdout)
    assert [f["name"] for f in written["facets"]] == facets
    # titled documents and no facet (HotpotQA's pages): names become slots, titles embedded; routes by class for all
    entities = name == "hotpotqa_100"
    assert written["entity_slots"] is entities
    loaded = load_config(config)
    assert (loaded.entity_slots, loaded.chunking.embed_fields == ["title"], loaded.planning.class_routes) == (
        entities, entities, True)
    res = CliRunner().invoke(app, ["nightly", "--config", str(config), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    manifest = json.loads(res.stdout)
    mined = manifest["mine"]
    assert mined["rows"] > 0 and mined["recurring"] > 0
    report = (Path(manifest["publication"]) / "report" / "report.md").read_text(encoding="utf-8")
    read = mined["rows"] + mined["quarantined"]
    assert (f"Mined share of the log: {mined['rows'] / read:.1%} of the rows read in the window "
            f"({mined['rows']:,} of {read:,}; the rest quarantined).") in report
    res = CliRunner().invoke(app, ["lookup", asked[0], "--out", str(out), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["hit"], res.output
    shutil.rmtree(out)


@pytest.mark.parametrize(("titles", "facet", "entities"), [
    (["Metallica", "Leland, North Carolina", "Ang Lee", "Kiss and Tell"], False, True),  # pages about things
    (["Metallica", "Ang Lee", None, None], False, False),  # half of them titled: not more than half
    (["Travel policy", "Parental Leave Policy", "Expense rules", "Travel Policy"], False, False),  # ordinary words
    (["Metallica", "Leland, North Carolina", "Ang Lee", "Kiss and Tell"], True, False),  # a facet: its values split
])
def test_init_turns_entity_slots_on_for_pages_titled_by_names(titles: list[str | None], facet: bool, entities: bool,
                                                            tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    rows = [{"id": f"d{n}", "text": f"The travel policy and the expense rules apply to every office, item {n}.",
             "metadata": {**({"title": f"{t} ({n})"} if t else {}),  # one title a page, as pages have
                          **({"region": ["north", "south"][n % 2]} if facet else {})}}
            for n, t in enumerate(titles * 3)]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "planbake.yaml"
    res = CliRunner().invoke(app, ["init", "--corpus", str(corpus), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["entity_slots"] is entities
    config = load_config(out)
    assert (config.entity_slots, config.chunking.embed_fields == ["title"], config.planning.class_routes) == (
        entities, entities, True)
    assert bool(config.facets) is facet


@pytest.mark.parametrize(("lengths", "size"), [
    ([700, 900, 1100, 300, 400], 1200),  # passages, most longer than a default chunk: each kept whole
    ([300, 400, 500, 550, 700], 600),  # one document in five longer than a chunk: the default
    ([700, 900, 5000, 6000, 300], 600),  # long documents: cut at the default
])
def test_init_keeps_passages_whole(lengths: list[int], size: int, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    words = "The travel policy applies to every office and every trip abroad. "
    rows = [{"id": f"d{n}", "text": (words * (length // len(words) + 1))[:length].strip(), "metadata": {}}
            for n, length in enumerate(lengths * 2)]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "planbake.yaml"
    res = CliRunner().invoke(app, ["init", "--corpus", str(corpus), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert load_config(out).chunking.size == size


@pytest.mark.parametrize(("length", "titled", "embedded"), [
    (3000, True, True),  # titled documents cut in pieces: a later piece keeps its subject by the title
    (3000, False, False),  # no title to embed
    (400, True, False),  # one chunk a document: its text says its subject
])
def test_init_embeds_the_title_of_documents_cut_in_pieces(length: int, titled: bool, embedded: bool,
                                                          tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    words = "Claims are filed in the portal within thirty days of the trip. "
    rows = [{"id": f"d{n}", "text": (words * (length // len(words) + 1))[:length].strip(),
             "metadata": {"office": ["Berlin", "Lisbon"][n % 2], **({"title": f"Travel rules {n}"} if titled else {})}}
            for n in range(8)]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "planbake.yaml"
    res = CliRunner().invoke(app, ["init", "--corpus", str(corpus), "--out", str(out)])
    assert res.exit_code == 0, res.output
    config = load_config(out)
    assert [f.name for f in config.facets] == ["office"] and not config.entity_slots
    assert (config.chunking.embed_fields == ["title"]) is embedded
