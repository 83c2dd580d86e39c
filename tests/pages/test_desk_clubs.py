"""The desk keeps clubs apart: the line's club on its form, the stage's option, the list of
lines that never meet, and a Mitchell that says why it cannot keep every club apart."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tests.pages.factories import build_tournament, play_stage
from tournaments.models import Entry, ForbiddenPairing, Line, Match, Round, Stage

pytestmark = pytest.mark.django_db


@pytest.fixture
def tournament():
    return build_tournament(6, slug="circoli", play=False, knockout=False)


@pytest.fixture
def client_in(client, tournament):
    user = User.objects.create_user("arbitro", password="x-pass-12345")
    tournament.organizers.add(user)
    client.force_login(user)
    return client


def _lines(tournament):
    return list(
        Entry.objects.filter(tournament=tournament)
        .order_by("seed")
        .values_list("line_id", flat=True)
    )


def _set_club(client, tournament, line_id, club):
    line = Line.objects.get(pk=line_id)
    url = reverse("desk:edit-line", args=[tournament.slug, line_id])
    response = client.post(url, {"name": line.name, "seed": "", "club": club, "player1": "x"})
    assert response.status_code == 302, response.content.decode()


def _mitchell(client, tournament):
    stage = Stage.objects.create(
        tournament=tournament, order=5, name="Mitchell", kind=Stage.Kind.MITCHELL
    )
    edit = reverse("desk:edit-stage", args=[tournament.slug, stage.pk])
    assert "keep_clubs_apart" in client.get(edit).content.decode()
    response = client.post(
        edit,
        {
            "name": "Mitchell",
            "kind": "mitchell",
            "first_round": "seed",
            "bye_scoring": "forfeit_win",
            "keep_clubs_apart": "on",
            "carry_over": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()
    stage.refresh_from_db()
    assert stage.keep_clubs_apart
    return stage


def _meetings(stage):
    return {
        frozenset((m.home_id, m.away_id))
        for m in Match.objects.filter(round__stage=stage, home__isnull=False, away__isnull=False)
    }


def test_the_organizer_keeps_two_clubs_apart_in_a_mitchell(client_in, tournament):
    lines = _lines(tournament)
    # seeds 1–2 and 3–4 would face each other at tables 1 and 2
    for line_id, club in zip(lines, ["Aurora", "aurora ", "Borea", "Borea", "", ""], strict=True):
        _set_club(client_in, tournament, line_id, club)
    page = client_in.get(reverse("desk:lines", args=[tournament.slug])).content.decode()
    assert "Borea" in page
    stage = _mitchell(client_in, tournament)
    for _number in range(3):
        response = client_in.post(reverse("desk:pair", args=[tournament.slug, stage.pk]))
        assert response.status_code == 302
        play_stage(stage)
    meetings = _meetings(stage)
    assert len(meetings) == 9
    assert frozenset(lines[:2]) not in meetings  # the same club, typed twice differently
    assert frozenset(lines[2:4]) not in meetings


def test_a_club_too_large_is_said_and_the_organizer_may_pair_anyway(client_in, tournament):
    lines = _lines(tournament)
    for line_id in lines[:4]:
        _set_club(client_in, tournament, line_id, "Comune di Procida")
    stage = _mitchell(client_in, tournament)
    pair = reverse("desk:pair", args=[tournament.slug, stage.pk])
    response = client_in.post(pair, HTTP_ACCEPT_LANGUAGE="it")
    assert response.status_code == 409
    page = response.content.decode()
    assert "Comune di Procida" in page and 'name="accept_meetings"' in page
    assert not Round.objects.filter(stage=stage).exists()
    assert client_in.post(pair, {"accept_meetings": "1"}).status_code == 302
    assert Round.objects.filter(stage=stage).count() == 1


def test_lines_that_never_meet_are_listed_added_and_removed_on_the_lines_page(
    client_in, tournament
):
    a, b, *_rest = _lines(tournament)
    lines_page = reverse("desk:lines", args=[tournament.slug])
    add = reverse("desk:forbid-pairing", args=[tournament.slug])
    # the same line twice: refused with a message, not a 500
    response = client_in.post(add, {"line_a": a, "line_b": a}, follow=True)
    assert response.status_code == 200 and not ForbiddenPairing.objects.exists()
    response = client_in.post(add, {"line_a": b, "line_b": a, "note": "fratelli"})
    assert response.status_code == 302
    (kept,) = ForbiddenPairing.objects.all()
    assert (kept.line_a_id, kept.line_b_id) == (min(a, b), max(a, b))
    page = client_in.get(lines_page).content.decode()
    assert "fratelli" in page
    # twice: refused with a message
    response = client_in.post(add, {"line_a": a, "line_b": b}, follow=True)
    assert response.status_code == 200 and ForbiddenPairing.objects.count() == 1
    stage = Stage.objects.create(
        tournament=tournament, order=5, name="Danese", kind=Stage.Kind.DANISH
    )
    client_in.post(reverse("desk:pair", args=[tournament.slug, stage.pk]))
    assert frozenset((a, b)) not in _meetings(stage)  # seeds 1 and 2 would have met
    remove = reverse("desk:allow-pairing", args=[tournament.slug, kept.pk])
    assert client_in.post(remove).status_code == 302
    assert not ForbiddenPairing.objects.exists()


def test_a_viewer_cannot_forbid_a_pairing(client, tournament):
    a, b, *_rest = _lines(tournament)
    user = User.objects.create_user("curioso", password="x-pass-12345")
    client.force_login(user)
    response = client.post(
        reverse("desk:forbid-pairing", args=[tournament.slug]), {"line_a": a, "line_b": b}
    )
    assert response.status_code in (403, 404)
    assert not ForbiddenPairing.objects.exists()


def test_the_desk_names_club_mates_a_swiss_round_could_not_keep_apart(client_in, tournament):
    for line_id in _lines(tournament)[:4]:  # four of six: more than half the field
        Line.objects.filter(pk=line_id).update(club="Comune di Procida")
    stage = Stage.objects.create(
        tournament=tournament,
        order=5,
        name="Svizzera",
        kind=Stage.Kind.SWISS,
        rounds_planned=2,
        keep_clubs_apart=True,
    )
    # a Swiss round is paired by a worker: the desk names them on its page once it is
    from tournaments.models import PairingJob
    from tournaments.services import pairing_jobs

    client_in.post(reverse("desk:pair", args=[tournament.slug, stage.pk]))
    pairing_jobs.run(PairingJob.objects.get(stage=stage).pk)
    desk = reverse("desk:tournament", args=[tournament.slug])
    page = client_in.get(desk, HTTP_ACCEPT_LANGUAGE="it").content.decode()
    assert "Nessun abbinamento tiene separati tutti i circoli" in page
    (match,) = [
        m
        for m in Match.objects.filter(round__stage=stage, away__isnull=False)
        if m.home.club == m.away.club
    ]
    assert f"{match.home.name} – {match.away.name}" in page
