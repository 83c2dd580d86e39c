"""A whole small tournament run from the desk alone, wizard to podium, in headless Chromium.

Each step saves a screenshot (``SAVE_SCREENSHOTS=1``) that ``docs/organizer-guide.md`` shows.
No admin URL is ever requested.
"""

import re

import pytest
from django.contrib.auth.models import Permission, User

from tests.browser.conftest import save_screenshot
from tournaments.models import Match, Tournament

pytestmark = pytest.mark.browser

LINES = ["Anna Rossi", "Bruno Esposito", "Carla Greco", "Dario Conti"]


def enter_result_on_desk(page, *, home_points=11, away_scope=2):
    """Fill the desk's result form with one deal to 11 won by the home line, and save.

    Kept in one place: the form's field names may change with the result form's redesign.
    """
    page.fill("input[name=d0-home-scope]", str(home_points - 4))
    for category in ("carte", "denari", "settebello", "primiera"):
        page.fill(f"input[name=d0-home-{category}]", "1")
    page.fill("input[name=d0-away-scope]", str(away_scope))
    with page.expect_navigation():
        page.locator("button[name=action][value=save]").click()
    assert page.locator(".msg-success").first.is_visible(), page.locator("main").inner_text()


def _enter_every_missing_result(page, slug, *, screenshot=None):
    while True:
        page.goto(f"/desk/{slug}/")
        link = page.locator("#missing-h ~ div a.button").first
        if not link.count():
            return
        with page.expect_navigation():
            link.click()
        if screenshot:
            save_screenshot(page, screenshot)
            screenshot = None
        enter_result_on_desk(page)


def _close_stage(page, stage_name):
    row = page.locator("table.desk-stages tbody tr", has_text=stage_name)
    row.locator("input[name=confirm]").check()
    with page.expect_navigation():
        row.locator("form[action$='/close/'] button[type=submit]").click()
    assert page.locator(".msg-success").first.is_visible(), page.locator("main").inner_text()


def test_a_whole_tournament_from_the_wizard_to_the_podium(page_factory):
    organizer = User.objects.create_user("organizzatrice", password="giornata-4321")
    organizer.user_permissions.add(Permission.objects.get(codename="add_tournament"))
    page = page_factory()
    visited = []
    page.on("request", lambda request: visited.append(request.url))

    # 1. log in on the desk
    page.goto("/desk/login/?next=/desk/")
    page.fill("#id_username", "organizzatrice")
    page.fill("#id_password", "giornata-4321")
    with page.expect_navigation():
        page.get_by_role("button", name=re.compile("Log in|Accedi")).click()
    save_screenshot(page, "guide-01-desk-home")

    # 2. the wizard
    with page.expect_navigation():
        page.get_by_role("link", name=re.compile("New tournament|Nuovo torneo")).click()
    page.fill("#id_name", "Torneo del circolo")
    page.fill("#id_start_date", "2026-06-13")
    page.fill("#id_venue", "Circolo Scopa, Napoli")
    page.fill("#id_time_limit_min", "45")  # the projector counts it down
    page.select_option("#id_format", "groups_knockout")
    save_screenshot(page, "guide-02-wizard")
    with page.expect_navigation():
        page.get_by_role("button", name=re.compile("Create the tournament|Crea il torneo")).click()
    tournament = Tournament.objects.get(name="Torneo del circolo")
    slug = tournament.slug

    # 3. lines, pasted from a spreadsheet
    page.fill("#id_pasted", "\n".join(f"{name}\t{name}" for name in LINES))
    with page.expect_navigation():
        page.get_by_role("button", name=re.compile("^(Import|Importa)$")).click()
    assert tournament.entries.count() == 4
    save_screenshot(page, "guide-03-lines")

    # 4. the groups' rounds
    page.goto(f"/desk/{slug}/")
    with page.expect_navigation():
        page.get_by_role("button", name=re.compile("Generate rounds|Genera i turni")).click()
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.RUNNING
    save_screenshot(page, "guide-04-rounds")

    # 5. the pairings sheet and the projector of round 1
    round_ = tournament.stages.get(order=1).rounds.get(number=1)
    page.goto(f"/desk/{slug}/round/{round_.pk}/sheet/")
    save_screenshot(page, "guide-05-pairings")
    page.goto(f"/desk/{slug}/round/{round_.pk}/projector/")
    if page.locator("button[value=start]").count():
        with page.expect_navigation():
            page.locator("button[value=start]").click()
    save_screenshot(page, "guide-06-projector")

    # 6. every group result through the desk
    _enter_every_missing_result(page, slug, screenshot="guide-07-result")
    group_matches = Match.objects.filter(round__stage__tournament=tournament, round__stage__order=1)
    assert not group_matches.exclude(status="done").exists()

    # 7. close the groups: the knock-out is seeded
    page.goto(f"/desk/{slug}/")
    _close_stage(page, tournament.stages.get(order=1).name)
    save_screenshot(page, "guide-08-groups-closed")

    # 8. the final, then close the knock-out
    _enter_every_missing_result(page, slug)
    page.goto(f"/desk/{slug}/")
    _close_stage(page, tournament.stages.get(order=2).name)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED

    # 9. the podium
    with page.expect_navigation():
        page.get_by_role("link", name=re.compile("Podium|Podio")).first.click()
    podium = page.locator("ol.podium").inner_text()
    assert any(name in podium for name in LINES)
    save_screenshot(page, "guide-09-podium")

    assert not [url for url in visited if "/admin/" in url], "the desk alone runs the day"
