"""Reading the rating cache: leaderboards, a player's history, win probabilities, seeding."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from django.conf import settings
from django.utils import timezone
from django.utils.translation import get_language

from ratings.algorithms import skill
from ratings.algorithms.rating import (
    DEFAULT_PARAMS,
    Pool,
    State,
    display_rating,
    is_provisional,
    pool_for_size,
    widened_sigma,
    win_probability,
)
from ratings.models import Rating, RatingChange
from tournaments.models import Entry, LineMember, Match, Player, Tournament

logger = logging.getLogger(__name__)

MIN_GAMES = getattr(settings, "RATINGS_LEADERBOARD_MIN_GAMES", 5)
ACTIVE_DAYS = getattr(settings, "RATINGS_LEADERBOARD_ACTIVE_DAYS", 365)


@lru_cache(maxsize=4)
def _levels(path: str) -> tuple[skill.SkillLevel, ...]:
    return skill.load_levels(path)


def skill_levels() -> tuple[skill.SkillLevel, ...]:
    path = getattr(settings, "RATINGS_SKILL_LEVELS_FILE", None) or str(skill.DEFAULT_LEVELS_PATH)
    return _levels(str(path))


def today() -> date:
    return timezone.localdate()


def state_of(r: Rating) -> State:
    return State(r.mu, r.sigma, r.games, r.wins, r.draws, r.losses, r.last_played)


@dataclass
class Shown:
    """A rating as people see it, with inactivity applied up to ``on``."""

    rating: Rating
    display: int
    sigma: float
    provisional: bool
    level: str
    level_slug: str

    @property
    def player(self) -> Player:
        return self.rating.player

    @property
    def partner(self) -> Player | None:
        return self.rating.partner


def shown(r: Rating, on: date | None = None, language: str | None = None) -> Shown:
    on = on or today()
    sigma = widened_sigma(state_of(r), on)
    value = display_rating(r.mu)
    level = skill.level_for(value, skill_levels())
    return Shown(
        rating=r,
        display=value,
        sigma=sigma,
        provisional=is_provisional(sigma),
        level=level.name(language or get_language()),
        level_slug=level.slug,
    )


def leaderboard(
    pool: str = Pool.SINGLES,
    *,
    min_games: int = MIN_GAMES,
    active_days: int | None = ACTIVE_DAYS,
    on: date | None = None,
    limit: int = 200,
) -> list[Shown]:
    """Ratings of a pool with at least ``min_games``, played within ``active_days``; by the
    displayed rating (μ-based), then fewer uncertainty, then name."""
    on = on or today()
    qs = Rating.objects.filter(pool=pool, games__gte=min_games).select_related("player", "partner")
    if active_days:
        qs = qs.filter(last_played__gte=on - timedelta(days=active_days))
    qs = qs.order_by("-display", "sigma", "player__name", "player_id")[:limit]
    return [shown(r, on) for r in qs]


def default_pool(*, on: date | None = None) -> str:
    """The pool the leaderboard opens on: the first (in ``Pool`` order) that lists somebody, so
    a pairs-only site does not open on an empty singles tab."""
    on = on or today()
    listed = set(
        Rating.objects.filter(
            games__gte=MIN_GAMES, last_played__gte=on - timedelta(days=ACTIVE_DAYS)
        ).values_list("pool", flat=True)
    )
    order = [str(getattr(pool, "value", pool)) for pool in Pool]
    return next((pool for pool in order if pool in listed), str(Pool.SINGLES.value))


def player_ratings(player: Player) -> list[Shown]:
    rows = Rating.objects.filter(player=player).select_related("partner").order_by("pool", "-games")
    return [shown(r) for r in rows]


def main_pool(player: Player) -> str | None:
    r = (
        Rating.objects.filter(player=player, partner__isnull=True)
        .order_by("-games", "pool")
        .values_list("pool", flat=True)
        .first()
    )
    return r


def history(
    player: Player, pool: str, partner: Player | None = None
) -> list[tuple[date, int, float]]:
    """(date, displayed rating after, σ after) for each rated match, in replay order."""
    qs = RatingChange.objects.filter(player=player, pool=pool, partner=partner).order_by("id")
    return [
        (d, display_rating(mu), sigma)
        for d, mu, sigma in qs.values_list("played_on", "mu_after", "sigma_after")
    ]


def _line_players(line_ids: Iterable[int]) -> dict[int, list[int]]:
    out: dict[int, list[tuple[int, int]]] = {}
    for line_id, pos, player_id in LineMember.objects.filter(line_id__in=line_ids).values_list(
        "line_id", "position", "player_id"
    ):
        out.setdefault(line_id, []).append((pos, player_id))
    return {k: [p for _, p in sorted(v)] for k, v in out.items()}


def _states(pool: Pool, player_ids: Iterable[int]) -> dict[int, State]:
    rows = Rating.objects.filter(pool=str(pool), partner__isnull=True, player_id__in=player_ids)
    return {r.player_id: state_of(r) for r in rows}


def match_win_probability(match: Match) -> tuple[float, float] | None:
    """P(home wins), P(away wins) of a match from the players' ratings in the pool of its line
    size (an unrated player counts as new); ``None`` without two lines of the same size."""
    if not match.home_id or not match.away_id:
        return None
    players = _line_players([match.home_id, match.away_id])
    home, away = players.get(match.home_id, []), players.get(match.away_id, [])
    pool = pool_for_size(len(home))
    if pool is None or len(home) != len(away):
        return None
    states = _states(pool, home + away)
    new = State(DEFAULT_PARAMS.mu, DEFAULT_PARAMS.sigma)
    return win_probability(
        [states.get(p, new) for p in home], [states.get(p, new) for p in away], today()
    )


def line_strength(players: list[int], states: dict[int, State]) -> float:
    """A line's seeding strength: the sum of its players' conservative μ − 2σ (new: 25 − 2·8.3)."""
    total = 0.0
    for p in players:
        st = states.get(p)
        total += (st.mu - 2 * st.sigma) if st else DEFAULT_PARAMS.mu - 2 * DEFAULT_PARAMS.sigma
    return total


def line_ratings(line_ids: Iterable[int], seats_per_line: int) -> dict[int, float]:
    """``{line_id: strength}`` for the lines with at least one rated player, for the RATING
    tie-break (``standings.*(ratings=…)``) and ``schedule.rating_seeds(lines, ratings)``.

    Strength is conservative, μ − 2σ summed over the line's players in the pool of the line size
    (an unrated member counts as new), so an unproven line does not take a top seed.
    """
    line_ids = list(line_ids)
    pool = pool_for_size(seats_per_line) or Pool.SINGLES
    players = _line_players(line_ids)
    states = _states(pool, [p for ps in players.values() for p in ps])
    return {
        lid: line_strength(ps, states)
        for lid, ps in players.items()
        if any(p in states for p in ps)
    }


def tournament_line_ratings(tournament: Tournament) -> dict[int, float]:
    """``line_ratings`` for every line entered in ``tournament``."""
    ids = Entry.objects.filter(tournament=tournament).values_list("line_id", flat=True)
    return line_ratings(ids, tournament.seats_per_line)


def seeded_line_ids(tournament: Tournament, line_ids: list[int] | None = None) -> list[int]:
    """The tournament's (non-withdrawn) lines, strongest first (``line_ratings``); lines with
    no rated player last; ties keep the entry order. Feed the result (or the lines) to the
    bracket or group services as their seeds list."""
    if line_ids is None:
        line_ids = list(
            Entry.objects.filter(tournament=tournament, withdrawn=False)
            .order_by("seed", "id")
            .values_list("line_id", flat=True)
        )
    strength = line_ratings(line_ids, tournament.seats_per_line)
    order = {lid: i for i, lid in enumerate(line_ids)}
    return sorted(
        line_ids, key=lambda lid: (lid not in strength, -strength.get(lid, 0.0), order[lid])
    )
