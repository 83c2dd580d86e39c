"""The players' sheets: at the table (``scoresheets``) one side types the match's sheet on its
phone and the other countersigns it.

The side's sheet is a version of source "players" that waits, PROPOSED, for the other side;
signed by both it takes its place by the precedence of ``versions._place``; disputed or left
unanswered it waits for the referee (AWAITING), who decides with ``accept_version`` /
``reject_version`` as on any other version.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from tournaments.exceptions import ResultError, StaleResult
from tournaments.models import (
    Match,
    Outcome,
    ResultVersion,
    Stage,
)
from tournaments.services.results.batch import _lock, held_lock
from tournaments.services.results.deciding import decide
from tournaments.services.results.reading import parse_deals, sheet_of
from tournaments.services.results.stored import in_force
from tournaments.services.results.versions import (
    UNCHECKED,
    Actor,
    BasedOn,
    SavedVersion,
    Unchecked,
    _based_on_number,
    _check_lines,
    _decidable,
    _log,
    _place,
    _signed_in,
)
from tournaments.sources import ResultSource

logger = logging.getLogger(__name__)


def lock_match(match: Match) -> Match:
    """The match row, locked until the end of the caller's transaction (always lock the match
    before any row that depends on it, as every writer of a result does)."""
    return _lock(match)


def entry_refusal(match: Match) -> str:
    """Why no result can be entered on ``match`` now (a sentence), or ``""`` when it can: the
    one check of the desk's form and of the players' phones."""
    if match.round.stage.status == Stage.Status.CLOSED:
        return _("This stage is closed: its results are final and cannot be changed here.")
    if match.outcome == Outcome.BYE:
        return _("A bye has no result to enter.")
    if not (match.home_id and match.away_id):
        return _("Both lines of this match must be known first.")
    return ""


def propose_result(
    match: Match,
    deals: object,
    *,
    time_expired: bool = False,
    based_on: BasedOn | Unchecked = UNCHECKED,
    user: Actor = None,
    label: str | None = None,
    lock_held: bool = False,
) -> ResultVersion:
    """Check a side's sheet like :func:`save_result` and store it as a PROPOSED version of
    source "players": it waits for the other side, nothing comes into force. A stale
    ``based_on`` (another version came into force since the sheet was opened) raises
    :class:`StaleResult`. ``lock_held``: ``match`` is the row the caller's open transaction
    locked (``lock_match``), not read again."""
    parsed = parse_deals(deals)
    with transaction.atomic():
        locked = (held_lock(match) if lock_held else None) or _lock(match)
        _check_lines(locked)
        decision = decide(locked, parsed, outcome=Outcome.COMPLETED, time_expired=time_expired)
        current = in_force(locked)
        seen = None if based_on is UNCHECKED else _based_on_number(based_on)
        if based_on is not UNCHECKED and seen != (current.number if current else None):
            raise StaleResult(current)
        last = ResultVersion.objects.filter(match=locked).aggregate(n=Max("number"))["n"] or 0
        version = ResultVersion.objects.create(
            match=locked,
            number=last + 1,
            source=str(ResultSource.PLAYERS),
            author=_signed_in(user),
            based_on=current,
            sheet=sheet_of(decision, time_expired=time_expired),
            status=ResultVersion.Status.PROPOSED,
        )
        _log(locked, "result.proposed", version, user=user, label=label)
    return version


def countersign(
    version: ResultVersion,
    *,
    user: Actor = None,
    label: str | None = None,
    match: Match | None = None,
) -> SavedVersion:
    """Both sides signed a players' version: it takes its place by precedence (in force over no
    result, a deletion or the same result; otherwise it waits for the referee). ``created``
    says whether it came into force. ``match``: the version's match, locked by the caller's
    open transaction (``lock_match``), not read and locked again."""
    with transaction.atomic():
        locked, version, current = _decidable(
            version.pk, based_on=UNCHECKED, locked=held_lock(match)
        )
        _check_lines(locked)
        if version.status == ResultVersion.Status.IN_FORCE:
            return SavedVersion(version, False)
        if version.status != ResultVersion.Status.PROPOSED:
            raise ResultError(_("This sheet no longer waits for the other side's signature."))
        _place(
            locked,
            version,
            current,
            user=user,
            label=label,
            action="result.countersigned",
            same_action="result.countersigned",
            countersigned=True,
        )
    return SavedVersion(version, version.status == ResultVersion.Status.IN_FORCE)


def refer_version(
    version: ResultVersion, *, user: Actor = None, label: str | None = None, reason: str = ""
) -> ResultVersion:
    """A players' version the other side disputed or left unanswered: it waits for the
    referee's decision (``accept_version`` / ``reject_version``)."""
    with transaction.atomic():
        locked, version, _current = _decidable(version.pk, based_on=UNCHECKED)
        if version.status != ResultVersion.Status.PROPOSED:
            return version
        version.status = ResultVersion.Status.AWAITING
        if reason:
            version.reason = reason
        version.save(update_fields=["status", "reason"])
        _log(locked, "result.awaiting", version, user=user, label=label, referred=True)
    return version


def withdraw_version(
    version: ResultVersion, *, user: Actor = None, label: str | None = None, reason: str = ""
) -> ResultVersion:
    """A players' version that no longer stands (its side corrected its sheet, or another
    result came into force first): rejected without a decision, nothing else changes."""
    with transaction.atomic():
        locked, version, _current = _decidable(version.pk, based_on=UNCHECKED)
        if version.status not in (ResultVersion.Status.PROPOSED, ResultVersion.Status.AWAITING):
            return version
        version.status = ResultVersion.Status.REJECTED
        if reason:
            version.reason = reason
        version.save(update_fields=["status", "reason"])
        _log(locked, "result.withdrawn", version, user=user, label=label)
    return version
