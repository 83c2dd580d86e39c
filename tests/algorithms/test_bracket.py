"""Knock-out seeding, byes, crossed qualification and advancing."""

import math

import pytest

from tournaments.algorithms.bracket import (
    THIRD_PLACE_MATCH,
    NextSlot,
    Side,
    bracket_size,
    bracket_slots,
    crossed_qualifiers,
    first_round,
    n_rounds,
    seed_positions,
    third_place_slot,
    winner_slot,
)

SIZES = [2, 4, 8, 16, 32, 64]


@pytest.mark.parametrize(
    ("entrants", "size"), [(1, 2), (2, 2), (3, 4), (4, 4), (5, 8), (9, 16), (33, 64), (64, 64)]
)
def test_bracket_size(entrants, size):
    assert bracket_size(entrants) == size


def test_bracket_size_needs_an_entrant():
    with pytest.raises(ValueError):
        bracket_size(0)


def test_standard_order_for_sixteen():
    assert seed_positions(16) == [1, 16, 8, 9, 4, 13, 5, 12, 2, 15, 7, 10, 3, 14, 6, 11]


def test_standard_order_for_eight_and_four():
    assert seed_positions(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    assert seed_positions(4) == [1, 4, 2, 3]
    assert seed_positions(2) == [1, 2]


@pytest.mark.parametrize("size", [0, 1, 3, 6, 12])
def test_sizes_must_be_powers_of_two(size):
    with pytest.raises(ValueError):
        seed_positions(size)


def _meeting_round(slots: list[int], a: int, b: int) -> int:
    """The round (1 = first) in which seeds a and b would meet if both kept winning."""
    i, j = slots.index(a), slots.index(b)
    return (i ^ j).bit_length()


@pytest.mark.parametrize("size", SIZES)
def test_top_seeds_meet_last(size):
    slots = seed_positions(size)
    assert sorted(slots) == list(range(1, size + 1))  # every seed exactly once
    rounds = n_rounds(size)
    assert rounds == int(math.log2(size))
    # seeds 1..2^k are in different sub-brackets of size/2^k: 1-2 only in the final,
    # 1-4 not before the semi-finals, 1-8 not before the quarter-finals …
    for k in range(1, rounds + 1):
        top = range(1, 2**k + 1)
        for a in top:
            for b in top:
                if a < b:
                    assert _meeting_round(slots, a, b) >= rounds - k + 1
    if size >= 2:
        assert _meeting_round(slots, 1, 2) == rounds
    for upper, lower in zip(slots[::2], slots[1::2], strict=True):
        assert upper + lower == size + 1  # first round: best against worst
        assert upper < lower


@pytest.mark.parametrize("n", range(2, 65))
def test_first_round_and_byes(n):
    size = bracket_size(n)
    matches = first_round(n)
    assert len(matches) == size // 2
    seeds = [s for match in matches for s in match if s is not None]
    assert sorted(seeds) == list(range(1, n + 1))
    byes = sorted(upper for upper, lower in matches if lower is None)
    assert byes == list(range(1, size - n + 1))  # the byes go to the top seeds
    for upper, lower in matches:
        assert lower is None or upper < lower
    # in bracket order: the same slots as the standard order
    assert [s for match in matches for s in match] == [
        s if s <= n else None for s in seed_positions(size)
    ]


def test_first_round_examples():
    assert first_round(2) == [(1, 2)]
    assert first_round(3) == [(1, None), (2, 3)]
    assert first_round(6) == [(1, None), (4, 5), (2, None), (3, 6)]
    assert first_round(1) == [(1, None)]


def test_bracket_slots_places_entrants():
    assert bracket_slots(["a", "b", "c"]) == ["a", None, "b", "c"]


def test_winner_goes_to_half_index_upper_home():
    assert winner_slot(0, 0, 8) == NextSlot(1, 0, Side.HOME)
    assert winner_slot(0, 1, 8) == NextSlot(1, 0, Side.AWAY)
    assert winner_slot(0, 3, 8) == NextSlot(1, 1, Side.AWAY)
    assert winner_slot(1, 1, 8) == NextSlot(2, 0, Side.AWAY)
    assert winner_slot(2, 0, 8) is None  # the final


@pytest.mark.parametrize("size", SIZES)
def test_advancing_reaches_the_final_once_per_slot(size):
    """Following winners from every first-round match fills each later match's two sides once."""
    filled: dict[tuple[int, int], list[Side]] = {}
    current = [(0, match) for match in range(size // 2)]
    while current:
        following = []
        for round_index, match in current:
            nxt = winner_slot(round_index, match, size)
            if nxt is None:
                continue
            filled.setdefault((nxt.round, nxt.match), []).append(nxt.side)
            if len(filled[nxt.round, nxt.match]) == 2:
                following.append((nxt.round, nxt.match))
        current = following
    assert all(sorted(sides) == [Side.AWAY, Side.HOME] for sides in filled.values())
    assert len(filled) == size // 2 - 1


def test_winner_slot_rejects_matches_outside_the_bracket():
    with pytest.raises(ValueError):
        winner_slot(3, 0, 8)
    with pytest.raises(ValueError):
        winner_slot(1, 2, 8)


def test_semi_final_losers_go_to_the_third_place_match():
    assert third_place_slot(1, 0, 8) == NextSlot(2, THIRD_PLACE_MATCH, Side.HOME)
    assert third_place_slot(1, 1, 8) == NextSlot(2, THIRD_PLACE_MATCH, Side.AWAY)
    assert third_place_slot(0, 0, 8) is None  # quarter-final losers are out
    assert third_place_slot(2, 0, 8) is None  # the final's loser is second
    assert third_place_slot(0, 0, 4) == NextSlot(1, THIRD_PLACE_MATCH, Side.HOME)
    assert third_place_slot(0, 0, 2) is None


def _groups(n_groups, depth=4):
    return [[f"{'ABCDEFGHIJKLMNOP'[g]}{k}" for k in range(1, depth + 1)] for g in range(n_groups)]


def _first_round_lines(order):
    return [(order[a - 1], None if b is None else order[b - 1]) for a, b in first_round(len(order))]


def test_crossed_two_groups_two_qualifiers():
    order = crossed_qualifiers(_groups(2), 2)
    assert order == ["A1", "B1", "A2", "B2"]
    assert _first_round_lines(order) == [("A1", "B2"), ("B1", "A2")]


def test_crossed_four_groups_two_qualifiers():
    order = crossed_qualifiers(_groups(4), 2)
    assert sorted(_first_round_lines(order)) == [
        ("A1", "B2"),
        ("B1", "A2"),
        ("C1", "D2"),
        ("D1", "C2"),
    ]
    assert order[:4] == ["A1", "B1", "C1", "D1"]  # winners are the top seeds, in group order


@pytest.mark.parametrize("n_groups", [2, 4, 8, 16])
def test_crossed_pairs_and_halves(n_groups):
    order = crossed_qualifiers(_groups(n_groups), 2)
    pairs = _first_round_lines(order)
    for winner, runner_up in pairs:
        assert winner.endswith("1")
        assert runner_up.endswith("2")
        group, other = "ABCDEFGHIJKLMNOP".index(winner[0]), "ABCDEFGHIJKLMNOP".index(runner_up[0])
        assert other == group ^ 1
    # the two qualifiers of a group are in opposite halves: they can only meet in the final
    slots = bracket_slots(order)
    half = len(slots) // 2
    for group in "ABCDEFGHIJKLMNOP"[:n_groups]:
        assert (slots.index(f"{group}1") < half) != (slots.index(f"{group}2") < half)


def test_crossed_three_groups_rotates_and_gives_byes_to_winners():
    order = crossed_qualifiers(_groups(3), 2)
    assert order == ["A1", "B1", "C1", "B2", "C2", "A2"]
    assert _first_round_lines(order) == [("A1", None), ("B2", "C2"), ("B1", None), ("C1", "A2")]


def test_crossed_four_groups_three_qualifiers():
    order = crossed_qualifiers(_groups(4), 3)
    pairs = [p for p in _first_round_lines(order) if p[1] is not None]
    assert sorted(pairs) == [("A2", "B3"), ("B2", "A3"), ("C2", "D3"), ("D2", "C3")]
    assert sorted(order[:4]) == ["A1", "B1", "C1", "D1"]


def test_crossed_two_groups_four_qualifiers():
    order = crossed_qualifiers(_groups(2), 4)
    assert sorted(_first_round_lines(order)) == [
        ("A1", "B4"),
        ("A2", "B3"),
        ("B1", "A4"),
        ("B2", "A3"),
    ]


@pytest.mark.parametrize("n_groups", range(1, 9))
@pytest.mark.parametrize("per_group", range(1, 5))
def test_crossed_generalisation(n_groups, per_group):
    order = crossed_qualifiers(_groups(n_groups), per_group)
    assert sorted(order) == sorted(g[k] for g in _groups(n_groups) for k in range(per_group))
    # tier by tier: every group's k-th comes before any group's (k+1)-th
    tiers = [int(line[1:]) for line in order]
    assert tiers == sorted(tiers)
    if n_groups > 1:  # no first-round match between two lines of the same group
        for a, b in _first_round_lines(order):
            assert b is None or a[0] != b[0]


def test_crossed_rejects_short_groups():
    with pytest.raises(ValueError):
        crossed_qualifiers([["A1", "A2"], ["B1"]], 2)
    assert crossed_qualifiers([], 2) == []
