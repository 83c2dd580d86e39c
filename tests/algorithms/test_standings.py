"""Group standings: VP, each tie-break deciding on its own, lots, shared ranks, byes."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.algorithms.standings import (
    PlayedMatch,
    TieBreak,
    draw_lots,
    head_to_head_grid,
    rank_group,
)
from tournaments.algorithms.vp import Outcome, load_tables, match_score

ELEVEN = load_tables()["points-11"]
ALL_BUT = list(TieBreak)


def play(home, away, home_points, away_points, outcome=Outcome.COMPLETED, winner=None):
    """A match scored on the 11-point table, the way the ORM layer would hand it over."""
    points = (home_points, away_points)
    if outcome is Outcome.COMPLETED and home_points == away_points:
        score = match_score(ELEVEN, 0, draw=True)
        return PlayedMatch.from_score(home, away, points, score, winner=None, outcome=outcome)
    if winner is None:
        winner = home if home_points > away_points else away
    margin = max(0, abs(home_points - away_points))
    score = match_score(ELEVEN, margin, outcome)
    return PlayedMatch.from_score(home, away, points, score, winner=winner, outcome=outcome)


def order(rows):
    return [row.line_id for row in rows]


def by_line(rows):
    return {row.line_id: row for row in rows}


def tied_on_everything_but(rows, a, b, deciding, tiebreaks):
    """``a`` and ``b`` have the same VP and the same value of every tie-break but ``deciding``."""
    ra, rb = by_line(rows)[a], by_line(rows)[b]
    assert ra.vp == rb.vp
    for tiebreak in tiebreaks:
        if tiebreak not in (deciding, TieBreak.LOTS, TieBreak.HEAD_TO_HEAD):
            assert ra.tiebreak_values[tiebreak] == rb.tiebreak_values[tiebreak], tiebreak
    assert ra.tiebreak_values[deciding] != rb.tiebreak_values[deciding]


def test_vp_ranks_first():
    matches = [play("A", "B", 11, 3), play("B", "C", 11, 5), play("A", "C", 11, 9)]
    rows = rank_group(["C", "B", "A"], matches, [], lots_seed=1)
    assert order(rows) == ["A", "B", "C"]
    assert [row.rank for row in rows] == [1, 2, 3]
    a = rows[0]
    assert (a.played, a.won, a.drawn, a.lost, a.vp, a.mp) == (2, 2, 0, 0, 18 + 11, 8 + 2)
    assert (a.points_scored, a.points_conceded) == (22, 12)
    assert not any(row.shared_rank for row in rows)


def test_mp_decides():
    # 16-4 VP covers 6 and 7 MP: same VP, one MP apart
    matches = [play("A", "C", 11, 4), play("B", "C", 11, 5), play("A", "B", 11, 11)]
    tiebreaks = [TieBreak.HEAD_TO_HEAD, TieBreak.MP, TieBreak.LOTS]
    rows = rank_group(["A", "B", "C"], matches, tiebreaks, lots_seed=1)
    assert order(rows) == ["A", "B", "C"]
    assert by_line(rows)["A"].tiebreak_values[TieBreak.HEAD_TO_HEAD] == 10
    assert by_line(rows)["B"].tiebreak_values[TieBreak.HEAD_TO_HEAD] == 10
    assert (by_line(rows)["A"].mp, by_line(rows)["B"].mp) == (7, 6)
    assert by_line(rows)["A"].tiebreak_values[TieBreak.LOTS] is None  # never needed


def _head_to_head_case():
    return [
        play("A", "B", 11, 9),
        play("A", "C", 9, 11),
        play("B", "C", 11, 9),
        play("A", "D", 11, 11),
        play("B", "D", 11, 11),
        play("C", "D", 11, 6),
    ]


def test_head_to_head_decides():
    tiebreaks = [TieBreak.MP, TieBreak.POINTS_SCORED, TieBreak.MATCHES_WON, TieBreak.HEAD_TO_HEAD]
    rows = rank_group(list("ABCD"), _head_to_head_case(), tiebreaks, lots_seed=1)
    assert order(rows) == ["C", "A", "B", "D"]
    tied_on_everything_but(rows, "A", "B", TieBreak.HEAD_TO_HEAD, tiebreaks)
    assert by_line(rows)["A"].tiebreak_values[TieBreak.HEAD_TO_HEAD] == 12  # won by 2: 12-8
    assert by_line(rows)["B"].tiebreak_values[TieBreak.HEAD_TO_HEAD] == 8
    assert by_line(rows)["C"].tiebreak_values[TieBreak.HEAD_TO_HEAD] is None  # was not tied


def _three_way_case():
    return [
        play("A", "B", 11, 10),
        play("C", "A", 11, 10),
        play("B", "C", 11, 10),
        play("A", "D", 11, 5),
        play("B", "D", 11, 5),
        play("C", "D", 11, 4),
    ]


def test_head_to_head_among_exactly_the_lines_still_tied():
    # A, B, C all on 36 VP. Among the three, head-to-head is 20 each; C has the best MP.
    first = rank_group(
        list("ABCD"), _three_way_case(), [TieBreak.HEAD_TO_HEAD, TieBreak.MP], lots_seed=1
    )
    assert order(first) == ["C", "A", "B", "D"]
    assert [row.rank for row in first] == [1, 2, 2, 4]
    assert [row.shared_rank for row in first] == [False, True, True, False]
    assert {row.tiebreak_values[TieBreak.HEAD_TO_HEAD] for row in first[:3]} == {20}
    # MP first leaves only A and B tied; their own meeting decides (A won it)
    second = rank_group(
        list("ABCD"), _three_way_case(), [TieBreak.MP, TieBreak.HEAD_TO_HEAD], lots_seed=1
    )
    assert order(second) == ["C", "A", "B", "D"]
    assert [row.rank for row in second] == [1, 2, 3, 4]
    values = {row.line_id: row.tiebreak_values[TieBreak.HEAD_TO_HEAD] for row in second}
    assert values == {"A": 11, "B": 9, "C": None, "D": None}


def test_points_scored_decides():
    matches = [play("A", "C", 11, 5), play("B", "C", 12, 6), play("A", "B", 11, 11)]
    tiebreaks = [
        TieBreak.MP,
        TieBreak.HEAD_TO_HEAD,
        TieBreak.MATCHES_WON,
        TieBreak.STRENGTH,
        TieBreak.POINTS_SCORED,
    ]
    rows = rank_group(["A", "B", "C"], matches, tiebreaks, lots_seed=1)
    assert order(rows) == ["B", "A", "C"]
    tied_on_everything_but(rows, "A", "B", TieBreak.POINTS_SCORED, tiebreaks)


def test_matches_won_decides():
    matches = [
        play("A", "C", 11, 10),
        play("D", "A", 11, 10),
        play("B", "E", 10, 10),
        play("B", "F", 11, 11),
    ]
    tiebreaks = [TieBreak.MP, TieBreak.HEAD_TO_HEAD, TieBreak.POINTS_SCORED, TieBreak.MATCHES_WON]
    rows = rank_group(list("ABCDEF"), matches, tiebreaks, lots_seed=1)
    assert order(rows)[:2] == ["A", "B"]
    tied_on_everything_but(rows, "A", "B", TieBreak.MATCHES_WON, tiebreaks)
    assert by_line(rows)["B"].drawn == 2


def test_strength_decides():
    matches = [play("A", "C", 11, 10), play("B", "D", 11, 10), play("C", "E", 14, 0)]
    tiebreaks = [
        TieBreak.MP,
        TieBreak.HEAD_TO_HEAD,
        TieBreak.POINTS_SCORED,
        TieBreak.MATCHES_WON,
        TieBreak.STRENGTH,
    ]
    rows = rank_group(list("ABCDE"), matches, tiebreaks, lots_seed=1)
    a, b = by_line(rows)["A"], by_line(rows)["B"]
    assert order(rows).index("A") < order(rows).index("B")
    tied_on_everything_but(rows, "A", "B", TieBreak.STRENGTH, tiebreaks)
    # A beat C (9 + 20 = 29 VP), B beat D (9 VP)
    assert (a.tiebreak_values[TieBreak.STRENGTH], b.tiebreak_values[TieBreak.STRENGTH]) == (29, 9)


def test_strength_counts_each_win_and_ignores_draws():
    matches = [
        play("A", "B", 11, 5),
        play("B", "A", 11, 9),
        play("A", "B", 11, 5),
        play("A", "C", 11, 11),
    ]
    rows = by_line(rank_group(list("ABC"), matches, [TieBreak.STRENGTH], lots_seed=1))
    vp_b = rows["B"].vp
    assert rows["A"].tiebreak_values[TieBreak.STRENGTH] == 2 * vp_b
    assert rows["C"].tiebreak_values[TieBreak.STRENGTH] == 0


def _mirror_case():
    """A and B have identical records against different opponents; so have C and D."""
    return [play("A", "C", 11, 9), play("B", "D", 11, 9)]


def test_rating_decides_and_unrated_lines_come_last():
    tiebreaks = [
        TieBreak.MP,
        TieBreak.HEAD_TO_HEAD,
        TieBreak.POINTS_SCORED,
        TieBreak.MATCHES_WON,
        TieBreak.STRENGTH,
        TieBreak.RATING,
    ]
    rows = rank_group(
        list("ABCD"), _mirror_case(), tiebreaks, lots_seed=1, ratings={"A": 1500.0, "B": 1600.0}
    )
    assert order(rows)[:2] == ["B", "A"]
    tied_on_everything_but(rows, "A", "B", TieBreak.RATING, tiebreaks)
    rows = rank_group(
        list("ABCD"), _mirror_case(), tiebreaks, lots_seed=1, ratings={"B": 1500.0, "C": -3.0}
    )
    assert order(rows) == ["B", "A", "C", "D"]
    assert by_line(rows)["A"].tiebreak_values[TieBreak.RATING] is None


def test_lines_still_tied_share_a_rank():
    rows = rank_group(["D", "C", "B", "A"], _mirror_case(), [TieBreak.MP], lots_seed=1)
    assert order(rows) == ["A", "B", "C", "D"]  # equal lines are listed in id order
    assert [row.rank for row in rows] == [1, 1, 3, 3]
    assert all(row.shared_rank for row in rows)


def test_lots_decide_reproducibly():
    tiebreaks = [TieBreak.MP, TieBreak.LOTS]
    results = {}
    for seed in range(40):
        rows = rank_group(list("ABCD"), _mirror_case(), tiebreaks, lots_seed=seed)
        again = rank_group(list("DCBA"), list(reversed(_mirror_case())), tiebreaks, lots_seed=seed)
        assert order(rows) == order(again)  # same seed, same order, whatever the input order
        assert [row.rank for row in rows] == [1, 2, 3, 4]
        assert not any(row.shared_rank for row in rows)
        assert sorted(row.tiebreak_values[TieBreak.LOTS] for row in rows[:2]) == [1, 2]
        results[seed] = tuple(order(rows))
    assert len(set(results.values())) > 1  # different seeds can give different orders


def test_draw_lots_is_a_permutation():
    drawn = draw_lots([3, 1, 2], 99)
    assert sorted(drawn) == [1, 2, 3]
    assert sorted(drawn.values()) == [1, 2, 3]
    assert drawn == draw_lots([2, 3, 1], 99)


def test_byes_do_not_count():
    matches = [
        play("A", "B", 11, 6),
        PlayedMatch("C", None, 0, 0, 0, 0, 0, 0, "C", Outcome.BYE),
        PlayedMatch("A", "C", 0, 0, 20, 0, 14, -14, "A", Outcome.BYE),
    ]
    rows = by_line(rank_group(list("ABC"), matches, [], lots_seed=1))
    assert rows["C"].played == 0
    assert rows["C"].vp == 0
    assert rows["A"].played == 1


def test_timeout_win_at_zero_margin_counts_as_a_win():
    matches = [play("A", "B", 5, 5, Outcome.TIMEOUT, winner="B")]
    rows = by_line(rank_group(list("AB"), matches, [TieBreak.MATCHES_WON], lots_seed=1))
    assert (rows["B"].won, rows["B"].vp, rows["B"].mp) == (1, 14, 4)
    assert (rows["A"].lost, rows["A"].vp, rows["A"].mp) == (1, 0, -14)
    assert rows["B"].rank == 1


def test_head_to_head_grid_sums_meetings():
    matches = [
        play("A", "B", 11, 9),
        play("B", "A", 11, 4),
        PlayedMatch("C", None, 0, 0, 0, 0, 0, 0, "C", Outcome.BYE),
    ]
    assert head_to_head_grid(list("ABC"), matches) == {("A", "B"): 12 + 4, ("B", "A"): 8 + 16}


@pytest.mark.parametrize(
    ("line_ids", "match", "message"),
    [
        (["A", "B"], play("A", "Z", 11, 0), "not in the group"),
        (["A", "B"], PlayedMatch("A", "A", 1, 0, 11, 9, 1, -1, "A"), "itself"),
        (["A", "B"], PlayedMatch("A", "B", 1, 0, 11, 9, 1, -1, "Q"), "did not play"),
        (["A", "A"], play("A", "B", 11, 0), "twice"),
    ],
)
def test_inconsistent_input(line_ids, match, message):
    with pytest.raises(ValueError, match=message):
        rank_group(line_ids, [match], [], lots_seed=1)


def test_repeated_tiebreak_is_refused():
    with pytest.raises(ValueError, match="twice"):
        rank_group(["A"], [], [TieBreak.MP, TieBreak.MP], lots_seed=1)


def test_tiebreak_values_are_stored_values():
    assert [t.value for t in TieBreak] == [
        "mp",
        "head_to_head",
        "points_scored",
        "matches_won",
        "strength",
        "rating",
        "lots",
    ]


def _random_group(rng, n_lines, n_matches):
    lines = list(range(1, n_lines + 1))
    matches = []
    for _ in range(n_matches):
        home, away = rng.sample(lines, 2)
        matches.append(play(home, away, rng.randint(0, 16), rng.randint(0, 16)))
    return lines, matches


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n_lines=st.integers(2, 12),
    n_matches=st.integers(0, 30),
    tiebreaks=st.permutations(list(TieBreak)).flatmap(
        lambda p: st.integers(0, len(p)).map(lambda k: p[:k])
    ),
)
def test_ranking_properties(seed, n_lines, n_matches, tiebreaks):
    rng = random.Random(seed)
    lines, matches = _random_group(rng, n_lines, n_matches)
    ratings = {line: float(rng.randint(1000, 1010)) for line in lines if rng.random() < 0.7}
    rows = rank_group(lines, matches, tiebreaks, lots_seed=seed, ratings=ratings)
    assert sorted(order(rows)) == lines
    assert [row.vp for row in rows] == sorted((row.vp for row in rows), reverse=True)
    assert sum(row.played for row in rows) == 2 * len(matches)
    assert sum(row.won for row in rows) == sum(row.lost for row in rows)
    ranks = [row.rank for row in rows]
    assert ranks == sorted(ranks) and ranks[0] == 1
    for index, row in enumerate(rows):  # rank = 1 + lines strictly ahead
        assert row.rank == 1 + sum(1 for other in rows if other.rank < row.rank)
        assert row.shared_rank == (ranks.count(row.rank) > 1)
        assert set(row.tiebreak_values) == set(tiebreaks)
        assert index + 1 >= row.rank
    if TieBreak.LOTS in tiebreaks:
        assert not any(row.shared_rank for row in rows)
    # the input order does not matter
    shuffled_lines, shuffled_matches = lines[:], matches[:]
    rng.shuffle(shuffled_lines)
    rng.shuffle(shuffled_matches)
    again = rank_group(shuffled_lines, shuffled_matches, tiebreaks, lots_seed=seed, ratings=ratings)
    assert again == rows


def test_large_tournament_group():
    rng = random.Random(7)
    lines, matches = _random_group(rng, 2048, 2048 * 6)
    rows = rank_group(lines, matches, list(TieBreak), lots_seed=3)
    assert len(rows) == 2048
    assert not any(row.shared_rank for row in rows)


def test_from_score_gives_the_winner_the_winners_values_on_either_side():
    score = match_score(ELEVEN, 5)
    winners, losers = (score.vp_winner, score.mp_winner), (score.vp_loser, score.mp_loser)
    home_won = PlayedMatch.from_score("A", "B", (11, 6), score, winner="A")
    away_won = PlayedMatch.from_score("A", "B", (6, 11), score, winner="B")
    assert ((home_won.home_vp, home_won.home_mp), (home_won.away_vp, home_won.away_mp)) == (
        winners,
        losers,
    )
    assert ((away_won.home_vp, away_won.home_mp), (away_won.away_vp, away_won.away_mp)) == (
        losers,
        winners,
    )
    assert (away_won.home_points, away_won.away_points, away_won.winner) == (6, 11, "B")


def test_from_score_refuses_a_winner_who_did_not_play():
    with pytest.raises(ValueError, match="did not play"):
        PlayedMatch.from_score("A", "B", (1, 0), match_score(ELEVEN, 1), winner="Q")
