"""Lines that never meet, through the API: ``/api/v1/tournaments/{id}/forbidden-pairings/``.

Who may do what is the role matrix's (``tests/access``); here: what the organizer writes, what
each reader gets back (the organizer's note only to the staff), and the refusals' messages."""

from tests.api import factories
from tests.api.test_records import assert_error
from tournaments.models import ChangeLog, Entry, ForbiddenPairing


def _url(t, pairing_id=None):
    base = f"/api/v1/tournaments/{t.pk}/forbidden-pairings/"
    return f"{base}{pairing_id}/" if pairing_id is not None else base


def _line_ids(t):
    return list(Entry.objects.filter(tournament=t).order_by("seed").values_list("line", flat=True))


def test_the_organizer_forbids_and_allows_and_the_note_stays_with_the_staff(
    api, organizer, referee, tournament
):
    a, _b, c = _line_ids(tournament)
    response = api(organizer).post(
        _url(tournament), {"lines": [c, a], "note": "  marito   e moglie "}, format="json"
    )
    assert response.status_code == 201, response.content
    created = response.json()
    assert [line["id"] for line in created["lines"]] == [a, c]  # stored lower id first
    assert created["note"] == "marito e moglie"
    assert ChangeLog.objects.filter(tournament=tournament, action="pairing.forbidden").exists()

    staff = api(referee).get(_url(tournament)).json()
    assert staff["count"] == 1 and staff["results"][0]["note"] == "marito e moglie"
    # a public tournament shows anyone which lines never meet, never why
    for reader in (api(), api(factories.user())):
        public = reader.get(_url(tournament))
        assert public.status_code == 200
        (row,) = public.json()["results"]
        assert "note" not in row and [line["id"] for line in row["lines"]] == [a, c]
        assert b"marito" not in public.content

    assert_error(api(organizer).delete(_url(tournament, created["id"] + 1000)), 404)
    assert api(organizer).delete(_url(tournament, created["id"])).status_code == 204
    assert not ForbiddenPairing.objects.exists()
    assert_error(api(organizer).delete(_url(tournament, created["id"])), 404)
    assert_error(api(organizer).delete(_url(tournament, 2**70)), 404)


def test_refusals_are_400_with_a_translated_message_and_write_nothing(api, organizer, tournament):
    a, b, _c = _line_ids(tournament)
    other = factories.tournament(lines=1)
    stranger = _line_ids(other)[0]
    client = api(organizer)
    cases = [
        ({"lines": [a, a]}, "forbiddenpairing_refused", "Scegli due linee diverse."),
        ({"lines": [a, stranger]}, "forbiddenpairing_refused", None),
        ({"lines": [a]}, "min_length", None),
        ({"lines": [a, b, stranger]}, "max_length", None),
        ({"note": "x"}, "required", None),
        ({"lines": [a, "b"]}, "invalid", None),
        ({"lines": [a, b], "note": "x" * 201}, "max_length", None),
    ]
    for body, code, message in cases:
        error = assert_error(client.post(_url(tournament), body, format="json"), 400, code)
        if message:
            assert error["message"] == message
        assert not ForbiddenPairing.objects.exists(), body
    assert client.post(_url(tournament), {"lines": [a, b]}, format="json").status_code == 201
    again = client.post(
        _url(tournament), {"lines": [b, a]}, format="json", HTTP_ACCEPT_LANGUAGE="en"
    )
    error = assert_error(again, 400, "forbiddenpairing_refused")
    assert error["message"] == "These two lines are already kept apart."
