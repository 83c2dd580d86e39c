"""Every change of a match's result in force sends exactly one ``result.in_force`` delivery,
whichever path made it (desk, API, record, referee decision, countersignature, withdrawal,
forfeit, bye). The admin writes no result: it links to the desk."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tests.tournaments.conftest import KO, RR, make_tournament
from tests.tournaments.helpers import deals
from tournaments.models import Entry, Match, Outcome, ResultVersion
from tournaments.services import lifecycle, results, schedule
from webhooks.models import Delivery, Endpoint

pytestmark = pytest.mark.django_db

IN_FORCE = "result.in_force"


@pytest.fixture
def ready(webhook_settings, eager_celery, receiver):
    return receiver


def _match(receiver, n_lines=2):
    tournament = make_tournament(n_lines=n_lines, stages=[RR])
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    Endpoint.objects.create(tournament=tournament, url=receiver.url, secret="s")
    return Match.objects.filter(round__stage=stage).order_by("pk").first()


def _verdict(home, away):
    return {
        "valid": True,
        "sides": 2,
        "totals": [home, away],
        "winner": 0 if home > away else 1,
        "deals": [{"points": [home, away], "breakdown": [{"scope": home}, {"scope": away}]}],
        "outcome": {"kind": "completed"},
    }


def _in_force_deliveries(match):
    return [
        json.loads(d.body)
        for d in Delivery.objects.filter(event=IN_FORCE).order_by("created_at")
        if json.loads(d.body)["match"]["id"] == match.pk
    ]


def _changes(match):
    """How many times a version came into force (a bye's is no news)."""
    return (
        ResultVersion.objects.filter(match=match)
        .exclude(status__in=[ResultVersion.Status.AWAITING, ResultVersion.Status.PROPOSED])
        .exclude(status=ResultVersion.Status.REJECTED, decided_at__isnull=True)
        .exclude(sheet__isnull=True)
        .count()
    )


def _staff(client, match):
    user = get_user_model().objects.create_user("direttore", password="x-pass-12345")
    match.round.stage.tournament.organizers.add(user)
    client.force_login(user)
    return user


def test_desk(ready, client, django_capture_on_commit_callbacks):
    match = _match(ready)
    _staff(client, match)
    url = reverse("desk:match", args=[match.round.stage.tournament.slug, match.pk])
    data = {"action": "save", "rows": "3", "outcome": "completed", "based_on": ""}
    for i, (home, away) in enumerate([(5, 2), (3, 4), (4, 1)]):
        data[f"d{i}-home-scope"], data[f"d{i}-away-scope"] = str(home), str(away)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(url, data).status_code == 302
    assert len(_in_force_deliveries(match)) == 1


def test_record_and_api_decision(ready, django_capture_on_commit_callbacks):
    match = _match(ready)
    with django_capture_on_commit_callbacks(execute=True):
        results.apply_verified_result(match, _verdict(11, 7))
    with django_capture_on_commit_callbacks(execute=True):
        waiting = results.apply_verified_result(match, _verdict(11, 9)).version
    assert waiting.status == ResultVersion.Status.AWAITING
    assert len(_in_force_deliveries(match)) == 1
    with django_capture_on_commit_callbacks(execute=True):
        results.accept_version(waiting, based_on=1)  # the API's "stand" and the desk's accept
    sent = _in_force_deliveries(match)
    assert len(sent) == 2 == _changes(match)
    assert [r["points"] for r in sent[-1]["results"]] == [11, 9]


def test_countersignature_and_referee_decision(ready, django_capture_on_commit_callbacks):
    match = _match(ready)
    with django_capture_on_commit_callbacks(execute=True):
        proposed = results.propose_result(match, deals((5, 2), (3, 4), (4, 1)))
    assert _in_force_deliveries(match) == []  # a proposed sheet is in force nowhere
    with django_capture_on_commit_callbacks(execute=True):
        results.countersign(proposed)
    assert len(_in_force_deliveries(match)) == 1
    with django_capture_on_commit_callbacks(execute=True):
        disputed = results.propose_result(match, deals((5, 2), (3, 4), (5, 1)), based_on=1)
        results.refer_version(disputed)
    with django_capture_on_commit_callbacks(execute=True):
        results.accept_version(disputed)  # the referee's decision
    assert len(_in_force_deliveries(match)) == 2 == _changes(match)


def test_forfeit_and_withdrawal(ready, django_capture_on_commit_callbacks):
    match = _match(ready, n_lines=4)
    tournament = match.round.stage.tournament
    with django_capture_on_commit_callbacks(execute=True):
        results.save_result(match, [], outcome=Outcome.FORFEIT, offender=match.away)
    assert len(_in_force_deliveries(match)) == 1
    line = Entry.objects.filter(tournament=tournament).order_by("seed").last().line
    with django_capture_on_commit_callbacks(execute=True):
        withdrawal = lifecycle.withdraw_line(tournament, line)
    assert withdrawal.forfeits
    for forfeited in withdrawal.forfeits:
        assert len(_in_force_deliveries(forfeited)) == 1


def test_a_withdrawn_line_forfeiting_a_knockout_match_later(
    ready, django_capture_on_commit_callbacks
):
    tournament = make_tournament(n_lines=4, stages=[KO])
    stage = tournament.stages.get()
    seeds = list(Entry.objects.filter(tournament=tournament).order_by("seed"))
    schedule.generate_knockout(stage, [e.line for e in seeds])
    Endpoint.objects.create(tournament=tournament, url=ready.url, secret="s")
    semis = list(Match.objects.filter(round__stage=stage, round__number=1).order_by("pk"))
    final = semis[0].next_match
    with django_capture_on_commit_callbacks(execute=True):
        results.save_result(semis[1], deals((5, 2), (3, 4), (4, 1)))  # home goes on
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.withdraw_line(tournament, semis[1].home)  # its final has no opponent yet
    with django_capture_on_commit_callbacks(execute=True):
        results.save_result(semis[0], deals((5, 2), (3, 4), (4, 1)))
    final.refresh_from_db()
    assert final.status == Match.Status.DONE and final.outcome == Outcome.FORFEIT
    assert len(_in_force_deliveries(final)) == 1


def test_a_bye_and_the_bye_a_withdrawal_gives_are_results_in_force(
    ready, django_capture_on_commit_callbacks
):
    """A bye's score is a version in force like any result (the standings count it): before,
    the bye of the draw, a late entry's missed rounds and the bye a withdrawal leaves its
    opponent sent nothing, which is how a day of Danish rounds had fewer deliveries than
    results in force."""
    from tests.pages.factories import play_stage
    from tournaments.models import Stage
    from tournaments.services import pairing

    tournament = make_tournament(n_lines=4)
    stage = Stage.objects.create(
        tournament=tournament, order=1, name="Danese", kind=Stage.Kind.DANISH
    )
    Endpoint.objects.create(tournament=tournament, url=ready.url, secret="s")
    with django_capture_on_commit_callbacks(execute=True):
        pairing.pair_next_round(stage)
    assert Delivery.objects.count() == 0  # nothing in force yet
    play_stage(stage)
    played = Delivery.objects.filter(event=IN_FORCE).count()
    assert played == 2
    gone = Entry.objects.filter(tournament=tournament).order_by("seed").first()
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.withdraw_line(tournament, gone.line)
        second = pairing.pair_next_round(stage)
    bye = second.matches.get(outcome=Outcome.BYE)
    sent = _in_force_deliveries(bye)
    assert len(sent) == 1
    assert sent[0]["results"][0]["line_id"] == bye.home_id
    assert Delivery.objects.filter(event=IN_FORCE).count() == played + 1


def test_results_are_home_line_first(ready, django_capture_on_commit_callbacks):
    match = _match(ready)
    Match.objects.filter(pk=match.pk).update(home=match.away, away=match.home)
    match.refresh_from_db()
    assert match.home_id > match.away_id
    with django_capture_on_commit_callbacks(execute=True):
        results.save_result(match, deals((5, 2), (3, 4), (4, 1)))
    payload = _in_force_deliveries(match)[0]
    assert [r["line_id"] for r in payload["results"]] == [match.home_id, match.away_id]
