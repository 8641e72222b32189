"""Entity types: what kind of thing a corpus title names (a person, a work, a place, an organisation), read from
how the corpus's own page for it opens, and the type of a shape's entity slot, read from the names that fill it.

A page that opens by saying what its subject is ("Metallica is an American heavy metal band based in ...",
"Leland is a town in Brunswick County", "James Hetfield (born August 3, 1963) is an American musician") types its
title by the head noun of that phrase: the last noun of a type this module knows before the phrase ends (at a
comma, a preposition, a relative pronoun or a participle such as "directed": "a film director and producer" is a
person, "a 1986 film directed by ..." a work). A known noun that another word follows only describes that word
("a video game developer", "a city council"): the head is then that word, which types nothing unless it is known.
A page that opens otherwise, or whose phrase holds no known noun ("a species of ..."), types nothing: no guess.

A shape's `{entity_N}` slot takes a type where its fillers agree: at least half of its distinct fillers are titles
of a known type, and all of those are of one type ("When was {entity_1} born?" asked of three actors and a film
director is a person slot). The skeleton keeps `{entity}`: a question about a name the corpus does not know
must find the same shape, so the type is the slot's (published with the shape, shown to the model writer), never
part of a key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from schemas.entity import ENTITY, PARTICLES, SENSE, title_forms
from schemas.text import fold_cased, letter_runs

PERSON, WORK, PLACE, ORGANISATION = "person", "work", "place", "organisation"
TYPES = (PERSON, WORK, PLACE, ORGANISATION)

# Head nouns of the phrase a page opens with, by the type of thing they say its subject is. English, generic:
# the nouns encyclopaedic and reference pages use for what they describe; a noun of two senses ("station",
# "character", "museum") is left out.
_NOUNS = {
    PERSON: """actor actress singer musician songwriter rapper drummer guitarist bassist pianist composer conductor
        writer author novelist poet playwright screenwriter journalist editor director producer filmmaker
        politician statesman diplomat president minister senator governor mayor judge lawyer activist
        businessman businesswoman entrepreneur executive investor player footballer cricketer athlete boxer
        wrestler cyclist swimmer golfer jockey racer driver coach manager referee catcher pitcher shortstop
        outfielder infielder quarterback linebacker receiver goalkeeper defender midfielder striker batsman
        bowler scientist physicist chemist biologist mathematician economist historian philosopher engineer
        inventor architect physician surgeon professor teacher scholar artist painter sculptor photographer
        designer dancer comedian presenter illustrator columnist legislator host officer
        soldier admiral commander pilot astronaut explorer king queen prince princess emperor empress
        bishop priest monk saint pope person man woman""",
    WORK: """film movie documentary novel novella book memoir biography poem album single song ep soundtrack opera
        musical play duet series miniseries sitcom show episode drama game videogame painting sculpture comic
        manga anime franchise magazine newspaper""",
    PLACE: """city town village hamlet municipality commune borough suburb neighbourhood neighborhood county district
        province region territory country nation island peninsula river lake mountain valley desert forest park
        capital metropolis settlement community""",
    ORGANISATION: """company corporation conglomerate firm business manufacturer retailer brand airline bank
        band group duo trio quartet orchestra choir ensemble club team league federation association union party
        organisation organization agency institute foundation charity university college school academy publisher label
        studio network""",
}
_TYPE_OF = {noun: kind for kind, nouns in _NOUNS.items() for noun in nouns.split()}
# The phrase that says what a page's subject is, after its first copula, in lower case: "is an American ..." (not
# the "Is" of "This Is Spinal Tap")
_COPULA = re.compile(r"\b(?:is|was|are|were)\s+(?:(?:a|an|the)\s+)?")
# Words that end that phrase: what follows is no part of what the subject is
_PHRASE_ENDS = frozenset(
    """of in from that which who whose where when by for with on at to as than based located known founded
    directed written released produced created developed published starring born best""".split())  # noqa: SIM905
# Participles in -ing that follow a head noun ("a band featuring ..."); a word in -ing may be a noun ("building")
_GERUNDS = frozenset({"featuring", "consisting", "comprising", "specializing", "specialising", "serving", "operating",
                      "covering", "including", "containing", "playing", "starring", "depicting", "following"})
_TOKEN = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*|[,;:.()]")
OPENING_CHARS = 400  # how far into a page its opening phrase is looked for
PHRASE_WORDS = 10  # the longest phrase read after the copula
_BORN = re.compile(r"\(\s*(?:born|b\.)\s", re.IGNORECASE)


def page_type(title: str, text: str) -> str | None:
    """The type of thing a page's opening says its subject is, or None (`module docstring`). The subject must be
    the title's: more than half of the title's words, its last among them, come before the copula ("Thomas Edward
    "Tom" Sizemore, Jr. (born ...) is" for "Tom Sizemore", its part before a comma for "Leland, North Carolina";
    not "Zambia is a landlocked country" on the page "Geography of Zambia", nor "Ang Lee is ..." on "Ang Lee
    filmography")."""
    opening = text[:OPENING_CHARS]
    copula = _COPULA.search(opening)
    if copula is None:
        return None
    subject = SENSE.sub("", title).split(",")[0]  # "Leland, North Carolina" opens "Leland is a town in ..."
    named = [w for w in letter_runs(fold_cased(subject).casefold()) if w not in PARTICLES]
    before = set(letter_runs(fold_cased(opening[:copula.start()]).casefold()))
    if not named or named[-1] not in before or 2 * sum(w in before for w in named) <= len(named):
        return None
    head = None
    after_noun = False  # the word before was a known noun
    for token in _TOKEN.findall(opening, copula.end())[:PHRASE_WORDS]:
        word = token.casefold()
        if (word in _PHRASE_ENDS or not word[0].isalnum()
                or (head is not None and word not in _TYPE_OF and (len(word) > 4 and word.endswith("ed")
                                                                   or word in _GERUNDS))):  # "formed in ..."
            break
        if word in _TYPE_OF:
            head, after_noun = _TYPE_OF[word], True
        elif word in ("and", "or"):
            after_noun = False
        elif after_noun:  # the noun before described this word: "a video game developer", "a city council"
            head, after_noun = None, False
    if head is None and _BORN.search(opening, 0, copula.start()):
        return PERSON  # "X (born 1963) is ...": a life's dates before the phrase
    return head


def title_types(pages: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each form a question may write a title in (`title_forms`, case-folded) -> its type, from (title, the text
    of its page's first chunk); a form two pages of other types share types nothing."""
    out: dict[str, str] = {}
    clashes: set[str] = set()
    for title, text in pages:
        kind = page_type(title, text)
        if kind is None:
            continue
        for form in title_forms(title):
            if out.setdefault(form, kind) != kind:
                clashes.add(form)
    return {form: kind for form, kind in out.items() if form not in clashes}


def slot_types(value_sets: Iterable[Mapping[str, str]], types: Mapping[str, str]) -> dict[str, str]:
    """`{entity_N}` slot -> its type, from the value sets of a shape's questions (slot -> value): where at least
    half of a slot's distinct values are titles of a known type, all of one type; the others are left out."""
    values: dict[str, set[str]] = {}
    for slots in value_sets:
        for slot, value in slots.items():
            if slot.rsplit("_", 1)[0] == ENTITY:
                values.setdefault(slot, set()).add(value.casefold())
    out = {}
    for slot, names in sorted(values.items()):
        known = {types[n] for n in names if n in types}
        typed = sum(n in types for n in names)
        if len(known) == 1 and 2 * typed >= len(names):
            out[slot] = known.pop()
    return out

