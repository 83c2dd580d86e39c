"""The relay Mitchell (relay and bye-stand) against the skip: the worked example of
docs/tournament-core.md ("Duplicate", "The relay") and the properties of both with an even
number of tables: each line meets each board at most once, a full movement plays every board at
every table, and no board is needed by two tables in one round except by the relay's two."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.algorithms.duplicate_movement import (
    expected_plays,
    line_card,
    mitchell_movement,
    relay_sets,
    relay_stands,
    table_card,
)

ORDER = ["N1", "E1", "N2", "E2", "N3", "E3", "N4", "E4"]


def test_the_example_relay_is_the_documented_one():
    """4 tables, 2 boards a round: tables 1 and 4 share a set, the bye-stand between tables 2
    and 3 rests one; nobody skips."""
    schedule = mitchell_movement(ORDER, 2, relay=True)
    shown = [[(t.ns, t.ew, t.boards, t.relay_with) for t in tables] for tables in schedule]
    assert shown == [
        [
            ("N1", "E1", (1, 2), 4),
            ("N2", "E2", (3, 4), None),
            ("N3", "E3", (7, 8), None),
            ("N4", "E4", (1, 2), 1),
        ],
        [
            ("N1", "E4", (3, 4), 4),
            ("N2", "E1", (5, 6), None),
            ("N3", "E2", (1, 2), None),
            ("N4", "E3", (3, 4), 1),
        ],
        [
            ("N1", "E3", (5, 6), 4),
            ("N2", "E4", (7, 8), None),
            ("N3", "E1", (3, 4), None),
            ("N4", "E2", (5, 6), 1),
        ],
        [
            ("N1", "E2", (7, 8), 4),
            ("N2", "E3", (1, 2), None),
            ("N3", "E4", (5, 6), None),
            ("N4", "E1", (7, 8), 1),
        ],
    ]
    assert [relay_sets(4, r)[1] for r in (1, 2, 3, 4)] == [3, 4, 1, 2]  # on the bye-stand
    assert relay_stands(4) == [(1, 4), (2,), (), (3,)]
    # what the skip cannot give: every North-South line meets every East-West line once
    met = {(t.ns, t.ew) for tables in schedule for t in tables}
    assert len(met) == 16


def test_the_relay_is_what_two_tables_can_play():
    schedule = mitchell_movement(["a", "b", "c", "d"], 2, relay=True)
    assert [[(t.ns, t.ew, t.boards, t.relay_with) for t in ts] for ts in schedule] == [
        [("a", "b", (1, 2), 2), ("c", "d", (1, 2), 1)],
        [("a", "d", (3, 4), 2), ("c", "b", (3, 4), 1)],
    ]
    with pytest.raises(ValueError, match="relay"):
        mitchell_movement(["a", "b", "c", "d"], 2)


def test_an_odd_number_of_tables_has_no_relay():
    with pytest.raises(ValueError, match="odd"):
        mitchell_movement(list(range(6)), 2, relay=True)


def _holders_per_round(schedule):
    for tables in schedule:
        holders: dict[int, list] = {}
        for t in tables:
            for board in t.boards:
                holders.setdefault(board, []).append(t)
        yield tables, holders


even_tables = st.integers(1, 12).map(lambda half: 2 * half)


@settings(max_examples=60, deadline=None)
@given(even_tables, st.booleans(), st.integers(1, 3), st.booleans(), st.booleans(), st.data())
def test_with_an_even_number_of_tables_skip_and_relay_keep_the_boards_apart(
    n_tables, odd, per_round, relay, arrow_switch, data
):
    if n_tables == 2 and not relay:
        return  # two tables play only the relay
    lines = 2 * n_tables - (1 if odd else 0)
    order = list(range(lines))
    full = data.draw(st.booleans())
    rounds = n_tables if full else data.draw(st.integers(1, n_tables))
    schedule = mitchell_movement(
        order, per_round, rounds=rounds, relay=relay, arrow_switch=arrow_switch
    )
    # each line meets each board at most once
    for line in order:
        boards = [b for row in line_card(schedule, line) for b in row.boards]
        assert len(boards) == len(set(boards))
    # no board needed by two tables at once, except by the relay's two, which say so
    for _tables, holders in _holders_per_round(schedule):
        for held in holders.values():
            if len(held) == 1:
                assert held[0].relay_with is None
                continue
            assert relay and len(held) == 2
            first, last = held
            assert (first.table, last.table) == (1, n_tables)
            assert (first.relay_with, last.relay_with) == (n_tables, 1)
            assert first.boards == last.boards
    if rounds == n_tables:
        every = list(range(1, n_tables * per_round + 1))
        for table in range(1, n_tables + 1):
            held = [b for t in table_card(schedule, table) for b in t.boards]
            assert sorted(held) == every  # every board at every table, once
        assert len(set(expected_plays(schedule).values())) == 1
        if relay and not odd:
            pairs = {frozenset((t.ns, t.ew)) for tables in schedule for t in tables}
            assert len(pairs) == n_tables * n_tables  # each North-South meets each East-West


@settings(max_examples=30, deadline=None)
@given(even_tables, st.integers(1, 3))
def test_the_bye_stand_rests_the_one_set_no_table_plays(n_tables, per_round):
    schedule = mitchell_movement(list(range(2 * n_tables)), per_round, relay=True)
    for number, tables in enumerate(schedule, start=1):
        at, resting = relay_sets(n_tables, number)
        played = {(b - 1) // per_round + 1 for t in tables for b in t.boards}
        assert resting not in played
        assert played | {resting} == set(range(1, n_tables + 1))
        assert sorted(at) == list(range(1, n_tables + 1))
