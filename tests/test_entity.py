"""Entity slots (schemas/entity.py): names become {entity} slots, read the same offline and online."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from planbake.cli import app
from schemas.cache import PlanCache
from schemas.config import Config, Facet, load_config
from schemas.entity import ENTITY, KnownNames, entity_spans, read_names
from schemas.errors import ConfigError
from schemas.extract import Lexicon, cache_key
from schemas.extract_sql import SqlSkeletons
from schemas.files import MANIFEST, NAMES, QUESTIONS, SHAPES
from schemas.publication import current_run
from schemas.text import fold, fold_cased
from tasks.mine.classify import classify
from tasks.plan.rules_writer import write_template
from tests.conftest import write_log

PLAIN = {"how", "many", "movies", "did", "direct", "were", "and", "of", "the", "same", "nationality", "who", "is",
         "which", "artist", "tell", "me", "name", "time", "are", "both", "film", "directors", "bank", "in", "what"}
CONFIG = Config(facets=[Facet(name="year", kind="year")], entity_slots=True)
LEXICON = Lexicon(CONFIG, {}, PLAIN)


@pytest.mark.parametrize(("question", "names"), [
    ("How many movies did Stanley Kubrick direct?", ["Stanley Kubrick"]),
    ("Were Scott Derrickson and Ed Wood of the same nationality?", ["Scott Derrickson", "Ed Wood"]),
    ("Tell me the name of the Prime Time Network's show whose Artist is Christopher Franke ?",
     ["Prime Time Network", "Christopher Franke"]),  # "Artist": one plain word; "'s" ends a name
    ("Which show's producer is Stephen E. Ambrose?", ["Stephen E. Ambrose"]),  # an initial keeps its period
    ("How many times was Deltha Lee O'Neal, III selected?", ["Deltha Lee O'Neal, III"]),  # a suffix ends a name
    ("When did Martin Luther King, Jr. die?", ["Martin Luther King, Jr"]),
    ("Is Berlin, Paris or Rome bigger?", ["Berlin", "Paris", "Rome"]),  # a comma between names parts them
    ("Which came first, World War I, II or the Cold War?", ["World War I", "II", "Cold War"]),  # a list
    ("Was Rocky, II or Rocky, III longer?", ["Rocky", "II", "Rocky", "III"]),
    ("Who was in the missions of Apollo 11 and Gemini 8?", ["Apollo 11", "Gemini 8"]),
    ("Kubrick directed what?", ["Kubrick"]),  # a first word that is no plain word is a name
    ("What is the Bank of America in?", ["Bank of America"]),  # a particle between capitals
    ("how many movies did stanley kubrick direct", []),  # no capital: no name (the SQL fast path's rule)
    ("Time. Name it", []),  # each sentence's first word is capitalised by convention
    ("Tell me about Stanley Kubrick.", ["Stanley Kubrick"]),  # a sentence's full stop ends a name
    ("Movies by Stanley Kubrick. Who else?", ["Stanley Kubrick"]),
    ("What song debuted in the October 27, 1999 episode of South Park?", ["South Park"]),  # a date is no name
    ("Which films opened on Friday 13 or in May?", []),
    ("Who starred in August Rush?", ["August Rush"]),  # a month in a name keeps the name
])
def test_names_are_runs_of_capitalised_words(question: str, names: list[str]) -> None:
    cased = fold_cased(question)
    assert [cased[a:b] for a, b in entity_spans(cased, PLAIN)] == names


def test_a_name_fills_a_slot_and_the_key_but_no_filter() -> None:
    sk = LEXICON.skeleton("How many movies did Stanley Kubrick direct in 1999?")
    assert sk.text == "how many movies did {entity} direct in {year}"
    assert sk.slots == {"entity_1": "Stanley Kubrick", "year_1": "1999"}
    assert cache_key("s", sk) == "s|entity_1=Stanley Kubrick|year_1=1999"
    # another name, the same shape
    assert LEXICON.skeleton("How many movies did Ridley Scott direct in 1999?").text == sk.text
    # a facet value or year written in capitals is that, not a name
    office = Config(facets=[Facet(name="office", values=["New York"])], entity_slots=True)
    assert [(c.facet, c.value) for c in Lexicon(office, {}, PLAIN).extract("Who is in New York for Acme Corp")] == [
        ("office", "New York"), (ENTITY, "Acme Corp")]
    # off by default: the name stays text
    off = CONFIG.model_copy(update={"entity_slots": False})
    assert Lexicon(off).skeleton("Who is Ed Wood").text == "who is ed wood"


WORDS = st.sampled_from(["how", "many", "did", "the", "of", "and", "Stanley", "Kubrick", "Apollo", "11", "Bank",
                         "Straße", "İstanbul", "ǅemal", "ﬁle", "Who", "Are", "2024", "Berlin's", "L'Enfant", "E.",
                         "x", "é", "Ω", "?", ",", "-"])


@given(st.lists(WORDS, min_size=1, max_size=12), st.sampled_from([" ", "  ", ". ", ", ", "\t"]))
def test_each_name_spans_its_own_text_in_the_folded_question(tokens: list[str], sep: str) -> None:
    """Spans index into fold(question), as every constraint's do, whatever case folding does to lengths."""
    question = sep.join(tokens)
    folded = fold(question)
    names = [c for c in LEXICON.extract(question) if c.facet == ENTITY]
    for c in names:
        assert folded[c.start:c.end] == fold(c.value)
    skeleton = LEXICON.skeleton(question)
    assert skeleton.text.split().count("{entity}") == len(names)
    assert LEXICON.skeleton(question.lower()).slots.keys().isdisjoint({"entity_1"})


TITLES = ["Laie, Hawaii", "Bible translations into Tibetan", "Kiss and Tell (1945 film)", "Prime Time",
          "Tell me", "Apollo 11", "Act of War: Direct Action", "What Is Love", "Prime minister",
          "Ice hockey at the Winter Olympics", "The Devil's Rejects", "What About Bob?",
          "Piano Sonata in C major, D 840 (Schubert)", "Drew Fuller", "Thumb Wrestling Federation"]
TITLE_PLAIN = PLAIN | {"translations", "into", "known", "for", "about", "me", "history", "prime", "minister",
                       "located", "tell", "and", "act", "war", "direct", "action", "love", "by", "ice",
                       "hockey", "at", "winter", "piano", "sonata", "c", "major", "d", "drew", "thumb", "wrestling",
                       "federation", "on", "network"}
KNOWN = KnownNames(TITLES, TITLE_PLAIN)


@pytest.mark.parametrize(("question", "names"), [
    ("What is Laie, Hawaii known for?", ["Laie, Hawaii"]),  # without the title: "Laie" and "Hawaii"
    ("Who is Bible translations into Tibetan?", ["Bible translations into Tibetan"]),  # without: "Bible", "Tibetan"
    ("Bible translations into Tibetan history", ["Bible translations into Tibetan"]),  # at a sentence's start too
    ("What is LAIE, HAWAII known for?", ["LAIE, HAWAII"]),  # the question writes the title in other case
    ("Who is Bible Translations Into Tibetan?", ["Bible Translations Into Tibetan"]),
    ("What is Laie, hawaii known for?", ["Laie, hawaii"]),  # from a capitalised word on, the case aside
    ("what is laie, hawaii known for", []),  # no capital: no name, titles or not
    ("what is laie, Hawaii known for", ["Hawaii"]),  # a title is read from its first word only
    ("Where is Laie Hawaii Temple located?", ["Laie Hawaii Temple"]),  # the longer capitalised run wins
    ("Tell me about Laie, Hawaii Temple.", ["Laie, Hawaii Temple"]),  # capitals right after a title go on with it
    ("What is Laie, Hawaii's population?", ["Laie, Hawaii"]),  # a possessive ends it
    ("What is Kiss and Tell known for?", ["Kiss and Tell"]),  # the title's sense in brackets left out
    ("Who is Bible translations into Tibetans?", ["Bible", "Tibetans"]),  # whole words only
    ("Who is Laie, Hawaiian?", ["Laie", "Hawaiian"]),
    ("Tell me about Prime Time.", ["Prime Time"]),
    ("Who is the Prime minister of Laie?", ["Laie"]),  # no title: "Prime" one plain word
    ("Tell me about Apollo 11 Lunar Module", ["Apollo 11 Lunar Module"]),
    ("Who made Act of War: Direct Action?", ["Act of War: Direct Action"]),  # without: "Act of War", "Direct Action"
    ("Act of War: Direct Action history", []),  # a sentence's capital, then common words: read as before
    ("Ice hockey at the Winter Olympics history", ["Ice hockey at the Winter Olympics"]),  # "Olympics": no plain word
    ("What is love about?", []),  # common words: no title from a sentence's first word ("What Is Love")
    ("The Devil's Rejects history", ["The Devil's Rejects"]),  # from a question opener, in the title's own case
    ("The devil's rejects history", []),
    ("What about Bob Dylan?", ["Bob Dylan"]),  # not the film "What About Bob?"
    ("Who directed What About Bob?", ["What About Bob"]),  # the title's punctuation may be left out
    ("What is Piano Sonata in C major, D 840 known for?", ["Piano Sonata in C major, D 840"]),  # plain words, capitals
    # from a sentence's first plain word, a title that is the whole run of capitals: without it "Fuller" alone
    ("Drew Fuller is on what network?", ["Drew Fuller"]),  # "Fuller" is no plain word
    ("Thumb Wrestling Federation is on what network?", ["Thumb Wrestling Federation"]),  # plain words, capitals
    ("Thumb wrestling federation is on what network?", []),  # not as the title writes it
    ("Thumb Wrestling Federation Tour is on what network?", ["Wrestling Federation Tour"]),  # a longer run: as before
])
def test_a_title_of_the_corpus_is_one_name(question: str, names: list[str]) -> None:
    cased = fold_cased(question)
    assert [cased[a:b] for a, b in entity_spans(cased, TITLE_PLAIN, KNOWN)] == names


def test_a_title_of_plain_words_in_sentence_case_is_no_name() -> None:
    """"Tell me" (a song) is plain words in sentence case: a question opening "Tell me about ..." names no song."""
    assert len(KnownNames(["Tell me", "Prime minister", "Water"], TITLE_PLAIN | {"water"})) == 0
    assert len(KnownNames(["Act of War: Direct Action", "Bible translations into Tibetan"], TITLE_PLAIN)) == 2
    assert len(KnownNames(["Demography of the United Kingdom"], TITLE_PLAIN | {"demography", "united", "kingdom"})) == 1
    assert [c.value for c in Lexicon(CONFIG, {}, TITLE_PLAIN, TITLES).extract("Tell me about Stanley Kubrick.")] == [
        "Stanley Kubrick"]


def test_titles_change_the_lexicon_hash_only_with_entity_slots() -> None:
    base = Lexicon(CONFIG, {}, TITLE_PLAIN)
    assert Lexicon(CONFIG, {}, TITLE_PLAIN, []).digest() == base.digest()  # no titles: the hash it had before
    titled = Lexicon(CONFIG, {}, TITLE_PLAIN, TITLES)
    assert titled.digest() != base.digest()  # the extraction memos start again
    assert Lexicon(CONFIG, {}, TITLE_PLAIN, reversed(TITLES)).digest() == titled.digest()
    assert Lexicon(CONFIG, {}, TITLE_PLAIN, TITLES[1:]).digest() != titled.digest()
    off = CONFIG.model_copy(update={"entity_slots": False})
    assert Lexicon(off, {}, TITLE_PLAIN, TITLES).digest() == Lexicon(off, {}, TITLE_PLAIN).digest()


TITLE_WORDS = st.sampled_from([
    "Laie,", "Laie", "LAIE", "laie", "Hawaii", "hawaii", "Hawaii's", "Bible", "bible", "translations", "Translations",
    "into", "Tibetan", "TIBETAN", "Kiss", "and", "Tell", "tell", "(1945 film)", "Apollo", "11", "Temple", "me",
    "Prime", "Time", "time", "What", "is", "known", "for", "Who", "about", "Stanley", "Kubrick", "history", "2024",
    "in", "Straße", "?", ".", ","])


@st.composite
def _titled_question(draw: st.DrawFn) -> str:
    parts = draw(st.lists(TITLE_WORDS | st.sampled_from(TITLES) | st.sampled_from(TITLES).map(str.upper),
                          min_size=1, max_size=10))
    seps = draw(st.lists(st.sampled_from([" ", " ", ", ", ". ", "  "]), min_size=len(parts), max_size=len(parts)))
    return "".join(p + s for p, s in zip(parts, seps, strict=True)).strip()


# mining's lexicon reads the index's plain words and titles; lookup's, the JSON the mining stage published
TITLED_CONFIG = CONFIG.model_copy(update={"facets": [Facet(name="office", values=["Berlin"]),
                                                     Facet(name="year", kind="year")]})
OFFLINE = Lexicon(TITLED_CONFIG, {}, sorted(TITLE_PLAIN), TITLES)
OFFLINE_SCRUB = OFFLINE.scrubber(sorted(TITLE_PLAIN))
ONLINE = Lexicon(TITLED_CONFIG, {}, json.loads(json.dumps(sorted(TITLE_PLAIN))), json.loads(json.dumps(TITLES)))
ONLINE_SCRUB = ONLINE.scrubber(json.loads(json.dumps(sorted(TITLE_PLAIN))))
OFFLINE_SQL = SqlSkeletons(OFFLINE, OFFLINE_SCRUB)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_titled_question(), min_size=1, max_size=15), st.integers(1990, 2090))
def test_mining_and_lookup_read_the_same_skeletons_with_titles(questions: list[str], year: int) -> None:
    """Offline, mining skeletonises a question in SQL where SQL takes it, else in Python with the index's plain
    words and titles; online, lookup reads them back from the publication's JSON. Both give one skeleton, and a
    question without a capital letter holds no name."""
    assert ONLINE.digest() == OFFLINE.digest()
    sql = OFFLINE_SQL
    batch = pa.table({"query": questions, "y": pa.array([year] * len(questions), pa.int32())})  # noqa: F841
    taken = {q: (sk, sql.constraints(m)) for q, sk, m in duckdb.execute(f"""
        SELECT query, {sql.skeleton('m')}, {sql.markers('m')}
        FROM (SELECT query, y, {sql.masked('text')} AS m
              FROM (SELECT query, y, {sql.scrubbed('query')} AS text FROM batch)
              WHERE {sql.eligible('text')})""").fetchall()}
    when = datetime(year, 7, 1)
    for q in questions:
        if q in taken:
            sk, constraints = taken[q]
            mined = (sk, [(c.facet, c.value) for c in constraints])
        else:
            by_python = OFFLINE.skeleton(OFFLINE_SCRUB(q), when)
            mined = (by_python.text, [(c.facet, c.value) for c in by_python.constraints])
        looked_up = ONLINE.skeleton(ONLINE_SCRUB(q), when)
        assert mined == (looked_up.text, [(c.facet, c.value) for c in looked_up.constraints]), q
        if q == q.lower():
            assert "{entity}" not in mined[0], q


def test_two_names_are_a_comparison_searched_one_by_one() -> None:
    skeleton = "are {entity} and {entity} both film directors"
    assert classify(skeleton, "entity,entity", CONFIG, 0.9) == ("comparison", "2 named entities")
    plan = write_template(skeleton, "comparison", CONFIG)
    assert [(s.query, s.filters) for s in plan.steps] == [("{entity_1} film directors", {}),
                                                           ("{entity_2} film directors", {})]
    # one name: one search of the question, the name in its text
    [step] = write_template("how many movies did {entity} direct in {year}", "single", CONFIG).steps
    assert (step.query, step.filters) == ("how many movies did {entity_1} direct in {year_1}", {"year": "{year_1}"})


def test_names_beside_a_facet_named_twice_keep_its_slots_in_text() -> None:
    office = Config(facets=[Facet(name="office", values=["Berlin", "Lisbon"])], entity_slots=True)
    plan = write_template("did {entity} and {entity} work in {office} and {office}", "comparison", office)
    assert [s.query for s in plan.steps] == ["{entity_1} work {office_1} {office_2}",
                                             "{entity_2} work {office_1} {office_2}"]
    # one name: the facet's own split, the name in each step's text
    plan = write_template("compare parental leave at {entity} in {office} and {office}", "comparison", office)
    assert [(s.query, s.filters) for s in plan.steps] == [
        ("parental leave at {entity_1} in {office_1}", {"office": "{office_1}"}),
        ("parental leave at {entity_1} in {office_2}", {"office": "{office_2}"})]
    # without entity slots a facet of that name is a facet like any other
    legal = Config(facets=[Facet(name="entity", values=["Acme GmbH"])])
    [step] = write_template("how many leave days at {entity}", "single", legal).steps
    assert step.filters == {"entity": "{entity_1}"}


def test_a_facet_named_entity_is_refused_beside_entity_slots(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"facets": [{"name": "entity"}], "entity_slots": True}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"c\.yaml:3: facet 'entity'"):
        load_config(path)


DIRECTORS = ["Christopher Nolan", "Sathish Kalathil", "Ang Lee", "Greta Gerwig", "Ridley Scott", "Sofia Coppola"]


def test_mining_and_lookup_read_the_same_names(tmp_path: Path, prefect_harness: None) -> None:
    """A frame asked with other names by three users recurs as one shape; the lookup of a name no log holds hits
    it, keyed by the names, and the offline key of every logged question is the online one."""
    corpus = tmp_path / "corpus.jsonl"
    rows = [{"id": f"d{n}", "metadata": {"title": name},
             "text": f"{name} is a film director and screenwriter, known for films made in the studio system of "
                     f"the time; the director's work was shown at festivals."} for n, name in enumerate(DIRECTORS)]
    rows.append({"id": "t", "metadata": {"title": TITLES[1]},  # a title in two runs of capitals: one name
                 "text": f"{TITLES[1]} were made by a film director for the studio system of the time."})
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    config = tmp_path / "entities.yaml"
    config.write_text(yaml.safe_dump({"facets": [{"name": "year", "kind": "year"}], "entity_slots": True,
                                      "mining": {"min_count": 3, "min_users": 3}}), encoding="utf-8")
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)
    pairs = [(DIRECTORS[0], DIRECTORS[1]), (DIRECTORS[2], DIRECTORS[3]), (DIRECTORS[1], DIRECTORS[2])]
    asked = [f"Are {a} and {b} both film directors?" for a, b in pairs]
    logs = write_log(tmp_path / "logs", asked, start)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["nightly", "--config", str(config), "--corpus", str(corpus), "--logs",
                                   str(logs), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    cache = PlanCache.open(out)
    res_new = cache.lookup("Are Ridley Scott and Sofia Coppola both film directors?")
    assert res_new.hit and res_new.shape_type == "comparison", res_new
    assert res_new.key == f"{res_new.shape_id}|entity_1=Ridley Scott|entity_2=Sofia Coppola"
    template = json.loads(cache.templates[res_new.shape_id]["template"])
    assert [s["query"] for s in template["steps"]] == ["{entity_1} film directors", "{entity_2} film directors"]
    if res_new.plan is not None:  # routed to the split: the names fill its steps
        assert [s["query"] for s in res_new.plan["steps"]][:2] == ["Ridley Scott film directors",
                                                                  "Sofia Coppola film directors"]
    mined = pq.read_table(current_run(out) / QUESTIONS.name).to_pylist()
    assert len(mined) == len(asked)
    for row, question in zip(sorted(mined, key=lambda r: r["ts"]), asked, strict=True):
        online, sk = cache.lookup(question), cache.lexicon.skeleton(cache.scrub(question))
        assert (online.shape_id, json.loads(row["slots"])) == (row["shape_id"], sk.slots)
        assert online.key == cache_key(row["shape_id"], sk) and len(sk.slots) == 2
    # the slots' types, from what the names' pages say they are: every filler is "a film director"
    slot_types = {s["shape_id"]: s["slot_types"] for s in pq.read_table(current_run(out) / SHAPES.name).to_pylist()}
    assert json.loads(slot_types[res_new.shape_id]) == {"entity_1": "person", "entity_2": "person"}
    # the corpus's titles, published by the mining stage, read by lookup: a title is one name
    run = current_run(out)
    assert read_names(run) == sorted([*DIRECTORS, TITLES[1]])
    titled = cache.lookup(f"Are {TITLES[1]} and Ang Lee both film directors?")
    assert titled.shape_id == res_new.shape_id
    assert titled.key == f"{titled.shape_id}|entity_1={TITLES[1]}|entity_2=Ang Lee"
    # a publication made before names.json was kept (its manifest lists no files) still opens, without titles
    (run / NAMES.name).unlink()
    manifest = json.loads((run / MANIFEST.name).read_text(encoding="utf-8"))
    del manifest["files"]
    (run / MANIFEST.name).write_text(json.dumps(manifest), encoding="utf-8")
    untitled = PlanCache.open(out)
    assert untitled.lexicon.names == frozenset()
    assert [c.value for c in untitled.lexicon.extract(f"Who is {TITLES[1]}?")] == ["Bible", "Tibetan"]
