"""The desk's duplicate session form: the organizer adds the stage, sets the round's boards and
the movement, and draws the boards from a fresh secret seed in one step; a refusal is the form
again with its sentence, nothing half made."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tests.tournaments.conftest import make_tournament
from tournaments.models import BoardSet, ChangeLog, EndRule, Match, Stage
from tournaments.services import duplicate, schedule

pytestmark = pytest.mark.django_db


def _organizer(client, tournament):
    organizer = User.objects.create_user("direttrice", password="x-pass-12345")
    tournament.organizers.add(organizer)
    client.login(username="direttrice", password="x-pass-12345")


def _post(client, tournament, **fields):
    data = {"form": "duplicate", "movement": "mitchell", "scoring": "matchpoints", **fields}
    return client.post(reverse("desk:stages", args=[tournament.slug]), data)


def test_the_organizer_creates_and_draws_a_duplicate_session_from_the_desk(client):
    # a tournament played to 11 points, no match drawn yet: the session sets the deals
    tournament = make_tournament(n_lines=10)
    _organizer(client, tournament)
    page = client.get(reverse("desk:stages", args=[tournament.slug])).content.decode()
    assert 'name="boards_per_round"' in page and "duplicate-session" in page
    answer = _post(
        client, tournament, name="Serata", boards_per_round="3", rounds="3", arrow_switch="on"
    )
    assert answer.status_code == 302, answer.content.decode()
    tournament.refresh_from_db()
    assert (tournament.end_rule, tournament.end_value) == (EndRule.DEALS, 3)
    stage = tournament.stages.get()
    assert (stage.name, stage.kind, stage.status) == ("Serata", "duplicate", "running")
    board_set = BoardSet.objects.get(stage=stage)
    assert (board_set.boards_per_round, board_set.rounds, board_set.arrow_switch) == (3, 3, True)
    assert len(board_set.seed) == 16 and len(board_set.boards) == 5 * 3  # 5 sets of 3 boards
    assert stage.rounds.count() == 3 and Match.objects.filter(round__stage=stage).count() == 15
    # the last round played is the one switched: the East-West lines of round 1 sit North-South
    last = Match.objects.filter(round__stage=stage, round__number=3)
    east_west = {m.away_id for m in Match.objects.filter(round__stage=stage, round__number=1)}
    assert {m.home_id for m in last} == east_west
    # every board of a set is played at 3 tables of the 5 (Neuberg's E for the scoring)
    assert set(duplicate.tables_holding(board_set).values()) == {3}
    assert ChangeLog.objects.filter(tournament=tournament, action="tournament.match_end").exists()


def test_a_refused_session_is_the_form_again_and_nothing_is_made(client):
    tournament = make_tournament(
        n_lines=8, stages=[{"name": "Gironi", "kind": Stage.Kind.ROUND_ROBIN}]
    )
    schedule.create_groups(tournament.stages.get(), 1)
    schedule.generate_round_robin(tournament.stages.get())
    _organizer(client, tournament)
    answer = _post(client, tournament, boards_per_round="2")
    assert answer.status_code == 400
    assert "11" in answer.content.decode() and "msg-error" in answer.content.decode()
    assert tournament.stages.count() == 1 and not BoardSet.objects.exists()
    tournament.refresh_from_db()
    assert tournament.end_rule == EndRule.TARGET
    # too many rounds for the movement: refused with the range, the stage not left behind
    fresh = make_tournament(n_lines=8, slug="altra")
    answer = _post(client, fresh, boards_per_round="2", rounds="9")
    assert answer.status_code == 403  # another tournament's organizer may not
    fresh.organizers.add(User.objects.get(username="direttrice"))
    answer = _post(client, fresh, boards_per_round="2", rounds="9")
    assert answer.status_code == 400 and "1" in answer.content.decode()
    assert not fresh.stages.exists()
    fresh.refresh_from_db()
    assert fresh.end_rule == EndRule.TARGET  # the whole step rolled back


def test_the_draw_form_of_a_stage_added_earlier_takes_the_rounds(client):
    tournament = make_tournament(
        "scopa-tre-smazzate",
        n_lines=8,
        stages=[{"name": "Duplicato", "kind": Stage.Kind.DUPLICATE}],
        end_value=2,
    )
    _organizer(client, tournament)
    stage = tournament.stages.get()
    page = client.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
    assert 'name="rounds"' in page
    url = reverse("desk:generate", args=[tournament.slug, stage.pk])
    client.post(url, {"movement": "howell", "scoring": "matchpoints", "rounds": "2"})
    board_set = BoardSet.objects.get(stage=stage)
    assert (board_set.movement, board_set.rounds, stage.rounds.count()) == ("howell", 2, 2)
    assert Match.objects.filter(round__stage=stage).count() == 2 * 4
