"""The desk at the table in Chromium: links, cards and the room render under the CSP.

One test walks the organizer's pages (links page, issuing the links, line cards, table cards,
the room with a table for the referee) and saves the screenshots of docs/at-the-table.md
(``SAVE_SCREENSHOTS=1``). No page may trigger a Content-Security-Policy violation: the QR codes
are inline SVG with presentation attributes only.
"""

import os

import pytest
from django.contrib.auth.models import User
from django.test import Client

from scoresheets.models import TableReport
from tests.browser.conftest import SCREENSHOTS, save_screenshot
from tests.tournaments.conftest import RR, make_tournament
from tournaments.models import Match
from tournaments.services import schedule

pytestmark = pytest.mark.browser

WATCH_CSP = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.violatedDirective + " " + e.blockedURI);
});
"""


def _logged_in_page(page_factory, live_server, user):
    client = Client()
    client.force_login(user)
    page = page_factory(width=1100, height=900)
    page.context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page.add_init_script(WATCH_CSP)
    return page


def _save_part(locator, name):
    """Like ``save_screenshot``, of one element (a printed page is long)."""
    if os.environ.get("SAVE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        locator.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def _no_csp_violation(page):
    assert page.evaluate("window.__csp") == [], page.url


def test_links_cards_and_the_room(transactional_db, live_server, page_factory):
    tournament = make_tournament(n_lines=8, stages=[RR], name="Torneo del circolo", slug="circolo")
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    organizer = User.objects.create_user("organizzatrice")
    tournament.organizers.add(organizer)
    page = _logged_in_page(page_factory, live_server, organizer)

    page.goto("/desk/circolo/links/")
    with page.expect_navigation():
        page.locator("form[action$='/links/issue/'] button").first.click()
    assert page.locator("svg.qr").count() == 8
    _no_csp_violation(page)
    save_screenshot(page, "at-the-table-links")

    page.goto("/desk/circolo/links/cards/")
    assert page.locator(".line-card svg.qr").count() == 8
    _no_csp_violation(page)
    page.emulate_media(media="print")
    _save_part(page.locator(".line-cards"), "at-the-table-line-cards")
    page.emulate_media(media="screen")

    round_ = stage.rounds.get(number=1)
    page.goto(f"/desk/circolo/round/{round_.pk}/print/")
    with page.expect_navigation():
        page.locator("form[action$='/cards/prepare/'] button").click()
    assert page.locator(".table-card svg.qr").count() == 8  # four tables, one code per side
    _no_csp_violation(page)
    page.emulate_media(media="print")
    _save_part(page.locator(".table-card").first, "at-the-table-table-card")
    page.emulate_media(media="screen")

    first, second, third, _ = Match.objects.filter(round=round_).order_by("table_number", "pk")
    TableReport.objects.create(match=first, side="home", state=TableReport.State.DRAFT)
    TableReport.objects.create(
        match=second, side="away", state=TableReport.State.DISPUTED, answer_comment="3 scope, non 4"
    )
    TableReport.objects.create(match=third, side="home", state=TableReport.State.AWAITING)
    page.goto("/desk/circolo/room/")
    assert page.locator("table.room tbody tr").first.get_attribute("class") == (
        "room-state-disputed"
    )
    with page.expect_navigation():
        page.locator("form[action$='/start/'] button").click()
    assert page.locator(".elapsed").count() == 1
    _no_csp_violation(page)
    save_screenshot(page, "at-the-table-room")
