"""Five inputs that gave a 500 are now refused with a clear 4xx or form error, and nothing is
stored."""

import json

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from rest_framework.test import APIClient

from games.models import Submission
from tests.api import factories
from tests.pages.factories import build_tournament
from tests.tournaments.conftest import make_tournament
from tournaments.exceptions import LineImportError
from tournaments.models import Entry, Line, Match, Player, Round
from tournaments.services import entries
from tournaments.services.results import deals_of_match

pytestmark = pytest.mark.django_db


def _api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_a_lone_surrogate_in_a_record_seat_is_refused():
    organizer = factories.user("org-surrogate", is_staff=True)
    tournament = factories.tournament(lines=2, organizer=organizer)
    match = factories.matches(tournament)[0]
    document = factories.record(tournament, seed=3)
    document["seats"] = ["SEAT-A", document["seats"][1]]
    raw = json.dumps(document).replace("SEAT-A", "x\\ud800")
    response = _api(organizer).post(
        reverse("match-records", kwargs={"match_id": match.pk}),
        data=raw,
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid_text"
    assert not Submission.objects.exists()


def test_regenerating_a_stage_whose_matches_have_records_is_refused():
    organizer = factories.user("org-regen", is_staff=True)
    tournament = factories.tournament(lines=3, organizer=organizer)
    match = factories.matches(tournament)[0]
    client = _api(organizer)
    submitted = client.post(
        reverse("match-records", kwargs={"match_id": match.pk}),
        data=json.dumps(factories.record(tournament, seed=1)),
        content_type="application/json",
    )
    assert submitted.status_code == 202
    stage = match.round.stage
    before = list(Match.objects.filter(round__stage=stage).values_list("pk", flat=True))
    response = client.post(f"/api/v1/stages/{stage.pk}/generate/", {"replace": True}, format="json")
    assert response.status_code == 400, response.content
    # the sentence (Italian by default) says why: records were sent for its matches
    assert "referti" in response.json()["error"]["message"]
    assert list(Match.objects.filter(round__stage=stage).values_list("pk", flat=True)) == before
    assert Round.objects.filter(stage=stage).count() == 1


def test_a_5000_digit_number_in_the_desk_result_form_is_a_form_error(client):
    tournament = build_tournament(4, slug="cifre", play=False)
    user = User.objects.create_user("organizzatore", password="x-pass-12345")
    tournament.organizers.add(user)
    match = (
        Match.objects.filter(round__stage__tournament=tournament, away__isnull=False)
        .order_by("round__number", "table_number")
        .first()
    )
    client.force_login(user)
    data = {"rows": "1", "outcome": "completed", "action": "save", "based_on": ""}
    data["d0-home-scope"] = "9" * 5000
    data["d0-away-scope"] = "1"
    response = client.post(reverse("desk:match", args=[tournament.slug, match.pk]), data)
    assert response.status_code == 400
    assert deals_of_match(match) == []
    data["d0-home-points"] = "-" + "9" * 5000
    response = client.post(reverse("desk:match", args=[tournament.slug, match.pk]), data)
    assert response.status_code == 400


def test_a_5000_digit_seed_in_the_csv_import_is_a_row_error():
    tournament = make_tournament()
    csv = "line,player 1,seed\nEsposito,Gennaro Esposito," + "7" * 5000 + "\n"
    with pytest.raises(LineImportError) as refused:
        entries.import_lines_csv(tournament, csv.encode())
    assert refused.value.errors == [(2, "the seed must be a positive whole number")] or (
        refused.value.errors[0][0] == 2
    )
    assert not Entry.objects.filter(tournament=tournament).exists()


def test_a_nul_in_a_csv_imported_name_is_refused():
    tournament = make_tournament()
    csv = "line,player 1\nEsposito,Gennaro\x00 Esposito\n"
    with pytest.raises(LineImportError) as refused:
        entries.import_lines_csv(tournament, csv.encode())
    assert refused.value.errors[0][0] == 2
    assert not Line.objects.exists() and not Player.objects.exists()


def test_a_lone_surrogate_in_any_api_body_is_a_400():
    """Found by test_fuzz_no_500: a field error echoing ``"\\ud800"`` could not be encoded."""
    organizer = factories.user("org-api-surrogate", is_staff=True)
    tournament = factories.tournament(lines=2, organizer=organizer)
    response = _api(organizer).post(
        f"/api/v1/tournaments/{tournament.pk}/lines/",
        data='{"name": "x\\ud800", "seed": "\\udfff"}',
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "malformed_json"
