"""The Valliadi preset's scoring, worked by hand: 3 points a win, 0 a loss; ties broken by point
difference, then points made, then the drawing of lots (the Valliadi's high-card draw)."""

import json
from pathlib import Path

import pytest

from tournaments.algorithms.standings import PlayedMatch, draw_lots, rank_group
from tournaments.algorithms.vp import Outcome, VPTableError, match_score, table_from_dict

DATA = Path(__file__).resolve().parents[2] / "tournaments" / "data"
PRESET = next(
    p for p in json.loads((DATA / "presets.json").read_text()) if p["slug"] == "valliadi-3-0"
)
TABLE = table_from_dict(
    next(
        t
        for t in json.loads((DATA / "vp_tables.json").read_text())
        if t["slug"] == PRESET["vp_table"]
    )
)


def _match(home, away, home_points, away_points):
    winner = home if home_points > away_points else away
    margin = abs(home_points - away_points)
    score = match_score(TABLE, margin, Outcome.COMPLETED)
    return PlayedMatch.from_score(home, away, (home_points, away_points), score, winner=winner)


def test_the_preset_scores_three_for_a_win_and_breaks_ties_as_published():
    assert (TABLE.win_vp, TABLE.loss_vp) == (3, 0)
    assert PRESET["tiebreaks"] == ["mp", "points_scored", "lots"]
    matches = [
        _match("A", "B", 21, 15),  # A +6
        _match("C", "D", 21, 10),  # C +11
        _match("A", "C", 18, 21),  # C +3
        _match("B", "D", 21, 19),  # B +2
        _match("A", "D", 21, 20),  # A +1
        _match("B", "C", 21, 11),  # B +10
    ]
    rows = rank_group("ABCD", matches, PRESET["tiebreaks"], lots_seed=7)
    # A, B, C: two wins each, 6 points. Difference: B +6 (-6+2+10), A +4, C +4 (11+3-10).
    # A and C then by points made: A 60 (21+18+21), C 53 (21+21+11). D lost all three (-11, -2, -1).
    assert [(r.line_id, r.rank, r.vp, r.mp, r.points_scored) for r in rows] == [
        ("B", 1, 6, 6, 57),
        ("A", 2, 6, 4, 60),
        ("C", 3, 6, 4, 53),
        ("D", 4, 0, -14, 49),
    ]


def test_equal_difference_and_points_are_settled_by_the_draw():
    # each beat the other 21-10: 3 points, difference 0 and 31 points made each
    matches = [_match("X", "Y", 21, 10), _match("Y", "X", 21, 10)]
    rows = rank_group(["X", "Y"], matches, PRESET["tiebreaks"], lots_seed=2026)
    lots = draw_lots(["X", "Y"], 2026)
    assert [r.line_id for r in rows] == sorted(["X", "Y"], key=lots.__getitem__)
    assert [r.rank for r in rows] == [1, 2] and not any(r.shared_rank for r in rows)


def test_two_draws_may_not_be_worth_more_than_a_win_and_a_loss():
    table_from_dict(
        {"kind": "win_draw_loss", "win_vp": 3, "draw_vp": 1, "loss_vp": 0, "timeout_min_vp": 3}
    )
    with pytest.raises(VPTableError):
        table_from_dict(
            {"kind": "win_draw_loss", "win_vp": 3, "draw_vp": 2, "loss_vp": 0, "timeout_min_vp": 3}
        )
