"""Generate the labeled questions of the saasdocs set: questions.jsonl.

Fifty questions about the documentation in data/saasdocs/corpus.jsonl, one JSON object a line
([format](../../docs/publication.md#labeled-questions))::

    {"id": "c05", "question": "...", "shape": "comparison", "parts": [["api-rate-limits"], ["api-rate-limits-team"]],
     "should_split": true}

`parts` name document ids; every id is checked against corpus.jsonl, so generate the corpus first.

Stdlib only and deterministic: re-running gives a byte-identical file. Usage::

    python3 data/saasdocs/generate_questions.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
Q: list[dict[str, Any]] = []


def q(qid: str, question: str, shape: str, parts: list[list[str]], should_split: bool | None) -> None:
    Q.append({"id": qid, "question": question, "shape": shape, "parts": parts, "should_split": should_split})


# comparison: c01-c04 the answer is one product-wide chunk; c05-c07 one tier has its own rule, the other follows
# the product-wide default; c08-c11 each tier's own rule; c12 two releases.
q("c01", "Is data encrypted at rest on the Free plan and on Enterprise?", "comparison", [["encryption"]], False)
q("c02", "Compare the maximum pipeline run duration on Team and Business.", "comparison",
  [["pipeline-run-limits"]], False)
q("c03", "Do webhook retries work the same way for Free and Business workspaces?", "comparison",
  [["webhook-retries"]], False)
q("c04", "Which hosting regions can Team and Enterprise customers choose?", "comparison", [["data-regions"]], False)
q("c05", "Compare the API rate limits of the Free and Team plans.", "comparison",
  [["api-rate-limits"], ["api-rate-limits-team"]], True)
q("c06", "How long is run history kept on Free versus Business?", "comparison",
  [["run-history-retention-2025"], ["run-history-business"]], True)
q("c07", "How often is pipeline configuration backed up on Team compared with Enterprise?", "comparison",
  [["config-backups"], ["backups-enterprise"]], True)
q("c08", "What are the support response times for Business and Enterprise customers?", "comparison",
  [["support-business"], ["support-enterprise"]], True)
q("c09", "How many seats do the Team and Business plans include?", "comparison",
  [["seats-team"], ["seats-business"]], True)
q("c10", "How does single sign-on differ between Business and Enterprise?", "comparison",
  [["sso-business"], ["sso-enterprise"]], True)
q("c11", "Which connectors can a Free workspace use compared with a Team workspace?", "comparison",
  [["connectors-free"], ["connectors-team"]], True)
q("c12", "Compare what shipped in release 4.3 and release 5.0.", "comparison", [["release-4-3"], ["release-5-0"]], True)

# temporal: t01-t04 two versions of one rule; t05 the version not yet in force; t06 a superseded version.
q("t01", "How did the Business plan's API rate limit change in 5.0?", "temporal",
  [["api-rate-limits-business-2025"], ["api-rate-limits-business-2026"]], True)
q("t02", "What changed in the Free plan's monthly row quota between 2025 and 2026?", "temporal",
  [["row-quota-free-2025"], ["row-quota-free-2026"]], True)
q("t03", "How has Enterprise audit log retention changed since release 4.2?", "temporal",
  [["audit-log-enterprise-2025"], ["audit-log-enterprise-2026"]], True)
q("t04", "How did the minimum sync interval for Team change with release 4.3?", "temporal",
  [["sync-frequency-team-2025"], ["sync-frequency-team-2026"]], True)
q("t05", "How long will run history be kept by default once 5.1 takes effect?", "temporal",
  [["run-history-retention-2027"]], False)
q("t06", "What was the Free plan's row quota before June 2026?", "temporal", [["row-quota-free-2025"]], False)

# bridge: the question names an entity (connector, program, feature), never its tier or release.
q("b01", "What is the support response time on the plan that includes the Kestrel connector?", "bridge",
  [["connector-kestrel"], ["support-business"]], True)
q("b02", "How many seats does the plan with the Heron connector allow?", "bridge",
  [["connector-heron"], ["seats-team"]], True)
q("b03", "What API rate limit applies to startups in the Launchpad program?", "bridge",
  [["program-launchpad"], ["api-rate-limits-team"]], True)
q("b04", "Can Northstar partners use SAML single sign-on?", "bridge", [["program-northstar"], ["sso-business"]], True)
q("b05", "How long are audit logs kept for customers who need the Osprey connector?", "bridge",
  [["connector-osprey"], ["audit-log-enterprise-2026"]], True)
q("b06", "What else shipped in the release that introduced the Lineage Graph?", "bridge",
  [["feature-lineage-graph"], ["release-4-3"]], True)
q("b07", "On what date did the release that added Column Masking take effect?", "bridge",
  [["feature-column-masking"], ["release-5-0"]], True)
q("b08", "How often is configuration backed up for customers in the Harbor migration program?", "bridge",
  [["program-harbor"], ["backups-enterprise"]], True)

# aggregation over tiers or releases.
q("a01", "Which plans include SAML single sign-on?", "aggregation", [["sso-business"], ["sso-enterprise"]], None)
q("a02", "Which plan keeps run history the longest?", "aggregation",
  [["run-history-retention-2025"], ["run-history-team"], ["run-history-business"], ["run-history-enterprise"]], None)
q("a03", "Rank the plans by REST API rate limit.", "aggregation",
  [["api-rate-limits"], ["api-rate-limits-team"], ["api-rate-limits-business-2026"], ["api-rate-limits-enterprise"]],
  None)
q("a04", "Which tiers offer weekend support?", "aggregation",
  [["support-free"], ["support-team"], ["support-business"], ["support-enterprise"]], None)
q("a05", "Which plans come with an uptime SLA?", "aggregation", [["sla-business"], ["sla-enterprise"]], None)
q("a06", "What new features did each release since 4.2 introduce?", "aggregation",
  [["release-4-2"], ["release-4-3"], ["release-5-0"]], None)

# null: the documentation does not say.
q("n01", "Can Quillstack be deployed on-premises in our own data center?", "null", [], False)
q("n02", "What is the list price per seat of the Business plan?", "null", [], False)
q("n03", "When will Quillstack 6.0 be released?", "null", [], False)
q("n04", "How many customers use the Kestrel connector?", "null", [], False)
q("n05", "Is Quillstack HIPAA certified?", "null", [], False)
q("n06", "What is the GPU quota for Enterprise workspaces?", "null", [], False)

# single: s07 and s11 ask a tier a question whose answer is product-wide.
q("s01", "How many times is a failed webhook delivery retried?", "single", [["webhook-retries"]], False)
q("s02", "What happens to our data after we delete a workspace?", "single", [["data-deletion"]], False)
q("s03", "How long is run history kept on the Team plan?", "single", [["run-history-team"]], False)
q("s04", "What uptime does Quillstack commit to for Enterprise?", "single", [["sla-enterprise"]], False)
q("s05", "How do I get help on the Free plan?", "single", [["support-free"]], False)
q("s06", "What is the API rate limit for a Business workspace?", "single", [["api-rate-limits-business-2026"]], False)
q("s07", "How long can a single pipeline run last on the Enterprise plan?", "single", [["pipeline-run-limits"]], False)
q("s08", "What does the Lineage Graph show?", "single", [["feature-lineage-graph"]], False)
q("s09", "Which plan includes the Kestrel connector?", "single", [["connector-kestrel"]], False)
q("s10", "Can we pay an annual contract by bank transfer?", "single", [["billing-payment-methods"]], False)
q("s11", "Is two-factor authentication available on the Team plan?", "single", [["mfa"]], False)
q("s12", "How many pipelines can run at the same time on the Free plan?", "single", [["concurrent-pipelines"]], False)


def build() -> list[dict[str, Any]]:
    """The questions, after checking that their ids are unique and every part id is a document of the corpus."""
    with (HERE / "corpus.jsonl").open(encoding="utf-8") as fh:
        ids = {json.loads(line)["id"] for line in fh}
    seen = set()
    for x in Q:
        assert x["id"] not in seen, x["id"]
        seen.add(x["id"])
        for part in x["parts"]:
            for d in part:
                assert d in ids, (x["id"], d)
    return Q


def main() -> None:
    questions = build()
    with (HERE / "questions.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
        for x in questions:
            fh.write(json.dumps(x, ensure_ascii=False) + "\n")
    print(f"wrote {len(questions)} questions to {HERE / 'questions.jsonl'}")


if __name__ == "__main__":
    main()
