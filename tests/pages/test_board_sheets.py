"""The desk's printed board sheets of a duplicate stage: the organizer's only, each page the
text the engine reads back into the same board, with its QR code."""

import re
from html import unescape

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

import scopa
from tests.tournaments.conftest import make_tournament
from tournaments.models import Role, Stage, TournamentRole
from tournaments.services import duplicate

pytestmark = pytest.mark.django_db


def test_the_organizer_prints_sheets_that_rebuild_the_boards_and_a_scorer_may_not(client):
    tournament = make_tournament(
        "scopa-tre-smazzate",
        n_lines=6,
        stages=[{"name": "Duplicato", "kind": Stage.Kind.DUPLICATE}],
        end_value=2,
    )
    stage = tournament.stages.get()
    board_set = duplicate.draw_duplicate(stage, seed="club")
    url = reverse("desk:boards", args=[tournament.slug, stage.pk])
    organizer = User.objects.create_user("org", password="x-pass-12345")
    tournament.organizers.add(organizer)
    scorer = User.objects.create_user("scorer", password="x-pass-12345")
    TournamentRole.objects.create(tournament=tournament, user=scorer, role=Role.SCORER)
    client.login(username="scorer", password="x-pass-12345")
    assert client.get(url).status_code == 403
    client.login(username="org", password="x-pass-12345")
    page = client.get(url).content.decode()
    sheets = re.findall(r'<pre class="board-text">(.*?)</pre>', page, re.S)
    boards = duplicate.boards_of(board_set)
    assert [scopa.board_from_sheet(unescape(text)) for text in sheets] == list(boards)
    assert page.count("<svg") == len(boards) == 6
    assert "held by 3 tables" in page or "giocata a 3 tavoli" in page
    other = tournament.stages.create(order=2, name="Gironi", kind=Stage.Kind.ROUND_ROBIN)
    assert client.get(reverse("desk:boards", args=[tournament.slug, other.pk])).status_code == 404


def test_the_desk_draws_a_duplicate_stage_and_refuses_an_unknown_movement(client):
    tournament = make_tournament(
        "scopa-tre-smazzate",
        n_lines=6,
        stages=[{"name": "Duplicato", "kind": Stage.Kind.DUPLICATE}],
        end_value=2,
    )
    stage = tournament.stages.get()
    organizer = User.objects.create_user("org", password="x-pass-12345")
    tournament.organizers.add(organizer)
    client.login(username="org", password="x-pass-12345")
    desk = client.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
    assert 'name="movement"' in desk
    url = reverse("desk:generate", args=[tournament.slug, stage.pk])
    client.post(url, {"movement": "relay", "scoring": "matchpoints"})
    assert not duplicate.BoardSet.objects.filter(stage=stage).exists()
    client.post(url, {"movement": "howell", "scoring": "difference"})
    board_set = duplicate.BoardSet.objects.get(stage=stage)
    assert (board_set.movement, board_set.scoring) == ("howell", "difference")
    desk = client.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
    assert reverse("desk:boards", args=[tournament.slug, stage.pk]) in desk


def test_the_public_pages_of_a_duplicate_stage_show_no_seed(client):
    tournament = make_tournament(
        "scopa-tre-smazzate",
        n_lines=6,
        stages=[{"name": "Duplicato", "kind": Stage.Kind.DUPLICATE}],
        end_value=2,
    )
    stage = tournament.stages.get()
    duplicate.draw_duplicate(stage, seed="seme-segreto-xyz")
    round_ = stage.rounds.get(number=1)
    for url in (
        reverse("public:tournament", args=[tournament.slug]),
        reverse("public:stage", args=[tournament.slug, stage.pk]),
        reverse("public:round", args=[tournament.slug, round_.pk]),
    ):
        page = client.get(url)
        assert page.status_code == 200, url
        assert "seme-segreto-xyz" not in page.content.decode()
