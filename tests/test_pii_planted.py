"""Planted personal data of every kind the scrubber types, in several countries' conventions: each case is scrubbed
to its placeholder and leaves none of its letters' and digits' runs. Identifiers get valid check digits from the
libraries the scrubber checks them with (python-stdnum, phonenumbers); the cases are generated with a fixed seed.
Also: the demo's clean questions are left alone, and a quarantined line is scrubbed with the same scrubber."""

from __future__ import annotations

import gzip
import json
import random
import re
import string
import unicodedata
from collections import Counter
from datetime import datetime
from pathlib import Path

import phonenumbers
import pytest
from phonenumbers import PhoneNumberFormat
from stdnum import iban, luhn
from stdnum.de import idnr
from stdnum.iso7064 import mod_11_10
from stdnum.nl import bsn
from stdnum.us import ssn

from schemas.config import load_config
from schemas.extract import Lexicon
from schemas.pii import Scrubber
from tasks.ingest.stage import ingest
from tests.conftest import DEMO_CONFIG, ROOT

LEX = Lexicon(load_config(DEMO_CONFIG))
SCRUB = LEX.scrubber()
QUESTIONS = ["how many vacation days do we get in Berlin", "what is the per diem in Lisbon",
             "is parental leave paid for the second parent in Amsterdam", "can I carry over vacation days in Warsaw",
             "what is the remote work allowance this year"]
NAMES = ["Greta Lindqvist", "Jan Kowalski", "Sanne de Vries", "Mei-Ling Chau", "Inês Moreira", "Rui Tavares",
         "Daan Bakker", "Priya Natarajan", "Callum Fraser", "Ludwig van der Berg", "Noor Haddad", "Kwame Asante"]


class Case:
    def __init__(self, kind: str, value: str, template: str, question: str) -> None:
        self.kind, self.value = kind, value
        self.text = template.format(v=value, q=question)
        self.expected = template.format(v="{" + kind + "}", q=question)
        self.context = template.format(v=" ", q=question).casefold()  # the words around the value

    def __repr__(self) -> str:
        return f"{self.kind}: {self.text}"


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


# --- the values ----------------------------------------------------------------------------------------------------

# BBAN structures (stdnum's iban.dat) of countries without a national check inside the BBAN: (count, characters)
_BBAN = {"DE": "8n10n", "GB": "4a6n8n", "NL": "4a10n", "FR": "5n5n11c2n", "IT": "1a5n5n12c", "AT": "5n11n",
         "CH": "5n12c", "PL": "8n16n", "PT": "4n4n11n2n", "IE": "4a6n8n", "FI": "3n11n", "DK": "4n9n1n"}
_CHARS = {"n": string.digits, "a": string.ascii_uppercase, "c": string.ascii_uppercase + string.digits}


def make_iban(rng: random.Random, country: str) -> str:
    bban = "".join(rng.choice(_CHARS[kind]) for n, kind in re.findall(r"(\d+)([nac])", _BBAN[country])
                   for _ in range(int(n)))
    number = country + iban.calc_check_digits(country + "00" + bban) + bban
    assert iban.is_valid(number), number
    return number


def make_card(rng: random.Random, prefix: str, length: int) -> str:
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    number = body + luhn.calc_check_digit(body)
    assert luhn.is_valid(number)
    return number


def make_bsn(rng: random.Random) -> str:
    while True:
        body = str(rng.randint(10_000_000, 99_999_999))
        for last in string.digits:
            if bsn.is_valid(body + last):
                return body + last


def make_ssn(rng: random.Random) -> str:
    while True:
        number = f"{rng.randint(1, 899):03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
        if ssn.is_valid(number):
            return number


def make_tax_id(rng: random.Random) -> str:
    while True:
        body = str(rng.randint(1, 9)) + "".join(rng.choice(string.digits) for _ in range(9))
        number = body + mod_11_10.calc_check_digit(body)
        if idnr.is_valid(number):
            return number


def make_nino(rng: random.Random) -> str:
    first = rng.choice("ABCEGHJKLMNOPRSTWXYZ")
    second = rng.choice("ABCEGHJKLMNPRSTWXYZ")
    prefix = rng.choice(["QQ", first + second])  # QQ: HMRC's specimen prefix, which the adversarial pass used
    return prefix + f"{rng.randint(0, 999_999):06d}" + rng.choice("ABCD")


def make_passport(rng: random.Random, style: str) -> str:
    if style == "de":  # the German number: nine characters of a restricted alphabet ("C01X00T47")
        return rng.choice("CFGHJK") + "".join(rng.choice("CFGHJKLMNPRTVWXYZ0123456789") for _ in range(7)) \
            + rng.choice(string.digits)
    if style == "nl":  # two letters, six letters or digits, a digit
        return "".join(rng.choice(string.ascii_uppercase) for _ in range(2)) \
            + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(6)) + rng.choice(string.digits)
    return str(rng.randint(100_000_000, 999_999_999))  # US and UK: nine digits


_PHONE_REGIONS = ["DE", "GB", "NL", "FR", "ES", "IT", "PL", "PT", "US", "CA", "BE", "CH", "AT", "IE", "SE"]


def make_phone(rng: random.Random, region: str) -> phonenumbers.PhoneNumber:
    """A valid number of the region: an example number of a fixed line or a mobile with its last digits redrawn."""
    kind = rng.choice([phonenumbers.PhoneNumberType.FIXED_LINE, phonenumbers.PhoneNumberType.MOBILE])
    example = phonenumbers.example_number_for_type(region, kind)
    assert example is not None
    national = phonenumbers.national_significant_number(example)
    while True:
        digits = national[:-3] + "".join(rng.choice(string.digits) for _ in range(3))
        number = phonenumbers.parse("+" + str(example.country_code) + digits, None)
        if phonenumbers.is_valid_number(number):
            return number


# --- the cases -----------------------------------------------------------------------------------------------------


def planted_cases(seed: int = 20261130) -> list[Case]:
    rng = random.Random(seed)
    q = lambda: rng.choice(QUESTIONS)  # noqa: E731
    cases: list[Case] = []

    def add(kind: str, values: list[str], templates: list[str]) -> None:
        for i, value in enumerate(values):
            case = Case(kind, value, templates[i % len(templates)], q())
            if case.text not in {c.text for c in cases}:
                cases.append(case)

    # IBANs: spaced in fours and unspaced, upper and lower case
    ibans = []
    for i, country in enumerate(sorted(_BBAN) * 2):
        number = make_iban(rng, country)
        spaced = iban.format(number)
        ibans.append([number, spaced, spaced.lower(), number.lower()][i % 4])
    add("iban", ibans, ["{q}? my iban is {v}", "{q}, pay it to {v} please", "{v}: {q}", "{q} (account {v})"])

    # cards with spaces, dashes or none; Amex in 4-6-5
    cards = []
    for i in range(24):
        prefix, length = [("4", 16), ("51", 16), ("55", 16), ("6011", 16), ("34", 15), ("37", 15)][i % 6]
        number = make_card(rng, prefix, length)
        cuts = [0, 4, 10, 15] if length == 15 else [0, 4, 8, 12, 16]  # Amex in 4-6-5
        groups = [number[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
        cards.append([" ".join(groups), "-".join(groups), number][i % 3])
    add("card", cards, ["{q}, my card {v} was charged", "{q}? card number {v}", "{q}: refund to {v}",
                        "{q} - paid with {v}"])

    # phone numbers, international and national, with a cue and without
    phones = []
    for i, region in enumerate(_PHONE_REGIONS * 3):
        number = make_phone(rng, region)
        fmt = [PhoneNumberFormat.INTERNATIONAL, PhoneNumberFormat.NATIONAL, PhoneNumberFormat.E164][i % 3]
        written = phonenumbers.format_number(number, fmt)
        if len(re.sub(r"\D", "", written)) >= 9:  # a shorter number is no candidate (an 8-digit id is none either)
            phones.append(written)
    add("phone", phones, ["{q}, call me at {v}", "{q} (my mobile is {v})", "{q} - ring {v} thanks",
                          "{q}? phone: {v}"])

    # national ids: UK NINO, NL BSN, US SSN, DE tax id
    ninos = []
    for i in range(20):
        n = make_nino(rng)
        ninos.append([n, f"{n[:2]} {n[2:4]} {n[4:6]} {n[6:8]} {n[8]}", n.lower(), f"{n[:2]} {n[2:8]} {n[8]}"][i % 4])
    add("national_id", ninos, ["{q}, my national insurance number is {v}", "{q}? NI {v}", "{v} here: {q}",
                               "{q} ({v})"])
    bsns = [[b, bsn.format(b)][i % 2] for i, b in enumerate(make_bsn(rng) for _ in range(16))]
    add("national_id", bsns, ["{q}, my bsn is {v}", "{q}? burgerservicenummer {v}", "{v} - {q}", "{q} ({v})"])
    ssns = []
    for i in range(16):
        n = make_ssn(rng)
        ssns.append([f"{n[:3]}-{n[3:5]}-{n[5:]}", f"{n[:3]} {n[3:5]} {n[5:]}", n][i % 3])
    add("national_id", ssns, ["{q}, my ssn is {v}", "{q}? social security number {v}", "{q} (SSN: {v})"])
    tax_ids = [[t, idnr.format(t)][i % 2] for i, t in enumerate(make_tax_id(rng) for _ in range(12))]
    add("national_id", tax_ids, ["{q}, my steuer-id is {v}", "{q}? tax id {v}", "{v}: {q}"])

    # passports: German, Dutch, nine digits; after "passport" in its forms
    passports = []
    for i in range(21):
        p = make_passport(rng, ["de", "nl", "digits"][i % 3])
        passports.append(p.lower() if i % 4 == 1 else p)
    add("passport", passports, ["{q}, my passport number is {v}", "{q}? passport no. {v}", "{q} (passport: {v})",
                                "my passport {v} expires, {q}"])

    # spelled-out emails
    emails = []
    for i in range(24):
        first, *rest = _ascii(NAMES[i % len(NAMES)]).lower().replace("-", "").split()
        last = rest[-1]
        domain = ["example", "mail.example", "hr.example"][i % 3]
        tld = ["com", "org", "net", "de", "co.uk"][i % 5]
        spelled_domain = " dot ".join([*domain.split("."), *tld.split(".")])
        emails.append([f"{first} dot {last} at {spelled_domain}", f"{first} [at] {domain}[dot]{tld}",
                       f"{first}.{last} at {domain}.{tld}", f"{first} (at) {domain} (dot) {tld}",
                       f"{first}.{last} @ {domain}.{tld}", f"{first} at {spelled_domain}"][i % 6])
    add("email", emails, ["{q}, please reply to {v}", "{q}? my email is {v}", "{q} - write to {v} thanks"])

    # names in lower case after a cue
    names = [NAMES[i % len(NAMES)].lower() for i in range(24)]
    for i, name in enumerate(names):
        template = ["my manager {v} approved it: {q}", "{q}? asking for my colleague {v}", "ask {v} about this: {q}",
                    "our lead {v} said {q}", "my manager is {v}, {q}", "my boss {v} wants to know {q}"][i % 6]
        if (case := Case("name", name, template, q())).text not in {c.text for c in cases}:
            cases.append(case)
    return cases


CASES = planted_cases()
# the spelled words of an email and a question's own words are no part of what must go
_SPELLING = {"dot", "at", "com", "org", "net", "de", "co", "uk"}


def _runs(case: Case) -> list[str]:
    """The planted value's runs of letters and digits that must not remain."""
    runs = re.findall(r"[^\W_]+", case.value)
    if case.kind == "email":
        runs = [r for r in runs if r.casefold() not in _SPELLING]
    return [r for r in runs if len(r) >= 2]


def test_the_planted_set_is_large_and_covers_every_kind() -> None:
    kinds = Counter(c.kind for c in CASES)
    assert len(CASES) >= 200 and len({c.text for c in CASES}) == len(CASES), len(CASES)
    assert set(kinds) == {"iban", "card", "phone", "national_id", "passport", "email", "name"}
    assert min(kinds.values()) >= 20, kinds


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.kind}-{c.value}")
def test_planted_personal_data_is_scrubbed_and_typed(case: Case) -> None:
    out = SCRUB(case.text)
    assert out == case.expected, (case.text, out)
    # a run is left where the scrubbed text holds it more often than the words around the value do ("mail" of
    # "mail.example" is in "my email is")
    rest = re.sub(r"\{[a-z_]+\}", " ", out).casefold()
    tokens, around = Counter(re.findall(r"[^\W_]+", rest)), Counter(re.findall(r"[^\W_]+", case.context))
    left = [r for r in _runs(case) if tokens[r.casefold()] > around[r.casefold()]
            or (len(r) >= 4 and rest.count(r.casefold()) > case.context.count(r.casefold()))]
    assert not left, (case.text, out, left)


def test_the_planted_set_is_the_same_every_run() -> None:
    assert [c.text for c in planted_cases()] == [c.text for c in CASES]


# --- the adversarial pass's cases, as it wrote them ----------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("my ni number is qq123456c, how many vacation days do we get", "my ni number is {national_id}, how many "
     "vacation days do we get"),
    ("my passport number is c01x00t47, what is the per diem", "my passport number is {passport}, what is the per diem"),
    ("my manager greta lindqvist approved remote work in Berlin", "my manager {name} approved remote work in Berlin"),
    ("reply to greta dot lindqvist at example dot com", "reply to {email}"),
    ("pay to DE89 3704 0044 0532 0130 00 please", "pay to {iban} please"),  # the phone rule took its digits
    ("my ssn is 536-90-4399", "my ssn is {national_id}"),
    ("bsn 111222333", "bsn {national_id}"),
    ("card 4111 1111 1111 1111", "card {card}"),
    ("steuer-id 36574261809", "steuer-id {national_id}"),
    ("c01x00t47", "{id}"),  # a document number without its cue is an id
])
def test_the_adversarial_cases(text: str, expected: str) -> None:
    assert SCRUB(text) == expected


# --- no false positives --------------------------------------------------------------------------------------------

DEMO = ROOT / "data" / "demo"


def demo_questions() -> list[str]:
    queries = []
    for f in sorted((DEMO / "logs").rglob("*.jsonl.gz")):
        for line in gzip.decompress(f.read_bytes()).splitlines():
            try:
                q = json.loads(line).get("query")
            except (ValueError, UnicodeDecodeError):
                continue
            if isinstance(q, str):
                queries.append(q)
    return queries


def clean_demo_questions() -> list[str]:
    """The distinct demo questions the generator planted no personal data in: `generate_logs.plant_pii` wraps a
    question around one string of `pii_planted.json`, so a question holding none of them has none."""
    planted = [p.casefold() for p in json.loads((DEMO / "pii_planted.json").read_text(encoding="utf-8"))]
    needle = re.compile("|".join(re.escape(p) for p in sorted(planted, key=len, reverse=True)))
    return sorted({q for q in demo_questions() if not needle.search(q.casefold())})


def test_the_demo_questions_without_personal_data_stay_as_they_are() -> None:
    clean = clean_demo_questions()
    assert len(clean) > 10_000
    changed = [q for q in clean if SCRUB(q) != q]
    assert not changed, changed[:20]


# --- the quarantine ------------------------------------------------------------------------------------------------


def test_a_quarantined_line_is_scrubbed_like_a_question(tmp_path: Path) -> None:
    """A broken JSON line goes to the quarantine with its raw text scrubbed by the same scrubber: the passport number
    a cut-off line held stays out, and so does every other kind."""
    sample: dict[str, Case] = {}
    for case in CASES:
        sample.setdefault(case.kind, case)
    good = json.dumps({"ts": "2026-11-23T08:00:00Z", "user": "u-1", "query": "per diem in Berlin"})
    broken = [json.dumps({"ts": "2026-11-23T08:01:00Z", "user": "u-2", "query": c.text})[:-2] for c in sample.values()]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([good, *broken]) + "\n", encoding="utf-8")
    ing = ingest(path, now=datetime(2030, 1, 1), scrub=SCRUB)
    try:
        raw = [r[0] for r in ing.con.sql("SELECT raw FROM quarantine").fetchall()]
    finally:
        ing.con.close()
    assert len(raw) == len(broken)
    text = "\n".join(raw).casefold()
    for case in sample.values():
        assert "{" + case.kind + "}" in text, (case, raw)
        assert not [r for r in _runs(case) if len(r) >= 4 and r.casefold() in text], (case, raw)


# --- the memo's fingerprint ----------------------------------------------------------------------------------------


def test_the_digest_names_the_libraries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A memo made by another release of a library (other checksums' tables, other numbering plans) is not reused."""
    import schemas.pii as pii

    before = Scrubber().digest()
    monkeypatch.setitem(pii.LIBRARIES, "phonenumbers", "0.0.0")
    assert Scrubber().digest() != before
