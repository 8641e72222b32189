"""Generate the query log of the saasdocs set: what users asked the Quillstack documentation assistant.

Six days (2026-11-30 .. 2026-12-05) of questions about the documentation in data/saasdocs/corpus.jsonl, laid out
by date::

    data/saasdocs/logs/date=YYYY-MM-DD/part-000.jsonl

one JSON object a line, sorted by ``ts``::

    {"ts": "2026-11-30T08:49:20Z", "user": "u-44ebd1", "query": "api rate limit Business vs Free?"}

The log is written for the labeled questions (questions.jsonl) but keeps out of their sample:

* every family of questions the labels ask has logged phrasings with other tier, release or entity values; no
  logged question names the values a labeled question of its family names (`held`), and a follow-up never
  resolves into them;
* families the labels do not ask (invoices, the trial, the command-line tool, ...) and questions the
  documentation cannot answer;
* surface noise: greetings and fillers, case, lower-case tier names, "?" or "??", a few typos, "thanks" rows, two
  blank rows (quarantined as empty queries), and follow-ups ("what about Enterprise?") by the same user 20-120 s
  after a question naming one tier.

The run checks that no row is a labeled question after case, punctuation and fillers are set aside, and writes
the families, their types, phrasings, held values and row counts to data/saasdocs/log_families.json.

Stdlib only and deterministic: re-running produces byte-identical files. Usage::

    python3 data/saasdocs/generate_logs.py
"""

from __future__ import annotations

import itertools
import json
import random
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "logs"
SEED = 20261205
FIRST_DAY = date(2026, 11, 30)
N_DAYS = 6
N_USERS = 40
TIERS = ("Free", "Team", "Business", "Enterprise")
RELEASES = ("4.2", "4.3", "5.0", "5.1")
YEARS = ("2024", "2025", "2026")
FILLERS = ("hi ", "hey, ", "hello, ", "quick q: ", "question - ", "pls ")
FOLLOW_UP_RATE = 0.25
MIN_PER_PHRASING = 6

rng = random.Random(SEED)


def pairs(values, held=()):
    held = {frozenset(h) for h in held}
    return [p for p in itertools.permutations(values, 2) if frozenset(p) not in held]


# A family: name, type, phrasings, slot fillers (list of dicts), weight (rows per phrasing about 6*weight).
FAMILIES = []


def fam(name, type_, phrasings, fills, weight=1.0, held=()):
    FAMILIES.append(dict(name=name, type=type_, phrasings=phrasings, fills=fills or [{}], weight=weight,
                         held=[list(h) for h in held]))


def tier_pairs(held):
    return [{"t": a, "t2": b} for a, b in pairs(TIERS, [held])]


def tiers_but(*held):
    return [{"t": t} for t in TIERS if t not in held]


# ---- comparisons whose answer is product-wide
fam("encryption_cmp", "comparison", [
    "is encryption at rest the same on {t} and {t2}",
    "{t} vs {t2} encryption",
    "does the {t} plan encrypt data the way {t2} does"],
    tier_pairs(("Free", "Enterprise")), held=[("Free", "Enterprise")])
fam("run_duration_cmp", "comparison", [
    "max pipeline run time {t} vs {t2}",
    "how long can a pipeline run on {t} compared to {t2}"],
    tier_pairs(("Team", "Business")), held=[("Team", "Business")])
fam("webhook_cmp", "comparison", [
    "webhook retry policy {t} vs {t2}",
    "are webhooks retried the same on {t} and {t2}"], tier_pairs(("Free", "Business")), held=[("Free", "Business")])
fam("regions_cmp", "comparison", [
    "hosting regions {t} vs {t2}",
    "can {t} and {t2} workspaces both use the EU region"],
    tier_pairs(("Team", "Enterprise")), held=[("Team", "Enterprise")])
# ---- comparisons of two tiers' own rules (or one own rule and the default)
fam("api_cmp", "comparison", [
    "api rate limit {t} vs {t2}",
    "compare the API rate limits on the {t} and {t2} plans",
    "how many api requests per minute do {t} and {t2} allow"],
    tier_pairs(("Free", "Team")), 1.6, held=[("Free", "Team")])
fam("history_cmp", "comparison", [
    "run history retention {t} vs {t2}",
    "how many days of run logs do {t} and {t2} keep"],
    tier_pairs(("Free", "Business")), 1.3, held=[("Free", "Business")])
fam("backup_cmp", "comparison", [
    "backup frequency {t} vs {t2}",
    "how often are config backups taken on {t} and on {t2}"],
    tier_pairs(("Team", "Enterprise")), held=[("Team", "Enterprise")])
fam("support_cmp", "comparison", [
    "support response time {t} vs {t2}",
    "how fast does support answer on {t} compared to {t2}"],
    tier_pairs(("Business", "Enterprise")), 1.5, held=[("Business", "Enterprise")])
fam("seats_cmp", "comparison", [
    "seat limit {t} vs {t2}",
    "how many users can {t} and {t2} have"], tier_pairs(("Team", "Business")), 1.2, held=[("Team", "Business")])
fam("sso_cmp", "comparison", [
    "sso on {t} vs {t2}",
    "what's the difference in SAML login between {t} and {t2}"],
    tier_pairs(("Business", "Enterprise")), held=[("Business", "Enterprise")])
fam("connectors_cmp", "comparison", [
    "connectors on {t} vs {t2}",
    "which connectors does {t} get that {t2} doesn't"], tier_pairs(("Free", "Team")), held=[("Free", "Team")])
fam("release_cmp", "comparison", [
    "what's new in {r} vs {r2}",
    "differences between release {r} and {r2}"],
    [{"r": a, "r2": b} for a, b in pairs(RELEASES, [("4.3", "5.0")])], held=[("4.3", "5.0")])
# ---- temporal
fam("limit_release_tmp", "temporal", [
    "did the {t} api limit change in {r}",
    "{t} api rate limit before and after {r}"],
    [{"t": t, "r": r} for t in TIERS for r in ("4.3", "5.0") if (t, r) != ("Business", "5.0")], 1.2,
    held=[("Business", "5.0")])
fam("quota_years_tmp", "temporal", [
    "{t} monthly active rows {y} vs {y2}",
    "how did the {t} row quota change from {y} to {y2}"],
    [{"t": t, "y": a, "y2": b} for t in TIERS for a, b in (("2024", "2025"), ("2025", "2026"))
     if (t, a, b) != ("Free", "2025", "2026")], held=[("Free", "2025", "2026")])
fam("audit_release_tmp", "temporal", [
    "audit log retention on {t} since release {r}",
    "what happened to {t} audit log retention in {r}"],
    [{"t": t, "r": r} for t in ("Business", "Enterprise") for r in ("4.3", "5.0")], held=[("Enterprise", "4.2")])
fam("sync_release_tmp", "temporal", [
    "did release {r} shorten the {t} sync interval",
    "{t} minimum sync interval change in {r}"],
    [{"t": t, "r": r} for t in ("Free", "Business", "Enterprise") for r in ("4.3", "5.0")]
    + [{"t": "Team", "r": "5.0"}],
    held=[("Team", "4.3")])
fam("default_history_future_tmp", "temporal", [
    "what will the default run history be in 2027",
    "default run log retention after the next release"], [{}], held=[("5.1",)])
fam("quota_past_tmp", "temporal", [
    "what was the {t} row quota in {y}"],
    [{"t": t, "y": y} for t in ("Team", "Business", "Free") for y in ("2024", "2025") if (t, y) != ("Free", "2025")],
    held=[("Free", "before June 2026")])
# ---- bridges, through other entities than the labeled ones
fam("support_via_connector_brg", "bridge", [
    "support response time for the plan with the {e} connector",
    "how quickly does support reply if we use the {e} connector"],
    [{"e": e} for e in ("Plover", "Wren", "Condor")], 1.3, held=[("Kestrel",)])
fam("seats_via_connector_brg", "bridge", [
    "how many seats come with the {e} connector plan"],
    [{"e": e} for e in ("Plover", "Condor", "Wren")], held=[("Heron",)])
fam("api_via_program_brg", "bridge", [
    "api rate limit for {p} members",
    "what api limits do {p} customers get"],
    [{"p": p} for p in ("Northstar", "Harbor")], held=[("Launchpad",)])
fam("sso_via_program_brg", "bridge", [
    "does the {p} program include sso"],
    [{"p": p} for p in ("Launchpad", "Harbor")], held=[("Northstar",)])
fam("audit_via_connector_brg", "bridge", [
    "audit log retention if we need the {e} connector"],
    [{"e": e} for e in ("Condor", "Kestrel", "Plover")], held=[("Osprey",)])
fam("release_of_feature_brg", "bridge", [
    "what else came out in the release with the {f}",
    "other changes in the release that added {f}"],
    [{"f": f} for f in ("Replay Buffer", "Drift Sentinel", "Column Masking")], held=[("Lineage Graph",)])
fam("date_of_feature_brg", "bridge", [
    "when did {f} come out"],
    [{"f": f} for f in ("Lineage Graph", "Replay Buffer", "Drift Sentinel")], held=[("Column Masking",)])
fam("backup_via_program_brg", "bridge", [
    "backup frequency for {p} customers"],
    [{"p": p} for p in ("Launchpad", "Northstar")], held=[("Harbor",)])
# ---- aggregations
fam("sso_agg", "aggregation", [
    "which tiers support sso",
    "sso is on which plans"], [{}], 1.2)
fam("audit_agg", "aggregation", [
    "which plans have an audit log"], [{}])
fam("seats_agg", "aggregation", [
    "which plan has the most seats",
    "rank the tiers by number of seats"], [{}])
fam("support247_agg", "aggregation", [
    "which plans have 24/7 support",
    "which tiers get phone support"], [{}])
fam("sla_agg", "aggregation", [
    "does every plan have an uptime guarantee"], [{}])
fam("history_agg", "aggregation", [
    "which tier keeps run logs longest"], [{}])
fam("releases_agg", "aggregation", [
    "list the main features of every release"], [{}])
# ---- nulls (the docs do not say)
fam("onprem_null", "null", ["self hosted quillstack", "can we run quillstack on our own servers"], [{}])
fam("price_null", "null", ["how much does the {t} plan cost per seat", "{t} plan price"],
    tiers_but("Business"), 1.2, held=[("Business",)])
fam("future_release_null", "null", ["when is {r} coming out"], [{"r": r} for r in ("5.2", "7.0")], held=[("6.0",)])
fam("usage_count_null", "null", ["how many companies use the {e} connector"], [{"e": e} for e in ("Osprey", "Plover")],
    held=[("Kestrel",)])
fam("cert_null", "null", ["is quillstack SOC 2 certified", "do you have ISO 27001"], [{}], held=[("HIPAA",)])
fam("gpu_null", "null", ["gpu limits on {t}"], tiers_but("Enterprise"), held=[("Enterprise",)])
fam("misc_null", "null", ["is there a mobile app", "does quillstack have a dark mode on the status page",
                          "who is the ceo of quillstack"], [{}])
# ---- singles of the labeled kinds
fam("webhook_single", "single", ["how many times does quillstack retry a webhook", "webhook retries"], [{}], 1.2)
fam("delete_single", "single", ["how long is data kept after deleting a workspace", "restore a deleted workspace"],
    [{}])
fam("history_single", "single", ["how long does {t} keep run history", "{t} run log retention"],
    tiers_but("Team"), 1.4, held=[("Team",)])
fam("sla_single", "single", ["{t} uptime guarantee"], tiers_but("Enterprise"), held=[("Enterprise",)])
fam("support_single", "single", ["how do i contact support on {t}", "{t} support hours"],
    tiers_but("Free"), 1.4, held=[("Free",)])
fam("api_single", "single", ["api limit on {t}", "what's the rate limit for the {t} plan"],
    tiers_but("Business"), 1.5, held=[("Business",)])
fam("run_duration_single", "single", ["max run duration on {t}"], tiers_but("Enterprise"), held=[("Enterprise",)])
fam("feature_single", "single", ["what is the {f}", "how does {f} work"],
    [{"f": f} for f in ("Replay Buffer", "Drift Sentinel", "Column Masking")], held=[("Lineage Graph",)])
fam("connector_single", "single", ["which plan has the {e} connector", "is the {e} connector on my plan"],
    [{"e": e} for e in ("Osprey", "Heron", "Plover", "Wren", "Condor")], 1.3, held=[("Kestrel",)])
fam("mfa_single", "single", ["2fa on {t}", "can we enforce two factor on {t}"], tiers_but("Team"), held=[("Team",)])
fam("concurrency_single", "single", ["how many concurrent runs on {t}"], tiers_but("Free"), held=[("Free",)])
fam("seats_single", "single", ["how many seats on {t}"], [{"t": t} for t in TIERS])
# ---- other topics, not labeled
fam("payment_other", "single", ["can we pay by invoice", "do you accept purchase orders"], [{}])
fam("invite_other", "single", ["how do i invite a colleague", "invite link expired"], [{}], 1.2)
fam("cli_other", "single", ["install quill cli", "how to push pipelines from yaml"], [{}])
fam("first_pipeline_other", "single", ["how do i create my first pipeline"], [{}])
fam("cancel_other", "single", ["how do i cancel my subscription", "refund for annual plan"], [{}])
fam("downgrade_other", "single", ["downgrade to a smaller plan", "upgrade mid month charges"], [{}])
fam("vat_other", "single", ["where do i enter our VAT number"], [{}])
fam("status_other", "single", ["is quillstack down", "where is the status page"], [{}], 1.2)
fam("schema_drift_other", "single", ["what happens when a source column is dropped", "new column in source table"],
    [{}])
fam("trial_other", "single", ["how long is the trial", "does the trial need a credit card"], [{}])
fam("password_other", "single", ["forgot my password", "sign in with google"], [{}])
fam("regions_other", "single", ["can i move my workspace to the US region"], [{}])

TYPOS = {"retention": "retension", "connector": "conector", "support": "suport", "pipeline": "pipline",
         "frequency": "frequncy"}


def fill(p, values):
    return p.format(**values)


def noise(q):
    r = rng.random()
    if r < 0.18:
        q = rng.choice(FILLERS) + q
    if rng.random() < 0.30:
        q = q.lower()
    elif rng.random() < 0.15:
        q = q[0].upper() + q[1:]
    if rng.random() < 0.06:
        for a, b in TYPOS.items():
            if a in q:
                q = q.replace(a, b, 1)
                break
    r = rng.random()
    if r < 0.35:
        q += "?"
    elif r < 0.40:
        q += "??"
    return q


def norm(s):
    s = s.lower()
    for f in FILLERS:
        if s.startswith(f.strip().lower()):
            s = s[len(f.strip()):]
    return re.sub(r"[^a-z0-9.]+", " ", s).strip()


def build() -> tuple[dict[str, bytes], dict[str, object]]:
    """The log files (path under logs/ -> content) and the ground truth of log_families.json."""
    rng.seed(SEED)
    users = sorted({f"u-{rng.randrange(16 ** 6):06x}" for _ in range(N_USERS * 2)})[:N_USERS]
    rng.shuffle(users)
    activity = [rng.uniform(0.3, 3.0) for _ in users]
    base = []  # (family, phrasing, values, text)
    for f in FAMILIES:
        for p in f["phrasings"]:
            n = max(MIN_PER_PHRASING, round(MIN_PER_PHRASING * f["weight"] * rng.uniform(0.85, 1.1)))
            for i in range(n):
                vals = f["fills"][i % len(f["fills"])] if "{" in p else {}
                base.append((f, p, vals, fill(p, vals)))
    rng.shuffle(base)
    day_weights = [1.0, 1.1, 1.0, 1.05, 0.95, 0.25]  # Mon..Sat
    rows = []
    # spread over days; within a phrasing, users are chosen so that at least three distinct users ask it
    per_phrasing_users = {}
    for f, p, vals, text in base:
        key = (f["name"], p)
        seen = per_phrasing_users.setdefault(key, [])
        if len(seen) < 3:
            u = rng.choice([x for x in users if x not in seen])
        else:
            u = rng.choices(users, weights=activity)[0]
        seen.append(u)
        d = rng.choices(range(N_DAYS), weights=day_weights)[0]
        hour = rng.choices(range(24),
                           weights=[1, 1, 1, 1, 1, 2, 3, 5, 8, 9, 9, 8, 6, 8, 9, 9, 8, 6, 4, 3, 2, 2, 1, 1])[0]
        ts = datetime(FIRST_DAY.year, FIRST_DAY.month, FIRST_DAY.day, tzinfo=UTC) + timedelta(
            days=d, hours=hour, seconds=rng.randrange(3600))
        rows.append([ts, u, noise(text), f, vals])
    # follow-ups: after a single question naming one tier, ask another tier, never a held value of the family
    follow = []
    for ts, u, _q, f, vals in rows:
        if f["type"] == "single" and set(vals) == {"t"} and rng.random() < FOLLOW_UP_RATE:
            held = {h[0] for h in f["held"]}
            options = [t for t in TIERS if t != vals["t"] and t not in held]
            if not options:
                continue
            t = rng.choice(options)
            text = rng.choice(["what about {t}?", "and on {t}?", "same for {t}?", "{t}?"]).format(t=t)
            follow.append([ts + timedelta(seconds=rng.randint(20, 120)), u, text, f, {"t": t}])
    # fillers and noise rows
    extra = []
    for _ in range(14):
        r = rng.choice(rows)
        extra.append([r[0] + timedelta(seconds=rng.randint(15, 90)), r[1],
                      rng.choice(["thanks", "thank you!", "ok thx", "great"]), None, {}])
    for _ in range(2):
        r = rng.choice(rows)
        extra.append([r[0] + timedelta(seconds=rng.randint(5, 30)), r[1], "   ", None, {}])
    allrows = rows + follow + extra
    allrows.sort(key=lambda r: (r[0], r[1], r[2]))

    # checks: no labeled question logged; no held values of a family in its rows
    with (HERE / "questions.jsonl").open(encoding="utf-8") as fh:
        labeled = {norm(json.loads(line)["question"]) for line in fh}
    for _ts, _u, q, f, vals in allrows:
        assert norm(q) not in labeled, q
        if f:
            for h in f["held"]:
                if len(h) > 1 and all(str(v) in vals.values() for v in h):
                    raise AssertionError((f["name"], q))
                if len(h) == 1 and h[0] in vals.values():
                    raise AssertionError((f["name"], q))

    by_day: dict[date, list[bytes]] = {}
    for ts, u, q, _f, _vals in allrows:
        line = json.dumps({"ts": ts.strftime("%Y-%m-%dT%H:%M:%SZ"), "user": u, "query": q}, ensure_ascii=False)
        by_day.setdefault(ts.date(), []).append(line.encode("utf-8") + b"\n")
    files = {f"date={d.isoformat()}/part-000.jsonl": b"".join(lines) for d, lines in sorted(by_day.items())}
    fams = [{"name": f["name"], "type": f["type"], "phrasings": f["phrasings"], "held": f["held"],
             "rows": sum(1 for r in rows + follow if r[3] is f)} for f in FAMILIES]
    truth = {"rows": len(allrows), "users": len({r[1] for r in allrows}), "days": len(by_day),
             "follow_ups": len(follow), "fillers": 14, "blank": 2, "families": fams}
    return files, truth


def truth_text(truth: dict[str, object]) -> str:
    return json.dumps(truth, indent=1) + "\n"


def main() -> None:
    for old in sorted(OUT.glob("date=*/part-000.jsonl")):
        old.unlink()
    files, truth = build()
    for name, content in files.items():
        (OUT / name).parent.mkdir(parents=True, exist_ok=True)
        (OUT / name).write_bytes(content)
    (HERE / "log_families.json").write_text(truth_text(truth), encoding="utf-8")
    print(f"wrote {truth['rows']} rows of {truth['users']} users over {truth['days']} days "
          f"({truth['follow_ups']} follow-ups) to {OUT}")


if __name__ == "__main__":
    main()
