"""Fixtures for the score sheets at the table: a running round robin of four lines."""

import pytest

from tests.tournaments.conftest import RR, make_tournament
from tournaments.models import Match
from tournaments.services import schedule


@pytest.fixture
def running(db):
    """A tournament of four lines whose round robin has been generated."""
    tournament = make_tournament(n_lines=4, stages=[RR])
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    return tournament


@pytest.fixture
def first_match(running):
    return Match.objects.filter(round__stage__tournament=running).order_by("pk").first()
