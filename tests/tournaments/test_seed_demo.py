"""``seed_demo`` builds a full demo tournament from engine-verified records."""

import logging
from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command

from tournaments.models import Match, MatchResult, Stage, Tournament
from tournaments.services import standings


@pytest.mark.django_db
def test_seed_demo_builds_everything_and_is_idempotent(caplog):
    pytest.importorskip("scopa")
    out = StringIO()
    with caplog.at_level(logging.DEBUG):
        call_command("seed_demo", stdout=out)
    chatter = [r.getMessage() for r in caplog.records if r.levelno < logging.WARNING]
    assert not chatter, f"seed_demo is not quiet by default: {chatter[:3]}"
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
    assert Match.objects.filter(round__stage=knockout, has_tiebreak=True).exists()
    assert knockout.rounds.count() == 3
    assert Match.objects.filter(round__stage=knockout).count() == 8  # 4 + 2 + final + third
    assert MatchResult.objects.filter(match__round__stage=knockout).count() == 16
    for _group, rows in standings.stage_standings(groups_stage):
        assert [r.played for r in rows] == [3, 3, 3, 3]
    assert knockout.status == Stage.Status.CLOSED
    text = out.getvalue()
    assert "/desk/login/" in text and "/t/trofeo-golfo-2026/" in text
    assert "organizzatore-demo" in text
    password = text.split("password ")[1].split()[0]
    from django.contrib.auth import authenticate

    organizer = authenticate(username="organizzatore-demo", password=password)
    assert organizer is not None and not organizer.is_staff
    assert tournament.organizers.filter(pk=organizer.pk).exists()

    call_command("seed_demo", stdout=StringIO())  # refuses politely, changes nothing
    assert Tournament.objects.count() == 1
    call_command("seed_demo", "--reset", stdout=StringIO())
    assert Tournament.objects.count() == 1
    assert Match.objects.count() == 24 + 8
