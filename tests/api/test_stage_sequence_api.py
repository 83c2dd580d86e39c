"""The API's stages: organizers add, PATCH (settings and order) and DELETE the stages not
started; a started stage answers 409 with a translated message; others cannot."""

from tests.api import factories
from tests.api.test_records import assert_error
from tournaments.models import Stage


def _orders(tournament):
    return list(
        Stage.objects.filter(tournament=tournament).order_by("order").values_list("name", "order")
    )


def test_organizer_builds_reorders_and_trims_the_day(api, organizer, tournament):
    client = api(organizer)
    # the fixture's first stage has a round: it has started
    started = Stage.objects.get(tournament=tournament)
    made = []
    for name, kind in (("Danese", "danish"), ("Finale", "knockout"), ("Mitchell", "mitchell")):
        response = client.post(
            "/api/v1/stages/",
            {"tournament": tournament.pk, "name": name, "kind": kind, "rounds_planned": 3},
            format="json",
        )
        assert response.status_code == 201, response.content
        made.append(response.json()["id"])
    assert [order for _n, order in _orders(tournament)] == [1, 2, 3, 4]
    # the Mitchell goes before the Danish
    response = client.patch(f"/api/v1/stages/{made[2]}/", {"order": 2}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["order"] == 2
    assert _orders(tournament) == [("Gironi", 1), ("Mitchell", 2), ("Danese", 3), ("Finale", 4)]
    response = client.patch(
        f"/api/v1/stages/{made[0]}/", {"advance_count": 8, "rounds_planned": 4}, format="json"
    )
    assert response.status_code == 200, response.content
    assert Stage.objects.get(pk=made[0]).advance_count == 8
    assert client.delete(f"/api/v1/stages/{made[1]}/").status_code == 204
    assert _orders(tournament) == [("Gironi", 1), ("Mitchell", 2), ("Danese", 3)]
    # the started stage: 409 with a message, nothing changed
    assert_error(
        client.patch(f"/api/v1/stages/{started.pk}/", {"name": "X"}, format="json"),
        409,
        code="stage_started",
    )
    assert_error(client.delete(f"/api/v1/stages/{started.pk}/"), 409, code="stage_started")
    # nothing goes before a started stage
    assert_error(client.patch(f"/api/v1/stages/{made[0]}/", {"order": 1}, format="json"), 400)
    assert Stage.objects.get(pk=started.pk).name == "Gironi"


def test_others_may_not_change_stages(api, referee, tournament):
    stage = Stage.objects.create(tournament=tournament, order=2, name="KO", kind="knockout")
    assert_error(
        api(referee).patch(f"/api/v1/stages/{stage.pk}/", {"name": "X"}, format="json"), 403
    )
    assert_error(api(referee).delete(f"/api/v1/stages/{stage.pk}/"), 403)
    # a private tournament's stage does not exist for an outsider
    private = factories.tournament(public=False)
    hidden = Stage.objects.get(tournament=private)
    assert_error(api(factories.user()).delete(f"/api/v1/stages/{hidden.pk}/"), 404)
    assert Stage.objects.filter(pk__in=[stage.pk, hidden.pk]).count() == 2
