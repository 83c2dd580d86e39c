"""A tournament's life after the draw: stage reopening, qualifier drift, withdrawals, status.

The desk calls these; each change is locked, recorded in the change log, and nothing that
depends on a stage (a seeded knock-out, its played matches) changes without the organizer
deciding it: reopening shows what depends on the stage, a correction that changes who
qualifies is reported as :class:`QualifierDrift` until the organizer re-seeds or keeps the
bracket.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.db import transaction
from django.utils.translation import gettext as _

from tournaments.algorithms import bracket
from tournaments.exceptions import ScheduleError, TournamentError
from tournaments.models import (
    Entry,
    Group,
    GroupMember,
    Line,
    Match,
    Outcome,
    Round,
    Stage,
    Tournament,
)
from tournaments.services import changelog, qualification
from tournaments.services.entries import withdrawn_line_ids

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- status


def derived_status(tournament) -> str:
    """Draft until a round exists, running then, finished once every stage is closed."""
    statuses = list(Stage.objects.filter(tournament=tournament).values_list("status", flat=True))
    if statuses and all(status == Stage.Status.CLOSED for status in statuses):
        return Tournament.Status.FINISHED
    if Round.objects.filter(stage__tournament=tournament).exists():
        return Tournament.Status.RUNNING
    return Tournament.Status.DRAFT


def sync_status(tournament) -> str:
    """Store the status the stages give (a no-op when it is already right)."""
    status = derived_status(tournament)
    if tournament.status != status:
        logger.info("tournament %s: status %s -> %s", tournament.pk, tournament.status, status)
        tournament.status = status
        # save(), not update(): a finished tournament is announced (webhooks watch the save)
        tournament.save(update_fields=["status", "updated_at"])
    return status


# --------------------------------------------------------------------------- dependents


def next_stage(stage) -> Stage | None:
    return (
        Stage.objects.filter(tournament_id=stage.tournament_id, order__gt=stage.order)
        .order_by("order")
        .first()
    )


@dataclass
class StageDependents:
    """What a stage's results feed: the next stage, its seeded and its played matches."""

    stage: Stage
    next_stage: Stage | None
    seeded: list[Match] = field(default_factory=list)
    played: list[Match] = field(default_factory=list)

    @property
    def has_any(self) -> bool:
        return bool(self.seeded or self.played)


def _played(queryset):
    return queryset.filter(status=Match.Status.DONE).exclude(outcome=Outcome.BYE)


def stage_dependents(stage) -> StageDependents:
    following = next_stage(stage)
    if following is None or stage.kind != Stage.Kind.ROUND_ROBIN:
        return StageDependents(stage, following)
    matches = Match.objects.filter(round__stage=following).select_related(
        "round", "home", "away", "winner"
    )
    seeded = list(matches.filter(round__number=1).order_by("bracket_position", "id"))
    played = list(_played(matches).order_by("round__number", "table_number", "id"))
    return StageDependents(stage, following, seeded, played)


# --------------------------------------------------------------------------- open and close


@transaction.atomic
def reopen_stage(stage, *, user=None):
    """Reopen a closed stage so its results can be corrected; nothing downstream changes."""
    stage = Stage.objects.select_for_update().get(pk=stage.pk)
    if stage.status != Stage.Status.CLOSED:
        raise ScheduleError(_("Stage “%(stage)s” is not closed.") % {"stage": stage.name})
    following = next_stage(stage)
    if following is not None and following.status == Stage.Status.CLOSED:
        raise ScheduleError(
            _("Reopen “%(next)s” first: it follows this stage and is closed.")
            % {"next": following.name}
        )
    stage.status = Stage.Status.RUNNING
    stage.save(update_fields=["status"])
    dependents = stage_dependents(stage)
    changelog.record(
        stage.tournament,
        "stage.reopened",
        user=user,
        stage=stage.pk,
        stage_name=stage.name,
        seeded=len(dependents.seeded),
        played=len(dependents.played),
    )
    sync_status(stage.tournament)
    return stage


# --------------------------------------------------------------------------- qualifier drift


@dataclass
class SlotChange:
    """One first-round knock-out match whose lines the current standings would change."""

    match: Match
    now: tuple[Line | None, Line | None]
    expected: tuple[Line | None, Line | None]
    played: bool


@dataclass
class QualifierDrift:
    """The groups' current standings seed a different bracket than the one that was drawn."""

    stage: Stage
    knockout: Stage
    expected_ids: list[int]
    changes: list[SlotChange]
    out: list[Line]
    into: list[Line]

    @property
    def reseedable(self) -> list[SlotChange]:
        return [change for change in self.changes if not change.played]


def _seeded_ids(first_round: list[Match]) -> list[int | None]:
    slots: list[int | None] = []
    for match in first_round:
        slots.extend([match.home_id, match.away_id if match.outcome != Outcome.BYE else None])
    return slots


def _latest_kept(stage) -> list[int] | None:
    entry = (
        stage.tournament.changes.filter(action="bracket.kept", detail__stage=stage.pk)
        .order_by("-created_at", "-id")
        .first()
    )
    return None if entry is None else list(entry.detail.get("expected", []))


def qualifier_drift(stage) -> QualifierDrift | None:
    """Compare the qualifiers the current standings give with the lines seeded downstream.

    ``None`` when they agree, when nothing was seeded, when a group is not complete enough to
    rank, or when the organizer already chose to keep the bracket for these same standings.
    """
    if stage.kind not in (Stage.Kind.ROUND_ROBIN, Stage.Kind.DUPLICATE):
        return None
    following = next_stage(stage)
    if following is None or following.kind != Stage.Kind.KNOCKOUT:
        return None
    first_round = list(
        Match.objects.filter(round__stage=following, round__number=1)
        .select_related("home", "away")
        .order_by("bracket_position", "id")
    )
    seeded = [line_id for line_id in _seeded_ids(first_round) if line_id is not None]
    n_groups = Group.objects.filter(stage=stage).count()
    if not first_round or not n_groups or len(seeded) % n_groups:
        return None
    try:
        if stage.kind == Stage.Kind.DUPLICATE:
            # the ranking against the field, each direction place by place
            expected_lines = qualification.duplicate_seeds(stage, len(seeded))
        else:
            expected_lines = qualification.crossed_seeds(stage, len(seeded) // n_groups)
    except TournamentError:
        return None
    expected_ids = [line.pk for line in expected_lines]
    slots = bracket.bracket_slots(expected_ids)
    if len(slots) != 2 * len(first_round):
        return None
    if _seeded_ids(first_round) == slots:
        return None
    if _latest_kept(stage) == expected_ids:
        return None
    lines = {line.pk: line for line in expected_lines}
    lines.update(Line.objects.in_bulk([line_id for line_id in seeded if line_id not in lines]))
    changes = []
    for index, match in enumerate(first_round):
        want = (slots[2 * index], slots[2 * index + 1])
        have = (match.home_id, match.away_id if match.outcome != Outcome.BYE else None)
        if want == have:
            continue
        played = match.status == Match.Status.DONE and match.outcome != Outcome.BYE
        changes.append(
            SlotChange(
                match=match,
                now=(match.home, match.away),
                expected=(lines.get(want[0]), lines.get(want[1]) if want[1] else None),
                played=played,
            )
        )
    return QualifierDrift(
        stage=stage,
        knockout=following,
        expected_ids=expected_ids,
        changes=changes,
        out=[lines[i] for i in seeded if i not in set(expected_ids)],
        into=[lines[i] for i in expected_ids if i not in set(seeded)],
    )


def drift_by_match(tournament) -> dict[int, QualifierDrift]:
    """Knock-out match id → the drift that marks it, for the desk's pages."""
    marked: dict[int, QualifierDrift] = {}
    for stage in Stage.objects.filter(tournament=tournament, kind=Stage.Kind.ROUND_ROBIN):
        drift = qualifier_drift(stage)
        if drift is not None:
            for change in drift.changes:
                marked[change.match.pk] = drift
    return marked


def _replace_in_next(match, old_id, new_id):
    """A bye's line already sits in the next round: move the new one there if unplayed."""
    if not match.next_match_id:
        return
    following = Match.objects.select_for_update().get(pk=match.next_match_id)
    if following.status == Match.Status.DONE and following.outcome != Outcome.BYE:
        raise ScheduleError(
            _("“%(match)s” already has a result: its lines stay as they are.")
            % {"match": following}
        )
    attribute = "home_id" if match.next_slot == Match.Slot.HOME else "away_id"
    if getattr(following, attribute) in (old_id, None):
        setattr(following, attribute, new_id)
        following.save(update_fields=[attribute.removesuffix("_id"), "updated_at"])


@transaction.atomic
def reseed_unplayed(stage, *, user=None) -> int:
    """Give the unplayed first-round knock-out matches the lines the current standings seed.

    Played matches keep their lines (their results stand); returns how many matches changed.
    """
    drift = qualifier_drift(stage)
    if drift is None:
        raise ScheduleError(_("The bracket already matches the current standings."))
    if drift.knockout.status == Stage.Status.CLOSED:
        raise ScheduleError(
            _("“%(stage)s” is closed: reopen it first.") % {"stage": drift.knockout.name}
        )
    changed = []
    for change in drift.reseedable:
        match = Match.objects.select_for_update().get(pk=change.match.pk)
        home = change.expected[0].pk if change.expected[0] else None
        away = change.expected[1].pk if change.expected[1] else None
        if match.outcome == Outcome.BYE:
            _replace_in_next(match, match.home_id, home)
            match.home_id = home
            match.winner_id = home
            match.save(update_fields=["home", "winner", "updated_at"])
        else:
            match.home_id, match.away_id = home, away
            match.save(update_fields=["home", "away", "updated_at"])
        changed.append(match.pk)
    changelog.record(
        stage.tournament,
        "bracket.reseeded",
        user=user,
        stage=stage.pk,
        knockout=drift.knockout.pk,
        matches=changed,
        kept_played=[c.match.pk for c in drift.changes if c.played],
        expected=drift.expected_ids,
    )
    return len(changed)


@transaction.atomic
def keep_bracket(stage, *, user=None):
    """Record the organizer's choice to keep the drawn bracket despite the new standings."""
    drift = qualifier_drift(stage)
    if drift is None:
        raise ScheduleError(_("The bracket already matches the current standings."))
    changelog.record(
        stage.tournament,
        "bracket.kept",
        user=user,
        stage=stage.pk,
        knockout=drift.knockout.pk,
        matches=[c.match.pk for c in drift.changes],
        expected=drift.expected_ids,
    )


# --------------------------------------------------------------------------- withdrawals


def _forfeit(match, line, user) -> bool:
    from tournaments.services import results

    try:
        results.enter_result(match, [], outcome=Outcome.FORFEIT, offender=line, user=user)
    except TournamentError as refusal:
        logger.warning("match %s: forfeit of line %s refused: %s", match.pk, line.pk, refusal)
        return False
    return True


def _drop_from_unplayed_groups(tournament, line) -> int:
    """A stage whose rounds are not drawn yet simply loses the line (positions renumbered)."""
    dropped = 0
    members = GroupMember.objects.filter(
        group__stage__tournament=tournament, line=line, group__stage__rounds__isnull=True
    ).select_related("group")
    for member in list(members):
        group = member.group
        member.delete()
        later = list(GroupMember.objects.filter(group=group).order_by("position"))
        for number, other in enumerate(later, start=1):
            if other.position != number:
                GroupMember.objects.filter(pk=other.pk).update(position=number)
        dropped += 1
    return dropped


def pending_matches_of(tournament, line):
    """The line's matches that still wait for a result and have both lines known."""
    from django.db.models import Q

    return (
        Match.objects.filter(round__stage__tournament=tournament)
        .filter(Q(home=line) | Q(away=line))
        .exclude(status=Match.Status.DONE)
        .exclude(round__stage__status=Stage.Status.CLOSED)
        .filter(home__isnull=False, away__isnull=False)
        .select_related("round__stage")
        .order_by("round__stage__order", "round__number", "table_number", "id")
    )


@dataclass
class Withdrawal:
    entry: Entry
    forfeits: list[Match]
    dropped_from_groups: int


def withdraw_line(tournament, line, *, user=None) -> Withdrawal:
    """Withdraw a line: out of every draw still to come, its remaining matches forfeited.

    Each forfeit goes through ``results.enter_result`` (VP as ``algorithms/vp.py`` scores a
    forfeit); a knock-out match whose opponent is not known yet is forfeited when it is
    (:func:`forfeit_withdrawn`).
    """
    with transaction.atomic():
        entry = Entry.objects.select_for_update().filter(tournament=tournament, line=line).first()
        if entry is None:
            raise TournamentError(_("This line is not registered in the tournament."))
        if entry.withdrawn:
            raise TournamentError(_("“%(line)s” is already withdrawn.") % {"line": line.name})
        entry.withdrawn = True
        entry.save(update_fields=["withdrawn"])
        dropped = _drop_from_unplayed_groups(tournament, line)
        changelog.record(tournament, "line.withdrawn", user=user, line=line.pk, line_name=line.name)
    forfeits = [m for m in pending_matches_of(tournament, line) if _forfeit(m, line, user)]
    return Withdrawal(entry, forfeits, dropped)


@transaction.atomic
def reinstate_line(tournament, line, *, user=None) -> Entry:
    """Undo a withdrawal for the draws still to come (forfeits already given stay)."""
    entry = Entry.objects.select_for_update().filter(tournament=tournament, line=line).first()
    if entry is None or not entry.withdrawn:
        raise TournamentError(_("“%(line)s” is not withdrawn.") % {"line": line.name})
    entry.withdrawn = False
    entry.save(update_fields=["withdrawn"])
    changelog.record(tournament, "line.reinstated", user=user, line=line.pk, line_name=line.name)
    return entry


def forfeit_withdrawn(match) -> None:
    """After a knock-out result moved lines on: a withdrawn line that now has an opponent
    forfeits that match (called on ``results_changed`` for a knock-out match)."""
    tournament = match.round.stage.tournament
    withdrawn = withdrawn_line_ids(tournament)
    if not withdrawn:
        return
    for dependent_id in (match.next_match_id, match.loser_next_match_id):
        if dependent_id is None:
            continue
        dependent = Match.objects.select_related("round__stage").filter(pk=dependent_id).first()
        if (
            dependent is None
            or dependent.status == Match.Status.DONE
            or not (dependent.home_id and dependent.away_id)
            or dependent.round.stage.status == Stage.Status.CLOSED
        ):
            continue
        offenders = [i for i in (dependent.home_id, dependent.away_id) if i in withdrawn]
        if len(offenders) == 1:
            _forfeit(dependent, Line.objects.get(pk=offenders[0]), None)
