"""Versions and precedence: every source writes a result the same way, as a new ``ResultVersion``
under the match's row lock.

``_save_version`` checks the version the save was based on, applies precedence (a version from a
source that does not speak for the organizer never silently replaces one that does: it waits
for a decision), and, when the new version comes into force, has it projected
(``projection._project``) and logged. Every refusal is a ``ResultError`` raised before anything
is written, or inside the transaction, which then rolls back.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, TypeVar, cast

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from scopa import match_end
from tournaments.exceptions import ResultError, StaleResult, VersionRequired
from tournaments.models import (
    Line,
    Match,
    MatchResult,
    Outcome,
    ResultVersion,
    Stage,
)
from tournaments.services import changelog
from tournaments.services.results.batch import ScoreRow, _announce, _batch, _lock
from tournaments.services.results.deciding import _is_knockout, decide, decision_from_verdict
from tournaments.services.results.projection import _copy_state, _project, bye_score
from tournaments.services.results.reading import (
    MAX_DEAL_NUMBER,
    OFFENCE_OUTCOMES,
    PLAYED_OUTCOMES,
    Breakdown,
    Deal,
    Decision,
    Sheet,
    bye_sheet,
    deals_of,
    decision_of,
    parse_deals,
    same_result,
    sheet_of,
)
from tournaments.services.results.stored import in_force
from tournaments.sources import ResultSource, speaks_for_organizer

logger = logging.getLogger(__name__)

Actor: TypeAlias = AbstractBaseUser | AnonymousUser | None
"""Who writes or decides a result: a request's user (signed in or not), or nobody (the system,
a task, a test). Only a signed-in user is kept as a version's author or decider."""


def _signed_in(user: Actor) -> User | None:
    """``user`` if signed in, else ``None``: the user a version records."""
    if user is not None and getattr(user, "is_authenticated", False):
        return cast(User, user)  # signed in: an instance of AUTH_USER_MODEL, auth's User
    return None


def _check_lines(match: Match) -> None:
    if match.round.stage.status == Stage.Status.CLOSED:
        raise ResultError(
            _(
                "Stage “%(stage)s” is closed: its results are final. Reopen the stage to change "
                "them (a following stage seeded from it is not regenerated)."
            )
            % {"stage": match.round.stage.name}
        )
    if match.home_id is None or match.away_id is None:
        raise ResultError(_("This match does not have both lines yet."))
    if match.outcome == Outcome.BYE:
        raise ResultError(_("A bye has no result to enter."))


def _offender_side(match: Match, offender: Line | int | None) -> int | None:
    if offender is None:
        return None
    offender_id = getattr(offender, "pk", offender)
    if offender_id == match.home_id:
        return 0
    if offender_id == match.away_id:
        return 1
    raise ResultError(_("The offending line does not play this match."))


class Unchecked(enum.Enum):
    """The type of :data:`UNCHECKED`, a sentinel compared by identity (``is``)."""

    UNCHECKED = "unchecked"


UNCHECKED: Final = Unchecked.UNCHECKED
"""``based_on`` of a caller that does not edit a version it has shown (forfeits, imports, the
demo data): no stale check."""

BasedOn: TypeAlias = ResultVersion | int | str | None
"""The version in force a save was based on, as a caller names it: the version, its number, a
number as a form posts it, or ``None``, ``""`` or ``0`` for "no version was in force"."""


_Named = TypeVar("_Named", bound=BasedOn)


def named_version(based_on: _Named | Unchecked) -> _Named:
    """``based_on`` of an organizer's change of the result in force (desk, admin, API, referee),
    which must name the version it read: ``None`` (not sent at all) raises
    :class:`VersionRequired`; ``""`` or ``0`` say "no version was in force"."""
    if based_on is None or based_on is UNCHECKED:
        raise VersionRequired()
    return based_on


@dataclass
class SavedVersion:
    """What a save did: the version it stored (or found), and whether it is a new one."""

    version: ResultVersion
    created: bool
    dropped: int = 0
    """Deals of the earlier version after the corrected match's end, left out (``save_result``)."""


def _based_on_number(based_on: BasedOn) -> int | None:
    """``based_on`` as a version number (``None``: the save was made on a match with no
    version); a ResultVersion, an int or a digit string are accepted."""
    if based_on is None or based_on == "" or based_on == 0 or based_on == "0":
        return None
    if isinstance(based_on, ResultVersion):
        return based_on.number
    try:
        return int(based_on)
    except (TypeError, ValueError) as error:
        raise ResultError(_("The version this save is based on is not a number.")) from error


def _previous_summary(match: Match) -> dict[str, object] | None:
    if match.status != Match.Status.DONE or match.outcome == Outcome.BYE:
        return None
    lines = (match.home_id, match.away_id)
    return {
        "outcome": match.outcome,
        "winner": match.winner_id,
        "totals": [
            r.points for r in sorted(match.results.all(), key=lambda r: r.line_id != lines[0])
        ],
    }


def _log(
    match: Match,
    action: str,
    version: ResultVersion,
    *,
    user: Actor,
    results: Sequence[ScoreRow | MatchResult] = (),
    replaced: dict[str, object] | None = None,
    label: str | None = None,
    **extra: object,
) -> None:
    sheet = version.sheet
    detail = {
        "version": version.number,
        "source": version.source,
        "based_on": version.based_on.number if version.based_on is not None else None,
        "status": str(version.status),
        "reason": version.reason,
        **extra,
    }
    if sheet is not None:
        detail.update(
            outcome=sheet["outcome"],
            totals=sheet["result"]["totals"],
            winner=(
                None
                if sheet["result"]["winner"] is None
                else (match.home_id, match.away_id)[sheet["result"]["winner"]]
            ),
            margin=sheet["result"]["margin"],
        )
    if results:
        detail.update(vp=[r.vp for r in results], mp=[r.mp for r in results])
    if label:
        detail["record"] = label
    detail["replaced"] = replaced
    tournament = match.round.stage.tournament
    batch = _batch.get()
    if batch is not None:
        batch.defer_log(changelog.entry(tournament, action, match=match, user=user, **detail))
    else:
        changelog.record(tournament, action, match=match, user=user, **detail)


def _put_in_force(
    match: Match,
    version: ResultVersion,
    current: ResultVersion | None,
    *,
    user: Actor,
    action: str,
    label: str | None = None,
) -> None:
    """Make ``version`` the one in force over ``current`` and project it (match locked); it is
    announced after the commit, by its :class:`ResultBatch` if it is written in one."""
    replaced = _previous_summary(match)
    batch = _batch.get()
    # A new version in a batch waits for its flush, with the one it puts out of force.
    deferred = batch is not None and version.pk is None
    superseded = current if current is not None and current.pk != version.pk else None
    if superseded is not None:
        superseded.status = ResultVersion.Status.SUPERSEDED
        if not deferred:
            superseded.save(update_fields=["status"])
    version.status = ResultVersion.Status.IN_FORCE
    if version.pk is not None:
        version.save(update_fields=["status", "decided_by", "decided_at", "reason"])
    elif not deferred:
        version.save()
    results = _project(match, None if version.sheet is None else decision_of(version.sheet))
    if deferred and batch is not None:
        batch.defer_version(version, superseded)
    _log(match, action, version, user=user, results=results, replaced=replaced, label=label)
    # a bye is part of the draw, saved with its round: no result to flag later rounds with
    # (``results_changed``), but its score is in force like any result: written for those who
    # follow results (``results_written``: the webhooks' ``result.in_force``)
    _announce(match, changed=version.source != ResultSource.BYE)


def _save_version(
    match: Match,
    *,
    sheet: Sheet | None,
    source: str,
    user: Actor,
    based_on: BasedOn | Unchecked = UNCHECKED,
    reason: str = "",
    submission: Any = None,
    label: str | None = None,
    reason_required: bool = False,
) -> SavedVersion:
    """Store a new version of a locked match's result: the one way every source writes one.

    ``based_on`` names the version in force the user saw (a number, or ``None`` for none); a
    save based on another is refused with :class:`StaleResult`, except a re-post of the very
    save that made the version in force (back button, double click), which stores nothing.
    A version from a source that does not speak for the organizer (a verified record) comes into
    force only over no result or the same result; otherwise it waits for a decision.
    """
    batch = _batch.get()
    if batch is not None and not batch.knows(match):
        batch.preload([match])
    current = batch.current(match) if batch is not None else in_force(match)
    author = _signed_in(user)
    if based_on is not UNCHECKED:
        seen = _based_on_number(based_on)
        current_number = current.number if current else None
        if seen != current_number:
            # the same post again (back button, double click): it made the version in force
            if (
                current is not None
                and current.sheet == sheet
                and current.source == str(source)
                and current.author_id == (author.pk if author else None)
                and (current.based_on.number if current.based_on else None) == seen
            ):
                return SavedVersion(current, False)
            raise StaleResult(current)
        if current is not None and current.sheet == sheet:
            return SavedVersion(current, False)
    if sheet is None and (match.status != Match.Status.DONE or match.outcome == Outcome.BYE):
        raise ResultError(_("This match has no result to delete."))
    if reason_required and not reason and current is not None and not current.is_removal:
        if sheet is None:
            raise ResultError(_("Say why the result is deleted."))
        raise ResultError(_("Say why the result in force is corrected."))
    if batch is not None:
        last = batch.last_number(match)
    else:
        last = ResultVersion.objects.filter(match=match).aggregate(n=Max("number"))["n"] or 0
    version = ResultVersion(
        match=match,
        number=last + 1,
        source=str(source),
        author=author,
        based_on=current,
        sheet=sheet,
        submission=submission,
        reason=reason or "",
    )
    _place(
        match,
        version,
        current,
        user=user,
        label=label,
        action=_action_for(source, sheet),
        same_action="result.verified",
    )
    if batch is not None:
        batch.remember(version)
    return SavedVersion(version, True)


def _place(
    match: Match,
    version: ResultVersion,
    current: ResultVersion | None,
    *,
    user: Actor,
    label: str | None,
    action: str,
    same_action: str,
    **extra: Any,  # more detail for the change log (``countersigned``), as _log takes it
) -> None:
    """Precedence, for a new version and for a players' sheet both sides signed alike.

    A source that speaks for the organizer comes into force; any other comes into force over no
    result, a deletion, or the same result; otherwise it waits for a decision (a record or a
    players' sheet never silently replaces another result)."""
    if speaks_for_organizer(version.source) or current is None or current.is_removal:
        _put_in_force(match, version, current, user=user, action=action, label=label)
    elif same_result(current.sheet, version.sheet):
        # It says what the result in force says: it comes into force (the public page shows
        # its replay), confirmed if that result was, so a later record cannot push it aside.
        if current.is_confirmed:
            version.decided_at = timezone.now()
            version.reason = _("Same result as version %(n)d.") % {"n": current.number}
        _put_in_force(match, version, current, user=user, action=same_action, label=label)
    else:
        # the two disagree: the organizer (or referee) decides
        version.status = ResultVersion.Status.AWAITING
        batch = _batch.get()
        if batch is not None and version.pk is None:
            batch.defer_version(version)
        else:
            version.save()
        _log(
            match,
            "result.awaiting",
            version,
            user=user,
            label=label,
            in_force=current.number,
            **extra,
        )


def _action_for(source: str, sheet: Sheet | None) -> str:
    if sheet is None:
        return "result.deleted"
    if source == ResultSource.BYE:
        return "result.bye"
    if source == ResultSource.IMPORT:
        return "result.imported"
    if not speaks_for_organizer(source):
        return "result.verified"
    return "result.entered"


def save_result(
    match: Match,
    deals: object,
    *,
    outcome: str = Outcome.COMPLETED,
    offender: Line | int | None = None,
    user: Actor = None,
    time_expired: bool = False,
    based_on: BasedOn | Unchecked = UNCHECKED,
    reason: str = "",
    source: str | None = None,
    reason_required: bool = False,
) -> SavedVersion:
    """Check a result entered by hand, deal by deal, and store it as a new version.

    ``deals``: ``[{"points": [home, away], "breakdown": [{...}, {...}], "tiebreak": bool,
    "penalty": bool, "last_capture": 0|1}]``; ``penalty`` marks the interrupted deal of a timeout
    or abandon (points after the penalty of docs/match-record.md); ``last_capture`` only for a
    level third tie-break deal. ``time_expired`` ends a time-limited match with the side ahead.
    ``source`` defaults to the desk (a forfeit to ``forfeit``); ``reason_required`` refuses a
    correction without a ``reason``. Refusals raise ``ResultError`` (a stale ``based_on``:
    ``StaleResult``) and save nothing.
    """
    try:
        outcome = Outcome(outcome)
    except ValueError as error:
        raise ResultError(_("Unknown outcome.")) from error
    if source is None:
        source = ResultSource.FORFEIT if outcome == Outcome.FORFEIT else ResultSource.DESK
    parsed = parse_deals(deals)
    with transaction.atomic():
        locked = _lock(match)
        _check_lines(locked)
        if outcome == Outcome.BYE:
            raise ResultError(_("A bye has no result to enter."))
        offender_side = _offender_side(locked, offender)
        if outcome in OFFENCE_OUTCOMES and offender_side is None:
            raise ResultError(_("Say which line timed out, abandoned or forfeited."))
        if outcome == Outcome.COMPLETED and offender_side is not None:
            raise ResultError(_("A completed match has no offending line."))
        try:
            decision = decide(
                locked,
                parsed,
                outcome=outcome,
                offender_side=offender_side,
                time_expired=time_expired,
            )
            dropped = 0
        except ResultError as refusal:
            kept = _without_carried_tail(locked, parsed, refusal)
            if kept is None:
                raise
            dropped = len(parsed) - len(kept)
            decision = decide(
                locked,
                kept,
                outcome=outcome,
                offender_side=offender_side,
                time_expired=time_expired,
            )
        saved = _save_version(
            locked,
            sheet=sheet_of(decision, time_expired=time_expired),
            source=source,
            user=user,
            based_on=based_on,
            reason=reason,
            reason_required=reason_required,
        )
    _copy_state(locked, match)
    saved.dropped = dropped
    return saved


def _same_deal(a: Deal, b: Deal) -> bool:
    def cells(breakdown: Breakdown) -> Breakdown:
        return {key: value for key, value in breakdown.items() if value}

    return (
        tuple(a.points) == tuple(b.points)
        and all(cells(a.breakdown[side]) == cells(b.breakdown[side]) for side in (0, 1))
        and a.is_tiebreak == b.is_tiebreak
        and a.is_penalty == b.is_penalty
    )


def _without_carried_tail(
    match: Match, deals: list[Deal], refusal: ResultError
) -> list[Deal] | None:
    """A correction is a whole new sheet that starts from the deals of the version in force.
    When the corrected deals end the match earlier, the deals after its end that are still the
    version's own (same place, same points) were carried over from it, not typed: they are
    dropped (the deals before the end are returned). ``None`` when the refusal is another one,
    or a deal after the end was typed anew (then it stands, as for a first entry)."""
    cause = refusal.__cause__
    if not isinstance(cause, match_end.SheetRefused) or cause.problem.code != "over_before":
        return None
    end = dict(cause.problem.params).get("n")
    if not isinstance(end, int) or not 0 < end < len(deals):
        return None
    current = in_force(match)
    earlier = deals_of(current.sheet if current is not None else None)
    tail = deals[end:]
    if len(earlier) < len(deals) or not all(
        _same_deal(deal, earlier[end + index]) for index, deal in enumerate(tail)
    ):
        return None
    return deals[:end]


def save_bye(match: Match, *, user: Actor = None) -> SavedVersion:
    """Score a bye (a line without opponent in a Danish, Swiss or Mitchell round, or a late
    entry's missed round) as a version from the ``bye`` source, projected like any result."""
    with transaction.atomic():
        locked = _lock(match)
        if locked.home_id is None or locked.away_id is not None:
            raise ResultError(_("A bye is one line without an opponent."))
        sheet = bye_sheet(won=bye_score(locked.round.stage)[2])
        saved = _save_version(locked, sheet=sheet, source=ResultSource.BYE, user=user)
    _copy_state(locked, match)
    return saved


def import_result(
    match: Match,
    deals: Sequence[Any],
    *,
    totals: object,
    winner_side: int | None,
    outcome: str,
    offender_side: int | None = None,
    locked: bool = False,
) -> SavedVersion:
    """Store a result carried over from a tournament export as a version of source ``import``,
    which speaks for the organizer: the export is the federation's own record of the result.

    ``deals`` as for :func:`save_result`, each with its ``number`` as exported. The match is
    not judged again: it was judged where it was entered, and the export does not keep all a
    fresh judgement needs (the last capture of a level third tie-break deal, a time limit that
    ran out). The shape is checked (each deal as at the desk, a valid outcome, winner and
    offending line, deals that add up to the totals); margin, VP and MP are worked out by the
    projection, as for any source. Announced like any result, unless written in a batch that
    announces nothing, as the import writes its results (see :func:`written_together`).
    ``locked``: as for :func:`apply_verified_result`, the caller's transaction holds the match
    row lock, taken with :func:`lock_matches`.
    """
    try:
        outcome = Outcome(outcome)
    except ValueError as error:
        raise ResultError(_("Unknown outcome.")) from error
    if outcome not in PLAYED_OUTCOMES and outcome != Outcome.FORFEIT:
        raise ResultError(_("Unknown outcome."))
    parsed = parse_deals(deals)
    numbers = [raw.get("number", index) for index, raw in enumerate(deals)]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers) or (
        numbers != sorted(set(numbers))
    ):
        raise ResultError(_("The deals must be numbered in increasing order."))
    if numbers and numbers[-1] > MAX_DEAL_NUMBER:
        raise ResultError(_("A deal's number is at most %(max)d.") % {"max": MAX_DEAL_NUMBER})
    for deal, number in zip(parsed, numbers, strict=True):
        deal.number = number
    if (
        not isinstance(totals, list | tuple)
        or len(totals) != 2
        or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in totals)
    ):
        raise ResultError(_("The totals must be two whole numbers."))
    totals = (totals[0], totals[1])
    if winner_side not in (0, 1, None):
        raise ResultError(_("The result names no valid winner."))
    if outcome in OFFENCE_OUTCOMES and offender_side not in (0, 1):
        raise ResultError(_("Say which line timed out, abandoned or forfeited."))
    if outcome == Outcome.COMPLETED and offender_side is not None:
        raise ResultError(_("A completed match has no offending line."))
    if winner_side is None and outcome != Outcome.COMPLETED:
        raise ResultError(_("A timeout or abandon always has a winner."))
    if outcome == Outcome.FORFEIT and parsed:
        raise ResultError(_("A forfeited match has no deals."))
    if outcome != Outcome.FORFEIT and totals != tuple(
        sum(deal.points[side] for deal in parsed) for side in (0, 1)
    ):
        raise ResultError(_("The deals do not add up to the totals."))
    decision = Decision(
        totals,
        winner_side,
        match_end.margin(totals, winner_side),
        outcome,
        offender_side if outcome in OFFENCE_OUTCOMES else None,
        parsed,
    )
    # locked: no savepoint of its own; a refusal undoes the caller's whole transaction
    with transaction.atomic(savepoint=not locked):
        held = match if locked else _lock(match)
        _check_lines(held)
        if winner_side is None and _is_knockout(held):
            raise ResultError(_("A knock-out match cannot end level."))
        saved = _save_version(held, sheet=sheet_of(decision), source=ResultSource.IMPORT, user=None)
    _copy_state(held, match)
    return saved


def enter_result(match: Match, deals: object, **kwargs: Any) -> Match:
    """:func:`save_result`, returning the match (its state copied from the stored one)."""
    save_result(match, deals, **kwargs)
    return match


def apply_verified_result(
    match: Match,
    verdict: object,
    *,
    user: Actor = None,
    source: str | None = None,
    submission: Any = None,
    locked: bool = False,
) -> SavedVersion:
    """Store an engine verdict (``scopa.verify_document`` output) as a version of the
    match's result, with the precedence of :func:`_save_version`.

    Side 0 is the match's home line, side 1 the away line. ``source`` (e.g. a record id) is kept
    in the change log; ``submission`` links the version to the record it comes from.
    ``locked``: the caller's transaction already holds the match row lock, taken with
    :func:`lock_matches` (a batch of records locks its matches in one query).
    """
    # locked: the caller's transaction holds the lock and undoes this result if it fails (a
    # savepoint of its own, or, in a batch, nothing written before the flush); an atomic block
    # without a savepoint here would doom the caller's whole transaction on a refusal
    with nullcontext() if locked else transaction.atomic():
        held = match if locked else _lock(match)
        _check_lines(held)
        decision = decision_from_verdict(held, verdict)
        saved = _save_version(
            held,
            sheet=sheet_of(decision),
            source=ResultSource.RECORD,
            user=user,
            submission=submission,
            label=source or "engine",
        )
    _copy_state(held, match)
    return saved


def delete_result(
    match: Match,
    *,
    user: Actor = None,
    reason: str = "",
    based_on: BasedOn | Unchecked = UNCHECKED,
    source: str = ResultSource.DESK,
    reason_required: bool = False,
) -> SavedVersion:
    """Remove a match's result (a version with no sheet comes into force); refuse if a later
    knock-out match already has its own result."""
    with transaction.atomic():
        locked = _lock(match)
        if locked.round.stage.status == Stage.Status.CLOSED:
            raise ResultError(
                _("Stage “%(stage)s” is closed: its results are final.")
                % {"stage": locked.round.stage.name}
            )
        saved = _save_version(
            locked,
            sheet=None,
            source=source,
            user=user,
            based_on=based_on,
            reason=reason,
            reason_required=reason_required,
        )
    _copy_state(locked, match)
    return saved


def _decidable(
    version_id: int, *, based_on: BasedOn | Unchecked, locked: Match | None = None
) -> tuple[Match, ResultVersion, ResultVersion | None]:
    """Lock the version's match and return (match, version, current); checks staleness.
    ``locked``: the version's match, already locked by the caller's open transaction
    (``held_lock``), which is not read and locked again."""
    if locked is None:
        match_id = ResultVersion.objects.filter(pk=version_id).values_list("match_id", flat=True)
        locked = _lock(Match(pk=match_id.get()))
    version = ResultVersion.objects.select_related("submission").get(pk=version_id)
    if version.match_id != locked.pk:
        raise ValueError(f"version {version_id} is not of match {locked.pk}")
    current = in_force(locked)
    if based_on is not UNCHECKED:
        seen = _based_on_number(based_on)
        if seen != (current.number if current else None):
            raise StaleResult(current)
    return locked, version, current


def check_based_on(locked_match: Match, based_on: BasedOn | Unchecked) -> None:
    """``StaleResult`` unless ``based_on`` names the version in force of the locked match (a
    decision that changes no version itself, e.g. rejecting both sheets of a table)."""
    if based_on is not UNCHECKED:
        current = in_force(locked_match)
        if _based_on_number(based_on) != (current.number if current else None):
            raise StaleResult(current)


def accept_version(
    version: ResultVersion,
    *,
    user: Actor = None,
    based_on: BasedOn | Unchecked = UNCHECKED,
    reason: str = "",
) -> SavedVersion:
    """The organizer's (or referee's) decision: this version becomes the result in force.

    For a version awaiting a decision, and also to bring back a rejected or superseded one.
    """
    with transaction.atomic():
        locked, version, current = _decidable(version.pk, based_on=based_on)
        _check_lines(locked)
        if version.status == ResultVersion.Status.IN_FORCE:
            return SavedVersion(version, False)
        if version.is_removal:
            raise ResultError(_("A deletion cannot be brought back; delete the result again."))
        version.decided_by = _signed_in(user)
        version.decided_at = timezone.now()
        if reason:
            version.reason = reason
        _put_in_force(locked, version, current, user=user, action="result.accepted")
    return SavedVersion(version, True)


def reject_version(
    version: ResultVersion,
    *,
    user: Actor = None,
    based_on: BasedOn | Unchecked = UNCHECKED,
    reason: str = "",
) -> SavedVersion:
    """The organizer's (or referee's) decision: a version awaiting one does not come into
    force; the result in force stays as it is."""
    with transaction.atomic():
        locked, version, _current = _decidable(version.pk, based_on=based_on)
        if version.status == ResultVersion.Status.REJECTED:
            return SavedVersion(version, False)
        if version.status != ResultVersion.Status.AWAITING:
            raise ResultError(_("Only a version awaiting a decision can be rejected."))
        version.status = ResultVersion.Status.REJECTED
        version.decided_by = _signed_in(user)
        version.decided_at = timezone.now()
        if reason:
            version.reason = reason
        version.save(update_fields=["status", "decided_by", "decided_at", "reason"])
        _log(locked, "result.rejected", version, user=user)
    return SavedVersion(version, True)
