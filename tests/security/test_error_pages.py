"""Our own 404, 403 and 500 pages, in Italian first and English."""

import pytest
from django.contrib.auth.models import User
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import translation
from django.views.defaults import server_error

from tests.pages.factories import build_tournament

pytestmark = pytest.mark.django_db


def _is_site_page(text):
    return 'class="site-header"' in text and "<main" in text


def test_404_is_ours_in_italian_and_english(client):
    response = client.get("/nessuna/pagina/")
    assert response.status_code == 404
    text = response.content.decode()
    assert _is_site_page(text) and 'lang="it"' in text
    assert "Pagina non trovata" in text or "Page not found" in text
    client.cookies["django_language"] = "en"
    text = client.get("/no/such/page/").content.decode()
    assert 'lang="en"' in text and "Page not found" in text


def test_a_stale_form_gets_our_page_not_djangos():
    """A form sent with a token from before a login or a logout (another tab, an expired
    session): Django's English technical page said "CSRF verification failed"."""
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("desk:login"), {"username": "x", "password": "y"})
    assert response.status_code == 403
    text = response.content.decode()
    assert _is_site_page(text) and 'lang="it"' in text
    assert "Questa pagina era scaduta" in text and "CSRF" not in text
    client.cookies["django_language"] = "en"
    text = client.post(reverse("desk:login"), {}).content.decode()
    assert "This page was out of date" in text and "Nothing was saved" in text


def test_403_says_why(client):
    tournament = build_tournament(4, slug="chiuso", play=False)
    outsider = User.objects.create_user("estraneo", password="x-pass-12345")
    client.force_login(outsider)
    client.cookies["django_language"] = "en"
    response = client.get(reverse("desk:tournament", args=[tournament.slug]))
    assert response.status_code == 403
    text = response.content.decode()
    assert _is_site_page(text) and "Access denied" in text


def test_500_is_ours():
    request = RequestFactory().get("/")
    with translation.override("en"):
        response = server_error(request)
    assert response.status_code == 500
    text = response.content.decode()
    assert _is_site_page(text) and "Server error" in text and "nothing was saved" in text
