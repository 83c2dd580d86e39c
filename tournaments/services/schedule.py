"""Groups, round-robin rounds and knock-out brackets, written from the pure algorithms.

Like Tabbycat's ``draw/manager.py``: read the lines, call ``tournaments.algorithms`` and save
what they return. Regenerating deletes the stage's matches and results: the admin asks for
confirmation first, and every generation is recorded in the change log.
"""

from __future__ import annotations

import logging
import string

from django.db import models, transaction
from django.db.models import F
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

from tournaments.algorithms import bracket, round_robin
from tournaments.exceptions import ScheduleError
from tournaments.models import (
    Entry,
    Group,
    GroupMember,
    Line,
    Match,
    MatchResult,
    Outcome,
    Round,
    Stage,
)
from tournaments.services import changelog, lifecycle, qualification

logger = logging.getLogger(__name__)


def seeded_lines(tournament) -> list[Line]:
    """The tournament's active lines by seed (unseeded last, in registration order)."""
    entries = (
        Entry.objects.filter(tournament=tournament, withdrawn=False)
        .select_related("line")
        .order_by(F("seed").asc(nulls_last=True), "id")
    )
    return [entry.line for entry in entries]


def _group_name(index: int) -> str:
    letters = string.ascii_uppercase
    if index < len(letters):
        return letters[index]
    return letters[index // len(letters) - 1] + letters[index % len(letters)]


def _stage_has_results(stage) -> bool:
    return (
        Match.objects.filter(round__stage=stage, status=Match.Status.DONE)
        .exclude(outcome=Outcome.BYE)
        .exists()
    )


def _refuse_losing_records(stage):
    """Regenerating deletes the stage's matches. Rows another app keeps as evidence of a match
    protect it (a foreign key with ``on_delete=PROTECT``: the submitted match records), so a
    stage with such rows cannot be regenerated."""
    for relation in Match._meta.related_objects:
        if relation.on_delete is not models.PROTECT:
            continue
        kept = relation.field.model._default_manager.filter(
            **{f"{relation.field.name}__round__stage": stage}
        )
        if kept.exists():
            raise ScheduleError(
                _(
                    "Stage “%(stage)s” cannot be regenerated: match records were submitted for "
                    "its matches, and regenerating would throw them away."
                )
                % {"stage": stage.name}
            )


def _clear_stage(stage, *, replace, what):
    if not Match.objects.filter(round__stage=stage).exists() and not stage.groups.exists():
        return False
    if not replace:
        raise ScheduleError(
            _("Stage “%(stage)s” already has %(what)s: confirm to regenerate them.")
            % {"stage": stage.name, "what": what}
        )
    _refuse_losing_records(stage)
    Match.objects.filter(round__stage=stage).update(next_match=None, loser_next_match=None)
    Match.objects.filter(round__stage=stage).delete()
    Round.objects.filter(stage=stage).delete()
    return True


@transaction.atomic
def create_groups(stage, n_groups, *, lines=None, user=None, replace=False):
    """Distribute the lines over ``n_groups`` groups in snake order by seed.

    Positions inside a group follow the seed order (position 1 = best seed), which fixes the
    Berger table numbers.
    """
    if stage.kind != Stage.Kind.ROUND_ROBIN:
        raise ScheduleError(_("Groups belong to a round-robin stage."))
    lines = list(lines) if lines is not None else seeded_lines(stage.tournament)
    if n_groups < 1:
        raise ScheduleError(_("A stage needs at least one group."))
    if len(lines) < 2 * n_groups:
        raise ScheduleError(
            _("%(lines)d lines cannot fill %(groups)d groups of at least two.")
            % {"lines": len(lines), "groups": n_groups}
        )
    replaced = _clear_stage(stage, replace=replace, what=pgettext("round-robin group", "groups"))
    stage.groups.all().delete()
    groups = []
    for index, members in enumerate(round_robin.snake_groups(lines, n_groups)):
        group = Group.objects.create(stage=stage, name=_group_name(index), order=index)
        GroupMember.objects.bulk_create(
            GroupMember(group=group, line=line, position=position)
            for position, line in enumerate(members, start=1)
        )
        groups.append(group)
    changelog.record(
        stage.tournament,
        "groups.created",
        user=user,
        stage=stage.pk,
        groups=n_groups,
        lines=len(lines),
        replaced=replaced,
    )
    return groups


@transaction.atomic
def generate_round_robin(stage, *, user=None, replace=False):
    """Create the rounds and matches of every group of a round-robin stage (FIDE Berger).

    Rounds are shared by the stage's groups; a bye is a Match row with ``outcome`` bye and no
    opponent, already done, without a table. Tables are numbered through the stage per round,
    group after group, byes left out.
    """
    if stage.kind != Stage.Kind.ROUND_ROBIN:
        raise ScheduleError(_("Round-robin rounds belong to a round-robin stage."))
    groups = list(stage.groups.prefetch_related("members").order_by("order", "name"))
    if not groups:
        raise ScheduleError(_("Create the groups of this stage first."))
    if Match.objects.filter(round__stage=stage).exists():
        if not replace:
            raise ScheduleError(
                _("Stage “%(stage)s” already has rounds: confirm to regenerate them.")
                % {"stage": stage.name}
            )
        _refuse_losing_records(stage)
        Match.objects.filter(round__stage=stage).delete()
        Round.objects.filter(stage=stage).delete()
    schedules = []
    for group in groups:
        members = sorted(group.members.all(), key=lambda m: m.position)
        if len(members) < 2:
            raise ScheduleError(
                _("Group %(group)s has fewer than two lines.") % {"group": group.name}
            )
        by_position = {m.position: m.line_id for m in members}
        if sorted(by_position) != list(range(1, len(members) + 1)):
            raise ScheduleError(
                _("Group %(group)s: positions must run from 1 to %(n)d.")
                % {"group": group.name, "n": len(members)}
            )
        rounds = round_robin.berger_rounds(len(members), double=stage.double_round_robin)
        schedules.append((group, by_position, rounds))
    n_rounds = max(len(rounds) for _group, _pos, rounds in schedules)
    round_rows = Round.objects.bulk_create(
        Round(stage=stage, number=number, name="") for number in range(1, n_rounds + 1)
    )
    if round_rows[0].pk is None:  # backends that do not return ids from bulk_create
        round_rows = list(Round.objects.filter(stage=stage).order_by("number"))
    matches = []
    for round_index, round_row in enumerate(round_rows):
        table = 0
        for group, by_position, rounds in schedules:
            if round_index >= len(rounds):
                continue
            for home, away in rounds[round_index]:
                if away is None:
                    matches.append(
                        Match(
                            round=round_row,
                            group=group,
                            home_id=by_position[home],
                            away=None,
                            outcome=Outcome.BYE,
                            status=Match.Status.DONE,
                        )
                    )
                    continue
                table += 1
                matches.append(
                    Match(
                        round=round_row,
                        group=group,
                        home_id=by_position[home],
                        away_id=by_position[away],
                        table_number=table,
                    )
                )
    Match.objects.bulk_create(matches, batch_size=500)
    if stage.status == Stage.Status.PENDING:
        stage.status = Stage.Status.RUNNING
        stage.save(update_fields=["status"])
    changelog.record(
        stage.tournament,
        "rounds.generated",
        user=user,
        stage=stage.pk,
        rounds=n_rounds,
        matches=len(matches),
    )
    logger.info("stage %s: %d rounds, %d matches", stage.pk, n_rounds, len(matches))
    lifecycle.sync_status(stage.tournament)
    return round_rows


def _round_name(round_index: int, rounds: int) -> str:
    remaining = rounds - round_index
    if remaining == 1:
        return _("Final")
    if remaining == 2:
        return _("Semi-finals")
    if remaining == 3:
        return _("Quarter-finals")
    return _("Round of %(n)d") % {"n": 2**remaining}


@transaction.atomic
def generate_knockout(stage, seeds, *, user=None, replace=False):
    """Create a knock-out bracket for ``seeds`` (lines, seed 1 first).

    Top seeds meet last and get the byes; a bye is a done match with outcome bye whose line is
    already placed in the next round. Winners (and, with a third-place match, semi-final losers)
    are wired through ``next_match``/``loser_next_match``.
    """
    if stage.kind != Stage.Kind.KNOCKOUT:
        raise ScheduleError(_("A bracket belongs to a knock-out stage."))
    seeds = list(seeds)
    if len(seeds) < 2:
        raise ScheduleError(_("A knock-out needs at least two lines."))
    if len({getattr(line, "pk", line) for line in seeds}) != len(seeds):
        raise ScheduleError(_("A line appears twice among the seeds."))
    replaced = _clear_stage(stage, replace=replace, what=_("a bracket"))
    seed_ids = [getattr(line, "pk", line) for line in seeds]
    size = bracket.bracket_size(len(seed_ids))
    rounds = bracket.n_rounds(size)
    round_rows = []
    for index in range(rounds):
        round_rows.append(
            Round.objects.create(stage=stage, number=index + 1, name=_round_name(index, rounds))
        )
    # create from the final backwards so next_match ids exist
    by_position: dict[tuple[int, int], Match] = {}
    third_place = None
    for index in reversed(range(rounds)):
        n_matches = size >> (index + 1)
        for position in range(n_matches):
            slot = bracket.winner_slot(index, position, size)
            next_match = by_position[slot.round, slot.match] if slot else None
            match = Match(
                round=round_rows[index],
                bracket_position=position,
                table_number=position + 1,
                next_match=next_match,
                next_slot=str(slot.side) if slot else "",
            )
            # With three lines one semi-final is a bye: its "loser" never comes, and the other
            # semi-final's loser is third anyway.
            if stage.third_place_match and len(seed_ids) >= 4:
                loser = bracket.third_place_slot(index, position, size)
                if loser is not None:
                    if third_place is None:
                        third_place = Match.objects.create(
                            round=round_rows[-1],
                            bracket_position=1,
                            table_number=2,
                            is_third_place=True,
                        )
                    match.loser_next_match = third_place
                    match.loser_next_slot = str(loser.side)
            match.save()
            by_position[index, position] = match
    slots = bracket.bracket_slots(seed_ids)
    byes = []
    table = 0
    for position in range(size // 2):
        match = by_position[0, position]
        home, away = slots[2 * position], slots[2 * position + 1]
        match.home_id, match.away_id = home, away
        if away is None:
            match.outcome = Outcome.BYE
            match.status = Match.Status.DONE
            match.winner_id = home
            match.table_number = None
            byes.append(match)
        else:
            table += 1
            match.table_number = table
        match.save()
    for match in byes:
        if match.next_match_id and match.bracket_position is not None:
            target = by_position[1, match.bracket_position // 2]
            setattr(target, "home_id" if match.next_slot == "home" else "away_id", match.home_id)
            target.save(update_fields=["home", "away"])
    if stage.status == Stage.Status.PENDING:
        stage.status = Stage.Status.RUNNING
        stage.save(update_fields=["status"])
    changelog.record(
        stage.tournament,
        "bracket.generated",
        user=user,
        stage=stage.pk,
        lines=len(seed_ids),
        size=size,
        byes=len(byes),
        third_place=bool(third_place),
        replaced=replaced,
    )
    lifecycle.sync_status(stage.tournament)
    return round_rows


def rating_seeds(lines, ratings):
    """Lines ordered by rating, best first (lines without a rating last, by entry order)."""
    lines = list(lines)
    order = {line.pk: index for index, line in enumerate(lines)}
    return sorted(
        lines,
        key=lambda line: (
            ratings.get(line.pk) is None,
            -(ratings.get(line.pk) or 0),
            order[line.pk],
        ),
    )


def unfinished_matches(stage):
    return Match.objects.filter(round__stage=stage).exclude(status=Match.Status.DONE)


@transaction.atomic
def close_stage(stage, *, user=None, per_group=2, third_place=None):
    """Close a finished stage and, if the next one is a knock-out, seed its bracket."""
    stage = Stage.objects.select_for_update().get(pk=stage.pk)
    pending = unfinished_matches(stage).count()
    if pending:
        raise ScheduleError(
            ngettext(
                "%(n)d match of “%(stage)s” has no result yet.",
                "%(n)d matches of “%(stage)s” have no result yet.",
                pending,
            )
            % {"n": pending, "stage": stage.name}
        )
    if not Match.objects.filter(round__stage=stage).exists():
        raise ScheduleError(_("Stage “%(stage)s” has no matches.") % {"stage": stage.name})
    next_stage = (
        Stage.objects.filter(tournament=stage.tournament, order__gt=stage.order)
        .order_by("order")
        .first()
    )
    seeds = None
    if next_stage is not None and next_stage.kind == Stage.Kind.KNOCKOUT:
        if Match.objects.filter(round__stage=next_stage).exists():
            # Closed again after a reopening: the drawn bracket stays; if the standings now
            # qualify other lines, lifecycle.qualifier_drift marks it and the desk asks.
            seeds = None
        else:
            if stage.is_paired_by_round:
                from tournaments.services.pairing import open_seeds

                count = stage.advance_count or per_group
                seed_ids = open_seeds(stage, count)
                by_id = Line.objects.in_bulk(seed_ids)
                seeds = [by_id[line_id] for line_id in seed_ids]
            elif stage.kind == Stage.Kind.DUPLICATE:
                seeds = qualification.duplicate_seeds(stage, stage.advance_count or per_group)
            elif stage.kind != Stage.Kind.ROUND_ROBIN:
                raise ScheduleError(_("Only round-robin groups seed a following bracket."))
            else:
                seeds = qualification.crossed_seeds(stage, per_group)
            if third_place is not None:
                next_stage.third_place_match = third_place
                next_stage.save(update_fields=["third_place_match"])
            generate_knockout(next_stage, seeds, user=user)
    stage.status = Stage.Status.CLOSED
    stage.save(update_fields=["status"])
    changelog.record(
        stage.tournament,
        "stage.closed",
        user=user,
        stage=stage.pk,
        next_stage=next_stage.pk if next_stage else None,
        seeds=[line.pk for line in seeds] if seeds else [],
        per_group=per_group if seeds else None,
    )
    lifecycle.sync_status(stage.tournament)
    return next_stage


def stage_has_results(stage) -> bool:
    """Whether regenerating would throw away entered results."""
    return (
        _stage_has_results(stage) or MatchResult.objects.filter(match__round__stage=stage).exists()
    )


def start_round(round_, *, user=None) -> bool:
    """Start ``round_``'s clock now, once: the projector and the room count from it.

    Whether this call started it (``False`` when it had already started).
    """
    from django.utils import timezone

    with transaction.atomic():
        started = Round.objects.filter(pk=round_.pk, starts_at__isnull=True).update(
            starts_at=timezone.now()
        )
        if started:
            round_.refresh_from_db(fields=["starts_at"])
            changelog.record(round_.stage.tournament, "round.started", user=user, round=round_.pk)
    return bool(started)
