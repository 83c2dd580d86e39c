"""Swiss rounds by the FIDE Dutch system, through the ``caissify-pairings`` library.

The library (Apache-2.0, PyPI) implements FIDE C.04.3 and is cross-checked against the
FIDE-endorsed bbpPairings; we do not approximate the Dutch rules ourselves. This module only
translates: our lines become its players, home plays the part of white and away of black, and a
line's score is its VP total as our standings count it (so the pairing follows the same order
the standings show). It owes the library, per line, the history the Dutch rules read: the sides
played (home/away per played match), the floats (a line paired with a higher score floated
up, with a lower one down, a bye is a downfloat) and the byes had; :func:`line_histories`
derives them from the rounds exactly as the library's own checker derives them from a
tournament report file (a test compares the two).

Cost: the library runs repeated maximum-weight matchings over the whole field (about one per
line), each with ``networkx.max_weight_matching``. While we pair, that function answers through
:mod:`tournaments.algorithms.blossom`, the same algorithm visiting in the same order (so the same
matching, ties included) about three times faster (the whole round about twice); see
``docs/performance.md`` for what that means for large fields.
"""

from __future__ import annotations

import contextlib
import io
import logging
import threading
import warnings
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import networkx
from caissify_pairings import MissingFloatHistoryWarning, generate_pairings

from tournaments.algorithms import blossom

logger = logging.getLogger(__name__)

HOME = "white"
AWAY = "black"

MAX_LINES = 140
"""The largest field the Dutch engine pairs in a few seconds: its cost grows as about the 3.3rd
power of the field (round 8 with our matcher: 2.25 s of CPU at 100 lines, 6.0 s at 140, some
minutes at 500; ``docs/performance.md``).
Larger opens play Danish rounds."""


class NoLegalRound(ValueError):
    """Every way to pair the round repeats a meeting (or gives a second bye)."""


class ForbiddenInRound(NoLegalRound):
    """The round cannot keep apart a pair the organizer forbids."""


def _apart_in_round_one(
    pairs: list[tuple[int, int]], forbidden: set[frozenset[int]], start: Mapping[int, int]
) -> list[tuple[int, int]]:
    """The first round, which the engine pairs without a history to read (each table a line
    of the top half against one of the bottom half): a forbidden pair in it swaps its
    bottom-half line with the nearest table's, the transposition an arbiter makes by hand
    (1–5 forbidden: 1–6 and 2–5). Each line keeps its side."""

    def swap(pair: tuple[int, int], out: int, into: int) -> tuple[int, int]:
        return (into, pair[1]) if pair[0] == out else (pair[0], into)

    pairs = list(pairs)
    for index in range(len(pairs)):
        if frozenset(pairs[index]) not in forbidden:
            continue
        nearest = sorted(
            (other for other in range(len(pairs)) if other != index),
            key=lambda other: (abs(other - index), other < index),
        )
        for other in nearest:
            low = max(pairs[index], key=lambda line: start.get(line, 0))
            other_low = max(pairs[other], key=lambda line: start.get(line, 0))
            mine = swap(pairs[index], low, other_low)
            theirs = swap(pairs[other], other_low, low)
            if frozenset(mine) not in forbidden and frozenset(theirs) not in forbidden:
                pairs[index], pairs[other] = mine, theirs
                break
    return pairs


@dataclass(frozen=True)
class PlayedRound:
    """One round as the pairing reads it: ``pairs`` as (home, away), ``byes`` (lines that sat
    out with a score), and each line's VP earned in it (byes included)."""

    pairs: Sequence[tuple[int, int]]
    byes: Sequence[int] = ()
    vp: Mapping[int, float] = field(default_factory=dict)


@dataclass
class SwissLine:
    """A line as the Dutch system reads it; ``start`` is its pairing number (1 = top seed)."""

    id: int
    start: int
    score: float = 0.0
    rating: float = 0.0
    sides: list[str] = field(default_factory=list)
    floats: list[str] = field(default_factory=list)
    byes: int = 0

    def as_player(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": str(self.id),
            "score": float(self.score),
            "rating": self.rating,
            "starting_number": self.start,
            "color_hist": list(self.sides),
            "float_history": list(self.floats),
            "bye_count": self.byes,
        }


@dataclass(frozen=True)
class SwissPairing:
    """The next round: ``pairs`` as (home, away) in table order, and the bye line or ``None``;
    ``club_meetings``: the pairs of club-mates in it (with ``clubs``, only when no round of
    the Dutch rules avoids them all)."""

    pairs: list[tuple[int, int]]
    bye: int | None
    club_meetings: list[tuple[int, int]] = field(default_factory=list)


def line_histories(
    start_order: Sequence[int],
    rounds: Sequence[PlayedRound],
    ratings: Mapping[int, float] | None = None,
) -> tuple[list[SwissLine], set[tuple[int, int]]]:
    """The library's input after ``rounds``: every line's score, sides, floats and byes, and
    the pairs already played."""
    ratings = ratings or {}
    lines = {
        line: SwissLine(id=line, start=number, rating=ratings.get(line, 0.0))
        for number, line in enumerate(start_order, start=1)
    }
    played: set[tuple[int, int]] = set()
    for played_round in rounds:
        before = {line: row.score for line, row in lines.items()}
        for home, away in played_round.pairs:
            played.add((home, away))
            for line, opponent, side in ((home, away, HOME), (away, home, AWAY)):
                row = lines[line]
                row.sides.append(side)
                if before[line] > before[opponent]:
                    row.floats.append("down")
                elif before[line] < before[opponent]:
                    row.floats.append("up")
                else:
                    row.floats.append("none")
        for line in played_round.byes:
            # as the library's own checker reads a bye (after bbpPairings): a downfloat, and
            # no side, since only played games count for the colour preference
            lines[line].floats.append("down")
            lines[line].byes += 1
        for line, vp in played_round.vp.items():
            lines[line].score += vp
    return list(lines.values()), played


_networkx_matching = networkx.max_weight_matching
_patch_lock = threading.Lock()
_patch_users = 0
_pairing_here = threading.local()


def _matching(
    graph: networkx.Graph[Any], maxcardinality: bool = False, weight: str = "weight"
) -> set[tuple[Any, Any]]:
    """``networkx.max_weight_matching`` while a thread pairs a Swiss round: the same answer,
    from :mod:`blossom` when this thread is pairing and the weights are integers."""
    if getattr(_pairing_here, "active", False):
        # the library builds networkx graphs; their adjacency dict is what blossom reads
        pairs = blossom.max_weight_matching(cast(Any, graph)._adj, maxcardinality, weight)
        if pairs is not None:
            return pairs
    return cast(
        set[tuple[Any, Any]],
        _networkx_matching(graph, maxcardinality=maxcardinality, weight=weight),
    )


@contextlib.contextmanager
def _fast_matching() -> Iterator[None]:
    """Route the library's ``networkx.max_weight_matching`` calls to :func:`_matching` for the
    duration (the library looks the function up on the module at each call). Other threads
    that call networkx meanwhile reach networkx's own function through it; the last pairing
    to finish puts networkx's back."""
    global _patch_users
    with _patch_lock:
        if _patch_users == 0:
            networkx.max_weight_matching = _matching  # type: ignore[assignment]  # same call
        _patch_users += 1
    _pairing_here.active = True
    try:
        yield
    finally:
        _pairing_here.active = False
        with _patch_lock:
            _patch_users -= 1
            if _patch_users == 0:
                networkx.max_weight_matching = _networkx_matching


def club_pairs(lines: Collection[int], clubs: Mapping[int, str]) -> set[frozenset[int]]:
    """Every pair of club-mates among ``lines`` (``clubs``: a club key per line, empty or
    missing for none)."""
    by_club: dict[str, list[int]] = {}
    for line in lines:
        if clubs.get(line):
            by_club.setdefault(clubs[line], []).append(line)
    return {
        frozenset((a, b))
        for mates in by_club.values()
        for index, a in enumerate(mates)
        for b in mates[index + 1 :]
    }


def pair_swiss(
    lines: Sequence[SwissLine],
    played: set[tuple[int, int]],
    *,
    round_number: int,
    total_rounds: int,
    bye_score: float = 0.0,
    top_seed_home: bool = True,
    forbidden: Collection[frozenset[int]] | Collection[tuple[int, int]] = (),
    clubs: Mapping[int, str] | None = None,
) -> SwissPairing:
    """Pair ``round_number`` by the FIDE Dutch system (lines absent from ``lines`` sit out).

    ``forbidden`` pairs (the organizer's) never meet: once lines have met, the engine is told
    they have met already, which its absolute criterion (no rematch) then keeps apart; the
    colours and floats it reads come from ``lines`` and are not touched. Before any meeting
    (the engine reads no history then) a forbidden pair in its answer swaps opponents with the
    nearest table, as an arbiter does by hand. :class:`ForbiddenInRound` when neither works.

    ``clubs`` (a club key per line, when the stage keeps clubs apart): club-mates are kept
    apart the same way, as if they had met. When no round of the Dutch rules avoids every
    club meeting without a rematch (a club of more than half the lines is not even tried),
    the round is paired as without clubs and ``club_meetings`` names the club-mates who meet:
    the engine cannot weigh how many, so that is not proven the fewest."""
    if len(lines) < 2:
        raise ValueError("a Swiss round needs at least two lines")
    if round_number > 1 and played and not any(line.floats for line in lines):
        raise ValueError("from round 2 the Dutch system needs each line's float history")
    present = {line.id for line in lines}
    forbidden_set = {frozenset(pair) for pair in forbidden}
    mates = club_pairs(present, clubs or {})
    args = (lines, played, round_number, total_rounds, bye_score, top_seed_home)
    if mates and _largest_club(present, clubs or {}) * 2 <= len(present):
        try:
            return _pair_round(*args, forbidden_set | mates, no_rematch=True)
        except NoLegalRound:
            pass  # no round keeps every club apart: paired as without clubs
    pairing = _pair_round(*args, forbidden_set)
    meetings = [pair for pair in pairing.pairs if frozenset(pair) in mates]
    return SwissPairing(pairs=pairing.pairs, bye=pairing.bye, club_meetings=meetings)


def _largest_club(lines: Collection[int], clubs: Mapping[int, str]) -> int:
    sizes: dict[str, int] = {}
    for line in lines:
        if clubs.get(line):
            sizes[clubs[line]] = sizes.get(clubs[line], 0) + 1
    return max(sizes.values(), default=0)


def _pair_round(
    lines: Sequence[SwissLine],
    played: set[tuple[int, int]],
    round_number: int,
    total_rounds: int,
    bye_score: float,
    top_seed_home: bool,
    forbidden_set: set[frozenset[int]],
    *,
    no_rematch: bool = False,
) -> SwissPairing:
    """One call of the engine, with ``forbidden_set`` kept apart (see :func:`pair_swiss`);
    ``no_rematch``: a round that repeats a meeting is refused too (:class:`NoLegalRound`)."""
    present = {line.id for line in lines}
    previous = {pair for pair in played if pair[0] in present and pair[1] in present}
    met = {frozenset(pair) for pair in previous}
    # before any meeting the engine reads no history (and warns if given one without floats):
    # the first round is then made apart by hand below
    first_meetings = not previous
    if not first_meetings:
        for pair in forbidden_set:
            a, b = tuple(pair)
            if a in present and b in present:
                previous |= {(a, b), (b, a)}
    with (
        warnings.catch_warnings(),
        contextlib.redirect_stdout(io.StringIO()),
        _fast_matching(),
    ):
        # the engine prints its diagnostics; they are not ours to show
        warnings.simplefilter("error", MissingFloatHistoryWarning)
        rows = cast(
            list[dict[str, Any]],
            generate_pairings(
                system="dutch",
                players=[line.as_player() for line in lines],
                previous_pairings=previous,
                round_number=round_number,
                total_rounds=max(total_rounds, round_number),
                bye_value=bye_score,
                max_byes_per_player=1,
                initial_color=HOME if top_seed_home else AWAY,
            ),
        )
    pairs: list[tuple[int, int]] = []
    bye: int | None = None
    for row in sorted(rows, key=lambda row: int(row["table"])):
        if row.get("black_id") is None:
            bye = int(row["white_id"])
        else:
            pairs.append((int(row["white_id"]), int(row["black_id"])))
    if forbidden_set and first_meetings:
        pairs = _apart_in_round_one(pairs, forbidden_set, {line.id: line.start for line in lines})
    if any(frozenset(pair) in forbidden_set for pair in pairs):
        raise ForbiddenInRound(f"round {round_number} cannot keep every forbidden pair apart")
    if no_rematch and any(frozenset(pair) in met for pair in pairs):
        raise NoLegalRound(f"round {round_number} repeats a meeting")
    seated = [line for pair in pairs for line in pair] + ([bye] if bye is not None else [])
    if sorted(seated) != sorted(present):
        # the engine leaves lines out when no round without rematches exists
        raise NoLegalRound(f"no legal Swiss round {round_number} for {len(present)} lines")
    return SwissPairing(pairs=pairs, bye=bye)
