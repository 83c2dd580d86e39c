"""The push in a browser: the desk and a public standings page, served by a real server (daphne,
the development server's; the site's push, ``config.push``, for the round page) with the
Redis channel layer, change within a second or two of a result coming into force (their polls
run every 15 s, so only the push can do it). The fallback (no socket: polling) is
``test_pages.test_running_tournament_updates_without_reload``."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.test import Client

from tests.api import factories
from tests.browser.conftest import settle_csp_reports
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


# Every socket a page opens is kept in window.__sockets; while window.__cut is true a new one
# goes to a path nothing listens on (refused, as a venue's dropped network would be).
SOCKETS = """
(() => {
  const Real = window.WebSocket;
  window.__sockets = [];
  window.__cut = false;
  window.WebSocket = function (url, protocols) {
    const socket = new Real(window.__cut ? url.replace(/\\/ws\\/.*/, "/ws/cut/") : url, protocols);
    window.__sockets.push(socket);
    return socket;
  };
  window.WebSocket.prototype = Real.prototype;
})();
"""

SAME_ROW = """([id, html]) => {
  const holder = document.createElement("tbody");
  holder.innerHTML = html;
  const row = document.getElementById(id);
  return row !== null && row.outerHTML === holder.firstElementChild.outerHTML;
}"""


@pytest.fixture
def shared_cache(settings):
    """The page cache in Redis, as with several server processes: the forked server and this
    test (which enters the results) see the same stamps and versions (skipped without Redis)."""
    import uuid

    from tests.conftest import _redis_url

    url = _redis_url()
    if not url:
        pytest.skip("needs Redis for a cache shared with the forked server")
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": f"scopa-test-{uuid.uuid4().hex[:8]}",
        }
    }


def test_a_countersigned_result_is_on_the_round_page_and_the_standings_at_once(
    browser, shared_cache, push_server
):
    """The round page swaps in the row the push carries (no request: the exact row the page
    would render), the standings fetch themselves; a page whose socket was cut while a result
    came in catches up when the socket is back."""
    from public import rows

    require_shared_database()
    tournament = factories.tournament(lines=4)
    Tournament.objects.filter(pk=tournament.pk).update(status=Tournament.Status.RUNNING)
    first, second = [m for m in factories.matches(tournament) if m.home_id and m.away_id][:2]
    base = f"http://{push_server}"
    context = browser.new_context(base_url=base, locale="it-IT")
    context.add_init_script(SOCKETS)

    def countersigned(match, sheet):
        def play():
            try:
                proposed = results.propose_result(match, sheet)
                results.countersign(proposed)
                (row,) = rows.rows_in_languages([match.pk], ["it"])["it"]
                return row
            finally:
                connection.close()

        with ThreadPoolExecutor(1) as pool:  # Playwright's loop runs in this thread
            return pool.submit(play).result()

    try:
        round_page = context.new_page()
        round_page.goto(f"/t/{tournament.slug}/round/{first.round_id}/")
        standings = context.new_page()
        standings.goto(f"/t/{tournament.slug}/group/{first.group_id}/")
        for page in (round_page, standings):
            page.wait_for_selector("#live[data-live-state=push]", timeout=5000)
            page.wait_for_load_state("networkidle")
        fetched = []
        round_page.on("request", lambda request: fetched.append(request.url))

        row = countersigned(first, deals((5, 2), (3, 4), (4, 1)))
        assert "12 – 7" in row["html"]
        round_page.wait_for_function(SAME_ROW, arg=[row["id"], row["html"]], timeout=3000)
        assert fetched == []  # swapped in place from the message
        standings.wait_for_function(
            "([name]) => [...document.querySelectorAll('table.standings tbody tr')].some("
            "tr => tr.innerText.includes(name) && tr.querySelectorAll('td')[1].innerText == '1')",
            arg=[first.home.name],
            timeout=3000,
        )

        round_page.evaluate(
            "() => { window.__cut = true; window.__sockets.forEach(s => s.close()); }"
        )
        round_page.wait_for_selector("#live[data-live-state=poll]", timeout=2000)
        missed = countersigned(second, deals((1, 5), (2, 4), (3, 4)))
        round_page.evaluate("() => { window.__cut = false; }")
        round_page.wait_for_function(SAME_ROW, arg=[missed["id"], missed["html"]], timeout=10000)
        round_page.wait_for_selector("#live[data-live-state=push]", timeout=2000)
    finally:
        settle_csp_reports(context)
        context.close()
