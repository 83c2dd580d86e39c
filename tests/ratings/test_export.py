"""Federation export: document, CSVs, conditional GET, visibility, and the import's refusals (the
round trip through an emptied database is in ``test_export_round_trip``)."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import transaction

from tournaments.models import Match, Player, Tournament
from tournaments.services.export import FORMAT, build_document, dumps
from tournaments.services.importer import TournamentImportError, import_document

DEMO = "trofeo-golfo-2026"
URL = f"/export/v1/tournaments/{DEMO}.json"


@pytest.fixture(scope="module")
def _seeded(django_db_setup, django_db_blocker):
    """``seed_demo`` once for the module (its engine-verified records are the slow part), in a
    transaction left open around the tests: each test runs in a savepoint of it (the ``db``
    fixture) and is rolled back to the seeded demo; the demo itself is rolled back at the end."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("seed_demo", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
        yield
        transaction.set_rollback(True)


@pytest.fixture
def demo(_seeded, db):
    return Tournament.objects.get(slug=DEMO)


def test_document_shape(demo):
    doc = build_document(demo)
    assert doc["format"] == FORMAT
    assert doc["tournament"]["slug"] == DEMO
    assert all(p["federation_id"] for p in doc["players"])
    assert [s["kind"] for s in doc["stages"]] == ["round_robin", "knockout"]
    matches = [m for s in doc["stages"] for r in s["rounds"] for m in r["matches"]]
    played = [m for m in matches if m["status"] == "done" and m["outcome"] != "bye"]
    assert played and all(m["deals"] and len(m["results"]) == 2 for m in played)
    assert {"timeout", "abandon"} <= {m["outcome"] for m in matches}
    deal = played[0]["deals"][0]
    assert sum(deal["breakdown"].values()) == deal["points"]
    assert doc["final_standings"][0]["rank"] == 1
    assert all(g["standings"] for g in doc["stages"][0]["groups"])
    text = dumps(doc).decode()
    assert '"id"' not in text  # natural keys only


def test_csvs(client, demo):
    standings = client.get(f"/export/v1/tournaments/{DEMO}/standings.csv")
    assert standings.status_code == 200 and standings["Content-Type"].startswith("text/csv")
    lines = standings.content.decode().splitlines()
    assert lines[0].startswith("stage,group,rank,line,federation_ids")
    groups = demo.stages.get(kind="round_robin").name  # named in the language seed_demo ran in
    assert lines[1].startswith(f"{groups},A,1,")
    # the bracket's places carry the knock-out stage's own name, not "final" in English
    knockout = demo.stages.get(kind="knockout").name
    assert any(x.startswith(f"{knockout},,1,") for x in lines)
    assert not any(x.startswith("final,") for x in lines)
    results = client.get(f"/export/v1/tournaments/{DEMO}/results.csv").content.decode()
    n_done = Match.objects.filter(round__stage__tournament=demo, status="done").exclude(
        outcome="bye"
    )
    assert len(results.splitlines()) == 1 + n_done.count()


def test_etag_and_last_modified_give_304_until_a_change(client, demo):
    first = client.get(URL)
    assert first.status_code == 200 and first["ETag"] and first["Last-Modified"]
    assert json.loads(first.content)["format"] == FORMAT
    again = client.get(URL, HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and not again.content
    since = client.get(URL, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"])
    assert since.status_code == 304
    demo.name = "Trofeo del Golfo (rinominato)"
    demo.save()
    changed = client.get(URL, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200 and changed["ETag"] != first["ETag"]
    api = client.get(f"/api/v1/export/tournaments/{DEMO}", HTTP_IF_NONE_MATCH=changed["ETag"])
    assert api.status_code == 304


def test_private_tournaments_only_for_their_people(client, demo):
    demo.is_public = False
    demo.save()
    assert client.get(URL).status_code == 404
    rng = client.get("/api/v1/export/results?from=2026-01-01&to=2026-12-31")
    assert rng.status_code == 200 and json.loads(rng.content)["tournaments"] == []
    user = get_user_model().objects.create_user("org", password="x")
    demo.organizers.add(user)
    client.force_login(user)
    response = client.get(URL)
    assert response.status_code == 200
    assert "private" in response["Cache-Control"]


def test_range_api(client, demo):
    ok = client.get("/api/v1/export/results?from=2026-05-01&to=2026-05-31")
    assert ok.status_code == 200
    doc = json.loads(ok.content)
    assert doc["format"] == "scopa-results-export/1"
    assert [t["tournament"]["slug"] for t in doc["tournaments"]] == [DEMO]
    assert (
        client.get(
            "/api/v1/export/results?from=2026-05-01&to=2026-05-31", HTTP_IF_NONE_MATCH=ok["ETag"]
        ).status_code
        == 304
    )
    empty = client.get("/api/v1/export/results?from=2025-01-01&to=2025-01-31")
    assert json.loads(empty.content)["tournaments"] == []
    for bad in (
        "from=2026-05-01",
        "from=2026-05-31&to=2026-05-01",
        "from=2020-01-01&to=2026-01-01",
        "from=yesterday&to=today",
    ):
        r = client.get(f"/api/v1/export/results?{bad}")
        assert r.status_code == 400 and json.loads(r.content)["detail"]


def test_import_refuses_bad_documents_and_saves_nothing(demo):
    doc = build_document(demo)
    with pytest.raises(TournamentImportError):
        import_document(doc)  # the slug exists
    with pytest.raises(TournamentImportError):
        import_document({"format": "something-else/1"})
    broken = json.loads(dumps(doc))
    broken["stages"][0]["rounds"][0]["matches"][0]["home"] = "L999"
    before = Tournament.objects.count(), Player.objects.count()
    with pytest.raises(TournamentImportError):
        import_document(broken, slug="copy")
    assert (Tournament.objects.count(), Player.objects.count()) == before


def test_knockout_places_wait_for_the_final(demo):
    ko = demo.stages.get(kind="knockout")
    final = (
        Match.objects.filter(round__stage=ko, is_third_place=False)
        .order_by("-round__number")
        .first()
    )
    Match.objects.filter(pk=final.pk).update(status="scheduled", winner=None)
    assert build_document(demo)["final_standings"] == []
