"""Standings: each tie-break deciding, and a fixed number of queries whatever the group size."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.tournaments.conftest import RR, make_tournament
from tournaments.models import Group, Match, Outcome
from tournaments.services import results, schedule, standings

from .helpers import deal, deals


def group_of(n, preset="scopa-tre-smazzate", tiebreaks=None):
    overrides = {"tiebreaks": tiebreaks} if tiebreaks is not None else {}
    tournament = make_tournament(preset, n_lines=n, stages=[RR], **overrides)
    stage = tournament.stages.get()
    (group,) = schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    lines = {m.position: m.line for m in group.members.all()}
    return tournament, group, lines


def play(group, a, b, score_a, score_b):
    """Enter a 3-deal result between lines a and b, whoever is home."""
    match = Match.objects.get(group=group, home__in=[a, b], away__in=[a, b])
    first, second = (score_a, score_b) if match.home_id == a.pk else (score_b, score_a)
    results.enter_result(match, [deal(first, second), deal(0, 0), deal(0, 0)])


def names(group):
    return [row.line.name for row in standings.group_standings(group)]


@pytest.mark.django_db
def test_vp_first():
    _t, group, ln = group_of(3)
    play(group, ln[1], ln[2], 6, 0)
    play(group, ln[1], ln[3], 0, 2)
    play(group, ln[2], ln[3], 3, 1)
    rows = standings.group_standings(group)
    assert [r.vp for r in rows] == [sorted(r.vp for r in rows)[::-1][i] for i in range(3)]
    assert rows[0].line == ln[1]  # 14 + 8 = 22 VP


@pytest.mark.django_db
def test_mp_decides():
    _t, group, ln = group_of(3, tiebreaks=["mp", "lots"])
    # each line wins once: VP 13+... choose margins so VP equal but MP differ
    play(group, ln[1], ln[2], 3, 0)  # 13-7, MP +3
    play(group, ln[2], ln[3], 3, 0)  # 13-7
    play(group, ln[3], ln[1], 3, 0)  # 13-7
    rows = standings.group_standings(group)
    assert len({r.vp for r in rows}) == 1 and len({r.mp for r in rows}) == 1
    assert rows[-1].tiebreak_values["lots"] is not None  # decided by lots, reproducibly
    assert names(group) == [r.line.name for r in rows]


@pytest.mark.django_db
def test_mp_decides_between_equal_vp():
    _t, group, ln = group_of(4, tiebreaks=["mp", "lots"])
    # 11-point table (3 deals): margin 6 and 7 both give 16-4
    play(group, ln[1], ln[3], 7, 0)  # 1: 16, MP +7
    play(group, ln[2], ln[4], 6, 0)  # 2: 16, MP +6
    play(group, ln[1], ln[2], 0, 0)
    play(group, ln[3], ln[4], 0, 0)
    play(group, ln[1], ln[4], 0, 0)
    play(group, ln[2], ln[3], 0, 0)
    rows = standings.group_standings(group)
    assert rows[0].vp == rows[1].vp == 36
    assert [rows[0].line, rows[1].line] == [ln[1], ln[2]]
    assert (rows[0].mp, rows[1].mp) == (7, 6)


@pytest.mark.django_db
@pytest.mark.parametrize("tiebreak", ["head_to_head", "points_scored", "matches_won", "strength"])
def test_each_tiebreak_can_decide(tiebreak):
    """Two lines equal on VP; only the named criterion separates them (lots would otherwise)."""
    _t, group, ln = group_of(4, tiebreaks=[tiebreak, "lots"])
    if tiebreak == "head_to_head":
        play(group, ln[1], ln[2], 1, 0)  # 1: 11, 2: 9
        play(group, ln[2], ln[3], 1, 0)  # 2: 11, 3: 9
        play(group, ln[1], ln[3], 0, 1)  # 1: 9, 3: 11
        play(group, ln[3], ln[4], 0, 5)  # 3: 5, 4: 15
        play(group, ln[1], ln[4], 0, 0)  # 1: 30
        play(group, ln[2], ln[4], 0, 0)  # 2: 30
        winner = ln[1]
    elif tiebreak == "points_scored":
        play(group, ln[1], ln[2], 5, 5)
        play(group, ln[1], ln[3], 0, 0)
        play(group, ln[2], ln[3], 1, 1)
        play(group, ln[1], ln[4], 0, 0)
        play(group, ln[2], ln[4], 0, 0)
        play(group, ln[3], ln[4], 4, 0)
        winner = ln[2]  # 6 points scored against 5
    elif tiebreak == "matches_won":
        play(group, ln[1], ln[3], 1, 0)  # 1: 11 (a win)
        play(group, ln[1], ln[4], 0, 1)  # 1: 9
        play(group, ln[1], ln[2], 0, 0)  # 1: 10 → 30
        play(group, ln[2], ln[3], 0, 0)  # 2: 10
        play(group, ln[2], ln[4], 0, 0)  # 2: 10 → 30, no win
        play(group, ln[3], ln[4], 0, 0)
        winner = ln[1]
    else:  # strength: both beat someone, the one who beat the stronger line goes first
        play(group, ln[1], ln[3], 1, 0)  # 1 beats 3
        play(group, ln[2], ln[4], 1, 0)  # 2 beats 4
        play(group, ln[1], ln[4], 0, 1)  # 4 beats 1
        play(group, ln[2], ln[3], 0, 1)  # 3 beats 2
        play(group, ln[1], ln[2], 0, 0)
        play(group, ln[3], ln[4], 4, 0)  # 3 gets more VP than 4
        winner = ln[1]
    rows = standings.group_standings(group)
    tied = [r for r in rows if r.line in (ln[1], ln[2])]
    assert tied[0].vp == tied[1].vp
    assert tied[0].line == winner
    assert tied[0].tiebreak_values[tiebreak] != tied[1].tiebreak_values[tiebreak]
    assert tied[0].tiebreak_values["lots"] is None  # lots never needed


@pytest.mark.django_db
def test_lots_are_reproducible_from_the_stored_seed():
    tournament, group, _ln = group_of(4, tiebreaks=["lots"])
    first = names(group)
    assert names(group) == first
    orders = set()
    for seed in range(8):
        tournament.lots_seed = seed
        tournament.save()
        orders.add(tuple(names(Group.objects.select_related("stage__tournament").get(pk=group.pk))))
    assert len(orders) > 1


@pytest.mark.django_db
def test_byes_and_timeouts_count_correctly():
    _t, group, ln = group_of(3)
    match = Match.objects.get(group=group, home__in=[ln[1], ln[2]], away__in=[ln[1], ln[2]])
    results.enter_result(
        match,
        [deal(0, 1, penalty=True)],
        outcome=Outcome.TIMEOUT,
        offender=match.home,
    )
    rows = {r.line.pk: r for r in standings.group_standings(group)}
    assert rows[match.away_id].vp == 14 and rows[match.away_id].mp == 4
    assert rows[match.home_id].vp == 0 and rows[match.home_id].mp == -14
    assert rows[ln[3].pk].played == 0  # a bye is not a match played


def _fill(group):
    for match in Match.objects.filter(group=group).exclude(outcome=Outcome.BYE):
        results.enter_result(match, deals(((match.pk % 4), 1), (1, 0), (2, 2)))


@pytest.mark.django_db
def test_fixed_number_of_queries_for_4_and_16_lines(django_assert_num_queries):
    """The table (with its grid) and the ranked rows alone, on the same two filled groups."""
    counts = []
    for n in (4, 16):
        _t, group, _ln = group_of(n)
        _fill(group)
        group = Group.objects.select_related("stage__tournament").get(pk=group.pk)
        with CaptureQueriesContext(connection) as queries:
            table = standings.group_table(group)
        assert len(table.rows) == n
        counts.append(len(queries))
        group = Group.objects.select_related("stage__tournament").get(pk=group.pk)
        with django_assert_num_queries(3):
            assert len(standings.group_standings(group)) == n
    assert counts[0] == counts[1] == 3


@pytest.mark.django_db
def test_stage_standings_query_count(django_assert_num_queries):
    tournament = make_tournament("scopa-tre-smazzate", n_lines=16, stages=[RR])
    stage = tournament.stages.get()
    groups = schedule.create_groups(stage, 4)
    schedule.generate_round_robin(stage)
    for group in groups:
        _fill(group)
    with django_assert_num_queries(4):
        tables = standings.stage_tables(stage)
    assert [len(t.rows) for t in tables] == [4, 4, 4, 4]
    assert all(t.grid for t in tables)
