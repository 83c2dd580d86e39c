"""Read endpoints follow Tournament.is_public; organizers create tournaments, add lines,
generate rounds; every error has the same body."""

import pytest

from tests.api import factories
from tests.api.test_records import assert_error
from tournaments.models import Entry, Match, Stage

pytestmark = pytest.mark.django_db


def ids(response):
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def test_public_tournaments_are_listed_for_everyone_private_only_for_their_staff(api, db):
    staff = factories.user()
    public = factories.tournament(public=True)
    private = factories.tournament(public=False, referee=staff)
    assert ids(api().get("/api/v1/tournaments/")) == [public.pk]
    assert sorted(ids(api(staff).get("/api/v1/tournaments/"))) == sorted([public.pk, private.pk])
    assert_error(api().get(f"/api/v1/tournaments/{private.pk}/"), 404, "not_found")
    match = factories.matches(private)[0]
    assert_error(api().get(f"/api/v1/matches/{match.pk}/"), 404)
    assert api(staff).get(f"/api/v1/matches/{match.pk}/").status_code == 200
    assert ids(api().get("/api/v1/matches/", {"tournament": private.pk})) == []
    assert ids(api().get("/api/v1/lines/", {"tournament": private.pk})) == []
    assert ids(api().get("/api/v1/players/", {"tournament": private.pk})) == []


def test_reads_and_filters(api, tournament):
    matches = factories.matches(tournament)
    client = api()
    assert len(ids(client.get("/api/v1/matches/", {"tournament": tournament.pk}))) == 3
    line = matches[0].home
    assert sorted(ids(client.get("/api/v1/matches/", {"line": line.pk}))) == sorted(
        m.pk for m in matches if line.pk in (m.home_id, m.away_id)
    )
    assert len(ids(client.get("/api/v1/lines/", {"tournament": tournament.pk}))) == 3
    assert len(ids(client.get("/api/v1/players/", {"tournament": tournament.pk}))) == 3
    assert len(ids(client.get("/api/v1/stages/", {"tournament": tournament.pk}))) == 1
    assert len(ids(client.get("/api/v1/rounds/", {"tournament": tournament.pk}))) == 1
    body = client.get("/api/v1/tournaments/", {"slug": tournament.slug}).json()
    assert body["count"] == 1 and body["results"][0]["seats"] == 2


def test_match_shows_deal_results_and_standings_move(
    api, organizer, tournament, match, django_capture_on_commit_callbacks
):
    from tests.api.test_records import submit_and_run

    sub = submit_and_run(
        api(organizer),
        match,
        factories.record(tournament, seed=21),
        django_capture_on_commit_callbacks,
    )
    body = api().get(f"/api/v1/matches/{match.pk}/").json()
    assert body["status"] == "done"
    assert len(body["results"]) == 2
    assert len(body["deals"]) == 2 * sum(1 for d in sub.verdict["deals"] if not d.get("void"))
    assert {r["line"]: r["points"] for r in body["results"]} == {
        match.home_id: sub.verdict["totals"][0],
        match.away_id: sub.verdict["totals"][1],
    }
    group = match.group
    rows = api().get(f"/api/v1/groups/{group.pk}/standings/").json()
    assert len(rows) == 3
    winner = match.home_id if sub.verdict["winner"] == 0 else match.away_id
    assert rows[0]["line"]["id"] == winner
    assert rows[0]["played"] == 1
    stage_rows = api().get(f"/api/v1/stages/{group.stage_id}/standings/").json()
    assert stage_rows[0]["rows"] == rows


def test_not_found_and_bad_filter_bodies(api, tournament):
    assert_error(api().get("/api/v1/matches/999999/"), 404, "not_found")
    response = api().get("/api/v1/matches/", {"tournament": "abc"})
    assert_error(response, 400)
    assert_error(api().get("/api/v1/tournaments/", {"page": 999}), 404)


def test_only_holders_of_the_add_permission_create_tournaments_and_become_organizers(
    api, organizer, db
):
    data = {
        "slug": "new-cup",
        "name": "New cup",
        "start_date": "2026-12-01",
        "variant": "scopa",
        "options": {"napola": True},
        "vp_table": factories.vp_table().slug,
        "end_rule": "target",
        "end_value": 11,
    }
    assert_error(api().post("/api/v1/tournaments/", data, format="json"), 401)
    assert_error(api(factories.user()).post("/api/v1/tournaments/", data, format="json"), 403)
    staff = factories.user(is_staff=True)  # staff status alone creates nothing
    assert_error(api(staff).post("/api/v1/tournaments/", data, format="json"), 403)
    response = api(organizer).post("/api/v1/tournaments/", data, format="json")
    assert response.status_code == 201, response.content
    from tournaments.models import Tournament

    t = Tournament.objects.get(slug="new-cup")
    assert list(t.organizers.all()) == [organizer]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"options": {"rebelo": True}}, "options"),
        ({"tiebreaks": ["coin_toss"]}, "tiebreaks"),
        ({"start_date": "yesterday"}, "start_date"),
        ({"vp_table": "nope"}, "vp_table"),
        ({"seats_per_line": 9}, "seats_per_line"),
    ],
)
def test_tournament_validation_errors_name_the_field(api, organizer, db, change, field):
    data = {
        "slug": "bad",
        "name": "Bad",
        "start_date": "2026-12-01",
        "vp_table": factories.vp_table().slug,
    }
    data.update(change)
    error = assert_error(api(organizer).post("/api/v1/tournaments/", data, format="json"), 400)
    assert error["field"] == field


def test_organizer_adds_lines_and_generates_rounds(api, organizer, db):
    t = factories.tournament(lines=0, organizer=organizer)
    client = api(organizer)
    for i in range(4):
        response = client.post(
            f"/api/v1/tournaments/{t.pk}/lines/",
            {"players": [{"name": f"Giocatore {i}"}], "seed": i + 1},
            format="json",
        )
        assert response.status_code == 201, response.content
    assert Entry.objects.filter(tournament=t).count() == 4
    assert_error(
        api(factories.user()).post(
            f"/api/v1/tournaments/{t.pk}/lines/", {"players": [{"name": "X"}]}, format="json"
        ),
        403,
    )
    stage = client.post(
        "/api/v1/stages/",
        {"tournament": t.pk, "order": 2, "name": "Girone", "kind": "round_robin"},
        format="json",
    )
    assert stage.status_code == 201, stage.content
    stage_id = stage.json()["id"]
    response = client.post(f"/api/v1/stages/{stage_id}/generate/", {"groups": 1}, format="json")
    assert response.status_code == 201, response.content
    assert len(response.json()) == 3
    assert Match.objects.filter(round__stage_id=stage_id).count() == 6
    # Generating again without replace is refused with the scheduler's message.
    error = assert_error(
        client.post(f"/api/v1/stages/{stage_id}/generate/", {}, format="json"), 400
    )
    assert "schedule" in error["code"]
    assert Stage.objects.get(pk=stage_id).status == "running"


def test_schema_and_docs_are_served(api, db):
    response = api().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    import json

    schema = json.loads(response.content)
    assert "ScopaMatchRecord" in schema["components"]["schemas"]
    body = schema["paths"]["/api/v1/matches/{match_id}/records/"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ScopaMatchRecord"
    }
    assert api().get("/api/docs/").status_code == 200


@pytest.mark.parametrize(
    ("path", "param"),
    [
        ("rounds", "tournament"),
        ("matches", "tournament"),
        ("matches", "stage"),
        ("matches", "line"),
        ("lines", "tournament"),
        ("players", "tournament"),
        ("submissions", "tournament"),
    ],
)
def test_an_id_filter_beyond_the_database_range_is_a_400_not_a_500(
    api, organizer, tournament, path, param
):
    client = api(organizer)
    response = client.get(f"/api/v1/{path}/", {param: "99999999999999999999999"})
    assert response.status_code == 400, response.content
    assert response.json()["error"]["field"] == param
    assert client.get(f"/api/v1/{path}/", {param: tournament.pk}).status_code == 200


def test_a_seed_or_seed_id_beyond_the_database_range_is_a_400_not_a_500(api, organizer, db):
    t = factories.tournament(lines=0, organizer=organizer)
    client = api(organizer)
    huge = 99999999999999999999
    error = assert_error(
        client.post(
            f"/api/v1/tournaments/{t.pk}/lines/",
            {"players": [{"name": "Giocatore"}], "seed": huge},
            format="json",
        ),
        400,
    )
    assert error["field"] == "seed"
    assert not Entry.objects.filter(tournament=t).exists()
    stage = Stage.objects.create(tournament=t, order=2, name="Finale", kind=Stage.Kind.KNOCKOUT)
    error = assert_error(
        client.post(f"/api/v1/stages/{stage.pk}/generate/", {"seeds": [huge, 1]}, format="json"),
        400,
    )
    assert error["field"].startswith("seeds")
    assert not stage.rounds.exists()


def test_rest_framework_messages_missing_from_its_catalog_come_out_in_italian(api, organizer, db):
    response = api(organizer).post(
        "/api/v1/tournaments/",
        {
            "name": "Torneo",
            "slug": "booleano",
            "start_date": "2026-12-01",
            "vp_table": factories.vp_table().slug,
            "is_public": "forse",
        },
        format="json",
        HTTP_ACCEPT_LANGUAGE="it",
    )
    error = assert_error(response, 400)
    assert error["field"] == "is_public"
    assert error["message"] == "Deve essere un valore booleano valido."


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"rebelo": True}, "Opzioni di regola sconosciute: rebelo."),
        ({"napola": "sì"}, "Queste opzioni di regola hanno un valore non ammesso: napola."),
    ],
)
def test_rule_option_errors_are_sentences_in_italian(api, organizer, db, options, message):
    data = {
        "slug": "opzioni",
        "name": "Opzioni",
        "start_date": "2026-12-01",
        "vp_table": factories.vp_table().slug,
        "options": options,
    }
    response = api(organizer).post(
        "/api/v1/tournaments/", data, format="json", HTTP_ACCEPT_LANGUAGE="it"
    )
    error = assert_error(response, 400)
    assert (error["field"], error["message"]) == ("options", message)


@pytest.mark.parametrize("path", ["/api/v1/tournaments/", "/api/v1/stages/"])
def test_json_nested_too_deep_is_a_400_not_a_500(api, organizer, db, path):
    body = '{"options": ' + "[" * 50_000 + "]" * 50_000 + "}"
    response = api(organizer).post(path, data=body, content_type="application/json")
    error = assert_error(response, 400, "malformed_json")
    assert error["field"] is None


def test_adding_lines_through_the_api_keeps_the_registration_rules(api, organizer, db):
    """The API registers lines through the entries service: a player already playing in the
    tournament, a line of the wrong size, a taken line name or seed are refused."""
    from tournaments.models import ChangeLog, Line, LineMember, Player

    t = factories.tournament(lines=0, organizer=organizer, seats_per_line=2)
    client = api(organizer)
    url = f"/api/v1/tournaments/{t.pk}/lines/"
    elsewhere = factories.tournament(lines=1, public=True)  # a player the organizer can see
    player = elsewhere.entries.get().line.members.get().player
    first = client.post(
        url, {"players": [{"id": player.pk}, {"name": "Compagno"}], "seed": 1}, format="json"
    )
    assert first.status_code == 201, first.content
    assert ChangeLog.objects.filter(tournament=t, action="line.added").count() == 1
    again = client.post(url, {"players": [{"id": player.pk}, {"name": "Altro"}]}, format="json")
    assert assert_error(again, 400)["message"].endswith("gioca già in questo torneo")
    single = Line.objects.create(name="Da solo")
    LineMember.objects.create(line=single, player=Player.objects.create(name="Solo"), position=0)
    assert_error(client.post(url, {"line": single.pk}, format="json"), 400)
    taken_seed = client.post(
        url, {"players": [{"name": "Terzo"}, {"name": "Quarto"}], "seed": 1}, format="json"
    )
    assert_error(taken_seed, 400)
    same_name = client.post(
        url,
        {"players": [{"name": "Quinto"}, {"name": "Sesto"}], "name": first.json()["line"]["name"]},
        format="json",
    )
    assert_error(same_name, 400)
    assert t.entries.count() == 1
    assert not Player.objects.filter(name__in=["Altro", "Terzo", "Quinto"]).exists()


def test_a_matchs_results_are_home_line_first(api, tournament):
    """The list followed the lines' ids, so the away line came first whenever its id
    was lower."""
    from tests.tournaments.helpers import deals
    from tournaments.services import results

    match = factories.matches(tournament)[0]
    Match.objects.filter(pk=match.pk).update(home=match.away, away=match.home)
    match.refresh_from_db()
    assert match.home_id > match.away_id
    results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))
    listed = api().get("/api/v1/matches/", {"tournament": tournament.pk}).json()["results"]
    for body in (
        api().get(f"/api/v1/matches/{match.pk}/").json(),
        next(row for row in listed if row["id"] == match.pk),
    ):
        assert [r["line"] for r in body["results"]] == [match.home_id, match.away_id]


def test_a_new_lines_club_is_stored_trimmed_and_read_back(api, organizer, db):
    t = factories.tournament(lines=0, organizer=organizer)
    client = api(organizer)
    response = client.post(
        f"/api/v1/tournaments/{t.pk}/lines/",
        {"players": [{"name": "Ospite"}], "club": "  Circolo   di Bari "},
        format="json",
    )
    assert response.status_code == 201, response.content
    listed = client.get(f"/api/v1/tournaments/{t.pk}/lines/").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert [r["line"]["club"] for r in rows] == ["Circolo di Bari"]
