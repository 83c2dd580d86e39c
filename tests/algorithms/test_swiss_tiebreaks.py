"""Swiss tie-breaks on VP through the standings registry, and scored byes in the standings."""

from tournaments.algorithms.standings import PlayedMatch, TieBreak, rank_group
from tournaments.algorithms.vp import Outcome


def _match(home, away, home_vp, winner, round_number):
    away_vp = 20 - home_vp
    return PlayedMatch(
        home=home,
        away=away,
        home_points=home_vp,
        away_points=away_vp,
        home_vp=home_vp,
        away_vp=away_vp,
        home_mp=home_vp - away_vp,
        away_mp=away_vp - home_vp,
        winner=winner,
        round_number=round_number,
    )


def _bye(line, vp, round_number):
    return PlayedMatch(
        home=line,
        away=None,
        home_points=0,
        away_points=0,
        home_vp=vp,
        away_vp=0,
        home_mp=0,
        away_mp=0,
        winner=line,
        outcome=Outcome.BYE,
        round_number=round_number,
    )


# round 1: A beats B 15-5, C bye 12; round 2: C beats A 14-6, B bye 12; round 3: B draws C 10-10,
# A bye 12.  VP: A 15+6+12 = 33, B 5+12+10 = 27, C 12+14+10 = 36.
MATCHES = [
    _match("A", "B", 15, "A", 1),
    _bye("C", 12, 1),
    _match("C", "A", 14, "C", 2),
    _bye("B", 12, 2),
    _match("B", "C", 10, None, 3),
    _bye("A", 12, 3),
]
SWISS = [TieBreak.BUCHHOLZ, TieBreak.BUCHHOLZ_CUT1, TieBreak.SONNEBORN_BERGER, TieBreak.PROGRESSIVE]


def test_scored_byes_count_in_vp_but_not_as_played():
    rows = {row.line_id: row for row in rank_group(["A", "B", "C"], MATCHES, [], lots_seed=1)}
    assert {line: row.vp for line, row in rows.items()} == {"A": 33, "B": 27, "C": 36}
    assert all(row.played == 2 for row in rows.values())


def test_buchholz_sonneborn_berger_and_progressive_score():
    rows = {
        row.line_id: row.tiebreak_values
        for row in rank_group(["A", "B", "C"], MATCHES, SWISS, lots_seed=1)
    }
    # Buchholz: opponents' VP; A met B (27) and C (36)
    assert rows["A"][TieBreak.BUCHHOLZ] == 63
    assert rows["A"][TieBreak.BUCHHOLZ_CUT1] == 36
    # Sonneborn-Berger: beaten opponents' VP, half of those drawn with
    assert rows["A"][TieBreak.SONNEBORN_BERGER] == 27
    assert rows["B"][TieBreak.SONNEBORN_BERGER] == 18
    assert rows["C"][TieBreak.SONNEBORN_BERGER] == 33 + 13.5
    # progressive: running totals after each round; A 15, 21, 33
    assert rows["A"][TieBreak.PROGRESSIVE] == 15 + 21 + 33
    assert rows["C"][TieBreak.PROGRESSIVE] == 12 + 26 + 36


def test_a_swiss_tiebreak_splits_lines_level_on_vp():
    matches = [_match("A", "B", 10, None, 1), _match("C", "D", 20, "C", 1)]
    matches += [_match("A", "C", 10, None, 2), _match("B", "D", 10, None, 2)]
    ranked = rank_group(["A", "B", "C", "D"], matches, [TieBreak.BUCHHOLZ], lots_seed=1)
    # A and B both have 20 VP; A met C (30 VP), B met D (10): A first
    order = [row.line_id for row in ranked]
    assert order.index("A") < order.index("B")
