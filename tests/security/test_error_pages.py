"""Our own 404, 403 and 500 pages, in Italian first and English."""

import pytest
from django.contrib.auth.models import User
from django.test import RequestFactory
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
