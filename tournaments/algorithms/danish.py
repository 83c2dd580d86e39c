"""Danish pairing ("danese"): after each round 1st plays 2nd, 3rd plays 4th, without rematches.

Input is the current standing order (best first), the pairs that have already met and the byes
each line has had; output is the next round's pairs and bye. The steps, cheapest first:

1. Odd number of lines: the bye goes to the lowest-ranked line that has not had one (if every
   line has had one, to the lowest-ranked among those with the fewest).
2. Top down, each unpaired line meets the next unpaired line it has not met yet (the simple
   swaps a tournament director makes by hand). When that reaches the bottom, done.
3. When it gets stuck (the last lines have all met), the pairs at the top are kept and the
   bottom of the table is paired again by a maximum-weight matching (networkx) over the pairs
   that have not met, whose weights prefer the smallest moves in the standing order (the sum
   of the squared rank distances is minimal); the re-paired part grows upwards until a
   pairing without rematches exists, up to the whole table.
4. Only when no pairing of the whole table avoids every rematch are rematches allowed, as few
   as possible.

Clubs kept apart and forbidden pairings: a pair the organizer forbids is never made (no step
uses it; when no pairing of the round avoids every forbidden pair, :class:`NoLegalPairing`).
With ``clubs`` given, steps 2 and 3 treat two lines of one club like two lines that have met;
only when no pairing of the whole table avoids both (or one club has more than half the lines)
is the table paired by one matching whose weights put, in this order, the fewest rematches, then
the fewest club-mates meeting, then the smallest moves in the standing order (so club-mates meet
only when no other pairing without rematches exists, and then as few as possible). That matching
covers the whole table up to ``EXACT_FALLBACK`` (64) lines; a larger table keeps the top pairs
of step 2 and re-pairs its bottom, which is no longer a proof of the fewest club meetings (a
club of most of the field still meets itself only as often as it must: tested).

Cost: step 2 is O(n·k) for k earlier rounds; step 3 works on a window of ranks around each
line, so a 500-line open pairs in milliseconds unless the bottom is crowded with rematches.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

import networkx as nx

from tournaments.algorithms import blossom

L = TypeVar("L", bound=Hashable)


@dataclass(frozen=True)
class RoundPairing(Generic[L]):
    """The next round: ``pairs`` (higher-ranked line first, in standing order), the ``bye`` line
    or ``None``, and how many pairs repeat an earlier meeting (0 unless unavoidable)."""

    pairs: list[tuple[L, L]]
    bye: L | None
    rematches: int
    club_meetings: int = 0


class NoLegalPairing(ValueError):
    """Every pairing of the round makes a pair the organizer forbids."""


def _met_set(met: Collection[tuple[L, L]] | Collection[frozenset[L]]) -> set[frozenset[L]]:
    return {frozenset(pair) for pair in met}


def choose_bye(order: Sequence[L], byes: Mapping[L, int]) -> L:
    """The lowest-ranked line with the fewest byes (none, as long as one has not had one)."""
    fewest = min(byes.get(line, 0) for line in order)
    for line in reversed(order):
        if byes.get(line, 0) == fewest:
            return line
    raise ValueError("no line to give the bye to")  # pragma: no cover - order is not empty


def _greedy(order: Sequence[L], met: set[frozenset[L]]) -> tuple[list[tuple[L, L]], list[L]]:
    """Top-down: each line meets the next unpaired line it has not met; the leftovers.
    (``met`` here holds every pair to avoid: met, forbidden, club-mates.)"""
    unpaired = list(order)
    pairs: list[tuple[L, L]] = []
    while len(unpaired) >= 2:
        top = unpaired[0]
        for index in range(1, len(unpaired)):
            if frozenset((top, unpaired[index])) not in met:
                pairs.append((top, unpaired[index]))
                del unpaired[index]
                del unpaired[0]
                break
        else:
            break
    return pairs, unpaired


def _matching(
    lines: Sequence[L], met: set[frozenset[L]], window: int, *, allow_rematch: bool
) -> list[tuple[L, L]] | None:
    """A perfect matching of ``lines`` (rank order) with the smallest squared rank moves, over
    pairs at most ``window`` ranks apart; ``None`` when none exists."""
    count = len(lines)
    graph: nx.Graph[int] = nx.Graph()
    graph.add_nodes_from(range(count))
    top_weight = window * window + 1
    rematch_weight = 1
    if allow_rematch:
        # any fresh pair must outweigh every possible gain from taking a rematch
        top_weight = (window * window + 1) * (count + 1)
    for i in range(count):
        for j in range(i + 1, min(count, i + window + 1)):
            fresh = frozenset((lines[i], lines[j])) not in met
            if fresh:
                graph.add_edge(i, j, weight=top_weight - (j - i) ** 2)
            elif allow_rematch:
                graph.add_edge(i, j, weight=rematch_weight)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    if 2 * len(matching) != count:
        return None
    return [(lines[i], lines[j]) for i, j in sorted((min(a, b), max(a, b)) for a, b in matching)]


def _club_pairs(order: Sequence[L], clubs: Mapping[L, str]) -> set[frozenset[L]]:
    """Every pair of club-mates among ``order``."""
    by_club: dict[str, list[L]] = {}
    for line in order:
        club = clubs.get(line, "")
        if club:
            by_club.setdefault(club, []).append(line)
    return {
        frozenset((a, b))
        for mates in by_club.values()
        for i, a in enumerate(mates)
        for b in mates[i + 1 :]
    }


def _fewest_club_meetings(order: Sequence[L], clubs: Mapping[L, str]) -> int:
    """How many pairs of club-mates meet at least, whatever the pairing of ``order`` (even):
    a club of ``s`` of its ``m`` lines meets itself ``(2s - m) / 2`` times when ``2s > m``
    (only one club can be that large)."""
    sizes: dict[str, int] = {}
    for line in order:
        club = clubs.get(line, "")
        if club:
            sizes[club] = sizes.get(club, 0) + 1
    largest = max(sizes.values(), default=0)
    return max(0, 2 * largest - len(order)) // 2


EXACT_FALLBACK = 64
"""Up to this many lines the last-resort matching considers every pair of the whole table, so
its answer is exact; a larger table keeps the top pairs of the simple moves and re-pairs only
its bottom (a full table of hundreds of lines would take minutes)."""


def _largest_club(order: Sequence[L], club_pairs: set[frozenset[L]]) -> int:
    """The number of lines of the largest club among ``order`` (from its pairs of mates)."""
    if not club_pairs:
        return 1
    mates: dict[L, int] = {}
    for pair in club_pairs:
        for line in pair:
            mates[line] = mates.get(line, 0) + 1
    return max(mates.values()) + 1


def _lexicographic(
    lines: Sequence[L],
    met: set[frozenset[L]],
    forbidden: set[frozenset[L]],
    club_pairs: set[frozenset[L]],
) -> list[tuple[L, L]] | None:
    """A perfect matching of ``lines`` without a forbidden pair: the fewest rematches, then
    the fewest club-mates meeting, then the smallest squared moves; ``None`` if none. Over
    every pair up to :data:`EXACT_FALLBACK` lines, else over pairs within a window of ranks
    (widened until a matching exists)."""
    count = len(lines)
    window = count - 1 if count <= EXACT_FALLBACK else 16
    while True:
        found = _lexicographic_window(lines, met, forbidden, club_pairs, window)
        if found is not None or window >= count - 1:
            return found
        window = min(count - 1, window * 2)


def _large_fallback(
    order: Sequence[L],
    met: set[frozenset[L]],
    forbidden: set[frozenset[L]],
    club_pairs: set[frozenset[L]],
) -> list[tuple[L, L]] | None:
    """A table too large for the exact matching: the simple moves (no rematch, no club-mate,
    no forbidden pair) pair the top, and the bottom they leave (with the lowest pairs of the
    top, up to :data:`EXACT_FALLBACK` lines when it fits) is paired by :func:`_lexicographic`;
    the bottom grows to the whole table while it has no pairing without a forbidden pair."""
    pairs, leftover = _greedy(order, met | forbidden | club_pairs)
    kept = max(0, len(pairs) - max(0, EXACT_FALLBACK - len(leftover)) // 2)
    while True:
        head = pairs[:kept]
        in_head = {line for pair in head for line in pair}
        tail = [line for line in order if line not in in_head]
        found = _lexicographic(tail, met, forbidden, club_pairs)
        if found is not None:
            return head + found
        if kept == 0:
            return None
        kept = max(0, kept - max(1, len(tail) // 2))


def _lexicographic_window(
    lines: Sequence[L],
    met: set[frozenset[L]],
    forbidden: set[frozenset[L]],
    club_pairs: set[frozenset[L]],
    window: int,
) -> list[tuple[L, L]] | None:
    count = len(lines)
    base = window**2 + 1
    club_weight = base * (count + 1)
    fresh_weight = (club_weight + base) * (count + 1)
    graph: nx.Graph[int] = nx.Graph()
    graph.add_nodes_from(range(count))
    for i in range(count):
        for j in range(i + 1, min(count, i + window + 1)):
            pair = frozenset((lines[i], lines[j]))
            if pair in forbidden:
                continue
            weight = base - (j - i) ** 2
            if pair not in met:
                weight += fresh_weight
            if pair not in club_pairs:
                weight += club_weight
            graph.add_edge(i, j, weight=weight)
    # the compiled copy of networkx's algorithm (the same answer, faster): all weights are ints
    matching = blossom.max_weight_matching(cast(Any, graph)._adj, True)
    assert matching is not None
    if 2 * len(matching) != count:
        return None
    return [(lines[i], lines[j]) for i, j in sorted((min(a, b), max(a, b)) for a, b in matching)]


def _pair_even(
    order: Sequence[L],
    met: set[frozenset[L]],
    forbidden: set[frozenset[L]] | None = None,
    club_pairs: set[frozenset[L]] | None = None,
) -> tuple[list[tuple[L, L]], int, int]:
    """The pairs, the rematches among them and the club-mates meeting among them."""
    forbidden = forbidden or set()
    club_pairs = club_pairs or set()
    avoid = met | forbidden | club_pairs if forbidden or club_pairs else met
    pairs, leftover = _greedy(order, avoid)
    if not leftover:
        return pairs, 0, 0
    kept = len(pairs)
    step = max(1, len(leftover))
    # a club with more than half the table meets itself whatever the pairing: no search for
    # a pairing without club-mates (it would try the whole table in vain)
    hopeless = _largest_club(order, club_pairs) * 2 > len(order)
    while not hopeless:
        kept = max(0, kept - step)
        head = pairs[:kept]
        in_head = {line for pair in head for line in pair}
        tail = [line for line in order if line not in in_head]
        window = min(len(tail) - 1, max(8, 2 * step + 4))
        while True:
            tail_pairs = _matching(tail, avoid, window, allow_rematch=False)
            if tail_pairs is not None:
                return head + tail_pairs, 0, 0
            if window >= len(tail) - 1:
                break
            window = min(len(tail) - 1, window * 2)
        if kept == 0:
            break
        step *= 2
    if not forbidden and not club_pairs:
        forced = _matching(order, met, len(order) - 1, allow_rematch=True)
        assert forced is not None  # a complete graph on an even number of nodes
    else:
        if len(order) <= EXACT_FALLBACK:
            found = _lexicographic(order, met, forbidden, club_pairs)
        else:
            found = _large_fallback(order, met, forbidden, club_pairs)
        if found is None:
            raise NoLegalPairing("every pairing of the round makes a forbidden pair")
        forced = found
    rematches = sum(1 for pair in forced if frozenset(pair) in met)
    meetings = sum(1 for pair in forced if frozenset(pair) in club_pairs)
    return forced, rematches, meetings


def pair_danish(
    order: Sequence[L],
    met: Collection[tuple[L, L]] | Collection[frozenset[L]] = (),
    byes: Mapping[L, int] | None = None,
    *,
    clubs: Mapping[L, str] | None = None,
    forbidden: Collection[tuple[L, L]] | Collection[frozenset[L]] = (),
) -> RoundPairing[L]:
    """Pair the next Danish round from the standing order (best first).

    ``clubs`` (a club key per line; empty or missing: none) keeps club-mates apart unless no
    other pairing without rematches exists; ``forbidden`` pairs never meet (raises
    :class:`NoLegalPairing` when every pairing of the round would make one)."""
    if len(set(order)) != len(order):
        raise ValueError("a line appears twice in the standing order")
    met_pairs = _met_set(met)
    forbidden_pairs = _met_set(forbidden)
    club_pairs = _club_pairs(order, clubs or {})
    byes = byes or {}
    if len(order) < 2:
        return RoundPairing(pairs=[], bye=order[0] if order else None, rematches=0)
    bye: L | None = None
    playing = list(order)
    if len(order) % 2:
        bye = choose_bye(order, byes)
        playing.remove(bye)
    found: tuple[list[tuple[L, L]], int, int] | None
    try:
        found = _pair_even(playing, met_pairs, forbidden_pairs, club_pairs)
    except NoLegalPairing:
        if bye is None:
            raise
        found = None
    if bye is not None and (found is None or found[1] or found[2]):
        # another line without a bye may leave a table that pairs without rematches (or
        # forbidden pairs, or club-mates meeting)
        fewest = byes.get(bye, 0)
        for candidate in reversed(order):
            if candidate == bye or byes.get(candidate, 0) != fewest:
                continue
            others = [line for line in order if line != candidate]
            if (
                found is not None
                and not found[1]
                and _fewest_club_meetings(others, clubs or {}) >= found[2]
            ):
                # a club of more than half of the others meets itself at least this often:
                # pairing them cannot do better (each try is a whole-table matching)
                continue
            try:
                other = _pair_even(others, met_pairs, forbidden_pairs, club_pairs)
            except NoLegalPairing:
                continue
            if found is None or other[1:] < found[1:]:
                found, bye = other, candidate
                if not found[1] and not found[2]:
                    break
        if found is None:
            raise NoLegalPairing("every pairing of the round makes a forbidden pair")
    assert found is not None
    pairs, rematches, meetings = found
    return RoundPairing(pairs=pairs, bye=bye, rematches=rematches, club_meetings=meetings)


def first_round(
    order: Sequence[L],
    *,
    clubs: Mapping[L, str] | None = None,
    forbidden: Collection[tuple[L, L]] | Collection[frozenset[L]] = (),
) -> RoundPairing[L]:
    """Round 1 in the given order (seed, or a drawn order): 1–2, 3–4, …; a bye to the last
    (club-mates and forbidden pairs apart as in :func:`pair_danish`)."""
    return pair_danish(order, clubs=clubs, forbidden=forbidden)
