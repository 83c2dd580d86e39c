"""Two organizers entering the same match's result at once: the row lock serializes them."""

import threading

import pytest
from django.db import connection, connections

from tests.tournaments.conftest import RR, make_tournament
from tournaments.exceptions import ResultError
from tournaments.models import ChangeLog, Match, MatchResult
from tournaments.services import results, schedule
from tournaments.services.results import deals_of_match

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="row locks (select_for_update) need PostgreSQL; set DATABASE_URL to run this test",
)


def _setup():
    tournament = make_tournament(n_lines=2, stages=[RR], name="Concorrenza")
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    return Match.objects.get(round__stage=stage)


def _deals(home, away):
    return [{"points": [home, away], "breakdown": [{"scope": home}, {"scope": away}]}]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("repeat", range(3))
def test_two_users_enter_the_same_match_at_once(repeat):
    match = _setup()
    barrier = threading.Barrier(2)
    errors = []
    entries = [_deals(11, 4 + repeat), _deals(2, 11)]

    def enter(deals):
        try:
            barrier.wait(timeout=10)
            results.enter_result(Match.objects.get(pk=match.pk), deals)
        except ResultError as error:  # pragma: no cover - both are valid
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=enter, args=(deals,)) for deals in entries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors
    match.refresh_from_db()
    # exactly one complete result, the one of whoever came last
    assert len(deals_of_match(match)) == 1
    assert MatchResult.objects.filter(match=match).count() == 2
    log = list(ChangeLog.objects.filter(match=match).order_by("id"))
    assert len(log) == 2
    assert log[1].detail["replaced"] is not None and log[0].detail["replaced"] is None
    totals = sorted(r.points for r in MatchResult.objects.filter(match=match))
    assert totals == sorted(log[1].detail["totals"])
    winner = MatchResult.objects.get(match=match, won=True)
    assert match.winner_id == winner.line_id
