"""Deciding between submitted records on the desk: choose the version, bring one back, verify
again; the admin only lists and shows them."""

import pytest
from django.urls import reverse

from games import services
from games.models import Submission
from tests.api import factories
from tournaments.models import Match, MatchResult, Role, Round, Stage, TournamentRole

pytestmark = pytest.mark.django_db


def submit(match, seed, capture):
    t = match.round.stage.tournament
    with capture(execute=True):
        submission = services.submit_record(match, factories.record(t, seed=seed)).submission
    submission.refresh_from_db()
    return submission


def test_the_desk_decides_between_records_and_verifies_again(
    client, tournament, match, referee, django_capture_on_commit_callbacks
):
    first = submit(match, 31, django_capture_on_commit_callbacks)
    second = submit(match, 32, django_capture_on_commit_callbacks)
    assert second.needs_decision
    client.force_login(referee)
    page = reverse("desk:match", args=[tournament.slug, match.pk])
    shown = client.get(page).content.decode()
    assert "Accept version 2" in shown or "Accetta la versione 2" in shown
    second_version = second.result_versions.get()
    chosen = {"action": "accept", "version": second_version.pk}
    unnamed = client.post(page, chosen)  # no version in force named: nothing changes
    assert unnamed.status_code == 428
    second.refresh_from_db()
    assert not second.is_standing
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(page, {**chosen, "based_on": "1"})
    assert response.status_code == 302
    second.refresh_from_db()
    first.refresh_from_db()
    assert second.is_standing and not first.is_standing
    home = MatchResult.objects.get(match=match, line=match.home)
    assert home.points == second.verdict["totals"][0]

    # the first record's version, now superseded, can be brought back from the versions table
    first_version = first.result_versions.get()
    shown = client.get(page).content.decode()
    assert f'name="version" value="{first_version.pk}"' in shown
    with django_capture_on_commit_callbacks(execute=True):
        client.post(page, {"action": "accept", "version": first_version.pk, "based_on": "2"})
    first.refresh_from_db()
    assert first.is_standing

    Submission.objects.filter(pk=second.pk).update(state="error", error_reason="worker lost")
    assert f'name="submission" value="{second.pk}"' in client.get(page).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(page, {"action": "rerun", "submission": second.pk, "based_on": "1"})
    assert response.status_code == 302
    second.refresh_from_db()
    # A rerun starts the count of attempts over (the poison-record bound counts from it).
    assert second.state == "verified" and second.attempts == 1


def test_only_those_who_decide_may_verify_again(
    client, tournament, match, django_capture_on_commit_callbacks
):
    submission = submit(match, 31, django_capture_on_commit_callbacks)
    Submission.objects.filter(pk=submission.pk).update(state="error", error_reason="lost")
    scorer = factories.user("scorer")
    TournamentRole.objects.create(tournament=tournament, user=scorer, role=Role.SCORER)
    client.force_login(scorer)
    page = reverse("desk:match", args=[tournament.slug, match.pk])
    assert f'name="submission" value="{submission.pk}"' not in client.get(page).content.decode()
    response = client.post(page, {"action": "rerun", "submission": submission.pk, "based_on": ""})
    assert response.status_code == 403
    submission.refresh_from_db()
    assert submission.state == "error"


def test_the_admin_only_browses_submissions(client, match, django_capture_on_commit_callbacks):
    submission = submit(match, 31, django_capture_on_commit_callbacks)
    client.force_login(factories.user("root", is_staff=True, is_superuser=True))
    changelist = reverse("admin:games_submission_changelist")
    listed = client.get(changelist, {"attention": "decision"})
    assert listed.status_code == 200
    detail = client.get(reverse("admin:games_submission_change", args=[submission.pk]))
    assert "scopa-match/1" in detail.content.decode()
    assert "make_standing" not in client.get(changelist).content.decode()


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
