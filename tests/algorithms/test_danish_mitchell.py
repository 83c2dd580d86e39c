"""Danish and Mitchell pairings: property tests over 2–500 lines and up to 15 rounds."""

from __future__ import annotations

import random

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tournaments.algorithms import danish, mitchell

BOUNDED = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _perfect_without_rematch_exists(lines, met) -> bool:
    graph = nx.Graph()
    graph.add_nodes_from(lines)
    for i, a in enumerate(lines):
        for b in lines[i + 1 :]:
            if frozenset((a, b)) not in met:
                graph.add_edge(a, b)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    return 2 * len(matching) == len(lines)


def _simulate(n_lines: int, n_rounds: int, seed: int):
    """Play ``n_rounds`` Danish rounds with random results; yield each round's checks."""
    rng = random.Random(seed)
    order = list(range(1, n_lines + 1))
    met: set[frozenset[int]] = set()
    byes: dict[int, int] = {}
    score = dict.fromkeys(order, 0)
    for _round in range(n_rounds):
        pairing = danish.pair_danish(order, met, byes)
        yield order, set(met), dict(byes), pairing
        for a, b in pairing.pairs:
            met.add(frozenset((a, b)))
            vp = rng.randint(0, 20)
            score[a] += vp
            score[b] += 20 - vp
        if pairing.bye is not None:
            byes[pairing.bye] = byes.get(pairing.bye, 0) + 1
            score[pairing.bye] += 12
        order = sorted(order, key=lambda line: (-score[line], line))


@BOUNDED
@given(
    n_lines=st.one_of(st.integers(2, 24), st.integers(25, 500)),
    n_rounds=st.integers(1, 15),
    seed=st.integers(0, 2**32),
)
def test_danish_round_is_a_complete_pairing_without_avoidable_rematches(n_lines, n_rounds, seed):
    for order, met, byes, pairing in _simulate(n_lines, n_rounds, seed):
        seated = [line for pair in pairing.pairs for line in pair]
        if pairing.bye is not None:
            seated.append(pairing.bye)
        assert sorted(seated) == sorted(order), "every line plays once or has the bye"
        assert (pairing.bye is not None) == (len(order) % 2 == 1)
        rematches = sum(1 for a, b in pairing.pairs if frozenset((a, b)) in met)
        assert rematches == pairing.rematches
        if rematches:
            playing = [line for line in order if line != pairing.bye]
            others = [line for line in order if byes.get(line, 0) == byes.get(pairing.bye, 0)]
            assert not _perfect_without_rematch_exists(playing, met) or len(others) > 1
            if pairing.bye is None:
                assert not _perfect_without_rematch_exists(order, met)
        if pairing.bye is not None:
            # the lowest-ranked line among those with the fewest byes
            fewest = min(byes.get(line, 0) for line in order)
            assert byes.get(pairing.bye, 0) == fewest
            if not rematches:
                below = order[order.index(pairing.bye) + 1 :]
                # a lower line without a bye was passed over only to avoid a rematch
                assert all(byes.get(line, 0) > fewest for line in below) or pairing.bye != (
                    danish.choose_bye(order, byes)
                )


@BOUNDED
@given(n_lines=st.integers(2, 500), n_rounds=st.integers(1, 15), seed=st.integers(0, 2**32))
def test_danish_each_line_has_at_most_one_bye(n_lines, n_rounds, seed):
    rounds = list(_simulate(n_lines, n_rounds, seed))
    _order, _met, byes, last = rounds[-1]
    byes = dict(byes)
    if last.bye is not None:
        byes[last.bye] = byes.get(last.bye, 0) + 1
    if n_rounds <= n_lines:
        assert all(count <= 1 for count in byes.values())


@BOUNDED
@given(n_lines=st.integers(2, 500), n_rounds=st.integers(1, 15), seed=st.integers(0, 2**32))
def test_danish_keeps_the_standing_order_when_it_has_no_rematch(n_lines, n_rounds, seed):
    """1–2, 3–4, … exactly, whenever none of those pairs met before."""
    for order, met, byes, pairing in _simulate(n_lines, n_rounds, seed):
        playing = list(order)
        if len(order) % 2:
            playing.remove(danish.choose_bye(order, byes))
        straight = list(zip(playing[::2], playing[1::2], strict=True))
        if not any(frozenset(pair) in met for pair in straight):
            assert pairing.pairs == straight
        else:
            # the top line meets the best-ranked line it has not met yet, when the pairing
            # needed no repair further up
            top = playing[0]
            first_fresh = next(
                (line for line in playing[1:] if frozenset((top, line)) not in met), None
            )
            if first_fresh is not None and pairing.pairs[0][0] == top and not pairing.rematches:
                greedy, leftover = danish._greedy(playing, met)
                if not leftover:
                    assert pairing.pairs == greedy


def test_danish_repairs_the_bottom_with_a_matching_when_swaps_get_stuck():
    # 1..6; the bottom four have all met each other except 3-6 and 4-5 ... greedy takes 1-2,
    # 3-4 and is left with 5-6, who met: the matching must find 1-2, 3-6, 4-5
    order = [1, 2, 3, 4, 5, 6]
    met = {frozenset(p) for p in [(5, 6), (3, 5), (4, 6), (3, 4)]}
    pairing = danish.pair_danish(order, met)
    assert pairing.rematches == 0
    assert {frozenset(p) for p in pairing.pairs} == {
        frozenset((1, 2)),
        frozenset((3, 6)),
        frozenset((4, 5)),
    }


def test_danish_allows_a_rematch_only_when_none_can_be_avoided():
    order = [1, 2, 3, 4]
    met = {frozenset(p) for p in [(1, 2), (1, 3), (1, 4)]}
    pairing = danish.pair_danish(order, met)
    assert pairing.rematches == 1


def test_danish_bye_goes_to_the_lowest_line_without_one():
    pairing = danish.pair_danish([1, 2, 3, 4, 5], set(), {5: 1})
    assert pairing.bye == 4
    assert pairing.pairs == [(1, 2), (3, 5)]


def test_danish_refuses_a_line_twice():
    with pytest.raises(ValueError):
        danish.pair_danish([1, 2, 2])


@BOUNDED
@given(n_lines=st.integers(2, 500), data=st.data())
def test_mitchell_full_movement_meets_every_ns_ew_pair_exactly_once(n_lines, data):
    order = list(range(n_lines))
    n_tables = mitchell.table_count(n_lines)
    rounds = data.draw(st.integers(1, min(15, n_tables)))
    arrow = data.draw(st.booleans())
    seats = mitchell.directions(order)
    ns = {line for line, seat in seats.items() if seat.direction is mitchell.Direction.NORTH_SOUTH}
    ew = set(order) - ns
    meetings: set[tuple[int, int]] = set()
    byes: dict[int, int] = {}
    for number, tables in enumerate(
        mitchell.mitchell_schedule(order, rounds=rounds, arrow_switch=arrow), start=1
    ):
        assert [t.table for t in tables] == list(range(1, n_tables + 1))
        seated = [t.ns for t in tables] + [t.ew for t in tables if t.ew is not None]
        assert sorted(seated) == order
        for table in tables:
            assert table.ns in ns
            assert mitchell.seat_in_round(seats[table.ns], number, n_tables).table == table.table
            if table.ew is None:
                byes[table.ns] = byes.get(table.ns, 0) + 1
                continue
            assert table.ew in ew
            assert mitchell.seat_in_round(seats[table.ew], number, n_tables).table == table.table
            assert (table.ns, table.ew) not in meetings
            meetings.add((table.ns, table.ew))
            assert table.ns_home == (not (arrow and number == rounds))
    assert all(count <= 1 for count in byes.values())
    if rounds == n_tables:
        assert meetings == {(a, b) for a in ns for b in ew}


@pytest.mark.parametrize("n_lines", [8, 9, 14])
def test_mitchell_east_west_moves_up_one_table(n_lines):
    order = list(range(n_lines))
    n_tables = mitchell.table_count(n_lines)
    first = mitchell.mitchell_round(order, 1)
    second = mitchell.mitchell_round(order, 2)
    where = {t.ew: t.table for t in second if t.ew is not None}
    for table in first:
        if table.ew is not None:
            assert where[table.ew] == table.table % n_tables + 1


def test_mitchell_refuses_more_rounds_than_tables():
    with pytest.raises(ValueError):
        mitchell.mitchell_round(list(range(6)), 1, rounds=4)
