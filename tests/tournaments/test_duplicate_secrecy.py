"""A running duplicate stage's secret tables, everywhere a non-organizer reads results: a table
that holds a board some other table has still to play shows as not played yet on the public
pages and in the API (``access.withheld_results``), the standings leave it out, and a pushed
result carries no rows; the organizer reads everything. The public export's side is in
``test_duplicate_stage.py``, the webhooks' in ``tests/webhooks/test_held_results.py``."""

import pytest
from django.contrib.auth.models import User

from live import patches
from public import rows
from tests.tournaments.test_duplicate_stage import _play, _tournament
from tournaments import access
from tournaments.models import Match, Stage
from tournaments.services import duplicate

pytestmark = pytest.mark.django_db


@pytest.fixture
def session():
    """6 lines, 3 tables, 3 rounds of 2 boards, each board held by 3 tables: every table has
    played but the last, so its 2 boards are secret and the 2 other tables that hold them are
    withheld."""
    tournament = _tournament(6)
    stage = tournament.stages.get()
    board_set = duplicate.draw_duplicate(stage, seed="segreto")
    matches = list(
        Match.objects.filter(round__stage=stage)
        .select_related("round", "home", "away")
        .order_by("round__number", "table_number")
    )
    for match in matches[:-1]:
        _play(match, board_set)
    last = matches[-1]
    secret = set(duplicate.board_numbers_of_match(last))
    withheld = [m for m in matches[:-1] if secret & set(duplicate.board_numbers_of_match(m))]
    shown = [m for m in matches[:-1] if m not in withheld]
    assert len(withheld) == 2 and shown
    organizer = User.objects.create_user("direttore", password="x-pass-12345")
    tournament.organizers.add(organizer)
    return tournament, stage, board_set, withheld, shown, last, organizer


def _result_of(match):
    home, away = (r for r in sorted(match.results.all(), key=lambda r: r.line_id != match.home_id))
    return home, away


def test_the_policy_withholds_the_secret_tables_from_all_but_who_runs_the_stages(session):
    tournament, stage, _board_set, withheld, _shown, last, organizer = session
    expected = {m.pk for m in withheld} | {last.pk}
    assert access.withheld_results(None, tournament) == expected
    assert access.withheld_results(organizer, tournament) == frozenset()
    Stage.objects.filter(pk=stage.pk).update(status=Stage.Status.CLOSED)
    assert access.withheld_results(None, tournament) == frozenset()


def test_the_public_match_and_round_pages_show_a_secret_table_as_not_played(client, session):
    tournament, _stage, board_set, withheld, shown, last, _organizer = session
    match = withheld[0]
    home, away = _result_of(match)
    page = client.get(f"/t/{tournament.slug}/match/{match.pk}/").content.decode()
    assert f"{home.points} – {away.points}" not in page
    assert "MP " not in page and "VP " not in page and 'class="won"' not in page
    visible = shown[0]
    v_home, v_away = _result_of(visible)
    page = client.get(f"/t/{tournament.slug}/match/{visible.pk}/").content.decode()
    assert f"{v_home.points} – {v_away.points}" in page and f"MP {v_home.mp}" in page

    round_page = client.get(f"/t/{tournament.slug}/round/{match.round_id}/").content.decode()
    row = round_page.split(f'id="m-{match.pk}"', 1)[1].split("</tr>", 1)[0]
    assert row.startswith(' class="pending"')
    assert f"{home.points} – {away.points}" not in row and " won" not in row

    line = client.get(f"/lines/{match.home_id}/").content.decode()
    assert f"/t/{tournament.slug}/match/{match.pk}/" not in line

    # the last table plays: every board opens, and the pages show every result
    _play(last, board_set)
    page = client.get(f"/t/{tournament.slug}/match/{match.pk}/").content.decode()
    assert f"{home.points} – {away.points}" in page and f"MP {home.mp}" in page


def test_the_api_shows_a_secret_table_as_not_played_except_to_the_organizer(client, session):
    _tournament, stage, _board_set, withheld, shown, _last, _organizer = session
    match = withheld[0]
    data = client.get(f"/api/v1/matches/{match.pk}/").json()
    assert data["status"] == "scheduled" and data["winner"] is None
    assert data["results"] == [] and data["deals"] == []
    listed = client.get(f"/api/v1/matches/?round={match.round_id}").json()
    listed = listed.get("results", listed) if isinstance(listed, dict) else listed
    assert {m["id"]: m["status"] for m in listed}[match.pk] == "scheduled"
    assert client.get(f"/api/v1/matches/{shown[0].pk}/").json()["results"]

    def played(answer):
        return {row["line"]["id"]: row["played"] for row in answer.json()[0]["rows"]}

    public = played(client.get(f"/api/v1/stages/{stage.pk}/standings/"))
    assert public[match.home_id] == sum(match.home_id in (m.home_id, m.away_id) for m in shown)
    client.login(username="direttore", password="x-pass-12345")
    data = client.get(f"/api/v1/matches/{match.pk}/").json()
    assert data["status"] == "done" and len(data["results"]) == 2
    full = played(client.get(f"/api/v1/stages/{stage.pk}/standings/"))
    assert full[match.home_id] == public[match.home_id] + 1


def test_a_result_in_a_running_duplicate_stage_pushes_no_rows(session):
    """The pages fetch themselves instead: the result may be secret, and may open boards that
    change other tables' rows."""
    _t, _stage, board_set, withheld, shown, last, _organizer = session
    assert rows.rows_in_languages([shown[0].pk], ["it"]) is None
    assert patches.rows_by_language([withheld[0].pk], ["it"]) == {"it": None}
    _play(last, board_set)
    # still running: other rows changed too
    assert rows.rows_in_languages([last.pk], ["it"]) is None
