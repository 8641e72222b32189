"""The files of a published run folder, each declared once: its name, the stage that writes it, the Arrow schema a
Parquet file is written and read with, and whether the readers of a stage's outputs need it.

Every other module names a run's file by its constant here (`run_dir / CACHE.name`); `tests/test_contracts.py`
holds the production sources to that. Importable without pyarrow (the command line starts without it): a file's
schema is looked up in `schemas.arrow` when asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    import pyarrow as pa

Stage = Literal["index", "mine", "plan"]
STAGES: tuple[Stage, ...] = ("index", "mine", "plan")  # the stages a run redoes, or carries over from the live one
READERS: tuple[Stage, ...] = ("mine", "plan")  # the stages whose outputs have readers (`schemas.publication.damage`)


@dataclass(frozen=True)
class PublishedFile:
    name: str
    stage: Stage | Literal["publish"]  # what writes it: a stage (a run that skips it carries it over), or publishing
    schema_name: str = ""  # a Parquet file's Arrow schema in `schemas.arrow` ("": none, or one made per config)
    reader: Stage | None = None  # the stage whose readers read it: checked for them where the manifest lists it
    needed: bool = False  # those readers need it in every publication that records its stage
    optional: tuple[str, ...] = ()  # columns a publication made before them lacks: read as nulls

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema the file is written and read with."""
        from schemas import arrow  # here: pyarrow only for a caller that reads or writes the table

        if not self.schema_name:
            raise ValueError(f"{self.name}: no Arrow schema declared")
        schema: pa.Schema = getattr(arrow, self.schema_name)
        return schema


CHUNKS = PublishedFile("chunks.parquet", "index")  # schema: `schemas.arrow.chunk_schema(config, dim)`
SHAPES = PublishedFile("shapes.parquet", "mine", "SHAPE_SCHEMA", reader="mine", needed=True)
QUESTIONS = PublishedFile("questions.parquet", "mine", "QUESTION_SCHEMA", reader="mine", needed=True)
QUARANTINE = PublishedFile("quarantine.parquet", "mine", "QUARANTINE_SCHEMA")
MERGE = PublishedFile("merge.npz", "mine")  # last night's merge: read by the next night's mining
PLAIN_WORDS = PublishedFile("plain_words.json", "mine", reader="plan")  # for lookup's scrubber
NAMES = PublishedFile("names.json", "mine", reader="plan")  # the corpus's titles: names lookup reads as one
TEMPLATES = PublishedFile("templates.parquet", "plan", "TEMPLATE_SCHEMA", reader="plan", needed=True,
                          optional=("member_hashes",))  # kept since 2026-12-05
CACHE = PublishedFile("cache.parquet", "plan", "CACHE_SCHEMA", reader="plan", needed=True)
CONFIG = PublishedFile("config.json", "plan", reader="plan", needed=True)  # the config the plans were made with
LEXICON = PublishedFile("lexicon.json", "plan", reader="plan", needed=True)  # the facet values the lexicon reads
VOCABULARY = PublishedFile("vocabulary.json", "plan", reader="plan")  # plans in the corpus's words
CLASS_ROUTES = PublishedFile("class_routes.json", "plan", reader="plan")  # routes of unlogged skeletons by class
BRIDGE_TERMS = PublishedFile("bridge_terms.json", "plan", reader="plan")  # bridges of unlogged skeletons by term
GATE = PublishedFile("gate.json", "publish")  # the quality gate's figures: the next run's baseline
MANIFEST = PublishedFile("manifest.json", "publish")  # what is in the run folder (`Manifest`)

FILES = (CHUNKS, SHAPES, QUESTIONS, QUARANTINE, MERGE, PLAIN_WORDS, NAMES, TEMPLATES, CACHE, CONFIG, LEXICON,
         VOCABULARY, CLASS_ROUTES, BRIDGE_TERMS, GATE, MANIFEST)


def written_by(stage: Stage) -> tuple[str, ...]:
    """The files a stage writes into its run folder."""
    return tuple(f.name for f in FILES if f.stage == stage)


def needed_by(stage: Stage) -> tuple[str, ...]:
    """The files every reader of a stage's outputs needs."""
    return tuple(f.name for f in FILES if f.reader == stage and f.needed)


def read_by(stage: Stage) -> tuple[str, ...]:
    """The files a reader of a stage's outputs reads: those it needs, and those it reads where the manifest lists
    them (a publication made before a file was kept reads without it)."""
    return tuple(f.name for f in FILES if f.reader == stage)


class Manifest(TypedDict, total=False):
    """manifest.json: what a run folder holds and how it was made. Each stage's section is what the stage's run
    returned (`index`: `tasks.index.stage`'s result with the table's `version`, `tag`, `uri` and `path`; `mine`:
    `MineResult.to_json`; `plan`: `PlanResult.to_json`), carried over from the run that made it."""

    run_id: str
    published_at: str  # ISO 8601, UTC, to the second
    previous: str | None  # the run id of the publication this run followed
    files: list[str]  # the run folder's files but the manifest (none listed in a publication made before)
    config: str  # the config file the run was started with
    plans_config: str  # the config file the plans were made with ("": not known)
    stages_run: list[Stage]  # the stages this run redid; the others' sections and files are carried over
    made_by: dict[str, str]  # stage -> the run id whose outputs the stage's are
    lexicon_hash: str
    index: dict[str, Any]
    mine: dict[str, Any]
    plan: dict[str, Any]
    gate: dict[str, Any]  # the quality gate's verdict (`Verdict.to_json`)
