"""Generate the query log of the itpolicy set: what users asked the IT and security policy assistant.

Twelve days (2026-11-23 .. 2026-12-04) of questions about the handbook in data/itpolicy/corpus.jsonl, laid out
by date::

    data/itpolicy/logs/date=YYYY-MM-DD/part-000.jsonl

one JSON object a line, sorted by ``ts``::

    {"ts": "2026-11-24T09:13:02Z", "user": "u-3f9a1c", "query": "patch window Porto vs Singapore"}

The log is written for the labeled questions (questions.jsonl) but keeps out of their sample:

* every family of questions the labels ask has logged phrasings, but no logged question names the values (sites,
  years, entities) a labeled question of its family names: `held` lists them per family, and a follow-up that
  would resolve into them is not written;
* some families share a wording with a labeled question ("compare the laptop replacement cycle in {site} and
  {site2}", with other sites), so that question's skeleton recurs in the log; the others are logged only in
  other wordings;
* families the labels do not ask (resetting a password, printers, ...) and questions the corpus cannot answer;
* surface noise: greetings and fillers, case, "?" or "??", site aliases (Montréal, Oporto); follow-ups ("what
  about Porto?") by the same user 20-120 s after a question naming one site.

Every row is valid: none is quarantined. The run checks that no row is a labeled question, even after case,
punctuation and fillers are set aside, and writes the families, their types and row counts to
data/itpolicy/log_families.json.

Stdlib only and deterministic: re-running produces byte-identical files. Usage::

    python3 data/itpolicy/generate_logs.py
"""

from __future__ import annotations

import json
import random
import re
import string
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20261204
FIRST_DAY = date(2026, 11, 23)  # a Monday
N_DAYS = 12
N_USERS = 260
SITES = ("Tallinn", "Porto", "Montreal", "Singapore", "Denver")
SITE_ALIASES = {"Montreal": "Montréal", "Porto": "Oporto"}
ALIAS_RATE = 0.12
YEARS = (2024, 2025, 2026, 2027)
FOLLOW_UP_RATE = 0.06  # of questions naming one site
FILLERS = ("hi, ", "hi ", "hey, ", "hello, ", "quick question: ", "question: ", "please, ")
ROWS_PER_WEIGHT = 14  # a family of weight w gets about w * ROWS_PER_WEIGHT rows
MIN_PER_PHRASING = 6  # so that each wording recurs (mining needs 5 questions of 3 users)


@dataclass(frozen=True)
class Family:
    name: str
    type: str
    weight: int
    phrasings: tuple[str, ...]
    held: tuple[tuple[str, ...], ...] = ()  # value sets (any order) a labeled question of this family names
    entities: tuple[str, ...] = ()  # values of {entity}


F = Family
FAMILIES: list[Family] = [
    # comparisons of two sites
    F("encryption_compare", "comparison", 5, (
        "do laptops have to be encrypted in {site} and in {site2}",
        "is disk encryption required in both {site} and {site2}",
        "laptop encryption {site} vs {site2}"), held=(("Tallinn", "Porto"),)),
    F("password_compare", "comparison", 4, (
        "is the minimum password length the same in {site} and {site2}",
        "password rules {site} vs {site2}",
        "do {site} and {site2} have different password requirements"), held=(("Montreal", "Denver"),)),
    F("lost_laptop_compare", "comparison", 3, (
        "what is the deadline for reporting a lost laptop in {site} versus {site2}",
        "lost laptop reporting {site} vs {site2}"), held=(("Singapore", "Tallinn"),)),
    F("contractor_compare", "comparison", 3, (
        "do contractor accounts expire at the same time in {site} and {site2}",
        "contractor account expiry {site} vs {site2}"), held=(("Tallinn", "Denver"),)),
    F("refresh_compare", "comparison", 5, (
        "compare the laptop replacement cycle in {site} and {site2}",
        "how often are laptops replaced in {site} vs {site2}",
        "laptop refresh {site} or {site2}, which is sooner"), held=(("Montreal", "Denver"),)),
    F("split_tunnel_compare", "comparison", 5, (
        "is split tunnelling allowed in {site} and in {site2}",
        "split tunneling {site} vs {site2}",
        "vpn rules in {site} compared to {site2}"), held=(("Singapore", "Porto"),)),
    F("usb_compare", "comparison", 4, (
        "can staff use usb drives in {site} and in {site2}",
        "usb sticks allowed in {site} or {site2}",
        "removable media rules {site} vs {site2}"), held=(("Denver", "Montreal"),)),
    F("incident_compare", "comparison", 3, (
        "who do I report a security incident to in {site} and in {site2}",
        "incident reporting {site} vs {site2}"), held=(("Porto", "Singapore"),)),
    F("wifi_compare", "comparison", 4, (
        "compare guest wi-fi voucher validity between {site} and {site2}",
        "guest wifi {site} vs {site2}",
        "how long do guest wifi vouchers last in {site} and {site2}"), held=(("Tallinn", "Singapore"),)),
    F("window_compare", "comparison", 4, (
        "is the maintenance window longer in {site} or {site2}",
        "patch window {site} vs {site2}",
        "compare the maintenance windows of {site} and {site2}"), held=(("Porto", "Montreal"),)),
    F("helpdesk_compare", "comparison", 3, (
        "compare it helpdesk hours in {site} and {site2}",
        "helpdesk opening hours {site} vs {site2}"), held=(("Denver", "Tallinn"),)),
    F("escort_compare", "comparison", 3, (
        "do visitors need an escort in {site} and in {site2}",
        "visitor escort rules {site} vs {site2}"), held=(("Singapore", "Montreal"),)),
    # versions by year
    F("password_change", "temporal", 4, (
        "how did the password rules change between {year} and {year2}",
        "password policy {year} vs {year2}",
        "what changed in the password standard from {year} to {year2}"), held=(("2025", "2026"),)),
    F("training_change", "temporal", 3, (
        "how often was security awareness training required in {year} compared to {year2}",
        "phishing training {year} vs {year2}"), held=(("2025", "2026"),)),
    F("access_review_change", "temporal", 3, (
        "how did access reviews change between {year} and {year2}",
        "access review rules {year} vs {year2}"), held=(("2025", "2026"),)),
    F("site_window_change", "temporal", 3, (
        "how did the {site} maintenance window change between {year} and {year2}",
        "{site} patch window {year} vs {year2}"), held=(("Denver", "2025", "2026"),)),
    F("password_year", "temporal", 3, (
        "what will the password standard require in {year}",
        "password requirements in {year}"), held=(("2027",),)),
    F("training_year", "temporal", 2, (
        "how many days did we have for the awareness course in {year}",
        "security training deadline {year}"), held=(("2025",),)),
    # entities: systems, events and a project, and a rule of the site they are at
    F("entity_window", "bridge", 4, (
        "when is the maintenance window for the {entity}",
        "patch window for the {entity}",
        "when does the {entity} get patched"),
      entities=("Atlas build cluster", "Beacon platform"), held=(("Ledger platform",),)),
    F("entity_backup", "bridge", 3, (
        "how long are backups of the {entity} kept",
        "backup retention for the {entity}"),
      entities=("Ledger platform", "Beacon platform"), held=(("Atlas build cluster",),)),
    F("summit_wifi", "bridge", 3, (
        "how long is a guest wi-fi voucher valid at the {year} security summit",
        "guest wifi at the {year} security summit"), held=(("2026",), ("2027",), ("2024",))),
    F("summit_access", "bridge", 3, (
        "what are the building access hours at the {year} security summit",
        "badge hours during the {year} security summit"), held=(("2025",), ("2027",), ("2024",))),
    F("hackathon_access", "bridge", 2, (
        "what are the building access hours at the {year} hackathon",
        "guest wifi at the {year} hackathon"), held=(("2024",), ("2025",), ("2027",))),
    F("entity_incident", "bridge", 2, (
        "who handles security incidents for the {entity} team",
        "incident reporting for the {entity}"), entities=("Ledger platform", "Atlas build cluster")),
    F("entity_helpdesk", "bridge", 2, (
        "which helpdesk do I call about the {entity}",
        "helpdesk hours for the {entity} team"), entities=("Ledger platform", "Atlas build cluster")),
    F("entity_vpn", "bridge", 2, (
        "does the vpn allow split tunnelling for the {entity} team",
        "vpn rules for people working on the {entity}"), entities=("Ledger platform", "Atlas build cluster")),
    F("entity_usb", "bridge", 2, (
        "can the {entity} team use usb sticks",
        "usb drives for the {entity} engineers"), entities=("Beacon platform", "Ledger platform")),
    F("entity_where", "single", 3, (
        "where is the {entity} hosted",
        "which site hosts the {entity}"),
      entities=("Atlas build cluster", "Beacon platform"), held=(("Ledger platform",),)),
    # aggregations over the sites
    F("agg_window", "aggregation", 2, ("where is the maintenance window the longest",
                                       "rank sites by patch window length")),
    F("agg_wifi", "aggregation", 2, ("which site gives guests the longest wifi access",
                                     "longest guest wifi voucher of all sites")),
    F("agg_helpdesk", "aggregation", 2, ("which helpdesks are open on weekends", "is any it helpdesk open on sunday")),
    F("agg_backup", "aggregation", 2, ("where are backups kept the longest", "longest backup retention of all sites")),
    F("agg_vpn", "aggregation", 2, ("does any site have different vpn rules", "which sites override the vpn policy")),
    F("agg_refresh", "aggregation", 2, ("which site replaces laptops most often",
                                        "where do laptops get replaced soonest")),
    # questions the corpus cannot answer
    F("null_edr", "null", 2, ("what edr agent runs on our laptops", "which endpoint protection vendor do we have")),
    F("null_summit_budget", "null", 2, ("what is the budget for the {year} security summit",),
      held=(("2027",),)),
    F("null_phishing_stats", "null", 2, ("how many people clicked the phishing test this month",
                                         "phishing test click rate")),
    F("null_site_budget", "null", 2, ("what is the it budget of the {site} site",), held=(("Singapore",),)),
    F("null_fire_drill", "null", 2, ("when is the next fire drill in {site}", "fire drill schedule {site}"),
      held=(("Denver",),)),
    F("null_hackathon_organiser", "null", 2, ("who is organising the next hackathon",
                                              "next hackathon organiser")),
    F("null_staff_wifi", "null", 3, ("what's the staff wifi password in {site}", "{site} wifi password")),
    # one need
    F("lost_phone", "single", 4, ("i lost my work phone what do i do", "how fast do I need to report a stolen laptop",
                                  "stolen laptop what now")),
    F("install_software", "single", 4, ("how do I get software that isn't in the catalogue",
                                        "request a new software install", "can I install browser extensions")),
    F("confidential_email", "single", 3, ("how to send confidential files to a client",
                                          "encrypt an email to an external partner")),
    F("travel_laptop", "single", 3, ("which laptop do I take to a high risk country",
                                     "travelling abroad with my work laptop")),
    F("vpn_site", "single", 5, ("what is the vpn rule in {site}", "do we have to use the vpn in the {site} office",
                                "{site} vpn policy"), held=(("Singapore",),)),
    F("wifi_site", "single", 5, ("how long is a guest wi-fi voucher valid in {site}", "guest wifi {site}",
                                 "how do visitors get on the wifi in {site}"), held=(("Montreal",),)),
    F("restricted_data", "single", 3, ("where can restricted data be kept", "what counts as restricted data")),
    F("security_exception", "single", 3, ("how do I request a security exception",
                                          "who approves an exception to a security rule")),
    F("ai_tools", "single", 4, ("can I use chatgpt for work", "which ai assistant is approved",
                                "ai tools policy")),
    F("usb_site", "single", 4, ("are usb drives allowed at the {site} site", "can I use a usb stick in {site}"),
      held=(("Porto",),)),
    F("password_site", "single", 4, ("how long does my password have to be in {site}",
                                     "password length requirement {site}"), held=(("Tallinn",),)),
    F("reset_password", "single", 6, ("how do I reset my password", "forgot my password", "password reset")),
    F("mfa_new_phone", "single", 4, ("how do I move the authenticator app to a new phone",
                                     "new phone mfa setup")),
    F("admin_rights", "single", 3, ("how do admins get a privileged account", "how do I request admin rights")),
    F("printer_release", "single", 3, ("my printout is not coming out", "how does badge printing work")),
    F("helpdesk_site", "single", 4, ("{site} helpdesk hours", "when is the it helpdesk open in {site}")),
    F("building_site", "single", 3, ("building access hours in {site}", "can I get into the {site} office at night")),
    F("window_site", "single", 3, ("maintenance window {site}", "when are servers patched in {site}")),
    F("backup_site", "single", 2, ("how long are backups kept in {site}", "{site} backup retention")),
    F("report_phishing", "single", 4, ("how do I report a phishing email", "I clicked a suspicious link")),
]
FOLLOW_UPS = ("what about {site}?", "and for {site}?", "same for {site}", "how about {site}")


def slots(template: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


def normal(text: str) -> str:
    """Lower case words, no punctuation, no fillers: two questions that differ only so are the same."""
    out = " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())
    for filler in ("quick question", "question", "hello", "hey", "hi", "please"):
        out = re.sub(rf"(?<!\S){filler}(?!\S)", " ", out)
    return " ".join(out.split())


def labeled_questions() -> set[str]:
    path = HERE / "questions.jsonl"
    return {normal(json.loads(line)["question"]) for line in path.read_text(encoding="utf-8").splitlines() if line}


def is_held(family: Family, values: tuple[str, ...]) -> bool:
    return any(sorted(values) == sorted(h) for h in family.held)


def draw_values(rng: random.Random, family: Family, template: str) -> dict[str, str]:
    """Values of a template's slots that no labeled question of the family names."""
    names = slots(template)
    while True:
        values: dict[str, str] = {}
        if "site" in names:
            picked = rng.sample(SITES, 2 if "site2" in names else 1)
            values.update(zip(("site", "site2"), picked, strict=False))
        if "year" in names:
            years = sorted(rng.sample(YEARS, 2 if "year2" in names else 1))
            values.update(zip(("year", "year2"), map(str, years), strict=False))
        if "entity" in names:
            values["entity"] = rng.choice(family.entities)
        if not is_held(family, tuple(values.values())):
            return values


def surface(rng: random.Random, question: str) -> str:
    """The way people type: a greeting, a capital, a question mark or two, a site alias."""
    for site, alias in SITE_ALIASES.items():
        if site in question and rng.random() < ALIAS_RATE:
            question = question.replace(site, alias)
    if rng.random() < 0.35:
        question = question[0].upper() + question[1:]
    if rng.random() < 0.2:
        question = rng.choice(FILLERS) + question
    if not question.endswith("?") and rng.random() < 0.4:
        question += rng.choice(("?", "?", "??"))
    return question


def row_counts(family: Family) -> list[int]:
    total = family.weight * ROWS_PER_WEIGHT
    weights = [3, 2, 2, 1][:len(family.phrasings)] + [1] * max(0, len(family.phrasings) - 4)
    return [max(MIN_PER_PHRASING, round(total * w / sum(weights))) for w in weights]


def timestamp(rng: random.Random) -> int:
    """Seconds since FIRST_DAY 00:00 UTC: weekdays busier than weekends, working hours busier than nights."""
    day_weights = [5 if (FIRST_DAY + timedelta(days=d)).weekday() < 5 else 1 for d in range(N_DAYS)]
    day = rng.choices(range(N_DAYS), weights=day_weights)[0]
    hour = rng.choices(range(24), weights=[1] * 6 + [4, 8, 10, 10, 10, 8, 6, 8, 10, 10, 8, 6, 4] + [2] * 5)[0]
    return day * 86_400 + hour * 3600 + rng.randrange(3600)


def fmt_ts(sec: int) -> str:
    moment = datetime(FIRST_DAY.year, FIRST_DAY.month, FIRST_DAY.day, tzinfo=UTC) + timedelta(seconds=sec)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def build() -> tuple[dict[str, bytes], dict[str, object]]:
    """The log files (path under logs/ -> content) and the ground truth of log_families.json."""
    rng = random.Random(SEED)
    users = [f"u-{rng.getrandbits(24):06x}" for _ in range(N_USERS)]
    user_weights = [1 / (r + 1) ** 0.6 for r in range(N_USERS)]
    labeled = labeled_questions()
    rows: list[tuple[int, str, str]] = []
    families: list[dict[str, object]] = []
    follow_ups = 0
    for family in FAMILIES:
        counts = row_counts(family)
        for template, count in zip(family.phrasings, counts, strict=True):
            for _ in range(count):
                values = draw_values(rng, family, template)
                question = surface(rng, template.format(**values))
                if normal(question) in labeled:
                    raise SystemExit(f"{family.name}: {question!r} is a labeled question; change the family")
                sec, user = timestamp(rng), rng.choices(users, weights=user_weights)[0]
                rows.append((sec, user, question))
                if "site" in values and "site2" not in values and rng.random() < FOLLOW_UP_RATE:
                    other = rng.choice([s for s in SITES if s != values["site"]])
                    if not is_held(family, tuple({**values, "site": other}.values())):
                        rows.append((sec + rng.randint(20, 120), user, rng.choice(FOLLOW_UPS).format(site=other)))
                        follow_ups += 1
        families.append({"name": family.name, "type": family.type, "rows": sum(counts),
                         "phrasings": list(family.phrasings), "held": [list(h) for h in family.held]})
    rows.sort()
    by_day: dict[date, list[bytes]] = {}
    for sec, user, question in rows:
        day = FIRST_DAY + timedelta(days=sec // 86_400)
        line = json.dumps({"ts": fmt_ts(sec), "user": user, "query": question}, ensure_ascii=False)
        by_day.setdefault(day, []).append(line.encode("utf-8") + b"\n")
    files = {f"date={day.isoformat()}/part-000.jsonl": b"".join(lines) for day, lines in sorted(by_day.items())}
    truth = {"rows": len(rows), "users": len({u for _, u, _ in rows}), "days": len(by_day),
             "follow_ups": follow_ups, "families": families}
    return files, truth


def truth_text(truth: dict[str, object]) -> str:
    return json.dumps(truth, indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    out = HERE / "logs"
    for old in sorted(out.glob("date=*/part-000.jsonl")):
        old.unlink()
    files, truth = build()
    for name, content in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(content)
    (HERE / "log_families.json").write_text(truth_text(truth), encoding="utf-8")
    print(f"wrote {truth['rows']} rows of {truth['users']} users over {truth['days']} days to {out}")


if __name__ == "__main__":
    main()
