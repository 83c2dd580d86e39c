"""The players' own sheets at the table: draft, submit, countersign or dispute, expiry, the
referee's decision (docs/at-the-table.md).

A thin ORM layer over ``tournaments.services.results``, which writes every version of a result:
a side's submitted sheet is a PROPOSED version of source "players"; the other side's
signature puts it in its place by the result service's precedence; a dispute or the time to
countersign running out refers it to the referee. Every function locks the match row first
(``results.lock_match``), then the reports, in one transaction; every step goes to the change
log. Refusals raise ``ResultError`` (``ReportError``, ``StaleResult``) and store nothing.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from scoresheets.exceptions import ReportError
from scoresheets.models import PrivateLink, TableReport
from scoresheets.services.links import Actor
from tournaments.access import link_may_act
from tournaments.exceptions import ResultError, StaleResult
from tournaments.models import Entry, Match, Outcome, ResultVersion, Tournament
from tournaments.services import changelog, results
from tournaments.services.results import UNCHECKED, BasedOn, Unchecked
from tournaments.services.rows import one_row

logger = logging.getLogger(__name__)

State = TableReport.State
MAX_DRAFT_CHARS = 20_000
MAX_COMMENT_CHARS = 2_000
REFEREE_WAITS = TableReport.FOR_REFEREE


# --------------------------------------------------------------------------- reading helpers


def side_of(link: PrivateLink, match: Match) -> str:
    """``"home"`` or ``"away"``: the side of ``match`` the link's line plays."""
    return Match.Slot.HOME if link.line_id == match.home_id else Match.Slot.AWAY


def other_side(side: str) -> str:
    return Match.Slot.AWAY if side == Match.Slot.HOME else Match.Slot.HOME


def entry_refusal(match: Match) -> str:
    """Why the players cannot report this match (a sentence) or ``""``: the desk form's own
    refusals (closed stage, bye, knock-out slot still undecided), and a withdrawn line."""
    refusal = results.entry_refusal(match)
    if refusal:
        return refusal
    if _withdrawn_line(match):
        return _("A line of this match has withdrawn: the desk enters its result.")
    return ""


def _withdrawn_line(match: Match) -> bool:
    """Whether a line of ``match`` withdrew; asked once per match object and pair of lines (a
    players' step asks it up to four times under one lock, and a request holds its objects no
    longer than itself)."""
    tournament_id = match.round.stage.tournament_id
    lines = [pk for pk in (match.home_id, match.away_id) if pk is not None]
    asked = (tournament_id, tuple(lines))
    known = match.__dict__.get("_withdrawn_line")
    if known is not None and known[0] == asked:
        return bool(known[1])
    withdrawn = Entry.objects.filter(
        tournament_id=tournament_id, line_id__in=lines, withdrawn=True
    ).exists()
    match.__dict__["_withdrawn_line"] = (asked, withdrawn)
    return withdrawn


def deals_payload(typed: Any) -> Any:
    """The deals a phone sent, as ``results.parse_deals`` reads them: empty deals dropped, a
    side's points the sum of its categories (anything unreadable is passed on for the referee
    to refuse with its own sentence)."""
    if not isinstance(typed, list):
        return typed
    deals: list[Any] = []
    for raw in typed:
        if not isinstance(raw, dict):
            deals.append(raw)
            continue
        breakdown = raw.get("breakdown")
        if not isinstance(breakdown, list) or len(breakdown) != 2:
            deals.append(raw)
            continue
        sides: list[Any] = []
        for side in breakdown:
            if not isinstance(side, dict):
                sides.append(side)
                continue
            sides.append({k: _number(v) for k, v in side.items() if v not in ("", None)})
        if all(isinstance(s, dict) and not s for s in sides):
            continue
        points: list[int | str] = []
        for side in sides:
            values = list(side.values()) if isinstance(side, dict) else ["?"]
            ints = [v for v in values if isinstance(v, int)]
            points.append(sum(ints) if len(ints) == len(values) else "?")
        deal: dict[str, Any] = {
            "points": points,
            "breakdown": sides,
            "tiebreak": bool(raw.get("tiebreak")),
        }
        if raw.get("last_capture") in (0, 1, "0", "1"):
            deal["last_capture"] = int(raw["last_capture"])
        deals.append(deal)
    return deals


def sheet_reading(match: Match, typed: Any, *, time_expired: bool = False) -> dict[str, Any]:
    """The server's reading of a sheet as typed so far, as the check URL answers it: totals,
    whether the match is over, the referee's sentence, what the next deal must be. The phone's
    port of the referee must give the same offline (tests/scoresheets/test_offline_referee.py)."""
    try:
        progress = results.sheet_progress(match, deals_payload(typed), time_expired=time_expired)
    except ResultError as refusal:
        return {"ok": False, "error": str(refusal)}
    return {
        "ok": True,
        "totals": list(progress.totals),
        "over": progress.over,
        "winner": progress.winner_side,
        "sentence": progress.sentence,
        "next_tiebreak": progress.next_tiebreak,
        "needs_last_capture": progress.needs_last_capture,
        "deals": progress.deals,
    }


def _number(value: Any) -> Any:
    if isinstance(value, str) and value.strip().isdecimal():
        return int(value.strip())
    return value


def _expired(report: TableReport, tournament: Tournament, now: datetime | None = None) -> bool:
    if report.state != State.AWAITING or report.submitted_at is None:
        return False
    now = now or timezone.now()
    return report.submitted_at + timedelta(minutes=tournament.countersign_minutes) <= now


def acting_user(link: PrivateLink | None) -> Actor:
    """The logged-in user acting through ``link`` in this request (``PrivateLink.acted_by``, set
    by the phone pages), or None: a desk user's action through a link is recorded as theirs."""
    user = getattr(link, "acted_by", None) if link is not None else None
    return user if user is not None and getattr(user, "is_authenticated", False) else None


def _log(
    match: Match,
    action: str,
    report: TableReport,
    *,
    link: PrivateLink | None = None,
    user: Actor = None,
    **detail: Any,
) -> None:
    changelog.record(
        match.round.stage.tournament,
        action,
        match=match,
        user=user if user is not None else acting_user(link),
        report=report.pk,
        side=report.side,
        state=report.state,
        version=report.version.number if report.version is not None else None,
        link=link.pk if link is not None else None,
        **detail,
    )


def _version_of(report: TableReport) -> ResultVersion:
    """The version a submitted sheet stands for (every report past its draft has one)."""
    version = report.version
    assert version is not None, f"table report {report.pk} has no version"
    return version


def _check_link(link: PrivateLink, match: Match) -> None:
    if not link_may_act(link, match):
        raise ReportError(_("This card does not serve this match."))


def _reports(match: Match, *states: str, side: str | None = None) -> QuerySet[TableReport]:
    reports = TableReport.objects.select_for_update(of=("self",))
    reports = reports.filter(match=match, state__in=states)
    if side is not None:
        reports = reports.filter(side=side)
    return reports.select_related("version", "counter_version").order_by("-updated_at", "-pk")


def _refuse_if_settled(match: Match) -> None:
    """The players' part is over once a sheet was signed or went to the referee."""
    # one query for both: the sheets with the referee first, as they were asked before
    settled = list(_reports(match, *REFEREE_WAITS, State.ACCEPTED))
    if any(r.state != State.ACCEPTED and for_referee(r) for r in settled):
        raise ReportError(_("The referee is deciding this match's result: ask at the desk."))
    if any(r.state == State.ACCEPTED for r in settled):
        raise ReportError(_("Both sides already signed this match's sheet."))
    if match.status == Match.Status.DONE:
        raise ReportError(
            _("This match already has a result in force: if it is wrong, tell the referee.")
        )


# --------------------------------------------------------------------------- the players' steps


def _storable(typed: Any) -> None:
    """Refuse what a phone sent that the database cannot keep as JSON: too long, not a list,
    NUL characters, lone surrogates, NaN or infinite numbers (PostgreSQL's jsonb takes none)."""
    unreadable = ReportError(_("The sheet is too long or not readable."))
    try:
        text = json.dumps(typed, allow_nan=False)  # NaN, Infinity: jsonb refuses them
    except (ValueError, TypeError, RecursionError) as error:
        raise unreadable from error
    if not isinstance(typed, list) or len(text) > MAX_DRAFT_CHARS or "\\u0000" in text:
        raise unreadable
    try:
        json.dumps(typed, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as error:
        raise unreadable from error


def clean_text(text: object, limit: int = MAX_COMMENT_CHARS) -> str:
    """A comment or a reason as the database keeps it: no NUL, trimmed, at most ``limit``."""
    return str(text or "").replace("\x00", "").strip()[:limit]


def keep_draft(link: PrivateLink, match: Match, typed: Any) -> None:
    """The check URL's step: where the sheet stands for this side, read with the match's
    sheets under its lock, and the draft kept while the side is entering it (one read of the
    sheets, not one for the state and another for the draft). A sheet closed, in force or
    with the referee is refused with the state's sentence; one waiting for a signature keeps
    no draft. The draft is created (logged: the desk sees the table started) or brought up to
    what is typed; nothing is written when it already holds it."""
    from scoresheets.selectors import SheetStep, sheet_state  # the selectors read this module

    with transaction.atomic():
        locked = results.lock_match(match)
        _check_link(link, locked)
        side = side_of(link, locked)
        found = list(_reports(locked, *State.values))
        state = sheet_state(locked, side, found)
        if state.code in (SheetStep.CLOSED, SheetStep.IN_FORCE, SheetStep.REFEREE):
            raise ReportError(state.sentence)
        if state.code != SheetStep.ENTER:
            return
        _storable(typed)
        draft = next((r for r in found if r.state == State.DRAFT and r.side == side), None)
        if draft is None:
            draft = TableReport.objects.create(match=locked, side=side, link=link, deals=typed)
            _log(locked, "table.started", draft, link=link)
        elif draft.deals != typed:
            draft.deals = typed
            draft.link = link
            draft.save(update_fields=["deals", "link", "updated_at"])


@dataclass
class Submitted:
    """What a submission did: the report that now stands for the match's sheet, and whether
    this call stored anything (``False``: the same submission again)."""

    report: TableReport
    created: bool


def submit(
    link: PrivateLink,
    match: Match,
    typed: Any,
    *,
    client_key: object,
    time_expired: bool = False,
    based_on: BasedOn | Unchecked = UNCHECKED,
) -> Submitted:
    """A side submits its sheet for the other side to countersign.

    The same ``client_key`` again (a resend after the network dropped, a double tap) stores
    nothing. A sheet opened before another result came into force is refused as stale
    (``StaleResult``). If the other side's sheet already waits for this side's answer, this
    submission answers it: the same result signs it, a different one disputes it with this
    sheet as the counter-sheet.
    """
    try:
        key = uuid.UUID(str(client_key))
    except ValueError as error:
        raise ReportError(_("The sheet was sent without its key: reload the page.")) from error
    _storable(typed)
    with transaction.atomic():
        locked = results.lock_match(match)
        _check_link(link, locked)
        side = side_of(link, locked)
        again = one_row(TableReport.objects.filter(match=locked, client_key=key))
        if again is not None and again.state != State.DRAFT:
            if again.side != side:
                raise ReportError(_("The sheet was sent without its key: reload the page."))
            if again.deals != typed:
                # edited after a send whose answer was lost: never keep one and drop the other
                raise ReportError(
                    _(
                        "This sheet was already sent with other deals: reload the page to see "
                        "what was sent, then correct it if needed."
                    )
                )
            return Submitted(again, False)
        refusal = entry_refusal(locked)
        if refusal:
            raise ReportError(refusal)
        current = results.in_force(locked)
        if based_on is not UNCHECKED and _number(based_on or None) != (
            current.number if current else None
        ):
            raise StaleResult(
                current,
                _(
                    "Another result came into force while you were typing: nothing was saved. "
                    "Check it on this page; if it is wrong, tell the referee."
                ),
            )
        _expire_locked(locked)
        _refuse_if_settled(locked)
        return submit_checked(
            link, locked, typed, client_key=key, time_expired=time_expired, based_on=based_on
        )


def submit_checked(
    link: PrivateLink,
    locked: Match,
    typed: Any,
    *,
    client_key: uuid.UUID,
    time_expired: bool = False,
    based_on: BasedOn | Unchecked = UNCHECKED,
) -> Submitted:
    """The end of :func:`submit`, for a caller that holds ``locked`` (``results.lock_match``)
    in its transaction and made ``submit``'s checks itself (``offline.sync``: the link, a
    sheet not sent before with this key, the match open to entry, no result in force since
    the sheet was opened, the expired sheets referred, nothing signed or with the referee):
    asked again they cost a phone's send eight queries and find nothing new."""
    key = client_key
    side = side_of(link, locked)
    deals = deals_payload(typed)
    with transaction.atomic():
        awaiting = list(_reports(locked, State.AWAITING))
        theirs = next((r for r in awaiting if r.side == other_side(side)), None)
        if theirs is not None:
            answer = _answer_with_sheet(link, locked, theirs, typed, deals, key, time_expired)
            return Submitted(answer, True)
        for earlier in (r for r in awaiting if r.side == side):
            # this side corrects its own sheet before the other side answered
            results.withdraw_version(
                _version_of(earlier),
                label=f"link {link.pk}",
                user=acting_user(link),
                reason=_("Corrected by its side."),
            )
            earlier.state = State.SUPERSEDED
            earlier.save(update_fields=["state", "updated_at"])
            _log(locked, "table.superseded", earlier, link=link, by="correction")
        version = results.propose_result(
            locked,
            deals,
            time_expired=time_expired,
            based_on=based_on,
            label=f"link {link.pk}",
            user=acting_user(link),
            lock_held=True,
        )
        report = _reports(locked, State.DRAFT, side=side).first() or TableReport(
            match=locked, side=side
        )
        report.link = link
        report.deals = typed
        report.client_key = key
        report.version = version
        report.state = State.AWAITING
        report.submitted_at = timezone.now()
        report.save()
        _log(locked, "table.submitted", report, link=link)
    return Submitted(report, True)


def _answer_with_sheet(
    link: PrivateLink,
    match: Match,
    theirs: TableReport,
    typed: Any,
    deals: Any,
    key: uuid.UUID,
    time_expired: bool,
) -> TableReport:
    """Both sides typed the sheet: the same result signs theirs; another one disputes it."""
    mine = _reports(match, State.DRAFT, side=side_of(link, match)).first() or TableReport(
        match=match, side=side_of(link, match)
    )
    mine.link, mine.deals, mine.client_key = link, typed, key
    mine.submitted_at = timezone.now()
    sheet = _checked_sheet(match, deals, time_expired)
    mine.state = State.SUPERSEDED
    mine.save()
    _log(match, "table.submitted", mine, link=link, answers=theirs.pk)
    if results.same_result(_version_of(theirs).sheet, sheet):
        return _sign(link, match, theirs)
    comment = _("The other side submitted a different sheet.")
    return _dispute(link, match, theirs, comment, deals, time_expired)


def _checked_sheet(match: Match, deals: Any, time_expired: bool) -> dict[str, Any]:
    """The sheet a version of these deals would keep (the referee's checks, nothing stored)."""
    parsed = results.parse_deals(deals)
    decision = results.decide(match, parsed, outcome=Outcome.COMPLETED, time_expired=time_expired)
    return results.sheet_of(decision, time_expired=time_expired)


def _line_moved(report: TableReport, match: Match) -> bool:
    """Whether the line that sent ``report`` no longer plays on its side of ``match`` (a
    knock-out slot refilled after an earlier result was corrected)."""
    sender = report.link.line_id if report.link is not None else None
    return bool(getattr(match, f"{report.side}_id") != sender)


def settle_moved_lines(match: Match) -> int:
    """Withdraw the open sheets of ``match`` sent or typed by a line that no longer plays it,
    so the new line's opponent cannot sign a sheet of a line that never played. Returns how
    many."""
    open_reports = TableReport.objects.filter(match=match, state__in=TableReport.OPEN_STATES)
    if not open_reports.exists():
        return 0
    settled = 0
    with transaction.atomic():
        locked = results.lock_match(match)
        for report in _reports(locked, *TableReport.OPEN_STATES).select_related("link"):
            if not _line_moved(report, locked):
                continue
            if report.version is not None:
                results.withdraw_version(
                    report.version, reason=_("The line no longer plays this match.")
                )
            report.state = State.SUPERSEDED
            report.save(update_fields=["state", "updated_at"])
            _log(locked, "table.superseded", report, by="line_moved")
            settled += 1
    return settled


def _waiting_for(link: PrivateLink, match: Match, *, report_id: int | None = None) -> TableReport:
    """The other side's sheet waiting for this link's answer (locked)."""
    refusal = entry_refusal(match)
    if refusal:  # a closed stage, a line withdrawn: the sheet can no longer come into force
        raise ReportError(refusal)
    side = side_of(link, match)
    # with its link: ``_line_moved`` reads the link's line
    reports = _reports(match, State.AWAITING, side=other_side(side)).select_related("link")
    if report_id is not None:
        reports = reports.filter(pk=report_id)
    report = reports.first()
    if report is None or _line_moved(report, match):
        raise ReportError(_("No sheet is waiting for your answer."))
    if _expired(report, match.round.stage.tournament):
        _expire(match, report)
        raise ReportError(
            _("The time to countersign has run out: the referee decides this match's result.")
        )
    return report


def accept(link: PrivateLink, match: Match, *, report_id: int | None = None) -> TableReport:
    """The other side signs the sheet: in force by the result service's precedence (or, over
    a result the organizer already put in force, waiting for the referee). Signing twice
    changes nothing."""
    with transaction.atomic():
        locked = results.lock_match(match)
        _check_link(link, locked)
        signed = _reports(locked, State.ACCEPTED, side=other_side(side_of(link, locked)))
        if report_id is not None:
            signed = signed.filter(pk=report_id)
        already_signed = signed.first()
        if already_signed is not None:
            return already_signed
        report = _waiting_for(link, locked, report_id=report_id)
        return _sign(link, locked, report)


def _sign(link: PrivateLink, match: Match, report: TableReport) -> TableReport:
    version = _version_of(report)
    saved = results.countersign(
        version, label=f"link {link.pk}", user=acting_user(link), match=match
    )
    report.state = State.ACCEPTED
    report.answered_at = timezone.now()
    report.save(update_fields=["state", "answered_at", "updated_at"])
    # the version as the result service left it (its status tells the phone where it stands)
    report.version = saved.version
    _log(
        match,
        "table.accepted",
        report,
        link=link,
        in_force=saved.version.status == ResultVersion.Status.IN_FORCE,
    )
    return report


def dispute(
    link: PrivateLink,
    match: Match,
    comment: str,
    typed: Any = None,
    *,
    time_expired: bool = False,
    report_id: int | None = None,
) -> TableReport:
    """The other side disputes the sheet, saying why (and, if it likes, with its own sheet):
    both go to the referee."""
    comment = clean_text(comment)
    if not comment:
        raise ReportError(_("Say what is wrong with the sheet: the referee reads it."))
    if typed:
        _storable(typed)
    deals = deals_payload(typed) if typed else None
    with transaction.atomic():
        locked = results.lock_match(match)
        _check_link(link, locked)
        already = _reports(locked, State.DISPUTED, side=other_side(side_of(link, locked)))
        disputed = already.first()
        if disputed is not None:
            return disputed
        report = _waiting_for(link, locked, report_id=report_id)
        return _dispute(link, locked, report, comment, deals, time_expired)


def _dispute(
    link: PrivateLink,
    match: Match,
    report: TableReport,
    comment: str,
    deals: Any,
    time_expired: bool = False,
) -> TableReport:
    counter = None
    if deals:
        counter = results.propose_result(
            match, deals, time_expired=time_expired, label=f"link {link.pk}", user=acting_user(link)
        )
        counter = results.refer_version(
            counter, label=f"link {link.pk}", user=acting_user(link), reason=comment
        )
    report.version = results.refer_version(
        _version_of(report), label=f"link {link.pk}", user=acting_user(link), reason=comment
    )
    report.state = State.DISPUTED
    report.answered_at = timezone.now()
    report.answer_comment = comment
    report.counter_version = counter
    report.save()
    _log(
        match,
        "table.disputed",
        report,
        link=link,
        comment=comment,
        counter_version=counter.number if counter else None,
    )
    return report


# --------------------------------------------------------------------------- time and referee


def _expire(match: Match, report: TableReport) -> None:
    report.version = results.refer_version(
        _version_of(report), reason=_("Not answered within the time to countersign.")
    )
    report.state = State.EXPIRED
    report.save(update_fields=["state", "updated_at"])
    _log(match, "table.expired", report)


def _expire_locked(match: Match, now: datetime | None = None) -> int:
    tournament = match.round.stage.tournament
    expired = 0
    if entry_refusal(match):  # nothing can come into force here any more: nothing to decide
        return 0
    for report in _reports(match, State.AWAITING):
        if _expired(report, tournament, now):
            _expire(match, report)
            expired += 1
    return expired


def any_due(reports: Sequence[TableReport], tournament: Tournament) -> bool:
    """Whether one of ``reports`` (read for a page) waits past the time to countersign: a page
    that already read its sheets asks ``expire_due`` only then, not on every view."""
    now = timezone.now()
    return any(_expired(report, tournament, now) for report in reports)


def expire_due(
    *,
    match: Match | None = None,
    matches: QuerySet[Match] | None = None,
    tournament: Tournament | None = None,
    now: datetime | None = None,
) -> int:
    """Send to the referee every sheet left unanswered past its tournament's time to
    countersign (the Celery beat sweep, and every page that shows a sheet). Returns how many.

    A page checks only what it shows: one ``match``, a line's card its ``matches`` (a query,
    used as a subquery), the referee's page its ``tournament``; the beat sweep checks them all.
    """
    now = now or timezone.now()
    waiting = TableReport.objects.filter(state=State.AWAITING, submitted_at__isnull=False)
    if match is not None:
        waiting = waiting.filter(match=match)
    if matches is not None:
        waiting = waiting.filter(match__in=matches.values("pk"))
    if tournament is not None:
        waiting = waiting.filter(match__round__stage__tournament=tournament)
    due = [
        report.match_id
        # sorted below: the default ordering's joins (match, round, stage...) would buy nothing
        for report in waiting.select_related("match__round__stage__tournament").order_by()
        if _expired(report, report.match.round.stage.tournament, now)
    ]
    expired = 0
    for match_id in sorted(set(due)):
        with transaction.atomic():
            expired += _expire_locked(results.lock_match(Match(pk=match_id)), now)
    if expired:
        logger.info("%d table report(s) sent to the referee after the time to countersign", expired)
    return expired


def for_referee(report: TableReport) -> bool:
    """Whether the referee has to decide on this report (disputed, unanswered, or signed by
    both over a result the organizer had already put in force)."""
    if report.state in REFEREE_WAITS:
        if report.signed_with_code and report.state == State.DISPUTED:
            # countersigned with the code, then disputed by the code's line: the result stays
            # in force until the referee keeps it or enters another one (offline.dispute_signed)
            return True
        # unless the referee already rejected its versions (on the desk's result page)
        return any(
            version is not None and version.status == ResultVersion.Status.AWAITING
            for version in (report.version, report.counter_version)
        )
    return (
        report.state == State.ACCEPTED
        and report.version is not None
        and report.version.status == ResultVersion.Status.AWAITING
    )


def decide(
    report: TableReport,
    choice: str,
    *,
    user: Actor,
    reason: str = "",
    based_on: int | str | None = None,
) -> TableReport:
    """The referee's decision: ``"reported"`` (the submitting side's sheet) or ``"counter"``
    (the other side's own sheet) comes into force and the other one is rejected; ``"neither"``
    rejects both (the result in force stays, or the referee enters one at the desk).

    ``based_on`` is the version in force the referee saw (``""``: none); a stale one raises
    ``StaleResult``, a missing one ``VersionRequired``, and nothing changes."""
    based_on = results.named_version(based_on)
    with transaction.atomic():
        locked = results.lock_match(report.match)
        report = (
            TableReport.objects.select_for_update(of=("self",))
            .select_related("version", "counter_version")
            .get(pk=report.pk)
        )
        if report.state == State.DECIDED:
            return report
        if not for_referee(report):
            raise ReportError(_("This sheet does not wait for the referee."))
        chosen, other = report.version, report.counter_version
        if choice == "counter":
            chosen, other = other, chosen
        elif choice not in ("reported", "neither"):
            raise ReportError(_("Choose one of the two sheets."))
        if chosen is None:
            raise ReportError(_("The other side gave no sheet of its own."))
        reason = clean_text(reason)
        if report.signed_with_code and chosen.status == ResultVersion.Status.IN_FORCE:
            if choice != "reported":
                raise ReportError(
                    _(
                        "This sheet is in force: to change it, enter the right result on the "
                        "desk's result page."
                    )
                )
            results.check_based_on(locked, based_on)
            report.state = State.DECIDED
            report.save(update_fields=["state", "updated_at"])
            _log(locked, "table.decided", report, user=user, choice=choice, chosen=chosen.number)
            return report
        rejected = [other] if choice != "neither" else [chosen, other]
        if choice != "neither":
            results.accept_version(chosen, user=user, reason=reason, based_on=based_on)
        else:
            results.check_based_on(locked, based_on)
        for version in rejected:
            if version is not None:
                version.refresh_from_db()
                if version.status == ResultVersion.Status.AWAITING:
                    results.reject_version(version, user=user, reason=reason)
        report.state = State.DECIDED
        report.save(update_fields=["state", "updated_at"])
        _log(
            locked,
            "table.decided",
            report,
            user=user,
            choice=choice,
            chosen=None if choice == "neither" else chosen.number,
        )
    return report


def matches_to_settle(matches: Sequence[Match]) -> list[Match]:
    """Those of ``matches`` whose result may settle a sheet: a knock-out match (it may have moved
    a line into a later match) or one with an open sheet (one query for all of them)."""
    open_states = (State.DRAFT, *REFEREE_WAITS, State.ACCEPTED)
    with_sheets = set(
        TableReport.objects.filter(match_id__in=[m.pk for m in matches], state__in=open_states)
        .order_by()  # the model's ordering joined the matches for nothing
        .values_list("match_id", flat=True)
    )
    return [
        m
        for m in matches
        if m.pk in with_sheets or m.next_match_id is not None or m.loser_next_match_id is not None
    ]


def on_result_changed(match: Match) -> None:
    """Another result came into force: a draft of the match stops being "being entered"; a
    sheet waiting for the referee is settled when one of its versions was accepted elsewhere
    (the desk's result page) or when a result came into force after it was referred (the
    referee entered another one at the desk form). A sheet awaiting the other side's signature
    stays: signed, it takes its place by precedence (over the organizer's result it waits for
    the referee)."""
    for later in (match.next_match_id, match.loser_next_match_id):
        if later is not None:  # this result may have moved another line into a later match
            settle_moved_lines(Match(pk=later))
    open_states = (State.DRAFT, *REFEREE_WAITS, State.ACCEPTED)
    open_reports = list(
        TableReport.objects.filter(match=match, state__in=open_states)
        .order_by()
        .values_list("state", "version_id")
    )
    if not open_reports:
        return
    if all(state == State.ACCEPTED for state, _version in open_reports):
        # the usual end of a table: its sheet was just signed and came into force; a signed
        # sheet is left alone when it is the one in force (below), so nothing to lock
        current_id = results.in_force_id(match)
        if all(version_id == current_id for _state, version_id in open_reports):
            return
    with transaction.atomic():
        locked = results.lock_match(match)
        current = results.in_force(locked)
        if current is None or current.is_removal:
            return
        for report in _reports(locked, *open_states):
            ours = current.pk in (report.version_id, report.counter_version_id)
            if report.state == State.ACCEPTED and (ours or not for_referee(report)):
                continue
            if report.state != State.DRAFT and not ours:
                referred = report.answered_at or report.submitted_at
                if referred and current.created_at < referred:
                    continue  # in force before the sheet was referred: the referee decides
            for version in (report.version, report.counter_version):
                if version is not None and version.pk != current.pk:
                    results.withdraw_version(
                        version,
                        reason=_("Version %(n)d came into force.") % {"n": current.number},
                    )
            report.state = State.SUPERSEDED if report.state == State.DRAFT else State.DECIDED
            report.save(update_fields=["state", "updated_at"])
            _log(locked, "table.superseded", report, in_force=current.number)
