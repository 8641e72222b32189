"""Mine the corpus vocabulary: which synonym each partition's chunks use, and what it does to sub-queries."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from schemas.config import Config
from schemas.constraint import QUALIFIER
from schemas.entity import ENTITY
from schemas.extract import Lexicon, Skeleton
from schemas.plan import CheckResult, Key, Plan, check_plan, plan_doc
from schemas.vocabulary import Vocabulary, count_terms, synonym_groups
from tasks.index.store import Hit, Index


def mine_vocabulary(index: Index, config: Config) -> Vocabulary:
    """Count the synonym lexicon's terms in each category facet value's current chunks."""
    groups = synonym_groups(config.synonyms)
    cats = [f.name for f in config.facets if f.kind == "category"]
    if not groups or not cats:
        return Vocabulary(groups)
    table = index.columns(["text", "is_current", *cats]).to_pylist()
    texts: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in table:
        if row["is_current"]:
            for facet in cats:
                if row[facet] not in (None, ""):
                    texts[(facet, str(row[facet]))].append(row["text"])
    usage: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    for (facet, value), chunk_texts in sorted(texts.items()):
        counts = count_terms(groups, chunk_texts)
        usage[facet][value] = {t: n for t, n in counts.items() if n}
    return Vocabulary(groups, usage)


def keeps_constraints(plan: Plan, sk: Skeleton, lexicon: Lexicon, vocabulary: Vocabulary) -> CheckResult:
    """Move 5 on a filled plan in its partitions' words. A qualifier whose term a step's swap replaced is said
    by its synonym ("partner" for "second parent"); a swap that makes a step say another constraint (a group
    that holds two qualifiers, or a term the lexicon reads as another one) fails."""
    reworded = worded(plan, vocabulary)
    check = check_plan(reworded, sk.constraints, lexicon.extract, text_facets=[ENTITY] if lexicon.entity_slots else ())
    swapped: set[Key] = set()
    for before, after in zip(plan.steps, reworded.steps, strict=True):
        if before.query != after.query:
            swapped |= ({c.key for c in lexicon.extract(before.query) if c.facet == QUALIFIER}
                        - {c.key for c in lexicon.extract(after.query)})
    return CheckResult(check.dropped - swapped, check.invented, check.year_only_in_text)


def partition_reach(plan: Plan, index: Index, depth: int) -> list[tuple[dict[str, str], list[Hit]]]:
    """Each step with concrete category filters, searched without them: (the filters, its top `depth` hits).

    Unfiltered, a sub-query only finds its partition when it is worded the way that partition is written."""
    kinds = {f.name: f.kind for f in index.config.facets}
    out = []
    for step in plan.steps:
        filters = {f: v for f, v in step.filters.items() if kinds.get(f) == "category" and "{" not in v}
        if filters and "{" not in step.query:
            out.append((filters, index.search(step.query, depth)))
    return out


def reached(filters: dict[str, str], hits: list[Hit]) -> bool:
    """Whether an unfiltered sub-query's hits include a chunk of its own partition: one that holds its values (a
    company-wide chunk, in every scope, says nothing of how one partition is worded)."""
    return any(all(str(h.facets.get(f)) == v for f, v in filters.items()) for h in hits)


def worded(plan: Plan, vocabulary: Vocabulary | None) -> Plan:
    """A filled plan with its sub-queries in their partitions' words (the same object when none changes)."""
    if not vocabulary:
        return plan
    doc = plan_doc(plan)
    out = vocabulary.apply(doc)
    return plan if out is doc else Plan.model_validate(out)


def subquery_reach(plan: Plan, vocabulary: Vocabulary, index: Index, depth: int) -> dict[str, Any] | None:
    """Share of a plan's partitioned sub-queries that reach their partition unfiltered, in the question's
    words and in the corpus's; None when the vocabulary changes no sub-query of this plan."""
    in_corpus_words = worded(plan, vocabulary)
    if in_corpus_words is plan:
        return None
    own = partition_reach(plan, index, depth)
    if not own:
        return None
    corpus = partition_reach(in_corpus_words, index, depth)
    return {"steps": len(own), "question_words": sum(reached(f, h) for f, h in own) / len(own),
            "corpus_words": sum(reached(f, h) for f, h in corpus) / len(corpus)}
