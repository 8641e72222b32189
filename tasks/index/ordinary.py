"""Facet values that are ordinary words: the corpus itself writes them in lower case (an office "Remote" beside
"remote work", a title "Time" beside "at the time", a source "The Age" beside "by the age of 16").

A value the lexicon learns from the index (`from_index`) and that is such a word is dropped from the lexicon:
every question saying the word would be read as that value. The config keeps one by listing it under the facet's
values (or naming it by an alias). The index stage warns of each (`stage.ordinary_values`); mining, planning and
the published lexicon read the same values (`store.Index.lexicon_values`), so lookup keys stay identical.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from schemas.config import Config
from schemas.text import fold, letter_runs, opens_sentence

Texts = Callable[[], Iterable[str]]  # the corpus's texts, read again only when a value of several words needs it


def ordinary_words(values: Iterable[str], plain: set[str], texts: Texts) -> set[str]:
    """Of `values`, those the texts write in lower case: one word in `plain` (`schemas.text.plain_words` of the
    texts), or several words the texts write so, one after another (marks between them aside)."""
    lower = {v: " ".join(letter_runs(v.lower())) for v in values}
    phrases = _lower_case_phrases([p for p in lower.values() if " " in p and set(p.split()) <= plain], texts)
    return {v for v, low in lower.items() if fold(v) in plain or (" " in low and low in phrases)}


def name_uses(texts: Iterable[str], term: str, first: bool = False) -> tuple[int, int]:
    """How often the texts write the term as a name, with a capital where no sentence starts ("on the Business
    plan", "for the Ledger team"), and all in lower case ("business days"); `first`: stop at the first name."""
    pattern = re.compile(r"(?<!\w)" + r"\W+".join(re.escape(w) for w in term.split()) + r"(?!\w)", re.IGNORECASE)
    named = lower = 0
    for text in texts:
        for m in pattern.finditer(text):
            if m.group()[0].isupper() and not opens_sentence(text, m.start()):
                named += 1
                if first:
                    return named, lower
            elif m.group().islower():
                lower += 1
    return named, lower


def kept_forms(config: Config) -> dict[str, set[str]]:
    """Facet -> the folded values its config entry keeps: listed under `values`, or named by an alias."""
    return {f.name: {fold(v) for v in [*f.values, *f.aliases.values()]} for f in config.facets}


def dropped_values(config: Config, index_values: Mapping[str, Iterable[str]], plain: set[str],
                   texts: Texts) -> dict[str, list[str]]:
    """Category facet -> its values learned from the index that are ordinary words (`ordinary_words`) and that
    the config does not keep (`kept_forms`), sorted; facets with none are left out."""
    kept = kept_forms(config)
    learned = {f.name: {str(v) for v in index_values.get(f.name, ()) if v not in (None, "") and fold(str(v))
                        not in kept[f.name]} for f in config.facets if f.kind == "category" and f.from_index}
    ordinary = ordinary_words({v for vals in learned.values() for v in vals}, plain, texts)
    return {name: sorted(vals & ordinary) for name, vals in learned.items() if vals & ordinary}


def without(index_values: Mapping[str, Iterable[str]], dropped: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """The index's values less the dropped ones: what the lexicon takes."""
    gone = {name: set(vals) for name, vals in dropped.items()}
    return {name: [v for v in vals if v not in gone.get(name, ())] for name, vals in index_values.items()}


_TOKENS = re.compile(r"[^\W\d_]+|[\d_]+")  # runs of letters, and the digits between them (which part a phrase)


def _lower_case_phrases(phrases: list[str], texts: Texts) -> set[str]:
    """Which of the phrases (words in lower case, one space apart) the texts write so, word after word (marks
    between them aside). One pass over each text's words, looking further only at a phrase's first word."""
    wanted = set(phrases)
    if not wanted:
        return set()
    firsts: dict[str, set[int]] = {}  # first word -> the lengths of the phrases it opens
    for p in wanted:
        firsts.setdefault(p.split(" ", 1)[0], set()).add(p.count(" ") + 1)
    found: set[str] = set()
    for text in texts():
        tokens = _TOKENS.findall(text or "")
        for i, token in enumerate(tokens):
            for n in firsts.get(token, ()):
                if (gram := " ".join(tokens[i:i + n])) in wanted:
                    found.add(gram)
    return found
