"""Generate the IT and security policy handbook that the itpolicy labeled set is scored on: corpus.jsonl.

A fictional company with five sites (Tallinn, Porto, Montreal, Singapore, Denver). One JSON object a line::

    {"id": "vpn-singapore", "text": "...", "metadata": {"site": "Singapore", "year": null, "title": "..."}}

What is in there, on purpose:

* company-wide rules (`site` null): passwords, disk encryption, laptop replacement, VPN, removable media,
  incident reporting, training, access reviews, data classes, backups and more;
* local overrides (`site` set) of six of them at one site each, which add to or replace the company rule there;
* per-site rules of four topics at every site (maintenance window, helpdesk, guest Wi-Fi, building access);
* versions by effective date (`effective_from`, stated in the text too): the password standard 2025, 2026 and
  2027 (not yet in force in 2026), awareness training and access reviews 2025 and 2026, Denver's maintenance
  window 2025 and 2026;
* entities of three kinds, each tied to a site by one sentence and by nothing else: systems hosted at a site
  (Ledger, Atlas, Beacon), events held at a site (the Security Summits, the hackathon) and a project based at a
  site (Orion). Their metadata has no `site` key: the indexer reads the site the sentence names;
* two long documents (acceptable use, data classification) that the chunker cuts into several chunks.

No site document names an entity, and no company-wide document names a site.

Stdlib only and deterministic: re-running gives a byte-identical file. Usage::

    python3 data/itpolicy/generate_corpus.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "corpus.jsonl"
SITES = ("Tallinn", "Porto", "Montreal", "Singapore", "Denver")
FROM_TEXT = "<from text>"  # as `site`: leave the key out, so the indexer reads the site the text names

Record = dict[str, Any]


def text(block: str) -> str:
    """A wrapped triple-quoted block as paragraphs: lines joined with spaces, a blank line starts a new one."""
    return "\n\n".join(" ".join(p.split()) for p in block.strip().split("\n\n") if p.strip())


def record(rid: str, title: str, body: str, *, site: str | None = None, year: int | None = None,
           effective: str | None = None) -> Record:
    """One corpus record; `effective` (YYYY-MM-DD) makes it a version of the policy its id names without the year."""
    metadata: dict[str, Any] = {"site": site, "year": year}
    if site == FROM_TEXT:
        del metadata["site"]
    if effective:
        metadata["effective_from"] = effective
    metadata["title"] = title
    return {"id": rid, "text": text(body), "metadata": metadata}


def company_wide() -> list[Record]:
    return [
        record("acceptable-use", "Acceptable use of company IT", """
            Acceptable use of company IT. Company laptops, phones, accounts and networks are provided for work.
            Occasional personal use, such as reading the news or making a private call during a break, is allowed
            as long as it does not get in the way of work, cost the company money or break another rule of this
            handbook.

            Not allowed on company equipment or accounts: installing cracked or pirated software, mining
            cryptocurrency, sharing your account or your badge with anyone, switching off or working around
            security tools, storing a personal film or music library, and running your own servers or network
            scanners without written approval from the security team.

            Monitoring. To protect staff and customers, the security team collects device, network and sign-in
            logs from company equipment. The content of private messages is not read, except during an
            investigation that legal and human resources have approved in writing. Logs are handled under the
            security logging rule.

            Consequences. A breach of this rule is handled under the disciplinary procedure. Access can be
            suspended at once when a device or an account puts other people at risk. If you are unsure whether
            something is allowed, ask the security desk before you do it.
            """),
        record("passwords-2025", "Password and sign-in standard 2025", """
            Password and sign-in standard, effective 1 January 2025. Passwords of company accounts must have at
            least 12 characters and be changed every 180 days; the last five passwords may not be reused.
            Multi-factor authentication with the authenticator app is required for email and the VPN. Keep
            passwords only in the company password manager.
            """, year=2025, effective="2025-01-01"),
        record("passwords-2026", "Password and sign-in standard 2026", """
            Password and sign-in standard, effective 1 February 2026, replacing the 2025 standard. Passwords must
            have at least 14 characters. Scheduled password changes are dropped: change a password only when it may
            have been exposed. Multi-factor authentication is required for every company system that supports it,
            and passkeys count as multi-factor. Text message codes are no longer accepted as a second factor. Keep
            passwords only in the company password manager.
            """, year=2026, effective="2026-02-01"),
        record("passwords-2027", "Password and sign-in standard 2027", """
            Password and sign-in standard, effective 1 January 2027, replacing the 2026 standard. Administrators
            must sign in with a passkey or a hardware security key; a password alone is no longer accepted for a
            privileged account. For everyone else the minimum password length rises to 16 characters. The
            authenticator app remains an accepted second factor.
            """, year=2027, effective="2027-01-01"),
        record("laptop-encryption", "Laptop disk encryption", """
            Laptop disk encryption. Every company laptop must have full-disk encryption switched on before it is
            handed to its user, with the recovery key escrowed in the device management system. A laptop found
            unencrypted at a compliance check is blocked from company systems until IT has encrypted it. Never keep
            company data on a device that is not encrypted.
            """),
        record("device-refresh", "Laptop replacement cycle", """
            Laptop replacement cycle. Company laptops are replaced every four years. IT contacts you two months
            before your laptop is due; the old device is wiped and handed back to IT within two weeks of receiving
            the new one. An earlier replacement needs a hardware fault confirmed by the helpdesk.
            """),
        record("vpn-remote-access", "Remote access and VPN", """
            Remote access and VPN. Internal systems can only be reached through the company VPN when you are off
            the company network. The VPN client connects on demand, and split tunnelling is allowed so that video
            calls go straight to the internet. Use no remote desktop tool other than the one IT provides. Public
            Wi-Fi is allowed only with the VPN connected.
            """),
        record("removable-media", "Removable media", """
            Removable media. USB storage devices, memory cards and external disks are blocked on all company
            laptops; move files through the company file share instead. Keyboards, mice, headsets and chargers keep
            working: only storage is blocked.
            """),
        record("incident-reporting", "Reporting a security incident", """
            Reporting a security incident. Report any suspected security incident, such as a phishing link you
            clicked, malware, a lost badge or data sent to the wrong person, to the security desk within one hour
            of noticing it, through the security hotline or the incident form in the service portal. Do not
            investigate on your own and do not delete anything. The security desk triages every report within 30
            minutes during working hours. Reporting a mistake of your own is never held against you.
            """),
        record("phishing-training-2025", "Security awareness training 2025", """
            Security awareness training, effective 1 January 2025. Every employee completes the online security
            awareness course once a year, within 30 days of the invitation. New joiners complete it in their first
            month.
            """, year=2025, effective="2025-01-01"),
        record("phishing-training-2026", "Security awareness training 2026", """
            Security awareness training, effective 1 April 2026, replacing the 2025 rule. The online course is now
            taken twice a year, each time within 14 days of the invitation, and every employee receives a simulated
            phishing email once a month. Anyone who clicks a simulated phishing link twice in one quarter is booked
            into a short live session.
            """, year=2026, effective="2026-04-01"),
        record("access-reviews-2025", "Access reviews 2025", """
            Access reviews, effective 1 January 2025. Managers review the system access of their team once a year;
            administrator accounts are reviewed every quarter by the system owner.
            """, year=2025, effective="2025-01-01"),
        record("access-reviews-2026", "Access reviews 2026", """
            Access reviews, effective 1 July 2026, replacing the 2025 rule. Access to systems that hold
            confidential or restricted data is reviewed every quarter, and all other access twice a year. Access
            that is not confirmed within ten working days of the review request is removed automatically.
            """, year=2026, effective="2026-07-01"),
        record("software-installation", "Installing software", """
            Installing software. Install software only from the self-service catalogue in the service portal.
            Software that is not in the catalogue needs a security review: request it in the portal and allow five
            working days for the answer. Browser extensions follow the same rule, and trial or freeware licences
            count as software too.
            """),
        record("email-encryption", "Sending confidential data by email", """
            Sending confidential data by email. Emails to external recipients that contain confidential data must
            carry the Encrypt label; the recipient opens them with a one-time code. Attachments over 25 MB go
            through a secure share link that expires after 14 days. Restricted data and passwords are never sent
            by email.
            """),
        record("clean-desk", "Clean desk and screen lock", """
            Clean desk and screen lock. Lock your screen whenever you leave your desk; laptops lock themselves after
            five idle minutes. Leave no confidential papers on your desk overnight and collect printouts at once:
            printers release a job only when you tap your badge. Shred confidential paper in the locked bins.
            """),
        record("byod", "Personal devices", """
            Personal devices. Personal phones and tablets may open company email, calendar and chat only through
            the managed work app, which IT can wipe without touching your personal data. Company data must not be
            stored on personal laptops or desktops. Personal devices never join the staff network; they use the
            guest network.
            """),
        record("travel-devices", "Travelling with devices", """
            Travelling with devices. Before a business trip to a country on the security team's high-risk list,
            request a loaner laptop and phone from IT at least ten working days ahead, and leave your own company
            laptop at home. Loaner devices are wiped when they come back. On every other trip keep your laptop in
            your hand luggage and never leave it in a parked car.
            """),
        record("data-classification", "Data classification", """
            Data classification. Every piece of company information belongs to one of four classes, and its class
            decides how it is stored and shared.

            Public: information the company has published or approved for publication, such as the website, press
            releases and public documentation. It may be shared with anyone.

            Internal: the default class for everyday work, such as team plans, meeting notes and internal
            announcements. It stays inside the company and with contractors under contract, and may be kept in any
            system IT provides.

            Confidential: information whose disclosure would harm the company, its customers or its staff, such as
            contracts, customer lists, source code, financial results before publication and personal data of
            staff. It is shared only with people who need it, sent outside only with the Encrypt label, and kept
            only in systems approved for confidential data.

            Restricted: the most sensitive information, such as payment card data, health data, credentials,
            encryption keys and the evidence of a security incident. Access is granted by name and reviewed every
            quarter, and every access is logged. Restricted data is never sent by email, never printed and never
            stored on a laptop; it stays in the systems approved for it.

            Labels. Documents and emails show their class in the header or the label field; unlabelled information
            counts as internal. The owner of the information sets its class and changes it when circumstances
            change, for example once results are published. When in doubt, treat information as the higher class
            and ask the security desk.
            """),
        record("security-exceptions", "Exceptions to a security rule", """
            Exceptions to a security rule. When a rule of this handbook blocks legitimate work, request an exception
            in the service portal with the business reason and the risk owner. The security team answers within ten
            working days. Exceptions are approved by the chief information security officer and last at most six
            months; then they are renewed or closed.
            """),
        record("contractor-access", "Contractor accounts", """
            Contractor accounts. Accounts for contractors are created at the request of an employee who sponsors
            them, and they expire after 90 days. The sponsor can renew an account for another 90 days in the
            service portal. Contractor accounts never get administrator rights.
            """),
        record("admin-accounts", "Administrator accounts", """
            Administrator accounts. Administrators do administrative work with a separate privileged account,
            never with their everyday account. Privileged passwords are checked out from the privileged access vault
            for at most eight hours and rotated after each checkout. Email and web browsing are blocked for
            privileged accounts.
            """),
        record("lost-device", "Lost or stolen devices", """
            Lost or stolen devices. Report a lost or stolen company laptop or phone to the security desk within four
            hours, and a theft to the police where it happened. IT locks and wipes the device remotely. A
            replacement laptop is normally ready within three working days.
            """),
        record("cloud-storage", "File storage", """
            File storage. Keep work files in the company file share or in a team workspace of a system IT provides.
            Personal cloud storage, such as a private drive or a photo backup, must not hold company files. Files
            shared outside the company use links that expire.
            """),
        record("ai-tools", "Generative AI tools", """
            Generative AI tools, effective 1 September 2026. Use only the company's approved AI assistant, which
            keeps prompts inside the company tenant. Confidential data may be used in it; restricted data may not.
            Public chatbots and browser AI plugins must not receive any company data that is not public. Code
            written with AI help is reviewed like any other code.
            """, year=2026, effective="2026-09-01"),
        record("logging-monitoring", "Security logging", """
            Security logging. Security logs of laptops, servers, network equipment and cloud services are collected
            centrally and kept for one year; logs of systems that hold restricted data are kept for three years. The
            security operations team watches the alerts around the clock.
            """),
        record("backup-policy", "Backups", """
            Backups. Company systems are backed up every night, and backups are kept for 35 days unless a site rule
            says otherwise. Backups are encrypted, and a copy is kept at a second location. Restore tests run every
            quarter; ask the helpdesk to restore a deleted file.
            """),
    ]


def overrides() -> list[Record]:
    """Local rules at one site each, adding to or replacing a company-wide rule there."""
    return [
        record("passwords-singapore", "Sign-in rule, Singapore site", """
            Sign-in rule for the Singapore site. Staff at the Singapore site who use the payment and banking systems
            sign in to them with a hardware security key issued by site IT; the authenticator app is not accepted
            for those systems. Otherwise the company password standard applies in full.
            """, site="Singapore"),
        record("device-refresh-montreal", "Laptop replacement, Montreal site", """
            Laptop replacement at the Montreal site. Laptops at the Montreal site are leased for three years, so
            they are replaced every three years instead of on the company cycle. Return the leased laptop with its
            charger within five working days of receiving the replacement; a missing charger is billed to the cost
            centre.
            """, site="Montreal"),
        record("vpn-singapore", "VPN, Singapore site", """
            VPN at the Singapore site. To meet the local financial regulator's requirements, laptops of Singapore
            staff keep the VPN always on, in the office too, and split tunnelling is switched off: all traffic,
            video calls included, goes through the VPN. Connecting from abroad needs the approval of the site
            security officer.
            """, site="Singapore"),
        record("removable-media-denver", "Removable media, Denver site", """
            Removable media at the Denver site. The Denver hardware lab flashes firmware onto test boards, so lab
            staff may use encrypted USB drives issued and registered by site IT. Every use is logged; personal or
            unregistered drives stay blocked. Outside the lab the company rule on removable media applies.
            """, site="Denver"),
        record("incident-reporting-porto", "Incident reporting, Porto site", """
            Incident reporting at the Porto site. Incidents at the Porto site that affect personal data or an
            essential service are also reported by the site security officer to the national cybersecurity
            authority within 24 hours. Porto staff therefore report to the security desk and, at the same time, to
            the Porto site security officer.
            """, site="Porto"),
        record("backup-tallinn", "Backups, Tallinn site", """
            Backups at the Tallinn site. Systems hosted at the Tallinn site hold accounting records, so their
            backups are kept for 90 days, and one backup a month is kept for seven years as bookkeeping law
            requires.
            """, site="Tallinn"),
        record("backup-singapore", "Backups, Singapore site", """
            Backups at the Singapore site. Systems hosted at the Singapore site are backed up every four hours, and
            their backups are kept for one year, as the local regulator requires. Restoring customer data needs the
            approval of the site security officer.
            """, site="Singapore"),
        record("byod-tallinn", "Personal laptops, Tallinn site", """
            Personal laptops at the Tallinn site. Contractors at the Tallinn site who bring their own laptop reach
            company systems only through the virtual desktop, which keeps all company data off the device; the
            laptop itself joins the guest network. Employees at the Tallinn site follow the company rule on personal
            devices.
            """, site="Tallinn"),
    ]


MAINTENANCE = {
    "Tallinn": """Maintenance window, Tallinn site. Servers and network equipment at the Tallinn site are patched on
        Sundays from 01:00 to 04:00 local time. A change outside the window needs an emergency change approved by
        the site IT lead.""",
    "Porto": """Maintenance window, Porto site: from Saturday 22:00 to Sunday 02:00 local time. Planned outages are
        announced in the site channel three days ahead.""",
    "Montreal": """Maintenance window, Montreal site: servers are patched on Sundays from 03:00 to 07:00 Eastern
        time; network equipment is updated on the first Sunday of the month only.""",
    "Singapore": """Maintenance window, Singapore site: from Saturday 23:00 to Sunday 03:00 Singapore time. Systems
        that take payments are patched only in the quarterly window agreed with the regulator.""",
}
HELPDESK = {
    "Tallinn": """IT helpdesk, Tallinn site: the walk-in desk on the second floor is open Monday to Friday from
        08:00 to 17:00. Outside those hours call the company service line.""",
    "Porto": """IT helpdesk, Porto site: open Monday to Friday from 08:30 to 18:00, and on Saturday mornings from
        09:00 to 12:00 for the operations floor.""",
    "Montreal": """IT helpdesk, Montreal site: Monday to Friday from 07:30 to 19:00 Eastern time, in French and
        English.""",
    "Singapore": """IT helpdesk, Singapore site: Monday to Saturday from 08:00 to 20:00; on Sundays an engineer is
        on call for the trading floor.""",
    "Denver": """IT helpdesk, Denver site: Monday to Friday from 07:00 to 16:00 Mountain time. The hardware lab has
        its own technician for test equipment.""",
}
GUEST_WIFI = {
    "Tallinn": """Guest Wi-Fi, Tallinn site: visitors get a voucher from reception that is valid for 8 hours. The
        guest network is separate from the staff network and reaches the internet only.""",
    "Porto": """Guest Wi-Fi, Porto site: reception hands out vouchers valid for 24 hours, for up to three devices
        each.""",
    "Montreal": """Guest Wi-Fi, Montreal site: a voucher is valid for 12 hours; guests accept the acceptable use
        notice on the sign-in page.""",
    "Singapore": """Guest Wi-Fi, Singapore site: reception issues a voucher after checking the visitor's photo ID;
        it is valid for 4 hours and can be renewed at reception.""",
    "Denver": """Guest Wi-Fi, Denver site: visitors sign up themselves with a phone number, and the access is valid
        for 7 days, for lab partners who stay a week.""",
}
BUILDING = {
    "Tallinn": """Building access, Tallinn site: staff badges open the office from 06:00 to 22:00 on weekdays;
        weekend access needs the site manager's approval. Visitors are escorted at all times. The server room opens
        only for IT staff, with a second factor at the door reader.""",
    "Porto": """Building access, Porto site: staff badges work around the clock. Visitors sign in at reception and
        wear a visitor badge; an escort is needed only on the operations floor.""",
    "Montreal": """Building access, Montreal site: badges work from 06:30 to 21:00 every day. Visitors are escorted
        by their host everywhere on the premises.""",
    "Singapore": """Building access, Singapore site: staff badges with a fingerprint check at the entrance, around
        the clock. Visitors leave photo ID at reception and are escorted at all times.""",
    "Denver": """Building access, Denver site: badges work from 05:00 to 23:00, and the hardware lab has its own
        badge group. Visitors to the lab are escorted; elsewhere they move freely once signed in.""",
}


def per_site() -> list[Record]:
    """Four topics every site rules for itself; Denver's maintenance window has two versions."""
    out = [record(f"maintenance-window-{s.lower()}", f"Maintenance window, {s} site", body, site=s)
           for s, body in MAINTENANCE.items()]
    out += [
        record("maintenance-window-denver-2025", "Maintenance window, Denver site, 2025", """
            Maintenance window, Denver site, effective 1 January 2025: servers and network equipment are patched on
            Saturdays from 22:00 to 02:00 Mountain time.
            """, site="Denver", year=2025, effective="2025-01-01"),
        record("maintenance-window-denver-2026", "Maintenance window, Denver site, 2026", """
            Maintenance window, Denver site, effective 1 May 2026, replacing the 2025 window: servers and network
            equipment are patched on Sundays from 00:00 to 05:00 Mountain time.
            """, site="Denver", year=2026, effective="2026-05-01"),
    ]
    for prefix, title, bodies in (("helpdesk", "IT helpdesk", HELPDESK), ("guest-wifi", "Guest Wi-Fi", GUEST_WIFI),
                                  ("building-access", "Building access", BUILDING)):
        out += [record(f"{prefix}-{s.lower()}", f"{title}, {s} site", body, site=s) for s, body in bodies.items()]
    return out


def entities() -> list[Record]:
    """Systems, events and a project, each tied to its site by one sentence (no `site` key)."""
    return [
        record("system-ledger", "Ledger finance platform", """
            The Ledger finance platform, which runs the general ledger, invoicing and the payroll exports, is hosted
            in the server room of the Tallinn site. The finance systems team owns it.
            """, site=FROM_TEXT),
        record("system-atlas", "Atlas build cluster", """
            The Atlas build cluster, where every product build and automated test runs, is hosted in the data hall
            of the Denver site. The developer productivity team operates it.
            """, site=FROM_TEXT),
        record("system-beacon", "Beacon support platform", """
            Beacon, the customer support platform of the support teams, is hosted at the Singapore site together with
            its ticket database.
            """, site=FROM_TEXT),
        record("summit-2025", "Security Summit 2025", """
            The Security Summit 2025 was held at the Montreal site on 14 and 15 October 2025, with talks on incident
            response and a tabletop exercise.
            """, site=FROM_TEXT, year=2025),
        record("summit-2026", "Security Summit 2026", """
            The Security Summit 2026 was held at the Porto site on 20 and 21 October 2026; about 200 people came for
            two days of talks on identity and cloud security.
            """, site=FROM_TEXT, year=2026),
        record("hackathon-2026", "Hackathon 2026", """
            The 2026 internal hackathon was held at the Tallinn site from 9 to 11 June 2026, with teams from every
            department.
            """, site=FROM_TEXT, year=2026),
        record("project-orion", "Project Orion", """
            Project Orion, the new payments app, is built by a team based at the Porto site.
            """, site=FROM_TEXT),
    ]


def check(records: list[Record]) -> None:
    """Ids unique; a company-wide record names no site; an entity names exactly one; a site record names no
    entity."""
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)), "duplicate ids"
    names = ("Ledger", "Atlas", "Beacon", "Summit", "hackathon", "Orion")
    for r in records:
        named = [s for s in SITES if s in r["text"]]
        site = r["metadata"].get("site", FROM_TEXT)
        if site is None:
            assert not named, f"{r['id']}: company-wide but names {named}"
        elif site == FROM_TEXT:
            assert len(named) == 1, f"{r['id']}: an entity names one site, not {named}"
        else:
            assert not any(n in r["text"] for n in names), f"{r['id']}: a site rule names an entity"


def build() -> list[Record]:
    records = company_wide() + overrides() + per_site() + entities()
    check(records)
    return records


def main() -> None:
    records = build()
    with OUT.open("w", encoding="utf-8", newline="\n") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} records to {OUT}")


if __name__ == "__main__":
    main()
