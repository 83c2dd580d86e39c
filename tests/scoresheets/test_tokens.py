"""What reaches ``/p/<token>/`` before any query, the per-address
limit on unknown tokens, tokens stored only as a hash."""

import pytest
from django.urls import reverse

from scoresheets.services import links


@pytest.fixture
def card(running, first_match):
    return links.link_for(running, first_match.home)


@pytest.mark.parametrize(
    "path",
    [
        "/p/abc%00/",
        "/p/x%00y/m/1/",
        "/p/x%00y/m/1/check/",
        "/p/%00%00%00%00%00%00%00%00%00%00%00%00%00%00%00%00%00%00%00%00%00%00/",
        "/p/a%20b%20c%20d%20e%20f%20g%20h%20i/",
        "/p/%F0%9F%82%A1%F0%9F%82%A1%F0%9F%82%A1%F0%9F%82%A1%F0%9F%82%A1/",
    ],
)
def test_a_token_of_the_wrong_alphabet_is_a_404(client, card, path):
    """A NUL made PostgreSQL raise (a 500 without logging in); the token's shape is checked
    before the database is asked."""
    method = client.post if path.endswith("check/") else client.get
    assert method(path).status_code == 404


def test_a_real_token_followed_by_nul_is_a_404(client, card, first_match):
    assert client.get(f"/p/{card.token}%00/").status_code == 404
    assert client.get(f"/p/{card.token}%00/m/{first_match.pk}/").status_code == 404
    assert client.get(reverse("table:line", args=[card.token])).status_code == 200


@pytest.mark.parametrize("token", ["abc\x00", "x\x00y" * 8, "a" * 21 + "\x00", "a b" * 8, "é" * 22])
def test_a_token_of_the_wrong_shape_asks_no_query(token, django_assert_num_queries, db):
    from scoresheets.selectors import link_by_token

    with django_assert_num_queries(0):
        assert link_by_token(token) is None


def test_unknown_tokens_are_limited_per_address(client, card, first_match, monkeypatch):
    """200 random tokens from one address were 200 404s, none a 429."""
    import secrets

    from django.core.cache import cache

    from scoresheets.views import _MissThrottle

    cache.clear()
    monkeypatch.setattr(_MissThrottle, "THROTTLE_RATES", {"table-link-miss": "5/hour"})
    guesses = [client.get(f"/p/{secrets.token_urlsafe(16)}/").status_code for _ in range(5)]
    assert guesses == [404] * 5
    # the address is held back now, whatever it asks (a hit would tell a guesser it found one)
    blocked = client.get(f"/p/{secrets.token_urlsafe(16)}/")
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) > 0
    assert client.get(reverse("table:line", args=[card.token])).status_code == 429
    check = client.post(reverse("table:check", args=[card.token, first_match.pk]))
    assert check.status_code == 429 and check.json()["ok"] is False
    # another address (another venue) is not
    other = client.get(reverse("table:line", args=[card.token]), REMOTE_ADDR="198.51.100.7")
    assert other.status_code == 200
    cache.clear()


def test_tokens_are_stored_as_a_hash_and_a_seal(card, settings):
    """No column holds the token; the hash finds it, the seal prints it again."""
    import hashlib

    from scoresheets import tokens
    from scoresheets.models import PrivateLink
    from scoresheets.selectors import link_by_token

    token = card.token
    row = PrivateLink.objects.filter(pk=card.pk).values().get()
    assert token not in str(row)
    assert row["token_hash"] == hashlib.sha256(token.encode()).hexdigest()
    assert link_by_token(token) == card
    fresh = PrivateLink.objects.get(pk=card.pk)
    assert fresh.token == token  # a reprint shows the card already handed out
    # after a key rotation the old key, kept as a fallback, still opens the seal
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "another-" + "k3Y9zQ" * 10
    assert PrivateLink.objects.get(pk=card.pk).token == token
    settings.SECRET_KEY_FALLBACKS = []
    assert PrivateLink.objects.get(pk=card.pk).token is None  # the seal is noise without it
    assert link_by_token(token) == card  # and the card still works
    assert tokens.unseal("not base64!", row["token_hash"]) is None
