"""Issue 31, findings 1 and 7: what reaches ``/p/<token>/`` before any query, the per-address
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
