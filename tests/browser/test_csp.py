"""Pages that broke their own Content-Security-Policy.

The projector loaded htmx without the ``htmx-config`` meta of base.html (htmx injected its
indicator ``<style>``), and the submission admin wrote ``<pre style=…>``. Every browser test
now fails on any ``securitypolicyviolation`` (tests/browser/conftest.py); this one opens those
two pages and also asks the recorder directly, so it fails here whatever else changes.
"""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tests.browser.conftest import CSP_VIOLATIONS, settle_csp_reports
from tests.pages.factories import add_verified_record
from tests.tournaments.conftest import RR, make_tournament
from tournaments.models import Match
from tournaments.services import schedule

pytestmark = pytest.mark.browser


def _logged_in_page(page_factory, live_server, user):
    client = Client()
    client.force_login(user)
    page = page_factory(width=1100, height=900)
    page.context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    return page


def test_the_projector_and_the_submission_admin_keep_the_csp(
    transactional_db, live_server, page_factory
):
    tournament = make_tournament(n_lines=4, stages=[RR], slug="proiettore")
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    match = Match.objects.filter(round__stage=stage, away__isnull=False).order_by("pk").first()
    submission = add_verified_record(match, seed=3)
    root = User.objects.create_superuser("radice", password="x-pass-12345")
    page = _logged_in_page(page_factory, live_server, root)

    page.goto(reverse("desk:projector", args=[tournament.slug, match.round_id]))
    page.wait_for_load_state("networkidle")
    assert page.evaluate("() => typeof htmx") == "object"  # htmx ran, under its meta
    assert page.evaluate("() => htmx.config.allowEval") is False
    assert page.evaluate("() => htmx.config.includeIndicatorStyles") is False

    page.goto(reverse("admin:games_submission_change", args=[submission.pk]))
    page.wait_for_load_state("networkidle")
    assert page.locator("pre.record-json").count() == 1
    settle_csp_reports(page.context)
    assert CSP_VIOLATIONS == []
