"""Generate the demo HR handbook corpus that planbake indexes: data/demo/corpus.jsonl.

One JSON object per line::

    {"id": "perdiem-lisbon", "text": "...",
     "metadata": {"office": "Lisbon", "year": null, "policy": "perdiem-lisbon",
                  "topic": "per diem", "title": "Travel per diem, Lisbon"}}

What is in there, on purpose:

* rules that differ by office (Berlin, Amsterdam, Lisbon, London, Warsaw, Toronto) and company-wide rules
  (office null), over twelve topics, with varied wording ("second parent", "partner", "non-birth parent")
  and qualifiers (part-time staff, adoptive and foster parents, interns, contractors);
* versioned policies: records sharing `policy` and office, each saying "effective 1 January 2026" and the
  newer ones "(replaces the 2025 version)"; one newest version takes effect on 1 January 2027;
* bridge facts: the engineering offsite and the sales kickoff of each year, office null, naming one city;
* a few records whose metadata has no "office" key at all, naming one office once in the text;
* about fifteen long documents (1,500-3,500 characters) that a chunker splits; the rest are short.

Stdlib only and deterministic (no randomness): re-running gives a byte-identical file. Usage::

    python3 data/demo/generate_corpus.py
"""

from __future__ import annotations

import json
import re
from datetime import date
from itertools import pairwise
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "corpus.jsonl"

OFFICES = ("Berlin", "Amsterdam", "Lisbon", "London", "Warsaw", "Toronto")
OFFICE_WORDS = (*OFFICES, "Lisboa", "Warszawa", "AMS")  # names and aliases an indexer may match
TOPICS = (
    "parental leave", "vacation", "sick leave", "per diem", "remote work allowance", "home-office equipment",
    "offsites", "relocation", "learning budget", "public holidays", "travel booking", "expenses/reimbursement",
)
OMIT = "<omit>"  # as `office`: leave the key out of the metadata, so the indexer must read it from the text

Record = dict[str, Any]


def text(block: str) -> str:
    """A wrapped triple-quoted block as paragraphs: lines joined with spaces, a blank line starts a new one."""
    return "\n\n".join(" ".join(p.split()) for p in block.strip().split("\n\n") if p.strip())


def record(rid: str, topic: str, title: str, body: str, *, office: str | None = None,
           year: int | None = None, policy: str | None = None) -> Record:
    """One corpus record; `policy` defaults to the id (a policy with a single version)."""
    metadata: dict[str, Any] = {"office": office, "year": year, "policy": policy or rid, "topic": topic,
                                "title": title}
    if office == OMIT:
        del metadata["office"]
    return {"id": rid, "text": text(body), "metadata": metadata}


def company_wide(topic: str, rows: list[tuple[str, str, str]]) -> list[Record]:
    """Company-wide, not year-specific records from (id, title, text) rows."""
    return [record(rid, topic, title, body) for rid, title, body in rows]


def per_office(topic: str, prefix: str, rows: dict[str, tuple[str, str]]) -> list[Record]:
    """One record per office from {office: (title, text)}; the id and policy are `<prefix>-<office>`."""
    return [record(f"{prefix}-{office.lower()}", topic, title, body, office=office)
            for office, (title, body) in rows.items()]


# --------------------------------------------------------------------------------------------------
# Parental leave
# --------------------------------------------------------------------------------------------------

PARENTAL_LEAVE = {
    "Berlin": ("Parental leave, Berlin office", """
        Parental leave in the Berlin office. The birth parent receives 20 weeks of fully paid leave. This
        includes the 14 weeks of statutory maternity protection (Mutterschutz), during which the company tops
        up the statutory maternity benefit to full net salary. The second parent receives 6 weeks of fully
        paid leave, to be taken within 12 months of the birth. Unpaid Elternzeit under German law can be
        added on top of both entitlements.
    """),
    "Lisbon": ("Parental leave, Lisbon office", """
        Lisbon office parental leave. The birth parent is entitled to 20 weeks at full pay; the company tops
        up the social security parental allowance to 100% of salary. The non-birth parent receives 8 weeks at
        full pay. The first 28 days of the non-birth parent's leave are mandatory under Portuguese law and
        must be taken within 42 days of the birth; the remaining weeks can be taken at any point in the
        child's first year.
    """),
    "London": ("Parental leave, London office", """
        London parental leave at a glance. Birth parents on maternity leave receive 26 weeks at full pay,
        followed by 13 weeks at statutory maternity pay and 13 further weeks unpaid. Partners receive 4 weeks
        of paternity leave at full pay, in one block or as separate weeks within the first year. Untaken
        maternity leave can be converted into shared parental leave; the London parental leave FAQ explains
        how.
    """),
    "Warsaw": ("Parental leave, Warsaw office", """
        Parental leave, Warsaw. The birth parent receives 20 weeks of maternity leave, and the company pays
        the difference between the statutory maternity allowance and full salary. The second parent receives
        4 weeks of fully paid leave: 2 weeks of statutory paternity leave plus 2 company weeks. Statutory
        paternity leave must be used before the child turns one; the company weeks follow the same deadline.
    """),
    "Toronto": ("Parental leave, Toronto office", """
        Toronto parental leave. The birthing parent receives a top-up of Employment Insurance benefits to 100%
        of salary for 17 weeks. The non-birth parent receives the same top-up for 6 weeks of parental leave.
        Unpaid, job-protected leave under Ontario law continues beyond the top-up period: up to 78 weeks in
        total for a birth parent who takes both pregnancy leave and parental leave.
    """),
}

PARENTAL_LEAVE_AMSTERDAM = [
    (2025, """
        Parental leave, Amsterdam office, effective 1 January 2025. The birth parent receives 20 weeks of paid
        leave: the 16 weeks of statutory pregnancy and maternity leave plus 4 company weeks. The partner
        receives 5 weeks of paid partner leave, to be taken within six months of the birth. The company pays
        full salary for all 5 weeks, including the weeks for which the statutory benefit covers only part of
        the salary. Statutory parental leave (ouderschapsverlof) remains available on top.
    """),
    (2027, """
        Parental leave, Amsterdam office, effective 1 January 2027 (replaces the 2025 version). The birth
        parent receives 24 weeks of paid leave: the 16 statutory weeks plus 8 company weeks. The partner
        receives 10 weeks of fully paid partner leave, which can be taken in blocks of at least one week
        during the first twelve months after the birth. Parents whose child is born before 1 January 2027
        stay on the previous rules.
    """),
]

PARENTAL_LEAVE_COMPANY = [
    ("parental-leave-eligibility", "Parental leave: eligibility and notice", """
        Who can take paid parental leave. Paid parental leave is available from the first day of employment;
        there is no qualifying period for permanent staff. Employees on fixed-term contracts are covered until
        their contract ends. Tell your manager and HR at least 15 weeks before the expected week of birth, or
        as soon as you know the placement date for an adoption.
    """),
    ("parental-leave-adoption", "Parental leave for adoptive parents", """
        Adoptive parents. When a child is placed for adoption, the primary adopter receives the same paid
        leave as a birth parent in their office, and the other adopter receives the same as a second parent.
        Leave starts on the date of placement, not the date of the adoption order. Staff adopting a child from
        abroad can take up to 10 days of paid leave for travel before the placement.
    """),
    ("parental-leave-foster", "Parental leave for foster parents", """
        Foster parents. Employees approved as foster carers receive 4 weeks of paid leave when a child is
        placed with them for long-term or permanent fostering. For short-term placements, up to 5 paid days
        per placement are available, capped at 15 days a year. Foster-to-adopt placements follow the adoption
        rules from the day the child arrives.
    """),
    ("parental-leave-part-time", "Parental leave for part-time staff", """
        Part-time staff receive the same number of weeks of parental leave as full-time colleagues. Pay during
        the leave is based on contracted hours: someone working 24 hours a week is paid 60% of the full-time
        salary for each week of leave. Leave taken as single days is counted pro rata, so a part-time partner
        working three days a week uses one week of leave for every three days off.
    """),
    ("parental-leave-interns", "Parental leave for interns", """
        Interns and working students receive the statutory parental leave of their office country. The
        company top-up to full salary applies only after six months of continuous employment, which most
        internships do not reach. An internship can be paused and extended by the length of the leave.
    """),
    ("parental-leave-contractors", "Parental leave and contractors", """
        Contractors and freelancers are not employees and are not covered by the parental leave policy.
        Teams should agree a pause in the contract with the contractor well before the birth or placement;
        the company does not pay for time not worked. Agency workers follow the rules of their agency.
    """),
    ("parental-leave-split", "Splitting the second parent's leave", """
        How non-birth parents can split their leave. Unless the office rule says otherwise, the second
        parent may take their paid leave in up to three blocks of at least one week each. All blocks must end
        before the child's first birthday. Book each block in the HR system at least four weeks ahead.
    """),
    ("parental-leave-keeping-in-touch", "Keeping-in-touch days during parental leave", """
        Keeping-in-touch days. While on parental leave you may work up to 10 keeping-in-touch days without
        ending your leave. These days are voluntary, are paid at your normal daily rate on top of any leave
        pay, and must be agreed in advance with your manager. Nobody may ask you to work them.
    """),
    ("parental-leave-return", "Returning from parental leave", """
        Coming back after parental leave. For the first four weeks back, parents may work 80% of their
        contracted hours at full pay. Requests for a longer-term change, such as part-time work or
        different core hours, are answered by HR within four weeks and can only be refused for documented
        business reasons.
    """),
    ("parental-leave-multiple-births", "Multiple births and neonatal care", """
        Twins, premature babies and neonatal care. For twins or more, the birth parent's paid leave is
        extended by 4 weeks. If a baby needs neonatal care, the partner's leave can start when the baby comes
        home, and both parents receive one extra week of paid leave for every week of neonatal care, up to
        12 weeks.
    """),
    ("parental-leave-pregnancy-loss", "Pregnancy loss", """
        Pregnancy loss. An employee who experiences a pregnancy loss, and their partner, can take up to 10
        days of paid leave. No medical certificate is needed and the days are not recorded as sick leave. A
        loss after 24 weeks of pregnancy entitles the birth parent to the full birth-parent leave of their
        office.
    """),
]

PARENTAL_LEAVE_FAQ = {
    "Berlin": ("Parental leave FAQ, Berlin office", """
        Parental leave FAQ for the Berlin office

        How much paid leave do I get as the birth parent? Twenty weeks at full salary. The first 14 weeks
        are the statutory maternity protection period (Mutterschutz): six weeks before the expected date of
        birth and eight weeks after it, or twelve weeks after a premature or multiple birth. Your health
        insurer pays the statutory maternity benefit and the company tops it up to your full net salary. The
        remaining six weeks are paid by the company directly.

        How much leave does the second parent get? Six weeks at full salary. They can be taken in one block
        or in up to three blocks of at least one week, all within 12 months of the birth. There is no
        statutory paid leave for the second parent in Germany, so these six weeks are entirely a company
        benefit.

        What is Elternzeit and how does it fit in? Elternzeit is the unpaid, job-protected parental leave
        under German law. Each parent can take up to three years per child. The paid company weeks count
        towards Elternzeit. During unpaid Elternzeit you can apply to the state for Elterngeld, which
        replaces part of your income. Apply early: the parental benefit office needs the birth certificate and
        a salary confirmation, which HR prepares within five working days of your request.

        How do I request it? Elternzeit in the child's first three years must be requested in writing at
        least seven weeks before it starts. Send the request to HR and copy your manager. HR confirms the
        dates in writing within two weeks.

        Can I work part-time during Elternzeit? Yes, up to 32 hours a week. Tell HR which hours you want at
        least seven weeks in advance; your manager can refuse only for urgent operational reasons, given in
        writing.

        I work part-time. Does anything change? You get the same number of weeks; company pay is based on
        your contracted hours.

        What about adoptive and foster parents? The primary adopter gets the full 20 weeks and the other
        adopter 6 weeks. Foster parents follow the company-wide foster rule.

        Does my vacation keep accruing? Vacation accrues normally during the 20 paid weeks. For each full
        month of unpaid Elternzeit, annual vacation may be reduced by one twelfth, as German law allows; HR
        tells you the exact figure before your leave starts.
    """),
    "London": ("Parental leave FAQ, London office", """
        Parental leave FAQ, London office

        What do I get as a birth parent? Up to 52 weeks of maternity leave. The first 26 weeks are paid at
        full salary, weeks 27 to 39 at statutory maternity pay, and weeks 40 to 52 are unpaid. Your job is
        protected throughout. Tell HR by the end of the 15th week before your expected week of childbirth.

        What do I get as the partner? Four weeks of paternity leave at full salary. Partners of any gender
        qualify, as do the partners of adopters and intended parents in a surrogacy arrangement. Take the
        four weeks in one go or as separate weeks, at any time in the first 52 weeks after the birth.

        What is shared parental leave? Shared parental leave lets the birth parent end maternity leave early
        and share the remaining weeks with their partner. Up to 50 weeks of leave and 37 weeks of statutory
        pay can be shared. Company full pay does not transfer: a partner on shared parental leave receives
        statutory shared parental pay, topped up by the company to full salary for the first 8 weeks they
        take. Book shared parental leave at least eight weeks before it starts.

        I am an adoptive parent. The primary adopter receives the same 26 weeks at full pay as a birth
        parent; the other adopter receives the partner's four weeks. You can also take paid time off for up
        to five pre-adoption appointments.

        I work part-time. Your entitlement in weeks is the same; full pay means your normal part-time pay.

        I am an intern or on a fixed-term contract. You are entitled to statutory maternity or paternity pay
        if you meet the government's earnings and service conditions. The company top-up applies once you
        have six months of service.

        Can I work a few days during my leave? Yes: up to 10 keeping-in-touch days during maternity leave,
        and up to 20 shared parental leave in touch days during shared parental leave. They are voluntary.

        What happens to my annual leave and bank holidays? They accrue in full during maternity, paternity
        and shared parental leave. Agree with your manager how to take the accrued days; days you could not
        take because of the leave carry over in full, an exception to the usual five-day limit.
    """),
    "Toronto": ("Parental leave FAQ, Toronto office", """
        Parental leave FAQ, Toronto office

        Which leave am I entitled to? Ontario law provides up to 17 weeks of unpaid pregnancy leave for the
        birthing parent and up to 61 weeks of unpaid parental leave, or 63 weeks for a parent who did not
        take pregnancy leave. Your job is protected during both. Employment Insurance (EI) pays maternity and
        parental benefits during these leaves if you qualify.

        What does the company add? The company tops up EI benefits to 100% of your regular salary for 17
        weeks for the birthing parent and for 6 weeks for the non-birth parent. The top-up is paid through
        payroll every two weeks once HR has your EI benefit statement.

        Standard or extended EI parental benefits? You choose when you apply for EI. Standard benefits are
        paid over up to 12 months at a higher weekly rate, extended benefits over up to 18 months at a lower
        rate. The company top-up is calculated as if you had chosen standard benefits, so choosing extended
        benefits does not reduce what the company pays in total.

        Adoptive parents. There is no pregnancy leave for adoptive parents, so the primary adopter receives
        the 17-week top-up on their parental leave instead. The other adopter receives the 6-week non-birth
        parent top-up. Foster parents follow the company-wide foster rule.

        Part-time employees receive the top-up based on their regular part-time earnings. Interns are
        entitled to the statutory leave but not to the top-up.

        Notice. Give HR at least two weeks' written notice before pregnancy or parental leave starts. If the
        baby arrives early, tell us as soon as you can; the notice rule does not apply.

        Benefits during leave. Your health and dental coverage continue, and the company keeps paying its
        share of the premiums. Vacation time keeps accruing.

        Coming back. You return to the same role, or a comparable one if your role no longer exists. Talk to
        your manager about the four-week phased return in the company-wide parental leave policy.
    """),
    "Lisbon": ("Parental leave FAQ, Lisbon office", """
        Parental leave FAQ, Lisbon office

        How long is leave for the birth parent? Portuguese law provides initial parental leave of 120 or 150
        consecutive days, which the parents can share. The company pays full salary to the birth parent for
        20 weeks (140 days), topping up the social security allowance. If you choose the 150-day option, the
        last 10 days are paid at the social security rate only.

        And for the non-birth parent? The law gives the non-birth parent 28 days of mandatory leave, of which
        the first 7 must be taken right after the birth and the rest within 42 days. The company extends this
        to 8 weeks at full pay; the additional weeks can be taken at any time in the first 12 months.

        Can we share the initial leave? Yes. If both parents work and the non-birth parent takes at least 30
        consecutive days of the initial leave, or two blocks of 15 days, after the mandatory period, the
        total initial leave is extended by 30 days. HR can help you work out the best split; the company
        top-up follows the person on leave, up to the weeks above.

        Which documents do I need? Register the birth at the civil registry and apply for the parental
        allowance on the social security online portal. Send HR a copy of the birth certificate and your
        leave dates at least 30 days before the leave starts, or as soon as possible after an early birth.

        Feeding and childcare hours. A parent who breastfeeds may reduce their working day by two hours, with
        no loss of pay, for as long as they breastfeed. Otherwise, either parent may use the same two-hour
        reduction for childcare until the child's first birthday.

        Part-time, adoptive and foster parents. Part-time staff get the same weeks, paid on their contracted
        hours. The primary adopter receives the 20 weeks from the day the child is placed; the other adopter
        receives the 8 weeks. Foster parents follow the company-wide foster rule.

        Interns receive the statutory leave and allowance only; the company top-up starts after six months.
    """),
}


def parental_leave() -> list[Record]:
    """Office rules, the Amsterdam versions, company-wide rules and the office FAQs."""
    out = per_office("parental leave", "parental-leave", PARENTAL_LEAVE)
    out += [record(f"parental-leave-amsterdam-{year}", "parental leave", "Parental leave, Amsterdam office", body,
                   office="Amsterdam", year=year, policy="parental-leave-amsterdam")
            for year, body in PARENTAL_LEAVE_AMSTERDAM]
    out += company_wide("parental leave", PARENTAL_LEAVE_COMPANY)
    out += per_office("parental leave", "parental-leave-faq", PARENTAL_LEAVE_FAQ)
    return out


# --------------------------------------------------------------------------------------------------
# Vacation
# --------------------------------------------------------------------------------------------------

VACATION = {
    "Berlin": ("Vacation, Berlin office", """
        Vacation, Berlin office: 28 working days per calendar year for a five-day week, plus 24 and 31
        December as paid days off. Up to 5 unused days can be carried over into the next year and must be
        taken by 31 March; days not taken by then expire, unless illness or parental leave prevented you from
        taking them.
    """),
    "Amsterdam": ("Vacation, Amsterdam office", """
        Staff in the Amsterdam office have 26 vacation days a year on a full-time contract: 20 statutory days
        and 6 extra days. Statutory days not taken expire on 1 July of the following year; the 6 extra days
        stay valid for five years. The HR system always books statutory days first, so the days that expire
        soonest are used first.
    """),
    "Lisbon": ("Vacation, Lisbon office", """
        Holiday entitlement in Lisbon: 25 working days per year. In the year you join you earn 2 days for each
        full month worked, up to 20 days, which you can use after six months of service. Up to 5 unused days
        can be carried into the next year and must be used by 30 April.
    """),
    "London": ("Annual leave, London office", """
        London office annual leave: 25 days a year plus the eight bank holidays. One extra day is added for
        every two full years of service, up to 30 days. Up to 5 unused days carry over to the next year and
        must be used by 31 March; any other untaken annual leave is lost unless sickness or family leave
        prevented you from taking it.
    """),
    "Warsaw": ("Vacation, Warsaw office", """
        Vacation in Warsaw: every employee receives 26 days a year, whatever their length of service or
        education. Polish law gives only 20 days to some staff, and the company rounds everyone up. Unused
        days carry over in full, but must be taken by 30 September of the following year.
    """),
    "Toronto": ("Vacation, Toronto office", """
        Toronto vacation: 20 vacation days per year from the first day of employment, on top of the statutory
        holidays. Vacation pay is included in your salary. Up to 5 unused days may be carried over and must be
        used by 30 June of the following year; days above that are forfeited.
    """),
}

VACATION_COMPANY = [
    ("vacation-part-time", "Vacation for part-time staff", """
        Part-time staff receive vacation pro rata to the number of days they work each week. With a 28-day
        full-time entitlement, someone working four days a week receives 22.4 days, rounded up to 22.5. A
        vacation day is always one of your own working days, whatever its length in hours.
    """),
    ("vacation-interns", "Vacation for interns", """
        Interns accrue paid vacation pro rata: one twelfth of their office's annual entitlement for each month
        of the internship. Unused days are paid out when the internship ends; they cannot be carried over into
        a later employment contract.
    """),
    ("vacation-contractors", "Time off for contractors", """
        Contractors and freelancers have no paid vacation with the company; days off are simply not invoiced.
        Please tell your team lead about planned breaks at least two weeks ahead, so that work can be planned
        around them.
    """),
    ("vacation-requests", "Requesting vacation", """
        Requesting vacation. Book vacation in the HR system at least two weeks ahead for up to five days, and
        at least four weeks ahead for longer breaks. Managers answer within five working days. Requests for
        more than three consecutive weeks also need the approval of the department head.
    """),
    ("vacation-sick-during-vacation", "Falling ill during vacation", """
        Falling ill on vacation. If you are ill on a vacation day and report it on the first day of illness,
        with the certificate your office normally requires, the day is credited back to your vacation
        balance. Illness on a public holiday does not give a replacement day.
    """),
    ("vacation-unpaid-leave", "Unpaid leave", """
        Unpaid leave. After one year of service you can ask for up to three months of unpaid leave, for
        example for travel or caring for a relative. Vacation does not accrue for full months of unpaid leave,
        and benefits linked to salary pause for that time.
    """),
    ("vacation-sabbatical", "Sabbatical", """
        Sabbatical. Employees with five years of continuous service can take a paid sabbatical of four weeks,
        once every five years, on top of their normal vacation. The sabbatical is taken in one block and must
        be agreed with your manager three months in advance.
    """),
    ("vacation-birthday", "Birthday day off", """
        Birthday day off. Everyone gets one extra paid day off in the week of their birthday, or in the week
        after if the birthday falls on a weekend or a public holiday. It does not carry over and is not paid
        out.
    """),
    ("vacation-policy", "Vacation policy (company-wide principles)", """
        Vacation policy (company-wide principles)

        Entitlement. Your annual vacation entitlement is set by your office and stated in your contract;
        office rules also set how many unused days you may carry over and until when. The rules below apply
        in every office, unless local law requires something different.

        The vacation year runs from 1 January to 31 December. If you join or leave during the year, you
        receive a pro-rata share of the annual entitlement, rounded up to the nearest half day.

        Taking a real break. We ask everyone to take at least one block of two consecutive weeks each year.
        Managers check in the spring whether everyone on their team has planned some time off, and make room
        for it.

        Planning and approval. Request vacation in the HR system. Give two weeks' notice for short breaks and
        four weeks for longer ones. Managers can refuse a request only for clear business reasons and should
        suggest other dates. In the last two weeks of each quarter, sales and finance teams may limit
        vacation.

        Balances. Your balance in the HR system is the official record; check it before booking a trip. A
        negative balance of up to five days is possible with manager approval and is deducted from the next
        year's entitlement.

        Buying extra days. Once a year, in November, you can buy up to five additional vacation days for the
        following year. The cost is deducted from salary in equal parts over the following twelve months.

        Vacation and notice periods. If you resign, please use remaining vacation during your notice period
        where possible. Days that cannot be taken are paid out with your final salary at your normal daily
        rate.

        Illness during vacation. If you fall ill during vacation, report it on the first day of illness with
        whatever certificate your office normally requires. The sick days are credited back to your balance.

        Public holidays during vacation. Public holidays of your office that fall within your vacation do not
        count as vacation days.

        Staying offline. During vacation you are not expected to read email or chat. Set an out-of-office
        message and hand over open work. If someone really needs to reach you, they go through your manager.
    """),
]


def vacation() -> list[Record]:
    """Office entitlements and carry-over, the Toronto long-service rule, company-wide rules."""
    out = per_office("vacation", "vacation", VACATION)
    out.append(record("vacation-toronto-long-service-2026", "vacation", "Long-service vacation, Toronto office",
                      """
        Toronto long-service vacation, effective 1 January 2026: employees with five or more years of
        service receive 25 vacation days a year instead of 20. Service is counted on 1 January of each year.
        Part-time staff receive the increase pro rata to their working days.
    """, office="Toronto", year=2026, policy="vacation-toronto-long-service"))
    out.append(record("vacation-year-end-closure-2026", "vacation", "Year-end office closure 2026", """
        Year-end closure 2026. All offices close from 24 December 2026 to 1 January 2027. Working days in that
        period that are not public holidays are given as extra paid days off and do not reduce anyone's
        vacation balance. Colleagues on the support rota during the closure are paid double time.
    """, year=2026))
    out += company_wide("vacation", VACATION_COMPANY)
    return out


# --------------------------------------------------------------------------------------------------
# Sick leave
# --------------------------------------------------------------------------------------------------

SICK_LEAVE = {
    "Amsterdam": ("Sick leave, Amsterdam office", """
        Sick leave, Amsterdam. Call your manager before 9:30 on your first sick day and register the absence
        in the HR system. No doctor's note is needed: in the Netherlands, the company's occupational health
        doctor assesses longer absences, and the occupational health service contacts you if you are still
        ill after two weeks. You receive 100% of salary in the first year of illness and 70% in the second.
    """),
    "Lisbon": ("Sick leave, Lisbon office", """
        Sick leave in Lisbon. Let your manager know on the first morning. Absences of up to three days can be
        self-declared in the national health service app, at most twice a year; longer absences need a
        sickness certificate from a doctor. The company pays full salary for the first three days of every
        certified absence, which social security does not cover, and tops up the social security allowance
        to 100% for up to 30 days a year.
    """),
    "London": ("Sick leave, London office", """
        London sick leave: you can self-certify absences of up to seven calendar days using the form in the
        HR system. From the eighth day you need a fit note from a GP or hospital doctor. Company sick pay is
        full salary for up to 20 working days in any rolling 12 months; after that, statutory sick pay
        applies.
    """),
    "Warsaw": ("Sick leave, Warsaw office", """
        Warsaw sick leave: every day of sickness absence must be covered by an electronic sick note (e-ZLA),
        which your doctor issues and sends automatically to the social insurance institution and to the
        company. Tell your manager on the first day. By law you receive 80% of salary while on sick leave; the
        company tops this up to 100% for up to 33 days a year.
    """),
    "Toronto": ("Sick leave, Toronto office", """
        Toronto employees have 10 paid sick days per calendar year, which include the three job-protected
        sick days under Ontario law. A medical note is only needed for absences of more than three
        consecutive working days, and the company pays for the note. Unused sick days do not carry over and
        are not paid out.
    """),
}

SICK_LEAVE_BERLIN = [
    (2025, """
        Sick leave, Berlin office, effective 1 January 2025. Report your absence to your manager and HR before
        10:00 on the first day. A doctor's certificate of incapacity for work (Arbeitsunfähigkeitsbescheinigung)
        is required from the third calendar day of illness. The company continues full pay for up to six
        weeks per illness; after that, your health insurer pays sick pay.
    """),
    (2026, """
        Sick leave, Berlin office, effective from 1 March 2026 (replaces the 2025 version). Report your
        absence to your manager and HR before 10:00 on the first day. A doctor's certificate is now required
        only from the fourth calendar day of illness. You no longer send the certificate yourself: your
        doctor reports it electronically to your health insurer, and HR retrieves it. Privately insured
        employees still upload a copy. Full pay continues for up to six weeks per illness.
    """),
]

SICK_LEAVE_COMPANY = [
    ("sick-leave-reporting", "Reporting sickness", """
        How to report sickness, in every office. Tell your manager as early as possible on the first day, by
        phone or chat, and record the absence in the HR system. You do not need to share a diagnosis. Your
        office rule says from which day a certificate is needed and how sick pay works.
    """),
    ("sick-leave-part-time", "Sick leave for part-time staff", """
        Part-time staff receive sick pay under the same rules as full-time colleagues, based on their
        contracted hours. Limits counted in days, such as paid sick days per year, count only your working
        days; a sick day on a non-working day is not counted.
    """),
    ("sick-leave-interns", "Sick leave for interns", """
        Interns are covered by the statutory sick-pay rules of their office country. Paid interns also receive
        company sick pay under the office rule; unpaid interns simply let their supervisor know and make up
        missed learning goals later, without making up hours.
    """),
    ("sick-leave-contractors", "Illness and contractors", """
        Contractors are not covered by any sick-pay rule. If a freelancer is ill, the hours are not invoiced
        and the team lead agrees any change to deadlines. Please still tell your team lead the same day, so
        that others are not left waiting.
    """),
    ("sick-leave-sick-child", "Caring for a sick child", """
        Caring for a sick child. Parents can take up to 10 paid days a year per child under 12 to look after a
        sick child, or 20 days for single parents. Where a statutory scheme pays a benefit for these days,
        the company tops it up to full pay. A certificate is needed from the third consecutive day.
    """),
    ("sick-leave-long-term", "Long-term illness", """
        Long-term illness. After four weeks of continuous absence, HR offers a confidential conversation about
        support and a gradual return to work. A phased return usually runs over four to eight weeks at full
        pay, with hours agreed with the occupational health service.
    """),
    ("sick-leave-on-business-trips", "Falling ill on a business trip", """
        Falling ill on a business trip. Call the assistance number on your company travel insurance card; the
        insurer can arrange a doctor and change your return journey. Per diem continues for the days you are
        unable to work while away, and extra hotel nights are covered.
    """),
    ("sick-leave-policy", "Sick leave policy (all offices)", """
        Sick leave policy (all offices)

        Why we have this policy. If you are ill, rest and recover. We would rather you stay at home for a day
        than come in and infect your colleagues, or keep working from home while ill. This policy sets out
        the common rules; each office has a local rule about certificates and sick pay, which takes
        precedence where it differs.

        Reporting an absence. Tell your manager as early as you can on the first day of illness, by phone or
        chat, and record the absence in the HR system. You do not have to tell anyone what is wrong. If you
        cannot get in touch yourself, a family member may do it for you. Update your manager if the absence
        lasts longer than first expected.

        Certificates. Whether and when you need a doctor's certificate depends on your office. Where one is
        needed, upload it to the HR system or make sure it reaches HR through the electronic route your
        office uses. Certificates are stored separately from your personnel file and only HR can see them.

        Sick pay. You keep receiving pay while sick under your office's sick-pay rule. Where the state or an
        insurer pays a sickness benefit, the company tops it up for the period set in your local rule.

        Doctor's and therapy appointments. Try to schedule routine appointments outside core hours. Where that
        is not possible, appointments are paid working time and are not booked as sick leave. Regular
        treatments, such as physiotherapy or therapy sessions, can be agreed with your manager as a fixed
        time slot.

        Returning to work. After an absence of more than two weeks, your manager offers a short return
        conversation. Its purpose is to see whether anything at work should change, not to question the
        absence. After a long illness, a phased return is arranged with the occupational health service.

        Part-time staff, interns and contractors. Part-time staff are covered on the same terms, based on
        their contracted hours. Interns follow the statutory rules of their office country. Contractors are
        not covered: hours they cannot work because of illness are simply not invoiced.

        Privacy and fairness. Managers may not ask about diagnoses, and sickness absence is never used in
        performance ratings. Frequent short absences may lead to a supportive conversation with HR about
        whether anything at work is making you ill.
    """),
]


def sick_leave() -> list[Record]:
    """Office rules, the Berlin versions, wellbeing days, a note whose office is only in the text, the rest."""
    out = per_office("sick leave", "sick-leave", SICK_LEAVE)
    out += [record(f"sick-leave-berlin-{year}", "sick leave", "Sick leave, Berlin office", body, office="Berlin",
                   year=year, policy="sick-leave-berlin")
            for year, body in SICK_LEAVE_BERLIN]
    out.append(record("sick-leave-wellbeing-days-2026", "sick leave", "Wellbeing days", """
        Wellbeing days, effective 1 January 2026: every employee can take two wellbeing days a year for their
        mental health, without a certificate and without giving a reason. They are booked like sick days but
        do not count towards any sick-leave limit. Part-time staff get the same two days; interns get one.
    """, year=2026, policy="sick-leave-wellbeing-days"))
    out.append(record("sick-leave-note-lisbon", "sick leave", "Sick leave: certificates through private insurance",
                      """
        Getting a sickness certificate quickly. The private health insurance for colleagues in Lisbon includes
        video consultations with a doctor, who can issue a sickness certificate the same day, so there is no
        need to wait at a public health centre. Book the consultation in the insurer's app.
    """, office=OMIT, policy="sick-leave-private-certificate"))
    out += company_wide("sick leave", SICK_LEAVE_COMPANY)
    return out


# --------------------------------------------------------------------------------------------------
# Per diem
# --------------------------------------------------------------------------------------------------

PER_DIEM = {  # office city: (daily rate for meals, one more sentence)
    "Berlin": ("60 euros", "Staff based in Berlin do not receive per diem in their own city."),
    "Amsterdam": ("65 euros", "The meal allowance covers breakfast, lunch, dinner and small snacks; public "
                              "transport within the city is claimed separately."),
    "Lisbon": ("55 euros", "The rate reflects local restaurant prices and is reviewed every January."),
    "Warsaw": ("220 złoty", "It is paid in złoty through the expense app for trips to the Warsaw office."),
    "Toronto": ("85 Canadian dollars", "Restaurant tips are included in the daily allowance and cannot be "
                                       "claimed separately."),
}

PER_DIEM_LONDON = [
    (2025, """
        Travel per diem, London, effective 1 January 2025: 45 pounds per day for meals. The meal allowance is
        paid in pounds for every full day spent in London on business.
    """),
    (2026, """
        Travel per diem, London, effective 1 January 2026 (replaces the 2025 version): 50 pounds per day for
        meals. The higher rate reflects restaurant prices in central London. It is paid in pounds for every
        full day spent in the city on business.
    """),
]

PER_DIEM_COMPANY = [
    ("perdiem-other-cities", "Per diem for cities without an office", """
        Per diem for cities without a company office: 50 euros per day for meals within Europe and 70 euros
        per day elsewhere, or the equivalent in local currency. The same travel-day and meal deduction rules
        apply as for office cities.
    """),
    ("perdiem-travel-days", "Per diem on travel days", """
        Daily allowance on travel days: you receive the full rate if you leave before 12:00 on the outward day
        or return after 14:00 on the way back, and half the rate otherwise. Day trips without an overnight
        stay do not qualify for per diem, however long they are.
    """),
    ("perdiem-meals-provided", "Per diem when meals are provided", """
        When a meal is provided free of charge, by a hotel, a client, a conference or the company, deduct part
        of the daily rate: 20% for breakfast, 40% for lunch and 40% for dinner. A hotel rate that includes
        breakfast counts as breakfast provided.
    """),
    ("perdiem-offsites", "Per diem during offsites and kickoffs", """
        No per diem is paid during company offsites or sales kickoffs where all meals are provided by the
        organisers. Travel days to and from the event receive half of the per diem of the host city.
    """),
    ("perdiem-interns-contractors", "Per diem for interns and contractors", """
        Interns receive the full per diem on business trips, on the same terms as employees. Contractors do
        not receive per diem: their travel costs are reimbursed only if their contract says so, and then
        against receipts.
    """),
    ("perdiem-guide", "Per diem guide for business travel", """
        Per diem guide for business travel

        What per diem is. Per diem is a flat daily amount for meals and small incidental costs on business
        trips with at least one overnight stay. You receive it instead of claiming individual restaurant
        receipts, so you do not need to keep meal receipts.

        Rates. The daily rate depends on the city you travel to. Each office city has its own rate, published
        as a separate per diem rule for that city. For cities without a company office the rate is 50 euros
        per day in Europe and 70 euros per day elsewhere, or the equivalent in local currency.

        Travel days. On the day you leave and the day you return, you receive the full rate if you leave
        before 12:00 or return after 14:00, and half the rate otherwise. Day trips without an overnight stay
        do not qualify, whatever their length.

        Meals provided. If a meal is provided to you free of charge, by a hotel, a client, a conference or the
        company, deduct part of the daily rate: 20% for breakfast, 40% for lunch and 40% for dinner. A hotel
        rate that includes breakfast counts as breakfast provided.

        Long stays. From the 31st consecutive day in the same city, the rate falls to 70% of the normal rate.

        Claiming. Add a per diem line for each trip in the expense app, with the dates, the destination and
        any meals provided. Per diem is paid with your next salary. In some countries it is tax-free only up
        to a statutory limit; payroll taxes any excess automatically.

        Who receives it. Employees and interns receive per diem on the same terms. Contractors do not; their
        travel costs follow their contract. No per diem is paid during company offsites or kickoffs where all
        meals are provided, except half the rate on travel days.

        Examples. A two-night trip leaving at 07:30 on the first day and returning at 19:00 on the third day
        earns three full days. A one-night trip leaving at 15:00 and returning at 11:00 the next day earns
        two half days. A three-night conference trip with breakfast in the hotel and lunch at the venue earns
        the full rate minus 60% on each full conference day.
    """),
]


def per_diem() -> list[Record]:
    """Per diem for every office city (London in two versions) and the company-wide per diem rules."""
    out = [record(f"perdiem-{city.lower()}", "per diem", f"Travel per diem, {city}",
                  f"Travel per diem, {city}: {rate} per day for meals. {note} Travel days and meals provided "
                  "follow the company-wide per diem rules.", office=city)
           for city, (rate, note) in PER_DIEM.items()]
    out += [record(f"perdiem-london-{year}", "per diem", "Travel per diem, London", body, office="London",
                   year=year, policy="perdiem-london")
            for year, body in PER_DIEM_LONDON]
    out += company_wide("per diem", PER_DIEM_COMPANY)
    return out


# --------------------------------------------------------------------------------------------------
# Remote work allowance
# --------------------------------------------------------------------------------------------------

REMOTE_ALLOWANCE = [
    (2024, """
        Remote work allowance, effective 1 January 2024. Every employee who works from home at least one day a
        week receives a monthly allowance of 30 euros towards internet, electricity and heating. The allowance
        is paid with salary and needs no receipts.
    """),
    (2025, """
        Remote work allowance, effective 1 January 2025 (replaces the 2024 version). The monthly allowance
        rises to 40 euros for every employee who works from home at least one day a week. It is paid with
        salary and needs no receipts. Employees who work fully remotely receive an extra 20 euros a month
        towards a coworking space, claimed against receipts.
    """),
    (2026, """
        Remote work allowance, effective 1 January 2026 (replaces the 2025 version). All employees receive 50
        euros a month, whether they work from home one day a week or every day. The separate 20-euro
        coworking top-up ends; instead, fully remote employees can claim up to 100 euros a month for a
        coworking membership against receipts.
    """),
]

REMOTE_OFFICE = {
    "London": ("Remote work allowance, London payroll", """
        London: the remote work allowance is paid through UK payroll in pounds. The part covered by the UK
        tax-free homeworking allowance is paid free of tax; the rest is taxed as normal income, and the
        payslip shows the two parts separately.
    """),
    "Warsaw": ("Remote work, Warsaw office", """
        Warsaw: under Polish remote work rules, regular remote work is agreed in writing, and the remote work
        allowance is paid as the monthly lump sum the law requires for home working costs. Occasional remote
        work of up to 24 days a year needs no written agreement, only your manager's approval.
    """),
    "Amsterdam": ("Hybrid working, Amsterdam office", """
        Amsterdam hybrid working: teams agree two anchor days a week in the office. On days you work from
        home you receive the remote work allowance as usual; on office days, your commute by public transport
        is reimbursed in full, or by bike or car at the Dutch tax-free travel rate per kilometre.
    """),
}

REMOTE_COMPANY = [
    ("remote-allowance-part-time", "Remote work allowance for part-time staff", """
        Part-time staff receive the full remote work allowance. It is not reduced pro rata, because internet
        and energy costs at home do not depend on the number of hours worked.
    """),
    ("remote-allowance-interns-contractors", "Remote work allowance for interns and contractors", """
        Interns receive the remote work allowance only if their internship lasts at least three months.
        Contractors and freelancers do not receive it: their rates are expected to cover their own workspace
        costs.
    """),
    ("remote-allowance-joiners-leavers", "Remote work allowance for joiners and leavers", """
        New joiners receive the remote work allowance from their first full calendar month. Leavers receive it
        for their last month only if they work at least half of that month.
    """),
    ("remote-allowance-currency", "Remote work allowance in other currencies", """
        The remote work allowance is set in euros. Employees paid in pounds, złoty or Canadian dollars receive
        the equivalent in their payroll currency, converted at a rate that payroll fixes each January for the
        whole year.
    """),
    ("remote-work-abroad", "Working from abroad", """
        Working from abroad. You may work from another country for up to 30 working days per calendar year,
        with your manager's approval recorded in the HR system. Longer stays need a tax and social security
        review by HR first. Working from a country under international sanctions is never allowed.
    """),
    ("remote-work-policy", "Remote and hybrid work policy", """
        Remote and hybrid work policy

        Principles. Most roles can be done from home on some days and from an office on others. Teams agree
        their own rhythm, taking into account customers, the onboarding of new colleagues and time zones.
        Fully remote work is possible for roles marked remote-eligible when they are advertised, and must be
        agreed in the employment contract.

        Where you can work. You can work from your registered home address, from any company office or from
        a coworking space. Working from a second home or a relative's home in the same country is fine for up
        to four weeks at a time. Working from another country is limited to 30 working days per calendar year
        and needs manager approval, because it can create tax and social security obligations for you and for
        the company.

        Your workspace. Your home workspace should be safe and suitable for focused work: a proper chair, a
        desk at the right height, good light and a reliable internet connection. The home-office equipment
        budget helps you set this up, and the ergonomic assessment is free. Keep company devices secure: lock
        your screen, never leave your laptop in a car, and use the VPN on public networks.

        The allowance. Employees who work from home receive a monthly remote work allowance towards internet,
        electricity and heating. The amount and the eligibility rules are published as a separate allowance
        notice that says when it takes effect; the most recent notice in force applies. The allowance is paid
        through payroll and needs no receipts.

        Working hours. Remote work does not change your working hours. Agree core hours with your team, keep
        your calendar up to date and show yourself as away when you are not working. Nobody is expected to
        answer messages outside working hours.

        Coming to the office. Travel between home and your own office is a commute and is not reimbursed,
        unless your office rule says otherwise. When a fully remote employee is asked to come to an office in
        another city, the trip is a business trip with per diem and a hotel.

        Health and safety. Report accidents that happen while working from home as you would in the office.
        Take regular breaks away from the screen.

        Changing your arrangement. You or your manager can propose a change to your hybrid rhythm with four
        weeks' notice. Changes to a fully remote contract need HR review.
    """),
]


def remote_work_allowance() -> list[Record]:
    """The company-wide allowance in three versions, office payroll notes and company-wide rules."""
    out = [record(f"remote-allowance-{year}", "remote work allowance", "Remote work allowance", body, year=year,
                  policy="remote-allowance")
           for year, body in REMOTE_ALLOWANCE]
    out += per_office("remote work allowance", "remote-work", REMOTE_OFFICE)
    out += company_wide("remote work allowance", REMOTE_COMPANY)
    return out


# --------------------------------------------------------------------------------------------------
# Home-office equipment
# --------------------------------------------------------------------------------------------------

EQUIPMENT_OFFICE = {
    "Berlin": ("Home-office equipment, Berlin office", """
        Berlin: before buying new furniture, check the Berlin office storage room. Monitors, chairs and desks
        from it can be taken home for free and do not count against the home-office budget. Book a pick-up
        slot with the office team; the company pays for a van if you need one.
    """),
    "London": ("Home-office equipment, London office", """
        London: items from the equipment portal are delivered by a UK supplier within five working days. If
        you buy elsewhere with the home-office budget, the receipt must be a VAT receipt from a UK seller, so
        that the company can reclaim the VAT.
    """),
    "Toronto": ("Home-office equipment, Toronto office", """
        Toronto: portal orders come from a Canadian supplier to avoid import duties, so allow ten working days
        for delivery. Self-purchases are reimbursed from the home-office budget including HST, as long as the
        tax is shown on the receipt.
    """),
}

EQUIPMENT_COMPANY = [
    ("equipment-budget", "Home-office equipment budget", """
        Home-office equipment budget: 750 euros per employee, available once when you join and again every
        three years, for a desk, chair, monitor arm, lamp or similar items. Order through the equipment portal,
        or buy yourself and claim the cost with an itemised receipt.
    """),
    ("equipment-standard-kit", "Standard equipment kit", """
        Standard kit. Every employee receives a laptop, an external monitor, a keyboard, a mouse and a headset
        on their first day. These do not count against the home-office budget and are replaced by IT when
        they reach the end of their life.
    """),
    ("equipment-returning", "Returning equipment when you leave", """
        Returning equipment when you leave. IT sends a prepaid box for the laptop, monitor and other devices.
        If company equipment is not returned within 30 days of your last day, its current value may be
        deducted from your final pay where local law allows it.
    """),
    ("equipment-part-time-interns-contractors", "Home-office equipment for part-time staff, interns and contractors",
     """
        Part-time staff receive the full home-office budget. Interns receive a laptop and a headset but no
        furniture budget; a loan chair is available on request. Contractors use their own equipment, unless
        security rules require a company laptop, which is then lent for the length of the contract.
    """),
    ("equipment-ergonomic-assessment", "Ergonomic assessment", """
        Ergonomic assessment. Anyone can book a free video session with an occupational therapist. If the
        therapist recommends special equipment, such as a sit-stand desk or a split keyboard, its cost does
        not count against the home-office budget.
    """),
    ("equipment-repairs", "Broken equipment", """
        Broken equipment. Report faults through the IT portal. Company devices are repaired or replaced at no
        cost to you; a loan laptop is sent within two working days. Damage to furniture bought with the
        home-office budget is not covered.
    """),
    ("equipment-guide", "Home-office equipment guide", """
        Home-office equipment guide

        What you get. On your first day you receive a laptop, an external monitor, a keyboard, a mouse and a
        headset. In addition, every employee who works from home at least part of the time has a home-office
        budget of 750 euros to spend on furniture and accessories, renewed every three years.

        Good first purchases. An adjustable office chair matters most; plan to spend at least a third of the
        budget on it. Next come a desk of the right height or a sit-stand desk, a monitor arm, a laptop stand
        and a desk lamp. Noise-cancelling headphones and webcams are allowed too.

        Not covered. Coffee machines, decoration, plants, general household furniture such as sofas or
        shelves, smartphones, and electricity or internet, which the remote work allowance covers.

        How to order. The equipment portal lists pre-approved items that are delivered to your home free of
        charge and billed to the company directly. You can also buy elsewhere and claim the cost as an expense
        with an itemised receipt that shows your name or the company's name.

        Ownership. Furniture bought with the budget becomes yours after 24 months; if you leave earlier, you
        may keep it and nothing is deducted. Computers, monitors, phones and other IT devices always remain
        company property and are returned when you leave.

        Moving home. If you move, the company pays for moving your IT equipment. Furniture moves with the rest
        of your household.

        Security. Keep company devices in a safe place at home, install updates promptly and never let anyone
        else use them. Report lost or stolen equipment to IT within 24 hours.

        Part-time employees receive the full budget. Interns receive the standard kit but no furniture
        budget, and contractors use their own equipment unless security rules require a company laptop.
    """),
]


def home_office_equipment() -> list[Record]:
    """Company-wide budget and rules, office notes, and one note whose office is only in the text."""
    out = company_wide("home-office equipment", EQUIPMENT_COMPANY)
    out += per_office("home-office equipment", "equipment", EQUIPMENT_OFFICE)
    out.append(record("equipment-note-warsaw", "home-office equipment", "Home-office equipment: local delivery",
                      """
        Equipment for colleagues in Warsaw is ordered from a local supplier, who delivers to your home within
        three working days and assembles desks and chairs on request at no extra cost. Packaging is taken away
        on the same visit.
    """, office=OMIT, policy="equipment-local-delivery"))
    return out


# --------------------------------------------------------------------------------------------------
# Offsites: the yearly events (bridge facts) and the rules around them
# --------------------------------------------------------------------------------------------------

ENGINEERING_OFFSITES = {
    2024: """
        Engineering offsite 2024. The 2024 engineering offsite was held in Warsaw from 16 to 19 September
        2024. Around 170 engineers attended. The programme covered the platform roadmap, architecture reviews
        and a full hack day, and closed with a dinner by the river.
    """,
    2025: """
        Engineering offsite 2025: Berlin, 8 to 11 September 2025. The sessions took place in a converted
        factory hall. The theme was reliability, with an incident-response game on the second day and a
        hack day on the third.
    """,
    2026: """
        The 2026 engineering offsite takes place in Lisbon from 14 to 17 September 2026. The first day is for
        team sessions, the second for the all-hands and roadmap, the third for the hack day, and the fourth
        is a travel day. Registration closes on 30 June 2026.
    """,
    2027: """
        Announcement: the 2027 engineering offsite will be held in Toronto in September 2027, the first time
        the event takes place outside Europe. Exact dates follow in early 2027. Colleagues who need a visa or
        an electronic travel authorisation should check their documents early.
    """,
}

SALES_KICKOFFS = {
    2024: """
        Sales kickoff 2024 was held in Amsterdam on 23 and 24 January 2024, for the whole sales, customer
        success and marketing organisation. Awards for the previous year were presented on the first evening.
    """,
    2025: """
        The 2025 sales kickoff took place in Lisbon on 28 and 29 January 2025. Day one covered the new pricing
        model; day two was given to regional planning and customer role-play sessions.
    """,
    2026: """
        Sales kickoff 2026: London, 27 and 28 January 2026. About 240 people from sales, customer success,
        partnerships and marketing attended, and the events team booked all travel centrally.
    """,
    2027: """
        The 2027 sales kickoff is planned for Warsaw on 26 and 27 January 2027. Invitations and the booking
        form go out in November; hotel rooms are reserved by the events team for everyone attending.
    """,
}

OFFSITE_COMPANY = [
    ("offsite-team-budget", "Team offsite budget", """
        Team offsites. Each team can spend up to 300 euros per person per year on a team offsite, including
        the venue, activities and one shared dinner. Travel to the offsite is booked through the travel tool
        and paid from the travel budget, not from the offsite budget.
    """),
    ("offsite-attendance", "Attending company offsites", """
        Attendance at company offsites and kickoffs is expected but not mandatory. Part-time staff are paid for
        all offsite days and may take back the extra days as time off in lieu. Interns are invited with their
        team. Contractors attend only when their contract covers it, and their travel is then reimbursed at
        cost.
    """),
    ("offsite-travel", "Travel to company offsites", """
        Travel to company offsites and kickoffs is booked centrally by the events team. Do not book flights or
        hotels yourself: about eight weeks before the event you receive a booking form, and the events team
        sends your tickets two weeks later.
    """),
    ("offsite-guests-and-care", "Guests, care needs and accessibility at offsites", """
        Partners and children cannot join a company offsite at company expense. Parents of a child under one
        year can bring a carer, whose travel and hotel are paid. Mention dietary, mobility or care needs on
        the registration form. To extend your stay privately, ask the events team to move your return flight;
        changes costing up to 100 euros are covered.
    """),
    ("offsite-planning-guide", "Offsite planning guide", """
        Offsite planning guide

        Company events and team offsites. The company runs two large events each year: the engineering
        offsite, usually in September, and the sales kickoff, usually in late January. Their host city changes
        every year and is announced in the events calendar. Teams can also organise their own offsites from
        the team offsite budget.

        Planning a team offsite. Start at least eight weeks ahead. Choose a place that most of the team can
        reach by train in a few hours, or one of the company's offices, which saves venue costs. Agree the
        goal first: planning, a retrospective, or getting to know new colleagues. Two days are usually enough.

        Budget. The team offsite budget covers venue, activities, meals and one shared dinner, up to 300 euros
        per person per year. Travel and hotel nights come from the normal travel budget and are booked through
        the travel tool. Drinks with the shared dinner are fine in moderation; the company does not pay for
        bar bills after dinner.

        Inclusion. Pick activities everyone can join regardless of fitness, diet or religion, and avoid
        anything centred on drinking. Ask about accessibility, dietary and care needs in the invitation, and
        offer a remote option for sessions that someone cannot travel to.

        Working time. Offsite days are working days. Part-time staff can take back extra days as time off in
        lieu. Avoid weekends; if an offsite includes a weekend day, everyone gets a day off in lieu.

        Per diem and expenses. When meals are provided, no per diem is paid, except half the rate on travel
        days. Whatever the organiser pays for should be on one invoice to the company, not spread across
        personal expense claims.

        After the offsite. Send a short summary of the decisions to the team and to everyone who could not
        attend, and collect feedback for the next one.
    """),
]


def offsites() -> list[Record]:
    """One record per engineering offsite and sales kickoff (office null, one city named), plus the rules."""
    out = [record(f"engineering-offsite-{year}", "offsites", f"Engineering offsite {year}", body, year=year)
           for year, body in ENGINEERING_OFFSITES.items()]
    out += [record(f"sales-kickoff-{year}", "offsites", f"Sales kickoff {year}", body, year=year)
            for year, body in SALES_KICKOFFS.items()]
    out += company_wide("offsites", OFFSITE_COMPANY)
    return out


# --------------------------------------------------------------------------------------------------
# Relocation
# --------------------------------------------------------------------------------------------------

RELOCATION_OFFICE = {
    "Amsterdam": ("Relocating to Amsterdam", """
        Relocating to Amsterdam. Register at the municipality within five days of moving into your home to
        receive your citizen service number (BSN); payroll needs it before your first salary. For eligible
        hires from abroad, the company applies for the Dutch expat tax ruling on your behalf, and HR explains
        the current conditions before you sign.
    """),
    "Lisbon": ("Relocating to Lisbon", """
        Relocating to Lisbon. In your first two weeks you need a tax number (NIF) and a social security number
        (NISS); the relocation partner books both appointments for you. Hires from outside the EU apply for a
        residence permit for highly qualified work, and the company's lawyers prepare the file.
    """),
    "London": ("Relocating to London", """
        Relocating to London. The company sponsors Skilled Worker visas for roles that qualify. It pays the
        visa fees and the Immigration Skills Charge, and reimburses the Immigration Health Surcharge for you
        and your family. You need a National Insurance number to be paid correctly; apply in your first week.
    """),
    "Warsaw": ("Relocating to Warsaw", """
        Relocating to Warsaw. Register your address at the city office and request a PESEL number in your
        first weeks; it is needed for payroll, healthcare and banking. Hires from outside the EU need a
        residence and work permit, which the company's immigration lawyers apply for before your start date.
    """),
    "Berlin": ("Relocation guide, Berlin office", """
        Relocating to Berlin: a practical guide

        Registration. Anyone who moves into a flat in Berlin must register their address at a citizens' office
        (Bürgeramt) within 14 days. You need your passport, your rental contract and the landlord's
        confirmation that you have moved in. Appointments are scarce, so the relocation partner books one for
        you before you arrive. The registration certificate is needed for almost everything else: do this
        first.

        Tax ID. After registration, the tax office sends your tax identification number by post within two to
        four weeks. Give it to HR as soon as it arrives; until then, payroll must apply the highest tax rate,
        and the difference is refunded with a later salary.

        Health insurance. Health insurance is mandatory in Germany. Most employees join a statutory health
        insurer; those earning above the annual threshold may choose private insurance instead. Send HR your
        insurer's membership confirmation before your first payroll date. A partner and children without
        income of their own are covered free of charge by statutory family insurance.

        Bank account. Salary is paid into a euro account with an IBAN. Many online banks open an account
        within a day once you are registered.

        Residence permit. Hires from outside the EU usually enter with a national visa and then collect a
        residence permit, often the EU Blue Card, from the immigration office. The company's immigration
        lawyers book the appointment and prepare the file; keep your visa valid until the permit is issued.

        Finding a flat. The rental market is tight. Use the two-day home-finding trip in the relocation
        package, and expect to need the 30 nights of temporary housing. Landlords usually ask for proof of
        income, a copy of your ID and a certificate that you have no rent debts; as a newcomer, a letter from
        HR confirming your salary replaces the last one.

        Getting around. The company pays for a monthly public transport ticket through payroll. Bikes are
        welcome; the office has a secure bike room and showers.

        Language. German lessons up to level B2 are paid by the company and do not come out of your learning
        budget.
    """),
}

RELOCATION_COMPANY = [
    ("relocation-package", "Relocation package", """
        Relocation package for international hires and internal transfers: a lump sum of one month's gross
        salary (at least 3,000 euros, at most 8,000 euros), shipping of household goods up to 5,000 euros,
        one-way flights for you and your family, and up to 30 nights of temporary housing.
    """),
    ("relocation-repayment", "Repaying relocation support", """
        Repayment. If you resign within 12 months of starting in the new office, you repay the relocation lump
        sum pro rata: one twelfth for each month short of a year. Moving costs that the company paid directly
        to suppliers are never reclaimed.
    """),
    ("relocation-temporary-housing", "Temporary housing after a move", """
        Temporary housing. After an international move, the relocation partner books a serviced apartment for
        up to 30 nights while you look for a permanent home. Extensions of up to 15 nights are possible with
        HR approval, for example when a lease starts later than planned.
    """),
    ("relocation-family", "Relocation support for families", """
        Partners and children. The relocation package covers flights and visas for a spouse, registered partner
        or long-term partner and dependent children who move with you. A relocating partner can have up to
        five career coaching sessions, and families get up to ten hours of school-search support.
    """),
    ("relocation-interns-contractors", "Relocation for interns and contractors", """
        Interns and contractors are not eligible for the relocation package. Interns who move to another
        country for an internship of three months or more receive a one-off travel grant of 500 euros, paid
        with their first stipend.
    """),
    ("relocation-guide", "Relocation guide for new hires and transfers", """
        Relocation guide for new hires and internal transfers

        Who this is for. This guide applies to anyone who moves country to join one of our offices, or who
        transfers between offices at the company's request. It does not cover moves within the same country,
        or moves that an employee requests for personal reasons; those get a moving grant of 2,000 euros and no
        other support.

        Before you move. Once you sign your contract, HR introduces you to our relocation partner. One named
        consultant stays with you until three months after you arrive. In the first call you agree a move
        date, check which documents you need and start the work permit if one is required. Do not book
        flights or sign a lease until the permit is approved.

        The package. Every eligible move includes a relocation lump sum of one month's gross salary (at least
        3,000 euros, at most 8,000 euros), paid with your first salary; shipping of household goods up to
        5,000 euros or 20 cubic metres; one-way economy flights for you and your family; up to 30 nights in a
        serviced apartment; a two-day home-finding trip with an agent; and help with registration, bank
        account and tax number appointments in the new city.

        Family. The package covers a spouse, registered partner or long-term partner and dependent children
        who live with you. Partners get up to five career coaching sessions. Families with school-age children
        get up to ten hours of school-search support, and the company pays one application fee per child.

        Taxes. Relocation benefits can be taxable. The lump sum is paid through payroll and taxed as salary;
        moving costs paid directly to suppliers are usually tax-free, but the rules differ by country. The
        relocation partner arranges one free session with a tax adviser in your new country.

        Timing. Plan at least eight weeks from signature to start date when no work permit is needed, and
        twelve to sixteen weeks when one is. If the permit is delayed, your start date moves; your offer does
        not lapse.

        If things go wrong. If the move falls through before you start, because a permit is refused for
        example, the company pays the costs already incurred and you repay nothing. If you resign within 12
        months of starting in the new office, you repay the lump sum pro rata; costs paid directly to
        suppliers are never reclaimed.

        After you arrive. Your manager plans a lighter first two weeks so you have time for appointments. You
        may take two paid days off for the move itself, separate from your vacation. Three months after your
        arrival, the relocation partner checks in with you and HR, and closes the file.
    """),
]


def relocation() -> list[Record]:
    """Company-wide package and guide, office notes, and one note whose office is only in the text."""
    out = company_wide("relocation", RELOCATION_COMPANY)
    out += per_office("relocation", "relocation", RELOCATION_OFFICE)
    out.append(record("relocation-note-toronto", "relocation", "Relocation note: your first week after arrival",
                      """
        Your first week after moving across the Atlantic. Newcomers joining the Toronto team should apply for
        a Social Insurance Number at a Service Canada centre in their first days, because payroll cannot pay
        salary without it. Register for the provincial health plan as soon as you arrive; until your card
        comes, the company's private health plan covers you and your family.
    """, office=OMIT, policy="relocation-first-week"))
    return out


# --------------------------------------------------------------------------------------------------
# Learning budget
# --------------------------------------------------------------------------------------------------

LEARNING_BUDGET = [
    (2025, """
        Learning budget, effective 1 January 2025: each employee has 1,000 euros per calendar year for courses,
        conferences, books and certifications, plus three paid learning days. Unused budget does not roll
        over into the next year.
    """),
    (2026, """
        Learning budget, effective 1 January 2026 (replaces the 2025 version): the annual budget is 1,500 euros
        per employee, with five paid learning days a year. Up to 500 euros of unused budget now rolls over
        into the following year. Single items above 800 euros need manager approval before booking.
    """),
]

LEARNING_OFFICE = {
    "Berlin": ("German lessons, Berlin office", """
        German lessons for Berlin employees: the company pays for group German classes at a language school
        near the office, up to level B2, twice a week at the end of the working day. These classes do not come
        out of the learning budget.
    """),
    "Lisbon": ("Portuguese classes, Lisbon office", """
        Portuguese classes in the Lisbon office: two hours a week in working time for colleagues in their first
        two years in Portugal, taught in the office by a visiting teacher. The classes are paid separately and
        do not reduce the learning budget.
    """),
}

LEARNING_COMPANY = [
    ("learning-part-time", "Learning budget for part-time staff", """
        Part-time employees get the full learning budget in euros. Paid learning days are pro rata to the
        number of days worked each week, rounded up to the nearest half day.
    """),
    ("learning-interns", "Learning budget for interns", """
        Interns have a learning budget of 250 euros for the whole internship and can join all internal
        training sessions. Unused intern budget is not paid out.
    """),
    ("learning-contractors", "Learning and contractors", """
        Contractors are not eligible for the learning budget or learning days. They are welcome at internal
        talks and workshops that are not confidential, in their own time or as agreed with their team lead.
    """),
    ("learning-conferences", "Conferences and the learning budget", """
        Conferences. The ticket, travel and hotel for a conference you attend are paid from your learning
        budget, at the normal travel caps. If you are speaking at the conference, the whole trip is paid from
        the travel budget instead, and the ticket is usually free.
    """),
    ("learning-books", "Books and e-learning", """
        Books and e-learning subscriptions of up to 100 euros per item can be bought without any approval and
        claimed as an expense with the receipt; the amount is taken from your learning budget.
    """),
    ("learning-repayment", "Repayment of expensive training", """
        Repayment of expensive training. For a single course or certification above 2,000 euros paid by the
        company, you repay a share if you leave within 12 months of finishing it: one twelfth for each month
        short of a year. Normal learning budget spending is never reclaimed.
    """),
    ("learning-joiners", "Learning budget for new joiners", """
        New joiners who start in the second half of the calendar year receive half of the annual learning
        budget and half of the learning days for that year. Joiners in the first half receive the full amount.
    """),
    ("learning-budget-guide", "Learning and development guide", """
        Learning and development guide

        What the learning budget is for. Every employee has an annual learning budget and paid learning days.
        The amount and the number of days are published in a learning budget notice for each year; the notice
        in force applies. You decide how to use the budget, as long as the learning is connected to
        your current role or a role you want to grow into.

        What counts. Courses, online or in person; university modules; certification exams and preparation
        material; conference tickets and workshops; coaching sessions; books, audiobooks and e-learning
        subscriptions; language courses that help you work with colleagues and customers.

        What does not count. Hardware; software licences for daily work, which IT provides; hobbies without a
        link to work; full degree programmes, which the separate study support scheme handles.

        Approvals. Spending below the approval limit in the current notice needs no approval: buy, then claim
        with the receipt. Larger items need your manager's approval in the HR system before you book. Your
        manager checks the link to your role, not whether the course is a good idea for you; that is your
        call.

        Learning days. Learning days are paid working days for courses, conferences or self-study. Book them in
        the HR system like vacation. Conference days count as learning days only if they fall on working days.

        Travel for learning. Travel and hotel costs for a course or conference come out of the learning budget,
        at the normal caps of the travel policy. If you are speaking at a conference, your travel is paid from
        the travel budget instead.

        Sharing what you learned. After a conference or a long course, write a short summary for your team or
        give a ten-minute talk. This is encouraged, not required.

        Unused budget and leaving. Whether unused budget rolls over is set in each year's notice. Budget not
        spent when you leave is not paid out; courses already booked and paid stay yours. The repayment rule
        for single courses above 2,000 euros is described separately.
    """),
]


def learning_budget() -> list[Record]:
    """The learning budget in two versions, language classes by office and company-wide rules."""
    out = [record(f"learning-budget-{year}", "learning budget", "Learning budget", body, year=year,
                  policy="learning-budget")
           for year, body in LEARNING_BUDGET]
    out += per_office("learning budget", "language-classes", LEARNING_OFFICE)
    out.append(record("language-classes-note-amsterdam", "learning budget", "Dutch lessons", """
        Dutch lessons. Colleagues based in Amsterdam can take a Dutch course paid by the company, on top of
        their learning budget, up to level B1. Lessons run at lunchtime in the office or online, in small
        groups of up to eight people.
    """, office=OMIT, policy="language-classes-dutch"))
    out += company_wide("learning budget", LEARNING_COMPANY)
    return out


# --------------------------------------------------------------------------------------------------
# Public holidays
# --------------------------------------------------------------------------------------------------

PUBLIC_HOLIDAYS: dict[tuple[str, int], tuple[list[tuple[str, str]], str]] = {
    ("Berlin", 2026): ([
        ("2026-01-01", "New Year's Day"), ("2026-03-08", "International Women's Day, a Sunday this year"),
        ("2026-04-03", "Good Friday"), ("2026-04-06", "Easter Monday"), ("2026-05-01", "Labour Day"),
        ("2026-05-14", "Ascension Day"), ("2026-05-25", "Whit Monday"),
        ("2026-10-03", "Day of German Unity, a Saturday this year"), ("2026-12-25", "Christmas Day"),
        ("2026-12-26", "Second Day of Christmas, a Saturday this year"),
    ], "Holidays that fall on a weekend are not moved. The office is also closed on 24 and 31 December."),
    ("Berlin", 2027): ([
        ("2027-01-01", "New Year's Day"), ("2027-03-08", "International Women's Day"),
        ("2027-03-26", "Good Friday"), ("2027-03-29", "Easter Monday"),
        ("2027-05-01", "Labour Day, a Saturday this year"), ("2027-05-06", "Ascension Day"),
        ("2027-05-17", "Whit Monday"), ("2027-10-03", "Day of German Unity, a Sunday this year"),
        ("2027-12-25", "Christmas Day, a Saturday"), ("2027-12-26", "Second Day of Christmas, a Sunday"),
    ], "Holidays that fall on a weekend are not moved. The office is also closed on 24 and 31 December."),
    ("Amsterdam", 2026): ([
        ("2026-01-01", "New Year's Day"), ("2026-04-03", "Good Friday, a company day off"),
        ("2026-04-05", "Easter Sunday"), ("2026-04-06", "Easter Monday"), ("2026-04-27", "King's Day"),
        ("2026-05-05", "Liberation Day"), ("2026-05-14", "Ascension Day"), ("2026-05-24", "Whit Sunday"),
        ("2026-05-25", "Whit Monday"), ("2026-12-25", "Christmas Day"), ("2026-12-26", "Boxing Day"),
    ], "The company gives Good Friday and Liberation Day off every year, although Dutch law does not require "
       "it."),
    ("Amsterdam", 2027): ([
        ("2027-01-01", "New Year's Day"), ("2027-03-26", "Good Friday, a company day off"),
        ("2027-03-28", "Easter Sunday"), ("2027-03-29", "Easter Monday"), ("2027-04-27", "King's Day"),
        ("2027-05-05", "Liberation Day"), ("2027-05-06", "Ascension Day"), ("2027-05-16", "Whit Sunday"),
        ("2027-05-17", "Whit Monday"), ("2027-12-25", "Christmas Day"), ("2027-12-26", "Boxing Day"),
    ], "Christmas Day and Boxing Day fall on a weekend in 2027 and are not moved."),
    ("Lisbon", 2026): ([
        ("2026-01-01", "New Year's Day"), ("2026-02-17", "Carnival, a company day off"),
        ("2026-04-03", "Good Friday"), ("2026-04-05", "Easter Sunday"), ("2026-04-25", "Freedom Day"),
        ("2026-05-01", "Labour Day"), ("2026-06-04", "Corpus Christi"), ("2026-06-10", "Portugal Day"),
        ("2026-06-13", "St Anthony's Day, the city holiday"), ("2026-08-15", "Assumption Day"),
        ("2026-10-05", "Republic Day"), ("2026-11-01", "All Saints' Day"),
        ("2026-12-01", "Restoration of Independence"), ("2026-12-08", "Immaculate Conception"),
        ("2026-12-25", "Christmas Day"),
    ], "Holidays that fall on a weekend are not moved."),
    ("Lisbon", 2027): ([
        ("2027-01-01", "New Year's Day"), ("2027-02-09", "Carnival, a company day off"),
        ("2027-03-26", "Good Friday"), ("2027-03-28", "Easter Sunday"), ("2027-04-25", "Freedom Day"),
        ("2027-05-01", "Labour Day"), ("2027-05-27", "Corpus Christi"), ("2027-06-10", "Portugal Day"),
        ("2027-06-13", "St Anthony's Day, the city holiday"), ("2027-08-15", "Assumption Day"),
        ("2027-10-05", "Republic Day"), ("2027-11-01", "All Saints' Day"),
        ("2027-12-01", "Restoration of Independence"), ("2027-12-08", "Immaculate Conception"),
        ("2027-12-25", "Christmas Day"),
    ], "Holidays that fall on a weekend are not moved."),
    ("London", 2026): ([
        ("2026-01-01", "New Year's Day"), ("2026-04-03", "Good Friday"), ("2026-04-06", "Easter Monday"),
        ("2026-05-04", "Early May bank holiday"), ("2026-05-25", "Spring bank holiday"),
        ("2026-08-31", "Summer bank holiday"), ("2026-12-25", "Christmas Day"),
        ("2026-12-28", "Boxing Day, substitute day because 26 December is a Saturday"),
    ], "These are the bank holidays for England."),
    ("London", 2027): ([
        ("2027-01-01", "New Year's Day"), ("2027-03-26", "Good Friday"), ("2027-03-29", "Easter Monday"),
        ("2027-05-03", "Early May bank holiday"), ("2027-05-31", "Spring bank holiday"),
        ("2027-08-30", "Summer bank holiday"), ("2027-12-27", "Christmas Day, substitute day"),
        ("2027-12-28", "Boxing Day, substitute day"),
    ], "These are the bank holidays for England."),
    ("Warsaw", 2026): ([
        ("2026-01-01", "New Year's Day"), ("2026-01-06", "Epiphany"), ("2026-04-05", "Easter Sunday"),
        ("2026-04-06", "Easter Monday"), ("2026-05-01", "Labour Day"), ("2026-05-03", "Constitution Day"),
        ("2026-05-24", "Pentecost Sunday"), ("2026-06-04", "Corpus Christi"), ("2026-08-15", "Assumption Day"),
        ("2026-11-01", "All Saints' Day"), ("2026-11-11", "Independence Day"), ("2026-12-24", "Christmas Eve"),
        ("2026-12-25", "Christmas Day"), ("2026-12-26", "Second Day of Christmas"),
    ], "15 August and 26 December fall on a Saturday, so as Polish law requires, everyone receives two extra "
       "days off, to be agreed with their manager."),
    ("Warsaw", 2027): ([
        ("2027-01-01", "New Year's Day"), ("2027-01-06", "Epiphany"), ("2027-03-28", "Easter Sunday"),
        ("2027-03-29", "Easter Monday"), ("2027-05-01", "Labour Day"), ("2027-05-03", "Constitution Day"),
        ("2027-05-16", "Pentecost Sunday"), ("2027-05-27", "Corpus Christi"), ("2027-08-15", "Assumption Day"),
        ("2027-11-01", "All Saints' Day"), ("2027-11-11", "Independence Day"), ("2027-12-24", "Christmas Eve"),
        ("2027-12-25", "Christmas Day"), ("2027-12-26", "Second Day of Christmas"),
    ], "1 May and 25 December fall on a Saturday, so as Polish law requires, everyone receives two extra days "
       "off, to be agreed with their manager."),
    ("Toronto", 2026): ([
        ("2026-01-01", "New Year's Day"), ("2026-02-16", "Family Day"), ("2026-04-03", "Good Friday"),
        ("2026-05-18", "Victoria Day"), ("2026-07-01", "Canada Day"),
        ("2026-08-03", "Civic Holiday, a company day off"), ("2026-09-07", "Labour Day"),
        ("2026-09-30", "National Day for Truth and Reconciliation, a company day off"),
        ("2026-10-12", "Thanksgiving"), ("2026-12-25", "Christmas Day"),
        ("2026-12-28", "Boxing Day, observed on Monday because 26 December is a Saturday"),
    ], "Statutory holidays follow Ontario rules; the company adds the two company days off."),
    ("Toronto", 2027): ([
        ("2027-01-01", "New Year's Day"), ("2027-02-15", "Family Day"), ("2027-03-26", "Good Friday"),
        ("2027-05-24", "Victoria Day"), ("2027-07-01", "Canada Day"),
        ("2027-08-02", "Civic Holiday, a company day off"), ("2027-09-06", "Labour Day"),
        ("2027-09-30", "National Day for Truth and Reconciliation, a company day off"),
        ("2027-10-11", "Thanksgiving"), ("2027-12-27", "Christmas Day, observed"),
        ("2027-12-28", "Boxing Day, observed"),
    ], "Statutory holidays follow Ontario rules; the company adds the two company days off."),
}

PUBLIC_HOLIDAYS_COMPANY = [
    ("public-holidays-working", "Working on a public holiday", """
        Working on a public holiday is only allowed with manager approval or as part of an on-call rota. You
        get a replacement day off within three months, plus any holiday premium that local law requires.
    """),
    ("public-holidays-which-office", "Whose public holidays apply", """
        Whose public holidays apply. You follow the public holidays of the office named in your contract, even
        when you work from another office for a few days or live in a different region. When you travel on
        business, a local holiday at your destination is a normal working day for you.
    """),
    ("public-holidays-part-time", "Public holidays for part-time staff", """
        Part-time staff are entitled to the public holidays that fall on their usual working days. No
        replacement day is given when a holiday falls on a day they do not normally work, and interns are
        treated the same way.
    """),
]


def holiday_list(office: str, year: int, days: list[tuple[str, str]], note: str) -> str:
    """The text of one office's holiday list for one year, with its count."""
    items = "; ".join(f"{date.fromisoformat(iso).day} {date.fromisoformat(iso):%B} ({name})" for iso, name in days)
    return f"Public holidays {year}, {office} office, {len(days)} days in total: {items}. {note}"


def public_holidays() -> list[Record]:
    """Holiday lists per office and year, the floating holiday and company-wide rules."""
    out = [record(f"public-holidays-{office.lower()}-{year}", "public holidays",
                  f"Public holidays {year}, {office} office", holiday_list(office, year, days, note),
                  office=office, year=year)
           for (office, year), (days, note) in PUBLIC_HOLIDAYS.items()]
    out.append(record("public-holidays-floating-day-2025", "public holidays", "Floating holiday", """
        Floating holiday, effective 1 January 2025: every employee gets one floating day off per year, to use
        for a holiday or festival that matters to them and is not a public holiday in their office. It is
        booked like vacation and does not carry over.
    """, year=2025, policy="public-holidays-floating-day"))
    out += company_wide("public holidays", PUBLIC_HOLIDAYS_COMPANY)
    return out


# --------------------------------------------------------------------------------------------------
# Travel booking
# --------------------------------------------------------------------------------------------------

HOTEL_CAPS = {  # office city: (cap per night, one more sentence)
    "Berlin": ("150 euros", "Hotels within walking distance of the office are pre-negotiated in the travel tool."),
    "Amsterdam": ("185 euros", "Rates rise sharply during trade fairs; book as early as you can."),
    "Lisbon": ("130 euros", "The city tourist tax is paid at the hotel and claimed as an expense."),
    "London": ("190 pounds", "Look for hotels near a station on the Elizabeth line for easy access."),
    "Warsaw": ("520 złoty", "The cap includes breakfast at most partner hotels."),
    "Toronto": ("260 Canadian dollars", "The cap is before the local hotel taxes, which are reimbursed on top."),
}

TRAVEL_OFFICE = {
    "London": ("Travel to the London office", """
        Getting to the London office: from the airports, take the train or the Underground rather than a
        taxi; taxis are reimbursed only after 22:00 or with heavy luggage. For trips from continental Europe,
        the train through the Channel Tunnel is preferred when it takes less than six hours.
    """),
    "Toronto": ("Travel to the Toronto office", """
        Trips to the Toronto office from Europe are long-haul flights: book economy for daytime flights and
        premium economy for overnight flights of more than eight hours. Check your entry documents before
        booking; the travel team can help with the electronic travel authorisation.
    """),
}

TRAVEL_COMPANY = [
    ("travel-tool", "Booking business travel", """
        All business travel is booked in the company travel tool. Bookings made elsewhere are reimbursed only
        if they were at least 20% cheaper than the best comparable option in the tool; attach a screenshot of
        that option to your expense claim.
    """),
    ("travel-flight-class", "Flight class", """
        Flight class: economy for all flights under eight hours; premium economy for longer flights. Business
        class needs approval from an executive and is never allowed for flights under eight hours.
    """),
    ("travel-approval", "Approval for business trips", """
        Every business trip needs manager approval in the travel tool before anything is booked. Approval is
        automatic for trips to another company office of up to three nights. Trips outside Europe and North
        America also need a security check by the travel team.
    """),
    ("travel-lead-time", "Booking lead time", """
        Book flights and trains at least 14 days ahead where possible. Late bookings that cost more than 500
        euros need a short justification in the travel tool, for example a customer meeting arranged at short
        notice.
    """),
    ("travel-insurance", "Travel insurance", """
        Travel insurance covers all employees, interns and contractors on company-paid trips, including
        medical assistance, repatriation and lost luggage. Your insurance card is in the travel tool; save it
        to your phone before you leave.
    """),
    ("travel-contractors", "Travel booking for contractors", """
        Contractors book their own travel unless their contract says otherwise, and invoice the cost without
        markup. The travel class and hotel caps of this policy still apply, and receipts must be attached.
    """),
    ("travel-private-extension", "Combining business trips with holidays", """
        Combining a business trip with a private holiday is fine if you pay any extra cost. The company pays
        the fare that the business trip alone would have cost; keep a screenshot of that fare.
    """),
    ("travel-weekend", "Travelling at weekends", """
        If you travel for work on a Saturday, Sunday or public holiday, you can take the same time off in lieu
        within four weeks. Part-time staff can do the same for travel on their non-working days.
    """),
    ("travel-booking-guide", "Travel booking guide", """
        Travel booking guide

        Plan first. Before booking, check whether the meeting could be held online. If travel is needed, get
        your manager's approval in the travel tool; it is automatic for trips to another company office of up
        to three nights.

        Trains and planes. Where the train takes less than six hours door to door, take the train. For longer
        journeys, compare total travel time and choose the option that makes sense for your work and your
        wellbeing. Flights under eight hours are booked in economy class. Choose fares with free rebooking
        for trips that are likely to change.

        Hotels. Book through the travel tool. Each office city has its own hotel cap per night; for other
        cities the cap is 160 euros per night in Europe and 220 euros elsewhere. If every hotel near your
        meeting is above the cap, for example during a trade fair, book the cheapest reasonable option and add
        a note. Holiday rentals are allowed when they are cheaper than a hotel, but must be booked through the
        travel tool so that the travel team knows where you are.

        Local transport. Use public transport where possible. Taxis and ride-hailing are fine late at night,
        with heavy luggage, or when public transport would make you late for a meeting. Car rental needs
        approval and should be the smallest suitable category; always take the insurance offered.

        Duty of care. The travel team tracks bookings made in the tool so that it can reach you in an
        emergency. If you book outside the tool for any reason, forward your itinerary to the travel team.

        Changes and cancellations. Cancel unused bookings as soon as you know you will not travel. The company
        covers change fees for business reasons; change fees caused by private plans are yours to pay.

        Interns and contractors. Interns book like employees, but their bookings are charged to the company
        directly so they never have to advance the cost. Contractors book only when their contract covers
        travel, and the same caps apply.

        Travelling together. Colleagues going to the same event should coordinate and share taxis from the
        airport. No more than half of a team's leadership should travel on the same flight.
    """),
]


def travel_booking() -> list[Record]:
    """Hotel caps per office city, the rail-first rule, office notes and company-wide booking rules."""
    out = [record(f"hotel-cap-{city.lower()}", "travel booking", f"Hotel cap, {city}",
                  f"Hotel cap, {city}: up to {cap} per night, booked through the travel tool. {note} If nothing "
                  "suitable is available under the cap, add a short note to the booking.", office=city)
           for city, (cap, note) in HOTEL_CAPS.items()]
    out.append(record("travel-rail-first-2025", "travel booking", "Rail first", """
        Rail first, effective from 1 March 2025: trips that take less than six hours by train must be booked
        by train, not by plane. Overnight trains are allowed and replace one hotel night; a sleeper cabin for
        one person is within policy.
    """, year=2025, policy="travel-rail-first"))
    out += per_office("travel booking", "travel", TRAVEL_OFFICE)
    out += company_wide("travel booking", TRAVEL_COMPANY)
    return out


# --------------------------------------------------------------------------------------------------
# Expenses and reimbursement
# --------------------------------------------------------------------------------------------------

MILEAGE = {  # office: rate for business trips in your own car
    "Berlin": "0.30 euros per kilometre",
    "Amsterdam": "0.23 euros per kilometre",
    "Lisbon": "0.40 euros per kilometre",
    "London": "45 pence per mile for the first 10,000 business miles in a tax year and 25 pence after that",
    "Warsaw": "1.15 złoty per kilometre for cars with an engine above 900 cc",
    "Toronto": "0.72 Canadian dollars per kilometre for the first 5,000 km in a year and 0.66 after that",
}

EXPENSES_OFFICE = {
    "Warsaw": ("Invoices for purchases, Warsaw office", """
        Warsaw: for purchases in Poland, ask for a VAT invoice (faktura) with the company's tax identification
        number (NIP) instead of a till receipt. Only an invoice lets the company recover the VAT; a till
        receipt is accepted, but the VAT is then a cost to your team.
    """),
    "London": ("Expenses and payroll, London office", """
        London: approved expense claims are paid with the monthly UK payroll on the last working day of the
        month. Claims approved after the 20th of the month are paid a month later. Mileage is claimed per mile,
        not per kilometre.
    """),
}

EXPENSES_COMPANY = [
    ("expenses-deadline", "Deadline for expense claims", """
        Deadline for expense claims: submit every claim within 60 days of the expense. Finance can reject
        claims older than 90 days. Expenses from December must be submitted by 15 January, so that they are
        booked in the right financial year.
    """),
    ("expenses-receipts", "Receipts", """
        Receipts. Every expense above 10 euros needs an itemised receipt or invoice; a card slip with only a
        total is not enough. A photo taken in the expense app is the official copy, and you can throw the
        paper away once the claim is paid.
    """),
    ("expenses-lost-receipt", "Lost receipts", """
        Lost receipt? Fill in the missing-receipt declaration in the expense app. Up to three declarations per
        year are accepted, each for no more than 75 euros. Anything beyond that needs your manager and finance
        to agree.
    """),
    ("expenses-corporate-card", "Corporate cards", """
        Corporate cards are issued to employees who travel more than four times a year. Card payments appear in
        the expense app automatically but still need a receipt and a business purpose. Personal spending on the
        card is not allowed; an accidental personal payment must be repaid within 30 days.
    """),
    ("expenses-client-meals", "Client meals and entertainment", """
        Client meals: up to 80 euros per person, including drinks and tips. The most senior employee present
        pays and claims the bill, listing every attendee and the business purpose. Entertaining public
        officials needs approval from the legal team in advance.
    """),
    ("expenses-approval-limits", "Approval limits for expenses", """
        Approval limits: team leads approve expense reports up to 1,000 euros, department heads up to 5,000
        euros, and anything higher needs the finance director. Nobody approves their own expenses or those of
        their manager.
    """),
    ("expenses-foreign-currency", "Expenses in foreign currency", """
        Foreign currency: claim the amount in the currency you paid; the expense app converts it at the rate
        of the day of the expense. Foreign transaction fees charged on a personal card are reimbursed if you
        attach the bank statement line.
    """),
    ("expenses-interns", "Expenses for interns", """
        Interns claim expenses like employees. Because many interns cannot advance large sums, the travel team
        books their trips directly, and interns can request a cash advance of up to 300 euros before a trip.
    """),
    ("expenses-contractors", "Expenses for contractors", """
        Contractors do not use the expense app. Costs that their contract allows them to recharge are added to
        their invoice at cost, with copies of the receipts attached; per diem is never included.
    """),
    ("expenses-phone-internet", "Phone and internet costs", """
        Phone and internet. Employees who need to be reachable for work receive a company phone and contract.
        Private phone bills are not reimbursed, and home internet is covered by the remote work allowance, not
        by expense claims.
    """),
    ("expenses-policy", "Expenses and reimbursement policy", """
        Expenses and reimbursement policy

        Scope. This policy covers business expenses paid by employees and interns with their own money or a
        corporate card: travel, meals on business trips, client entertainment, small purchases and training
        costs. Contractors invoice their costs instead. Costs covered by an allowance, such as the remote work
        allowance or per diem, cannot be claimed a second time as expenses.

        General principles. Spend company money as if it were your own. Choose the reasonable option, not the
        most expensive one, and keep the business purpose clear. If you are unsure whether something is
        reimbursable, ask your manager before you spend, not after.

        What you can claim. Transport on business trips when the travel tool could not be used; taxis when
        public transport is unavailable, unsafe or would take more than twice as long; one checked bag on trips
        of three nights or more; visa fees and required vaccinations for business travel; internet access on
        trains and planes when you need to work; small office supplies up to 50 euros without prior approval;
        books and courses under the learning budget rules.

        What you cannot claim. Alcohol when eating alone, minibar items, in-flight entertainment, parking or
        traffic fines, personal grooming, upgrades chosen for comfort, gifts for colleagues, and costs for
        family members travelling with you.

        How to claim. Photograph the receipt in the expense app, choose a category and add a one-line business
        purpose. Group all the expenses of one trip in one report. Your manager approves the report and finance
        checks it. Claims approved by the 20th of the month are paid with that month's salary, later ones with
        the next.

        Deadlines. Submit claims within 60 days of the expense. Finance can reject claims older than 90 days.
        Expenses from December must be submitted by 15 January, so that they fall into the right financial
        year.

        Receipts and VAT. Every expense above 10 euros needs an itemised receipt. Where a receipt can show the
        company's name and tax number, ask for it: that lets the company recover the VAT.

        Corporate cards. Frequent travellers receive a corporate card. Card payments appear in the expense app
        automatically and still need a receipt and a purpose. Cash withdrawals are allowed only in countries
        where cards are not widely accepted.

        Mileage. If you use your own car for business, you are reimbursed at your office's mileage rate.
        Fuel receipts are not needed, but log the start and end of each trip. Parking and tolls are claimed
        separately.

        Misuse. False or inflated claims are treated as misconduct. Finance checks a random sample of about
        one report in twenty.
    """),
]


def expenses() -> list[Record]:
    """Mileage per office, the new expense app, office notes and company-wide expense rules."""
    out = [record(f"mileage-{office.lower()}", "expenses/reimbursement", f"Mileage rate, {office}",
                  f"Mileage, {office}: business trips in your own car are reimbursed at {rate}. Commuting "
                  "between home and the office is not a business trip and is not reimbursed.", office=office)
           for office, rate in MILEAGE.items()]
    out.append(record("expenses-app-2026", "expenses/reimbursement", "New expense app", """
        New expense app, effective 1 April 2026: all expense claims are submitted in the new expense app, and
        the old form-based process closes. Claims started in the old tool must be submitted by 31 March 2026;
        after that date they have to be entered again in the new app.
    """, year=2026, policy="expenses-app"))
    out += per_office("expenses/reimbursement", "expenses", EXPENSES_OFFICE)
    out += company_wide("expenses/reimbursement", EXPENSES_COMPANY)
    return out


# --------------------------------------------------------------------------------------------------
# Checks and output
# --------------------------------------------------------------------------------------------------

_MONTH = "January|February|March|April|May|June|July|August|September|October|November|December"
_EFFECTIVE = re.compile(rf"\beffective (?:from )?\d{{1,2}} (?:{_MONTH}) (\d{{4}})\b")
_OFFICE_WORD = re.compile(r"\b(" + "|".join(OFFICE_WORDS) + r")\b", re.IGNORECASE)
_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def check(records: list[Record]) -> None:
    """Fail loudly if the corpus breaks one of the properties the module docstring promises."""
    ids = [r["id"] for r in records]
    assert len(set(ids)) == len(ids), "duplicate ids"
    versions: dict[str, list[Record]] = {}
    for r in records:
        rid, body, meta = r["id"], r["text"], r["metadata"]
        assert _SLUG.match(rid), rid
        assert meta["topic"] in TOPICS, rid
        assert 150 <= len(body) <= 3500, (rid, len(body))
        named = [m.group(1) for m in _OFFICE_WORD.finditer(body)]
        if "office" not in meta or meta["policy"].startswith(("engineering-offsite-", "sales-kickoff-")):
            assert len(named) == 1, (rid, named)
        elif meta["office"] is None:
            assert not named, (rid, named)
        else:
            assert meta["office"] in OFFICES and set(named) == {meta["office"]}, (rid, named)
        assert body.count("effective") == len(_EFFECTIVE.findall(body)), rid
        effective = _EFFECTIVE.search(body)
        if effective:
            assert meta["year"] == int(effective.group(1)), rid
        versions.setdefault(meta["policy"], []).append(r)
    for policy, group in versions.items():
        if len(group) < 2:
            continue
        years = [r["metadata"]["year"] for r in group]
        assert years == sorted(set(years)), policy
        assert len({r["metadata"].get("office", OMIT) for r in group}) == 1, policy
        for older, newer in pairwise(group):
            assert f"(replaces the {older['metadata']['year']} version)" in newer["text"], policy


def build() -> list[Record]:
    """Every record of the corpus, topic by topic."""
    return [
        *parental_leave(), *vacation(), *sick_leave(), *per_diem(), *remote_work_allowance(),
        *home_office_equipment(), *offsites(), *relocation(), *learning_budget(), *public_holidays(),
        *travel_booking(), *expenses(),
    ]


def main() -> None:
    records = build()
    check(records)
    with OUT.open("w", encoding="utf-8", newline="\n") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}: {len(records)} records, {sum(len(r['text']) for r in records)} characters")


if __name__ == "__main__":
    main()
