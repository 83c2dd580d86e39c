"""The phone sheet at 360 × 740. The sticky running total must not cover the row
being typed (the "Scope" row of the deal in hand), and the last-capture choice shows only on a
level third tie-break deal, the one deal it applies to."""

import pytest
from django.urls import reverse

from scoresheets.services import links
from tests.browser.test_at_the_table import PHONE, _totals, _type_deal, room  # noqa: F401

pytestmark = pytest.mark.browser

COVERED = """(selector) => {
  const input = document.querySelector(selector);
  input.scrollIntoView({block: "start"});  // a phone keyboard's "next" brings it to the top
  input.focus();
  const box = input.getBoundingClientRect();
  const totals = document.querySelector(".totals").getBoundingClientRect();
  const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  return {hit: hit === input, overlap: Math.max(0, totals.bottom - box.top), top: box.top,
          totals: totals.bottom};
}"""


def test_the_row_being_typed_is_not_under_the_running_total(room, page_factory):  # noqa: F811
    tournament, match = room
    card = links.link_for(tournament, match.home)
    phone = page_factory(width=PHONE["width"], height=PHONE["height"])
    phone.goto(reverse("table:sheet", args=[card.token, match.pk]))
    _type_deal(phone, 0)
    _totals(phone, 5, 2)
    _type_deal(phone, 1)
    _totals(phone, 10, 4)
    phone.wait_for_selector("input[name=d2-0-scope]")
    for name in ("d2-0-scope", "d2-1-scope", "d1-0-scope"):
        seen = phone.evaluate(COVERED, f"input[name={name}]")
        assert seen["hit"] and seen["overlap"] == 0, (name, seen)
    # the last capture only matters on a level third tie-break deal: none in a match to 21
    assert phone.locator(".last-capture:visible").count() == 0
    shown = phone.evaluate(
        "() => [...document.querySelectorAll('.last-capture')]"
        ".map(l => getComputedStyle(l).display)"
    )
    assert set(shown) == {"none"}, shown


def test_the_desk_offers_the_last_capture_on_tie_break_rows_only(
    transactional_db, live_server, page_factory
):
    from django.contrib.auth.models import User
    from django.test import Client

    from tests.tournaments.conftest import KO, make_tournament
    from tournaments.models import Entry, Match
    from tournaments.services import schedule

    tournament = make_tournament("scopa-classica-11", n_lines=4, stages=[KO], slug="ultima")
    stage = tournament.stages.get()
    lines = [e.line for e in Entry.objects.filter(tournament=tournament).order_by("seed")]
    schedule.generate_knockout(stage, lines)
    match = Match.objects.filter(round__stage=stage, round__number=1).order_by("pk").first()
    user = User.objects.create_user("arbitro", password="x-pass-12345")
    tournament.organizers.add(user)
    client = Client()
    client.force_login(user)
    page = page_factory(width=PHONE["width"], height=PHONE["height"])
    page.context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page.goto(reverse("desk:match", args=[tournament.slug, match.pk]))
    selects = page.locator("select[name$=-last_capture]")
    assert selects.count() >= 3
    assert all(not s.is_visible() for s in selects.all())
    page.check("input[name=d2-tiebreak]")
    assert page.locator("select[name=d2-last_capture]").is_visible()
    assert not page.locator("select[name=d1-last_capture]").is_visible()
