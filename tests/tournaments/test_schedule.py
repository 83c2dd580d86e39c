"""Groups, Berger rounds and knock-out brackets as stored rows."""

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase as HypothesisTestCase

from tests.tournaments.conftest import KO, RR, make_tournament
from tournaments.algorithms import round_robin
from tournaments.exceptions import ScheduleError
from tournaments.models import ChangeLog, Match, Outcome, Stage
from tournaments.services import results, schedule
from tournaments.services.entries import LineRow, add_lines

from .helpers import deals


def stages(tournament):
    return list(tournament.stages.order_by("order"))


@pytest.mark.django_db
def test_snake_groups_by_seed():
    tournament = make_tournament(n_lines=12, stages=[RR])
    (stage,) = stages(tournament)
    groups = schedule.create_groups(stage, 3)
    seeds = {e.line_id: e.seed for e in tournament.entries.all()}
    got = [[seeds[m.line_id] for m in g.members.order_by("position")] for g in groups]
    assert got == [[1, 6, 7, 12], [2, 5, 8, 11], [3, 4, 9, 10]]
    assert [g.name for g in groups] == ["A", "B", "C"]


@pytest.mark.django_db
@pytest.mark.parametrize("n,double", [(3, False), (4, False), (5, True), (6, False), (9, False)])
def test_berger_schedule_stored_as_the_tables_give_it(n, double):
    tournament = make_tournament(n_lines=n, stages=[RR | {"double_round_robin": double}])
    (stage,) = stages(tournament)
    (group,) = schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    line_at = {m.position: m.line_id for m in group.members.all()}
    expected = round_robin.berger_rounds(n, double=double)
    rounds = list(stage.rounds.order_by("number"))
    assert len(rounds) == len(expected)
    for round_, pairings in zip(rounds, expected, strict=True):
        stored = list(round_.matches.order_by("id"))
        want = [(line_at[h], line_at[a] if a else None) for h, a in pairings]
        assert sorted((m.home_id, m.away_id or 0) for m in stored) == sorted(
            (h, a or 0) for h, a in want
        )
        byes = [m for m in stored if m.away_id is None]
        assert all(m.outcome == Outcome.BYE and m.status == Match.Status.DONE for m in byes)
        assert all(m.table_number is None for m in byes)
        tables = sorted(m.table_number for m in stored if m.away_id is not None)
        assert tables == list(range(1, len(tables) + 1))
    pairs = Counter(
        frozenset((m.home_id, m.away_id))
        for m in Match.objects.filter(group=group, away__isnull=False)
    )
    assert set(pairs.values()) == {2 if double else 1}
    assert len(pairs) == n * (n - 1) // 2


@pytest.mark.django_db
def test_regenerating_needs_confirmation_and_replaces():
    tournament = make_tournament(n_lines=4, stages=[RR])
    (stage,) = stages(tournament)
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    with pytest.raises(ScheduleError):
        schedule.generate_round_robin(stage)
    match = Match.objects.filter(round__stage=stage).first()
    results.enter_result(match, deals((4, 1), (4, 1), (4, 1)))
    schedule.generate_round_robin(stage, replace=True)
    assert Match.objects.filter(round__stage=stage, status=Match.Status.DONE).count() == 0
    assert Match.objects.filter(round__stage=stage).count() == 6
    assert ChangeLog.objects.filter(action="rounds.generated").count() == 2


def _knockout(n, third_place=True):
    tournament = make_tournament(n_lines=n, stages=[KO | {"third_place_match": third_place}])
    (stage,) = stages(tournament)
    lines = [e.line for e in tournament.entries.order_by("seed")]
    schedule.generate_knockout(stage, lines)
    return stage, lines


@pytest.mark.django_db
@pytest.mark.parametrize("n", range(2, 65))
def test_knockout_brackets_with_byes_and_advancement(n):
    stage, lines = _knockout(n)
    size = 1 << (n - 1).bit_length()
    rounds = list(stage.rounds.order_by("number"))
    assert len(rounds) == size.bit_length() - 1
    first = list(rounds[0].matches.order_by("bracket_position"))
    assert len(first) == size // 2
    seed_of = {line.pk: seed for seed, line in enumerate(lines, start=1)}
    byes = [m for m in first if m.outcome == Outcome.BYE]
    assert len(byes) == size - n
    # byes go to the top seeds, and their winners are already in the next round
    assert sorted(seed_of[m.home_id] for m in byes) == list(range(1, size - n + 1))
    for m in byes:
        assert m.winner_id == m.home_id and m.status == Match.Status.DONE
        nxt = m.next_match
        assert (nxt.home_id if m.next_slot == "home" else nxt.away_id) == m.home_id
    # top seeds meet as late as possible: seeds 1 and 2 in opposite halves
    half = size // 4
    if n >= 2 and size >= 4:
        pos = {seed_of[m.home_id]: m.bracket_position for m in first}
        assert (pos[1] < half) != (pos[2] < half)
    for m in first:
        if m.away_id:
            assert seed_of[m.home_id] + seed_of[m.away_id] == size + 1
    # every non-final match feeds exactly one slot of the next round
    for round_ in rounds[:-1]:
        for m in round_.matches.filter(is_third_place=False):
            assert m.next_match is not None and m.next_slot in ("home", "away")
    final_round = rounds[-1].matches
    assert final_round.filter(is_third_place=False).count() == 1
    third = final_round.filter(is_third_place=True)
    # three lines: one semi-final is a bye, so no third-place match (see the 3-line test)
    assert third.count() == (1 if n >= 4 else 0)
    if n >= 4:
        semis = rounds[-2].matches.all()
        assert {m.loser_next_match_id for m in semis} == {third.get().pk}
        assert {m.loser_next_slot for m in semis} == {"home", "away"}


@pytest.mark.django_db
def test_knockout_played_through_moves_winners_and_semi_final_losers():
    stage, lines = _knockout(8)
    for round_ in stage.rounds.order_by("number"):
        for m in round_.matches.order_by("is_third_place", "bracket_position"):
            m.refresh_from_db()
            results.enter_result(m, deals((4, 1), (4, 1), (4, 1)))  # home always wins
    final = Match.objects.get(round__stage=stage, is_third_place=False, next_match__isnull=True)
    third = Match.objects.get(round__stage=stage, is_third_place=True)
    seed = {line.pk: i for i, line in enumerate(lines, start=1)}
    assert seed[final.winner_id] == 1 and seed[final.away_id] == 2
    assert {seed[third.home_id], seed[third.away_id]} == {3, 4}
    assert third.status == Match.Status.DONE


@pytest.mark.django_db
def test_three_line_knockout_has_no_third_place_match_and_can_be_closed():
    """Seed 1 has a bye in the semi-finals: a third-place match would wait for ever for the
    bye's loser, and the stage could never be closed. The other semi-final's loser is third."""
    stage, _lines = _knockout(3)
    assert stage.third_place_match
    assert not Match.objects.filter(round__stage=stage, is_third_place=True).exists()
    for round_ in stage.rounds.order_by("number"):
        for m in round_.matches.exclude(outcome=Outcome.BYE).order_by("bracket_position"):
            m.refresh_from_db()
            results.enter_result(m, deals((4, 1), (4, 1), (4, 1)))
    schedule.close_stage(stage)
    stage.refresh_from_db()
    assert stage.status == Stage.Status.CLOSED


@pytest.mark.django_db
def test_close_stage_seeds_crossed_knockout():
    tournament = make_tournament(n_lines=8, stages=[RR, KO])
    rr, ko = stages(tournament)
    groups = schedule.create_groups(rr, 2)
    schedule.generate_round_robin(rr)
    with pytest.raises(ScheduleError):
        schedule.close_stage(rr)  # nothing played yet
    seed = {e.line_id: e.seed for e in tournament.entries.all()}
    for m in Match.objects.filter(round__stage=rr).exclude(outcome=Outcome.BYE):
        better_home = seed[m.home_id] < seed[m.away_id]
        results.enter_result(
            m, deals((4, 1), (4, 1), (4, 1)) if better_home else deals((1, 4), (1, 4), (1, 4))
        )
    schedule.close_stage(rr, per_group=2)
    rr.refresh_from_db()
    assert rr.status == Stage.Status.CLOSED
    first = list(ko.rounds.get(number=1).matches.order_by("bracket_position"))
    group_of = {m.line_id: g.name for g in groups for m in g.members.all()}
    # group winners (seeds 1 and 2 overall) meet the other group's runner-up
    for m in first:
        assert group_of[m.home_id] != group_of[m.away_id]
    a1, b1 = (g.members.order_by("position").first().line_id for g in groups)
    homes = {m.home_id for m in first}
    assert {a1, b1} <= homes


class RoundRobinProperties(HypothesisTestCase):
    """Every stored schedule: each pair once (twice in double), nobody twice in a round, byes
    spread one per line."""

    @settings(max_examples=15, deadline=None)
    @given(n=st.integers(min_value=2, max_value=12), double=st.booleans())
    def test_pairs_rounds_and_byes(self, n, double):
        tournament = make_tournament(
            n_lines=n, stages=[RR | {"double_round_robin": double}], name=f"P{n}{double}"
        )
        stage = tournament.stages.get()
        schedule.create_groups(stage, 1)
        schedule.generate_round_robin(stage)
        matches = list(Match.objects.filter(round__stage=stage).select_related("round"))
        by_round = itertools.groupby(
            sorted(matches, key=lambda m: m.round.number), lambda m: m.round.number
        )
        for _number, round_matches in by_round:
            seen = [line for m in round_matches for line in (m.home_id, m.away_id) if line]
            assert len(seen) == len(set(seen))
        pairs = Counter(frozenset((m.home_id, m.away_id)) for m in matches if m.away_id)
        assert set(pairs.values()) == {2 if double else 1}
        byes = Counter(m.home_id for m in matches if m.away_id is None)
        if n % 2:
            assert set(byes.values()) == {2 if double else 1} and len(byes) == n
        else:
            assert not byes


@pytest.mark.django_db
def test_add_lines_for_knockout_size_edge():
    tournament = make_tournament(stages=[KO])
    add_lines(tournament, [LineRow(name="Sola", players=[("Sola", "")], row_number=1)])
    with pytest.raises(ScheduleError):
        schedule.generate_knockout(tournament.stages.get(), [tournament.entries.get().line])


@pytest.mark.django_db
def test_rating_seeds_order():
    tournament = make_tournament(n_lines=4, stages=[KO])
    lines = [e.line for e in tournament.entries.order_by("seed")]
    ratings = {lines[0].pk: 1400, lines[1].pk: 1700, lines[3].pk: 1500}
    ordered = schedule.rating_seeds(lines, ratings)
    assert ordered == [lines[1], lines[3], lines[0], lines[2]]
