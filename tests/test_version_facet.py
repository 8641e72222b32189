"""A category facet whose values name versions (a release, `version: true`): the same rule at two releases is two
versions of one policy, linked by their effective dates, and naming a release reads every version."""

from __future__ import annotations

from datetime import date

import pytest

from schemas.config import Config, Facet
from schemas.constraint import Constraint
from schemas.extract import Lexicon
from schemas.scope import where
from tasks.executor import names_a_version
from tasks.index.corpus import Document, chunk_corpus
from tasks.index.enrich import enrich
from tasks.starter import judge_keys, version_dates

RUN_DATE = date(2026, 12, 6)


def _config(version: bool) -> Config:
    return Config(facets=[Facet(name="tier"), Facet(name="release", version=version)])


def _docs() -> list[Document]:
    rules = [("api-limit-business-42", "4.2", "2025-09-15", "Business", "Business workspaces: 1,200 calls a minute."),
             ("api-limit-business-50", "5.0", "2026-06-01", "Business", "Business workspaces: 3,000 calls a minute."),
             ("api-limit-team-42", "4.2", "2025-09-15", "Team", "Team workspaces: 600 calls a minute."),
             ("notes-51", "5.1", "2027-02-01", None, "Release 5.1 doubles run history.")]
    return [Document(i, text, {"release": r, "effective_from": day, "policy": i.rsplit("-", 1)[0],
                               **({"tier": t} if t else {})}, f"c.jsonl:{n}")
            for n, (i, r, day, t, text) in enumerate(rules, 1)]


@pytest.mark.parametrize("version", [True, False])
def test_a_rule_at_two_releases_is_two_versions_of_one_policy(version: bool) -> None:
    config, docs = _config(version), _docs()
    enriched = enrich(chunk_corpus(docs, config.chunking), docs, config, Lexicon(config), RUN_DATE)
    marks = {e.chunk.doc_id: (e.supersedes, e.superseded_by, e.is_current) for e in enriched}
    if version:
        assert marks["api-limit-business-42"] == (None, "api-limit-business-50", False)
        assert marks["api-limit-business-50"] == ("api-limit-business-42", None, True)
    else:  # a release that parts policies as an office does: both current
        assert marks["api-limit-business-42"][2] and marks["api-limit-business-50"][2]
    assert marks["api-limit-team-42"] == (None, None, True)  # another tier: another policy
    assert marks["notes-51"][2] is False  # not in force yet


def test_naming_a_release_reads_every_version() -> None:
    config = _config(True)
    assert where({"release": "4.2"}, config) == "(release = '4.2' OR release IS NULL OR release = '')"
    assert where({"tier": "Team"}, config).endswith(" AND is_current")  # type: ignore[union-attr]
    assert names_a_version([Constraint("release", "4.2")], config)
    assert not names_a_version([Constraint("release", "4.2")], _config(False))
    assert not names_a_version([Constraint("tier", "Team")], config)
    # no facet reads years here: a year the question writes names a version all the same
    assert names_a_version([], config, "What was the Free row quota before June 2025?")
    assert not names_a_version([], config, "What is the quota of 12025 rows, or 2,025?")
    dated = Config(facets=[Facet(name="release", version=True), Facet(name="year", kind="year")])
    assert not names_a_version([], dated, "the quota before 2025")  # a year facet reads it, or it is none


def test_init_reads_a_key_whose_values_each_take_effect_on_one_date_as_versions() -> None:
    docs = _docs()
    verdicts = {v.key: v for v in judge_keys(docs * 3)}
    assert verdicts["release"].kind == "category" and verdicts["release"].version
    assert "each value takes effect on one date (4.2 on 2025-09-15, 5.0 on 2026-06-01, 5.1 on 2027-02-01)" in (
        verdicts["release"].why)
    assert not verdicts["tier"].version  # Business on two dates: a tier parts policies
    # one dated document a value, or a value on two dates, is no version
    assert version_dates("release", docs[1:3]) == {}
    moved = [*docs, Document("late", "x", {"release": "4.2", "effective_from": "2025-10-01"}, "c.jsonl:9")]
    assert version_dates("release", moved) == {}


def test_version_is_for_a_category_facet() -> None:
    with pytest.raises(ValueError, match="`version: true` is for a category facet"):
        Facet(name="year", kind="year", version=True)
