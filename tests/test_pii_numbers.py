"""The scrubber's shortcuts for numbers change no verdict: a region whose numbering plan cannot read a number is not
parsed (`_readable_in`), an id module is not asked about a digit count it refuses as the wrong length, and an id's
checksum is not computed for a number grouped as the id is never written (`_national_id`), a text without a
letter next to a digit skips the steps that need one, and a pattern is not run over a text without what every match
of it holds (`replace_patterns`)."""

from __future__ import annotations

import random

import phonenumbers
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stdnum.exceptions import InvalidLength

from schemas.pii import (
    _CHECKED_IDS,
    _EMPLOYEE_ID,
    _IBAN_SHAPE,
    _KIND_CUE,
    _LONG_ID,
    _MIXED,
    _NINO,
    _NO_CHECK_DIGIT,
    _PASSPORT,
    _PLAIN_AT,
    _PREFIXED_ID,
    _REFUSED_LENGTHS,
    _URL,
    PHONE_REGIONS,
    SPELLED_EMAIL,
    _cue,
    _groups,
    _ibans,
    _mixed_kind,
    _national_id,
    _numbers,
    _readable_in,
    _sub_emails,
    format_groups,
    is_phone,
    replace_patterns,
)


def parse_everywhere(number: str, digits: str) -> bool:
    """`is_phone` without the shortcut: every region parsed."""
    if number.startswith("+") or digits.startswith("00"):
        return is_phone(number, digits)
    for region in PHONE_REGIONS:
        try:
            if phonenumbers.is_valid_number(phonenumbers.parse(number, region)):
                return True
        except phonenumbers.NumberParseException:
            continue
    return False


def region_reads(number: str, region: str) -> bool:
    try:
        return bool(phonenumbers.is_valid_number(phonenumbers.parse(number, region)))
    except phonenumbers.NumberParseException:
        return False


def _examples() -> list[str]:
    """Every example number phonenumbers holds for the regions and their neighbours under one country code, written
    nationally and internationally without its "+", and each with its last digits changed."""
    rng = random.Random(7)
    regions = {r for region in PHONE_REGIONS
               for r in phonenumbers.region_codes_for_country_code(phonenumbers.country_code_for_region(region))}
    out = []
    for region in sorted(regions):
        for kind in phonenumbers.PhoneNumberType.values():
            example = phonenumbers.example_number_for_type(region, kind)
            if example is None:
                continue
            national = phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.NATIONAL)
            world = phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.INTERNATIONAL)[1:]
            for text in (national, world, "011 " + world, "0" + world):
                out.append(text)
                out.append(text[:-2] + "".join(rng.choice("0123456789") for _ in range(2)))
    return out


EXAMPLES = _examples()


def digits_of(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def test_examples_cover_valid_numbers_of_every_region() -> None:
    """The examples hold numbers each region reads as valid, so the next test can tell a wrong skip."""
    for region in PHONE_REGIONS:
        assert any(region_reads(e, region) for e in EXAMPLES), region


@pytest.mark.parametrize("region", PHONE_REGIONS)
def test_a_region_is_skipped_only_where_it_cannot_read_the_number(region: str) -> None:
    for text in EXAMPLES:
        if region_reads(text, region):
            assert _readable_in(digits_of(text), region), (text, region)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["", "0", "1", "00", "011", "44", "49", "39", "1800", "180020", "358", "99"]),
       st.lists(st.text("0123456789", min_size=1, max_size=5), min_size=1, max_size=5),
       st.sampled_from([" ", "-", ".", ""]))
def test_is_phone_gives_the_verdict_of_parsing_in_every_region(lead: str, groups: list[str], sep: str) -> None:
    number = lead + sep.join(groups)
    digits = digits_of(number)
    assert is_phone(number, digits) == parse_everywhere(number, digits), number


@pytest.mark.parametrize("module", _CHECKED_IDS, ids=lambda m: m.__name__)
def test_refused_lengths_are_the_librarys(module: object) -> None:
    """Each refused count is one the library refuses for any digits (three draws each), and a count it takes
    (a valid id's) is never refused."""
    rng = random.Random(11)
    for n in _REFUSED_LENGTHS[module]:
        for _ in range(3):
            digits = "".join(rng.choice("0123456789") for _ in range(n))
            with pytest.raises(InvalidLength):
                module.validate(digits)  # type: ignore[attr-defined]
    assert _REFUSED_LENGTHS[module] != frozenset(range(1, 65))


def test_valid_ids_are_never_skipped() -> None:
    """Valid numbers from the libraries' own documentation pass the length gate."""
    valid = {"us.ssn": "536904399", "nl.bsn": "111222333", "de.idnr": "36574261809", "pl.pesel": "44051401359",
             "fr.nir": "295109912611193", "be.nn": "85073003328", "ca.sin": "123456782", "ch.ssn": "7569217076985",
             "se.personnummer": "8803200016", "us.itin": "912902345"}
    for module in _CHECKED_IDS:
        name = ".".join(module.__name__.split(".")[-2:])
        number = valid[name]
        assert module.is_valid(number), name
        assert len(number) not in _REFUSED_LENGTHS[module], name


@settings(max_examples=300, deadline=None)
@given(st.text("0123456789", min_size=9, max_size=24))
def test_format_groups_depend_on_the_length_alone(digits: str) -> None:
    """Each module's format groups any digits of one length as `format_groups` says (what `_national_id` reads)."""
    for module in _CHECKED_IDS:
        if len(digits) in _REFUSED_LENGTHS[module] or not hasattr(module, "format"):
            continue
        formatted = module.format(digits)  # type: ignore[attr-defined]
        assert _groups(formatted) == format_groups(module, len(digits)), module.__name__


def national_id_checksum_first(number: str, digits: str, cued: bool) -> bool:
    """`_national_id` in its plain order: every module's checksum, then the way the number is written."""
    groups = _groups(number)
    for module in _CHECKED_IDS:
        if not module.is_valid(digits):  # type: ignore[attr-defined]
            continue
        if cued or (len(groups) == 1 and module not in _NO_CHECK_DIGIT):
            return True
        if hasattr(module, "format") and groups == _groups(module.format(digits)):
            return True
    return False


VALID_IDS = ["536904399", "111222333", "36574261809", "44051401359", "295109912611193", "85073003328", "123456782",
             "7569217076985", "8803200016", "912902345", "123456789", "03084426310"]


def _written(digits: str, cuts: list[int], sep: str) -> str:
    """The digits with `sep` at the cuts: "536-90-4399"."""
    points = sorted({c % len(digits) for c in cuts} - {0})
    return sep.join(digits[a:b] for a, b in zip([0, *points], [*points, len(digits)], strict=True))


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.sampled_from(VALID_IDS), st.text("0123456789", min_size=8, max_size=16)),
       st.lists(st.integers(1, 15), max_size=4), st.sampled_from([" ", "-", ".", "/"]), st.booleans(),
       st.booleans())
def test_national_id_gives_the_verdict_of_checking_every_checksum(
        digits: str, cuts: list[int], sep: str, cued: bool, formatted: bool) -> None:
    """Valid ids (and random digits) unspaced, grouped as their module formats them, or grouped at random."""
    numbers = [_written(digits, cuts, sep)]
    if formatted:
        numbers += [m.format(digits) for m in _CHECKED_IDS if hasattr(m, "format")]  # type: ignore[attr-defined]
    for number in numbers:
        assert _national_id(number, digits, cued) == national_id_checksum_first(number, digits, cued), number


def every_step(text: str) -> str:
    """`replace_patterns` without a gate: every pattern of every step runs, in `_STEPS`' order."""
    def spelled(t: str) -> str:
        return SPELLED_EMAIL.sub(lambda m: m.group(0) if _PLAIN_AT.fullmatch(m.group(0)) else "{email}", t)

    steps = [_sub_emails, lambda t: _URL[1].sub("{url}", t), spelled, _ibans,
             lambda t: _PASSPORT.sub(lambda m: m.group("cue") + "{passport}", t),
             lambda t: _NINO.sub("{national_id}", t), lambda t: _MIXED.sub(_mixed_kind, t),
             lambda t: _PREFIXED_ID[1].sub("{id}", t), lambda t: _EMPLOYEE_ID[1].sub("{id}", t), _numbers,
             lambda t: _LONG_ID[1].sub("{id}", t), lambda t: _IBAN_SHAPE[1].sub("{iban}", t)]
    for step in steps:
        text = step(text)
    return text


PII_PIECES = ["DE89 3704 0044 0532 0130 00", "DE89370400440532013000", "passport C01X00T47", "QQ 12 34 56 C",
              "qq123456c", "c01x00t47", "HR-2024-0042", "AB#12345", "employee id 123456", "030 12345678",
              "+44 20 7946 0958", "4111 1111 1111 1111", "536-90-4399", "123456789", "ES9121000418450200051332",
              "jan@example.com", "www.example.com", "in 2026", "2024-2026", "A1", "1a", "x_9", "Z-7", "٣٤٥٦٧٨٩٠١٢",
              "AB١٢٣٤٥", "Berlin", "how many vacation days", "?", "(", ")", " ", "paſsport X1234567", "Reisepass",
              "paspoort C01X00T47", "pasaporte X1234567", "jan AT example DOT com",
              "ſtaff 12345", "Badge #4821", "employee", "jan at example dot com", "jan (at) example.com", "jan",
              "@ example . com", "at", "dot", ".", "call me at"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PII_PIECES) | st.text("aA1 -_#.", max_size=6), min_size=1, max_size=8),
       st.sampled_from([" ", "", "-", ", "]))
def test_replace_patterns_gives_what_every_step_gives(pieces: list[str], sep: str) -> None:
    text = sep.join(pieces)
    assert replace_patterns(text) == every_step(text), text


CUE_PIECES = ["SSN", "ssn", "Social  Security", "Tax No", "steuer-ID", "Steuernummer", "PHONE", "Call", "tel",
              "WhatsApp", "card", "VISA", "Employee", "REF", "reference", "id card", "ID", "my", "is", "x_", "-", "#",
              "ſsn", "Kard", "İd", "ıd", "0301234567"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(CUE_PIECES) | st.text("aZ1 _-", max_size=4), min_size=1, max_size=10),
       st.sampled_from([" ", "", ": "]), st.integers(0, 80))
def test_cue_gives_the_verdict_of_matching_without_case(pieces: list[str], sep: str, start: int) -> None:
    """The cue read in lower case (ASCII text) is the one the case-blind pattern reads."""
    text = sep.join(pieces)
    start = min(start, len(text))
    cues = list(_KIND_CUE.finditer(text, max(0, start - 32), start))
    assert _cue(text, start) == (cues[-1].lastgroup if cues else None), (text, start)


def test_a_cue_cut_by_the_window_s_edge_is_no_cue() -> None:
    """"xssn" is no cue, though the window starts at its "ssn": the character before the window is read."""
    text = "xssn" + " " * 29 + "0301234567"
    assert _cue(text, 33) is None
    assert _cue("ssn" + " " * 29 + "0301234567", 32) == "national_id"  # at the window's very start
