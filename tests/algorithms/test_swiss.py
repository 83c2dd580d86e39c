"""Swiss rounds: the library's own checks on random tournaments, and our translation of the
played rounds reproduces the library's pairing input (so it pairs every round the same way)."""

from __future__ import annotations

import pytest
from caissify_pairings.fpc import check_trf
from caissify_pairings.rtg import generate_tournament
from caissify_pairings.trf import parse_trf

from tournaments.algorithms import swiss

POINTS = {"1": 1.0, "+": 1.0, "=": 0.5, "D": 0.5, "0": 0.0, "-": 0.0}
BYE_POINTS = {"U": 1.0, "F": 1.0, "+": 1.0, "1": 1.0, "H": 0.5, "=": 0.5}

RANDOM_TOURNAMENTS = [(9, 5, 1), (12, 5, 2), (11, 6, 3)]


def _rounds(players, n_rounds):
    """Our ``PlayedRound`` list from a TRF's results: pairs as (white, black), VP = points."""
    rounds = []
    for number in range(1, n_rounds + 1):
        pairs, byes, vp = [], [], {}
        for player in players:
            result = player["results"].get(number)
            if result is None:
                continue
            me = player["starting_number"]
            if result["opponent"] is None:
                byes.append(me)
                vp[me] = BYE_POINTS.get(result["result"], 0.0)
                continue
            vp[me] = POINTS.get(result["result"], 0.0)
            if result["color"] == "w":
                pairs.append((me, result["opponent"]))
        rounds.append(swiss.PlayedRound(pairs=pairs, byes=byes, vp=vp))
    return rounds


@pytest.mark.parametrize(("n_players", "n_rounds", "seed"), RANDOM_TOURNAMENTS)
def test_library_checks_its_own_random_tournaments(n_players, n_rounds, seed):
    trf = generate_tournament(num_players=n_players, num_rounds=n_rounds, seed=seed)
    report = check_trf(trf)
    assert report["summary"]["total_discrepancies"] == 0
    assert report["summary"]["rounds_checked"] == n_rounds


@pytest.mark.parametrize(("n_players", "n_rounds", "seed"), RANDOM_TOURNAMENTS)
def test_our_histories_pair_every_round_as_the_library_did(n_players, n_rounds, seed):
    trf = generate_tournament(num_players=n_players, num_rounds=n_rounds, seed=seed)
    players = parse_trf(trf)["players"]
    start = sorted(p["starting_number"] for p in players)
    ratings = {p["starting_number"]: float(p["rating"] or 0) for p in players}
    rounds = _rounds(players, n_rounds)
    # the generator draws round 1's colour; we keep the top seed at home unless told otherwise
    top = next(p for p in players if p["starting_number"] == 1)
    top_seed_home = top["results"][1]["color"] != "b"
    for number in range(1, n_rounds + 1):
        lines, played = swiss.line_histories(start, rounds[: number - 1], ratings)
        pairing = swiss.pair_swiss(
            lines,
            played,
            round_number=number,
            total_rounds=n_rounds,
            bye_score=1.0,
            top_seed_home=top_seed_home,
        )
        expected = rounds[number - 1]
        assert sorted(pairing.pairs) == sorted(expected.pairs), f"round {number}"
        assert ([pairing.bye] if pairing.bye is not None else []) == list(expected.byes)
    # the scores we derive are the TRF's final scores
    lines, _played = swiss.line_histories(start, rounds, ratings)
    assert {line.id: line.score for line in lines} == {
        p["starting_number"]: p["score"] for p in players
    }


def test_no_pairing_without_the_float_history():
    lines = [swiss.SwissLine(id=i, start=i) for i in range(1, 5)]
    with pytest.raises(ValueError):
        swiss.pair_swiss(lines, {(1, 2)}, round_number=2, total_rounds=3)


def test_a_round_that_cannot_avoid_rematches_is_refused():
    start = [1, 2, 3, 4]
    rounds = [
        swiss.PlayedRound(pairs=[(1, 2), (3, 4)], vp={1: 20, 2: 0, 3: 20, 4: 0}),
        swiss.PlayedRound(pairs=[(1, 3), (2, 4)], vp={1: 20, 3: 0, 2: 20, 4: 0}),
        swiss.PlayedRound(pairs=[(1, 4), (2, 3)], vp={1: 20, 4: 0, 2: 20, 3: 0}),
    ]
    lines, played = swiss.line_histories(start, rounds)
    with pytest.raises(swiss.NoLegalRound):
        swiss.pair_swiss(lines, played, round_number=4, total_rounds=5)
