"""The organizer's submission queue in the admin: list, detail, rerun, choose the version."""

import pytest
from django.urls import reverse

from games import services
from games.models import Submission
from tests.api import factories
from tournaments.models import Match, MatchResult, Round, Stage

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_for(client):
    def login(user):
        client.force_login(user)
        return client

    return login


def submit(match, seed, capture):
    t = match.round.stage.tournament
    with capture(execute=True):
        submission = services.submit_record(match, factories.record(t, seed=seed)).submission
    submission.refresh_from_db()
    return submission


def test_queue_detail_and_actions(
    admin_client_for, tournament, match, django_capture_on_commit_callbacks
):
    first = submit(match, 31, django_capture_on_commit_callbacks)
    second = submit(match, 32, django_capture_on_commit_callbacks)
    assert second.needs_decision
    superuser = factories.user("root", is_staff=True, is_superuser=True)
    client = admin_client_for(superuser)
    changelist = reverse("admin:games_submission_changelist")
    response = client.get(changelist, {"attention": "decision"})
    assert response.status_code == 200
    assert f">{second.pk}<" in response.content.decode()
    detail = client.get(reverse("admin:games_submission_change", args=[second.pk]))
    assert detail.status_code == 200
    assert "scopa-match/1" in detail.content.decode()
    chosen = {"action": "make_standing", "_selected_action": [second.pk]}
    confirm = client.post(changelist, chosen)  # the page names the version in force
    assert confirm.status_code == 200 and 'name="based_on" value="1"' in confirm.content.decode()
    unnamed = client.post(changelist, {**chosen, "apply": "1"}, follow=True)
    assert "nothing was saved" in unnamed.content.decode() or "nulla" in unnamed.content.decode()
    second.refresh_from_db()
    assert not second.is_standing  # no version named, nothing changes
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(changelist, {**chosen, "apply": "1", "based_on": "1"}, follow=True)
    assert response.status_code == 200
    second.refresh_from_db()
    first.refresh_from_db()
    assert second.is_standing and not first.is_standing
    home = MatchResult.objects.get(match=match, line=match.home)
    assert home.points == second.verdict["totals"][0]
    with django_capture_on_commit_callbacks(execute=True):
        client.post(changelist, {"action": "rerun", "_selected_action": [first.pk]}, follow=True)
    first.refresh_from_db()
    # A rerun starts the count of attempts over (the poison-record bound counts from it).
    assert first.state == "verified" and first.attempts == 1


def test_a_knockout_record_advances_the_winner(db, organizer, django_capture_on_commit_callbacks):
    t = factories.tournament(lines=2, organizer=organizer, knockout=True)
    semi = factories.matches(t)[0]
    stage = Stage.objects.get(tournament=t)
    final_round = Round.objects.create(stage=stage, number=2)
    final = Match.objects.create(round=final_round, table_number=1)
    semi.next_match = final
    semi.next_slot = Match.Slot.HOME
    semi.save()
    sub = submit(semi, 41, django_capture_on_commit_callbacks)
    assert sub.state == "verified", sub.error_reason
    assert sub.verdict["winner"] in (0, 1)
    final.refresh_from_db()
    winner = semi.home_id if sub.verdict["winner"] == 0 else semi.away_id
    assert final.home_id == winner
    assert Submission.objects.get(pk=sub.pk).is_standing
