"""The planted personal data through a whole nightly run: every value of `tests/test_pii_planted.py` is logged by
several users, as well-formed rows, follow-ups, rows with extra fields, rows the quarantine keeps and lines that
are no JSON at all; after the nightly flow, a scan of every file under the output root (every column of every
Parquet file, nested ones included; every key and value of every JSON file; the report's Markdown and its PNGs'
metadata; the string arrays of every .npz file; every file's bytes besides) and of every version of the LanceDB
table finds none of them, in any spelling: lower or upper case, spaced, dotted, dashed or run together."""

from __future__ import annotations

import gzip
import io
import json
import re
import unicodedata
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from schemas.publication import current_run
from tests.conftest import DEMO_CONFIG
from tests.test_pii_planted import CASES, QUESTIONS, Case
from tests.test_poisoning import NORMAL, OFFICES

USERS = [f"u-{n:02d}" for n in range(12)]
DAY = datetime(2026, 11, 23, 8)
SINCE, UNTIL = date(2026, 11, 23), date(2026, 11, 29)


# --- the log -------------------------------------------------------------------------------------------------------


def _row(ts: datetime, user: str | None, query: Any, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"ts": ts.isoformat() + "Z"}
    if user is not None:
        row["user"] = user
    return {**row, "query": query, **extra}


def _bad_lines(i: int, case: Case, ts: datetime, user: str) -> list[str]:
    """The case's text in a line the quarantine keeps, each case in one of several kinds of bad line."""
    row = _row(ts, user, case.text)
    kind = i % 9
    if kind == 0:  # JSON cut off mid-value
        return [json.dumps(row)[:-3]]
    if kind == 1:  # no JSON at all: an application's plain log line
        return [f"{ts:%Y-%m-%d %H:%M:%S} INFO user={user} asked: {case.text}"]
    if kind == 2:  # a Python dict written instead of JSON
        return [str(row)]
    if kind == 3:  # a broken line whose earlier turns hold the value
        return [json.dumps(_row(ts, user, "what about Lisbon?", history=[case.text], session={"note": case.value}))
                [:-2]]
    if kind == 4:  # no user
        return [json.dumps(_row(ts, None, case.text))]
    if kind == 5:  # a timestamp that is no date
        return [json.dumps({**row, "ts": "yesterday " + case.value})]
    if kind == 6:  # the question as a list
        return [json.dumps({**row, "query": [case.text, {"history": case.value}]})]
    if kind == 7:  # too long (mining.max_query_chars is 2000): the value stays in the first 200 characters kept
        return [json.dumps({**row, "query": case.text + " please" * 400})]
    return [json.dumps({**row, "ts": "2031-01-01T00:00:00Z"})]  # in the future


def planted_log(path: Path) -> tuple[Path, int]:
    """A JSONL log of the window's days holding every planted case; returns it and its count of lines."""
    lines: list[str] = []
    ts = DAY
    # a plain workload, so the run has shapes, templates and a cache: each phrasing asked by every user
    for n, user in enumerate(USERS):
        for k, text in enumerate(NORMAL):
            lines.append(json.dumps(_row(ts, user, text.format(OFFICES[(n + k) % 3], OFFICES[(n + k + 1) % 3]))))
            ts += timedelta(minutes=3)
    for i, case in enumerate(CASES):
        user = USERS[i % len(USERS)]
        ts = DAY + timedelta(days=i % 7, minutes=7 * i)
        # a well-formed row; every third with the earlier turns and a session in fields ingest does not read
        extra = {"history": [case.text], "session": {"contact": case.value}} if i % 3 == 0 else {}
        lines.append(json.dumps(_row(ts, user, case.text, **extra)))
        # a follow-up of the same user seconds later, holding the value again
        question = next(q for q in QUESTIONS if q in case.text)
        follow = case.text.replace(question, f"what about {OFFICES[i % 3]}")
        lines.append(json.dumps(_row(ts + timedelta(seconds=8), user, follow)))
        lines += _bad_lines(i, case, ts + timedelta(seconds=20), user)
    # a user id that is itself personal data: replaced in the quarantine, hashed everywhere else
    for i, case in enumerate(CASES[:: 20]):
        lines.append(json.dumps(_row(DAY + timedelta(days=6, seconds=i), case.value, NORMAL[0].format("Berlin"))))
        lines.append(json.dumps(_row(DAY + timedelta(days=6, seconds=i), case.value, ""))[:-4])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, len(lines)


# --- the scan ------------------------------------------------------------------------------------------------------

# words of a planted name or email that are no personal data: the spelling of an email and its made-up domains
_SPELLING = {"dot", "at", "com", "org", "net", "de", "co", "uk", "example", "mail"}


def _a(text: str) -> str:
    """Lower case, without blanks, dots and dashes: "QQ 12 34 56 C" and "qq123456c" are one form."""
    return re.sub(r"[\s.\-\u2010-\u2015]+", "", unicodedata.normalize("NFKC", text).casefold())


def _b(text: str) -> str:
    """Letters and digits alone: "+44 (20) 7946-0958" is "442079460958", "jan [at] example" "janatexample"."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).casefold())


@dataclass(frozen=True)
class Needles:
    """What a planted value may be found as: its forms under `_a` and `_b`; its runs of six or more digits standing
    alone (a number cut out of it); the words of five or more letters of a name or an email's local part."""

    forms: dict[str, str]
    digits: dict[str, str]
    words: dict[str, str]

    @classmethod
    def of(cls, values: list[tuple[str, str]], clean: str) -> Needles:
        """(kind, value) pairs; `clean`: text of the inputs that is not personal data (the corpus, the questions),
        whose words are not looked for."""
        forms = {f: v for _, v in values for f in (_a(v), _b(v)) if len(f) >= 6}
        digits = {d: v for _, v in values for d in re.findall(r"\d{6,}", v)}
        known = set(re.findall(r"[^\W\d_]+", clean.casefold())) | _SPELLING
        words = {w: v for kind, v in values if kind in ("name", "email")
                 for w in re.findall(r"[^\W\d_]{5,}", v.casefold()) if w not in known}
        return cls(forms, digits, words)

    def find(self, pieces: list[str]) -> list[tuple[str, str]]:
        """(what was found, the planted value) in any of `pieces`."""
        a = "\x00".join(_a(p) for p in pieces)
        b = "\x00".join(_b(p) for p in pieces)
        raw = "\x00".join(unicodedata.normalize("NFKC", p).casefold() for p in pieces)
        found = [(f, v) for f, v in self.forms.items() if f in a or f in b]
        found += [(d, v) for d, v in self.digits.items() if re.search(rf"(?<![0-9a-z]){d}(?![0-9a-z])", raw)]
        found += [(w, v) for w, v in self.words.items() if re.search(rf"(?<![^\W\d_]){w}(?![^\W\d_])", raw)]
        return found


def _strings(value: Any) -> Iterator[str]:
    """Every text in a value read from a file: strings, bytes and integers (an id stored as a number), the keys and
    values of mappings, the items of lists, at any depth. Floats (vectors, scores) hold no text and are skipped: a
    vector's 384 floats written out would put a planted digit run in the scan by chance."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes):
        yield value.decode("utf-8", errors="replace")
    elif isinstance(value, int) and not isinstance(value, bool):
        yield str(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, date | datetime):
        yield value.isoformat()


def _table_strings(table: pa.Table) -> list[str]:
    """Every column of an Arrow table (nested ones too), and its schema's metadata."""
    out: list[str] = []
    for field, column in zip(table.schema, table.columns, strict=True):
        out.append(field.name)
        out += _strings(column.to_pylist())
    for meta in (table.schema.metadata or {}, *(f.metadata or {} for f in table.schema)):
        out += _strings(dict(meta))
    return out


def _file_strings(path: Path) -> list[str]:
    """A file's texts by its kind (see `_table_strings`, `_strings`), and its bytes as text in any case (a file of a
    kind not read here is scanned too; compressed pages are noise there, and no planted form is short)."""
    data = path.read_bytes()
    pieces = [data.decode("utf-8", errors="replace")]
    name = path.name.casefold()
    if name.endswith(".gz"):
        pieces.append(gzip.decompress(data).decode("utf-8", errors="replace"))
    if name.endswith(".parquet"):
        pieces += _table_strings(pq.read_table(path))
    elif name.endswith(".json"):
        pieces += _strings(json.loads(data))
    elif name.endswith(".npz"):
        with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            for key in arrays.files:
                pieces.append(key)
                if arrays[key].dtype.kind in "USO":
                    pieces += _strings(arrays[key].tolist())
        with zipfile.ZipFile(io.BytesIO(data)) as archive:  # each member's bytes, compressed or not
            pieces += [archive.read(m).decode("utf-8", errors="replace") for m in archive.namelist()]
    elif name.endswith(".png"):
        with Image.open(path) as image:
            pieces += _strings({k: v for k, v in image.info.items() if isinstance(v, str | bytes)})
            pieces += _strings(dict(getattr(image, "text", {})))
    return pieces


@dataclass
class Scan:
    leaks: list[tuple[str, str, str]]  # (where, what was found, the planted value)
    files: int
    versions: int


def lance_versions(root: Path) -> Iterator[tuple[str, pa.Table]]:
    """(name, rows) for every version of every LanceDB table under root: `list_versions`, then `checkout` each."""
    import lancedb

    for db_dir in sorted({p.parent for p in root.rglob("*.lance") if p.is_dir()}):
        db = lancedb.connect(str(db_dir))
        for name in db.list_tables().tables:
            table = db.open_table(name)
            for version in table.list_versions():
                table.checkout(version["version"])
                yield f"{db_dir.relative_to(root)}/{name}@{version['version']}", table.to_arrow()
            table.checkout_latest()


def scan(root: Path, needles: Needles) -> Scan:
    """Every file under root, and every version of every LanceDB table under it, for the needles."""
    leaks: list[tuple[str, str, str]] = []
    files = sorted(p for p in root.rglob("*") if p.is_file())
    for f in files:
        leaks += [(str(f.relative_to(root)), n, v) for n, v in needles.find(_file_strings(f))]
    versions = 0
    for where, table in lance_versions(root):
        versions += 1
        leaks += [(where, n, v) for n, v in needles.find(_table_strings(table))]
    return Scan(leaks, len(files), versions)


# --- the nightly ---------------------------------------------------------------------------------------------------

PLANTED = [(c.kind, c.value) for c in CASES]


def _clean_text(corpus: Path) -> str:
    """The inputs' text that is no personal data: the corpus, the config, the questions the values are planted in."""
    return "\n".join([corpus.read_text(encoding="utf-8"), DEMO_CONFIG.read_text(encoding="utf-8"), *NORMAL,
                      *QUESTIONS, *OFFICES])


@pytest.fixture(scope="module")
def needles(seed_corpus: Path) -> Needles:
    return Needles.of(PLANTED, _clean_text(seed_corpus))


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory: pytest.TempPathFactory, prefect_harness: None,
                seed_corpus: Path) -> tuple[Path, Path]:
    """The planted log and the output root of one nightly run over it (the seed handbook as the corpus)."""
    from flows.nightly import nightly_flow

    work = tmp_path_factory.mktemp("pii-nightly")
    (work / "logs").mkdir()
    log, _ = planted_log(work / "logs" / "queries.jsonl")
    out = work / "out"
    # forced past the gate: a first run with this many bad lines may fail its floors, and it is the files that count
    nightly_flow(corpus=str(seed_corpus), logs=str(log), config=str(DEMO_CONFIG), out=str(out), since=SINCE,
                 until=UNTIL, quiet=True, force=True)
    return log, out


def test_the_log_holds_every_planted_value_in_every_kind_of_line(planted_run: tuple[Path, Path],
                                                                 needles: Needles) -> None:
    log, _ = planted_run
    lines = log.read_text(encoding="utf-8").splitlines()
    assert len(CASES) == 222
    found = {v for _, v in needles.find(lines)}
    assert found == {v for _, v in PLANTED}  # the scan finds each value where it was planted
    rows = []
    for line in lines:
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    assert len({r.get("user") for r in rows if isinstance(r, dict)} & set(USERS)) == len(USERS) >= 10
    assert len(lines) - len(rows) >= len(CASES) // 3  # broken JSON, Python dicts, plain log lines
    assert sum(1 for r in rows if isinstance(r, dict) and "history" in r) >= len(CASES) // 3


def test_a_nightly_over_the_planted_log_leaves_no_planted_value_anywhere(planted_run: tuple[Path, Path],
                                                                         needles: Needles) -> None:
    _, out = planted_run
    run = current_run(out)
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    # the values went where they should be looked for: rows were mined, shapes recur, bad lines were quarantined
    assert manifest["mine"]["recurring"] > len(NORMAL) and manifest["plan"]["cache_entries"] > 0
    quarantine = pq.read_table(run / "quarantine.parquet").to_pylist()
    reasons = {q["reason"] for q in quarantine}
    assert len(quarantine) >= len(CASES) and {"unparsable line", "missing user", "bad timestamp", "query too long",
                                               "query is not text", "timestamp in the future"} <= reasons, reasons
    assert sum("{" in q["raw"] for q in quarantine) >= len(CASES) // 2  # typed placeholders where the values were
    shapes = pq.read_table(run / "shapes.parquet").to_pylist()
    assert any("{iban}" in s["skeleton"] or "{national_id}" in s["skeleton"] for s in shapes)  # a planted shape
    result = scan(out, needles)
    assert result.files >= 30 and result.versions >= 1
    assert not result.leaks, result.leaks[:20]


def test_the_scan_finds_a_planted_value_written_under_the_root(planted_run: tuple[Path, Path], needles: Needles,
                                                              tmp_path: Path) -> None:
    """The scan can fail: a value respelled in a nested Parquet column is found, and so is one that only an older
    version of the LanceDB table holds."""
    import shutil

    import lancedb

    out = tmp_path / "out"
    shutil.copytree(planted_run[1], out)
    nino = next(c.value for c in CASES if re.fullmatch(r"[a-z]{2}\d{6}[a-d]", c.value))
    respelled = " ".join(nino[i:i + 2] for i in range(0, len(nino), 2)).upper()  # "QQ 12 34 56 C"
    (out / "runs" / "extra").mkdir()
    pq.write_table(pa.table({"x": [[{"note": "fine"}, {"note": f"ni {respelled}"}]]}),
                   out / "runs" / "extra" / "nested.parquet")
    table = lancedb.connect(str(out / "lancedb")).open_table("chunks")
    row = table.to_arrow().slice(0, 1).to_pylist()[0]
    iban_value = next(c.value for c in CASES if c.kind == "iban")
    table.add([{**row, "id": "planted", "text": f"pay {iban_value.lower()}"}])
    table.delete("id = 'planted'")  # the latest version no longer holds it; the one before does
    leaks = scan(out, needles).leaks
    assert ("runs/extra/nested.parquet", _a(respelled), nino) in leaks
    versions = {where for where, _, value in leaks if value == iban_value and "@" in where}
    assert len(versions) == 1, leaks
