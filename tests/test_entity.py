"""Entity slots (schemas/entity.py): names become {entity} slots, read the same offline and online."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from planbake.cli import app
from schemas.cache import PlanCache
from schemas.config import Config, Facet, load_config
from schemas.entity import ENTITY, entity_spans
from schemas.errors import ConfigError
from schemas.extract import Lexicon, cache_key
from schemas.files import QUESTIONS
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
    ("Who was in the missions of Apollo 11 and Gemini 8?", ["Apollo 11", "Gemini 8"]),
    ("Kubrick directed what?", ["Kubrick"]),  # a first word that is no plain word is a name
    ("What is the Bank of America in?", ["Bank of America"]),  # a particle between capitals
    ("how many movies did stanley kubrick direct", []),  # no capital: no name (the SQL fast path's rule)
    ("Time. Name it", []),  # each sentence's first word is capitalised by convention
    ("Tell me about Stanley Kubrick.", ["Stanley Kubrick"]),  # a sentence's full stop ends a name
    ("Movies by Stanley Kubrick. Who else?", ["Stanley Kubrick"]),
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
    rows = [{"id": f"d{n}", "metadata": {},
             "text": f"{name} is a film director and screenwriter, known for films made in the studio system of "
                     f"the time; the director's work was shown at festivals."} for n, name in enumerate(DIRECTORS)]
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
