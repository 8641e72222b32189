"""The starting config `planbake init` writes: facets read from a sample of the corpus's metadata, the logs' time
span as the mining window, entity slots for pages titled by the things they are about, and a comment on each line
saying why it is there. What it cannot decide it says, in the file and in `Starter.notes`; it never guesses a
facet.

Reads: the corpus's first documents (`index.corpus.sample_corpus`) and a survey of the logs (`ingest.survey`).
Writes: nothing; the command writes `Starter.text`.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

from schemas.config import Chunking, Config, Mining, read_yaml
from schemas.constraint import QUALIFIER
from schemas.entity import TITLE
from schemas.plan import PLAN_WORDS
from schemas.text import fold, letter_runs, plain_words
from tasks.index.corpus import Document, sample_corpus
from tasks.index.enrich import parse_effective
from tasks.index.ordinary import name_uses, ordinary_words
from tasks.ingest.survey import LogSurvey, survey_logs

SAMPLE = 1000  # documents read by default
# A passage up to this long is one chunk: about what the embedding model reads of a text (all-MiniLM-L6-v2: 256
# word pieces, some 1,000 to 1,300 characters of English); a corpus of such passages is not cut (BENCHMARKS.md)
PASSAGE = 1200
MAX_VALUES = 100  # a category facet has at most this many values in the sample
PER_VALUE = 3  # and its values cover at least this many documents each, on average
MAX_NOUNS = 2  # nouns init writes for a facet: the most a question plausibly calls its values by
VERSION_KEYS = ("effective_from", "policy", "supersedes")  # read by the index as version markers
_YEAR = re.compile(r"(?:1[5-9]|20)[0-9]{2}")
_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_OTHER_DATES = ("%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%d %b %Y", "%Y/%m/%d")

Kind = Literal["category", "year", "date"]


@dataclass
class Verdict:
    """What one metadata key of the sample is: a facet of `kind` (named `name`), or none (`kind` None)."""

    key: str
    kind: Kind | None
    why: str  # the comment beside it
    name: str = ""
    note: str = ""  # what could not be decided about it
    keep: list[str] = field(default_factory=list)  # a category facet's values to list: ordinary words it keeps
    nouns: list[str] = field(default_factory=list)  # what questions may call its values ("plan"), beside its name
    version: bool = False  # its values name versions, each on one date (a release)


@dataclass
class Starter:
    text: str  # the config, YAML with comments
    verdicts: list[Verdict]
    documents: int  # sampled
    more: bool  # the corpus holds more than the sample
    logs: LogSurvey | None = None
    window_days: int | None = None
    notes: list[str] = field(default_factory=list)  # what it could not decide
    entity_slots: bool = False  # titled documents and no facet: names become slots (`_entity_lines`)

    def to_json(self) -> dict[str, Any]:
        facets = [{"name": v.name, "kind": v.kind, "key": v.key, "why": v.why} for v in self.verdicts if v.kind]
        return {"facets": facets, "not_facets": {v.key: v.why for v in self.verdicts if not v.kind},
                "documents": self.documents, "corpus_has_more": self.more, "window_days": self.window_days,
                "log_rows": self.logs.rows if self.logs else None, "entity_slots": self.entity_slots,
                "notes": self.notes}


def starter_config(corpus: str | Path, out: str | Path, logs: str | Path | None = None,
                   sample: int = SAMPLE) -> Starter:
    """The config `planbake init` writes to `out` for this corpus and these logs (paths in it relative to `out`'s
    folder, as the config reads them)."""
    docs, more = sample_corpus(corpus, sample)
    plain = plain_words([d.text for d in docs])
    verdicts = judge_keys(docs, plain)
    survey = survey_logs(logs) if logs else None
    starter = Starter("", verdicts, len(docs), more, survey)
    starter.notes = [v.note for v in verdicts if v.note]
    lines = _head(starter, corpus, logs) + _facet_lines(verdicts)
    titled = named_titles(docs, plain)
    starter.entity_slots = not any(v.kind for v in verdicts) and 2 * titled > len(docs)
    lines += [f"corpus: {json.dumps(_relative(corpus, out))}"]
    if starter.entity_slots:
        lines += _entity_lines(titled, len(docs))
    lines += _chunking_lines(docs, starter.entity_slots)
    lines += _log_lines(starter, logs, out)
    starter.text = "\n".join(lines) + "\n"
    Config.model_validate(read_yaml(starter.text))  # what it writes loads: a mistake here is a bug
    return starter


def judge_keys(docs: list[Document], plain: set[str] | None = None) -> list[Verdict]:
    """A verdict for each metadata key of the documents, in order of first appearance (`plain`: the words their
    texts write in lower case, when already read)."""
    keys = list(dict.fromkeys(k for d in docs for k in d.metadata))
    texts = [d.text for d in docs]
    plain = plain_words(texts) if plain is None else plain
    verdicts = [_judge(key, [d.metadata[key] for d in docs if d.metadata.get(key) not in (None, "")], len(docs),
                       plain, texts) for key in keys]
    names: Counter[str] = Counter()
    for kind in ("year", "date"):  # a question's years (dates) fill the first facet of the kind alone
        of_kind = [v for v in verdicts if v.kind == kind]
        for v in of_kind[1:]:
            v.note = (f"{v.key}: also {kind}s, but a question's {kind}s fill one facet; the config keeps "
                      f"{of_kind[0].key} ({v.why}); make it the {kind} facet instead if questions mean it")
            v.kind, v.why = None, f"{v.why}, but {of_kind[0].key} is the {kind} facet"
    for v in verdicts:
        if v.kind and (names[v.name] or v.name == QUALIFIER):
            v.note = f"{v.key}: would be a facet named {v.name!r}, which another key (or qualifiers) names; rename one"
            v.kind, v.why = None, f"{v.why}, but its name {v.name!r} is taken"
        names[v.name] += 1
    for v in verdicts:
        if v.kind == "category" and (dates := version_dates(v.key, docs)):
            v.version = True
            shown = ", ".join(f"{value} on {day}" for value, day in list(dates.items())[:3])
            more = ", ..." if len(dates) > 3 else ""
            v.why += f"; each value takes effect on one date ({shown}{more}): its values name versions"
    return verdicts


def version_dates(key: str, docs: list[Document]) -> dict[str, str]:
    """Value -> the one effective date of the documents giving it, where the key's values name versions (a
    release): every value that dated documents give has one date, two values or more, on two dates or more, and
    some value on two dated documents or more (one document a value proves nothing); else empty."""
    dates: dict[str, set[str]] = {}
    seen: Counter[str] = Counter()
    for d in docs:
        value, day = d.metadata.get(key), d.metadata.get("effective_from") or parse_effective(d.text)
        if isinstance(value, str) and value and day:
            dates.setdefault(value, set()).add(str(day))
            seen[value] += 1
    if (len(dates) < 2 or any(len(days) != 1 for days in dates.values()) or max(seen.values()) < 2
            or len({next(iter(days)) for days in dates.values()}) < 2):
        return {}
    return {value: next(iter(days)) for value, days in sorted(dates.items(), key=lambda kv: min(kv[1]))}


def _judge(key: str, values: list[Any], documents: int, plain: set[str], texts: list[str]) -> Verdict:
    where = f"{len(values)} of {documents} documents"
    name = slot_name(key)
    if key in VERSION_KEYS:
        return Verdict(key, None, "a version marker the index reads (docs/operations.md#versions), not a facet")
    if not values:
        return Verdict(key, None, "no sampled document gives it a value")
    if not name:
        return Verdict(key, None, "no facet name can be made of it",
                       note=f"{key}: no facet name can be made of it; add it with `key: {key}` if it is one")
    if any(isinstance(v, bool) for v in values):
        return Verdict(key, None, "true or false: no filter a question names")
    if all(_YEAR.fullmatch(str(v)) for v in values):
        years = sorted({int(v) for v in values})
        return Verdict(key, "year", f"{where} give a year ({years[0]} to {years[-1]})", name)
    texts_only = [v for v in values if isinstance(v, str)]
    days = [v for v in texts_only if _iso_day(v)]
    if len(days) == len(values):
        return Verdict(key, "date", f"{where} give a date ({min(days)} to {max(days)})", name)
    dated = [v for v in texts_only if _other_date(v)]
    if days or dated:
        shown = _show(dated or [v for v in values if v not in days])
        note = (f"{key}: {len(days) + len(dated)} of {len(values)} values are dates, but not all written YYYY-MM-DD "
                f"({shown}); a date facet compares a question's dates with that text: write them so and add "
                f"`- {{name: {name}, kind: date}}`")
        return Verdict(key, None, "dates not all written YYYY-MM-DD (see the note)", note=note)
    if len(texts_only) < len(values):
        return Verdict(key, None, f"numbers ({_show([v for v in values if not isinstance(v, str)])}): a category "
                       "facet's values are text", note=f"{key}: numbers; list it as a category facet if questions "
                       "name them as words")
    counts = Counter(texts_only)
    distinct = len(counts)
    spellings: dict[str, set[str]] = {}
    for v in counts:
        spellings.setdefault(fold(v), set()).add(v)
    if twice := next((sorted(s) for s in spellings.values() if len(s) > 1), None):
        return Verdict(key, None, f"{' and '.join(map(repr, twice[:2]))} are one value spelled two ways, which the "
                       "index refuses", note=f"{key}: {twice[0]!r} and {twice[1]!r} are one value spelled two ways; "
                       f"write one in the corpus, then add `- {{name: {name}}}` if it is a facet")
    shown = ", ".join(_short(v) for v, _ in counts.most_common(3)) + (", ..." if distinct > 3 else "")
    if distinct == 1:
        return Verdict(key, None, f"one value ({shown}) in {where}: nothing to filter")
    if distinct > MAX_VALUES or len(values) < PER_VALUE * distinct:
        verdict = Verdict(key, None, f"{distinct} values over {where}: about one per document (a name or title), "
                          "not a filter")
        if distinct <= MAX_VALUES and len(values) >= 2 * distinct:
            verdict.note = (f"{key}: {distinct} values over {where}, {len(values) / distinct:.1f} documents each: "
                            "few for a facet; add it if questions filter by it")
        return verdict
    ordinary = sorted(ordinary_words(set(counts), plain, lambda: texts), key=lambda v: (-counts[v], v))
    # a value with a capital that the texts write as a name at least as often as in lower case ("on the Business plan"
    # beside "business days") is the corpus's name for it: listed under `values`, the lexicon keeps it
    keep = sorted(v for v in ordinary if not v.islower() and (uses := name_uses(texts, v))[0] >= max(uses[1], 1))
    ordinary = [v for v in ordinary if v not in keep]
    if 2 * len(ordinary) > distinct:
        more = ", ..." if len(ordinary) > 3 else ""
        return Verdict(key, None, f"{len(ordinary)} of its {distinct} values are words the texts write in lower "
                       f"case ({_show(ordinary)}{more}): questions saying them would be read as filters, and the "
                       "lexicon drops them",
                       note=f"{key}: most values are ordinary words; to filter by it, add it as a category facet "
                       "and list the values to keep under `values`")
    why = f"{distinct} values over {where} ({shown}); its values come from the index"
    if keep:
        why += (f"; listed, so the lexicon keeps them: {', '.join(repr(_short(v)) for v in keep)}, which the texts "
                "write as names at least as often as in lower case")
    if ordinary:
        why += (f"; the texts also write {', '.join(repr(_short(v)) for v in ordinary)} in lower case, which the "
                "lexicon therefore drops: list under `values` what to keep")
    nouns = value_nouns(sorted(counts), texts, name)
    if nouns:
        why += (f"; questions may call a value a {' or a '.join(nouns)} (the texts write it beside half the values or "
                "more)")
    return Verdict(key, "category", why, name, keep=keep, nouns=nouns)


def value_nouns(values: list[str], texts: list[str], name: str) -> list[str]:
    """Nouns the texts write right beside half of a facet's values or more ("the Business plan", "release 4.3"), which a
    question calls its values by ("which plans ...": `schemas.each_value`); the facet's name is one already."""
    near: dict[str, set[str]] = {}
    times: Counter[str] = Counter()
    for value in values:
        beside = re.compile(rf"(?:\b([a-z]{{3,}})\s+)?(?<!\w){re.escape(value)}(?!\w)(?:\s+([a-z]{{3,}})\b)?")
        for text in texts:
            for m in beside.finditer(text):
                for word in m.groups():
                    if word and word not in PLAN_WORDS:  # no function word: not "the", "your", "all"
                        noun = _singular(word)
                        near.setdefault(noun, set()).add(value)
                        times[noun] += 1
    need = max(2, (len(values) + 1) // 2)
    nouns = [w for w, seen in near.items() if len(seen) >= need and w != name.replace("_", " ")]
    return sorted(nouns, key=lambda w: (-len(near[w]), -times[w], w))[:MAX_NOUNS]


def _singular(word: str) -> str:
    """"plans" -> "plan", "policies" -> "policy", "branches" -> "branch", "boxes" -> "box"; "class", "status",
    "news", "series" stay (`schemas.each_value.noun_forms` makes the plurals back)."""
    if word.endswith("ies") and len(word) > 4 and word != "series":
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zes", "sses")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith(("ss", "us", "is", "ws")) else word


def slot_name(key: str) -> str:
    """A facet name for a metadata key: lowercase letters and underscores ("Published Date" -> published_date)."""
    return re.sub("[^a-z]+", "_", key.lower()).strip("_")


def _iso_day(value: str) -> bool:
    try:
        return bool(_ISO_DAY.fullmatch(value)) and bool(date.fromisoformat(value))
    except ValueError:
        return False


def _other_date(value: str) -> bool:
    """A date or a time written otherwise than YYYY-MM-DD ("2023-09-26T10:00:00", "26/09/2023", "Sep 26, 2023")."""
    try:
        datetime.fromisoformat(value)
        return True
    except ValueError:
        pass
    for form in _OTHER_DATES:
        try:
            datetime.strptime(value.strip(), form)
            return True
        except ValueError:
            continue
    return False


def _short(value: Any, width: int = 30) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= width else text[:width - 3] + "..."


def _show(values: list[Any]) -> str:
    return ", ".join(_short(v) for v in list(dict.fromkeys(values))[:3])


def _median_chars(docs: list[Document]) -> int:
    return int(statistics.median(len(d.text) for d in docs))


def _relative(path: str | Path, out: str | Path) -> str:
    """`path` as the config at `out` reads it: relative to the config's folder."""
    return os.path.relpath(Path(path).resolve(), Path(out).resolve().parent)


WIDTH = 118  # of a comment line


def _comment(text: str, indent: str = "", hang: str = "") -> list[str]:
    """`text` as comment lines of at most `WIDTH` characters; lines after the first indented by `hang` more."""
    return [indent + line for line in textwrap.wrap(text, WIDTH - len(indent), initial_indent="# ",
                                                     subsequent_indent="# " + hang, break_on_hyphens=False)]


def _head(starter: Starter, corpus: str | Path, logs: str | Path | None) -> list[str]:
    sampled = f"the first {starter.documents:,} documents" if starter.more else f"all {starter.documents:,} documents"
    logged = f" and the logs {logs}" if logs else ""
    return _comment(f"planbake configuration written by `planbake init` from {sampled} of {corpus}{logged}. Each "
                    "line says why it is there; check them, then run `planbake nightly --config THIS_FILE`. Every "
                    "key: docs/configuration.md.")


def _facet_lines(verdicts: list[Verdict]) -> list[str]:
    facets, others = [v for v in verdicts if v.kind], [v for v in verdicts if not v.kind]
    lines = ["facets: []  # no metadata key makes a facet (below): no question's value is a filter"] if not facets \
        else ["facets:"]
    for v in facets:
        lines += [*_comment(f"{v.key}: {v.why}", "  "), f"  - name: {v.name}"]
        if v.name != v.key:
            lines.append(f"    key: {json.dumps(v.key)}")
        lines.append(f"    kind: {v.kind}")
        if v.kind == "category":
            lines.append(f"    values: [{', '.join(json.dumps(kept, ensure_ascii=False) for kept in v.keep)}]")
        if v.nouns:
            lines.append(f"    nouns: [{', '.join(json.dumps(n) for n in v.nouns)}]")
        if v.version:
            lines.append("    version: true")
    if others:
        lines.append("# Not facets:")
        lines += [line for v in others for line in _comment(f"  {_short(v.key, 40)}: {v.why}", hang="    ")]
    return lines


def named_titles(docs: list[Document], plain: set[str]) -> int:
    """How many documents carry a title that names a thing: one holding a word the texts never write in lower case
    (`plain`: "Metallica", "Leland, North Carolina"; not "Travel Policy", whose words are ordinary ones)."""
    return sum(isinstance(t := d.metadata.get(TITLE), str) and any(w not in plain for w in letter_runs(t.casefold()))
               for d in docs)


def _entity_lines(titled: int, documents: int) -> list[str]:
    """A corpus of titled documents and no facet (pages about people, works, places, organisations): names become
    slots, and the titles are read as names and embedded with their chunks (docs/configuration.md: Entity
    slots)."""
    return [*_comment(f"{titled:,} of {documents:,} documents carry a {TITLE} that names a thing, and no key makes "
                      "a facet: questions ask about the things the titles name; names become {entity} slots (a "
                      "title is read as one name), so questions that differ by the name share a shape"),
            "entity_slots: true"]


def _chunking_lines(docs: list[Document], entities: bool) -> list[str]:
    """`chunking`: passages kept whole where the documents are passages, most of them longer than a default chunk
    but within what the embedding model reads (`PASSAGE`); the title embedded with each chunk in a corpus of pages
    about named things (`entities`), and in a titled corpus whose documents are often cut in pieces."""
    size = Chunking().size
    lengths = [len(" ".join(d.text.split())) for d in docs]
    cut, whole = sum(n > size for n in lengths), sum(n <= PASSAGE for n in lengths)
    lines, keys = [], []
    if 5 * cut > len(docs) and 10 * whole >= 9 * len(docs):
        lines += _comment(f"{cut:,} of {len(docs):,} documents are longer than a default chunk ({size} characters) "
                          f"and {whole:,} are at most {PASSAGE:,}: passages, each kept whole in one chunk")
        keys.append(f"size: {PASSAGE}")
        size = PASSAGE
    else:
        lines += _comment(f"chunking: {size} characters a chunk, the default; the documents are "
                          f"{_median_chars(docs):,} characters long on median")
    pieces = sum(n > size for n in lengths)
    titles = sum(isinstance(t := d.metadata.get(TITLE), str) and bool(t.strip()) for d in docs)
    if entities:
        lines += _comment("each chunk embeds its document's title before its text: a long page's later chunks "
                          "keep their subject")
        keys.append("embed_fields: [title]")
    elif 5 * pieces > len(docs) and 2 * titles > len(docs):
        lines += _comment(f"{pieces:,} of {len(docs):,} documents are cut in pieces and {titles:,} carry a {TITLE}: "
                          "each chunk embeds its document's title before its text, so a later piece keeps its "
                          "subject")
        keys.append("embed_fields: [title]")
    return [*lines, f"chunking: {{{', '.join(keys)}}}"] if keys else lines


def _log_lines(starter: Starter, logs: str | Path | None, out: str | Path) -> list[str]:
    survey = starter.logs
    if survey is None:
        starter.notes.append("no --logs given: set `logs:` to the query logs (or pass --logs to nightly); the window "
                             "is the default")
        return _comment("logs: none given; set `logs:` to the query logs (docs/operations.md#logs), or pass --logs "
                        "to planbake nightly. The mining window stays the default.")
    if survey.missing:
        found = ", ".join(survey.columns) or "none"
        renames = "; ".join(f"`{col}` may be `{want}`" for want, col in survey.renames.items())
        starter.notes.append(f"{logs}: the logs name the columns {found}, but ingest reads ts, user and query "
                             f"(missing: {', '.join(survey.missing)}){'; ' + renames if renames else ''}: rename "
                             "them, then set `logs:`")
        return [*_comment(f"the logs name the columns {found}; ingest reads ts, user and query: rename them, then "
                          "uncomment the next line"), f"# logs: {json.dumps(_relative(logs or '', out))}"]
    lines = [*_comment(f"{survey.rows:,} valid log rows of {survey.users:,} users in {survey.files:,} {survey.kind} "
                       f"file{'s' if survey.files != 1 else ''}" + (f"; {survey.other:,} rows ingest would "
                                                                    "quarantine" if survey.other else "")),
             f"logs: {json.dumps(_relative(logs or '', out))}"]
    if not survey.rows:
        starter.notes.append(f"{logs}: no valid row (a readable ts, a user and a query); the window stays the "
                             "default")
        return lines
    assert survey.first is not None and survey.last is not None
    starter.window_days = survey.days
    mining = Mining()
    lines += ["mining:",
              *_comment(f"the logs span {survey.days} day{'s' if survey.days != 1 else ''} ({survey.first.date()} "
                        f"to {survey.last.date()}): each night mines that many days up to the newest logged one",
                        "  "),
              f"  window_days: {survey.days}"]
    if survey.users < mining.min_users:
        lines += [*_comment(f"{survey.users} user{'s' if survey.users != 1 else ''} in the logs, fewer than the "
                            f"default min_users ({mining.min_users}): a shape needs that many distinct users to recur",
                            "  "),
                  f"  min_users: {survey.users}"]
        starter.notes.append(f"{logs}: {survey.users} user{'s' if survey.users != 1 else ''} only; min_users set "
                             f"to {survey.users} (default {mining.min_users}) so that shapes can recur")
    return lines
