"""How well predicted win probabilities match what happens, on simulated leagues.

Players get hidden skills; each game's winner is drawn from them (Thurstone: performance = skill
+ N(0, β²) per player, the model openskill's ``predict_win`` assumes). The league is rated in
order and every prediction is made *before* its game is applied.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from .rating import DEFAULT_PARAMS, Game, GameKey, Params, Pool, Rater, Result, State, Subject


@dataclass(frozen=True)
class Calibration:
    bins: tuple[tuple[float, float, int], ...]  # (mean predicted, observed share, games)
    brier: float
    ece: float  # expected calibration error: games-weighted |predicted − observed|
    games: int


def simulate_games(
    n_players: int = 200,
    n_games: int = 5000,
    team_size: int = 1,
    seed: int = 0,
    skill_sd: float = 6.0,
    draw_band: float = 0.35,
    params: Params = DEFAULT_PARAMS,
) -> list[Game]:
    rng = random.Random(seed)
    skill = [rng.gauss(params.mu, skill_sd) for _ in range(n_players)]
    games = []
    day = date(2024, 1, 1)
    for i in range(n_games):
        if i % 200 == 0:
            day += timedelta(days=7)
        picked = rng.sample(range(n_players), 2 * team_size)
        home, away = tuple(picked[:team_size]), tuple(picked[team_size:])
        diff = sum(skill[p] for p in home) - sum(skill[p] for p in away)
        perf = diff + rng.gauss(0.0, params.beta * math.sqrt(2 * team_size))
        result = (
            Result.DRAW if abs(perf) < draw_band else (Result.HOME if perf > 0 else Result.AWAY)
        )
        games.append(Game(GameKey(day, 1, 1, i // 100, i), home, away, result))
    return games


Predictor = Callable[[list[State], list[State], date], float]


def measure(games: list[Game], predictor: Predictor, bins: int = 10) -> Calibration:
    """Calibration of ``predictor`` (P(home wins)) over ``games``; a draw counts ½."""
    rater = Rater()
    sums = [[0.0, 0.0, 0] for _ in range(bins)]
    brier = 0.0
    for g in games:
        pool = {1: Pool.SINGLES, 2: Pool.PAIRS, 3: Pool.TRIOS}[len(g.home)]
        home = [rater.state(Subject(pool, p)) for p in g.home]
        away = [rater.state(Subject(pool, p)) for p in g.away]
        p = predictor(home, away, g.key.played_on)
        actual = {Result.HOME: 1.0, Result.AWAY: 0.0, Result.DRAW: 0.5}[g.result]
        b = sums[min(bins - 1, int(p * bins))]
        b[0] += p
        b[1] += actual
        b[2] += 1
        brier += (p - actual) ** 2
        rater.apply(g)
    n = max(len(games), 1)
    rows = tuple((s / c, o / c, int(c)) for s, o, c in sums if c)
    ece = sum(abs(p - o) * c for p, o, c in rows) / n
    return Calibration(rows, brier / n, ece, len(games))
