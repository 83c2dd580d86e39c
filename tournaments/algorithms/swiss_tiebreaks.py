"""Swiss tie-breaks from FIDE's list, on VP: Buchholz, Buchholz cut 1, Sonneborn-Berger,
progressive score.

FIDE defines them on game points; our standings rank by VP first, so the "score" of a line here
is its VP total (byes included), which is what the tie-break compares after VP. Readings:

- Buchholz: the sum of the VP totals of every opponent met (one term per meeting; a bye adds
  nothing, as FIDE's unplayed rounds count nothing here).
- Buchholz cut 1: Buchholz without the lowest opponent's term (nothing cut with fewer than two).
- Sonneborn-Berger: the VP totals of the opponents beaten, plus half of those drawn with.
- Progressive score: the sum of the running VP totals after each round the line played.

Each is a plain function of :class:`SwissTotals`; ``SWISS_TIEBREAKS`` maps the tie-break value
(as stored in ``tournaments.algorithms.standings.TieBreak``) to its function.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

LineId = TypeVar("LineId", bound=Hashable)
_Line_co = TypeVar("_Line_co", bound=Hashable, covariant=True)


class _LineTotals(Protocol[_Line_co]):
    @property
    def vp(self) -> int: ...
    @property
    def meetings(self) -> Sequence[tuple[_Line_co, int]]: ...
    @property
    def beaten(self) -> Sequence[_Line_co]: ...
    @property
    def drawn_with(self) -> Sequence[_Line_co]: ...
    @property
    def vp_by_round(self) -> Sequence[tuple[int, int]]: ...


@dataclass(frozen=True)
class SwissTotals(Generic[LineId]):
    """What the Swiss tie-breaks read: per line its VP total, opponents and round VP."""

    vp: Mapping[LineId, int]
    opponents: Mapping[LineId, Sequence[LineId]]
    beaten: Mapping[LineId, Sequence[LineId]]
    drawn_with: Mapping[LineId, Sequence[LineId]]
    vp_by_round: Mapping[LineId, Sequence[tuple[int, int]]]

    @classmethod
    def of(cls, totals: Mapping[LineId, _LineTotals[LineId]]) -> SwissTotals[LineId]:
        return cls(
            vp={line: t.vp for line, t in totals.items()},
            opponents={line: [opp for opp, _vp in t.meetings] for line, t in totals.items()},
            beaten={line: list(t.beaten) for line, t in totals.items()},
            drawn_with={line: list(t.drawn_with) for line, t in totals.items()},
            vp_by_round={line: list(t.vp_by_round) for line, t in totals.items()},
        )


def buchholz(totals: SwissTotals[LineId]) -> dict[LineId, float]:
    return {
        line: sum(totals.vp.get(opp, 0) for opp in opponents)
        for line, opponents in totals.opponents.items()
    }


def buchholz_cut1(totals: SwissTotals[LineId]) -> dict[LineId, float]:
    result: dict[LineId, float] = {}
    for line, opponents in totals.opponents.items():
        terms = sorted(totals.vp.get(opp, 0) for opp in opponents)
        result[line] = sum(terms[1:]) if len(terms) > 1 else sum(terms)
    return result


def sonneborn_berger(totals: SwissTotals[LineId]) -> dict[LineId, float]:
    return {
        line: sum(totals.vp.get(opp, 0) for opp in totals.beaten.get(line, ()))
        + sum(totals.vp.get(opp, 0) for opp in totals.drawn_with.get(line, ())) / 2
        for line in totals.vp
    }


def progressive(totals: SwissTotals[LineId]) -> dict[LineId, float]:
    result: dict[LineId, float] = {}
    for line, rounds in totals.vp_by_round.items():
        running = 0
        cumulative = 0
        # by round; within a round (or without round numbers) by VP, so the input order of the
        # matches never changes the result
        for _round, vp in sorted(rounds):
            running += vp
            cumulative += running
        result[line] = cumulative
    return result


SWISS_TIEBREAKS: dict[str, Callable[[SwissTotals[Any]], dict[Any, float]]] = {
    "buchholz": buchholz,
    "buchholz_cut1": buchholz_cut1,
    "sonneborn_berger": sonneborn_berger,
    "progressive": progressive,
}
