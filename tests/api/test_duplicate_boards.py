"""GET /api/v1/matches/{id}/boards/: a duplicate table's boards go to its own players (their
platform) and the staff once its round has started; nothing of other tables."""

import pytest
from django.contrib.auth import get_user_model

from tests.tournaments.conftest import make_tournament
from tournaments.models import LineMember, Match, Role, Stage, TournamentRole
from tournaments.services import duplicate, schedule

pytestmark = pytest.mark.django_db


def _user_of(line):
    user = get_user_model().objects.create_user(username=f"u{line.pk}", password="pw")
    player = LineMember.objects.filter(line=line).first().player
    player.user = user
    player.save()
    return user


def test_a_table_gets_its_boards_when_its_round_starts_and_nobody_else_does(api):
    tournament = make_tournament(
        "scopa-tre-smazzate",
        n_lines=6,
        stages=[{"name": "Duplicato", "kind": Stage.Kind.DUPLICATE}],
        end_value=2,
    )
    duplicate.draw_duplicate(tournament.stages.get(), seed="club")
    match = Match.objects.get(round__number=1, table_number=2, round__stage__tournament=tournament)
    other = Match.objects.get(round__number=1, table_number=1, round__stage__tournament=tournament)
    player, stranger = _user_of(match.home), _user_of(other.home)
    url = f"/api/v1/matches/{match.pk}/boards/"
    assert api().get(url).status_code == 401
    refused = api(player).get(url)
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "round_not_started"
    schedule.start_round(match.round)
    answer = api(player).get(url)
    assert answer.status_code == 200
    body = answer.json()
    assert (body["round"], body["table"]) == (1, 2)
    assert [b["number"] for b in body["boards"]] == [3, 4]
    assert body["boards"][0] == duplicate.boards_of_match(match)[0].as_dict()
    assert api(stranger).get(url).status_code == 403
    scorer = get_user_model().objects.create_user(username="scorer", password="pw")
    TournamentRole.objects.create(tournament=tournament, user=scorer, role=Role.SCORER)
    assert api(scorer).get(url).status_code == 200
