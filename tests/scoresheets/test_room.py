"""The room view's one selector: each table's state from reports, result versions and status."""

from datetime import timedelta

import pytest
from django.utils import timezone

from scoresheets.models import TableReport
from scoresheets.room import Detail, RoomState, counts, referee_first, room_states
from tests.tournaments.conftest import RR, make_tournament
from tests.tournaments.helpers import deals
from tournaments.models import Match, ResultVersion
from tournaments.services import results, schedule

pytestmark = pytest.mark.django_db


@pytest.fixture
def rounds(db):
    """The first two rounds of a round robin of ten lines (five tables each)."""
    tournament = make_tournament(n_lines=10, stages=[RR])
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    return list(stage.rounds.order_by("number")[:2])


def _tables(round_):
    return list(Match.objects.filter(round=round_).order_by("table_number", "pk"))


def _report(match, state, *, side="home", minutes_ago=0, **fields):
    at = timezone.now() - timedelta(minutes=minutes_ago)
    report = TableReport.objects.create(match=match, side=side, state=state, **fields)
    TableReport.objects.filter(pk=report.pk).update(updated_at=at)
    return report


def test_each_table_says_where_its_result_stands(rounds):
    round_ = rounds[0]
    waiting, entering, awaiting, disputed, expired = _tables(round_)
    _report(entering, TableReport.State.DRAFT, side="away", minutes_ago=2)
    _report(
        awaiting,
        TableReport.State.AWAITING,
        submitted_at=timezone.now() - timedelta(minutes=15),  # the tournament allows 10
    )
    _report(disputed, TableReport.State.DISPUTED, answer_comment="Le scope della 3ª smazzata")
    _report(expired, TableReport.State.EXPIRED)
    _report(waiting, TableReport.State.SUPERSEDED)  # history: says nothing about the table

    states = {t.match_id: t for t in room_states(round_)}

    assert states[waiting.pk].state == RoomState.WAITING
    assert states[entering.pk].state == RoomState.ENTERING
    assert states[entering.pk].sides == ("away",) and states[entering.pk].since is not None
    assert states[awaiting.pk].state == RoomState.AWAITING and states[awaiting.pk].overdue
    assert states[disputed.pk].state == RoomState.DISPUTED
    assert states[disputed.pk].detail == Detail.DISPUTED
    assert states[disputed.pk].comment == "Le scope della 3ª smazzata"
    assert states[expired.pk].state == RoomState.DISPUTED
    assert states[expired.pk].detail == Detail.EXPIRED
    tally = dict(counts(list(states.values())))
    assert tally == {
        RoomState.WAITING: 1,
        RoomState.ENTERING: 1,
        RoomState.AWAITING: 1,
        RoomState.DISPUTED: 2,
        RoomState.IN_FORCE: 0,
    }
    ordered = referee_first(list(states.values()))
    assert [t.for_referee for t in ordered] == [True, True, False, False, False]


def test_a_result_in_force_stands_over_reports_and_a_rival_version_needs_the_referee(rounds):
    round_ = rounds[1]
    desk, players_own, rival, fresh, left = _tables(round_)
    # the desk's result is in force: a phone still typing does not change that
    results.save_result(desk, deals((4, 1), (4, 2), (3, 1)))
    _report(desk, TableReport.State.DRAFT)
    # the players' own sheet came into force but the other side has not answered yet
    version = results.save_result(
        players_own, deals((4, 2), (4, 2), (3, 2)), source="players"
    ).version
    assert version.status == ResultVersion.Status.IN_FORCE
    _report(players_own, TableReport.State.AWAITING, version=version)
    # a record that disagrees with the desk's result waits for a decision
    results.save_result(rival, deals((4, 1), (4, 0), (3, 1)))
    other = results.save_result(rival, deals((1, 4), (2, 4), (1, 3)), source="record").version
    assert other.status == ResultVersion.Status.AWAITING
    # a report awaiting an answer is history once the desk's result is in force
    results.save_result(left, deals((4, 3), (4, 3), (3, 3)))
    _report(left, TableReport.State.AWAITING, submitted_at=timezone.now())

    states = {t.match_id: t for t in room_states(round_)}

    assert states[desk.pk].state == RoomState.IN_FORCE
    assert states[players_own.pk].state == RoomState.AWAITING
    assert not states[players_own.pk].overdue
    assert states[rival.pk].state == RoomState.DISPUTED
    assert states[rival.pk].detail == Detail.DECISION
    assert states[fresh.pk].state == RoomState.WAITING
    assert states[left.pk].state == RoomState.IN_FORCE


def test_tables_without_two_lines_are_left_out(rounds):
    round_ = rounds[0]
    first = _tables(round_)[0]
    Match.objects.filter(pk=first.pk).update(away=None)
    assert first.pk not in {t.match_id for t in room_states(round_)}
