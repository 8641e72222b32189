"""Read a corpus (JSONL or a folder of Markdown with YAML front matter) and chunk long documents."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from schemas.config import BooleanKey, Chunking, DuplicateKey, read_yaml, yaml_problem
from schemas.digest import fingerprint
from schemas.errors import CorpusError
from schemas.text import words


@dataclass
class Document:
    id: str
    text: str
    metadata: dict[str, Any]
    source: str  # file:line, for error messages
    key_lines: dict[str, str] = field(default_factory=dict)  # metadata key -> its own file:line (front matter)

    def source_of(self, key: str) -> str:
        """file:line of a metadata key, for error messages."""
        return self.key_lines.get(key, self.source)


@dataclass
class Chunk:
    id: str
    doc_id: str
    position: int
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        return fingerprint([self.text, self.metadata], 32)


_SCALAR = (str, int, float, bool, type(None))
_RECORD = ("id", "text", "metadata")  # a JSONL record's own fields; its other top-level fields are metadata


def _check_record(rec: Any, where: str, key_lines: dict[str, str] | None = None) -> Document:
    key_lines = key_lines or {}
    if not isinstance(rec, dict):
        raise CorpusError(f"{where}: expected a JSON object with id, text, metadata; got {type(rec).__name__}")
    if "id" not in rec and "_id" in rec:  # BEIR's corpus.jsonl names its ids "_id"
        rec = {"id": rec["_id"], **{k: v for k, v in rec.items() if k != "_id"}}
    for key in ("id", "text"):
        if key not in rec:
            raise CorpusError(f"{where}: missing field '{key}'; every record needs id and text")
    doc_id, text = rec["id"], rec["text"]
    if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool) or str(doc_id).strip() == "":
        raise CorpusError(f"{key_lines.get('id', where)}: field 'id' must be a non-empty string, got {doc_id!r}")
    if not isinstance(text, str) or not text.strip():
        raise CorpusError(f"{where}: field 'text' must be a non-empty string (document {doc_id!r})")
    if not words(text):  # only invisible characters or marks: a chunk no question can find
        raise CorpusError(f"{where}: field 'text' has no words (document {doc_id!r}); give the document's text or "
                          "remove the record")
    meta = rec.get("metadata") or {}
    if not isinstance(meta, dict):
        raise CorpusError(f"{where}: field 'metadata' must be an object of facet -> value, got "
                          f"{type(meta).__name__}")
    meta = {**meta, **_top_level(rec, meta, where, doc_id)}
    for key, value in meta.items():
        if not isinstance(key, str):  # YAML reads `2026:` as a number and `yes:` as true
            raise CorpusError(f"{key_lines.get(str(key), where)}: metadata key {key!r} of document {doc_id!r} is "
                              f"not text; quote it ('{key}':) or rename it")
        if not isinstance(value, _SCALAR):
            raise CorpusError(f"{key_lines.get(key, where)}: metadata '{key}' of document {doc_id!r} must be a "
                              f"string, number or null, got {type(value).__name__}")
    return Document(str(doc_id), text, dict(meta), where, key_lines)


def _top_level(rec: dict[str, Any], meta: dict[str, Any], where: str, doc_id: Any) -> dict[str, Any]:
    """A record's other top-level fields holding a string, a number or true or false, read as metadata: `{"id",
    "title", "text"}` (BEIR's corpus format, most page dumps) gives its documents a title. A field given both ways
    must agree; a null, a list or an object at the top level is not read."""
    lifted = {k: v for k, v in rec.items() if k not in _RECORD and v is not None and isinstance(v, _SCALAR)}
    for key, value in lifted.items():
        if key in meta and meta[key] != value:
            raise CorpusError(f"{where}: '{key}' of document {doc_id!r} is {value!r} as a field and {meta[key]!r} in "
                              "its metadata; keep one")
    return lifted


def _read_jsonl(path: Path) -> Iterator[Document]:
    if _opens_array(path):
        yield from _read_json_array(path)
        return
    with path.open("rb") as fh:
        for n, raw in enumerate(fh, start=1):
            where = f"{path}:{n}"
            try:
                line = raw.decode("utf-8").strip().removeprefix("\ufeff")  # a byte order mark opens line 1
            except UnicodeDecodeError:
                raise CorpusError(f"{where}: not UTF-8 text; re-encode the file as UTF-8") from None
            if not line:
                continue
            try:
                rec = json.loads(line, object_pairs_hook=partial(_no_twice, where))
            except json.JSONDecodeError as exc:
                raise CorpusError(f"{where}: not valid JSON ({exc.msg.removesuffix(' at')} at column {exc.colno}); "
                                  "each line must be one JSON object") from None
            yield _check_record(rec, where)


def _opens_array(path: Path) -> bool:
    """Whether the file's first character, white space and a byte order mark aside, is "[": one JSON array."""
    with path.open("rb") as fh:
        head = fh.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()
    return head.startswith(b"[")


def _read_json_array(path: Path) -> Iterator[Document]:
    """A file holding one JSON array of document objects (`[{"id": ..., "text": ...}, ...]`, as exports write
    them); each record is checked as a JSONL line is, and its errors name the line it opens on."""
    raw = _read_text(path)
    at, line, counted = raw.index("[") + 1, 1, 0

    def skip(i: int) -> int:
        while i < len(raw) and raw[i] in " \t\r\n":
            i += 1
        return i

    first = True
    while True:
        at = skip(at)
        line, counted = line + raw.count("\n", counted, at), at
        if at < len(raw) and raw[at] == "]":
            if raw[at + 1:].strip():
                raise CorpusError(f"{path}:{line}: text after the JSON array's closing ']'; the file must hold one "
                                  "array of documents, or one JSON object a line")
            return
        if not first:
            if at >= len(raw) or raw[at] != ",":
                raise CorpusError(f"{path}:{line}: expected ',' or ']' after a document of the JSON array")
            at = skip(at + 1)
            line, counted = line + raw.count("\n", counted, at), at
        where = f"{path}:{line}"
        try:
            rec, at = json.JSONDecoder(object_pairs_hook=partial(_no_twice, where)).raw_decode(raw, at)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg.removesuffix(' at')} at column "
                              f"{exc.colno}); the file must hold one array of documents") from None
        first = False
        yield _check_record(rec, where)


def _no_twice(where: str, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refused when it gives a key twice (as front matter is): only the last would count."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise CorpusError(f"{where}: key '{key}' is given twice in one object and only the last would count; "
                              "keep one")
        seen.add(key)
    return dict(pairs)


_OPEN = re.compile(r"---[ \t]*(?:\r?\n|$)")  # a first line "---" alone opens front matter ("----" is a rule)
_CLOSE = re.compile(r"\n---[ \t]*(?:\r?\n|$)")  # the line that closes front matter: "---" alone


def _read_text(path: Path) -> str:
    """A whole file's text, without a byte order mark if it has one; a byte that is no UTF-8 is refused at its line."""
    data = path.read_bytes().removeprefix(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = data[:exc.start].count(b"\n") + 1  # the line of the first byte that is no UTF-8
        raise CorpusError(f"{path}:{at}: not UTF-8 text; re-encode the file as UTF-8") from None


def _read_markdown(path: Path) -> Document:
    raw = _read_text(path)
    meta: dict[str, Any] = {}
    key_lines: dict[str, str] = {}
    body = raw
    if not _OPEN.match(raw) and _misplaced_front_matter(raw.lstrip()):
        at = raw[:len(raw) - len(raw.lstrip())].count("\n") + 1
        raise CorpusError(f"{path}:{at}: front matter opens on line {at}, where it would be read as text; "
                          "remove the blank lines before its '---'")
    if _OPEN.match(raw):
        close = _CLOSE.search(raw, 3)
        if close is None:
            raise CorpusError(f"{path}:1: front matter opened with '---' is never closed; add a '---' line")
        try:
            meta = read_yaml(raw[3:close.start()]) or {}  # its first line is the rest of the file's line 1
        except BooleanKey as bad:
            raise CorpusError(f"{path}:{bad.line}: front matter key '{bad.key}' is read by YAML as true or false, not "
                              f"as a name; quote it (\"{bad.key}\":)") from None
        except DuplicateKey as dup:
            raise CorpusError(f"{path}:{dup.line}: front matter key '{dup.key}' is given twice (first at line "
                              f"{dup.first}) and only the last would count; keep one") from None
        except yaml.YAMLError as exc:
            line, problem = yaml_problem(exc)
            raise CorpusError(f"{path}:{1 if line is None else line + 1}: front matter is not valid YAML: {problem}; "
                              "fix the syntax") from None
        body = raw[close.end():].lstrip("\n")
        if isinstance(meta, dict):
            key_lines = {key: f"{path}:{line}" for key, line in _key_lines(raw[3:close.start()]).items()}
    if not isinstance(meta, dict):
        raise CorpusError(f"{path}:1: front matter must be a mapping of field: value")
    if "title" not in meta and (heading := _TITLE_HEADING.match(body)):  # "# Parental leave": its title
        meta["title"] = heading.group(1)
    rec = {"id": meta.pop("id", path.stem), "text": body, "metadata": meta}
    return _check_record(rec, f"{path}:1", key_lines)


# a first line "# Title" (an ATX heading: at most three spaces before it; a line of four is code)
_TITLE_HEADING = re.compile(r"(?:[ \t]*\r?\n)* {0,3}#[ \t]+(\S[^\r\n]*?)(?:[ \t]+#+)?[ \t]*(?:\r\n|\r|\n|$)")


def _misplaced_front_matter(text: str) -> bool:
    """Whether text opens with a block between two '---' lines that reads as YAML keys (not two rules)."""
    close = _CLOSE.search(text, 3) if _OPEN.match(text) else None
    if close is None:
        return False
    try:
        return isinstance(read_yaml(text[3:close.start()]), dict)
    except (yaml.YAMLError, DuplicateKey, BooleanKey):
        return True  # meant as keys, written wrong: the error would be lost as text


def _key_lines(front: str) -> dict[str, int]:
    """Top-level front matter key -> its line in the file (the front matter opens on line 1)."""
    node = yaml.compose(front, Loader=yaml.SafeLoader)
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {k.value: k.start_mark.line + 1 for k, _ in node.value if isinstance(k, yaml.ScalarNode)}


def corpus_not_found(path: str | Path, where: str = "") -> CorpusError:
    """`where`: the config setting that named the path, if any (" (from demo.yaml:24: `corpus:`)")."""
    fix = ", or fix the config's path" if where else ""
    return CorpusError(f"{path}: corpus not found{where}; pass --corpus with a JSONL file or a Markdown folder{fix}")


def read_corpus(path: str | Path) -> list[Document]:
    """All documents of a corpus; raises CorpusError on the first bad record, before anything is written."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.suffix.lower() == ".md" and f.is_file())
        if not files:
            raise CorpusError(f"{p}: no Markdown (*.md) files in this folder")
        docs = [_read_markdown(f) for f in files]
    elif p.is_file() and p.suffix.lower() == ".md":  # one Markdown document
        docs = [_read_markdown(p)]
    elif p.is_file():
        docs = list(_read_jsonl(p))
    else:
        raise corpus_not_found(p)
    seen: dict[str, str] = {}
    for d in docs:
        if d.id in seen:
            raise CorpusError(f"{d.source_of('id')}: duplicate document id {d.id!r} (first at {seen[d.id]}); "
                              "ids must be unique")
        seen[d.id] = d.source_of("id")
    if not docs:
        raise CorpusError(f'{p}: the corpus is empty; write one document a line, as {{"id": "travel", "text": '
                          '"...", "metadata": {"office": "Berlin"}}')
    return docs


def sample_corpus(path: str | Path, limit: int) -> tuple[list[Document], bool]:
    """The first `limit` documents of a corpus (a JSONL file's first records, a Markdown folder's first files in
    path order), each checked as `read_corpus` checks it, and whether the corpus holds more."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.rglob("*") if f.suffix.lower() == ".md" and f.is_file())
        if not files:
            raise CorpusError(f"{p}: no Markdown (*.md) files in this folder")
        return [_read_markdown(f) for f in files[:limit]], len(files) > limit
    if not p.is_file():
        raise corpus_not_found(p)
    if p.suffix.lower() == ".md":
        return [_read_markdown(p)], False
    docs = list(itertools.islice(_read_jsonl(p), limit + 1))
    if not docs:
        raise CorpusError(f"{p}: the corpus is empty; write one document a line")
    return docs[:limit], len(docs) > limit


def chunk_document(doc: Document, chunking: Chunking) -> list[Chunk]:
    """Split into pieces of about `size` characters: a piece ends at the last paragraph end in its window (a blank
    line, or a Markdown heading's line) and the next opens the next paragraph; else it ends at its last sentence
    end, or between words, where that keeps it over half the size, and the next overlaps it by `overlap`. A
    piece's white space is one space, as the text's is.

    A document that fits in one chunk keeps its id as the chunk id; pieces get `<id>#<n>`.
    """
    text = " ".join(doc.text.split())
    if len(text) <= chunking.size:
        return [Chunk(doc.id, doc.id, 0, text, doc.metadata)]
    # the same text with "\n" for the one space between two paragraphs: the same length, the same offsets
    marked = "\n".join(" ".join(p.split()) for p in _PARAGRAPH.split(doc.text) if p.strip())
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + chunking.size, len(text))
        paragraph = marked.rfind("\n", start, end) if end < len(text) else -1
        if paragraph > start + chunking.size // 2:  # the next piece opens the next paragraph: no overlap
            pieces.append(text[start:paragraph].strip())  # `start` may be a space an overlap's cut left
            start = paragraph + 1
            continue
        if end < len(text):
            cut = max(text.rfind(". ", start, end), text.rfind("? ", start, end), text.rfind("! ", start, end))
            if cut > start + chunking.size // 2:
                end = cut + 1
            else:
                space = text.rfind(" ", start, end)
                end = space if space > start else end
        pieces.append(text[start:end].strip())
        if end >= len(text):
            break
        nxt = max(end - chunking.overlap, start + 1)
        space = text.find(" ", nxt)
        start = space + 1 if 0 <= space < end else nxt
    return [Chunk(f"{doc.id}#{i}", doc.id, i, p, doc.metadata) for i, p in enumerate(pieces) if p]


_PARAGRAPH = re.compile(r"\n[ \t\r\f\v]*\n\s*|\n(?= {0,3}#{1,6}[ \t])")  # a blank line, or before a heading


def chunk_corpus(docs: list[Document], chunking: Chunking) -> list[Chunk]:
    """Every document's chunks; a document whose id is another's chunk id ("guide#0" beside a long "guide") is
    refused: one chunk would silently replace the other."""
    chunks: list[Chunk] = []
    owner: dict[str, str] = {}
    source = {d.id: d.source_of("id") for d in docs}
    for doc in docs:
        for chunk in chunk_document(doc, chunking):
            first = owner.setdefault(chunk.id, chunk.doc_id)
            if first != chunk.doc_id:
                odd, long = (chunk.doc_id, first) if chunk.id == chunk.doc_id else (first, chunk.doc_id)
                raise CorpusError(f"{source[odd]}: document id {odd!r} is also the id of a chunk of document "
                                  f"{long!r} ({source[long]}), whose pieces are numbered '{long}#0', '{long}#1', "
                                  f"...; rename the document {odd!r}")
            chunks.append(chunk)
    return chunks
