"""POST /api/v1/matches/{id}/records/: who may submit, what is refused, what is stored."""

import json

import pytest
from django.urls import reverse

from games.models import Submission
from tests.api import factories
from tournaments.models import ChangeLog, MatchResult, Role, TournamentRole

pytestmark = pytest.mark.django_db


def url(match):
    return reverse("match-records", kwargs={"match_id": match.pk})


def post(client, match, body, content_type="application/json"):
    if not isinstance(body, str | bytes):
        body = json.dumps(body)
    return client.post(url(match), data=body, content_type=content_type)


def assert_error(response, status, code=None, field=None):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}, body
    assert {"code", "message", "field"} <= set(body["error"])
    assert body["error"]["message"]
    if code:
        assert body["error"]["code"] == code, body
    if field:
        assert body["error"]["field"] == field, body
    return body["error"]


# --- permissions ------------------------------------------------------------------------------


def test_anonymous_cannot_submit(api, tournament, match):
    assert_error(post(api(), match, factories.record(tournament)), 401)
    assert Submission.objects.count() == 0


@pytest.mark.parametrize("who", ["organizer", "referee", "home_player", "away_player"])
def test_organizers_referees_and_the_match_players_may_submit(
    api, tournament, match, organizer, referee, who
):
    user = {
        "organizer": organizer,
        "referee": referee,
        "home_player": factories.players_user(match.home),
        "away_player": factories.players_user(match.away),
    }[who]
    response = post(api(user, token=True), match, factories.record(tournament))
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["state"] == "pending"
    assert body["version"] == 1
    assert response["Location"].endswith(f"/api/v1/submissions/{body['id']}/")
    assert Submission.objects.get().submitter == user


def test_a_player_of_another_match_may_not_submit(api, tournament):
    first, _second, third = factories.matches(tournament)
    outsider_line = ({third.home_id, third.away_id} - {first.home_id, first.away_id}).pop()
    outsider = factories.players_user(type(first.home).objects.get(pk=outsider_line))
    assert_error(post(api(outsider), first, factories.record(tournament)), 403)
    assert Submission.objects.count() == 0


def test_an_unrelated_user_gets_403_on_a_public_and_404_on_a_private_tournament(api, db):
    stranger = factories.user()
    public = factories.tournament(public=True)
    private = factories.tournament(public=False)
    assert_error(post(api(stranger), factories.matches(public)[0], factories.record(public)), 403)
    response = post(api(stranger), factories.matches(private)[0], factories.record(private))
    assert_error(response, 404)
    assert Submission.objects.count() == 0


def test_a_player_may_submit_in_a_private_tournament(api, db):
    private = factories.tournament(public=False)
    match = factories.matches(private)[0]
    response = post(api(factories.players_user(match.home)), match, factories.record(private))
    assert response.status_code == 202


def test_unknown_match_is_404(api, organizer, tournament):
    response = api(organizer).post(
        "/api/v1/matches/999999/records/", data="{}", content_type="application/json"
    )
    assert_error(response, 404)


# --- idempotency and versions -----------------------------------------------------------------


def test_same_document_twice_is_the_same_submission(api, organizer, tournament, match):
    doc = factories.record(tournament, seed=3)
    first = post(api(organizer), match, doc)
    # Key order and spacing do not matter: the hash is over canonical JSON.
    again = post(api(organizer), match, json.dumps(doc, indent=2, sort_keys=True))
    assert first.status_code == 202
    assert again.status_code == 200
    assert again.json()["id"] == first.json()["id"]
    assert Submission.objects.count() == 1


def test_a_new_document_is_a_new_version(api, organizer, tournament, match):
    post(api(organizer), match, factories.record(tournament, seed=1))
    second = post(api(organizer), match, factories.record(tournament, seed=2))
    assert second.status_code == 202
    assert second.json()["version"] == 2
    assert sorted(Submission.objects.values_list("version", flat=True)) == [1, 2]


def test_document_is_stored_exactly_as_submitted(api, organizer, tournament, match):
    doc = factories.record(tournament, seed=4)
    post(api(organizer), match, doc)
    assert Submission.objects.get().document == doc


# --- bad input: 4xx, a clear body, nothing stored ---------------------------------------------


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ("{not json", 400, "malformed_json"),
        ("", 400, "malformed_json"),
        ("[1, 2, 3]", 400, "invalid_type"),
        ('"a string"', 400, "invalid_type"),
        ("NaN", 400, "malformed_json"),
        (b"\xff\xfe\x00", 400, "malformed_json"),
    ],
)
def test_malformed_bodies(api, organizer, match, body, status, code):
    assert_error(post(api(organizer), match, body), status, code)
    assert Submission.objects.count() == 0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"seats": 5}, "seats"),
        ({"deals": "many"}, "deals"),
        ({"end": {"target": "eleven"}}, "end.target"),
        ({"variant": "briscola"}, "variant"),
        ({"options": {"rebelo": True}}, "options"),
        ({"schema": "scopa-match/9"}, "schema"),
    ],
)
def test_wrong_types_and_unknown_names_name_the_field(
    api, organizer, tournament, match, change, field
):
    doc = factories.record(tournament)
    doc.update(change)
    error = assert_error(post(api(organizer), match, doc), 400)
    assert error["field"] and error["field"].startswith(field), error
    assert Submission.objects.count() == 0


def test_a_bad_card_in_a_deck_names_the_field(api, organizer, tournament, match):
    doc = factories.record(tournament)
    doc["deals"][0]["deck"][5] = "11X"
    error = assert_error(post(api(organizer), match, doc), 400)
    assert error["field"].startswith("deals[0].deck"), error
    assert Submission.objects.count() == 0


def test_a_nul_character_is_refused_not_a_500(api, organizer, tournament, match):
    doc = factories.record(tournament)
    doc["seats"][0] = "anna\u0000"
    assert_error(post(api(organizer), match, doc), 400, "nul_character")
    assert Submission.objects.count() == 0


def test_oversize_body_is_413(api, organizer, tournament, match):
    doc = factories.record(tournament)
    doc["padding"] = "x" * (1024 * 1024)
    assert_error(post(api(organizer), match, doc), 413, "too_large")
    assert Submission.objects.count() == 0


def test_a_record_naming_another_match_is_refused(api, organizer, tournament):
    first, second, _ = factories.matches(tournament)
    doc = factories.record(tournament)
    doc["match"] = second.pk
    assert_error(post(api(organizer), first, doc), 422, "wrong_match", "match")
    assert Submission.objects.count() == 0


def test_a_record_of_another_matchs_players_is_refused(api, organizer, tournament):
    first, _second, third = factories.matches(tournament)
    # Match 3 is lines 1 v 2; submitted to match 1 (lines 0 v 1) its seat 0 is no home player.
    seats = [third.home.members.first().player.name, third.away.members.first().player.name]
    doc = factories.record(tournament, seats=2)
    doc["seats"] = seats
    assert_error(post(api(organizer), first, doc), 422, "wrong_players", "seats[0]")
    assert Submission.objects.count() == 0


def test_seats_named_by_federation_id_in_order_are_accepted(api, organizer, tournament, match):
    home = match.home.members.first().player
    away = match.away.members.first().player
    home.federation_id, away.federation_id = "FIGS-1", "FIGS-2"
    home.save()
    away.save()
    doc = factories.record(tournament)
    doc["seats"] = ["FIGS-1", "FIGS-2"]
    assert post(api(organizer), match, doc).status_code == 202
    doc["seats"] = ["FIGS-2", "FIGS-1"]
    assert_error(post(api(organizer), match, doc), 422, "wrong_players")


def test_the_seat_check_reads_only_the_players_the_seats_name(organizer):
    """Not every player of the tournament (25 ms for 2,000 lines): a few rows, whatever its size."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from games.services import check_record_fits

    big = factories.tournament(lines=30, organizer=organizer)
    match = factories.matches(big)[0]
    doc = factories.record(big)
    doc["seats"] = [match.home.members.first().player.name, "nickname"]
    with CaptureQueriesContext(connection) as queries:
        check_record_fits(match, doc)
    rows = 0
    with connection.cursor() as cursor:
        for query in queries.captured_queries:
            if '"tournaments_player"' in query["sql"]:
                cursor.execute(query["sql"])
                rows += len(cursor.fetchall())
    assert 1 <= rows <= 2


@pytest.mark.parametrize(
    ("simulated", "code", "field"),
    [
        ({"seats": 4}, "seats_mismatch", "seats"),
        ({"variant": "scopa-d-assi"}, "variant_mismatch", "variant"),
        ({"options": {"napola": True}}, "options_mismatch", "options"),
        ({"end": {"target": 21}}, "end_mismatch", "end"),
        ({"end": {"deals": 3}}, "end_mismatch", "end"),
        ({"knockout": True}, "knockout_mismatch", "knockout"),
    ],
)
def test_records_of_other_rules_are_refused(
    api, organizer, tournament, match, simulated, code, field
):
    params = {
        "variant": "scopa",
        "seats": 2,
        "end": tournament.match_end(),
        "knockout": False,
        "seed": 5,
    }
    params.update(simulated)
    from scopa import simulate_match

    doc = simulate_match(**params)
    assert_error(post(api(organizer), match, doc), 422, code, field)
    assert Submission.objects.count() == 0


def test_a_match_without_two_lines_takes_no_record(api, organizer, tournament, match):
    match.away = None
    match.save()
    assert_error(post(api(organizer), match, factories.record(tournament)), 409, "match_not_ready")


def test_csrf_is_enforced_for_session_logins(organizer, tournament, match):
    from rest_framework.test import APIClient

    client = APIClient(enforce_csrf_checks=True)
    client.login(username="organizer", password="pw-organizer")
    response = post(client, match, factories.record(tournament))
    assert_error(response, 403)
    assert Submission.objects.count() == 0


# --- verification (in-process) ----------------------------------------------------------------


def submit_and_run(client, match, doc, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = post(client, match, doc)
    assert response.status_code in (200, 202), response.content
    return Submission.objects.get(pk=response.json()["id"])


def test_a_legal_record_becomes_the_result(
    api, organizer, tournament, match, django_capture_on_commit_callbacks
):
    doc = factories.record(tournament, seed=7)
    sub = submit_and_run(api(organizer), match, doc, django_capture_on_commit_callbacks)
    assert sub.state == "verified"
    assert sub.is_standing
    assert sub.verdict["valid"] is True
    results = {r.line_id: r for r in MatchResult.objects.filter(match=match)}
    assert results[match.home_id].points == sub.verdict["totals"][0]
    assert results[match.away_id].points == sub.verdict["totals"][1]
    body = api(organizer).get(f"/api/v1/submissions/{sub.pk}/").json()
    assert body["state"] == "verified"
    assert body["document"] == doc


def test_an_illegal_record_is_rejected_with_the_referees_sentence(
    api, organizer, tournament, match, django_capture_on_commit_callbacks
):
    doc = factories.record(tournament, seed=8)
    play = doc["deals"][0]["plays"][0]
    hand_other = doc["deals"][0]["deck"][0:3]
    play["card"] = next(
        c for c in doc["deals"][0]["deck"][:12] if c not in hand_other and c != play["card"]
    )
    sub = submit_and_run(api(organizer), match, doc, django_capture_on_commit_callbacks)
    assert sub.state == "rejected"
    assert not sub.is_standing
    assert MatchResult.objects.filter(match=match).count() == 0
    en = api(organizer).get(f"/api/v1/submissions/{sub.pk}/", HTTP_ACCEPT_LANGUAGE="en").json()
    assert en["errors"][0]["deal"] == 0
    assert en["errors"][0]["message"].startswith("deal 0, play")


def test_declared_mismatches_are_flagged(
    api, organizer, tournament, match, django_capture_on_commit_callbacks
):
    doc = factories.record(tournament, seed=9)
    declared = doc["deals"][0]["declared"]
    doc["deals"][0]["declared"] = [declared[0] + 1, declared[1]]
    sub = submit_and_run(api(organizer), match, doc, django_capture_on_commit_callbacks)
    assert sub.state == "verified"
    assert sub.has_mismatches
    assert sub.declared_mismatches


def test_two_disagreeing_legal_versions_wait_for_the_organizer(
    api, organizer, tournament, match, django_capture_on_commit_callbacks
):
    client = api(organizer)
    first = submit_and_run(
        client, match, factories.record(tournament, seed=10), django_capture_on_commit_callbacks
    )
    second = submit_and_run(
        client, match, factories.record(tournament, seed=11), django_capture_on_commit_callbacks
    )
    assert first.is_standing and not second.is_standing
    assert second.needs_decision
    home = MatchResult.objects.get(match=match, line=match.home)
    assert home.points == first.verdict["totals"][0]
    # The organizer makes version 2 the result.
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/v1/submissions/{second.pk}/stand/", {"based_on": 1})
    assert response.status_code == 200, response.content
    second.refresh_from_db()
    first.refresh_from_db()
    assert second.is_standing and not first.is_standing
    # the first is superseded, not waiting: a decision was made (it can still be brought back)
    assert not second.needs_decision and not first.needs_decision
    assert first.result_version_status == "superseded"
    home = MatchResult.objects.get(match=match, line=match.home)
    assert home.points == second.verdict["totals"][0]


def test_only_organizers_and_referees_choose_the_standing_version(
    api, referee, organizer, tournament, match, django_capture_on_commit_callbacks
):
    sub = submit_and_run(
        api(organizer), match, factories.record(tournament), django_capture_on_commit_callbacks
    )
    scorer = factories.user("scorer")
    TournamentRole.objects.create(tournament=tournament, user=scorer, role=Role.SCORER)
    for outsider in (scorer, factories.players_user(match.home)):
        assert_error(api(outsider).post(f"/api/v1/submissions/{sub.pk}/stand/"), 403)
        assert_error(api(outsider).post(f"/api/v1/submissions/{sub.pk}/rerun/"), 403)
    stand = api(referee).post(f"/api/v1/submissions/{sub.pk}/stand/", {"based_on": 1})
    assert stand.status_code == 200


def test_rerun_does_not_apply_the_result_twice(
    api, organizer, tournament, match, django_capture_on_commit_callbacks
):
    sub = submit_and_run(
        api(organizer), match, factories.record(tournament), django_capture_on_commit_callbacks
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = api(organizer).post(f"/api/v1/submissions/{sub.pk}/rerun/")
    assert response.status_code == 202
    sub.refresh_from_db()
    assert sub.state == "verified" and sub.is_standing
    assert MatchResult.objects.filter(match=match).count() == 2


def test_submissions_are_visible_to_staff_and_submitter_only(
    api, organizer, tournament, match, django_capture_on_commit_callbacks
):
    player = factories.players_user(match.home)
    sub = submit_and_run(
        api(player), match, factories.record(tournament), django_capture_on_commit_callbacks
    )
    assert api(player).get(f"/api/v1/submissions/{sub.pk}/").status_code == 200
    assert api(organizer).get(f"/api/v1/submissions/{sub.pk}/").status_code == 200
    assert_error(api(factories.user()).get(f"/api/v1/submissions/{sub.pk}/"), 404)
    assert_error(api().get(f"/api/v1/submissions/{sub.pk}/"), 401)
    listing = api(organizer).get("/api/v1/submissions/", {"state": "verified"}).json()
    assert [s["id"] for s in listing["results"]] == [sub.pk]
    assert ChangeLog.objects.filter(match=match).count() >= 1


def test_listing_a_private_matchs_records_is_404_for_strangers(api, db):
    private = factories.tournament(public=False)
    match = factories.matches(private)[0]
    assert_error(api(factories.user()).get(url(match)), 404)
    player = factories.players_user(match.home)
    assert api(player).get(url(match)).status_code == 200


def test_a_desk_correction_over_a_record_is_not_undone_by_a_rerun(
    api, organizer, tournament, match, django_capture_on_commit_callbacks
):
    from tournaments.services import results

    sub = submit_and_run(
        api(organizer), match, factories.record(tournament), django_capture_on_commit_callbacks
    )
    assert sub.is_standing
    _home, away = sub.verdict["totals"]
    # the referee's sheet: the same deals with the lines the other way round
    corrected = [
        {
            "points": [d["points"][1], d["points"][0]],
            "breakdown": [d["breakdown"][1], d["breakdown"][0]],
            "tiebreak": d.get("tiebreak", False),
        }
        for d in sub.verdict["deals"]
        if not d.get("void")
    ]
    with django_capture_on_commit_callbacks(execute=True):
        results.enter_result(match, corrected, user=organizer, based_on=1, reason="referee")
    sub.refresh_from_db()
    assert not sub.is_standing  # the record no longer stands: no replay of it
    with django_capture_on_commit_callbacks(execute=True):
        response = api(organizer).post(f"/api/v1/submissions/{sub.pk}/rerun/")
    assert response.status_code == 202
    sub.refresh_from_db()
    assert sub.state == "verified" and not sub.is_standing
    assert MatchResult.objects.get(match=match, line=match.home).points == away


def test_choosing_a_version_based_on_a_stale_one_is_a_409(
    api, organizer, tournament, match, django_capture_on_commit_callbacks
):
    client = api(organizer)
    first = submit_and_run(
        client, match, factories.record(tournament, seed=10), django_capture_on_commit_callbacks
    )
    second = submit_and_run(
        client, match, factories.record(tournament, seed=11), django_capture_on_commit_callbacks
    )
    assert first.is_standing and second.needs_decision
    response = client.post(f"/api/v1/submissions/{second.pk}/stand/", HTTP_IF_MATCH='"7"')
    assert response.status_code == 409, response.content
    body = response.json()
    assert body["error"]["code"] == "stale_version"
    assert body["current"]["number"] == 1 and body["current"]["status"] == "in_force"
    second.refresh_from_db()
    assert second.needs_decision
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/v1/submissions/{second.pk}/stand/", {"based_on": 1})
    assert response.status_code == 200, response.content


def test_choosing_a_version_without_naming_the_one_in_force_is_a_428(
    api, organizer, tournament, match, django_capture_on_commit_callbacks
):
    """With a desk correction in force, ``stand`` with no version (no
    ``based_on``, no ``If-Match``) put the record's version back in force silently."""
    from tournaments.models import ResultVersion
    from tournaments.services import results

    client = api(organizer)
    sub = submit_and_run(
        client, match, factories.record(tournament, seed=10), django_capture_on_commit_callbacks
    )
    corrected = [
        {
            "points": [d["points"][1], d["points"][0]],
            "breakdown": [d["breakdown"][1], d["breakdown"][0]],
            "tiebreak": d.get("tiebreak", False),
        }
        for d in sub.verdict["deals"]
        if not d.get("void")
    ]
    with django_capture_on_commit_callbacks(execute=True):
        results.enter_result(match, corrected, user=organizer, based_on=1, reason="desk")
    desk = results.in_force(match)
    assert desk.number == 2
    for body in ({}, {"other": 1}):
        response = client.post(f"/api/v1/submissions/{sub.pk}/stand/", body, format="json")
        assert response.status_code == 428, response.content
        error = response.json()["error"]
        assert error["code"] == "version_required" and error["field"] == "based_on"
    italian = client.post(f"/api/v1/submissions/{sub.pk}/stand/", HTTP_ACCEPT_LANGUAGE="it")
    assert "versione" in italian.json()["error"]["message"]
    assert results.in_force(match) == desk  # nothing changed
    assert ResultVersion.objects.get(pk=desk.pk).status == "in_force"
    stale = client.post(f"/api/v1/submissions/{sub.pk}/stand/", HTTP_IF_MATCH='"1"')
    assert stale.status_code == 409
    n = desk.number
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/v1/submissions/{sub.pk}/stand/", HTTP_IF_MATCH=f'"{n}"')
    assert response.status_code == 200, response.content
    sub.refresh_from_db()
    assert sub.is_standing


def test_the_schema_documents_the_428(api, db):
    schema = api().get("/api/schema/", {"format": "json"}).json()
    stand = next(
        operation["post"] for path, operation in schema["paths"].items() if path.endswith("/stand/")
    )
    assert {"200", "409", "428"} <= set(stand["responses"])
    assert any(p["name"] == "If-Match" for p in stand["parameters"])
    body = stand["requestBody"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
    assert "based_on" in schema["components"]["schemas"][body]["properties"]
