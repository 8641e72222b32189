"""Clause splits: clauses of a long question, slot groups, each clause sent where its evidence is."""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass
from datetime import date

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from schemas.answers import NAME_AGREEMENT, ExtractRefused, extract_name, extract_value
from schemas.config import Config, load_config
from schemas.extract import Lexicon
from schemas.plan import Plan, check_plan, check_words, fill_slots, validate_plan
from tasks.executor import retrieve, run_plan
from tasks.index.stage import build_index
from tasks.index.store import Hit, Index
from tasks.plan.clauses import NO_CHUNK, clause_plan, clauses, fit_shared, slot_groups
from tasks.plan.readable import check_readable
from tasks.plan.rules_writer import slotted, write_template
from tasks.plan.stage import evidence_reach
from tests.conftest import ROOT

CONFIG = load_config(ROOT / "data" / "configs" / "multihop_rag.yaml")
CONFIG.planning.frame_words = []  # queries as the clauses say them (frame words: tests/test_plan.py)
WORDS = CONFIG.planning.clause_words
NO_NAMES = CONFIG.model_copy(deep=True)  # clause plans without a name step
NO_NAMES.planning.name_openers = []


def test_clauses_split_at_connectives_and_keep_content() -> None:
    text = ("which company reported by {source_1} was fined for dumping waste in the river "
            "and is building a battery plant in ohio while {source_2} says its profits fell")
    assert clauses(text, WORDS, 3) == ["company was fined for dumping waste in the river",
                                       "is building a battery plant in ohio", "says its profits fell"]  # noqa: E501
    assert clauses(text, [], 3) == []  # no connectives: clause splits are off


def test_a_short_piece_joins_the_clause_before_it() -> None:
    # "is there a budget for a desk" has two content words: under 3 it does not stand alone; the slot's lead-in
    # ("in {office_1}") goes with the slot
    text = "is there a budget for a desk and chair for working from home in {office_1}"
    assert clauses(text, WORDS, 3) == ["is there a budget for a desk chair for working from home"]
    assert clauses(text, WORDS, 2) == ["is there a budget for a desk", "chair for working from home"]


def test_framing_words_are_no_content() -> None:
    # "alameda research as mentioned by": two content words and the framing; it joins the clause before it
    text = ("who faced difficulties managing the rapid expansion of ftx and alameda research as mentioned by "
            "{source_1} and who is accused of fraud for personal gain")
    assert clauses(text, WORDS, 3, ["mentioned"]) == [
        "faced difficulties managing the rapid expansion of ftx alameda research as mentioned",
        "is accused of fraud for personal gain"]
    assert "alameda research as mentioned" in clauses(text, WORDS, 3)  # framing counted: a clause of its own


def test_slot_groups_pair_repeated_facets_and_share_single_ones() -> None:
    two_dated = "between {source_1} on {published_date_1} and {source_2} on {published_date_2} is there a change"
    assert slot_groups(two_dated) == [{"source": "source_1", "published_date": "published_date_1"},
                                      {"source": "source_2", "published_date": "published_date_2"}]
    assert slot_groups("compare leave in {office_1} and {office_2} in {year_1}") == [
        {"office": "office_1", "year": "year_1"}, {"office": "office_2", "year": "year_1"}]
    assert slot_groups("leave in {office_1}") == [{"office": "office_1"}]
    # values named in blocks pair by position: each source with its own date
    blocks = "did {source_1} and {source_2} on {published_date_1} and {published_date_2} agree"
    assert slot_groups(blocks) == [{"source": "source_1", "published_date": "published_date_1"},
                                   {"source": "source_2", "published_date": "published_date_2"}]
    uneven = "after {source_1} on {published_date_1} did {source_2} in {published_date_2} and {published_date_3}"
    assert slot_groups(uneven) == [{"source": "source_1", "published_date": "published_date_1"},
                                   {"source": "source_2", "published_date": "published_date_2"},
                                   {"published_date": "published_date_3"}]
    assert slot_groups("no values here") == []


def _scores(parts: list[str], owner: dict[str, int], groups: int) -> list[list[float]]:
    """A stand-in for the index: a clause scores 1 under the group its first word names, 0 elsewhere."""
    return [[1.0 if owner[c.split()[0]] == g else 0.0 for g in range(groups)] for c in parts]


def test_each_clause_goes_to_the_group_with_its_evidence_and_groups_alternate() -> None:
    groups = [{"source": "source_1"}, {"source": "source_2"}]
    owner = {"alpha": 0, "beta": 1}
    parts = ["alpha one", "alpha two", "beta three"]
    plan = clause_plan(parts, groups, _scores(parts, owner, 2), 6)
    assert [(s.query, s.filters["source"]) for s in plan.steps] == [
        ("alpha one", "{source_1}"), ("beta three", "{source_2}"), ("alpha two", "{source_1}")]
    # a group no clause went to still searches, with the clause of its best evidence ("{source_1} and
    # {source_2} articles imply ...": the clause is the second source's too), not with the whole question
    lonely = clause_plan(parts[:2], groups, [[0.6, 0.1], [0.5, 0.3]], 6)
    assert [(s.query, s.filters["source"]) for s in lonely.steps] == [
        ("alpha one", "{source_1}"), ("alpha two", "{source_2}"), ("alpha two", "{source_1}")]
    many = [f"alpha {n}" for n in range(9)]
    assert len(clause_plan(many, groups, _scores(many, owner, 2), 4).steps) == 4


def test_a_date_named_once_leaves_the_part_it_would_empty() -> None:
    """"The Sporting News report ... before December 5, 2023, and the CBSSports.com report ...": the date filters
    both parts, but CBSSports.com published nothing that day, so its part searches every day; the part that
    finds chunks on that date keeps it. A date that empties every part stays (the corpus cannot answer)."""
    text = "between the {source_1} report before {published_date_1} and the {source_2} report on his yards"
    groups = slot_groups(text)
    published = {("{source_1}", "{published_date_1}"), ("{source_2}", None), ("{source_1}", None)}

    def reach(clause: str, filters: dict[str, str]) -> float:
        return 0.5 if (filters["source"], filters.get("published_date")) in published else NO_CHUNK

    assert fit_shared(groups, text, reach, {"published_date"}) == [
        {"source": "source_1", "published_date": "published_date_1"}, {"source": "source_2"}]
    assert fit_shared(groups, text, lambda c, f: NO_CHUNK if "published_date" in f else 0.5,
                      {"published_date"}) == groups
    assert fit_shared(groups, text, reach, set()) == groups  # only the facets asked for
    skeleton = ("between the {source} report on tyreek hill s chances of 2 000 receiving yards before {published_date} "
                "and the {source} report on the average yards per game he needs was there a change in the reporting")
    plan = write_template(skeleton, "temporal", NO_NAMES, reach)
    assert {tuple(sorted(s.filters.items())) for s in plan.steps} == {
        (("published_date", "{published_date_1}"), ("source", "{source_1}")), (("source", "{source_2}"),)}


def test_a_question_whose_clauses_find_no_evidence_is_not_split_by_clause() -> None:
    skeleton = "which company reported by {source} was fined for dumping waste and is building a battery plant"
    weak = write_template(skeleton, "single", CONFIG, lambda clause, filters: CONFIG.mining.null_floor - 0.01)
    assert [s.query for s in weak.steps] == [slotted(skeleton, CONFIG.facet_names)]  # one step, as without scores
    strong = write_template(skeleton, "single", NO_NAMES, lambda clause, filters: CONFIG.mining.null_floor)
    assert len(strong.steps) == 2 and all(s.filters == {"source": "{source_1}"} for s in strong.steps)


def test_a_question_asking_for_a_name_finds_it_first() -> None:
    skeleton = "which company reported by {source} was fined for dumping waste and is building a battery plant"
    text = slotted(skeleton, CONFIG.facet_names)
    plan = write_template(skeleton, "single", CONFIG, lambda clause, filters: CONFIG.mining.null_floor)
    first, *rest = plan.steps
    assert first.query == text and first.extract is not None and first.extract.kind == "name"
    assert not first.filters  # the whole question, over every source: the name is in most of its chunks
    assert [(s.query, s.depends_on, s.filters) for s in rest] == [
        ("{s1} company was fined for dumping waste", ["s1"], {"source": "{source_1}"}),
        ("{s1} is building a battery plant", ["s1"], {"source": "{source_1}"})]
    validate_plan(plan, max_steps=CONFIG.planning.max_steps, facets={f: set() for f in CONFIG.facet_names})
    # a question that names what it asks about, or a config without openers, keeps the plain clause plan
    said = write_template("did {source} say the firm was fined for dumping waste and is building a plant", "single",
                          CONFIG, lambda clause, filters: CONFIG.mining.null_floor)
    assert all(s.extract is None for s in said.steps)
    assert all(s.extract is None for s in write_template(skeleton, "single", NO_NAMES,
                                                         lambda clause, filters: CONFIG.mining.null_floor).steps)
    # as many groups as the step cap: no room for a name step beside a clause step for each
    capped = CONFIG.model_copy(deep=True)
    capped.planning.max_steps = 3
    three = ("which firm did {source} say was fined for dumping waste while {source} says its profits grew "
             "strongly and {source} says its factory moved abroad")
    plan = write_template(three, "single", capped, lambda clause, filters: CONFIG.mining.null_floor)
    assert all(s.extract is None for s in plan.steps)
    assert {s.filters["source"] for s in plan.steps} == {"{source_1}", "{source_2}", "{source_3}"}
    capped.planning.max_steps = 4  # room for both
    roomy = write_template(three, "single", capped, lambda clause, filters: CONFIG.mining.null_floor)
    assert roomy.steps[0].extract is not None and len(roomy.steps) == 4


def _hits(*texts: str) -> list[Hit]:
    return [Hit(f"c{n}", 0.5, t, {}, None, None, None, True) for n, t in enumerate(texts)]


def test_a_name_is_the_one_most_top_chunks_hold_that_the_question_does_not() -> None:
    hits = _hits("Acme’s plant in Ohio employs 900.", "The court fined Acme for the spill.",
                 "Ohio approved the plant; Acme agreed.", "But Ohio voters were not asked.", "Nothing here.")
    assert NAME_AGREEMENT == 3
    assert extract_name(hits, 10, "which company is building a plant in ohio") == "Acme"  # Ohio is asked about
    with pytest.raises(ExtractRefused):  # Ohio and Acme tie at 3 chunks each: no guess
        extract_name(hits, 10, "which company is building a plant")
    with pytest.raises(ExtractRefused):  # only the top 2 chunks are read: Acme is in 2, short of 3
        extract_name(hits, 2, "which company is building a plant in ohio")
    # function words that open a sentence ("But", "The") are never names
    assert extract_name(_hits(*["But the firm said The plan holds."] * 3 + ["Acme"] * 3), 6, "which firm") == "Acme"


def test_a_name_of_several_words_is_the_phrase_its_words_make() -> None:
    fired = ["Sam Altman was fired.", "OpenAI CEO Sam Altman returns.", "The board and Sam Altman met.",
             "Sam Altman’s return."]
    assert extract_name(_hits(*fired), 10, "who is the individual") == "Sam Altman"
    # a chunk that names him by one word: the word most chunks hold is the answer
    assert extract_name(_hits(*fired[:3], "Altman returned."), 10, "who is the individual") == "Altman"
    assert extract_name(_hits(*["FTX founder Sam Bankman-Fried said."] * 3), 3, "who") == "Sam Bankman-Fried"
    # two names in the same chunks that never make one phrase tie: no guess
    with pytest.raises(ExtractRefused, match="2 names tie at 4"):
        extract_name(_hits("Google and Apple.", "Apple, Google.", "Google Apple", "Apple and Google"), 10, "which")
    # a possessive ends a name: "Acme’s Ohio plant" holds Acme and Ohio, not "Acme Ohio"
    assert extract_name(_hits(*["Acme’s Ohio plant grew."] * 3), 3, "which company is in ohio") == "Acme"


def test_an_online_service_extracts_from_its_own_records_as_planbake_does() -> None:
    """schemas/answers reads any record with text and facets (a service's own search results), not only Hit."""

    @dataclass
    class Record:
        text: str
        facets: dict[str, str]

    texts = ["Acme’s plant in Ohio employs 900.", "The court fined Acme.", "Acme agreed.", "Nothing here."]
    ours, theirs = _hits(*texts), [Record(t, {}) for t in texts]
    assert extract_name(theirs, 10, "which company") == extract_name(ours, 10, "which company") == "Acme"
    lexicon = Lexicon(CONFIG, {"source": ["TechCrunch", "The Verge"]})
    records = [Record("a ruling", {"source": "TechCrunch"}), Record("as TechCrunch reported", {})]
    assert extract_value(records, "source", 2, lexicon) == "TechCrunch"
    with pytest.raises(ExtractRefused):
        extract_value([*records, Record("x", {"source": "The Verge"})], "source", 3, lexicon)


@given(st.lists(st.text(alphabet=st.sampled_from("AaBbZz’'- .,"), max_size=40), max_size=12),
       st.integers(1, 12), st.text(alphabet="abz ", max_size=20))
def test_a_name_extracted_is_in_enough_top_chunks_and_not_in_the_query(texts: list[str], top: int,
                                                                       query: str) -> None:
    try:
        name = extract_name(_hits(*texts), top, query)
    except ExtractRefused:
        return
    assert sum(name in t for t in texts[:top]) >= NAME_AGREEMENT
    assert name.casefold() not in query.split() and len(name) >= 3


_WORD = st.sampled_from(["fined", "river", "plant", "battery", "profits", "fell", "court", "deal", "the", "in"])
_PIECE = st.lists(_WORD, min_size=1, max_size=6).map(" ".join)
_SLOT = st.sampled_from(["{source}", "{published_date}", ""])


def _stand_in_reach(clause: str, filters: dict[str, str]) -> float:
    """Scores that depend on the clause and the group, all above the null floor (so the gate lets them split)."""
    return CONFIG.mining.null_floor + zlib.crc32(f"{clause}|{sorted(filters.items())}".encode()) % 100 / 100


@given(st.lists(st.tuples(_PIECE, _SLOT, st.sampled_from(["and", "while", "which", "also"])), min_size=1,
                max_size=9), st.integers(1, 4))
@example([("fined", "{source}", "and")] * 7, 1)  # more values than steps: no split of any kind
def test_clause_templates_are_valid_plans_that_keep_every_value(pieces: list[tuple[str, str, str]],
                                                               min_words: int) -> None:
    skeleton = " ".join(f"{p} {slot} {joiner}" for p, slot, joiner in pieces) + " end of question here"
    text = slotted(skeleton, CONFIG.facet_names)
    found = clauses(text, WORDS, min_words)
    assert all("{" not in c and c for c in found) and len(set(found)) == len(found)
    assert not any(set(c.split()) & {"and", "while", "which", "also"} for c in found)
    groups = slot_groups(text)
    config = CONFIG.model_copy(deep=True)
    config.planning.clause_min_words = min_words
    plan = write_template(skeleton, "comparison", config, _stand_in_reach)
    validate_plan(plan, max_steps=CONFIG.planning.max_steps, facets={f: set() for f in CONFIG.facet_names})
    slots = set(re.findall(r"\{([a-z_]+_\d+)\}", text))
    assert {v.strip("{}") for s in plan.steps for v in s.filters.values()} | set(
        re.findall(r"\{([a-z_]+_\d+)\}", " ".join(s.query for s in plan.steps))) == slots  # none invented
    split = len(found) >= 2 and 0 < len(groups) <= config.planning.max_steps
    queries = [s.query for s in plan.steps]
    if split:  # a clause plan: each step a clause (or the whole question), filtered to its group's every value
        assert set(queries) <= {*found, text}
        wanted = [{f: "{" + v + "}" for f, v in g.items()} for g in groups]
        assert [s.filters for s in plan.steps[:len(groups)]] == wanted  # every group searches, in order
        assert {v.strip("{}") for s in plan.steps for v in s.filters.values()} == slots  # no filter lost
        owner = {c: max(wanted, key=lambda f, q=c: _stand_in_reach(q, f)) for c in found}  # type: ignore[misc]
        for s in plan.steps:
            if s.query in found and s.filters != owner[s.query]:
                # a group no clause went to searches the clause it scores best under
                assert s.filters not in owner.values()
                assert s.query == max(found, key=lambda c, f=s.filters: _stand_in_reach(c, f))  # type: ignore[misc]
    else:
        assert not set(queries) & set(found) - {text}



@pytest.mark.parametrize("skeleton", [  # MultiHop-RAG questions whose clause plans left dangling words
    "after the {source} report on sam bankman fried published on {published_date} and the subsequent {source} "
    "report on sam bankman fried published on {published_date} was there consistency in the portrayal of sam "
    "bankman fried s actions related to the ftx collapse",
    "considering the updates on google maps search as reported by {source} and the new features discussed by cnet "
    "which letter represents the first character of the feature that both articles claim has significantly "
    "improved the user experience for locating services and businesses",
    "does {source} describe the match as a showcase of equal financial power between teams while {source} focuses "
    "on the current performance of the dallas team without mentioning their financial status",
    "which company discussed in articles from {source} {source} and {source} was involved in maintaining a clean "
    "financial image for ftx through handling losses held assets primarily in the form of unlocked ftt and ftt "
    "collateral valued at billions",
])
def test_clause_plans_cut_no_word_a_person_would_not_write(skeleton: str) -> None:
    """Cutting a question at its connectives and slots strands function words ("published on {published_date}",
    "does {source} describe the"): the clause steps are tidied so the readability check passes them."""
    plan = write_template(skeleton, "comparison", CONFIG, _stand_in_reach)
    assert len(plan.steps) >= 2
    check_readable(plan, None)


def test_more_groups_than_steps_do_not_split_by_clause() -> None:
    config = CONFIG.model_copy(deep=True)
    config.planning.max_steps = 2
    skeleton = ("did {source} say the court fined the firm while {source} says the profits fell and "
                "{source} reports the plant closed")
    plan = write_template(skeleton, "comparison", config, _stand_in_reach)
    assert len(slot_groups(slotted(skeleton, config.facet_names))) == 3
    assert not any(s.query in clauses(slotted(skeleton, config.facet_names), WORDS, 3) for s in plan.steps)


def test_connectives_are_matched_as_skeletons_are_written() -> None:
    text = "the firm was fined heavily whereas the rival firm grew its profits"
    assert clauses(text, ["Whereas"], 3) == ["the firm was fined heavily", "the rival firm grew its profits"]
    assert clauses("the firm was fined heavily and the firm was fined heavily", WORDS, 3) == [
        "the firm was fined heavily"]  # a clause said twice is searched once


# --- against a real index ----------------------------------------------------------------------------

FACTS = [
    ("a1", "Alpha Daily", "Acme was fined two million dollars for dumping chemical waste into the river."),
    ("a2", "Alpha Daily", "Acme is building a battery plant in Ohio that will employ 900 workers."),
    ("a3", "Alpha Daily", "The city council approved a new budget for road repairs this spring."),
    ("a4", "Alpha Daily", "Local football club wins the regional cup after a penalty shoot-out."),
    ("b1", "Beta Times", "Acme's quarterly profits fell by a third as battery demand slowed."),
    ("b2", "Beta Times", "A court fined a shipping firm for polluting the harbour with oil."),
    ("b3", "Beta Times", "The new electric car factory in Ohio opened its doors to visitors."),
    ("b4", "Beta Times", "Farmers complain about the dry summer and the price of feed."),
]
QUESTION = ("Which company, reported by Alpha Daily, was fined for dumping chemical waste into the river and is "
            "building a battery plant in Ohio, while Beta Times says its quarterly profits fell?")


@pytest.fixture(scope="module")
def news(tmp_path_factory: pytest.TempPathFactory) -> tuple[Config, Index]:
    root = tmp_path_factory.mktemp("news")
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "text": t, "metadata": {"source": s,
                                                                            "published_date": "2023-11-20"}}) + "\n"
                              for i, s, t in FACTS), encoding="utf-8")
    config = CONFIG.model_copy(deep=True)
    config.facet("source").aliases = {}  # they name papers this small corpus lacks (refused: tests/test_index.py)
    outcome = build_index(corpus, config, root / "out", date(2026, 11, 30), quiet=True)
    return config, Index(outcome.uri, config, outcome.result.version)


def test_clauses_find_their_facts_in_the_real_index(news: tuple[Config, Index]) -> None:
    config, index = news
    lexicon = Lexicon(config, index.facet_values())
    sk = lexicon.skeleton(QUESTION)
    assert sk.slots == {"source_1": "Alpha Daily", "source_2": "Beta Times"}
    seen: set[str] = set()
    plain = config.model_copy(deep=True)
    plain.planning.name_openers = []
    template = write_template(sk.text, "comparison", plain, evidence_reach(index, [sk], seen))
    assert {c.split("#")[0] for c in seen} >= {"a1", "a2", "b1"}  # the writer's evidence, kept with the template
    by_filter = [(s.filters["source"], s.query) for s in template.steps]
    assert by_filter == [("{source_1}", "company was fined for dumping chemical waste into the river"),
                         ("{source_2}", "says its quarterly profits fell"),
                         ("{source_1}", "is building a battery plant in ohio")]
    run = retrieve(QUESTION, fill_slots(template, sk.slots), index, lexicon, 3, 4, False)
    assert {c.split("#")[0] for c in run.context} == {"a1", "a2", "b1"}  # every fact, one chunk each
    unsplit = write_template(sk.text, "comparison", config)  # without evidence scores: one step per source
    assert [s.filters["source"] for s in unsplit.steps] == ["{source_1}", "{source_2}"]


def test_clause_plans_pass_the_template_checks(news: tuple[Config, Index]) -> None:
    config, index = news
    lexicon = Lexicon(config, index.facet_values())
    sk = lexicon.skeleton(QUESTION)
    template = write_template(sk.text, "comparison", config, evidence_reach(index, [sk]))
    assert len(template.steps) == 4  # the name step, then three clauses
    check_words(template, set(sk.text.split()))  # only the question's own words
    check = check_plan(fill_slots(template, sk.slots), sk.constraints, lexicon.extract)
    assert check.ok, check


def test_the_name_step_finds_the_company_and_the_clauses_search_with_it(news: tuple[Config, Index]) -> None:
    config, index = news
    lexicon = Lexicon(config, index.facet_values())
    sk = lexicon.skeleton(QUESTION)
    template = write_template(sk.text, "comparison", config, evidence_reach(index, [sk]))
    run = retrieve(QUESTION, fill_slots(template, sk.slots), index, lexicon, 4, 4, False)
    name, *clause_steps = run.parts
    assert name.answer == "Acme" and name.error is None  # in a1, a2 and b1: the question never says it
    assert [p.query.split()[0] for p in clause_steps] == ["Acme"] * 3
    assert {c.split("#")[0] for c in run.context} >= {"a1", "a2", "b1"}


def test_a_step_that_only_waits_for_another_still_searches(news: tuple[Config, Index]) -> None:
    """`depends_on` without the dependency's slot orders the steps; it does not need an answer."""
    config, index = news
    lexicon = Lexicon(config, index.facet_values())
    plan = Plan.model_validate({"steps": [
        {"id": "s1", "query": "chemical waste in the river", "filters": {"source": "Alpha Daily"}},
        {"id": "s2", "query": "quarterly profits fell", "filters": {"source": "Beta Times"}, "depends_on": ["s1"]},
        {"id": "s3", "query": "which company builds a battery plant",
         "extract": {"kind": "name", "facet": None, "top": 3}},
        {"id": "s4", "query": "is {s3} building in ohio", "depends_on": ["s3", "s1"]}]})
    first, second, name, fourth = run_plan(plan, index, lexicon, 2)
    assert first.error is None and second.error is None
    assert [h.id.split("#")[0] for h in second.hits][:1] == ["b1"]
    assert fourth.error is None and fourth.hits  # it reads s3's name (or an empty slot), and only waits for s1
    assert fourth.query == " ".join(f"is {name.answer or ''} building in ohio".split())
