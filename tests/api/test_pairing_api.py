"""The API pairs the next Danish, Swiss or Mitchell round: ``POST /api/v1/stages/{id}/pair/``."""

from tests.api import factories
from tests.api.test_records import assert_error
from tests.pages.factories import play_stage
from tournaments.models import Match, Stage


def _danish_stage(api, organizer, t, **extra):
    response = api(organizer).post(
        "/api/v1/stages/",
        {"tournament": t.pk, "order": 5, "name": "Danese", "kind": "danish", **extra},
        format="json",
    )
    assert response.status_code == 201, response.content
    return Stage.objects.get(pk=response.json()["id"])


def test_organizer_pairs_rounds_and_others_may_not(api, organizer, db):
    t = factories.tournament(lines=6, organizer=organizer)
    stage = _danish_stage(api, organizer, t, rounds_planned=2, stage_tiebreaks=["buchholz"])
    assert stage.stage_tiebreaks == ["buchholz"]
    assert_error(api(factories.user()).post(f"/api/v1/stages/{stage.pk}/pair/"), 403)
    response = api(organizer).post(f"/api/v1/stages/{stage.pk}/pair/")
    assert response.status_code == 201, response.content
    assert response.json()["number"] == 1 and response.json()["needs_review"] is False
    assert Match.objects.filter(round__stage=stage).count() == 3
    # round 1 has no results yet: refused with the pairing's message, nothing saved
    error = assert_error(api(organizer).post(f"/api/v1/stages/{stage.pk}/pair/"), 400)
    assert error["code"] == "pairing_refused"
    play_stage(stage)
    assert api(organizer).post(f"/api/v1/stages/{stage.pk}/pair/").status_code == 201
    standings = api(organizer).get(f"/api/v1/stages/{stage.pk}/standings/").json()
    assert len(standings[0]["rows"]) == 6


def test_a_set_vp_bye_needs_its_score(api, organizer, db):
    t = factories.tournament(lines=5, organizer=organizer)
    response = api(organizer).post(
        "/api/v1/stages/",
        {"tournament": t.pk, "order": 5, "name": "D", "kind": "danish", "bye_scoring": "set_vp"},
        format="json",
    )
    assert_error(response, 400)


def test_flagged_round_is_kept_or_paired_again_through_the_api(api, organizer, db):
    from tournaments.models import Round

    t = factories.tournament(lines=6, organizer=organizer)
    stage = _danish_stage(api, organizer, t)
    api(organizer).post(f"/api/v1/stages/{stage.pk}/pair/")
    play_stage(stage)
    api(organizer).post(f"/api/v1/stages/{stage.pk}/pair/")
    second = Round.objects.get(stage=stage, number=2)
    Round.objects.filter(pk=second.pk).update(needs_review=True)
    assert_error(api(factories.user()).post(f"/api/v1/rounds/{second.pk}/keep/"), 403)
    response = api(organizer).post(f"/api/v1/rounds/{second.pk}/keep/")
    assert response.status_code == 200 and response.json()["needs_review"] is False
    response = api(organizer).post(f"/api/v1/rounds/{second.pk}/repair/")
    assert response.status_code == 201 and response.json()["number"] == 2
    first = Round.objects.get(stage=stage, number=1)
    assert_error(api(organizer).post(f"/api/v1/rounds/{first.pk}/repair/"), 400)


def test_entries_show_the_check_in_and_a_refused_late_mitchell_pair_is_a_400(api, organizer, db):
    from tournaments.models import Entry
    from tournaments.services import entries, pairing

    t = factories.tournament(lines=6, organizer=organizer)
    pairing.set_check_in(t, list(t.entries.values_list("line_id", flat=True)))
    response = api(organizer).get(f"/api/v1/tournaments/{t.pk}/lines/")
    rows = response.json()["results"] if "results" in response.json() else response.json()
    assert rows and all(row["checked_in"] is True for row in rows)
    stage = Stage.objects.create(
        tournament=t, order=5, name="Mitchell", kind="mitchell", late_entry_until_round=3
    )
    assert api(organizer).post(f"/api/v1/stages/{stage.pk}/pair/").status_code == 201
    play_stage(stage)
    entries.add_lines(t, [entries.LineRow(name="Tardi", players=[("Tardo", "")], row_number=9)])
    Entry.objects.filter(tournament=t, line__name="Tardi").update(checked_in=True)
    # six lines: no empty East-West seat for a late pair
    error = assert_error(api(organizer).post(f"/api/v1/stages/{stage.pk}/pair/"), 400)
    assert error["code"] == "pairing_refused" and "Mitchell" in error["message"]
