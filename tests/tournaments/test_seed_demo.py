"""``seed_demo`` builds a full demo tournament from engine-verified records."""

from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command

from tournaments.models import DealResult, Match, MatchResult, Stage, Tournament
from tournaments.services import standings


@pytest.mark.django_db
def test_seed_demo_builds_everything_and_is_idempotent():
    pytest.importorskip("games.engine")
    out = StringIO()
    call_command("seed_demo", stdout=out)
    tournament = Tournament.objects.get()
    assert tournament.is_public and tournament.status == Tournament.Status.FINISHED
    assert tournament.entries.count() == 16
    groups_stage, knockout = tournament.stages.order_by("order")
    assert groups_stage.groups.count() == 4
    assert (
        not Match.objects.filter(round__stage__tournament=tournament)
        .exclude(status=Match.Status.DONE)
        .exists()
    )
    outcomes = Counter(Match.objects.values_list("outcome", flat=True))
    assert outcomes["timeout"] >= 1 and outcomes["abandon"] >= 1
    assert DealResult.objects.filter(match__round__stage=knockout, is_tiebreak=True).exists()
    assert knockout.rounds.count() == 3
    assert Match.objects.filter(round__stage=knockout).count() == 8  # 4 + 2 + final + third
    assert MatchResult.objects.filter(match__round__stage=knockout).count() == 16
    for _group, rows in standings.stage_standings(groups_stage):
        assert [r.played for r in rows] == [3, 3, 3, 3]
    assert knockout.status == Stage.Status.CLOSED
    assert "createsuperuser" in out.getvalue()

    call_command("seed_demo", stdout=StringIO())  # refuses politely, changes nothing
    assert Tournament.objects.count() == 1
    call_command("seed_demo", "--reset", stdout=StringIO())
    assert Tournament.objects.count() == 1
    assert Match.objects.count() == 24 + 8
