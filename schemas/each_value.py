"""Questions that ask of every value of a category facet without naming one: "Which plans include SSO?", "Rank
the sites by backup retention", "Does every office close at year end?". One search ranks the chunks of a value or
two first; a step per value (`tasks.plan.rules_writer`) brings each value's own.

Such a question calls the facet by a noun: its name ("site", "office", "tier"; underscores read as spaces) or one
of its `nouns` (a tier's "plan"), singular or plural, after a word that asks of each value ("which", "what",
"every", "each", "all", "all the", "rank the", "list the", "compare the", "across the"), and names no value of it.
The classifier (`tasks.mine.classify`) types it an aggregation and the rule writer splits it, offline and in the
class planner online alike: both read it from the skeleton and the config alone.
"""

from __future__ import annotations

import functools
import re

from schemas.config import Config, Facet

ASKING = ("which", "what", "every", "each", "all", "all the", "rank the", "list the", "compare the", "across the",
          "across all")


def noun_forms(facet: Facet) -> list[str]:
    """The facet's nouns, singular and plural ("plan", "plans"; "policy", "policies"; "branch", "branches"), longest
    first."""
    forms: set[str] = set()
    for noun in [facet.name.replace("_", " "), *facet.nouns]:
        *head, last = noun.split()
        if last.endswith("y") and last[-2:-1] not in "aeiou":
            plural = last[:-1] + "ies"
        elif last.endswith(("s", "x", "z", "ch", "sh")):
            plural = last + "es"
        else:
            plural = last + "s"
        forms |= {noun, " ".join([*head, plural])}
    return sorted(forms, key=lambda f: (-len(f), f))


def _pattern(facet: Facet) -> re.Pattern[str]:
    return _compiled(tuple(noun_forms(facet)))


@functools.lru_cache(maxsize=256)
def _compiled(forms: tuple[str, ...]) -> re.Pattern[str]:
    """The asking words then one of `forms`, as whole words (compiled once per facet: the class planner reads
    every question that missed)."""
    asking = "|".join(re.escape(a) for a in sorted(ASKING, key=len, reverse=True))
    nouns = "|".join(re.escape(n) for n in forms)
    return re.compile(rf"(?<![\w{{}}])(?:{asking}) (?:{nouns})(?![\w{{}}])")


def each_value_span(skeleton: str, config: Config) -> tuple[str, tuple[int, int]] | None:
    """(facet, span of its asking words and noun) of the first category facet the skeleton asks of every value of,
    naming none ("which plans include sso" -> ("tier", (0, 11)) where a tier's noun is "plan"); else None."""
    for facet in config.facets:
        if facet.kind != "category" or re.search(r"\{" + re.escape(facet.name) + r"(?:_\d+)?\}", skeleton):
            continue
        if m := _pattern(facet).search(skeleton):
            return facet.name, m.span()
    return None
