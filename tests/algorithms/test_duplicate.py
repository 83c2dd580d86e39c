"""Duplicate scoring and movements: the worked example of docs/tournament-core.md ("Duplicate")
digit for digit, and the properties (matchpoints and differences add up, lines meet boards at
most once)."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.algorithms.duplicate import (
    BoardResult,
    Fault,
    LineTotal,
    adjusted_percentages,
    board_differences,
    board_matchpoints,
    differences,
    matchpoints,
    neuberg,
    qualifiers,
    rank_field,
    round_vp,
    scaled_margin,
    totals,
    vp_for_difference,
)
from tournaments.algorithms.duplicate_movement import (
    expected_plays,
    howell_movement,
    line_card,
    mitchell_movement,
    table_card,
)
from tournaments.algorithms.mitchell import Direction
from tournaments.algorithms.vp import load_tables

ORDER = ["N1", "E1", "N2", "E2", "N3", "E3", "N4", "E4"]
# (round, table): the deal's points (NS, EW) on the table's first and second board
PLAYED = {
    (1, 1): ((3, 1), (2, 2)),
    (1, 2): ((1, 3), (4, 0)),
    (1, 3): ((2, 3), (3, 2)),
    (1, 4): ((5, 1), (1, 2)),
    (2, 1): ((2, 2), (3, 1)),
    (2, 2): ((4, 1), (1, 4)),
    (2, 3): ((2, 2), (3, 1)),
    (2, 4): ((2, 2), (1, 3)),
    (3, 1): ((3, 2), (2, 2)),
    (3, 2): ((1, 4), (2, 2)),
    (3, 3): ((4, 1), (2, 1)),
    (3, 4): ((3, 2), (2, 3)),
    (4, 1): ((3, 3), (2, 3)),
    (4, 2): ((1, 2), (3, 0)),
    (4, 3): ((2, 2), (4, 1)),
    (4, 4): (None, (2, 3)),  # board 5 misprepared: not played, neither side at fault
}
SCHEDULE = mitchell_movement(ORDER, 2)


def example_results():
    results = []
    for tables in SCHEDULE:
        for t in tables:
            for board, points in zip(t.boards, PLAYED[(t.round, t.table)], strict=True):
                if points is None:
                    adjusted = adjusted_percentages(Fault.NEITHER)
                    results.append(BoardResult(board, t.table, t.ns, t.ew, adjusted=adjusted))
                else:
                    results.append(BoardResult(board, t.table, t.ns, t.ew, *points))
    return results


def test_the_example_movement_is_the_documented_one():
    seen = [[(t.ns, t.ew, t.boards) for t in tables] for tables in SCHEDULE]
    assert seen == [
        [("N1", "E1", (1, 2)), ("N2", "E2", (3, 4)), ("N3", "E3", (5, 6)), ("N4", "E4", (7, 8))],
        [("N1", "E4", (3, 4)), ("N2", "E1", (5, 6)), ("N3", "E2", (7, 8)), ("N4", "E3", (1, 2))],
        [("N1", "E2", (5, 6)), ("N2", "E3", (7, 8)), ("N3", "E4", (1, 2)), ("N4", "E1", (3, 4))],
        [("N1", "E1", (7, 8)), ("N2", "E2", (1, 2)), ("N3", "E3", (3, 4)), ("N4", "E4", (5, 6))],
    ]


def by_line(scores, board):
    return {s.line: s.score for s in scores if s.board == board}


def test_board_1_by_hand():
    scores = matchpoints(example_results())
    assert by_line(scores, 1) == {
        "N3": 6, "N1": 4, "N4": 2, "N2": 0, "E4": 0, "E1": 2, "E3": 4, "E2": 6,
    }  # fmt: skip
    diffs = differences(example_results())
    assert by_line(diffs, 1) == {
        "N1": 1, "N4": -1, "N3": 2, "N2": -2, "E1": -1, "E3": 1, "E4": -2, "E2": 2,
    }  # fmt: skip


def test_board_5_played_fewer_times_by_hand():
    scores = [s for s in matchpoints(example_results()) if s.board == 5]
    assert {s.line: s.score for s in scores} == {
        "N2": Fraction(17, 3), "N1": 3, "N3": Fraction(1, 3),
        "E1": Fraction(1, 3), "E2": 3, "E3": Fraction(17, 3),
        "N4": Fraction(18, 5), "E4": Fraction(18, 5),
    }  # fmt: skip
    assert all(s.top == 6 for s in scores)
    assert {s.line for s in scores if s.adjusted} == {"N4", "E4"}
    assert {s.line for s in scores if s.factored} == {"N1", "N2", "N3", "E1", "E2", "E3"}
    assert by_line(differences(example_results()), 5) == {
        "N3": -2, "N2": 2, "N1": 0, "E3": 2, "E1": -2, "E2": 0,
        "N4": Fraction(2, 5), "E4": Fraction(2, 5),
    }  # fmt: skip


# line: (matchpoints, percentage to 2 places, difference, VP over the 4 rounds)
SESSION = {
    "N1": (Fraction(22), "45.83", Fraction(1, 4), 41),
    "N2": (Fraction(65, 3), "45.14", Fraction(-11, 4), 38),
    "N3": (Fraction(97, 3), "67.36", Fraction(21, 4), 46),
    "N4": (Fraction(103, 5), "42.92", Fraction(-47, 20), 37),
    "E1": (Fraction(79, 3), "54.86", Fraction(11, 4), 42),
    "E2": (Fraction(20), "41.67", Fraction(-13, 4), 36),
    "E3": (Fraction(86, 3), "59.72", Fraction(23, 4), 46),
    "E4": (Fraction(108, 5), "45.00", Fraction(-97, 20), 35),
}


def test_the_session_digit_for_digit():
    results = example_results()
    mp = totals(matchpoints(results))
    diff = totals(differences(results))
    table = load_tables()["points-7"]
    per_round = differences(results)
    vp = dict.fromkeys(ORDER, 0)
    for tables in SCHEDULE:
        for t in tables:
            for line in (t.ns, t.ew):
                summed = sum(
                    (s.score for s in per_round if s.line == line and s.board in t.boards),
                    Fraction(0),
                )
                vp[line] += vp_for_difference(summed, table, boards=2)
    for line, (points, percentage, difference, vps) in SESSION.items():
        assert mp[line].score == points, line
        assert mp[line].top == 48
        assert f"{float(mp[line].percentage):.2f}" == percentage, line
        assert diff[line].score == difference, line
        assert vp[line] == vps, line
    assert mp["N3"].direction is Direction.NORTH_SOUTH and mp["E3"].direction is Direction.EAST_WEST


def test_round_1_vp_of_n4():
    per_round = [s for s in differences(example_results()) if s.line == "N4" and s.board in (7, 8)]
    assert sum(s.score for s in per_round) == Fraction(11, 4)
    assert vp_for_difference(Fraction(11, 4), load_tables()["points-7"], 2) == 13


def test_neuberg_by_hand():
    assert neuberg(4, 3, 4) == Fraction(17, 3)
    assert neuberg(0, 1, 5) == 4  # a lone result is an average: half of the top 8


def test_adjusted_percentages_by_fault():
    assert adjusted_percentages(Fault.NEITHER) == (60, 60)
    assert adjusted_percentages(Fault.NORTH_SOUTH) == (40, 60)
    assert adjusted_percentages(Fault.EAST_WEST) == (60, 40)
    assert adjusted_percentages(Fault.BOTH) == (40, 40)


def test_a_fouled_deck_is_compared_only_among_the_tables_that_held_it():
    results = [
        BoardResult(1, 1, "a", "b", 3, 1),
        BoardResult(1, 2, "c", "d", 1, 1),
        BoardResult(1, 3, "e", "f", 0, 4, deck="fouled"),
        BoardResult(1, 4, "g", "h", 2, 2, deck="fouled"),
    ]
    scores = {s.line: s.score for s in board_matchpoints(results)}
    # each group of two factored to the top of 4 tables: (S + 1) * 4 / 2 - 1
    assert scores == {"a": 5, "c": 1, "e": 1, "g": 5, "b": 1, "d": 5, "f": 5, "h": 1}
    diffs = {s.line: s.score for s in board_differences(results)}
    assert diffs == {"a": 1, "c": -1, "e": -2, "g": 2, "b": -1, "d": 1, "f": 2, "h": -2}


def test_a_result_must_be_points_or_an_adjusted_score():
    with pytest.raises(ValueError):
        BoardResult(1, 1, "a", "b", 3, None)
    with pytest.raises(ValueError):
        BoardResult(1, 1, "a", "b", 3, 1, adjusted=(60, 40))


def test_vp_scaled_to_the_boards_of_a_round():
    table = load_tables()["points-11"]
    assert scaled_margin(Fraction(8), 3, 3) == 8
    # 12 boards read on a 3-deal table: the spread is twice as wide, the margin halved
    assert scaled_margin(Fraction(8), 12, 3) == 4
    assert vp_for_difference(Fraction(8), table, 12, 3) == 14
    assert vp_for_difference(Fraction(-8), table, 12, 3) == 6
    assert vp_for_difference(Fraction(-1, 2), table, 3) == 9  # halves away from zero
    assert vp_for_difference(Fraction(0), table, 3) == 10


results_on_one_board = st.lists(
    st.tuples(st.integers(0, 12), st.integers(0, 12)), min_size=1, max_size=12
)


@settings(max_examples=80, deadline=None)
@given(results_on_one_board)
def test_unfactored_matchpoints_of_a_direction_sum_to_n_n_minus_1(points):
    results = [
        BoardResult(1, table, f"n{table}", f"e{table}", ns, ew)
        for table, (ns, ew) in enumerate(points, start=1)
    ]
    n = len(results)
    scores = board_matchpoints(results)
    for direction in Direction:
        assert sum(s.score for s in scores if s.direction is direction) == n * (n - 1)
    diffs = board_differences(results)
    for direction in Direction:
        assert sum(s.score for s in diffs if s.direction is direction) == 0


@settings(max_examples=80, deadline=None)
@given(results_on_one_board, st.integers(0, 4))
def test_factored_scores_stay_within_the_full_top(points, missing):
    results = [
        BoardResult(1, table, f"n{table}", f"e{table}", ns, ew)
        for table, (ns, ew) in enumerate(points, start=1)
    ]
    expected = len(results) + missing
    for s in board_matchpoints(results, expected):
        assert 0 <= s.score <= s.top == 2 * (expected - 1)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30).filter(lambda n: n not in (3, 4)), st.integers(1, 4), st.data())
def test_mitchell_each_line_meets_each_board_at_most_once(lines, per_round, data):
    order = list(range(lines))
    n_tables = (lines + 1) // 2
    rounds = data.draw(st.integers(1, n_tables))
    schedule = mitchell_movement(order, per_round, rounds=rounds)
    for line in order:
        boards = [b for row in line_card(schedule, line) for b in row.boards]
        assert len(boards) == len(set(boards))
    if rounds == n_tables:
        for table in range(1, n_tables + 1):
            held = [b for t in table_card(schedule, table) for b in t.boards]
            assert sorted(held) == list(range(1, n_tables * per_round + 1))
        plays = expected_plays(schedule)
        assert len(set(plays.values())) == 1  # every board played as often as every other


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 16), st.integers(1, 3))
def test_howell_every_line_meets_every_other_once_and_each_board_once(lines, per_round):
    order = list(range(lines))
    schedule = howell_movement(order, per_round)
    met = set()
    for tables in schedule:
        for t in tables:
            pair = frozenset((t.ns, t.ew))
            assert pair not in met
            met.add(pair)
    assert len(met) == lines * (lines - 1) // 2
    for line in order:
        boards = [b for row in line_card(schedule, line) for b in row.boards]
        assert len(boards) == len(set(boards))


def test_a_line_card_with_a_sit_out():
    """5 lines, 3 tables (no skip): the empty East-West seat moves up like a line."""
    schedule = mitchell_movement(["a", "b", "c", "d", "e"], 2)
    card = [
        (row.table, row.direction, row.opponent, row.boards) for row in line_card(schedule, "a")
    ]
    ns = Direction.NORTH_SOUTH
    assert card == [(1, ns, "b", (1, 2)), (None, None, None, ()), (1, ns, "d", (5, 6))]
    card = [(row.table, row.opponent, row.boards) for row in line_card(schedule, "b")]
    assert card == [(1, "a", (1, 2)), (2, "c", (5, 6)), (3, "e", (3, 4))]
    assert [(t.round, t.ns, t.ew, t.boards) for t in table_card(schedule, 2)] == [
        (1, "c", "d", (3, 4)),
        (2, "c", "b", (5, 6)),
        (3, "c", None, (1, 2)),
    ]


def test_a_two_table_mitchell_without_the_relay_is_refused():
    with pytest.raises(ValueError, match="relay"):
        mitchell_movement(["a", "b", "c", "d"], 2)


def _directions():
    return {
        line: Direction.NORTH_SOUTH if line[0] == "N" else Direction.EAST_WEST for line in ORDER
    }


def test_the_example_ranked_per_direction_by_percentage():
    rows = rank_field(ORDER, totals(matchpoints(example_results())), _directions())
    shown = [(r.direction, r.rank, r.line, f"{float(r.percentage):.2f}") for r in rows]
    ns, ew = Direction.NORTH_SOUTH, Direction.EAST_WEST
    assert shown == [
        (ns, 1, "N3", "67.36"), (ns, 2, "N1", "45.83"), (ns, 3, "N2", "45.14"),
        (ns, 4, "N4", "42.92"),
        (ew, 1, "E3", "59.72"), (ew, 2, "E1", "54.86"), (ew, 3, "E4", "45.00"),
        (ew, 4, "E2", "41.67"),
    ]  # fmt: skip
    # two of each direction go on, place by place, the better percentage first
    assert qualifiers(rows, 4) == ["N3", "E3", "E1", "N1"]
    assert qualifiers(rows, 3) == ["N3", "E3", "E1"]


def test_the_example_ranked_per_direction_by_vp_from_differences():
    results = example_results()
    scores = differences(results)
    vp = round_vp(scores, SCHEDULE, load_tables()["points-7"])
    assert vp == {line: SESSION[line][3] for line in ORDER}
    rows = rank_field(ORDER, totals(scores), _directions(), vp)
    assert [(r.line, r.rank, r.vp, r.score) for r in rows] == [
        ("N3", 1, 46, Fraction(21, 4)), ("N1", 2, 41, Fraction(1, 4)),
        ("N2", 3, 38, Fraction(-11, 4)), ("N4", 4, 37, Fraction(-47, 20)),
        ("E3", 1, 46, Fraction(23, 4)), ("E1", 2, 42, Fraction(11, 4)),
        ("E2", 3, 36, Fraction(-13, 4)), ("E4", 4, 35, Fraction(-97, 20)),
    ]  # fmt: skip
    assert all(r.percentage is None for r in rows)
    # N3 and E3 both have 46 VP: the better difference (E3's +5.75) is seed 1
    assert qualifiers(rows, 2) == ["E3", "N3"]


def test_one_overall_ranking_and_shared_places():
    line_totals = {
        "a": LineTotal("a", Direction.NORTH_SOUTH, Fraction(6), 12, 2),
        "b": LineTotal("b", Direction.EAST_WEST, Fraction(6), 12, 2),
        "c": LineTotal("c", Direction.NORTH_SOUTH, Fraction(9), 12, 2),
    }
    rows = rank_field(["a", "b", "c", "d"], line_totals, None)
    assert [(r.line, r.rank, r.shared_rank, r.direction) for r in rows] == [
        ("c", 1, False, None), ("a", 2, True, None), ("b", 2, True, None),
        ("d", 4, False, None),
    ]  # fmt: skip
    assert rows[-1].percentage == 0 and rows[-1].boards == 0
    assert qualifiers(rows, 2) == ["c", "a"]


@given(st.lists(st.integers(0, 48), min_size=1, max_size=12), st.integers(0, 12))
def test_qualifiers_take_the_best_of_each_direction(scores, count):
    lines = [f"L{i}" for i in range(len(scores))]
    directions = {
        line: Direction.NORTH_SOUTH if i % 2 == 0 else Direction.EAST_WEST
        for i, line in enumerate(lines)
    }
    line_totals = {
        line: LineTotal(line, directions[line], Fraction(s), 48, 8)
        for line, s in zip(lines, scores, strict=True)
    }
    rows = rank_field(lines, line_totals, directions)
    chosen = qualifiers(rows, count)
    assert len(chosen) == min(count, len(lines)) and len(set(chosen)) == len(chosen)
    taken = {}
    for direction in (Direction.NORTH_SOUTH, Direction.EAST_WEST):
        ranked = [r.line for r in rows if r.direction is direction]
        taken[direction] = [line for line in chosen if directions[line] is direction]
        assert taken[direction] == ranked[: len(taken[direction])]  # its top, in its order
    if min(len(lines) // 2, len(lines) - len(lines) // 2) >= (count + 1) // 2:
        # both directions have enough lines: they send on as many, give or take one
        assert abs(len(taken[Direction.NORTH_SOUTH]) - len(taken[Direction.EAST_WEST])) <= 1


SWITCHED = mitchell_movement(ORDER, 2, arrow_switch=True)


def test_the_arrow_switch_swaps_the_seats_of_the_last_round_only():
    assert SWITCHED[:3] == SCHEDULE[:3]
    assert [(t.ns, t.ew, t.boards) for t in SWITCHED[3]] == [
        ("E1", "N1", (7, 8)), ("E2", "N2", (1, 2)), ("E3", "N3", (3, 4)), ("E4", "N4", (5, 6)),
    ]  # fmt: skip
    assert expected_plays(SWITCHED) == expected_plays(SCHEDULE)
    card = line_card(SWITCHED, "E1")
    assert [row.direction for row in card] == [Direction.EAST_WEST] * 3 + [Direction.NORTH_SOUTH]


def test_with_the_arrow_switch_board_7_compares_e1_among_the_north_south_lines():
    # the example's points, North-South first as the tables sat: round 4 table 1 is E1-N1 3-3
    results = []
    for tables in SWITCHED:
        for t in tables:
            for board, points in zip(t.boards, PLAYED[(t.round, t.table)], strict=True):
                if points is not None:
                    results.append(BoardResult(board, t.table, t.ns, t.ew, *points))
    seven = by_line(matchpoints(results), 7)
    # North-South differences N4 +4, N3 0, N2 -3, E1 0: N4 6, N3 and E1 3 each, N2 0
    assert seven == {
        "N4": 6, "N3": 3, "E1": 3, "N2": 0, "E4": 0, "E2": 3, "E3": 6, "N1": 3,
    }  # fmt: skip
    rows = rank_field(ORDER, totals(matchpoints(results)), None)
    assert len(rows) == 8 and {r.direction for r in rows} == {None}
    assert [r.rank for r in rows] == sorted(r.rank for r in rows)


@given(st.integers(3, 31), st.integers(1, 3))
@settings(max_examples=40, deadline=None)
def test_with_the_arrow_switch_each_line_still_meets_each_board_at_most_once(n_lines, k):
    order = list(range(n_lines))
    if (n_lines + 1) // 2 == 2:
        return  # two tables play a Howell
    movement = mitchell_movement(order, k, arrow_switch=True)
    for line in order:
        boards = [b for row in line_card(movement, line) for b in row.boards]
        assert len(boards) == len(set(boards))
    plain = mitchell_movement(order, k)
    # the same tables meet on the same boards: only the seats of the last round differ
    assert [[(frozenset((t.ns, t.ew)), t.boards) for t in ts] for ts in movement] == [
        [(frozenset((t.ns, t.ew)), t.boards) for t in ts] for ts in plain
    ]
