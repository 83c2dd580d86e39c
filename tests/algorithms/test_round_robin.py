"""Round-robin schedules against the published FIDE Berger tables, plus structural properties."""

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.algorithms.fide_berger_tables import PUBLISHED, parse
from tournaments.algorithms.round_robin import berger_rounds, snake_groups


@pytest.mark.parametrize("n", sorted(PUBLISHED))
def test_even_sizes_equal_the_published_fide_table(n):
    assert berger_rounds(n) == parse(PUBLISHED[n])


@pytest.mark.parametrize("n", [size - 1 for size in sorted(PUBLISHED)])
def test_odd_sizes_use_the_next_table_with_the_highest_number_as_bye(n):
    published = parse(PUBLISHED[n + 1])
    expected = [
        [
            (away, None) if home == n + 1 else (home, None) if away == n + 1 else (home, away)
            for home, away in round_
        ]
        for round_ in published
    ]
    assert berger_rounds(n) == expected


def test_fide_table_for_three_lines_spelled_out():
    assert berger_rounds(3) == [
        [(1, None), (2, 3)],
        [(3, None), (1, 2)],
        [(2, None), (3, 1)],
    ]


def test_double_round_robin_reverses_home_and_away_in_the_second_cycle():
    single = berger_rounds(6)
    double = berger_rounds(6, double=True)
    assert double[:5] == single
    assert double[5:] == [[(away, home) for home, away in round_] for round_ in single]


def test_double_round_robin_keeps_byes_as_byes():
    second_cycle = berger_rounds(5, double=True)[5:]
    assert [next(p for p in round_ if p[1] is None) for round_ in second_cycle] == [
        (p, None) for p in (1, 4, 2, 5, 3)
    ]


@pytest.mark.parametrize("n", [-1, 0, 1])
def test_too_few_lines(n):
    with pytest.raises(ValueError):
        berger_rounds(n)


def test_two_lines_play_once_per_cycle():
    assert berger_rounds(2) == [[(1, 2)]]
    assert berger_rounds(2, double=True) == [[(1, 2)], [(2, 1)]]


@settings(max_examples=120, deadline=None)
@given(n=st.integers(min_value=2, max_value=40), double=st.booleans())
def test_schedule_properties(n, double):
    rounds = berger_rounds(n, double=double)
    cycles = 2 if double else 1
    per_cycle = n if n % 2 else n - 1
    assert len(rounds) == cycles * per_cycle

    for round_ in rounds:  # nobody plays twice in a round, everybody appears
        seen = [p for home, away in round_ for p in (home, away) if p is not None]
        assert len(seen) == len(set(seen)) == n

    games = Counter((home, away) for round_ in rounds for home, away in round_ if away)
    pairs = Counter(frozenset(game) for game in games.elements())
    assert set(pairs) == {frozenset((a, b)) for a in range(1, n + 1) for b in range(a + 1, n + 1)}
    assert set(pairs.values()) == {cycles}
    if double:  # the two meetings of a pair have home and away reversed
        assert all(games[(home, away)] == 1 and games[(away, home)] == 1 for home, away in games)

    byes = Counter(home for round_ in rounds for home, away in round_ if away is None)
    if n % 2:
        assert byes == Counter({p: cycles for p in range(1, n + 1)})
        for cycle in range(cycles):  # one bye per line in each cycle
            cycle_rounds = rounds[cycle * per_cycle : (cycle + 1) * per_cycle]
            assert sorted(h for r in cycle_rounds for h, a in r if a is None) == list(
                range(1, n + 1)
            )
    else:
        assert not byes


@settings(max_examples=100, deadline=None)
@given(n=st.integers(min_value=2, max_value=30))
def test_home_and_away_are_balanced_within_one(n):
    home = Counter(h for round_ in berger_rounds(n) for h, a in round_ if a)
    away = Counter(a for round_ in berger_rounds(n) for h, a in round_ if a)
    assert all(abs(home[p] - away[p]) <= 1 for p in range(1, n + 1))


def test_snake_groups_serpentine_order():
    assert snake_groups(list("abcdefghij"), 4) == [
        ["a", "h", "i"],
        ["b", "g", "j"],
        ["c", "f"],
        ["d", "e"],
    ]


def test_snake_groups_sixteen_into_four():
    groups = snake_groups(list(range(1, 17)), 4)
    assert groups == [[1, 8, 9, 16], [2, 7, 10, 15], [3, 6, 11, 14], [4, 5, 12, 13]]
    assert len({sum(group) for group in groups}) == 1


@settings(max_examples=100, deadline=None)
@given(n=st.integers(min_value=0, max_value=100), groups=st.integers(min_value=1, max_value=12))
def test_snake_groups_properties(n, groups):
    result = snake_groups(list(range(n)), groups)
    assert len(result) == groups
    assert sorted(x for group in result for x in group) == list(range(n))
    sizes = [len(group) for group in result]
    assert max(sizes) - min(sizes) <= 1
    for group in result:  # each group's entries stay in seed order
        assert group == sorted(group)


def test_snake_groups_needs_a_group():
    with pytest.raises(ValueError):
        snake_groups([1, 2], 0)
