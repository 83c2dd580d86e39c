"""The director's rulings on a duplicate board at the desk: given from the match's page by those
who decide (a scorer may not), logged, scored as the adjusted percentages, withdrawn again; a
board the table does not hold is refused with a message, never a 500."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tests.tournaments.test_duplicate_standings import _example
from tournaments.models import BoardAdjustment, ChangeLog, Match, Role, TournamentRole
from tournaments.services import duplicate

pytestmark = pytest.mark.django_db

EN = {"HTTP_ACCEPT_LANGUAGE": "en"}


def _users(tournament):
    referee = User.objects.create_user("arbitro", password="x-pass-12345")
    TournamentRole.objects.create(tournament=tournament, user=referee, role=Role.REFEREE)
    scorer = User.objects.create_user("segnapunti", password="x-pass-12345")
    TournamentRole.objects.create(tournament=tournament, user=scorer, role=Role.SCORER)
    return referee, scorer


def test_the_referee_rules_a_board_and_withdraws_the_ruling(client):
    tournament, stage, board_set, names = _example()
    _users(tournament)
    match = Match.objects.get(round__stage=stage, round__number=1, table_number=1)  # boards 1-2
    page_url = reverse("desk:match", args=[tournament.slug, match.pk])
    rule_url = reverse("desk:rule-board", args=[tournament.slug, match.pk])
    post = {"board": "2", "kind": "fouled", "fault": "ew", "note": "due carte girate"}

    client.login(username="segnapunti", password="x-pass-12345")
    page = client.get(page_url, **EN).content.decode()
    assert "Boards of this table" in page and "Give the adjusted score" not in page
    assert client.post(rule_url, post).status_code == 403
    assert not BoardAdjustment.objects.filter(match=match).exists()

    client.login(username="arbitro", password="x-pass-12345")
    page = client.get(page_url, **EN).content.decode()
    assert "Give the adjusted score" in page and "East-West: Linea 002" in page
    answer = client.post(rule_url, post, follow=True, **EN)
    assert answer.status_code == 200
    ruling = BoardAdjustment.objects.get(match=match, board=2)
    assert (ruling.kind, ruling.fault, ruling.note) == ("fouled", "ew", "due carte girate")
    log = ChangeLog.objects.get(action="board.ruled", match=match)
    assert log.user.username == "arbitro" and log.detail["board"] == 2
    two = {names[s.line]: s for s in duplicate.scores(board_set) if s.board == 2}
    # N1 gets 60 % of the top 6, E1 (at fault) 40 %
    assert float(two["N1"].score) == 3.6 and float(two["E1"].score) == 2.4
    assert "Fouled or misprepared deck; East-West at fault" in answer.content.decode()

    withdraw = reverse("desk:clear-ruling", args=[tournament.slug, match.pk, 2])
    assert client.post(withdraw).status_code == 302
    assert not BoardAdjustment.objects.filter(match=match, board=2).exists()
    assert ChangeLog.objects.filter(action="board.ruling_cleared", match=match).exists()


def test_a_board_the_table_does_not_hold_is_refused_with_a_message(client):
    tournament, stage, _board_set, _names = _example()
    referee, _scorer = _users(tournament)
    match = Match.objects.get(round__stage=stage, round__number=1, table_number=1)
    client.force_login(referee)
    rule_url = reverse("desk:rule-board", args=[tournament.slug, match.pk])
    answer = client.post(
        rule_url, {"board": "7", "kind": "fouled", "fault": "ns"}, follow=True, **EN
    )
    assert answer.status_code == 200
    assert "Select a valid choice" in answer.content.decode()
    assert not BoardAdjustment.objects.filter(match=match).exists()


def test_the_projector_shows_the_ranking_against_the_field_per_direction(client):
    tournament, stage, _board_set, _names = _example()
    referee, _scorer = _users(tournament)
    client.force_login(referee)
    round_ = stage.rounds.get(number=4)
    page = client.get(reverse("desk:projector", args=[tournament.slug, round_.pk]), **EN)
    assert page.context["complete"]
    captions = [str(caption) for caption, _rows in page.context["standings"]]
    assert captions == ["North-South", "East-West"]
    text = page.content.decode()
    north_south = text[text.index("<caption>North-South") : text.index("<caption>East-West")]
    # N3 (Linea 005) first at 67.36 %, N4 (Linea 007) last at 42.92 %
    assert north_south.index("Linea 005") < north_south.index("Linea 007")
    assert "67.36" in north_south and "42.92" in north_south


def test_a_closed_stages_ruling_stays_and_the_desk_says_why(client):
    from tournaments.models import Stage

    tournament, stage, _board_set, _names = _example()
    referee, _scorer = _users(tournament)
    client.force_login(referee)
    ruled = BoardAdjustment.objects.get()
    Stage.objects.filter(pk=stage.pk).update(status=Stage.Status.CLOSED)
    withdraw = reverse("desk:clear-ruling", args=[tournament.slug, ruled.match_id, ruled.board])
    answer = client.post(withdraw, follow=True, **EN)
    assert answer.status_code == 200
    assert "is closed: its boards" in answer.content.decode()
    assert BoardAdjustment.objects.filter(pk=ruled.pk).exists()
