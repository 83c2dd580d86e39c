"""The players' sheet with the network really cut, in headless Chromium (docs/at-the-table.md,
"Without a network").

Playwright's offline switch does not stop a service worker's own requests, so the cut here is
both: the context goes offline (the page hears "offline") and every request the context makes,
the service worker's included, is aborted (Playwright routes a worker's requests only with
PW_EXPERIMENTAL_SERVICE_WORKER_NETWORK_EVENTS, set for this module's browser: without it the
worker's background sync would reach the server through the cut). The phone is a persistent
profile, so closing the browser and opening it again keeps what a real phone keeps (IndexedDB,
the service worker and its cache).
"""

import contextlib
import os

import pytest
from django.urls import reverse
from django.utils import translation

from scoresheets.models import TableReport
from scoresheets.services import links, offline, reports
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, save_screenshot, watch_csp
from tests.browser.test_at_the_table import DEALS, PHONE, _totals, _type_deal, room  # noqa: F401
from tournaments.exceptions import ResultError
from tournaments.models import Match, ResultVersion
from tournaments.services import results

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module", autouse=True)
def _route_the_workers_requests():
    """Before the module's browser starts: its driver reads this once."""
    name = "PW_EXPERIMENTAL_SERVICE_WORKER_NETWORK_EVENTS"
    previous = os.environ.get(name)
    os.environ[name] = "1"
    yield
    if previous is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = previous


class Phone:
    """One phone: a Chromium profile on disk, opened and closed like the real browser.

    A cut phone's sheets cannot reach the server by any path: besides the routes aborted, the
    server refuses every sync and every draft while a phone is cut (`cut_lines`), as if it
    were unreachable. A restarted browser wakes its service worker's pending background sync
    before a test can install its routes again, and a service worker started afresh (the page
    reloaded offline) makes the page's first draft request before Playwright has attached its
    routes to it (the offline test found a draft typed offline on the server, under load); a
    real phone without a network could not send either."""

    def __init__(self, browser, live_server, profile, cut_lines):
        self.browser, self.live_server, self.profile = browser, live_server, profile
        self.cut_lines = cut_lines
        self.context = None
        self.cut_off = False

    def open(self):
        self.context = watch_csp(
            self.browser.browser_type.launch_persistent_context(
                str(self.profile),
                executable_path=CHROMIUM,
                args=CHROMIUM_ARGS,
                viewport=PHONE,
                locale="it-IT",
                base_url=self.live_server.url,
            )
        )
        if self.cut_off:
            self._block()
        return self.context.pages[0] if self.context.pages else self.context.new_page()

    def _block(self):
        self.context.set_offline(True)
        self.context.route("**/*", lambda route: route.abort("internetdisconnected"))

    def cut(self):
        self.cut_off = True
        self.cut_lines.add(self)
        self._block()

    def reconnect(self):
        self.cut_off = False
        self.cut_lines.discard(self)
        self.context.unroute("**/*")
        self.context.set_offline(False)

    def close(self):
        self.context.close()


@pytest.fixture
def phone_factory(browser, live_server, tmp_path, monkeypatch):
    phones = []
    cut_lines = set()
    sync = offline.sync

    def unreachable_while_cut(*args, **kwargs):
        if cut_lines:
            raise ConnectionAbortedError("a phone is cut off: its sheet cannot arrive")
        return sync(*args, **kwargs)

    monkeypatch.setattr(offline, "sync", unreachable_while_cut)
    keep_draft = reports.keep_draft  # the drafts the sheet's script tells the server

    def draft_unreachable_while_cut(*args, **kwargs):
        if cut_lines:
            raise ConnectionAbortedError("a phone is cut off: its draft cannot arrive")
        return keep_draft(*args, **kwargs)

    monkeypatch.setattr(reports, "keep_draft", draft_unreachable_while_cut)

    def make(name="phone"):
        phone = Phone(browser, live_server, tmp_path / name, cut_lines)
        phones.append(phone)
        return phone

    yield make
    for phone in phones:
        with contextlib.suppress(Exception):  # already closed by the test
            phone.close()


def _deals_on_the_server(match):
    """The deals with something typed in the draft the server keeps of the sheet."""
    draft = TableReport.objects.filter(match=match, state="draft").first()
    if draft is None:
        return 0
    return sum(
        1 for deal in draft.deals if any(v for side in deal["breakdown"] for v in side.values())
    )


def _until(page, condition, tries=100):
    for _ in range(tries):
        if condition():
            return
        page.wait_for_timeout(100)
    raise AssertionError("still not so after 10 seconds")


def _installed(page, url):
    """Open ``url`` online and let the service worker take the page (and keep a copy)."""
    page.goto(url)
    page.evaluate("() => navigator.serviceWorker.ready.then(() => true)")
    page.reload()
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")


def test_a_sheet_typed_offline_survives_reload_and_restart_and_arrives_once(
    room,  # noqa: F811
    phone_factory,
):
    tournament, match = room
    card = links.link_for(tournament, match.home)
    url = reverse("table:sheet", args=[card.token, match.pk])
    phone = phone_factory()
    page = phone.open()
    _installed(page, url)
    _type_deal(page, 0)
    _totals(page, 5, 2)
    _until(page, lambda: _deals_on_the_server(match) == 1)  # checked by the server, online

    phone.cut()
    for index in range(1, len(DEALS)):
        _type_deal(page, index)
    _totals(page, 21, 7)  # counted on the phone
    assert page.locator("#sheet-offline").is_visible()

    response = page.reload()  # offline: the page from the service worker, the deals from IndexedDB
    assert response.from_service_worker
    assert _deals_on_the_server(match) == 1  # nothing typed offline reached the server
    assert page.input_value("input[name=d3-0-scope]") == "2"
    _totals(page, 21, 7)
    assert card.token not in page.url  # the address bar no longer shows the card's token
    page.click("#submit-sheet")
    page.wait_for_selector("#outbox-status[data-status=queued]")
    save_screenshot(page, "at-the-table-queued")
    phone.close()  # the browser is closed with the sheet still on the phone
    assert not TableReport.objects.filter(match=match).exclude(state="draft").exists()

    page = phone.open()  # opened again, still without a network, at the token-free address
    page.goto(reverse("table:sheet", args=[f"k{card.pk}", match.pk]))
    page.wait_for_selector("#outbox-status[data-status=queued]")
    assert page.input_value("input[name=d3-0-scope]") == "2"
    with page.expect_navigation(timeout=20_000):
        phone.reconnect()  # the outbox sends it; the page then shows where it stands
    page.wait_for_selector("#outbox-status[data-status=waiting]")
    assert TableReport.objects.get(match=match, state="awaiting").side == "home"
    assert ResultVersion.objects.filter(match=match).count() == 1
    page.reload()  # and again: nothing is sent twice
    page.wait_for_timeout(300)
    assert ResultVersion.objects.filter(match=match).count() == 1


def test_the_other_line_countersigns_on_the_same_phone_offline(
    room,  # noqa: F811
    phone_factory,
):
    tournament, match = room
    card = links.link_for(tournament, match.home)
    code = offline.code_for(match, "away").code
    phone = phone_factory()
    page = phone.open()
    _installed(page, reverse("table:sheet", args=[card.token, match.pk]))
    for index in range(len(DEALS)):
        _type_deal(page, index)
    _totals(page, 21, 7)
    page.wait_for_selector("#submit-sheet:not([disabled])")  # over, says the server
    phone.cut()
    page.click(".countersign-here summary")
    page.fill("#countersign-code", code)
    page.click("#countersign-here")
    page.wait_for_selector("#outbox-status[data-status=queued]")
    assert Match.objects.get(pk=match.pk).status != Match.Status.DONE
    with page.expect_navigation(timeout=20_000):
        phone.reconnect()
    page.wait_for_selector("#outbox-status[data-status=countersigned]")
    signed = TableReport.objects.get(match=match, state="accepted")
    assert signed.signed_with_code
    assert Match.objects.get(pk=match.pk).status == Match.Status.DONE

    # the countersigning line sees what it signed on its own link and may dispute it
    other = phone_factory("other").open()
    other.goto(
        reverse("table:sheet", args=[links.link_for(tournament, match.away).token, match.pk])
    )
    assert "21 – 7" in other.inner_text(".shown-sheet")
    other.fill("#comment", "Non abbiamo firmato questo foglio")
    with other.expect_navigation():
        other.click("button[value=dispute_signed]")
    assert TableReport.objects.get(pk=signed.pk).state == "disputed"


def test_the_phone_referees_the_sheet_offline_as_the_server(
    room,  # noqa: F811
    phone_factory,
):
    """Offline, the page's own port of the engine's referee answers as the check URL would: an
    impossible deal with the server's sentence, Send asleep until the match is over."""
    tournament, match = room
    card = links.link_for(tournament, match.home)
    phone = phone_factory()
    page = phone.open()
    _installed(page, reverse("table:sheet", args=[card.token, match.pk]))
    phone.cut()
    # carte to both lines: a deal that cannot happen
    page.fill("input[name=d0-0-carte]", "1")
    page.fill("input[name=d0-1-carte]", "1")
    typed = [{"breakdown": [{"carte": "1"}, {"carte": "1"}]}]
    with translation.override("it"), pytest.raises(ResultError) as refusal:
        results.sheet_progress(match, reports.deals_payload(typed))
    page.wait_for_selector("#sheet-error:not([hidden])")
    assert page.inner_text("#sheet-error") == str(refusal.value)
    assert page.locator("#submit-sheet").is_disabled()
    assert "Il telefono controlla il foglio" in page.inner_text("#sheet-offline")

    page.fill("input[name=d0-1-carte]", "")
    for index in range(len(DEALS)):
        _type_deal(page, index)
        if index == 0:
            page.wait_for_selector("#sheet-error", state="hidden")
            assert page.locator("#submit-sheet").is_disabled()  # 5-2: not over
    _totals(page, 21, 7)
    typed = [
        {"breakdown": [{k: str(v[side]) for k, v in deal.items() if v[side]} for side in (0, 1)]}
        for deal in DEALS
    ]
    with translation.override("it"):
        over = results.sheet_progress(match, reports.deals_payload(typed))
    assert over.over
    page.wait_for_selector("#submit-sheet:not([disabled])")
    assert page.inner_text("#sheet-sentence") == over.sentence
    assert page.locator("input[name=d4-0-carte]").count() == 0  # no fifth deal asked for
    assert _deals_on_the_server(match) == 0  # all of it judged on the phone


def _dispatch_sync(page, tag):
    """What Chromium does when the network is back: wake the service worker with a sync event
    (through DevTools; the real trigger is the operating system's connectivity, which a test
    cannot switch)."""
    cdp = page.context.new_cdp_session(page)
    found = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda event: found.extend(event["registrations"]),
    )
    cdp.send("ServiceWorker.enable")
    _until(page, lambda: any(not r.get("isDeleted") for r in found))
    registration = next(r for r in found if not r.get("isDeleted"))
    origin = page.evaluate("() => location.origin")
    cdp.send(
        "ServiceWorker.dispatchSyncEvent",
        {
            "origin": origin,
            "registrationId": registration["registrationId"],
            "tag": tag,
            "lastChance": False,
        },
    )


def test_background_sync_sends_the_outbox_with_no_page_open(
    room,  # noqa: F811
    phone_factory,
):
    """A sheet queued offline registers the outbox's sync tag; with the network back and no
    page of the app open, the service worker sends it by itself, once."""
    tournament, match = room
    card = links.link_for(tournament, match.home)
    phone = phone_factory()
    page = phone.open()
    _installed(page, reverse("table:sheet", args=[card.token, match.pk]))
    for index in range(len(DEALS)):
        _type_deal(page, index)
    _totals(page, 21, 7)
    phone.cut()
    page.wait_for_selector("#submit-sheet:not([disabled])")
    page.click("#submit-sheet")
    page.wait_for_selector("#outbox-status[data-status=queued]")
    tags = page.evaluate("() => navigator.serviceWorker.ready.then((r) => r.sync.getTags())")
    assert "scopa-outbox" in tags
    assert "anche con questa pagina chiusa" in page.inner_text("#outbox-status")
    blank = page.context.new_page()  # a page outside the app: it sends nothing
    page.close()
    phone.reconnect()
    assert not TableReport.objects.filter(match=match).exclude(state="draft").exists()

    _dispatch_sync(blank, "scopa-outbox")
    _until(blank, lambda: TableReport.objects.filter(match=match, state="awaiting").exists())
    assert ResultVersion.objects.filter(match=match).count() == 1

    page = blank.context.new_page()  # the app opened again: the sheet is not sent twice
    page.goto(reverse("table:sheet", args=[f"k{card.pk}", match.pk]))
    page.wait_for_selector("#outbox-status[data-status=waiting]")
    assert ResultVersion.objects.filter(match=match).count() == 1


def test_a_login_on_the_phone_does_not_strand_a_typed_sheet(
    room,  # noqa: F811
    phone_factory,
):
    """A login on the same phone rotates Django's CSRF token under a sheet already typed. The
    sheet's calls take no such token (the card is their credential): the sheet still arrives,
    once. (It used to get Django's HTML 403, which the outbox took for a lost connection: "not
    sent yet" forever.) A refusal nobody can read, twice, says what to do; the page sends it
    again later."""
    from django.contrib.auth.models import User

    tournament, match = room
    card = links.link_for(tournament, match.home)
    User.objects.create_user("segnapunti", password="tavolo-2026-tavolo")
    phone = phone_factory()
    page = phone.open()
    page.goto(reverse("table:sheet", args=[card.token, match.pk]))
    for index in range(len(DEALS)):
        _type_deal(page, index)
    page.wait_for_selector("#submit-sheet:not([disabled])")

    desk = page.context.new_page()  # the same phone: someone logs in on the desk
    desk.goto(reverse("desk:login"))
    desk.fill("#id_username", "segnapunti")
    desk.fill("#id_password", "tavolo-2026-tavolo")
    with desk.expect_navigation():
        desk.locator("main button[type=submit]").click()
    desk.close()

    sync = f"**/m/{match.pk}/sync/"
    page.context.route(sync, lambda route: route.fulfill(status=403, body="<h1>403</h1>"))
    page.click("#submit-sheet")
    page.wait_for_selector("#outbox-status[data-status=blocked]")
    assert "Riaprite il link" in page.inner_text("#outbox-status")
    assert not TableReport.objects.filter(match=match).exclude(state="draft").exists()

    page.context.unroute(sync)
    # what the page does every 15 seconds, and a page of the app opened again at once: the
    # blocked sheet goes, from the page rendered before the login
    _send_now(page)
    page.wait_for_selector("#outbox-status[data-status=waiting]")
    assert TableReport.objects.get(match=match, state="awaiting").side == "home"
    assert ResultVersion.objects.filter(match=match).count() == 1


def _typed(deals=DEALS):
    """A whole sheet as the phone types it (the page's own format)."""
    return [
        {"breakdown": [{k: str(v[side]) for k, v in deal.items() if v[side]} for side in (0, 1)]}
        for deal in deals
    ]


SYNC = "**/sync/"


def _sheet_queued(phone_factory, tournament, match, side):
    """A phone of ``side`` whose whole sheet is queued, its sync cut (the route stays, for the
    service worker's background sync too; the rest of the network answers). The deals are the
    server's draft of that side, typed there before: the page opens with them, as after a
    reload."""
    line = match.home if side == "home" else match.away
    card = links.link_for(tournament, line)
    reports.keep_draft(card, match, _typed())
    page = phone_factory(side).open()
    page.context.route(SYNC, lambda route: route.abort("internetdisconnected"))
    page.goto(reverse("table:sheet", args=[card.token, match.pk]))
    _totals(page, 21, 7)
    page.wait_for_selector("#submit-sheet:not([disabled])")
    page.click("#submit-sheet")
    page.wait_for_selector("#outbox-status[data-status=queued]")
    return page


def _send_now(page):
    """What the page does every few seconds and when the network returns (not awaited: an
    answer moves the page to where the sheet stands)."""
    page.evaluate("() => { window.ScopaOutbox.flush(true); }")


def test_two_phones_of_one_table_and_twenty_sends_store_one_sheet(
    room,  # noqa: F811
    phone_factory,
):
    """Both lines queued the same sheet on their own phones. The away line's reaches the server
    first (the order the phones' code does not see: both orders are served in
    tests/scoresheets/test_offline.py) and loses its answers 19 times (the server gets each
    send, the phone hears nothing): sent again and again, one sheet. The home line's arrives
    next and signs it: the result is in force, and the first phone hears so."""
    tournament, match = room
    first, second = "away", "home"
    pages = {s: _sheet_queued(phone_factory, tournament, match, s) for s in (first, second)}
    sends, answered = [], []

    def answer_lost(route):
        sends.append(route.request.post_data_json["client_key"])
        if answered:
            route.continue_()
            return
        route.fetch()  # the server gets it...
        route.abort("connectionreset")  # ...the phone does not hear back

    pages[first].context.unroute(SYNC)
    pages[first].context.route(SYNC, answer_lost)
    while len(sends) < 19:
        pages[first].evaluate("() => window.ScopaOutbox.flush(false)")
    assert ResultVersion.objects.filter(match=match).count() == 1
    answered.append(True)
    _send_now(pages[first])
    pages[first].wait_for_selector("#outbox-status[data-status=waiting]")
    assert len(sends) >= 20 and len(set(sends)) == 1
    assert TableReport.objects.get(match=match, state="awaiting").side == first
    assert ResultVersion.objects.filter(match=match).count() == 1

    pages[second].context.unroute(SYNC)
    _send_now(pages[second])
    pages[second].wait_for_selector("#outbox-status[data-status=countersigned]")
    assert Match.objects.get(pk=match.pk).status == Match.Status.DONE
    assert results.in_force(match).source == "players"
    assert ResultVersion.objects.filter(match=match).count() == 1  # the same sheet signs it
    pages[first].evaluate("() => window.ScopaOutbox.flush(true)")  # where does it stand?
    pages[first].wait_for_selector("#outbox-status[data-status=countersigned]")


def test_a_late_sheet_against_a_desk_result_waits_for_the_referee(
    room,  # noqa: F811
    phone_factory,
):
    """A sheet queued on a phone while the desk entered another result: when it arrives, the
    desk's result stands and the phone says the sheet waits for the referee."""
    tournament, match = room
    page = _sheet_queued(phone_factory, tournament, match, "home")
    swapped = [{k: (v[1], v[0]) for k, v in deal.items()} for deal in DEALS]  # 7-21
    results.save_result(match, reports.deals_payload(_typed(swapped)))
    page.context.unroute(SYNC)
    _send_now(page)
    page.wait_for_selector("#outbox-status[data-status=referee]")
    assert "In attesa dell'arbitro" in page.inner_text("#outbox-status")
    assert TableReport.objects.get(match=match, state="referred").side == "home"
    assert results.in_force(match).source != "players"
