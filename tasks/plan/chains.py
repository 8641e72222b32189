"""Title chains: a question that describes what it asks about through a thing it names ("Who directed the film
that was shot in Leland, North Carolina in 1986?") searches twice. s1 searches the question and reads the corpus
title that the best chunk (of the page of what the question names, where the search found it) writes and the
question does not (`schemas.answers.extract_titles`: two at most, refusing on none or more; the Leland page names
the film "Maximum Overdrive"); s2 searches that title with the question's content words. One search ranks the
page the question names first and the one it describes far below, since the question never says the described
thing's name; the chain reaches it through the link the corpus itself writes.

Written by the rule writer only where the corpus's titles are read as names (`entity_slots`), for a skeleton with
a word of `planning.chain_words` past its first two words (a relative clause or an embedded question: "the film
that ...", "by what company") or a name behind two links of "of" ("the spouse of the director of {entity}"),
or one behind one link that the question's verb asks about ("when was the director of {entity} born"), or a relation
of two links in one word ("the paternal grandfather of {entity}", "{entity}'s uncle"), before the
search per name of a question naming two or more (chosen on the HotpotQA dev half: BENCHMARKS.md). A
single-fact question ("Where was {entity_1} born?") has none, so it stays one search; the route measure decides
per shape (or per class) whether the chain finds more.
"""

from __future__ import annotations

import re

from schemas.entity import ENTITY
from schemas.plan import PLAN_WORDS, Extract, Plan, Step
from schemas.text import words as folded

TITLE_TOP = 1  # chunks of the question whose titles s1 reads: its best (a second adds links off the topic)
OPENING = 2  # words a chain word is past: "In what film ..." asks its own question, it describes nothing


# A name reached through two links of "of": "the spouse of the director of {entity}", "one of the stars of {entity}",
# "the mother of the performer of song {entity}" (a word or two may say what the named thing is).
_NESTED = re.compile(r"\bof (?:(?:the|a|an) )?(?:[^\s{}]+ ){1,3}?of (?:(?:the|a|an) )?(?:[^\s{}]+ ){0,2}?\{" + ENTITY)
# Words that ask one fact of what follows them, no link of their own: "the date of birth of {entity}" is "when was
# {entity} born", "the name of the author of {entity}" asks for the author. Read as if they were not there; a date
# or place of birth or death of one link away is asked of that link's own page ("the date of birth of the director
# of film {entity}").
_LIFE_OF = r"(?:date|place|year|day|city|country|cause) of (?:birth|death) of "
_FACT_OF = r"\b(?:the )?(?:(?:full |real )?name of |" + _LIFE_OF + ")"


# A name one link of "of" away from what the question asks about, the subject of its verb: "when did the composer
# of {entity} die", "when was the director of film {entity} born" (a participle follows: "born", or a word ending
# in -ed or -en, which a few other words do too), "what nationality is the director of {entity}" (the question's
# own noun is what it asks of him). The link is an agent noun (-er, -or, -ist, -ent, -ant, -ian: a director, an
# author, a president, a musician), a person or body the named thing's page names: not "when was the city of
# {entity} founded", "when did the first episode of {entity} air" nor "what is the name of the {entity} album",
# which the named thing's own page answers.
_LINK = (r"the (?:[^\s{}]+ )?[^\s{}]+(?:er|or|ist|ent|ant|ian) of (?:(?:the|a|an) )?(?:[^\s{}]+ ){0,2}?\{" + ENTITY
         + r"[^}]*\}")
_ASKED = r"(?:born|from|[^\s{}]+(?:ed|en))(?: |$)"  # what a copula after the link asks: "born", "from", a participle
_ONE_LINK = re.compile(r"^(?:\S+ ){1,3}?(?:did|does|do) " + _LINK + r" [^\s{}]"
                       r"|^(?:\S+ ){1,3}?(?:was|were|is|are) " + _LINK + " " + _ASKED
                       + r"|^(?:what|which|whose) [^\s{}]+ (?:is|was|are|were) " + _LINK + r"(?: |$)"
                       r"|^(?:what|which|whose) [^\s{}]+ " + _LINK + r" (?:(?:did|does|do) [^\s{}]|(?:is|was|are|were) "
                       + _ASKED + ")"
                       r"|\b" + _LIFE_OF + _LINK)  # "the date of birth of the director of film {entity}"

# A relation of two links in one word: the paternal grandfather of {entity} is the father of the parent the named
# person's page names; an uncle, a niece, an in-law likewise ("who is {entity} s maternal grandmother"). One link
# ("the father of {entity}") the named person's own page answers.
_KIN = (r"(?:grand(?:father|mother|parent|son|daughter|child(?:ren)?)|uncle|aunt|nephew|niece"
        r"|(?:father|mother|son|daughter|brother|sister)s? in laws?|step(?:father|mother|son|daughter))s?")
_ONE_FACT = re.compile(_FACT_OF)
_TWO_LINK = re.compile(r"\b" + _KIN + r" of (?:(?:the|a|an) )?(?:[^\s{}]+ ){0,2}?\{" + ENTITY
                       + r"|\{" + ENTITY + r"[^}]*\} s (?:[^\s{}]+ )?" + _KIN + r"(?: |$)")


def describes_through(text: str, chain_words: list[str]) -> bool:
    """Whether the skeleton holds a word of `chain_words` past its first OPENING words, or a name behind two
    links of "of", or one behind one link that the question's verb asks about, or a relation of two links in one
    word ("grandfather")."""
    wanted = {folded(w) for w in chain_words}
    return (any(w in wanted for w in text.split()[OPENING:]) or _NESTED.search(_ONE_FACT.sub("", text)) is not None
            or _ONE_LINK.search(text) is not None or _TWO_LINK.search(text) is not None)


# A link asked of each of two names: "which film has the director who was born first, {entity} or {entity}", "do
# director of film {entity} and director of film {entity} have the same nationality". The link is an agent noun
# after an article or an auxiliary, followed by what is asked of it.
_EACH_LINK = re.compile(r"\b(?:the|whose|do|does|did) ([^\s{}]+(?:er|or|ist|ent|ant|ian)s?) "
                        r"(?:of|who|whose|that|born|died|is|was|are|were)\b")


def each_link(text: str, names: list[str]) -> str | None:
    """The link a question of two names asks of each (`_EACH_LINK`: "director", or "directors" as written), or
    None. The names must be coordinated, "and" or "or" between them: in "who did the actor who starred as
    {entity_1} in the series {entity_2} have a child with" both name one actor, whom no name's own link finds."""
    m = _EACH_LINK.search(text) if len(names) == 2 and coordinated(text, names) else None
    return m.group(1) if m else None


def coordinated(text: str, names: list[str]) -> bool:
    """Whether "and" or "or" stands between the first two of `names` (slot names, "entity_1") in `text`."""
    words = text.split()
    at = [i for i, w in enumerate(words) if w.strip("{}") in names[:2]]
    return len(at) == 2 and any(w in ("and", "or") for w in words[at[0] + 1:at[1]])


def per_name_chain(text: str, names: list[str], link: str) -> Plan:
    """For each name, a step reads the title of its link off its page ("{entity_1} director", extracting the
    title: the film's page names its director), and a step searches that title with what the question asks of the
    link: its content words after the link, but the names, the link and a word naming what the names are ("film
    {entity}"): "{s1} born first"."""
    words = text.split()
    forms = {link.removesuffix("s"), link.removesuffix("s") + "s"}  # "director", "directors"
    at = next(i for i, w in enumerate(words) if w in forms)
    asked = [w for i, w in enumerate(words[at:], at) if w not in PLAN_WORDS and not w.startswith("{")
             and w not in forms and not (i + 1 < len(words) and words[i + 1].startswith("{"))]
    rest = " ".join(dict.fromkeys(asked))
    reads = [Step(id=f"s{n}", query=f"{{{name}}} {link}", extract=Extract(kind="title", top=TITLE_TOP))
             for n, name in enumerate(names, 1)]
    then = [Step(id=f"s{n + len(names)}", query=f"{{s{n}}} {rest}".strip(), depends_on=[f"s{n}"])
            for n in range(1, len(names) + 1)]
    return Plan(steps=[*reads, *then])


def title_chain(text: str) -> Plan:
    """s1: the skeleton, extracting the title; s2: "{s1}" and the skeleton's content words but the name (which
    would rank the named thing's page first again), so a refused title leaves a keyword query of what the
    question describes."""
    content = " ".join(dict.fromkeys(w for w in text.split()
                                     if w not in PLAN_WORDS and not w.startswith("{" + ENTITY)))
    return Plan(steps=[Step(id="s1", query=text, extract=Extract(kind="title", top=TITLE_TOP)),
                       Step(id="s2", query=f"{{s1}} {content}".strip(), depends_on=["s1"])])
