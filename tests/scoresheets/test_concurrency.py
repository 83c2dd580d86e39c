"""Two requests at once from the table (a double tap, a resend crossing the first send, both
sides answering together): the match's row lock serializes them, nothing is stored twice."""

import threading
import uuid

import pytest
from django.db import connection, connections

from scoresheets.models import TableReport
from scoresheets.services import links, reports
from tests.scoresheets.test_reports import OTHER, SHEET
from tests.tournaments.conftest import RR, make_tournament
from tournaments.exceptions import ResultError
from tournaments.models import Match, ResultVersion
from tournaments.services import schedule

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="row locks (select_for_update) need PostgreSQL; set DATABASE_URL to run this test",
)


def _at_once(*calls):
    barrier = threading.Barrier(len(calls))
    outcomes = []

    def run(call):
        try:
            barrier.wait(timeout=10)
            outcomes.append(call())
        except ResultError as error:
            outcomes.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return outcomes


@pytest.mark.django_db(transaction=True)
def test_the_same_sheet_sent_twice_at_once_and_both_sides_at_once():
    tournament = make_tournament(n_lines=2, stages=[RR], name="Al tavolo insieme")
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    match = Match.objects.get(round__stage=stage)
    home = links.link_for(tournament, match.home)
    away = links.link_for(tournament, match.away)
    key = uuid.uuid4()

    def send():
        fresh = Match.objects.get(pk=match.pk)
        return reports.submit(home, fresh, SHEET, client_key=key, based_on="")

    outcomes = _at_once(send, send)
    assert sorted(o.created for o in outcomes) == [False, True]
    assert ResultVersion.objects.filter(match=match).count() == 1

    # the other side signs and disputes at once: one answer wins, the other is refused or finds it
    outcomes = _at_once(
        lambda: reports.accept(away, Match.objects.get(pk=match.pk)),
        lambda: reports.dispute(away, Match.objects.get(pk=match.pk), "no", OTHER),
    )
    report = TableReport.objects.get(match=match, side="home")
    assert report.state in ("accepted", "disputed")
    in_force = ResultVersion.objects.filter(match=match, status="in_force").count()
    assert in_force == (1 if report.state == "accepted" else 0)
    assert any(isinstance(o, TableReport) for o in outcomes)
