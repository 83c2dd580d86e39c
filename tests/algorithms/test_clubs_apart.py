"""Clubs kept apart and forbidden pairings: Mitchell seating, Danish weights, Swiss.

Hand-worked examples first, then hypothesis properties checked against a brute force over every
way to split (Mitchell) or pair (Danish) a small field.
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tournaments.algorithms import danish, mitchell, swiss

BOUNDED = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _directions(order):
    return {line: seat.direction for line, seat in mitchell.directions(order).items()}


def _meetings(order, rounds=None):
    """Every (NS, EW) pair that meets in the movement."""
    return {
        frozenset((table.ns, table.ew))
        for tables in mitchell.mitchell_schedule(order, rounds=rounds)
        for table in tables
        if table.ew is not None
    }


# --------------------------------------------------------------------------- Mitchell, by hand


def test_club_mates_move_to_one_direction_keeping_the_seeds_spread():
    # 1 and 2 (club a) would meet at table 1, 3 and 4 (club b) at table 2. By hand: the units
    # are {1,2}, {3,4}, {5}, {6}, {7}, {8}; the lines that start North-South (5, 7) are placed
    # first, then {1,2} fills North-South (4 seats); the rest sits East-West. Each direction
    # keeps the start order.
    seating = mitchell.seat_apart(range(1, 9), {1: "a", 2: "a", 3: "b", 4: "b"})
    assert seating.order == [1, 3, 2, 4, 5, 6, 7, 8]
    assert seating.apart and not seating.oversized
    meetings = _meetings(seating.order)
    assert frozenset((1, 2)) not in meetings and frozenset((3, 4)) not in meetings


def test_no_clubs_leave_the_start_order_alone():
    assert mitchell.seat_apart(list(range(1, 8))).order == list(range(1, 8))
    assert mitchell.seat_apart([5, 3, 9, 1], {3: "x"}).order == [5, 3, 9, 1]


def test_a_club_larger_than_a_direction_meets_as_little_as_it_can():
    # 6 lines, 3 tables: a direction holds 3; club a has 4, so one of its lines sits apart from
    # the other 3 and meets each of them (3 meetings, the fewest: 2 and 2 would make 4).
    clubs = {1: "a", 2: "a", 3: "a", 4: "a"}
    seating = mitchell.seat_apart(range(1, 7), clubs)
    assert seating.oversized == ["a"]
    assert len(seating.club_meetings) == 3
    directions = _directions(seating.order)
    split = sorted(directions[line] for line in clubs)
    assert sorted((split.count(mitchell.Direction.EAST_WEST), split.count("ns"))) == [1, 3]


def test_clubs_that_cannot_fill_the_halves_exactly_are_said_so():
    # 6 lines: clubs of 2 and 2 and 2 cannot make 3 and 3 without splitting one
    clubs = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    seating = mitchell.seat_apart(range(1, 7), clubs)
    assert not seating.apart and not seating.oversized
    assert len(seating.club_meetings) == 1  # one club split 1-1: one meeting


def test_a_forbidden_pair_comes_before_a_club():
    # 4 lines, 2 tables: club a is 1 and 2; the organizer forbids 1–3 and 2–4. Keeping both
    # pairs in one direction splits club a (its two lines meet once): forbidden pairs first.
    seating = mitchell.seat_apart([1, 2, 3, 4], {1: "a", 2: "a"}, [(1, 3), (2, 4)])
    assert seating.forbidden_meetings == []
    assert len(seating.club_meetings) == 1
    meetings = _meetings(seating.order)
    assert frozenset((1, 3)) not in meetings and frozenset((2, 4)) not in meetings


def test_meetings_are_counted_in_the_rounds_played():
    # 8 lines, a movement of 4 tables played over 2 rounds: a line East-West meets only 2 of the
    # 4 North-South lines, and the seating reports only the meetings of those rounds
    clubs = {line: "a" for line in range(1, 7)}
    full = mitchell.seat_apart(range(1, 9), clubs)
    short = mitchell.seat_apart(range(1, 9), clubs, rounds=2)
    assert full.order == short.order
    assert len(short.club_meetings) < len(full.club_meetings)
    assert {frozenset(m) for m in short.club_meetings} <= _meetings(short.order, rounds=2)


# --------------------------------------------------------------------------- Mitchell, properties


@st.composite
def _fields(draw, max_lines=10):
    n = draw(st.integers(min_value=2, max_value=max_lines))
    order = draw(st.permutations(list(range(1, n + 1))))
    clubs = {
        line: club
        for line in order
        if (club := draw(st.sampled_from(["", "", "a", "b", "c", "d"])))
    }
    pairs = [tuple(p) for p in itertools.combinations(range(1, n + 1), 2)]
    forbidden = draw(st.lists(st.sampled_from(pairs), max_size=3, unique=True)) if pairs else []
    return list(order), clubs, forbidden


def _split_cost(ns, lines, clubs, forbidden):
    split = sum(1 for a, b in forbidden if (a in ns) != (b in ns))
    clubbed = sum(
        1
        for a, b in itertools.combinations(lines, 2)
        if clubs.get(a) and clubs.get(a) == clubs.get(b) and (a in ns) != (b in ns)
    )
    return split, clubbed


def _best_split(order, clubs, forbidden):
    """The fewest (forbidden pairs, club-mates) split over every balanced split (brute force),
    and whether some balanced split keeps every forbidden pair together."""
    ns_size = (len(order) + 1) // 2
    costs = [
        _split_cost(set(ns), order, clubs, forbidden)
        for ns in itertools.combinations(order, ns_size)
    ]
    return min(costs), min(cost[0] for cost in costs) == 0


@BOUNDED
@given(_fields())
def test_mitchell_keeps_clubs_apart_whenever_it_can(field):
    order, clubs, forbidden = field
    seating = mitchell.seat_apart(order, clubs, forbidden)
    assert sorted(seating.order) == sorted(order)
    directions = _directions(seating.order)
    ns = {line for line, d in directions.items() if d is mitchell.Direction.NORTH_SOUTH}
    assert len(ns) == (len(order) + 1) // 2  # balanced: North-South takes the odd line
    best, forbidden_can_hold = _best_split(order, clubs, forbidden)
    meetings = _meetings(seating.order)
    met_mates = {
        pair for pair in meetings if len({clubs.get(line, "") for line in pair} - {""}) == 1
    }
    met_mates = {p for p in met_mates if all(clubs.get(line) for line in p)}
    met_forbidden = {pair for pair in meetings if pair in {frozenset(p) for p in forbidden}}
    # what it reports is what the movement does
    assert {frozenset(m) for m in seating.forbidden_meetings} == met_forbidden
    assert {frozenset(m) for m in seating.club_meetings} == met_mates - met_forbidden
    if best == (0, 0):
        # feasible: no two lines of one club meet, no forbidden pair meets
        assert seating.apart
        assert not met_mates and not met_forbidden
    if forbidden_can_hold:
        # forbidden pairs first, then as few club-mates as any balanced split
        assert not met_forbidden
        assert _split_cost(ns, order, clubs, forbidden) == best


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=2, max_value=400), st.integers(min_value=1, max_value=12))
def test_mitchell_seating_of_large_fields_is_balanced_and_apart(n_lines, n_clubs):
    # clubs of equal size that add up to the halves (one spare line to balance an odd field)
    order = list(range(1, n_lines + 1))
    clubs = {line: f"club {line % n_clubs}" for line in order}
    seating = mitchell.seat_apart(order, clubs)
    directions = _directions(seating.order)
    assert sorted(seating.order) == order
    ns = [line for line in order if directions[line] is mitchell.Direction.NORTH_SOUTH]
    assert len(ns) == (n_lines + 1) // 2
    sizes = sorted(sum(1 for line in order if clubs[line] == c) for c in set(clubs.values()))
    fits = any(
        sum(combo) == len(ns)
        for k in range(len(sizes) + 1)
        for combo in itertools.combinations(sizes, k)
    )
    assert seating.apart == fits


# --------------------------------------------------------------------------- Danish, by hand


def test_danish_skips_a_club_mate_like_a_line_already_met():
    # 1–2 would meet, but both play for club a: 1 meets 3, 2 meets 4
    pairing = danish.pair_danish([1, 2, 3, 4], clubs={1: "a", 2: "a"})
    assert pairing.pairs == [(1, 3), (2, 4)]
    assert pairing.club_meetings == 0


def test_danish_lets_club_mates_meet_only_when_nothing_else_is_legal():
    # 1 and 2 (club a) have met 3 and 4: a round without rematches must pair 1–2
    met = [(1, 3), (1, 4), (2, 3), (2, 4)]
    pairing = danish.pair_danish([1, 2, 3, 4], met, clubs={1: "a", 2: "a"})
    assert sorted(pairing.pairs) == [(1, 2), (3, 4)]
    assert (pairing.rematches, pairing.club_meetings) == (0, 1)


def test_danish_never_makes_a_forbidden_pair():
    pairing = danish.pair_danish([1, 2, 3, 4], forbidden=[(1, 2)])
    assert pairing.pairs == [(1, 3), (2, 4)]
    with pytest.raises(danish.NoLegalPairing):
        danish.pair_danish([1, 2], forbidden=[(1, 2)])


def test_an_odd_field_moves_the_bye_to_keep_a_forbidden_pair_apart():
    # 3 would sit out, leaving 1–2, which is forbidden: 2 sits out instead (no bye had yet)
    pairing = danish.pair_danish([1, 2, 3], forbidden=[(1, 2)])
    assert pairing.bye == 2 and pairing.pairs == [(1, 3)]


# --------------------------------------------------------------------------- Danish, properties


def _matchings(lines):
    if not lines:
        yield []
        return
    first, rest = lines[0], lines[1:]
    for index, other in enumerate(rest):
        for tail in _matchings(rest[:index] + rest[index + 1 :]):
            yield [(first, other), *tail]


@st.composite
def _danish_fields(draw):
    n = draw(st.integers(min_value=2, max_value=9))
    order = list(range(1, n + 1))
    pairs = [frozenset(p) for p in itertools.combinations(order, 2)]
    met = draw(st.lists(st.sampled_from(pairs), max_size=len(pairs), unique=True))
    forbidden = draw(st.lists(st.sampled_from(pairs), max_size=3, unique=True))
    clubs = {
        line: club for line in order if (club := draw(st.sampled_from(["", "a", "a", "b", "c"])))
    }
    byes = {line: draw(st.integers(min_value=0, max_value=1)) for line in order}
    return order, set(met), set(forbidden), clubs, byes


@BOUNDED
@given(_danish_fields())
def test_danish_meets_a_club_mate_only_when_no_other_legal_pairing_exists(field):
    order, met, forbidden, clubs, byes = field

    def mates(a, b):
        return bool(clubs.get(a)) and clubs.get(a) == clubs.get(b)

    # brute force: every bye the rule allows, every pairing without a forbidden pair
    fewest = min(byes[line] for line in order)
    byes_allowed = [line for line in order if byes[line] == fewest] if len(order) % 2 else [None]
    best = None
    for bye in byes_allowed:
        playing = [line for line in order if line != bye]
        for pairs in _matchings(playing):
            if any(frozenset(p) in forbidden for p in pairs):
                continue
            cost = (
                sum(1 for p in pairs if frozenset(p) in met),
                sum(1 for p in pairs if mates(*p)),
            )
            best = cost if best is None or cost < best else best
    if best is None:
        with pytest.raises(danish.NoLegalPairing):
            danish.pair_danish(order, met, byes, clubs=clubs, forbidden=forbidden)
        return
    pairing = danish.pair_danish(order, met, byes, clubs=clubs, forbidden=forbidden)
    assert not any(frozenset(p) in forbidden for p in pairing.pairs)
    rematches = sum(1 for p in pairing.pairs if frozenset(p) in met)
    meetings = sum(1 for p in pairing.pairs if mates(*p))
    assert (pairing.rematches, pairing.club_meetings) == (rematches, meetings)
    # the fewest rematches, then the fewest club-mates meeting, of every legal pairing
    assert (rematches, meetings) == best
    seated = [line for p in pairing.pairs for line in p] + [pairing.bye] * (pairing.bye is not None)
    assert sorted(seated) == order


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=40, max_value=300), st.integers(min_value=0, max_value=2**32))
def test_danish_keeps_clubs_apart_in_a_large_open(n_lines, seed):
    import random

    rng = random.Random(seed)
    order = list(range(1, n_lines + 1))
    clubs = {line: f"c{rng.randrange(n_lines // 4)}" for line in order}
    forbidden = {frozenset(rng.sample(order, 2)) for _ in range(5)}
    pairing = danish.pair_danish(order, clubs=clubs, forbidden=forbidden)
    assert pairing.club_meetings == 0  # clubs of about 4 lines: always possible
    assert not any(frozenset(p) in forbidden for p in pairing.pairs)


@settings(max_examples=10, deadline=None)
@given(st.integers(min_value=70, max_value=400), st.integers(min_value=0, max_value=2**32))
def test_a_club_of_most_of_a_large_open_meets_itself_only_as_much_as_it_must(n_lines, seed):
    # 60% of the field is one club: every other line meets one of it, the rest of the club
    # pairs within (the fewest meetings); a table this large is past the exact fallback
    import random

    order = list(range(1, n_lines + 1))
    random.Random(seed).shuffle(order)
    big = set(order[: n_lines * 3 // 5])
    pairing = danish.pair_danish(order, clubs=dict.fromkeys(big, "club"))
    others = n_lines - len(big) - (1 if pairing.bye is not None and pairing.bye not in big else 0)
    in_big = len(big) - (1 if pairing.bye in big else 0)
    assert pairing.club_meetings == (in_big - others) // 2
    assert n_lines > danish.EXACT_FALLBACK


# --------------------------------------------------------------------------- Swiss


def test_swiss_never_pairs_a_forbidden_pair():
    lines = [swiss.SwissLine(id=i, start=i) for i in range(1, 5)]
    plain = swiss.pair_swiss(lines, set(), round_number=1, total_rounds=3)
    first = next(pair for pair in plain.pairs if 1 in pair)
    apart = swiss.pair_swiss(
        lines, set(), round_number=1, total_rounds=3, forbidden=[frozenset(first)]
    )
    assert frozenset(first) not in {frozenset(p) for p in apart.pairs}
    assert sorted(line for p in apart.pairs for line in p) == [1, 2, 3, 4]


def test_swiss_round_one_keeps_club_mates_apart_like_a_forbidden_pair():
    # round 1 pairs 1–5, 2–6, 3–7, 4–8; 1 and 5 play for club a: 5 swaps with the nearest table
    lines = [swiss.SwissLine(id=i, start=i) for i in range(1, 9)]
    pairing = swiss.pair_swiss(lines, set(), round_number=1, total_rounds=3, clubs={1: "a", 5: "a"})
    assert {frozenset(p) for p in pairing.pairs} == {
        frozenset(p) for p in [(1, 6), (2, 5), (3, 7), (4, 8)]
    }
    assert pairing.club_meetings == []


def test_swiss_lets_club_mates_meet_when_a_club_has_most_of_the_lines():
    lines = [swiss.SwissLine(id=i, start=i) for i in range(1, 5)]
    clubs = {1: "a", 2: "a", 3: "a"}
    pairing = swiss.pair_swiss(lines, set(), round_number=1, total_rounds=3, clubs=clubs)
    assert len(pairing.club_meetings) == 1
    assert sorted(line for p in pairing.pairs for line in p) == [1, 2, 3, 4]


@st.composite
def _swiss_fields(draw):
    n = draw(st.integers(min_value=4, max_value=10))
    clubs = {
        line: club
        for line in range(1, n + 1)
        if (club := draw(st.sampled_from(["", "", "a", "b", "c"])))
    }
    outcomes = draw(st.lists(st.sampled_from([(2, 0), (1, 1), (0, 2)]), min_size=40, max_size=40))
    return n, clubs, outcomes


@settings(max_examples=25, deadline=None)
@given(_swiss_fields())
@example((5, {3: "a", 4: "a", 5: "a"}, [(2, 0)] * 40))  # a club of most lines: not tried
def test_swiss_meets_a_club_mate_only_when_no_dutch_round_avoids_it(field):
    n, clubs, outcomes = field
    order = list(range(1, n + 1))
    mates = swiss.club_pairs(order, clubs)
    rounds: list[swiss.PlayedRound] = []
    results = iter(outcomes)
    for number in range(1, 4):
        lines, played = swiss.line_histories(order, rounds)
        kwargs = {"round_number": number, "total_rounds": 3}
        try:
            pairing = swiss.pair_swiss(lines, played, clubs=clubs, **kwargs)
        except swiss.NoLegalRound:
            return  # a small field out of rounds without rematches: nothing about clubs
        met = {frozenset(pair) for pair in played}
        assert not any(frozenset(p) in met for p in pairing.pairs)
        assert pairing.club_meetings == [p for p in pairing.pairs if frozenset(p) in mates]
        largest = max(
            Counter(clubs[line.id] for line in lines if line.id in clubs).values(), default=0
        )
        if pairing.club_meetings and largest * 2 > len(lines):
            # a club of more than half the lines meets itself whatever the round: it is not
            # tried, the round is the one paired without clubs
            assert pairing.pairs == swiss.pair_swiss(lines, played, **kwargs).pairs
        elif pairing.club_meetings:
            # only when the Dutch rules find no round keeping every club apart
            with pytest.raises(swiss.NoLegalRound):
                swiss.pair_swiss(lines, played, forbidden=mates, **kwargs)
        vp: dict[int, float] = {}
        for home, away in pairing.pairs:
            vp[home], vp[away] = next(results)
        if pairing.bye is not None:
            vp[pairing.bye] = 2
        byes = [pairing.bye] if pairing.bye is not None else []
        rounds.append(swiss.PlayedRound(pairs=pairing.pairs, byes=byes, vp=vp))
