"""Entity types: a corpus title's type from its page's opening, and a shape's slot type from its fillers."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.entity_types import ORGANISATION, PERSON, PLACE, TYPES, WORK, page_type, slot_types, title_types
from tasks.plan.model_writer import build_messages
from tests.test_entity import CONFIG as ENTITY_CONFIG


@pytest.mark.parametrize(("title", "text", "kind"), [
    ("Metallica", "Metallica is an American heavy metal band based in San Rafael, California.", ORGANISATION),
    ("Leland, North Carolina", "Leland is a town in Brunswick County, North Carolina, United States.", PLACE),
    ("Maximum Overdrive", "Maximum Overdrive is a 1986 American science fiction horror comedy film directed by "
     "Stephen King.", WORK),
    ("Tom Sizemore", 'Thomas Edward "Tom" Sizemore, Jr. (born November 29, 1961) is an American film and '
     "television actor and producer.", PERSON),  # the last noun of the phrase: "film" describes the actor
    ("Ang Lee", "Ang Lee is a film director and screenwriter, known for films made in the studio system.", PERSON),
    ("Grace Krilanovich", "Grace Krilanovich (born October 5, 1979) is the recipient of a fellowship.", PERSON),
    ("Enter Sandman", '"Enter Sandman" is a song by American heavy metal band Metallica.', WORK),
    ("Pterocarya", "Pterocarya, often called wingnuts in English, are trees in the walnut family.", None),
    ("Hyperkalemic periodic paralysis", "Hyperkalemic periodic paralysis is a genetic disorder.", None),
    ("Geography of Zambia", "Zambia is a landlocked country located in Southern Africa.", None),  # not its subject
    ("List of Metallica concert tours", "Metallica is an American heavy metal band, founded in 1981.", None),
    ("Kiss and Tell (1945 film)", "Kiss and Tell is a 1945 American comedy film starring Shirley Temple.", WORK),
    ("Water", "Clean drinking water matters to every city.", None),  # no copula after its subject
    ("Ang Lee filmography", "Ang Lee is a Taiwanese film director who has directed many films.", None),  # a list
    ("This Is Spinal Tap", "This Is Spinal Tap is a 1984 American mockumentary film.", WORK),  # "Is": the title's
    ("Double Fine", "Double Fine is an American video game developer based in San Francisco.", None),  # describes
    ("Pauline Kael", "Pauline Kael was an American film critic who wrote for The New Yorker.", None),
    ("Glastonbury", "Glastonbury is a country music festival held every June.", None),
    ("Leeds City Council", "Leeds City Council is a city council in West Yorkshire.", None),
    ("BBC", "The BBC is a British public service broadcaster headquartered in London.", None),
    ("Spice Girls", "The Spice Girls were an English pop girl group formed in 1994.", ORGANISATION),  # "formed" ends
    ("Howell School", "Howell School is a historic school building in Dothan, Alabama.", None),  # a noun in -ing
    ("Tom Chick", "Tom W. Chick is an American television and movie actor, and journalist.", PERSON),
])
def test_a_title_is_typed_by_what_its_page_opens_by_saying_it_is(title: str, text: str, kind: str | None) -> None:
    assert page_type(title, text) == kind


def test_title_types_key_every_form_and_drop_a_clash() -> None:
    types = title_types([("Kiss and Tell (1945 film)", "Kiss and Tell is a 1945 American comedy film."),
                         ("Mercury", "Mercury is a planet."), ("Mercury", "Mercury is an American rock band."),
                         ("Mercury", "Mercury is a town in Nevada.")])
    assert types == {"kiss and tell (1945 film)": WORK, "kiss and tell": WORK}  # "mercury": a band and a town


def test_a_slot_is_typed_where_its_fillers_agree() -> None:
    types = {"ang lee": PERSON, "greta gerwig": PERSON, "ridley scott": PERSON, "alien": WORK, "leland": PLACE}
    directors = [{"entity_1": "Ang Lee", "year_1": "2001"}, {"entity_1": "Greta Gerwig"},
                 {"entity_1": "Someone Unknown"}]
    assert slot_types(directors, types) == {"entity_1": PERSON}  # two of three known, both persons; a year is no name
    assert slot_types([*directors, {"entity_1": "Alien"}], types) == {}  # a person and a work: no type
    assert slot_types([{"entity_1": "Ang Lee"}, {"entity_1": "X One"}, {"entity_1": "X Two"}], types) == {}  # 1 of 3
    pairs = [{"entity_1": "Ang Lee", "entity_2": "Leland"}, {"entity_1": "Ridley Scott", "entity_2": "Leland"}]
    assert slot_types(pairs, types) == {"entity_1": PERSON, "entity_2": PLACE}
    assert slot_types([{"entity_1": "ANG LEE"}], types) == {"entity_1": PERSON}  # case aside, as titles are read


NAMES = st.sampled_from(["Ang Lee", "Greta Gerwig", "Alien", "Leland", "Nobody Known", "Someone Else"])
TYPED = {"ang lee": PERSON, "greta gerwig": PERSON, "alien": WORK, "leland": PLACE}


@given(st.lists(st.fixed_dictionaries({"entity_1": NAMES}, optional={"entity_2": NAMES}), max_size=8),
       st.randoms(use_true_random=False))
def test_a_slot_type_depends_on_the_set_of_fillers_only(value_sets: list[dict[str, str]], rng: random.Random) -> None:
    shuffled = list(value_sets)
    rng.shuffle(shuffled)
    typed = slot_types(value_sets, TYPED)
    assert typed == slot_types(shuffled + value_sets, TYPED)  # order and repeats change nothing
    assert set(typed.values()) <= set(TYPES)
    for slot, kind in typed.items():  # every typed filler of the slot is of its type
        assert all(TYPED.get(v[slot].casefold(), kind) == kind for v in value_sets if slot in v)


@given(st.text(max_size=300), st.text(max_size=40))
def test_page_type_reads_any_text(text: str, title: str) -> None:
    assert page_type(title, text) in (*TYPES, None)


def test_the_model_writer_is_told_what_the_names_are() -> None:
    messages = build_messages("when was {entity_1} born", "single", ENTITY_CONFIG, {},
                              slot_types=json.dumps({"entity_1": PERSON}))
    assert "What the names are: {entity_1} a person" in messages[1]["content"]
    both = build_messages("is {entity_1} in {entity_2}", "single", ENTITY_CONFIG, {},
                          slot_types=json.dumps({"entity_1": ORGANISATION, "entity_2": PLACE}))
    assert "What the names are: {entity_1} an organisation, {entity_2} a place" in both[1]["content"]
    assert "What the names are" not in build_messages("when was {entity_1} born", "single", ENTITY_CONFIG,
                                                      {})[1]["content"]
