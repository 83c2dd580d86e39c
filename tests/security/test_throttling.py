"""Logins, record submissions and the export are throttled, and one match cannot hold
unlimited record versions."""

import json
import os

import pytest
from django.core.cache import cache
from django.test import override_settings
from django.urls import reverse
from rest_framework.test import APIClient

from games import services
from games.models import Submission
from tests.api import factories

pytestmark = pytest.mark.django_db

PASSWORD = "pw-correct-horse-battery"


@pytest.fixture
def organizer(django_user_model):
    return django_user_model.objects.create_user(
        "organizzatore", password=PASSWORD, is_staff=True, is_superuser=True
    )


def _login(client, url, username, password, address="10.0.0.1"):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR=address)


@pytest.mark.parametrize("url_name", ["desk:login", "admin:login"])
def test_wrong_passwords_lock_the_account_with_a_clear_message(client, organizer, url_name):
    url = reverse(url_name)
    for _ in range(4):
        assert _login(client, url, "organizzatore", "wrong").status_code == 200
    assert _login(client, url, "organizzatore", "wrong").status_code == 429  # the fifth
    locked = _login(client, url, "organizzatore", PASSWORD)
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session
    text = locked.content.decode()
    # Italian, the site's language (English msgid until the catalog has the fragment)
    assert "Troppi accessi falliti" in text or "Too many failed logins" in text
    # another address is locked out of that account too (per account) ...
    assert _login(client, url, "organizzatore", PASSWORD, address="10.9.9.9").status_code == 429


def test_one_address_trying_many_accounts_is_locked(client, organizer):
    url = reverse("desk:login")
    for n in range(5):
        _login(client, url, f"someone{n}", "wrong", address="10.0.0.7")
    # ... and an address is locked out of every account (per address)
    assert _login(client, url, "organizzatore", PASSWORD, address="10.0.0.7").status_code == 429
    assert _login(client, url, "organizzatore", PASSWORD, address="10.0.0.8").status_code == 302


def test_the_lockout_page_speaks_english_too(client, organizer):
    url = reverse("desk:login")
    client.cookies["django_language"] = "en"
    for _ in range(5):
        response = _login(client, url, "organizzatore", "wrong")
    assert response.status_code == 429
    assert "Too many failed logins" in response.content.decode()


def test_a_successful_login_before_the_limit_resets_the_count(client, organizer):
    url = reverse("desk:login")
    for _ in range(4):
        _login(client, url, "organizzatore", "wrong")
    assert _login(client, url, "organizzatore", PASSWORD).status_code == 302
    client.logout()
    for _ in range(4):
        _login(client, url, "organizzatore", "wrong")
    assert _login(client, url, "organizzatore", PASSWORD).status_code == 302


# --- record submission and export (DRF scoped throttles) ----------------------------------------


def _rates(**rates):
    from django.conf import settings

    rest = dict(settings.REST_FRAMEWORK)
    rest["DEFAULT_THROTTLE_RATES"] = {**rest["DEFAULT_THROTTLE_RATES"], **rates}
    return rest


def _patched_rates(monkeypatch, **rates):
    """DRF reads the rates once, at import, into the throttle class."""
    from rest_framework.throttling import SimpleRateThrottle

    monkeypatch.setattr(
        SimpleRateThrottle, "THROTTLE_RATES", {**SimpleRateThrottle.THROTTLE_RATES, **rates}
    )


def _submit(user, match, seed):
    client = APIClient()
    client.force_authenticate(user)
    body = json.dumps(factories.record(match.round.stage.tournament, seed=seed))
    return client.post(
        reverse("match-records", kwargs={"match_id": match.pk}),
        data=body,
        content_type="application/json",
    )


def test_record_submission_is_throttled_per_user(monkeypatch):
    _patched_rates(monkeypatch, **{"record-submission": "3/min"})
    organizer = factories.user("org-throttle", is_staff=True)
    tournament = factories.tournament(lines=3, organizer=organizer)
    match = factories.matches(tournament)[0]
    statuses = [_submit(organizer, match, seed).status_code for seed in range(1, 5)]
    assert statuses[:3] == [202, 202, 202]
    assert statuses[3] == 429
    # reading the versions is not throttled
    client = APIClient()
    client.force_authenticate(organizer)
    listing = client.get(reverse("match-records", kwargs={"match_id": match.pk}))
    assert listing.status_code == 200


@pytest.mark.parametrize("cache_kind", ["locmem", "redis"])
def test_export_is_throttled_on_locmem_and_redis(monkeypatch, cache_kind):
    caches = None
    if cache_kind == "redis":
        broker = os.environ.get("CELERY_BROKER_URL", "")
        if not broker.startswith("redis://"):
            pytest.skip("no Redis configured (CELERY_BROKER_URL)")
        caches = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": broker,
                "KEY_PREFIX": "throttle-test",
            }
        }
    _patched_rates(monkeypatch, export="2/min")
    tournament = factories.tournament(lines=2)
    csv_url = reverse("export:tournament-standings-csv", args=[tournament.slug])
    api_url = reverse("ratings-api:export-tournament", args=[tournament.slug])
    client = APIClient()
    with override_settings(**({"CACHES": caches} if caches else {})):
        cache.clear()
        try:
            assert client.get(csv_url, REMOTE_ADDR="10.1.1.1").status_code == 200
            assert client.get(api_url, REMOTE_ADDR="10.1.1.1").status_code == 200
            refused = client.get(csv_url, REMOTE_ADDR="10.1.1.1")
            assert refused.status_code == 429
            assert int(refused.headers["Retry-After"]) >= 1
            assert client.get(api_url, REMOTE_ADDR="10.1.1.1").status_code == 429
            # another address has its own count; a forged X-Forwarded-For does not reset it
            assert client.get(csv_url, REMOTE_ADDR="10.1.1.2").status_code == 200
            forged = client.get(csv_url, REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR="1.2.3.4")
            assert forged.status_code == 429
        finally:
            cache.clear()


# --- per-match caps ---------------------------------------------------------------------------


def test_versions_per_match_are_capped(monkeypatch):
    monkeypatch.setattr(services.submitting, "MAX_VERSIONS_PER_MATCH", 3)
    organizer = factories.user("org-cap", is_staff=True)
    tournament = factories.tournament(lines=3, organizer=organizer)
    match = factories.matches(tournament)[0]
    for seed in range(1, 4):
        assert _submit(organizer, match, seed).status_code == 202
    refused = _submit(organizer, match, 9)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "too_many_versions"
    assert Submission.objects.filter(match=match).count() == 3
    # the same document again is still answered (nothing new is stored)
    assert _submit(organizer, match, 1).status_code == 200


def test_bytes_per_match_are_capped(monkeypatch):
    organizer = factories.user("org-bytes", is_staff=True)
    tournament = factories.tournament(lines=3, organizer=organizer)
    match = factories.matches(tournament)[0]
    size = len(json.dumps(factories.record(tournament, seed=1)))
    monkeypatch.setattr(services.submitting, "MAX_BYTES_PER_MATCH", int(size * 2.5))
    assert _submit(organizer, match, 1).status_code == 202
    assert _submit(organizer, match, 2).status_code == 202
    refused = _submit(organizer, match, 3)
    assert refused.status_code == 413
    assert refused.json()["error"]["code"] == "match_records_too_large"
    assert Submission.objects.filter(match=match).count() == 2


def test_bytes_per_match_count_bytes_not_characters():
    """A record written in accented text takes more bytes than characters; the cap is bytes."""
    organizer = factories.user("org-utf8", is_staff=True)
    tournament = factories.tournament(lines=3, organizer=organizer)
    match = factories.matches(tournament)[0]
    document = factories.record(tournament, seed=1)
    document["note"] = "è€" * 1000  # 2 + 3 bytes per pair of characters
    Submission.objects.create(
        match=match, version=1, document=document, content_hash="x" * 64, submitter=organizer
    )
    stored = services.stored_records({match.pk: set()})[match.pk]
    assert stored.count == 1
    assert stored.size >= len(json.dumps(document, ensure_ascii=False).encode())
