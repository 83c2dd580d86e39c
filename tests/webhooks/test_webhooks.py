"""Webhooks: signed deliveries of results, stage closings and finished tournaments to a real
HTTP receiver on 127.0.0.1; retries, re-sends with the same id, refusals (SSRF), the desk."""

import hashlib
import hmac
import json
import socket
import time
from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from tests.tournaments.conftest import RR, make_tournament
from tests.tournaments.helpers import deals
from tournaments.models import Match, Stage, Tournament
from tournaments.services import results, schedule
from webhooks import services
from webhooks.exceptions import WebhookURLError
from webhooks.models import Delivery, Endpoint

pytestmark = pytest.mark.django_db

SECRET = "s3cret-for-tests"


# The check docs/webhooks.md gives integrators, copied verbatim.
def verify(secret: str, headers, body: bytes, tolerance_s: int = 300) -> bool:
    timestamp = headers["X-Scopa-Timestamp"]
    if abs(time.time() - int(timestamp)) > tolerance_s:
        return False  # too old: a replay
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return hmac.compare_digest("sha256=" + expected.hexdigest(), headers["X-Scopa-Signature"])


def group_match(**kwargs):
    tournament = make_tournament(n_lines=2, stages=[RR], **kwargs)
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    return Match.objects.get(round__stage=stage)


def endpoint(tournament, url, **fields):
    return Endpoint.objects.create(tournament=tournament, url=url, secret=SECRET, **fields)


def enter(match, capture):
    with capture(execute=True):
        results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))


@pytest.fixture
def ready(webhook_settings, eager_celery, receiver):
    return receiver


def test_result_in_force_is_delivered_signed(ready, django_capture_on_commit_callbacks):
    match = group_match()
    endpoint(match.round.stage.tournament, ready.url)
    enter(match, django_capture_on_commit_callbacks)

    assert len(ready.requests) == 1
    headers, body = ready.requests[0]
    assert verify(SECRET, headers, body)
    assert not verify("another secret", headers, body)
    tampered = body.replace(b'"points":12', b'"points":13')
    assert tampered != body and not verify(SECRET, headers, tampered)
    payload = json.loads(body)
    delivery = Delivery.objects.get()
    assert headers["X-Scopa-Delivery"] == payload["id"] == str(delivery.pk)
    assert headers["X-Scopa-Event"] == payload["event"] == "result.in_force"
    assert payload["match"]["id"] == match.pk and payload["match"]["winner_id"] == match.home_id
    assert {r["line_id"]: r["points"] for r in payload["results"]} == {
        match.home_id: 12,
        match.away_id: 7,
    }
    assert delivery.status == Delivery.Status.DELIVERED and delivery.attempts == 1


def test_an_old_timestamp_fails_the_documented_check(ready, django_capture_on_commit_callbacks):
    match = group_match()
    endpoint(match.round.stage.tournament, ready.url)
    with mock.patch("webhooks.services.time.time", return_value=time.time() - 3600):
        enter(match, django_capture_on_commit_callbacks)
    headers, body = ready.requests[0]
    assert not verify(SECRET, headers, body)


def test_a_500_is_retried_until_it_succeeds(ready, django_capture_on_commit_callbacks):
    ready.script = [500, 503]
    match = group_match()
    endpoint(match.round.stage.tournament, ready.url)
    enter(match, django_capture_on_commit_callbacks)

    delivery = Delivery.objects.get()
    assert delivery.status == Delivery.Status.DELIVERED and delivery.attempts == 3
    ids = {headers["X-Scopa-Delivery"] for headers, _ in ready.requests}
    assert len(ready.requests) == 3 and ids == {str(delivery.pk)}
    assert len({body for _, body in ready.requests}) == 1  # the same body every time


def test_retries_are_bounded(ready, django_capture_on_commit_callbacks, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    ready.script = [500] * 10
    match = group_match()
    endpoint(match.round.stage.tournament, ready.url)
    enter(match, django_capture_on_commit_callbacks)
    delivery = Delivery.objects.get()
    assert delivery.status == Delivery.Status.FAILED and delivery.attempts == 3
    assert delivery.last_status_code == 500 and len(ready.requests) == 3


def test_backoff_doubles_up_to_the_cap(settings):
    settings.WEBHOOK_RETRY_BASE_S = 30
    settings.WEBHOOK_RETRY_MAX_S = 200
    assert [services.backoff_s(n) for n in range(1, 6)] == [30, 60, 120, 200, 200]


def test_sending_again_keeps_the_delivery_id(ready, django_capture_on_commit_callbacks, client):
    match = group_match()
    tournament = match.round.stage.tournament
    endpoint(tournament, ready.url)
    enter(match, django_capture_on_commit_callbacks)
    delivery = Delivery.objects.get()

    user = get_user_model().objects.create_user("org", password="pw")
    tournament.organizers.add(user)
    client.force_login(user)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/desk/{tournament.slug}/webhooks/deliveries/{delivery.pk}/resend/")
    assert response.status_code == 302

    assert len(ready.requests) == 2
    assert {h["X-Scopa-Delivery"] for h, _ in ready.requests} == {str(delivery.pk)}
    assert ready.requests[0][1] == ready.requests[1][1]
    assert ready.effects == {str(delivery.pk): "result.in_force"}  # applied once
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.DELIVERED and delivery.attempts == 2


def _closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_receiver_that_is_down_does_not_block_result_entry(
    webhook_settings, eager_celery, django_capture_on_commit_callbacks
):
    match = group_match()
    endpoint(match.round.stage.tournament, f"http://127.0.0.1:{_closed_port()}/down")
    enter(match, django_capture_on_commit_callbacks)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE
    delivery = Delivery.objects.get()
    assert delivery.status == Delivery.Status.FAILED
    assert "ConnectionRefused" in delivery.last_error


def test_a_broker_outage_does_not_block_result_entry(
    webhook_settings, django_capture_on_commit_callbacks
):
    match = group_match()
    endpoint(match.round.stage.tournament, "http://127.0.0.1:9/never")
    with mock.patch("webhooks.tasks.deliver.delay", side_effect=ConnectionError("broker down")):
        enter(match, django_capture_on_commit_callbacks)
    match.refresh_from_db()
    assert match.status == Match.Status.DONE
    delivery = Delivery.objects.get()
    assert delivery.status == Delivery.Status.PENDING and delivery.queued_at is None  # swept


def test_stage_closing_and_tournament_finishing(ready, django_capture_on_commit_callbacks):
    match = group_match()
    tournament = match.round.stage.tournament
    endpoint(tournament, ready.url)
    enter(match, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        schedule.close_stage(match.round.stage)
    with django_capture_on_commit_callbacks(execute=True):
        tournament = Tournament.objects.get(pk=tournament.pk)
        tournament.status = Tournament.Status.FINISHED
        tournament.save()
    with django_capture_on_commit_callbacks(execute=True):
        tournament.save()  # no change of status: no event

    events = [json.loads(body) for _, body in ready.requests]
    assert [e["event"] for e in events] == [
        "result.in_force",
        "stage.closed",
        "tournament.finished",
    ]
    assert events[1]["stage"]["status"] == Stage.Status.CLOSED
    assert events[2]["tournament"]["slug"] == tournament.slug
    assert all(verify(SECRET, h, b) for h, b in ready.requests)


def test_site_wide_endpoints_hear_public_tournaments_only(
    ready, django_capture_on_commit_callbacks
):
    Endpoint.objects.create(tournament=None, url=ready.url, secret=SECRET)
    public = group_match(name="Pubblico", slug="pubblico")
    private = group_match(name="Privato", slug="privato", is_public=False)
    enter(public, django_capture_on_commit_callbacks)
    enter(private, django_capture_on_commit_callbacks)
    slugs = [json.loads(body)["tournament"]["slug"] for _, body in ready.requests]
    assert slugs == ["pubblico"]


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.org/hook",
        "http://127.0.0.1:8000/hook",
        "http://localhost/hook",
        "http://10.1.2.3/hook",
        "http://192.168.0.10/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://0.0.0.0/hook",
        "http://user:pw@example.org/hook",
    ],
)
def test_private_and_odd_urls_are_refused_by_default(url, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    tournament = make_tournament()
    with pytest.raises(WebhookURLError):
        services.register_endpoint(tournament=tournament, url=url)
    assert not Endpoint.objects.exists()


def test_a_url_refused_at_delivery_time_is_not_retried(
    ready, django_capture_on_commit_callbacks, settings
):
    match = group_match()
    endpoint(match.round.stage.tournament, ready.url)
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    enter(match, django_capture_on_commit_callbacks)
    delivery = Delivery.objects.get()
    assert delivery.status == Delivery.Status.FAILED and delivery.attempts == 1
    assert not ready.requests


def test_desk_page_registers_endpoints_for_organizers_only(client, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    tournament = make_tournament()
    users = get_user_model().objects
    organizer, stranger = users.create_user("org", password="pw"), users.create_user("x")
    tournament.organizers.add(organizer)
    page = f"/desk/{tournament.slug}/webhooks/"

    client.force_login(stranger)
    assert client.get(page).status_code == 403
    assert client.post(page, {"url": "https://example.org/h"}).status_code == 403

    client.force_login(organizer)
    assert client.get(page).status_code == 200
    response = client.post(page, {"url": "http://127.0.0.1:8000/h"})
    assert response.status_code == 200 and not Endpoint.objects.exists()
    with mock.patch(
        "webhooks.network.socket.getaddrinfo",
        return_value=[(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", 443))],
    ):
        response = client.post(page, {"url": "https://example.org/h", "description": "FIS"})
    assert response.status_code == 302
    created = Endpoint.objects.get()
    assert created.tournament == tournament and len(created.secret) >= 32
    assert created.secret in client.get(page).content.decode()

    client.post(f"/desk/{tournament.slug}/webhooks/{created.pk}/delete/")
    assert not Endpoint.objects.exists()


def test_a_worker_retries_with_the_backoff(webhook_settings, receiver, settings):
    """The worker path (not eager): a failed attempt asks Celery to retry after the backoff,
    and the last allowed attempt gives up."""
    from celery.exceptions import Retry

    from webhooks.tasks import deliver

    settings.WEBHOOK_RETRY_BASE_S = 30
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    receiver.script = [500, 500]
    match = group_match()
    endpoint(match.round.stage.tournament, receiver.url)
    (delivery,) = services.record_results([match.pk])  # queued after a commit that never comes
    with mock.patch.object(deliver, "retry", side_effect=Retry) as retry:
        with pytest.raises(Retry):
            deliver.run(str(delivery.pk))
        retry.assert_called_once_with(countdown=30.0)
        deliver.push_request(retries=1)
        try:
            deliver.run(str(delivery.pk))
        finally:
            deliver.pop_request()
        assert retry.call_count == 1
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED and delivery.attempts == 2


def _lose_the_message(match, capture):
    """Enter a result while the broker swallows the delivery's message (accepted, never run)."""
    with mock.patch("webhooks.tasks.deliver.delay"):
        enter(match, capture)
    return Delivery.objects.get()


def test_the_sweep_sends_a_delivery_whose_message_was_lost(
    ready, django_capture_on_commit_callbacks, settings
):
    settings.WEBHOOK_STUCK_AFTER_S = 300
    match = group_match()
    endpoint(match.round.stage.tournament, ready.url)
    delivery = _lose_the_message(match, django_capture_on_commit_callbacks)
    assert delivery.status == Delivery.Status.PENDING

    from webhooks.tasks import sweep_stuck

    assert sweep_stuck() == 0 and not ready.requests  # queued just now: not stuck yet
    Delivery.objects.update(queued_at=timezone.now() - timedelta(seconds=301))
    assert sweep_stuck() == 1
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.DELIVERED and delivery.attempts == 1
    assert [h["X-Scopa-Delivery"] for h, _ in ready.requests] == [str(delivery.pk)]
    assert sweep_stuck() == 0  # delivered: never again

    from config.celery import app

    assert "webhooks.tasks.sweep_stuck" in {e["task"] for e in app.conf.beat_schedule.values()}


def test_the_sweep_picks_up_a_retry_that_never_came(settings):
    """A retrying delivery is stuck only once its backoff and the grace have both passed, and
    goes out again with its count of retries (the bound on attempts still holds)."""
    settings.WEBHOOK_STUCK_AFTER_S = 300
    settings.WEBHOOK_RETRY_BASE_S = 30
    settings.WEBHOOK_MAX_ATTEMPTS = 8
    match = group_match()
    endpoint(match.round.stage.tournament, "https://example.org/h")
    (delivery,) = services.record_results([match.pk])
    now = timezone.now()
    # Third attempt failed: the next one was due 120 s later.
    Delivery.objects.update(
        status=Delivery.Status.RETRYING, attempts=3, last_attempt_at=now - timedelta(seconds=400)
    )
    assert services.stuck_deliveries(now) == []
    later = now + timedelta(seconds=30)  # 430 s > 120 s backoff + 300 s grace
    assert [d.pk for d in services.stuck_deliveries(later)] == [delivery.pk]
    with mock.patch("webhooks.tasks.deliver.apply_async") as queue:
        assert services.requeue_stuck(later) == 1
    queue.assert_called_once_with((str(delivery.pk),), retries=3)
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.PENDING


def test_the_admin_form_says_which_scheme_a_bare_url_gets(rf):
    """Django 5 warns about URLField's default scheme; the admin names https."""
    import warnings

    from django.contrib import admin

    request = rf.get("/")
    request.user = get_user_model()(is_superuser=True, is_active=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        form = admin.site._registry[Endpoint].get_form(request)
    assert form.base_fields["url"].to_python("hooks.example.org/h") == "https://hooks.example.org/h"
