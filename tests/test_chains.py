"""Title chains (tasks/plan/chains.py): a question that describes a thing through one it names reaches the
described thing's page through the title the named one's page writes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.bench_single_fact import FRAMES
from schemas.answers import ExtractRefused, extract_titles
from schemas.config import Config, Facet
from schemas.entity import KnownNames
from schemas.extract import Lexicon
from schemas.plan import fill_slots, plan_json_schema
from tasks.executor import named_pages, pages_first, retrieve, run_plan
from tasks.index.stage import build_index
from tasks.index.store import Hit, Index, _title
from tasks.plan.chains import describes_through, title_chain
from tasks.plan.check import check_template
from tasks.plan.routing import decide_route
from tasks.plan.rules_writer import slotted, write_template

CONFIG = Config(facets=[Facet(name="year", kind="year")], entity_slots=True)
TITLES = ["Leland, North Carolina", "Maximum Overdrive", "Stephen King", "Brunswick County, North Carolina",
          "Kiss and Tell (1945 film)", "Shirley Temple"]
PLAIN = {"is", "a", "town", "in", "the", "was", "film", "and", "of", "directed", "by", "written", "shot", "who"}
KNOWN = KnownNames(TITLES, PLAIN)


@dataclass
class Chunk:
    text: str
    facets: dict[str, Any] = field(default_factory=dict)


@pytest.mark.parametrize(("text", "mentioned"), [
    ("Leland is a town in Brunswick County, North Carolina. Maximum Overdrive was shot there.",
     ["Brunswick County, North Carolina", "Maximum Overdrive"]),
    ("Maximum Overdrive is a film written and directed by Stephen King; Stephen King also wrote it.",
     ["Maximum Overdrive", "Stephen King"]),  # once each, in order of first mention
    ("Kiss and Tell is a 1945 film starring Shirley Temple.", ["Kiss and Tell", "Shirley Temple"]),  # sense left out
    ("a maximum overdrive of the engine", []),  # in the title's own case only
    ("Stephen Kingsley wrote it.", []),  # whole words only
])
def test_a_page_mentions_the_titles_it_writes(text: str, mentioned: list[str]) -> None:
    assert KNOWN.mentions(text) == mentioned


TOPICS = KnownNames(["Neighbours", "Kate Ramsay", "Prime minister", "Water"],
                    {"neighbours", "prime", "minister", "is", "a", "water"})


@pytest.mark.parametrize(("text", "mentioned"), [
    ("Kate Ramsay is a character from the soap opera Neighbours, played by Ashleigh Brewer.",
     ["Kate Ramsay", "Neighbours"]),  # a topic's title written mid-sentence in its own capitals
    ("Neighbours is a soap opera.", []),  # a sentence's first word: its capital is the sentence's
    ("She met the neighbours. Neighbours came too.", []),
    ("He became Prime minister in 1990.", ["Prime minister"]),
    ("He became Prime Minister in 1990.", []),  # not as the title writes it
    ("The company Thames Water supplies water.", []),  # inside a name of capitals
    ("Kate Ramsay\nNeighbours is a soap opera.", ["Kate Ramsay"]),  # a line's first word
])
def test_a_topic_title_is_read_mid_sentence_only(text: str, mentioned: list[str]) -> None:
    assert TOPICS.mentions(text) == mentioned
    # still left out of what a question's names are read against
    assert TOPICS.match("Neighbours creator", 0, "Neighbours") == 0
    assert TOPICS.match("Neighbours creator", 0, "Neighbours", topics=True) == len("Neighbours")


@given(st.lists(st.sampled_from([*TITLES, "the town", "a film", "Leland", "was shot in", "King", ",", "."]),
                max_size=12))
def test_every_mention_is_a_title_the_text_writes(pieces: list[str]) -> None:
    text = " ".join(pieces)
    found = KNOWN.mentions(text)
    assert len(found) == len(set(found))
    positions = [text.find(m) for m in found]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)
    titles = {*TITLES, *(t.split(" (")[0] for t in TITLES)}  # as written, or without its sense
    assert set(found) <= titles


def test_the_title_the_query_does_not_name_is_the_answer() -> None:
    leland = Chunk("Leland is a town in Brunswick County, North Carolina. The film Maximum Overdrive was shot "
                   "in Leland in 1986.")
    query = "who directed the film that was shot in Leland, North Carolina in 1986"
    # "Brunswick County, North Carolina" shares words with the query: the query's own
    assert extract_titles([leland], 1, query, KNOWN) == ["Maximum Overdrive"]
    with pytest.raises(ExtractRefused, match="found 0 titles"):
        extract_titles([Chunk("Leland is a small town.")], 1, query, KNOWN)
    both = Chunk("Maximum Overdrive was shot in Leland; Stephen King directed it.")
    assert extract_titles([both], 1, query, KNOWN) == ["Maximum Overdrive", "Stephen King"]  # both searched
    three = Chunk("Maximum Overdrive was shot in Leland; Stephen King directed it with Shirley Temple.")
    with pytest.raises(ExtractRefused, match="found 3 titles"):  # more candidates than s2 searches: no guess
        extract_titles([three], 1, query, KNOWN)
    assert extract_titles([leland, both], 1, query, KNOWN) == ["Maximum Overdrive"]  # the top chunk only
    # more titles than s2 searches: those of the sentence sharing the most query words; a tie keeps both sentences
    many = Chunk("Shirley Temple starred in Kiss and Tell. Maximum Overdrive was shot in Leland in 1986.")
    assert extract_titles([many], 1, query, KNOWN) == ["Maximum Overdrive"]
    accented = Chunk("Argentine player Sergio Agüero was given the Golden Shoe.")
    assert extract_titles([accented], 1, "who was given the golden shoe", KnownNames(["Sergio Agüero"], PLAIN)) == [
        "Sergio Aguero"]  # read as titles and questions are: accents stripped
    initials = KnownNames([*TITLES, "Stephen E. Ambrose"], PLAIN)
    by = Chunk("Shirley Temple starred in Kiss and Tell. The miniseries was based on the book by Stephen E. Ambrose.")
    assert extract_titles([by], 1, "who wrote the book the miniseries was based on", initials) == [
        "Stephen E. Ambrose"]  # an initial's period ends no sentence
    tied = Chunk("Shirley Temple starred in Kiss and Tell, shot in 1986. Maximum Overdrive was shot in 1986.")
    with pytest.raises(ExtractRefused, match="found 3 titles"):
        extract_titles([tied], 1, query, KNOWN)


@pytest.mark.parametrize(("skeleton", "chains"), [
    ("who directed the film that was shot in or around {entity} in {year}", True),
    ("{entity} s first novel was published by a house that was founded in {year} and is based where", True),
    ("the runner up in the {year} {entity} appears on the cover of a game developed by what company", True),
    ("in what film did {entity} play", False),  # its own question: "what" opens it
    ("who directed the film shot in {year}", False),  # no word that describes
    ("are {entity} and {entity} both film directors", False),  # two names: each searched (an entity plan)
    ("{entity} provided the voice of {entity} on the sitcom that premiered on which date", True),  # names, described
    ("who is the spouse of the director of {entity}", True),  # a name behind two links of "of"
    ("what is the name of the band founded by one of the stars of {entity}", True),
    ("where was the place of death of the director of film {entity}", True),  # what the name is, before it
    ("what is the date of birth of {entity}", False),  # one fact of the named thing: "when was it born"
    ("what is the place of birth of {entity}", False),
    ("what is the name of the father of {entity}", False),
    ("what is the name of the author of {entity}", False),
    ("what year the tournament of {entity} was held", False),  # a copula after the link asks born, from, -ed
    ("who is the mother of the performer of song {entity}", True),
    ("what is the date of birth of the director of film {entity}", True),
    ("which country the director of film {entity} is from", True),  # the verb after the link
    ("who is the paternal grandfather of {entity}", True),  # a relation of two links in one word
    ("who is the father in law of {entity}", True),
    ("who is {entity} s maternal grandmother", True),
    ("who is the father of {entity}", False),  # one link: the named person's page answers
    ("who are the grandchildren of {entity}", True),
    ("who are the brothers in law of {entity}", True),
    ("who is the grandfather", False),  # no name
    ("what is the origin of {entity}", False),  # one link: the named thing's own page answers
    ("what is the name of the {entity} album", False),
    ("what is the population of {entity} in {year}", False),
    ("who was the first president of {entity}", False),
    ("when was the director of film {entity} born", True),  # one link, asked about by the verb
    ("what position did the receiver of the {entity} play", True),
    ("when did the composer of {entity} die", True),
    ("what nationality is the director of {entity}", True),
    ("which country is the author of {entity} from", True),
    ("when was the city of {entity} founded", False),  # the link restates the named thing, or is a part of it
    ("how many people does the city of {entity} have", False),
    ("what does the name of {entity} mean", False),
    ("when did the first episode of {entity} air", False),
    ("when was the construction of {entity} completed", False),
    ("what year was the battle of {entity}", False),
    ("which city is the capital of {entity}", False),
    ("who is the spouse of the director of the film", False),  # no name behind the links
])
def test_a_question_describing_a_thing_through_a_name_chains(skeleton: str, chains: bool) -> None:
    plan = write_template(skeleton, "single", CONFIG)
    assert (plan.steps[0].extract is not None and plan.steps[0].extract.kind == "title") is chains
    if chains:
        assert plan.steps[0].query == slotted(skeleton, CONFIG.slot_facets)
        assert plan.steps[1].query.startswith("{s1} ") and plan.steps[1].depends_on == ["s1"]
        status = check_template(plan, {"shape_id": "x", "skeleton": skeleton, "type": "single"}, CONFIG,
                                Lexicon(CONFIG, {}), [])
        assert status["valid"] and status["check_ok"], status
    no_names = CONFIG.model_copy(update={"entity_slots": False})
    assert len(write_template(skeleton.replace("{entity}", "Leland"), "single", no_names).steps) == 1 or not chains


@pytest.mark.parametrize("frame", FRAMES)
def test_a_single_fact_question_stays_one_search(frame: str) -> None:
    skeleton = frame.format(e="{entity}").casefold().rstrip("?.")
    assert not describes_through(skeleton, CONFIG.planning.chain_words)
    assert len(write_template(skeleton, "single", CONFIG).steps) == 1


def test_the_plan_schema_takes_a_title_step() -> None:
    schema = plan_json_schema(("year",))
    assert "title" in schema["properties"]["steps"]["items"]["properties"]["extract"]["anyOf"][0]["properties"][
        "kind"]["enum"]
    assert title_chain("who directed the film that was shot in {entity_1}").steps[0].extract is not None


PAGES = [
    ("leland", "Leland, North Carolina", "Leland is a town in Brunswick County, North Carolina, United States. "
     "The horror comedy Maximum Overdrive was filmed in and around Leland in 1986."),
    ("overdrive", "Maximum Overdrive", "Maximum Overdrive is a 1986 American science fiction horror comedy "
     "written and directed by Stephen King, starring Emilio Estevez."),
    ("brunswick", "Brunswick County, North Carolina", "Brunswick County is a county on the southern coast of "
     "the state. Its county seat is Bolivia."),
    ("king", "Stephen King", "Stephen King is an American author of horror, supernatural fiction and fantasy "
     "novels, born in Portland, Maine."),
    ("wilmington", "Wilmington, North Carolina", "Wilmington is a port city near Leland in southeastern North "
     "Carolina; many films and television series are shot in its studios."),
    ("carolina", "North Carolina", "North Carolina is a state in the southeastern region of the United States."),
]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[Config, Index, Lexicon]:
    root = tmp_path_factory.mktemp("pages")
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "text": t, "metadata": {"title": title}}) + "\n"
                              for i, title, t in PAGES), encoding="utf-8")
    config = CONFIG.model_copy(deep=True)
    config.chunking.embed_fields = ["title"]
    outcome = build_index(corpus, config, root / "out", date(2026, 11, 30), quiet=True)
    index = Index(outcome.uri, config, outcome.result.version)
    return config, index, Lexicon(config, index.facet_values(), index.plain_words(), index.names())


def test_the_chain_reaches_the_page_of_the_thing_described(pages: tuple[Config, Index, Lexicon]) -> None:
    config, index, lexicon = pages
    question = "Who directed the film that was shot in Leland, North Carolina in 1986?"
    sk = lexicon.skeleton(question)
    assert sk.slots == {"entity_1": "Leland, North Carolina", "year_1": "1986"}
    template = write_template(sk.text, "single", config)
    steps = run_plan(fill_slots(template, sk.slots), index, lexicon, 2)
    assert steps[0].hits[0].id.startswith("leland") and steps[0].answer == "Maximum Overdrive"
    assert steps[1].query.startswith("Maximum Overdrive ") and steps[1].hits[0].id.startswith("overdrive")
    run = retrieve(question, fill_slots(template, sk.slots), index, lexicon, 2, 2, False)
    assert {c.split("#")[0] for c in run.context} >= {"leland", "overdrive"}


def test_a_refused_title_leaves_a_keyword_query_of_the_question(pages: tuple[Config, Index, Lexicon]) -> None:
    config, index, lexicon = pages
    question = "Who lives in the county that borders Wilmington, North Carolina?"
    sk = lexicon.skeleton(question)
    steps = run_plan(fill_slots(write_template(sk.text, "single", config), sk.slots), index, lexicon, 2)
    assert steps[0].answer is None and steps[0].error is not None and "titles" in steps[0].error
    assert steps[1].error is None and steps[1].query == "lives county borders"
    assert steps[1].hits  # it still searched


def test_the_route_measure_counts_the_chain_s_parts_though_the_question_names_a_year(
        pages: tuple[Config, Index, Lexicon]) -> None:
    """The question names 1986, which no step filters on: the chain's parts are its steps' own evidence, and the
    film's page, which one search of two chunks misses, makes the split the better route."""
    config, index, lexicon = pages
    sk = lexicon.skeleton("Who directed the film that was shot in Leland, North Carolina in 1986?")
    assert ("year", "1986") in {(c.facet, c.value) for c in sk.constraints}
    template = write_template(sk.text, "single", config)
    ev = decide_route(template, [sk], index, lexicon, budget=2, k=2)
    assert ev.route == "split", ev
    assert ev.coverage["split"] > ev.coverage["one_search"]


NAMED = Lexicon(CONFIG, plain=PLAIN, names=TITLES)
RANKED = [("leland", "Leland, North Carolina"), ("overdrive#0", "Maximum Overdrive"), ("king", "Stephen King"),
          ("kiss", "Kiss and Tell (1945 film)"), ("overdrive#1", "Maximum Overdrive"), ("none", None)]


@pytest.mark.parametrize(("query", "kept"), [
    ("Maximum Overdrive directed film", ["overdrive#0", "overdrive#1"]),  # its page's chunks, in rank order
    ("Kiss and Tell starring", ["kiss"]),  # a title read without its sense in brackets
    ("Stephen King Maximum Overdrive", ["overdrive#0", "king", "overdrive#1"]),  # two titles: both pages
    ("Shirley Temple films", ["leland"]),  # a title without its page among the hits: the best chunk
    ("Emilio Estevez films", ["leland"]),  # a name the corpus has no title for: the best chunk
    ("Maximum overdrive directed", ["overdrive#0", "overdrive#1"]),  # a title read case aside, as a slot is
    ("lives county borders", ["leland"]),  # it names nothing (a refused title's keyword query): the best chunk
])
def test_a_step_brings_the_page_of_what_it_names(query: str, kept: list[str]) -> None:
    hits = [Hit(cid, 0.5, "", {}, None, None, None, True, title=title) for cid, title in RANKED]
    assert [h.id for h in named_pages(hits, query, {}, NAMED)] == kept
    assert named_pages(hits, query, {"year": "1986"}, NAMED) == named_pages(hits, query, {}, NAMED)
    assert named_pages(hits, query, {}, Lexicon(CONFIG)) == hits  # a corpus without titles: every chunk
    office = CONFIG.model_copy(update={"facets": [*CONFIG.facets, Facet(name="office")]})
    assert named_pages(hits, query, {"office": "Berlin"}, Lexicon(office, plain=PLAIN, names=TITLES)) == hits


def test_a_step_brings_the_pages_of_the_titles_a_chain_read_into_it() -> None:
    """The titles s1 read count as named, however the name reader reads the query (a topic's title, "Neighbours",
    is no name it reads)."""
    hits = [Hit(cid, 0.5, "", {}, None, None, None, True, title=title) for cid, title in RANKED]
    assert [h.id for h in named_pages(hits, "films shot there", {}, NAMED)] == ["leland"]
    assert [h.id for h in named_pages(hits, "films shot there", {}, NAMED, ["Maximum Overdrive"])] == [
        "overdrive#0", "overdrive#1"]


def test_a_title_is_read_off_the_page_of_what_the_question_names() -> None:
    """The question's own page ranks below another that shares its words: the chain still reads the title the
    named page writes, not the other page's (which names none)."""
    other = Hit("wilmington", 0.9, "Wilmington is a port city where many films are shot.", {}, None, None, None,
                True, title="Wilmington, North Carolina")
    leland = Hit("leland", 0.8, PAGES[0][2], {}, None, None, None, True, title="Leland, North Carolina")
    question = "Who directed the film that was shot in Leland, North Carolina in 1986?"
    assert [h.id for h in pages_first([other, leland], question, NAMED)] == ["leland", "wilmington"]
    assert extract_titles(pages_first([other, leland], question, NAMED), 1, question, NAMED.known_names) == [
        "Maximum Overdrive"]
    with pytest.raises(ExtractRefused):  # the best chunk as it ranks: no title
        extract_titles([other, leland], 1, question, NAMED.known_names)
    assert pages_first([other, leland], "films shot in ports", NAMED) == [other, leland]  # it names nothing


@pytest.mark.parametrize(("metadata", "title"), [
    ('{"title": "Maximum  Overdrive "}', "Maximum Overdrive"),  # spaced as `Index.names` reads titles
    ('{"title": 1986}', None), ('{"title": "  "}', None), ('{"subtitle": "A film"}', None), (None, None),
])
def test_a_hit_s_title_is_read_as_the_index_reads_titles(metadata: str | None, title: str | None) -> None:
    assert _title(metadata) == title


def test_a_hit_carries_its_document_s_title(pages: tuple[Config, Index, Lexicon]) -> None:
    _, index, _ = pages
    hits = index.search("Maximum Overdrive", 6)
    assert {h.id.split("#")[0]: h.title for h in hits}["overdrive"] == "Maximum Overdrive"
    assert {h.title for h in hits} == {title for _, title, _ in PAGES}


def test_the_chain_s_steps_bring_their_pages_and_the_question_fills_the_rest(
        pages: tuple[Config, Index, Lexicon]) -> None:
    """Each step keeps the page of the title it names; the context's other chunks are the whole question's best,
    not the steps' lower ranks."""
    config, index, lexicon = pages
    question = "Who directed the film that was shot in Leland, North Carolina in 1986?"
    sk = lexicon.skeleton(question)
    plan = fill_slots(write_template(sk.text, "single", config), sk.slots)
    run = retrieve(question, plan, index, lexicon, 4, 4, False)
    assert [h.title for h in run.parts[0].hits] == ["Leland, North Carolina"]
    assert [h.title for h in run.parts[1].hits] == ["Maximum Overdrive"]
    one = [h.id for h in index.search(question, 4, all_versions=True)]
    assert run.context[:2] == [run.parts[0].hits[0].id, run.parts[1].hits[0].id]
    assert run.context[2:] == [c for c in one if c not in run.context[:2]][:2]
    assert run.searches == 3


def test_a_search_per_name_keeps_each_name_s_page(pages: tuple[Config, Index, Lexicon]) -> None:
    config, index, lexicon = pages
    sk = lexicon.skeleton("Are Stephen King and Wilmington, North Carolina both about horror?")
    assert sk.slots == {"entity_1": "Stephen King", "entity_2": "Wilmington, North Carolina"}
    steps = run_plan(fill_slots(write_template(sk.text, "comparison", config), sk.slots), index, lexicon, 4)
    assert [[h.title for h in s.hits] for s in steps] == [["Stephen King"], ["Wilmington, North Carolina"]]


@pytest.mark.parametrize("skeleton", [
    "who did the actor who starred as {entity} in the television series {entity} have a child with",
    "in what year was the man that resigned as the president of {entity} before the {entity} born",
])
def test_a_link_of_one_thing_two_names_describe_is_no_chain_per_name(skeleton: str) -> None:
    # both names describe one actor (one president): no name's own "actor" link finds him, so no step searches
    # "{entity_1} actor"; the question chains through the title its best chunk names
    plan = write_template(skeleton, "bridge", CONFIG)
    assert [s.query for s in plan.steps if "{entity_" in s.query] == [slotted(skeleton)]
    assert plan.steps[0].extract is not None and plan.steps[1].depends_on == ["s1"]


@pytest.mark.parametrize(("skeleton", "link", "asked"), [
    ("which film has the director who was born first {entity} or {entity}", "director", "born"),
    ("do director of film {entity} and director of film {entity} have the same nationality", "director",
     "same nationality"),
    ("are the directors of films {entity} and {entity} both from the same country", "directors", "same country"),
    ("which song has the performer born first {entity} or {entity}", "performer", "born"),
    ("which film whose director is younger {entity} or {entity}", "director", ""),
    ("who is older {entity} or {entity}", None, ""),  # no link: each name searched
    ("which film has the longer running time {entity} or {entity}", None, ""),  # a comparative is no link
    ("are {entity} and {entity} both film directors", None, ""),
])
def test_a_link_asked_of_two_names_chains_through_each(skeleton: str, link: str | None, asked: str) -> None:
    plan = write_template(skeleton, "comparison", CONFIG)
    if link is None:
        assert all(s.extract is None for s in plan.steps) and len(plan.steps) == 2
        return
    assert [(s.query, s.extract is not None, s.depends_on) for s in plan.steps] == [
        (f"{{entity_1}} {link}", True, []), (f"{{entity_2}} {link}", True, []),
        (f"{{s1}} {asked}".strip(), False, ["s1"]), (f"{{s2}} {asked}".strip(), False, ["s2"])]
    status = check_template(plan, {"shape_id": "x", "skeleton": skeleton, "type": "comparison"}, CONFIG,
                            Lexicon(CONFIG, {}), [])
    assert status["valid"] and status["check_ok"], status
    few = CONFIG.model_copy(update={"planning": CONFIG.planning.model_copy(update={"max_steps": 3})})
    assert all(s.query != f"{{entity_1}} {link}" for s in write_template(skeleton, "comparison", few).steps)
