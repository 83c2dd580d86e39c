"""Weng-Lin (openskill PlackettLuce) ratings replayed from a deterministic match log.

The match log is the source of truth; ratings are a cache. Everything here is a pure function of
plain data, so a full replay and a chain of incremental updates perform the same floating-point
operations in the same order and give bit-identical numbers.

Pools (kept apart because a good singles player is not necessarily a good partner):

* ``singles``: 1 v 1, one rating per player.
* ``pairs``: 2 v 2, one rating per player, updated as a member of a two-player team.
* ``pair_units``: 2 v 2, one rating per fixed pair (the two players together, whatever line).
* ``trios``: 3 v 3, one rating per player, updated as a member of a three-player team.

Order: games are applied by ``GameKey`` = (tournament start date, tournament id, stage order,
round number, match id). Within a round the results are therefore applied in match-id order,
whatever order they arrived in: the ratings after a round do not depend on arrival order.

Inactivity: before a subject's next game, each full 30 days since its previous game add
``idle_sigma_per_month``² to σ² (capped at the initial σ); μ never moves. The same widening is
applied on display, up to the day shown.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from importlib.metadata import version as _pkg_version
from typing import Any, NamedTuple

from openskill.models import PlackettLuce, PlackettLuceRating

MODEL_NAME = "PlackettLuce"
OPENSKILL_VERSION = _pkg_version("openskill")


def gettext_noop(message: str) -> str:
    """Marks a label for the translation catalog; the caller translates it when shown."""
    return message


class Pool(enum.StrEnum):
    """Rating pools (values stored in the database; labels in :data:`POOL_LABELS`)."""

    SINGLES = "singles"
    PAIRS = "pairs"
    PAIR_UNITS = "pair_units"
    TRIOS = "trios"


POOL_LABELS: Mapping[Pool, str] = {
    Pool.SINGLES: gettext_noop("Singles"),
    Pool.PAIRS: gettext_noop("Pairs (players)"),
    Pool.PAIR_UNITS: gettext_noop("Fixed pairs"),
    Pool.TRIOS: gettext_noop("Trios (players)"),
}


class Result(enum.StrEnum):
    """The game from the home side's point of view."""

    HOME = "home"
    AWAY = "away"
    DRAW = "draw"


@dataclass(frozen=True)
class Params:
    """Every number that shapes a rating; recorded with each rating run."""

    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    tau: float = 25.0 / 300.0
    idle_sigma_per_month: float = 0.8
    provisional_sigma: float = 5.0
    display_base: float = 1500.0
    display_scale: float = 24.0
    model: str = MODEL_NAME
    openskill_version: str = OPENSKILL_VERSION

    def as_dict(self) -> dict[str, Any]:
        return {
            "mu": self.mu,
            "sigma": self.sigma,
            "beta": self.beta,
            "tau": self.tau,
            "idle_sigma_per_month": self.idle_sigma_per_month,
            "provisional_sigma": self.provisional_sigma,
            "display_base": self.display_base,
            "display_scale": self.display_scale,
            "model": self.model,
            "openskill_version": self.openskill_version,
        }


DEFAULT_PARAMS = Params()


class GameKey(NamedTuple):
    """The replay order; compare keys as tuples."""

    played_on: date
    tournament_id: int
    stage_order: int
    round_number: int
    match_id: int


class Subject(NamedTuple):
    """Who holds a rating: a player in a pool, or a fixed pair (``partner_id`` > ``player_id``)."""

    pool: Pool
    player_id: int
    partner_id: int | None = None


class Game(NamedTuple):
    """One rateable match: the two lines' players and the result from home's point of view."""

    key: GameKey
    home: tuple[int, ...]
    away: tuple[int, ...]
    result: Result


class State(NamedTuple):
    """A subject's rating and record after its last game (immutable).

    A named tuple rather than a frozen dataclass: a full replay builds one per change, and a
    frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``."""

    mu: float
    sigma: float
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    last_played: date | None = None


class Change(NamedTuple):
    """One subject's rating before and after one game (a row of the rating history)."""

    subject: Subject
    key: GameKey
    before: State
    after: State
    outcome: str  # "win", "draw" or "loss"


def initial_state(params: Params = DEFAULT_PARAMS) -> State:
    return State(mu=params.mu, sigma=params.sigma)


def idle_months(last_played: date | None, on: date) -> int:
    if last_played is None or on <= last_played:
        return 0
    return (on - last_played).days // 30


def widened_sigma(state: State, on: date, params: Params = DEFAULT_PARAMS) -> float:
    """σ after inactivity up to ``on``: grows with idle months, never beyond the initial σ."""
    months = idle_months(state.last_played, on)
    if months == 0 or state.sigma >= params.sigma:
        return state.sigma
    return min(params.sigma, math.sqrt(state.sigma**2 + months * params.idle_sigma_per_month**2))


def display_rating(mu: float, params: Params = DEFAULT_PARAMS) -> int:
    """The Elo-like number shown to people: 1500 + 24·(μ − 25), rounded."""
    return round(params.display_base + params.display_scale * (mu - params.mu))


def is_provisional(sigma: float, params: Params = DEFAULT_PARAMS) -> bool:
    return sigma > params.provisional_sigma


def pools_for(team_size: int) -> tuple[Pool, ...]:
    if team_size == 1:
        return (Pool.SINGLES,)
    if team_size == 2:
        return (Pool.PAIRS, Pool.PAIR_UNITS)
    if team_size == 3:
        return (Pool.TRIOS,)
    return ()


def pool_for_size(team_size: int) -> Pool | None:
    """The player pool matching a line size (the pool used for seeding and win probability)."""
    return {1: Pool.SINGLES, 2: Pool.PAIRS, 3: Pool.TRIOS}.get(team_size)


def unit_subject(players: Iterable[int]) -> Subject:
    a, b = sorted(players)
    return Subject(Pool.PAIR_UNITS, a, b)


def side_for(players: tuple[int, ...], pool: Pool) -> list[Subject]:
    """The subjects one line's players are rated as in ``pool``."""
    if pool is Pool.PAIR_UNITS:
        return [unit_subject(players)]
    return [Subject(pool, p) for p in players]


def teams_for(game: Game, pool: Pool) -> tuple[list[Subject], list[Subject]]:
    return side_for(game.home, pool), side_for(game.away, pool)


def _model(params: Params) -> PlackettLuce:
    return PlackettLuce(mu=params.mu, sigma=params.sigma, beta=params.beta, tau=params.tau)


_RANKS: dict[Result, list[float]] = {Result.HOME: [1, 2], Result.AWAY: [2, 1], Result.DRAW: [1, 1]}
_OUTCOME = {
    Result.HOME: ("win", "loss"),
    Result.AWAY: ("loss", "win"),
    Result.DRAW: ("draw", "draw"),
}
# each side's outcome and what it adds to (wins, draws, losses)
_TALLY = {"win": (1, 0, 0), "draw": (0, 1, 0), "loss": (0, 0, 1)}
_SIDES = {result: tuple((o, *_TALLY[o]) for o in pair) for result, pair in _OUTCOME.items()}


_new_tuple = tuple.__new__  # a named tuple built without its ``__new__``'s Python frame


class Rater:
    """Applies games to a mutable map of states; the map is the only thing that changes."""

    def __init__(
        self, params: Params = DEFAULT_PARAMS, states: Mapping[Subject, State] | None = None
    ):
        self.params = params
        self.model = _model(params)
        self.states: dict[Subject, State] = dict(states or {})
        self._initial = initial_state(params)
        # One openskill rating object per subject, its mu and sigma set before each game:
        # ``model.rating()`` builds a new one with a fresh uuid4, which cost a full replay
        # more than openskill's own arithmetic (``rate`` copies its input, never changes it).
        self._inputs: dict[Subject, PlackettLuceRating] = {}
        # Each line's subjects in a pool and their rating objects, made once: a line plays
        # many games, and building its subjects for each cost a replay more than the rest of
        # this wrapper.
        self._sides: dict[
            tuple[Pool, tuple[int, ...]], tuple[list[Subject], list[PlackettLuceRating]]
        ] = {}

    def state(self, subject: Subject) -> State:
        return self.states.get(subject, self._initial)

    def _side(
        self, pool: Pool, players: tuple[int, ...]
    ) -> tuple[list[Subject], list[PlackettLuceRating]]:
        subjects = side_for(players, pool)
        inputs = self._inputs
        for s in subjects:
            if s not in inputs:
                inputs[s] = self.model.rating()
        side = self._sides[(pool, players)] = (subjects, [inputs[s] for s in subjects])
        return side

    def apply(self, game: Game) -> list[Change]:
        """Rate one game in every pool its line size belongs to; returns the changes made."""
        home_players, away_players, result = game.home, game.away, game.result
        size = len(home_players)
        if size != len(away_players) or size == 0:
            return []
        changes: list[Change] = []
        append = changes.append
        key = game.key
        on = key.played_on
        get, initial, put = self.states.get, self._initial, self.states.__setitem__
        sides_get, sigma_on = self._sides.get, self._sigma_on
        ranks = _RANKS[result]
        # a player twice in one game (not a real match): openskill gets objects of its own
        distinct = len(set(home_players + away_players)) == 2 * size
        for pool in pools_for(size):
            home = sides_get((pool, home_players)) or self._side(pool, home_players)
            away = sides_get((pool, away_players)) or self._side(pool, away_players)
            befores = ([get(s, initial) for s in home[0]], [get(s, initial) for s in away[0]])
            if distinct:
                for side_befores, inputs in ((befores[0], home[1]), (befores[1], away[1])):
                    for st, rating in zip(side_befores, inputs, strict=True):
                        rating.mu = st.mu
                        rating.sigma = sigma_on(st, on)
                teams = [home[1], away[1]]
            else:
                teams = [
                    [self.model.rating(mu=st.mu, sigma=sigma_on(st, on)) for st in side]
                    for side in befores
                ]
            rated = self.model.rate(teams, ranks=ranks)
            for (subjects, _), side_befores, new, (outcome, won, drew, lost) in zip(
                (home, away), befores, rated, _SIDES[result], strict=True
            ):
                for subject, before, r in zip(subjects, side_befores, new, strict=True):
                    _, _, games, wins, draws, losses, last = before
                    after = _new_tuple(
                        State,
                        (
                            r.mu,
                            r.sigma,
                            games + 1,
                            wins + won,
                            draws + drew,
                            losses + lost,
                            on if last is None or on >= last else last,
                        ),
                    )
                    put(subject, after)
                    append(_new_tuple(Change, (subject, key, before, after, outcome)))
        return changes

    def _sigma_on(self, state: State, on: date) -> float:
        """The subject's sigma as openskill takes it for a game on ``on`` (widened)."""
        last = state.last_played
        # ``widened_sigma``, its no-idle-month case (most games) decided here without a call
        if last is None or (on - last).days < 30:
            return state.sigma
        return widened_sigma(state, on, self.params)

    def replay(self, games: Iterable[Game]) -> list[Change]:
        changes: list[Change] = []
        for game in sorted(games, key=lambda g: g.key):
            changes.extend(self.apply(game))
        return changes


def win_probability(
    home: list[State], away: list[State], on: date | None = None, params: Params = DEFAULT_PARAMS
) -> tuple[float, float]:
    """P(home wins), P(away wins): the PlackettLuce model's own two-team likelihood.

    P(home) = 1 / (1 + exp(−(Σμ_home − Σμ_away) / c)), c = √(Σσ² + n·β²), which is the
    probability ``PlackettLuce.rate`` fits its updates to. openskill's ``predict_win`` instead
    uses a normal CDF over the same numbers and is overconfident on PlackettLuce ratings (on
    simulated leagues: expected calibration error ≈0.07 against ≈0.01 for this formula; see
    ``ratings.algorithms.calibration`` and docs/performance.md). Draws are not modelled.
    """
    states = [*home, *away]
    sigmas = [widened_sigma(s, on, params) if on else s.sigma for s in states]
    c = math.sqrt(sum(x * x for x in sigmas) + len(states) * params.beta**2)
    diff = sum(s.mu for s in home) - sum(s.mu for s in away)
    p_home = 1.0 / (1.0 + math.exp(-diff / c))
    return p_home, 1.0 - p_home


def openskill_predict_win(
    home: list[State], away: list[State], on: date | None = None, params: Params = DEFAULT_PARAMS
) -> tuple[float, float]:
    """openskill's own ``predict_win`` (kept to compare calibration; not used for display)."""
    model = _model(params)

    def team(states: list[State]) -> list[PlackettLuceRating]:
        return [
            model.rating(mu=s.mu, sigma=widened_sigma(s, on, params) if on else s.sigma)
            for s in states
        ]

    p_home, p_away = model.predict_win([team(home), team(away)])
    return p_home, p_away


def subjects_of(game: Game) -> set[Subject]:
    """Every subject a game rates, in every pool its line size belongs to."""
    subjects: set[Subject] = set()
    for pool in pools_for(len(game.home)):
        home, away = teams_for(game, pool)
        subjects.update(home)
        subjects.update(away)
    return subjects


def affected_games(
    games: Iterable[Game], changed: set[int], seeds: Iterable[Subject] = ()
) -> tuple[list[Game], set[Subject]]:
    """The games whose rating changes when the games ``changed`` (match ids) change.

    A changed game changes its subjects' ratings, so every later game of one of them changes
    too, and so on down the log: the closure, walked once in key order. ``seeds`` are subjects
    already changed before the first game (the players a corrected game no longer has). Games
    outside the closure keep their rating history as it is, which is what lets a correction
    re-rate only what it changes instead of the whole tail of the log.
    """
    affected: set[Subject] = set(seeds)
    replay: list[Game] = []
    for game in sorted(games, key=lambda g: g.key):
        subjects = subjects_of(game)
        if game.key.match_id in changed or not affected.isdisjoint(subjects):
            affected |= subjects
            replay.append(game)
    return replay, affected
