"""Generate the product documentation that the saasdocs labeled set is scored on: corpus.jsonl.

Quillstack, a fictional hosted data-pipeline product sold in four plans (Free, Team, Business, Enterprise) and
shipped in releases (4.2, 4.3, 5.0, 5.1). One JSON object a line::

    {"id": "support-team", "text": "...", "metadata": {"tier": "Team", "title": "..."}}

What is in there, on purpose:

* product-wide rules (no `tier` key): encryption, run duration, webhooks, regions, two-factor authentication,
  and the defaults that some plans override (API limits, run history, concurrency, backups, sync interval);
* per-tier rules (`tier` set): support, seats, connectors, API limits, run history, single sign-on, audit log,
  backups, uptime commitment and more;
* versions by effective date (`effective_from` and `release`, stated in the text too): the Business API limit,
  the Free row quota and the Enterprise audit log (4.2 and 5.0), the Team sync interval (4.2 and 4.3), and the
  default run history (4.2 and 5.1, not yet in force in 2026);
* release notes of the four releases (`release` set, no `tier` key);
* entities of three kinds with no `tier` or `release` key, each tied to a tier or a release by one sentence:
  connectors (Kestrel, Plover, Osprey, Condor, Heron, Wren), programs (Launchpad, Northstar, Harbor) and features
  (Replay Buffer, Lineage Graph, Drift Sentinel, Column Masking);
* distractors: billing, refunds, plan changes, the trial, onboarding, the command-line tool, a glossary.

The tier names Free, Team and Business are also common words, and the texts write them in lower case too ("a free
trial", "one business day", "customer success team").

Stdlib only and deterministic: re-running gives a byte-identical file. Usage::

    python3 data/saasdocs/generate_corpus.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "corpus.jsonl"

Record = dict[str, Any]
D: list[Record] = []


def doc(rid: str, title: str, text: str, tier: str | None = None, release: str | None = None,
        eff: str | None = None) -> None:
    """Add a document; `tier` and `release` left out of its metadata when None."""
    md: Record = {}
    if tier:
        md["tier"] = tier
    if release:
        md["release"] = release
    if eff:
        md["effective_from"] = eff
    md["title"] = title
    D.append({"id": rid, "text": " ".join(text.split()), "metadata": md})


# ---------------------------------------------------------------- product-wide rules (no tier)
doc("plans-overview", "Quillstack plans at a glance", """
Quillstack is sold in four plans: Free, Team, Business and Enterprise. Every plan runs on the same hosted
platform and receives every release on the same day; what differs between plans are limits (seats, monthly
active rows, API requests, how long run history is kept), the connectors you may use, the support you get and
a few administrative features such as single sign-on and audit logs. Each plan has its own page in this
documentation. Where a plan page says nothing about a topic, the product-wide rule applies.""")

doc("encryption", "Encryption at rest and in transit", """
All customer data handled by Quillstack is encrypted. Data in transit between your sources, our workers and
your destinations uses TLS 1.2 or newer; older protocol versions are refused. Data at rest, including staged
batches, run logs and stored credentials, is encrypted with AES-256, and the keys are rotated every 90 days by
our key management service. Encryption cannot be switched off and is the same on every plan. Customer-managed
keys are not offered.""")

doc("pipeline-run-limits", "Pipeline run duration limit", """
A single pipeline run may last at most six hours. When a run reaches that limit it is stopped, the rows already
loaded stay in the destination and the next scheduled run resumes from the last committed checkpoint. The limit
is the same for every workspace, whatever its plan; it protects shared workers from runaway jobs. If your
initial load of a large table needs longer, split it with a date filter or use incremental mode from the
start.""")

doc("webhook-retries", "Webhook delivery and retries", """
Quillstack can call a webhook when a run succeeds, fails or is cancelled. A delivery counts as failed when your
endpoint does not answer with a 2xx status within ten seconds. Failed deliveries are retried five times with
exponential backoff (after 1, 5, 30, 120 and 480 minutes), after which the event is dropped and shown as
undelivered in the workspace's notification history. Retry behaviour is identical on all plans and cannot be
configured.""")

doc("data-regions", "Hosting regions", """
When you create a workspace you choose where its data is processed and stored: the EU region (Frankfurt) or the
US region (Northern Virginia). The region is fixed for the life of the workspace; moving to another region means
creating a new workspace and re-creating the pipelines. Both regions are available to every customer at no extra
charge. Workers in one region never read or write data belonging to a workspace in the other.""")

doc("mfa", "Two-factor authentication", """
Every Quillstack user can turn on two-factor authentication with an authenticator app or a hardware security
key under Profile > Security. Workspace admins can require it for all members; members who have not set it up
are asked to do so at their next sign-in and cannot open the workspace until they have. Two-factor
authentication is included on all plans. SMS codes are not supported.""")

doc("sign-in-methods", "Ways to sign in", """
Members can sign in to Quillstack with an email address and password or with a Google account. Passwords need at
least twelve characters. SAML single sign-on and automatic provisioning of users are administrative features
that only some plans include; the plan pages describe them. A workspace that has switched on single sign-on can
still keep one owner account with a password, so that it is not locked out if the identity provider fails.""")

doc("api-rate-limits", "REST API rate limits (default)", """
The Quillstack REST API accepts 60 requests per minute per API token by default. This default applies to every
workspace whose plan page does not set a higher limit. A request over the limit receives HTTP 429 with a
Retry-After header giving the seconds to wait. Limits count per token, not per user, so creating several tokens
for one integration to get around the limit is against the terms of service. Read-only calls to the status
endpoint are not counted.""")

doc("run-history-retention-2025", "Run history retention (default)", """
Run history retention, effective 15 September 2025. Quillstack keeps the history of pipeline runs (start and end
times, row counts, warnings and the full run log) for 7 days by default; older runs are deleted every night. The
default applies to every workspace whose plan page does not say otherwise. Export the history through the API if
you need it longer.""", release="4.2", eff="2025-09-15")

doc("run-history-retention-2027", "Run history retention (default, from 5.1)", """
Run history retention, effective 1 February 2027, with release 5.1. The default history of pipeline runs kept
for workspaces whose plan page sets no period of its own doubles from 7 to 14 days. Runs older than 14 days are
deleted every night. Plans with a longer period of their own keep it unchanged.""", release="5.1", eff="2027-02-01")

doc("concurrent-pipelines", "Concurrent pipeline runs (default)", """
By default a workspace can run three pipelines at the same time. Further runs that are due wait in a queue and
start in the order they became due as soon as a slot is free; a queued run is never skipped. The default applies
unless your plan page allows more. The queue and the slots in use are shown on the Runs page, and an admin can
give one pipeline priority so that it jumps the queue.""")

doc("config-backups", "Backups of pipeline configuration (default)", """
Quillstack backs up the configuration of every workspace (pipelines, schedules, transformations, mappings and
connection settings, but not the data you move) once a day, and keeps each backup for 30 days. An admin can
restore a whole workspace or one pipeline from any kept backup under Settings > Backups. These are the defaults
for every plan whose page sets no other backup frequency.""")

doc("sync-frequency", "Minimum sync interval (default)", """
A pipeline can be scheduled to sync at fixed intervals or with a cron expression. By default the shortest
interval allowed between two scheduled runs of a pipeline is 60 minutes; a schedule that asks for runs more often
is saved but rounded up to the minimum. Manual runs started from the interface or the API do not count against
the interval. Plan pages list shorter minimum intervals where they apply.""")

doc("secrets-handling", "How credentials are stored", """
Passwords, API keys and private keys that you enter for a source or destination are written to an isolated
vault and never shown again in the interface; you can only replace them. Workers fetch a credential at the start
of a run and keep it in memory only. We recommend giving Quillstack a dedicated database user with read access to
the tables you sync and nothing more. Credentials of a deleted connection are destroyed within 24 hours.""")


doc("data-deletion", "Deleting a workspace", """
An owner can delete a workspace under Settings > General. Deletion stops every pipeline at once. Configuration,
run history and stored credentials are kept for 30 days in case the deletion was a mistake, during which support
can restore the workspace; after that they are purged from our systems and backups, and cannot be recovered. Data
already loaded into your own destinations is never touched.""")

doc("schema-drift", "Schema changes in sources", """
When a source table gains a column, Quillstack adds the column to the destination table on the next run and
backfills it for new rows only. A column removed at the source is kept in the destination and filled with nulls.
A change of a column's type that the destination cannot widen safely pauses the pipeline and notifies its owner,
who can accept the change or map the column by hand. This behaviour applies to every workspace.""")

doc("status-page", "Service status and incident notices", """
Current and past incidents are published on status.quillstack.example, with a component for each region and for
the API. Subscribe there for email or RSS notices. During an incident we post an update at least every 30
minutes until it is resolved, and a written post-incident review within five working days for any incident that
stopped pipelines for more than an hour.""")

# ---------------------------------------------------------------- Free
doc("support-free", "Support on the Free plan", """
Free workspaces are supported through the community forum and the documentation. Questions posted in the forum
are answered by other users and, when time allows, by Quillstack staff, but there is no guaranteed response time
and no ticket queue. Reports of a suspected security problem are the exception: send them to the security
address from any plan and they are answered within two working days.""", tier="Free")

doc("seats-free", "Seats on the Free plan", """
A Free workspace has up to three seats: one owner and two further members, who can all edit pipelines. Viewers
count as seats too. To add a fourth person, remove a member or move to a paid plan. Seats are per workspace, so a
person who belongs to two Free workspaces takes a seat in each of them.""", tier="Free")

doc("connectors-free", "Connectors on the Free plan", """
Free workspaces can use ten standard connectors: PostgreSQL, MySQL, Google Sheets, CSV files over SFTP, Stripe,
Shopify, Google Analytics, Airtable and two destinations, BigQuery and Snowflake. Premium connectors and the
connector SDK are not available. A Free workspace may have at most five active pipelines at any time.""",
    tier="Free")

doc("row-quota-free-2025", "Monthly active rows on the Free plan", """
Monthly active rows on the Free plan, effective 15 September 2025. A Free workspace may sync up to 500,000 monthly
active rows, counted as distinct rows inserted or updated in a destination during a calendar month. When the quota
is reached, pipelines pause until the first day of the next month; nothing is charged.""", tier="Free",
    release="4.2", eff="2025-09-15")

doc("row-quota-free-2026", "Monthly active rows on the Free plan (from 5.0)", """
Monthly active rows on the Free plan, effective 1 June 2026, with release 5.0. The quota of a Free workspace was
raised from 500,000 to one million monthly active rows a month. The way rows are counted did not change, and
pipelines still pause at the quota until the first day of the next month.""", tier="Free", release="5.0",
    eff="2026-06-01")

doc("free-inactivity", "Inactive Free workspaces", """
Pipelines of a Free workspace are paused when no member has signed in for 30 days; we send the owner a reminder a
week before. Paused pipelines keep their configuration and resume when someone signs in and switches them back
on. A Free workspace nobody has opened for twelve months is deleted after two warnings by email.""", tier="Free")

# ---------------------------------------------------------------- Team
doc("support-team", "Support on the Team plan", """
Team customers can open support tickets from the help menu or by email. We send a first response within one
business day (Monday to Friday, 08:00 to 18:00 in the workspace's region), whatever the severity. Tickets can be
written in English or German. Phone support and a named contact are not part of this plan.""", tier="Team")

doc("seats-team", "Seats on the Team plan", """
A Team workspace includes up to 25 seats. Members can have the role owner, admin, editor or viewer, and every role
takes a seat. Seats are billed per month for the members who were active in that month, so a member you remove
stops being charged on the next invoice. More than 25 people need a move to a larger plan.""", tier="Team")

doc("connectors-team", "Connectors on the Team plan", """
Team workspaces can use all 140 standard connectors of the catalogue, sources and destinations alike, with no
limit on the number of pipelines. Premium connectors, marked with a diamond in the catalogue, cannot be added. A
connector that moves from the standard to the premium list keeps working in pipelines that already use it.""",
    tier="Team")

doc("api-rate-limits-team", "REST API rate limits on the Team plan", """
On the Team plan the REST API accepts 300 requests per minute per API token, instead of the product-wide default.
The limit applies to each token separately, and the response headers X-RateLimit-Remaining and X-RateLimit-Reset
show how much is left in the current minute.""", tier="Team")

doc("run-history-team", "Run history on the Team plan", """
Team workspaces keep the history of their pipeline runs, with row counts, warnings and the full run log, for 30
days. Runs older than that are deleted every night. The history can be exported as CSV from the Runs page or read
through the API before it expires.""", tier="Team")

doc("sync-frequency-team-2025", "Minimum sync interval on the Team plan", """
Minimum sync interval on the Team plan, effective 15 September 2025. Pipelines of a Team workspace may be
scheduled as often as every 15 minutes. Schedules asking for shorter intervals are rounded up to 15 minutes.""",
    tier="Team", release="4.2", eff="2025-09-15")

doc("sync-frequency-team-2026", "Minimum sync interval on the Team plan (from 4.3)", """
Minimum sync interval on the Team plan, effective 20 January 2026, with release 4.3. Team pipelines may now be
scheduled every 5 minutes, down from 15 minutes. Pipelines already scheduled keep their interval until someone
edits the schedule.""", tier="Team", release="4.3", eff="2026-01-20")

# ---------------------------------------------------------------- Business
doc("support-business", "Support on the Business plan", """
Business customers get a first response within four business hours for normal tickets and within one hour for
urgent ones (production pipelines down), around the clock on weekdays and from 08:00 to 20:00 UTC at weekends.
Urgent tickets can also be raised by phone. Each Business account has a shared customer success team that runs a
review twice a year.""", tier="Business")

doc("seats-business", "Seats on the Business plan", """
A Business workspace includes up to 250 seats, and an organisation can hold several Business workspaces under one
contract. Beside the usual roles, Business adds custom roles, so you can, for example, let an analyst start runs
without editing pipelines. Guest viewers from outside your company also take a seat.""", tier="Business")

doc("connectors-business", "Connectors on the Business plan", """
Business workspaces can use every standard connector and every premium connector of the catalogue, including the
database change-data-capture sources. Premium connectors carry no extra fee. Connectors built with the connector
SDK cannot be deployed on this plan.""", tier="Business")

doc("api-rate-limits-business-2025", "REST API rate limits on the Business plan", """
REST API limits on the Business plan, effective 15 September 2025. The API accepts 1,200 requests per minute per
API token. Bulk endpoints (pipeline export and import) count as ten requests each, and a request over the
limit is answered with HTTP 429 and a Retry-After header.""", tier="Business",
    release="4.2", eff="2025-09-15")

doc("api-rate-limits-business-2026", "REST API rate limits on the Business plan (from 5.0)", """
REST API limits on the Business plan, effective 1 June 2026, with release 5.0. The limit per API token was raised
from 1,200 to 3,000 requests per minute, and bulk endpoints now count as five requests each instead of ten.
Integrations need no change to benefit.""", tier="Business", release="5.0", eff="2026-06-01")

doc("run-history-business", "Run history on the Business plan", """
Business workspaces keep the history of their pipeline runs for 90 days, including the full run log of every run
and the sample of rejected rows. After 90 days a run's log is deleted, but its summary (times, status and row
counts) stays visible for a further year.""", tier="Business")

doc("sso-business", "Single sign-on on the Business plan", """
Business workspaces can connect one SAML 2.0 identity provider, such as Okta, Microsoft Entra ID or Google
Workspace, and require members to sign in through it. Users are created on their first sign-in (just-in-time
provisioning); removing a user in the identity provider does not remove the seat, which an admin must do by
hand.""", tier="Business")

doc("audit-log-business", "Audit log on the Business plan", """
Business workspaces record an audit log of administrative events: sign-ins, role changes, new and deleted
connections, changes to pipelines and exports of data. Admins can search it in the interface and download it as
JSON. Entries are kept for one year.""", tier="Business")

doc("backups-business", "Configuration backups on the Business plan", """
For Business workspaces the configuration backup runs every six hours instead of once a day, and each backup is
kept for 60 days. Restoring works as on other plans, from Settings > Backups, and can be limited to a single
pipeline.""", tier="Business")

doc("sync-frequency-business", "Minimum sync interval on the Business plan", """
Business pipelines may be scheduled as often as every minute. Pipelines reading from a change-data-capture
connector can also run continuously, streaming changes as they arrive with a delay of a few seconds.""",
    tier="Business")

doc("concurrency-business", "Concurrent pipeline runs on the Business plan", """
A Business workspace can run up to 20 pipelines at the same time. Runs due beyond that wait in the queue, and admins
can reserve up to five of the slots for pipelines marked critical so that a backlog of ordinary runs cannot delay
them.""", tier="Business")

doc("sla-business", "Uptime commitment on the Business plan", """
For Business workspaces Quillstack commits to 99.9% monthly availability of the scheduler and the API. If a month
falls below it, the customer can claim a service credit of 10% of that month's fee, or 25% below 99.0%, by opening
a ticket within 30 days.""", tier="Business")

# ---------------------------------------------------------------- Enterprise
doc("support-enterprise", "Support on the Enterprise plan", """
Enterprise support runs 24 hours a day, seven days a week. Critical incidents get a first response within 30
minutes, high-severity tickets within two hours and all others within one business day. Every Enterprise account has
a named technical account manager, quarterly reviews and a private chat channel with our engineers.""",
    tier="Enterprise")

doc("seats-enterprise", "Seats on the Enterprise plan", """
Enterprise contracts have no limit on seats: the number of members is set by the organisation, and seats are not
billed one by one. Custom roles, groups synchronised from the identity provider and delegated administration of
single workspaces are all included.""", tier="Enterprise")

doc("connectors-enterprise", "Connectors on the Enterprise plan", """
Enterprise workspaces can use every standard and premium connector and can also deploy private connectors built
with the connector SDK. Private connectors run in the same isolated workers as the catalogue's and are visible
only to the organisation that deployed them.""", tier="Enterprise")

doc("api-rate-limits-enterprise", "REST API rate limits on the Enterprise plan", """
Enterprise contracts set the API limit per token; unless the contract says otherwise it is 10,000 requests per
minute. A workspace can ask its account manager for a temporary raise ahead of a planned migration.""",
    tier="Enterprise")

doc("run-history-enterprise", "Run history on the Enterprise plan", """
Enterprise workspaces keep the complete history of their pipeline runs for 400 days, enough to compare a month with
the same month of the previous year. The history can also be streamed continuously to the customer's own storage
bucket.""", tier="Enterprise")

doc("sso-enterprise", "Single sign-on on the Enterprise plan", """
Enterprise organisations can connect several SAML 2.0 or OpenID Connect identity providers, for example one per
subsidiary, and provision and remove users and groups automatically through SCIM. Sign-in through the identity
provider can be enforced for every member, including owners, once a break-glass account has been named.""",
    tier="Enterprise")

doc("audit-log-enterprise-2025", "Audit log on the Enterprise plan", """
Audit log on the Enterprise plan, effective 15 September 2025. Enterprise organisations get the audit log of
administrative events with every entry kept for two years, searchable in the interface and downloadable as
JSON.""", tier="Enterprise", release="4.2", eff="2025-09-15")

doc("audit-log-enterprise-2026", "Audit log on the Enterprise plan (from 5.0)", """
Audit log on the Enterprise plan, effective 1 June 2026, with release 5.0. Audit entries are now kept for three
years instead of two, and they can be streamed in real time to a SIEM through a syslog or HTTPS sink. Entries
recorded before the change are kept for three years as well.""", tier="Enterprise", release="5.0",
    eff="2026-06-01")

doc("backups-enterprise", "Configuration backups on the Enterprise plan", """
Enterprise configuration is backed up every hour, and each backup is kept for 90 days in a second region, so a
workspace can be restored even if its home region is unavailable. Restores can be made to a point in time and
rehearsed in a sandbox workspace.""", tier="Enterprise")

doc("sla-enterprise", "Uptime commitment on the Enterprise plan", """
Quillstack commits to 99.95% monthly availability of the scheduler, the workers and the API for Enterprise
organisations. Service credits are 10% of the monthly fee below that figure, 25% below 99.5% and 50% below
99.0%, and are applied automatically without a claim.""", tier="Enterprise")

doc("concurrency-enterprise", "Concurrent pipeline runs on the Enterprise plan", """
Enterprise organisations can run up to 100 pipelines at once in each workspace, and dedicated workers can be
ordered so that runs never share capacity with other customers. Runs due beyond the limit wait in the queue as on
every plan.""", tier="Enterprise")

doc("private-networking-enterprise", "Private networking on the Enterprise plan", """
Enterprise workspaces can reach sources and destinations over AWS PrivateLink or Azure Private Link instead of the
public internet, and can pin workers to fixed egress IP addresses that are not shared with other customers.""",
    tier="Enterprise")

# ---------------------------------------------------------------- releases
doc("release-4-2", "Release notes: Quillstack 4.2", """
Release 4.2, effective 15 September 2025. This release introduced the Replay Buffer, moved transformations to the
Python 3.11 runtime, and added bulk export and import of pipelines through the API. Plan limits were published per
plan for the first time. The legacy v1 API was deprecated and will be removed in a later release.""",
    release="4.2", eff="2025-09-15")

doc("release-4-3", "Release notes: Quillstack 4.3", """
Release 4.3, effective 20 January 2026. Highlights: the Lineage Graph, which shows where every destination column
comes from; the Drift Sentinel; a shorter minimum sync interval for Team workspaces; and retry policies that can be
set per pipeline. The interface gained a dark theme. The deprecated v1 API stopped accepting new tokens.""",
    release="4.3", eff="2026-01-20")

doc("release-5-0", "Release notes: Quillstack 5.0", """
Release 5.0, effective 1 June 2026. The major release brought Column Masking, the Python 3.12 transformation
runtime, a higher monthly active row quota for Free workspaces, higher API limits for Business, and three years of
audit log for Enterprise. The v1 API was removed. Pipelines written for the 3.11 runtime keep running on it until
release 5.2.""", release="5.0", eff="2026-06-01")

doc("release-5-1", "Release notes: Quillstack 5.1 (upcoming)", """
Release 5.1, effective 1 February 2027. Announced changes: the default run history doubles to 14 days, schedules
can follow a business calendar that skips public holidays, and the connector catalogue gets a search by
capability. This page will be updated until the release date.""", release="5.1", eff="2027-02-01")

# ---------------------------------------------------------------- entities: connectors
doc("connector-kestrel", "Kestrel connector", """
The Kestrel connector reads data from SAP ERP systems, including S/4HANA and ECC, through the ODP interface, and
handles the delta queues so that only changed records are moved. The Kestrel connector is included with the
Business plan. Setting it up needs an SAP user with the authorisations listed in the connector's guide, and a
first full extract usually takes a weekend.""")

doc("connector-osprey", "Osprey connector", """
The Osprey connector captures changes from Oracle databases by reading the redo log, with no triggers on your
tables. It supports Oracle 12c and later, including RAC. The Osprey connector is part of the Enterprise plan only.
Your database administrator must enable supplemental logging before the first sync.""")

doc("connector-heron", "Heron connector", """
The Heron connector syncs contacts, companies, deals and activities from HubSpot, including custom objects and
properties, and follows deletions. The Heron connector became available to customers on the Team plan. Syncs use
the incremental search API and so count little against HubSpot's own API allowance.""")

doc("connector-plover", "Plover connector", """
The Plover connector loads files from SharePoint and OneDrive document libraries: Excel workbooks sheet by sheet,
CSV and JSON. It watches folders for new files and can archive each file after loading. The Plover connector is
offered on the Business plan.""")

doc("connector-wren", "Wren connector", """
The Wren connector copies form responses from Typeform and Google Forms into a table per form, with one column per
question. The Wren connector is available on the Free plan. It polls for new responses on the workspace's sync
schedule.""")

doc("connector-condor", "Condor connector", """
The Condor connector extracts data from mainframe DB2 for z/OS and from VSAM files through a small agent installed
next to the mainframe. It is sold with the Enterprise plan. The agent needs outbound HTTPS only.""")

# ---------------------------------------------------------------- entities: features
doc("feature-lineage-graph", "Lineage Graph", """
The Lineage Graph draws, for every table and column in your destinations, the sources, pipelines and
transformations it comes from, and what depends on it downstream. Click a column to see its path; click a pipeline
to see what a change would affect. The Lineage Graph was introduced in release 4.3 and is updated after every
run.""")

doc("feature-column-masking", "Column Masking", """
Column Masking hides or hashes sensitive columns (emails, phone numbers, national IDs) before they are written to
a destination, using rules you set per column or per tag. Masked values can be kept joinable by hashing them with a
workspace key. Column Masking arrived in release 5.0.""")

doc("feature-replay-buffer", "Replay Buffer", """
The Replay Buffer keeps the raw batches a pipeline read from its source for a few days, so that a failed load or a
faulty transformation can be run again without reading the source a second time. Replay Buffer shipped with release
4.2.""")

doc("feature-drift-sentinel", "Drift Sentinel", """
The Drift Sentinel watches the values flowing through a pipeline and warns when a column's distribution shifts
suddenly, for example when a currency column starts arriving in cents instead of euros, or when the share of nulls
jumps. Drift Sentinel first appeared in release 4.3.""")

# ---------------------------------------------------------------- entities: programs
doc("program-launchpad", "Launchpad program for startups", """
Launchpad helps young companies build their data stack. Startups less than three years old with under 5 million
in funding get the Team plan at no charge for twelve months, plus two onboarding calls with a solutions engineer.
Apply through the Launchpad form with your company registration; approval takes about a week.""")

doc("program-northstar", "Northstar partner program", """
Northstar is our program for consultancies and systems integrators who build pipelines for their clients.
Northstar partners receive a Business plan workspace for their own use, partner training and certification, and a
listing in the partner directory. Each client still needs a workspace and contract of its own.""")

doc("program-harbor", "Harbor migration program", """
Harbor moves customers from another pipeline tool to Quillstack: our engineers translate the existing jobs, run
both systems side by side and switch over when the results match. The Harbor migration program is reserved for
customers signing an Enterprise contract, and typically runs six to ten weeks.""")

# ---------------------------------------------------------------- distractors
doc("billing-invoices", "Invoices and currencies", """
Invoices are issued on the first working day of each month and sent to the billing contacts of the organisation.
They can be paid in euros, US dollars or pounds sterling; the currency is chosen when the first paid subscription
starts and can be changed only at renewal. VAT is added where it applies, so enter your VAT number under Billing to
have it reverse-charged.""")

doc("billing-payment-methods", "Payment methods", """
Monthly subscriptions are paid by credit or debit card. Annual contracts can also be paid by bank transfer within
30 days of the invoice date; the bank details are printed on the invoice, and the invoice number must be given as
the payment reference. Purchase orders are accepted when their number is entered under Billing before the invoice is
issued.""")

doc("billing-refunds", "Refunds and cancellations", """
A monthly subscription can be cancelled at any time and ends at the close of the month already paid; there are no
partial refunds. Annual subscriptions cancelled within 30 days of their start are refunded in full, less any
usage above the plan's included volume. After that, an annual subscription runs to its end date.""")

doc("plan-changes", "Changing plans", """
Moving to a larger plan takes effect at once, and the difference for the current period is charged pro rata. Moving
to a smaller plan takes effect at the next renewal, after the workspace's members, pipelines and connectors have
been brought within the smaller plan's limits; the billing page lists what must change first.""")

doc("free-trial", "Trying paid features", """
Any new organisation can start a 14-day free trial of the paid features from the billing page, once. The trial
needs no card. When it ends, the workspace returns to its previous plan; pipelines that use connectors or limits
of the trial are paused, not deleted, so that nothing is lost if you subscribe later.""")

doc("onboarding-first-pipeline", "Building your first pipeline", """
To build your first pipeline, open Pipelines > New, choose a source connector and enter its connection details,
pick the tables or objects to sync, then choose a destination and a schedule. Run the pipeline once by hand and
check the row counts on the Runs page before you switch the schedule on. Most people have data flowing within
fifteen minutes.""")

doc("onboarding-invite", "Inviting your team", """
Invite colleagues from Settings > Members by entering their email addresses and choosing a role for each. They get
an email with a link that stays valid for seven days; an admin can send it again from the same page. Give
everyone the least access they need: viewers can see pipelines and runs but cannot change anything.""")

doc("cli-install", "Installing the quill command-line tool", """
The quill command-line tool manages pipelines as code. Install it with pip install quill-cli or with Homebrew,
then run quill login, which opens the browser to create a token. quill pull writes a workspace's pipelines to
YAML files, and quill push applies the files after showing a diff, so that changes can be reviewed in a pull
request.""")


doc("glossary", "Glossary", """
Source: a system Quillstack reads from. Destination: a warehouse or database it writes to. Pipeline: a source, a
destination, a selection of tables and a schedule. Run: one execution of a pipeline. Monthly active rows: distinct
rows inserted or updated in a destination during a calendar month. Workspace: a set of pipelines and members
that share settings.""")


def build() -> list[Record]:
    ids = [r["id"] for r in D]
    assert len(ids) == len(set(ids)), "duplicate ids"
    return D


def main() -> None:
    records = build()
    with OUT.open("w", encoding="utf-8", newline="\n") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} records to {OUT}")


if __name__ == "__main__":
    main()
