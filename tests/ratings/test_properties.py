"""Property: whatever order results arrive in, the cache ends equal to a full replay."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ratings.models import RatedMatch, Rating, RatingChange
from ratings.services.ratings import recompute, update_for_match
from tournaments.models import Outcome


def _ratings():
    return sorted(
        (r.pool, r.player_id, r.partner_id, r.mu, r.sigma, r.games, r.wins, r.draws, r.losses)
        for r in Rating.objects.all()
    )


@pytest.fixture
def season(world):
    from datetime import date

    ps = [world.player() for _ in range(5)]
    ls = [world.line(p) for p in ps]
    pair = [world.line(ps[0], ps[1]), world.line(ps[2], ps[3])]
    t1 = world.tournament("p1", date(2026, 1, 5))
    t2 = world.tournament("p2", date(2026, 2, 5), seats=2)
    t3 = world.tournament("p3", date(2026, 6, 5))
    ms = [
        world.play(t1, 1, ls[0], ls[1], 11, 4),
        world.play(t1, 1, ls[2], ls[3], 7, 7),
        world.play(t1, 2, ls[1], ls[2], 11, 9),
        world.play(t1, 2, ls[3], ls[4], 2, 11, outcome=Outcome.ABANDON, offender=ls[3]),
        world.play(t2, 1, pair[0], pair[1], 11, 6),
        world.play(t2, 2, pair[1], pair[0], 11, 10),
        world.play(t3, 1, ls[4], ls[0], 11, 8),
        world.play(t3, 1, ls[1], ls[3], 0, 0, outcome=Outcome.FORFEIT, offender=ls[3]),
    ]
    recompute()
    return [m.id for m in ms], _ratings()


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_arrival_order_ends_at_the_full_replay(season, data):
    ids, expected = season
    for model in (RatingChange, RatedMatch, Rating):
        model.objects.all().delete()
    order = data.draw(st.permutations(ids))
    repeats = data.draw(st.lists(st.sampled_from(ids), max_size=3))
    for match_id in [*order, *repeats]:  # a result sent twice changes nothing
        update_for_match(match_id)
    assert _ratings() == expected
