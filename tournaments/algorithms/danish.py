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

Cost: step 2 is O(n·k) for k earlier rounds; step 3 works on a window of ranks around each
line, so a 500-line open pairs in milliseconds unless the bottom is crowded with rematches.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import networkx as nx

L = TypeVar("L", bound=Hashable)


@dataclass(frozen=True)
class RoundPairing(Generic[L]):
    """The next round: ``pairs`` (higher-ranked line first, in standing order), the ``bye`` line
    or ``None``, and how many pairs repeat an earlier meeting (0 unless unavoidable)."""

    pairs: list[tuple[L, L]]
    bye: L | None
    rematches: int


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
    """Top-down: each line meets the next unpaired line it has not met; the leftovers."""
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


def _pair_even(order: Sequence[L], met: set[frozenset[L]]) -> tuple[list[tuple[L, L]], int]:
    pairs, leftover = _greedy(order, met)
    if not leftover:
        return pairs, 0
    kept = len(pairs)
    step = max(1, len(leftover))
    while True:
        kept = max(0, kept - step)
        head = pairs[:kept]
        in_head = {line for pair in head for line in pair}
        tail = [line for line in order if line not in in_head]
        window = min(len(tail) - 1, max(8, 2 * step + 4))
        while True:
            tail_pairs = _matching(tail, met, window, allow_rematch=False)
            if tail_pairs is not None:
                return head + tail_pairs, 0
            if window >= len(tail) - 1:
                break
            window = min(len(tail) - 1, window * 2)
        if kept == 0:
            break
        step *= 2
    forced = _matching(order, met, len(order) - 1, allow_rematch=True)
    assert forced is not None  # a complete graph on an even number of nodes
    rematches = sum(1 for pair in forced if frozenset(pair) in met)
    return forced, rematches


def pair_danish(
    order: Sequence[L],
    met: Collection[tuple[L, L]] | Collection[frozenset[L]] = (),
    byes: Mapping[L, int] | None = None,
) -> RoundPairing[L]:
    """Pair the next Danish round from the standing order (best first)."""
    if len(set(order)) != len(order):
        raise ValueError("a line appears twice in the standing order")
    met_pairs = _met_set(met)
    byes = byes or {}
    if len(order) < 2:
        return RoundPairing(pairs=[], bye=order[0] if order else None, rematches=0)
    bye: L | None = None
    playing = list(order)
    if len(order) % 2:
        bye = choose_bye(order, byes)
        playing.remove(bye)
    pairs, rematches = _pair_even(playing, met_pairs)
    if rematches and bye is not None:
        # another line without a bye may leave a table that pairs without rematches
        fewest = byes.get(bye, 0)
        for candidate in reversed(order):
            if candidate == bye or byes.get(candidate, 0) != fewest:
                continue
            others = [line for line in order if line != candidate]
            other_pairs, other_rematches = _pair_even(others, met_pairs)
            if other_rematches < rematches:
                pairs, rematches, bye = other_pairs, other_rematches, candidate
                if not rematches:
                    break
    return RoundPairing(pairs=pairs, bye=bye, rematches=rematches)


def first_round(order: Sequence[L]) -> RoundPairing[L]:
    """Round 1 in the given order (seed, or a drawn order): 1–2, 3–4, …; a bye to the last."""
    return pair_danish(order)
