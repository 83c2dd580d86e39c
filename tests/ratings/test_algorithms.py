"""Pure rating functions: direction of moves, draws, inactivity, provisional mark, skill bands."""

from datetime import date

import pytest

from ratings.algorithms.rating import (
    DEFAULT_PARAMS,
    Game,
    GameKey,
    Pool,
    Rater,
    Result,
    State,
    Subject,
    display_rating,
    is_provisional,
    unit_subject,
    widened_sigma,
    win_probability,
)
from ratings.algorithms.skill import SkillLevelsError, level_for, load_levels, parse_levels

D = date(2026, 3, 1)


def key(match_id, day=D, rnd=1):
    return GameKey(day, 1, 1, rnd, match_id)


def S(pool, pid, partner=None):
    return Subject(Pool(pool), pid, partner)


def test_singles_winner_up_loser_down_sigma_shrinks():
    r = Rater()
    r.apply(Game(key(1), (1,), (2,), Result.HOME))
    a, b = r.state(S("singles", 1)), r.state(S("singles", 2))
    assert a.mu > 25 > b.mu
    assert a.sigma < DEFAULT_PARAMS.sigma and b.sigma < DEFAULT_PARAMS.sigma
    assert (a.wins, a.losses, b.wins, b.losses) == (1, 0, 0, 1)


def test_pairs_rate_players_and_the_fixed_pair():
    r = Rater()
    changes = r.apply(Game(key(1), (1, 2), (3, 4), Result.AWAY))
    pools = sorted({str(c.subject.pool) for c in changes})
    assert pools == ["pair_units", "pairs"]
    assert len(changes) == 6
    for p in (1, 2):
        assert r.state(S("pairs", p)).mu < 25
    for p in (3, 4):
        assert r.state(S("pairs", p)).mu > 25
    assert r.state(unit_subject((2, 1))).mu < 25 < r.state(unit_subject((4, 3))).mu
    assert S("singles", 1) not in r.states


def test_trios_are_rated_as_teams():
    r = Rater()
    r.apply(Game(key(1), (1, 2, 3), (4, 5, 6), Result.HOME))
    assert all(r.state(S("trios", p)).mu > 25 for p in (1, 2, 3))
    assert all(r.state(S("trios", p)).mu < 25 for p in (4, 5, 6))


def test_draw_between_equals_keeps_mu_and_pulls_unequals_together():
    r = Rater()
    r.apply(Game(key(1), (1,), (2,), Result.DRAW))
    assert r.state(S("singles", 1)).mu == pytest.approx(25)
    assert r.state(S("singles", 1)).draws == 1
    r.apply(Game(key(2), (1,), (3,), Result.HOME))  # 1 is now stronger than 2
    strong, weak = r.state(S("singles", 1)).mu, r.state(S("singles", 2)).mu
    r.apply(Game(key(3), (1,), (2,), Result.DRAW))
    assert r.state(S("singles", 1)).mu < strong
    assert r.state(S("singles", 2)).mu > weak


def test_replay_is_ordered_by_key_not_by_input_order():
    games = [
        Game(key(3, rnd=2), (1,), (3,), Result.AWAY),
        Game(key(2), (3,), (4,), Result.HOME),
        Game(key(1), (1,), (2,), Result.HOME),
    ]
    a, b = Rater(), Rater()
    a.replay(games)
    b.replay(list(reversed(games)))
    assert a.states == b.states


def test_inactivity_widens_sigma_never_mu_capped_at_initial():
    st = State(mu=31.0, sigma=3.0, games=40, last_played=date(2025, 1, 1))
    assert widened_sigma(st, date(2025, 1, 20)) == 3.0
    two_months = widened_sigma(st, date(2025, 3, 5))
    assert 3.0 < two_months < widened_sigma(st, date(2025, 12, 1))
    assert widened_sigma(st, date(2040, 1, 1)) == DEFAULT_PARAMS.sigma
    r = Rater(states={S("singles", 1): st, S("singles", 2): st})
    before = r.state(S("singles", 1))
    r.apply(Game(GameKey(date(2026, 1, 1), 1, 1, 1, 9), (1,), (2,), Result.DRAW))
    after = r.state(S("singles", 1))
    assert after.mu == pytest.approx(before.mu)  # equal players drawing: only σ changed
    assert after.sigma > before.sigma  # a year idle widened more than one game narrowed


def test_the_rater_widens_sigma_exactly_as_widened_sigma_on_every_gap():
    """The rater decides the no-idle-month case itself; its σ must be ``widened_sigma``'s."""
    from datetime import timedelta

    r = Rater()
    for sigma in (1.3, 4.0, 7.9, DEFAULT_PARAMS.sigma, 9.0):
        for gap in (-40, -1, 0, 1, 29, 30, 31, 59, 60, 61, 89, 90, 365, 3000):
            last = D - timedelta(days=gap)
            st = State(mu=27.5, sigma=sigma, games=3, last_played=last)
            assert r._sigma_on(st, D) == widened_sigma(st, D)
        fresh = State(mu=25.0, sigma=sigma)
        assert r._sigma_on(fresh, D) == sigma


def test_provisional_mark_until_sigma_is_low():
    r = Rater()
    assert is_provisional(r.state(S("singles", 1)).sigma)
    opponent = 100
    for i in range(60):
        r.apply(
            Game(key(i + 1, rnd=i), (1,), (opponent + i,), Result.HOME if i % 2 else Result.AWAY)
        )
        if not is_provisional(r.state(S("singles", 1)).sigma):
            break
    assert not is_provisional(r.state(S("singles", 1)).sigma)
    assert 8 <= r.state(S("singles", 1)).games <= 40


def test_display_scale_and_win_probability():
    assert display_rating(25.0) == 1500
    assert display_rating(30.0) == 1620
    strong, weak = State(32.0, 3.0), State(20.0, 3.0)
    p, q = win_probability([strong], [weak])
    assert p > 0.8 and p + q == pytest.approx(1)
    assert win_probability([State(25, 8)], [State(25, 8)])[0] == pytest.approx(0.5)


def test_skill_levels_from_data():
    levels = load_levels()
    assert levels[0].min_rating is None
    assert level_for(1500, levels).slug == "intermedio"
    assert level_for(0, levels).name("en") == "Beginner"
    assert level_for(5000, levels).name("it") == "Gran maestro"
    with pytest.raises(SkillLevelsError):
        parse_levels({"levels": [{"slug": "a", "min_rating": 10, "name_it": "a", "name_en": "a"}]})


def test_win_probability_is_calibrated_on_a_simulated_league():
    """The displayed formula stays within 3 points of reality; openskill's predict_win does not."""
    from ratings.algorithms.calibration import measure, simulate_games
    from ratings.algorithms.rating import openskill_predict_win

    games = simulate_games(n_players=120, n_games=4000, seed=3)
    ours = measure(games, lambda h, a, on: win_probability(h, a, on)[0])
    theirs = measure(games, lambda h, a, on: openskill_predict_win(h, a, on)[0])
    assert ours.ece < 0.03
    assert ours.brier < theirs.brier and ours.ece < theirs.ece


def test_the_rater_gives_openskills_own_numbers_with_lines_met_again():
    """The rater reuses each line's subjects and rating objects across games; every change must
    still be exactly what ``PlackettLuce.rate`` gives on fresh objects, a player twice in one
    game (its own objects) and idle months included."""
    from datetime import timedelta

    from openskill.models import PlackettLuce

    from ratings.algorithms.rating import pools_for, teams_for

    p = DEFAULT_PARAMS
    model = PlackettLuce(mu=p.mu, sigma=p.sigma, beta=p.beta, tau=p.tau)
    sides = [(1,), (2,), (3,), (1, 2), (3, 4), (2, 1), (1, 5), (1, 1), (4, 5, 6), (7, 8, 9)]
    games, day = [], D
    for n in range(60):
        home, away = sides[n % len(sides)], sides[(3 * n + 1) % len(sides)]
        if len(home) == len(away):
            day += timedelta(days=(n * 17) % 70)
            result = (Result.HOME, Result.AWAY, Result.DRAW)[n % 3]
            games.append(Game(GameKey(day, 1, 1, 1, n), home, away, result))
    assert any(len(set(g.home + g.away)) < 2 * len(g.home) for g in games)

    states: dict[Subject, State] = {}
    expected = []
    for game in games:
        for pool in pools_for(len(game.home)):
            home, away = teams_for(game, pool)
            befores = [[states.get(s, State(p.mu, p.sigma)) for s in side] for side in (home, away)]
            teams = [
                [model.rating(mu=st.mu, sigma=widened_sigma(st, game.key.played_on)) for st in side]
                for side in befores
            ]
            ranks = {Result.HOME: [1, 2], Result.AWAY: [2, 1], Result.DRAW: [1, 1]}[game.result]
            for side, side_befores, new in zip(
                (home, away), befores, model.rate(teams, ranks=ranks), strict=True
            ):
                for s, before, r in zip(side, side_befores, new, strict=True):
                    on = game.key.played_on
                    states[s] = State(r.mu, r.sigma, before.games + 1, last_played=on)
                    expected.append((s, before.mu, before.sigma, r.mu, r.sigma))
    changes = Rater().replay(games)
    got = [(c.subject, c.before.mu, c.before.sigma, c.after.mu, c.after.sigma) for c in changes]
    assert got == expected
