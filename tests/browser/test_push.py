"""The push in a browser: the desk and a public standings page, served by a real daphne with the
Redis channel layer, change within a second or two of a result coming into force (their polls
run every 15 s, so only the push can do it). The fallback (no socket: polling) is
``test_pages.test_running_tournament_updates_without_reload``."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.test import Client

from tests.api import factories
from tests.conftest import require_shared_database
from tests.tournaments.helpers import deals
from tournaments.models import Tournament
from tournaments.services import results

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_desk_and_the_standings_follow_a_result_without_polling(browser, daphne_server):
    require_shared_database()
    organizer = factories.user()
    tournament = factories.tournament(lines=2, organizer=organizer)
    Tournament.objects.filter(pk=tournament.pk).update(status=Tournament.Status.RUNNING)
    match = factories.matches(tournament)[0]
    session = Client()
    session.force_login(organizer)
    base = f"http://{daphne_server}"

    desk_context = browser.new_context(base_url=base, locale="it-IT")
    desk_context.add_cookies(
        [{"name": "sessionid", "value": session.cookies["sessionid"].value, "url": base}]
    )
    public_context = browser.new_context(base_url=base, locale="it-IT")
    try:
        desk = desk_context.new_page()
        desk.goto(f"/desk/{tournament.slug}/")
        standings = public_context.new_page()
        standings.goto(f"/t/{tournament.slug}/group/{match.group_id}/")
        desk.wait_for_selector("#desk-live[data-live-state=push]", timeout=5000)
        standings.wait_for_selector("#live[data-live-state=push]", timeout=5000)
        assert desk.locator("#missing-h .count").inner_text() == "1"
        desk.evaluate("() => { window.__same_page = true; }")

        # Entered from another thread: Playwright's loop runs in this one, and the announcement
        # (async_to_sync) refuses a thread with a running loop, as in any async caller.
        def enter():
            try:
                results.enter_result(match, deals((5, 2), (3, 4), (4, 1)), user=organizer)
            finally:
                connection.close()

        with ThreadPoolExecutor(1) as pool:
            pool.submit(enter).result()

        desk.wait_for_function(
            "() => document.querySelector('#missing-h .count').innerText === '0'", timeout=3000
        )
        standings.wait_for_function(
            "([name]) => [...document.querySelectorAll('table.standings tbody tr')].some("
            "tr => tr.innerText.includes(name) && tr.querySelectorAll('td')[1].innerText == '1')",
            arg=[match.home.name],
            timeout=3000,
        )
        assert desk.evaluate("() => window.__same_page === true")  # refreshed, not reloaded
    finally:
        desk_context.close()
        public_context.close()
