"""Arbitrary text and numbers in every form and serializer field never give a 500.

Hypothesis feeds the desk's result form, the CSV line import (service and admin form) and the
API's write serializers (tournaments, stages, lines, generate, records); every answer must be a
2xx/3xx or a clear 4xx. The test client re-raises a view's exception, so a crash fails here.
"""

import contextlib
import json

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from tests.api import factories
from tests.pages.factories import build_tournament
from tournaments.exceptions import TournamentError
from tournaments.models import Match
from tournaments.services import entries

pytestmark = pytest.mark.django_db

FUZZ = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# text an HTTP form can carry (no lone surrogates: a browser cannot encode them), NUL included
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40) | st.sampled_from(
    ["\x00", "9" * 5000, "-" + "9" * 5000, "1e309", "NaN", "²", "٣", " 7 "]
)
NUMBER = st.one_of(
    st.integers().map(str),
    st.integers(min_value=4000, max_value=6000).map(lambda n: "9" * n),  # past int()'s limit
    st.floats(allow_nan=True, allow_infinity=True).map(str),
)
VALUE = TEXT | NUMBER
# JSON values for the API: anything JSON can say, including lone surrogates (valid JSON text)
JSON_VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**4000, max_value=10**4250)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.sampled_from(["\ud800", "\x00"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _ok(status):
    assert status < 500, status


@pytest.fixture
def desk(client):
    tournament = build_tournament(4, slug="fuzz", play=False)
    user = User.objects.create_user("fuzz-organizer", password="x-pass-12345")
    tournament.organizers.add(user)
    client.force_login(user)
    match = (
        Match.objects.filter(round__stage__tournament=tournament, away__isnull=False)
        .order_by("round__number", "table_number")
        .first()
    )
    return client, reverse("desk:match", args=[tournament.slug, match.pk])


@FUZZ
@given(
    rows=VALUE,
    outcome=VALUE,
    offender=VALUE,
    action=st.sampled_from(["check", "save"]) | VALUE,
    cells=st.dictionaries(
        st.sampled_from(
            [
                f"d{i}-{side}-{field}"
                for i in range(2)
                for side in ("home", "away")
                for field in ("points", "scope", "carte", "denari", "settebello", "primiera")
            ]
            + ["d0-tiebreak", "d0-penalty", "d0-last_capture", "time_expired"]
        ),
        VALUE,
        max_size=10,
    ),
)
def test_desk_result_form(desk, rows, outcome, offender, action, cells):
    client, url = desk
    data = {"rows": rows, "outcome": outcome, "offender": offender, "action": action, **cells}
    _ok(client.post(url, data).status_code)
    _ok(client.post(url, data, HTTP_HX_REQUEST="true").status_code)
    _ok(client.get(url, {"rows": rows}).status_code)


@FUZZ
@given(cells=st.lists(st.lists(VALUE, min_size=1, max_size=10), min_size=1, max_size=4))
def test_csv_line_import(cells):
    tournament = factories.tournament(lines=0)
    header = "line,player 1,player 2,federation id 1,club,city,seed"
    body = header + "\n" + "\n".join(",".join(row) for row in cells)
    with contextlib.suppress(TournamentError):
        entries.import_lines_csv(tournament, body.encode("utf-8", "surrogatepass"))


@FUZZ
@given(name=VALUE, seed=VALUE, player=VALUE)
def test_csv_line_import_on_the_desk(client, name, seed, player):
    admin = User.objects.filter(username="fuzz-admin").first() or User.objects.create_superuser(
        "fuzz-admin", password="x-pass-12345"
    )
    client.force_login(admin)
    tournament = factories.tournament(lines=0)
    body = f"line,player 1,seed\n{name},{player},{seed}\n".encode()
    upload = SimpleUploadedFile("lines.csv", body, content_type="text/csv")
    url = reverse("desk:import-lines", args=[tournament.slug])
    _ok(client.post(url, {"file": upload}).status_code)


@pytest.fixture
def api_world():
    organizer = factories.user("fuzz-api", is_staff=True)
    tournament = factories.tournament(lines=3, organizer=organizer)
    client = APIClient()
    client.force_authenticate(organizer)
    return client, tournament


def _post_json(client, url, body):
    raw = json.dumps(body, ensure_ascii=True)  # "\ud800" travels as an escape, as a client would
    return client.post(url, data=raw, content_type="application/json")


@FUZZ
@given(fields=st.dictionaries(
    st.sampled_from(["slug", "name", "start_date", "end_date", "venue", "is_public", "variant",
                     "options", "deck_style", "seats_per_line", "end_rule", "end_value",
                     "time_limit_s", "vp_table", "tiebreaks"]),
    JSON_VALUE,
))  # fmt: skip
def test_api_tournament_create(api_world, fields):
    client, _tournament = api_world
    _ok(_post_json(client, "/api/v1/tournaments/", fields).status_code)


@FUZZ
@given(fields=st.dictionaries(
    st.sampled_from(["tournament", "order", "name", "kind", "double_round_robin",
                     "third_place_match"]),
    JSON_VALUE,
))  # fmt: skip
def test_api_stage_create(api_world, fields):
    client, _tournament = api_world
    _ok(_post_json(client, "/api/v1/stages/", fields).status_code)


@FUZZ
@given(fields=st.dictionaries(st.sampled_from(["groups", "seeds", "replace"]), JSON_VALUE))
def test_api_generate(api_world, fields):
    client, tournament = api_world
    stage = tournament.stages.first()
    _ok(_post_json(client, f"/api/v1/stages/{stage.pk}/generate/", fields).status_code)


@FUZZ
@given(fields=st.dictionaries(st.sampled_from(["line", "name", "seed", "players"]), JSON_VALUE))
def test_api_add_line(api_world, fields):
    client, tournament = api_world
    _ok(_post_json(client, f"/api/v1/tournaments/{tournament.pk}/lines/", fields).status_code)


@FUZZ
@given(
    field=st.sampled_from(["seats", "variant", "options", "end", "deals", "knockout", "match"]),
    value=JSON_VALUE,
)
def test_api_record_fields(api_world, field, value):
    client, tournament = api_world
    match = factories.matches(tournament)[0]
    document = factories.record(tournament, seed=2)
    document[field] = value
    url = reverse("match-records", kwargs={"match_id": match.pk})
    _ok(_post_json(client, url, document).status_code)
