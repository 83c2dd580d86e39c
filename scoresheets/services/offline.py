"""Sheets that come from a phone's outbox: typed offline, sent whenever the network returns,
as many times as it takes (docs/at-the-table.md, "Without a network").

``sync`` is the one door of a queued sheet. Whatever the order, repetition or delay of the
sends, the server ends with what one send on a perfect network gives:

- the same ``client_key`` again answers where that sheet stands and stores nothing;
- a sheet typed against a match that has since changed (other lines, a withdrawal, a closed
  stage) is refused (``SheetChanged``): nothing is stored, the phone keeps it for the referee;
- a sheet that meets a result which came into force after it was opened (the desk, the
  referee, the other phone's sheet countersigned first) is not lost and overwrites nothing: it
  waits for the referee (state ``REFERRED``), unless it says the same as the result in force;
- a sheet carrying the other side's one-time code (one phone per table) is checked here, never
  on the phone: right, the sheet is countersigned at once; wrong, the code counts a try; a code
  found wrong in a queued send, or a fifth wrong try, sends the sheet to the referee.

Everything else is ``reports.submit``'s: precedence, the change log, the lock order.
"""

from __future__ import annotations

import hmac
import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from scoresheets.exceptions import ReportError
from scoresheets.models import COUNTERSIGN_TRIES, CountersignCode, PrivateLink, TableReport
from scoresheets.services import reports
from tournaments.models import Match
from tournaments.services import results
from tournaments.services.rows import one_row

logger = logging.getLogger(__name__)

State = TableReport.State


class SheetChanged(ReportError):
    """The match is no longer the one the sheet was typed for: refused, kept on the phone."""


class Status:
    """Where a sent sheet stands, as the phone words it (its own sentences, offline too)."""

    WAITING = "waiting"  # sent, waiting for the other line
    COUNTERSIGNED = "countersigned"  # signed by both: in force (or agreeing with it)
    REFEREE = "referee"  # waiting for the referee
    WRONG_CODE = "wrong_code"  # nothing stored: type the code again
    DONE = "done"  # decided or superseded: the page shows the result in force


@dataclass
class Synced:
    """What one send did: the report that stands for it, where it is, whether this send stored
    anything, and for a wrong code the tries left."""

    report: TableReport | None
    status: str
    created: bool
    tries_left: int = 0


def status_of(report: TableReport) -> str:
    if report.state == State.AWAITING:
        return Status.WAITING
    if reports.for_referee(report):
        return Status.REFEREE
    if report.state == State.ACCEPTED or (
        report.state == State.SUPERSEDED and report.answer_comment == _AGREES
    ):
        return Status.COUNTERSIGNED
    return Status.DONE


_AGREES = "same-as-in-force"


def code_for(match: Match, side: str) -> CountersignCode:
    """The one-time code of ``side`` for ``match`` (made on first need: the table card)."""
    code, _created = CountersignCode.objects.get_or_create(match=match, side=side)
    return code


def codes_for(matches: list[Match]) -> dict[tuple[int, str], str]:
    """The codes of both sides of ``matches`` for the table cards, made where missing."""
    found = {
        (c.match_id, c.side): c.code
        for c in CountersignCode.objects.filter(match__in=[m.pk for m in matches])
    }
    for match in matches:
        for side in (Match.Slot.HOME, Match.Slot.AWAY):
            if (match.pk, side) not in found:
                found[(match.pk, side)] = code_for(match, side).code
    return found


def _key(client_key: object) -> uuid.UUID:
    try:
        return uuid.UUID(str(client_key))
    except ValueError as error:
        raise ReportError(_("The sheet was sent without its key: reload the page.")) from error


def _changed(match: Match, lines: object) -> str:
    """Why ``match`` is not the match the sheet was typed for, or ``""``."""
    refusal = reports.entry_refusal(match)
    if refusal:
        return refusal
    if lines is not None and list(lines) != [match.home_id, match.away_id]:  # type: ignore[call-overload]
        return _("The lines of this match changed after the sheet was typed (a new pairing).")
    return ""


def _based_on(raw: object) -> int | str | None:
    """The version the phone saw in force, as the phone sent it (a number, ``""``: none)."""
    return raw if raw is None or isinstance(raw, int | str) else str(raw)


def _late(match: Match, based_on: object) -> bool:
    """Whether another result came in since the sheet was opened, or the players' part of the
    match is over (signed, or with the referee)."""
    current = results.in_force(match)
    if reports._number(based_on or None) != (current.number if current else None):
        return True
    try:
        reports._refuse_if_settled(match)
    except ReportError:
        return True
    return False


def _refer(
    link: PrivateLink,
    match: Match,
    typed: Any,
    key: uuid.UUID,
    time_expired: bool,
    reason: str,
) -> Synced:
    """Keep the sheet as a version for the referee (or, when it says what the result in force
    says, as history that agrees)."""
    deals = reports.deals_payload(typed)
    side = reports.side_of(link, match)
    current = results.in_force(match)
    report = reports._reports(match, State.DRAFT, side=side).first() or TableReport(
        match=match, side=side
    )
    report.link, report.deals, report.client_key = link, typed, key
    report.submitted_at = timezone.now()
    if current is not None and not current.is_removal:
        sheet = reports._checked_sheet(match, deals, time_expired)
        if results.same_result(current.sheet, sheet):
            report.state, report.answer_comment = State.SUPERSEDED, _AGREES
            report.save()
            reports._log(match, "table.synced", report, link=link, agrees=current.number)
            return Synced(report, Status.COUNTERSIGNED, True)
    version = results.propose_result(
        match,
        deals,
        time_expired=time_expired,
        label=f"link {link.pk}",
        user=reports.acting_user(link),
    )
    report.version = results.refer_version(
        version, label=f"link {link.pk}", user=reports.acting_user(link), reason=reason
    )
    report.state = State.REFERRED
    report.answer_comment = reason
    report.answered_at = report.submitted_at
    report.save()
    reports._log(match, "table.referred", report, link=link, reason=reason)
    return Synced(report, Status.REFEREE, True)


def _check_code(code: CountersignCode, typed_code: str) -> bool:
    given = "".join(ch for ch in str(typed_code).upper() if ch.isalnum())
    return hmac.compare_digest(given.encode(), code.code.encode())


def sync(
    link: PrivateLink,
    match: Match,
    typed: Any,
    *,
    client_key: object,
    based_on: object = "",
    lines: object = None,
    time_expired: bool = False,
    code: str = "",
    queued: bool = False,
) -> Synced:
    """One send of a sheet from a phone (see the module's docstring). ``lines``: the match's
    [home, away] line ids the phone typed against; ``code``: the other side's one-time code
    typed on this phone; ``queued``: sent from the outbox, not while the player waits (a wrong
    code then goes to the referee: nobody is there to type it again)."""
    key = _key(client_key)
    reports._storable(typed)
    try:
        return _sync_locked(link, match, typed, key, based_on, lines, time_expired, code, queued)
    except IntegrityError:
        # another send of this very sheet stored it meanwhile: a database without row locks
        # (SQLite, the embedded default) lets two sends past the match's lock at once
        again = _sent_before(link, match, typed, key)
        if again is None:
            raise
        return again


def _sent_before(link: PrivateLink, match: Match, typed: Any, key: uuid.UUID) -> Synced | None:
    """Where this sheet stands when a send with its key was already stored, else None (a
    draft with that key is still to be sent)."""
    again = one_row(TableReport.objects.filter(match=match, client_key=key))
    if again is None or again.state == State.DRAFT:
        return None
    if again.side != reports.side_of(link, match) or again.deals != typed:
        raise ReportError(
            _(
                "This sheet was already sent with other deals: reload the page to see "
                "what was sent, then correct it if needed."
            )
        )
    return Synced(again, status_of(again), False)


def _sync_locked(
    link: PrivateLink,
    match: Match,
    typed: Any,
    key: uuid.UUID,
    based_on: object,
    lines: object,
    time_expired: bool,
    code: str,
    queued: bool,
) -> Synced:
    with transaction.atomic():
        locked = results.lock_match(match)
        reports._check_link(link, locked)
        again = _sent_before(link, locked, typed, key)
        if again is not None:
            return again
        changed = _changed(locked, lines)
        if changed:
            raise SheetChanged(
                changed
                + " "
                + _("Nothing was saved: the sheet stays on this phone for the referee.")
            )
        reports._expire_locked(locked)
        if _late(locked, based_on):
            return _refer(
                link,
                locked,
                typed,
                key,
                time_expired,
                _("Arrived from a phone after another result came into force."),
            )
        if code:
            return _with_code(link, locked, typed, key, time_expired, based_on, code, queued)
        # the checks of ``reports.submit`` were made above, under the same lock
        submitted = reports.submit_checked(
            link,
            locked,
            typed,
            client_key=key,
            time_expired=time_expired,
            based_on=_based_on(based_on),
        )
        return Synced(submitted.report, status_of(submitted.report), submitted.created)


def _with_code(
    link: PrivateLink,
    match: Match,
    typed: Any,
    key: uuid.UUID,
    time_expired: bool,
    based_on: object,
    typed_code: str,
    queued: bool,
) -> Synced:
    other = reports.other_side(reports.side_of(link, match))
    code = CountersignCode.objects.select_for_update().filter(match=match, side=other).first()
    if code is None or code.locked_at is not None or code.used_at is not None:
        reason = _("Countersign code not valid for this match (locked or already used).")
        return _refer(link, match, typed, key, time_expired, reason)
    if not _check_code(code, typed_code):
        code.failures += 1
        locked = code.failures >= COUNTERSIGN_TRIES
        if locked:
            code.locked_at = timezone.now()
        code.save(update_fields=["failures", "locked_at"])
        logger.info("match %s: wrong countersign code (%d)", match.pk, code.failures)
        if locked or queued:
            reason = (
                _("Five wrong countersign codes: the sheet is locked.")
                if locked
                else _("The countersign code typed on the phone was wrong.")
            )
            return _refer(link, match, typed, key, time_expired, reason)
        return Synced(None, Status.WRONG_CODE, False, COUNTERSIGN_TRIES - code.failures)
    # the checks of ``reports.submit`` were made by ``_sync_locked``, under the same lock
    submitted = reports.submit_checked(
        link, match, typed, client_key=key, time_expired=time_expired, based_on=_based_on(based_on)
    )
    report = submitted.report
    if report.state == State.AWAITING:
        report = reports._sign(link, match, report)
        report.signed_with_code = True
        report.save(update_fields=["signed_with_code", "updated_at"])
    code.used_at = timezone.now()
    code.save(update_fields=["used_at"])
    return Synced(report, status_of(report), submitted.created)


def wrong_code_sentence(tries_left: int) -> str:
    return ngettext(
        "Wrong code: %(n)d try left before the sheet goes to the referee.",
        "Wrong code: %(n)d tries left before the sheet goes to the referee.",
        tries_left,
    ) % {"n": tries_left}


def touch(link: PrivateLink, every_s: int = 20) -> None:
    """Note that a phone holding ``link`` reached the server (the desk's "last contact"), at
    most once every ``every_s`` seconds per link."""
    now = timezone.now()
    if link.last_seen_at is not None and (now - link.last_seen_at).total_seconds() < every_s:
        return
    PrivateLink.objects.filter(pk=link.pk).update(last_seen_at=now)
    link.last_seen_at = now


def disputable(
    link: PrivateLink, match: Match, shown: list[TableReport] | None = None
) -> TableReport | None:
    """The sheet the other side's phone countersigned with this link's line's code, while the
    line may still dispute it: within the tournament's time to countersign from the moment the
    signed sheet reached the server (the phone's clock is not trusted). ``shown``: the match's
    sheets as the page just read them (``selectors.reports_of``), looked through instead of
    asked again; without it, the other side's code-signed sheets are read, and looked through
    the same way (the latest signed)."""
    other = reports.other_side(reports.side_of(link, match))
    if shown is None:
        shown = list(
            TableReport.objects.filter(
                match=match, side=other, state=State.ACCEPTED, signed_with_code=True
            ).order_by()
        )
    signed = [
        r
        for r in shown
        if r.side == other
        and r.state == State.ACCEPTED
        and r.signed_with_code
        and r.answered_at is not None
    ]
    report = max(signed, key=lambda r: r.answered_at, default=None)  # type: ignore[arg-type,return-value]
    if report is None or report.answered_at is None:
        return None
    window = timedelta(minutes=match.round.stage.tournament.countersign_minutes)
    return report if timezone.now() < report.answered_at + window else None


def dispute_signed(link: PrivateLink, match: Match, comment: str) -> TableReport:
    """The line whose code countersigned a sheet on the other side's phone says it is wrong:
    the result stays in force and the referee looks at it (keeps it, or enters the right one
    at the desk, which replaces it)."""
    comment = reports.clean_text(comment)
    if not comment:
        raise ReportError(_("Say what is wrong with the sheet: the referee reads it."))
    with transaction.atomic():
        locked = results.lock_match(match)
        reports._check_link(link, locked)
        report = disputable(link, locked)
        if report is None:
            raise ReportError(_("The time to dispute this sheet has run out: ask the referee."))
        report = TableReport.objects.select_for_update().get(pk=report.pk)
        report.state = State.DISPUTED
        report.answer_comment = comment
        report.answered_at = timezone.now()
        report.save(update_fields=["state", "answer_comment", "answered_at", "updated_at"])
        reports._log(locked, "table.disputed", report, link=link, comment=comment, signed=True)
    return report
