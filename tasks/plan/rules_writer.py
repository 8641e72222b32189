"""The rule writer: a template plan per shape type, with no model call (the default without a GPU)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from schemas.bridge import Bridge, phrase
from schemas.config import Config
from schemas.each_value import each_value_span
from schemas.entity import ENTITY
from schemas.plan import PLAN_WORDS, Extract, Plan, Step, slots_by_facet
from schemas.text import words as folded
from tasks.plan.chains import describes_through, each_link, per_name_chain, title_chain
from tasks.plan.clauses import (
    Reach,
    asks_for_name,
    clause_plan,
    clause_scores,
    clauses,
    fit_shared,
    name_bridge,
    slot_groups,
)
from tasks.plan.readable import FUNCTION_WORDS, tidy

# a placeholder, with the function words that lead to it ("call me at {phone}")
_PLACEHOLDER = re.compile(r"(?:\b(?:" + "|".join(sorted(FUNCTION_WORDS)) + r")\s+)*\{([a-z_]+)\}")
_JOINERS = r"(?:and|or|to|vs|versus|with|than|from|between|in|for|at|on|of|about)"


def slotted(skeleton: str, facets: list[str] | None = None) -> str:
    """`compare {office} and {office}` -> `compare {office_1} and {office_2}` (slot order = text order).

    Placeholders that are not facets (the scrubber's {email}, {phone}, ...) are dropped from the text, with the
    function words that lead to them: `call me at {phone}` -> `call me`, no dangling "at" (`tasks.plan.readable`).
    """
    seen: dict[str, int] = {}

    def number(m: re.Match[str]) -> str:
        if facets is not None and m.group(1) not in facets:
            return ""
        seen[m.group(1)] = seen.get(m.group(1), 0) + 1
        return m.group(0)[:m.start(1) - 1 - m.start(0)] + "{" + f"{m.group(1)}_{seen[m.group(1)]}" + "}"

    return " ".join(_PLACEHOLDER.sub(number, skeleton).split())


def _comparison(word: str) -> tuple[str, bool]:
    """The pattern a comparison word leaves a step's query by, and whether it is a verb's: a function word ("and",
    "than") alone; another word in its verb forms with the preposition after them ("compare": compared with,
    comparing; "differ": differed from), never a plural ("the changes to vpn" keep their noun)."""
    if word in PLAN_WORDS or not word.isalpha():
        return rf"(?<!\w){re.escape(word)}(?!\w)", False
    stem = re.escape(word[:-1] if word.endswith("e") else word)
    return rf"(?<!\w)(?:{re.escape(word)}d?|{stem}(?:ed|ing))(?:\s+(?:with|to|from|against))?(?!\w)", True


def _part_query(text: str, keep: str, drop: list[str], strip_words: list[str]) -> str:
    """The skeleton narrowed to one part: other values of the split facet and comparison words removed, tidied. A
    comparison verb followed by nothing but the question's own words again takes them along ("which connectors can
    a {tier} workspace use compared with a {tier} workspace")."""
    for slot in [*drop, keep]:
        text = re.sub(rf"\s*(?:\b{_JOINERS}\s+)?(?:the\s+)?\{{{re.escape(slot)}\}}", " ", text)
    for w in strip_words:
        pattern, verb = _comparison(w)
        m = re.search(rf"{pattern}(?P<tail>.*)$", text) if verb else None
        if m and set(m.group("tail").split()) <= set(text[:m.start()].split()):
            text = text[:m.start()]
        text = re.sub(pattern, " ", text)
    text = re.sub(rf"(?:\s+\b{_JOINERS})+\s*$", "", " ".join(text.split()))
    return f"{tidy(text)} in {{{keep}}}"


def _split(text: str, facet: str, slots: list[str], config: Config) -> Plan:
    """One step per value of `facet`; a facet the question names once filters every step ("the per diem in
    {office} between {year} and {year}": both years' steps search that office), one it names as often pairs
    with it by position ("{source} on {published_date} and {source} on {published_date}")."""
    words = [w for w in config.classify.comparison + config.classify.temporal if " " not in w and len(w) > 2]
    by_facet = _facet_slots(text, config)
    shared = {f: slot for f, slot in _named_once(by_facet).items() if f != facet}
    paired = {f: ss for f, ss in by_facet.items() if f != facet and len(ss) == len(slots)}
    others = [o for ss in paired.values() for o in ss]
    steps = [Step(id=f"s{n}", query=_part_query(text, s, [o for o in slots if o != s] + others, words),
                  filters={**shared, **{f: "{" + ss[n - 1] + "}" for f, ss in paired.items()}, facet: "{" + s + "}"})
             for n, s in enumerate(slots, 1)]
    return Plan(steps=steps)


def _bridge(text: str, config: Config) -> Plan | None:
    """`what per diem do i get at the {year_1} engineering offsite` -> s1 finds the office, s2 uses it."""
    cats = [f.name for f in config.facets if f.kind == "category"]
    if not cats:
        return None
    indicators = "|".join(re.escape(w) for w in config.classify.bridge)
    m = re.search(rf"^(?P<need>.+?)\s+(?:at|for|during|of|in)\s+the\s+(?P<event>.*\b(?:{indicators})\b.*)$", text)
    if not m:
        return None
    event, need = m.group("event"), tidy(m.group("need"))
    filters = {facet: "{" + slots[-1] + "}" for facet, slots in _facet_slots(event, config).items()}
    facet = cats[0]
    return Plan(steps=[
        Step(id="s1", query=f"where is the {event} held", filters=filters, extract=Extract(facet=facet, top=1)),
        Step(id="s2", query=f"{need} in {{s1}}", depends_on=["s1"], filters={facet: "{s1}"}),
    ])


def _term_bridge(text: str, bridge: Bridge, config: Config) -> Plan | None:
    """`what per diem do i get at the {year_1} engineering offsite`, whose "engineering offsite" the corpus ties
    to an office: s1 searches the phrase naming it under the question's time values and code reads the office
    from its best chunk; s2 asks the rest of the question under that office (the whole question when the phrase
    does not end it)."""
    span = phrase(text, bridge.term)
    if span is None:
        return None
    tokens = text.split()
    named = " ".join(tokens[span[0]:span[1]])
    kinds = {f.name: f.kind for f in config.facets}
    times = {facet: "{" + slots[-1] + "}" for facet, slots in slots_by_facet(text).items()
             if kinds.get(facet) in ("year", "date")}
    need = " ".join(tokens[:span[0]]) if span[1] == len(tokens) else text
    need = tidy(re.sub(rf"(?:\s+\b(?:{_JOINERS}|the|a|an))+\s*$", "", need).strip() or text)
    return Plan(steps=[
        Step(id="s1", query=named, filters=times, extract=Extract(facet=bridge.facet, top=1)),
        Step(id="s2", query=f"{need} in {{s1}}", depends_on=["s1"], filters={bridge.facet: "{s1}"}),
    ])


def _each_value(text: str, span: tuple[int, int], facet: str, values: list[str], config: Config) -> Plan | None:
    """A step per value of `facet`, filtered to it: the value and the question's content words but its asking
    ones ("which plans include sso" -> "Business include sso" under tier Business); a facet the question names
    once filters every step. None where no content word is left ("what office am i in"): no step would search
    anything but a value."""
    shared = _named_once(_facet_slots(text, config))
    rest = " ".join(w for w in f"{text[:span[0]]} {text[span[1]:]}".split() if w not in PLAN_WORDS)
    if not set(rest.split()) - FUNCTION_WORDS:
        return None
    return Plan(steps=[Step(id=f"s{n}", query=tidy(f"{value} {rest}".strip()), filters={**shared, facet: value})
                       for n, value in enumerate(values, 1)])


def _facet_slots(text: str, config: Config) -> dict[str, list[str]]:
    """`slots_by_facet` of the slots a filter may hold: with entity slots, the names fill query text only."""
    by_facet = slots_by_facet(text)
    if config.entity_slots:
        by_facet.pop(ENTITY, None)
    return by_facet


def _named_once(by_facet: Mapping[str, list[str]]) -> dict[str, str]:
    """Facet -> its slot ("{office_1}"), for each facet a question names once: a filter every step of a split
    holds (a facet named twice stays in the text)."""
    return {facet: "{" + slots[0] + "}" for facet, slots in by_facet.items() if len(slots) == 1}


def _entity_plan(text: str, names: list[str], config: Config) -> Plan:
    """A question about two or more named things searches each on its own: the name and the question's content
    words ("were {entity_1} and {entity_2} of the same nationality" -> "{entity_1} nationality", "{entity_2}
    nationality"), under the facet values it names once. A name fills query text, never a filter."""
    filters = _named_once(_facet_slots(text, config))
    drop = PLAN_WORDS | {w for c in config.classify.comparison for w in folded(c).split()}
    # the names and the filtered slots leave the text; a facet named twice stays in it ("in {office_1} and
    # {office_2}"): no one filter holds it
    gone = {*names, *(v.strip("{}") for v in filters.values())}
    content = [w for w in text.split() if w not in drop and w.strip("{}") not in gone]
    rest = " ".join(dict.fromkeys(content))
    return Plan(steps=[Step(id=f"s{n}", query=tidy(f"{{{name}}} {rest}".strip()), filters=filters)
                       for n, name in enumerate(names, 1)])


def unframed(plan: Plan, frame_words: list[str]) -> Plan:
    """The plan with `planning.frame_words` left out of its steps' queries (a query of nothing else is kept), tidied
    where a word went ("as reported by" leaves no "as")."""
    drop = {w for f in frame_words for w in folded(f).split()}
    if not drop:
        return plan
    steps = [s.model_copy(update={"query": _unframed(s.query, drop)}) for s in plan.steps]
    return plan.model_copy(update={"steps": steps})


def _unframed(query: str, drop: set[str]) -> str:
    """`query` without the words in `drop`, tidied; as it was when that leaves nothing or drops nothing."""
    kept = [w for w in query.split() if w not in drop]
    return tidy(" ".join(kept)) if kept and len(kept) < len(query.split()) else query


def write_template(skeleton: str, shape_type: str, config: Config, reach: Reach | None = None,
                   bridge: Bridge | None = None, values: Mapping[str, Collection[str]] | None = None) -> Plan:
    """A template for one shape (see `_template`), its queries without the question's framing words. `values`:
    the lexicon's values of each category facet (`Lexicon.values`), which an aggregation over every value of one
    splits by."""
    return unframed(_template(skeleton, shape_type, config, reach, bridge, values), config.planning.frame_words)


def _template(skeleton: str, shape_type: str, config: Config, reach: Reach | None, bridge: Bridge | None,
              facet_values: Mapping[str, Collection[str]] | None = None) -> Plan:
    """An aggregation asking of every value of a facet searches each value (`_each_value`). A question that
    describes a thing through what it names chains through a corpus title (tasks/plan/chains.py); else two or more
    names search each. Bridge chains (through the term the corpus ties to a value, `bridge`, else the configured
    bridge words); with `reach` (evidence scores from the index), a question of two or more clauses splits by
    clause (tasks/plan/clauses.py); else comparison and temporal split per value, the rest is one step."""
    text = slotted(skeleton, config.slot_facets)
    if shape_type == "aggregation" and facet_values and (each := each_value_span(text, config)) is not None:
        facet, span = each
        every = sorted(facet_values.get(facet, ()))
        # a step per value helps where each can place a chunk in the context: five sites' steps in four chunks
        # drop one site, as one search does, at five times the searches
        if 2 <= len(every) <= min(config.planning.max_steps, config.planning.budget) and (
                plan := _each_value(text, span, facet, every, config)):
            return plan
    # a name stays in the text of every other plan; clause steps leave slots out, so a question with one is no
    # clause split
    names = slots_by_facet(text).get(ENTITY, []) if config.entity_slots else []
    if (config.entity_slots and shape_type != "null" and config.planning.max_steps >= 2 * len(names)
            and (link := each_link(text, names)) is not None):
        return per_name_chain(text, names, link)
    if (config.entity_slots and shape_type != "null" and config.planning.max_steps >= 2
            and describes_through(text, config.planning.chain_words)):
        return title_chain(text)
    if 2 <= len(names) <= config.planning.max_steps and shape_type != "null":
        return _entity_plan(text, names, config)
    if shape_type == "bridge" and (plan := (_term_bridge(text, bridge, config) if bridge else None)
                                   or _bridge(text, config)):
        return plan
    parts = clauses(text, config.planning.clause_words, config.planning.clause_min_words,
                    config.planning.frame_words)
    groups = slot_groups(text)
    if (reach is not None and not names and len(parts) >= 2 and 0 < len(groups) <= config.planning.max_steps
            and shape_type != "null"):
        groups = fit_shared(groups, text, reach, {f.name for f in config.facets if f.kind == "date"})
        scores = clause_scores(parts, groups, reach)
        if sum(max(row) >= config.mining.null_floor for row in scores) >= 2:
            plan = clause_plan(parts, groups, scores, config.planning.max_steps)
            room = config.planning.max_steps >= max(3, len(groups) + 1)  # a clause step per group beside the name's
            if room and asks_for_name(text, config.planning.name_openers):
                return name_bridge(text, plan, config.planning.max_steps)
            return plan
    kinds = {f.name: f.kind for f in config.facets}
    by_facet = _facet_slots(text, config)
    if shape_type in ("comparison", "temporal"):
        wanted = "category" if shape_type == "comparison" else None
        for facet, values in by_facet.items():
            if 2 <= len(values) <= config.planning.max_steps and (
                    wanted is None and kinds.get(facet) in ("year", "date") or kinds.get(facet) == wanted):
                return _split(text, facet, values, config)
    filters = _named_once(by_facet)
    return Plan(steps=[Step(id="s1", query=text, filters=filters)])
