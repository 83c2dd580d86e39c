"""At the table in headless Chromium: two phones (360x740) and the room.

Side A types a match to 21 deal by deal (losing the network half-way), side B signs it on its
own card, and the public standings open in a third context change without a reload; a dispute
reaches the referee's page on the desk and the decision reaches the standings; a revoked card
gets its refusal. With ``SAVE_SCREENSHOTS=1`` the phones' pages are saved as
docs/screenshots/at-the-table-*.png for docs/at-the-table.md.
"""

import re
import uuid

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from scoresheets.models import TableReport
from scoresheets.services import links, reports
from tests.browser.conftest import save_screenshot
from tournaments.models import Match, ResultVersion, Role, TournamentRole

pytestmark = pytest.mark.browser

PHONE = {"width": 360, "height": 740}

# A match to 21 won by the home line 21-7, deal by deal: (category, home, away) per deal.
DEALS = [
    {"carte": (1, 0), "denari": (1, 0), "settebello": (1, 0), "primiera": (0, 1), "scope": (2, 1)},
    {"carte": (1, 0), "denari": (0, 1), "settebello": (0, 1), "primiera": (1, 0), "scope": (3, 0)},
    {"carte": (1, 0), "denari": (1, 0), "settebello": (1, 0), "primiera": (1, 0), "scope": (2, 1)},
    {"carte": (1, 0), "denari": (1, 0), "settebello": (0, 1), "primiera": (1, 0), "scope": (2, 1)},
]


@pytest.fixture
def room(transactional_db, live_server, settings):
    """A running round robin to 21 of four lines; the public pages poll every second (the
    live server has no WebSocket: the push's fallback is what keeps the page fresh here)."""
    from django.core.cache import cache

    from tests.tournaments.conftest import RR, make_tournament
    from tournaments.services import schedule

    settings.PAGES_POLL_SECONDS = 1
    cache.clear()
    tournament = make_tournament("scopa-classica-21", n_lines=4, stages=[RR], slug="al-tavolo")
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    match = Match.objects.filter(round__stage=stage).order_by("round__number", "pk").first()
    match.table_number = 7
    match.save(update_fields=["table_number"])
    yield tournament, match
    cache.clear()


def _phone(page_factory):
    return page_factory(width=PHONE["width"], height=PHONE["height"])


def _type_deal(page, index):
    for category, (home, away) in DEALS[index].items():
        for side, value in ((0, home), (1, away)):
            if value:
                page.fill(f"input[name=d{index}-{side}-{category}]", str(value))


def _totals(page, home, away):
    page.wait_for_function(
        "([h, a]) => document.getElementById('total-home').textContent === h"
        " && document.getElementById('total-away').textContent === a",
        arg=[str(home), str(away)],
    )


def _played(page, name):
    row = page.locator("table.standings tbody tr", has_text=name)
    return int(row.locator("td").nth(1).inner_text())


def _standings_url(tournament):
    group = tournament.stages.get().groups.get()
    return reverse("public:group", args=[tournament.slug, group.pk])


def test_side_a_enters_side_b_signs_and_the_room_sees_it(room, page_factory):
    tournament, match = room
    card_a = links.link_for(tournament, match.home)
    card_b = links.link_for(tournament, match.away)

    spectator = page_factory()
    spectator.goto(_standings_url(tournament))
    played_before = _played(spectator, match.home.name)
    spectator.evaluate("() => { window.__same_page = true; }")

    a = _phone(page_factory)
    a.goto(reverse("table:line", args=[card_a.token]))
    save_screenshot(a, "at-the-table-line")
    with a.expect_navigation():
        a.locator(".table-match a").first.click()
    assert a.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    _type_deal(a, 0)
    _totals(a, 5, 2)
    _type_deal(a, 1)
    _totals(a, 10, 4)
    assert TableReport.objects.get(match=match).state == "draft"  # the desk sees "being entered"
    save_screenshot(a, "at-the-table-sheet")

    # the network drops in the middle of the sheet: what is typed stays on the phone
    a.context.set_offline(True)
    _type_deal(a, 2)
    a.locator("#sheet-offline").wait_for(state="visible")
    save_screenshot(a, "at-the-table-offline")
    a.context.set_offline(False)
    a.reload()
    assert a.input_value("input[name=d2-0-scope]") == "2"  # nothing lost
    _totals(a, 16, 5)
    _type_deal(a, 3)
    _totals(a, 21, 7)
    a.wait_for_selector("#submit-sheet:not([disabled])")
    assert "21" in a.inner_text("#sheet-sentence")

    # sent while offline: kept as pending, sent by itself when the network is back, once
    a.context.set_offline(True)
    a.click("#submit-sheet")
    a.locator("#sheet-offline").wait_for(state="visible")
    with a.expect_navigation():
        a.context.set_offline(False)
    assert ResultVersion.objects.filter(match=match).count() == 1
    assert TableReport.objects.get(match=match, state="awaiting").side == "home"

    b = _phone(page_factory)
    b.goto(reverse("table:sheet", args=[card_b.token, match.pk]))
    assert "21 – 7" in b.inner_text(".shown-sheet")
    save_screenshot(b, "at-the-table-answer")
    with b.expect_navigation():
        b.click("button[value=accept]")
    assert b.locator(".msg-success").is_visible()

    spectator.wait_for_function(
        "([name, n]) => [...document.querySelectorAll('table.standings tbody tr')]"
        ".some(tr => tr.innerText.includes(name) && tr.querySelectorAll('td')[1].innerText == n)",
        arg=[match.home.name, str(played_before + 1)],
        timeout=10_000,
    )
    assert spectator.evaluate("() => window.__same_page === true")  # no reload

    links.revoke(card_b)
    response = b.goto(reverse("table:line", args=[card_b.token]))
    assert response.status == 410
    assert b.locator("[role=alert]").is_visible()
    save_screenshot(b, "at-the-table-revoked")


def test_a_dispute_reaches_the_referee_whose_decision_reaches_the_standings(room, page_factory):
    tournament, match = room
    card_a = links.link_for(tournament, match.home)
    card_b = links.link_for(tournament, match.away)
    sheet = [
        {"breakdown": [{k: v[0] for k, v in deal.items()}, {k: v[1] for k, v in deal.items()}]}
        for deal in DEALS
    ]
    reports.submit(card_a, match, sheet, client_key=uuid.uuid4())

    b = _phone(page_factory)
    b.goto(reverse("table:sheet", args=[card_b.token, match.pk]))
    b.fill("#comment", "La terza smazzata era nostra")
    with b.expect_navigation():
        b.click("button[value=dispute]")
    assert TableReport.objects.get(match=match).state == "disputed"

    referee = User.objects.create_user("arbitra", password="fischietto-2026")
    TournamentRole.objects.create(tournament=tournament, user=referee, role=Role.REFEREE)
    desk = page_factory()
    desk.goto(
        reverse("desk:login") + "?next=" + reverse("referee:disputes", args=[tournament.slug])
    )
    desk.fill("#id_username", "arbitra")
    desk.fill("#id_password", "fischietto-2026")
    with desk.expect_navigation():
        desk.locator("main button[type=submit]").click()
    assert "La terza smazzata era nostra" in desk.inner_text("main")
    save_screenshot(desk, "at-the-table-referee")
    with desk.expect_navigation():
        desk.locator(".referee-sheet button[type=submit]").first.click()
    assert desk.locator(".msg-success").is_visible()

    desk.goto(_standings_url(tournament))
    row = desk.locator("table.standings tbody tr", has_text=match.home.name)
    assert row.locator("td").nth(1).inner_text() == "1"
    assert re.search(
        r"\b21\b", Match.objects.get(pk=match.pk).results.get(line=match.home).points.__str__()
    )


def test_typing_a_sheet_online_asks_the_server_twice_not_after_every_field(room, page_factory):
    """The phone referees the sheet itself as it is typed (its port of the engine's referee);
    the server hears the draft at the first change and once the typing pauses, not after each
    field: at a venue those calls were most of the phones' requests (docs/performance.md)."""
    tournament, match = room
    card = links.link_for(tournament, match.home)
    a = _phone(page_factory)
    calls = []
    a.on("request", lambda r: calls.append(r.url) if r.url.endswith("/check/") else None)
    a.goto(reverse("table:sheet", args=[card.token, match.pk]))
    a.wait_for_selector("#deals .deal-card")
    for category, (home, away) in DEALS[0].items():
        for side, value in ((0, home), (1, away)):
            if value:
                a.fill(f"input[name=d0-{side}-{category}]", str(value))
                a.wait_for_timeout(450)  # a player's pause: the old page asked after each
    _totals(a, 5, 2)
    assert "21" in a.inner_text("#sheet-sentence")  # the referee's sentence, from the phone

    def drafted():
        draft = TableReport.objects.filter(match=match, state="draft").first()
        return draft is not None and draft.deals and draft.deals[0]["breakdown"][1].get("scope")

    for _ in range(50):  # the pause's call carries the whole deal
        if drafted():
            break
        a.wait_for_timeout(100)
    assert drafted() == "1"
    assert len(calls) == 2, calls


def test_a_refusal_only_the_server_knows_stays_while_the_phone_referees(room, page_factory):
    """The match closed while the sheet is typed: the server's refusal, heard with a draft,
    stays on the page through the next changes (the phone's referee cannot know it), with Send
    asleep; the phone's own reading does not paint over it."""
    from tournaments.models import Stage

    tournament, match = room
    card = links.link_for(tournament, match.home)
    a = _phone(page_factory)
    a.goto(reverse("table:sheet", args=[card.token, match.pk]))
    _type_deal(a, 0)
    _totals(a, 5, 2)
    Stage.objects.filter(pk=match.round.stage_id).update(status=Stage.Status.CLOSED)
    a.fill("input[name=d1-0-carte]", "1")  # heard by the server after the pause: refused
    a.wait_for_selector("#sheet-error:not([hidden])", timeout=10_000)
    refused = a.inner_text("#sheet-error")
    assert refused
    a.fill("input[name=d1-1-denari]", "1")  # the phone's referee finds nothing wrong here
    a.wait_for_timeout(300)
    assert a.inner_text("#sheet-error") == refused
    assert a.locator("#submit-sheet").is_disabled()
