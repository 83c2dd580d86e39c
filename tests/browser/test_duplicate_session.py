"""A 24-pair duplicate session from the desk in headless Chromium: the organizer creates the
session on the stages page (the stage, the round's boards and the movement, drawn at once),
prints the round's table cards (the relay's two tables sharing their boards) and the board
sheets (one per board, with its QR code), enters a table's two boards on the
desk, rules one of them not played, reads the public ranking per
direction, a board's traveller and a line's boards, and closes the stage once every table has
played; only then does the federation export show the seed."""

import re
from fractions import Fraction

import pytest
from django.contrib.auth.models import User
from django.db import transaction

from tests.browser.conftest import save_screenshot
from tests.tournaments.conftest import make_tournament
from tests.tournaments.helpers import deals
from tournaments.algorithms import duplicate as scoring
from tournaments.models import BoardSet, Match, Stage
from tournaments.services import duplicate, export, results

pytestmark = pytest.mark.browser


def test_a_24_pair_duplicate_session_from_the_desk(page_factory):
    tournament = make_tournament("scopa-tre-smazzate", n_lines=24, slug="duplicato-24")
    organizer = User.objects.create_user("direttrice", password="giornata-4321")
    tournament.organizers.add(organizer)
    page = page_factory()
    page.goto("/desk/login/?next=/desk/duplicato-24/")
    page.fill("#id_username", "direttrice")
    page.fill("#id_password", "giornata-4321")
    with page.expect_navigation():
        page.get_by_role("button", name=re.compile("Log in|Accedi")).click()

    # the session from the desk's stages page: Mitchell with the relay table instead of the
    # skip, 2 boards a round, the full movement, matchpoints (12 tables, 12 rounds, 24 boards),
    # the seed the engine's
    page.goto("/desk/duplicato-24/stages/")
    form = page.locator("form.duplicate-session")
    form.locator("input[name=name]").fill("Smazzate ripetute")
    form.locator("select[name=movement]").select_option("mitchell")
    form.locator("input[name=boards_per_round]").fill("2")
    form.locator("select[name=scoring]").select_option("matchpoints")
    form.locator("input[name=relay]").check()
    with page.expect_navigation():
        form.locator("button[type=submit]").click()
    assert page.locator(".msg-success").first.is_visible(), page.locator("main").inner_text()
    save_screenshot(page, "duplicate-01-drawn")
    stage = tournament.stages.get()
    assert stage.kind == Stage.Kind.DUPLICATE
    board_set = BoardSet.objects.get(stage=stage)
    assert len(board_set.boards) == 24 and board_set.relay
    assert Match.objects.filter(round__stage=stage).count() == 12 * 12

    # round 1's table cards: tables 1 and 12 share boards 1-2 (the relay), 13-14 rest
    page.goto(f"/desk/duplicato-24/round/{stage.rounds.get(number=1).pk}/print/")
    cards = page.locator("section.table-card")
    assert re.search(r"relais|relay", cards.nth(0).inner_text())
    assert re.search(r"\b12\b", cards.nth(0).locator(".tc-boards").inner_text())
    assert not cards.nth(1).locator(".tc-boards").inner_text().count("12")
    assert "13, 14" in page.locator("main").inner_text()
    page.goto("/desk/duplicato-24/")

    # the board sheets, one page per board with its QR code
    with page.expect_navigation():
        page.locator("table.desk-stages a", has_text=re.compile("schede|board sheets")).click()
    assert page.locator("pre.board-text").count() == 24
    assert page.locator(".board-qr svg").count() == 24
    save_screenshot(page, "duplicate-02-sheets")

    # table 1 of round 1 enters its two boards on the desk
    first = Match.objects.get(round__stage=stage, round__number=1, table_number=1)
    page.goto(f"/desk/duplicato-24/match/{first.pk}/")
    page.fill("input[name=d0-home-scope]", "2")
    page.fill("input[name=d0-home-carte]", "1")
    page.fill("input[name=d0-away-denari]", "1")
    page.fill("input[name=d1-away-scope]", "1")
    with page.expect_navigation():
        page.locator("button[name=action][value=save]").click()
    assert page.locator(".msg-success").first.is_visible(), page.locator("main").inner_text()
    on_desk = {(r.board, r.ns_points, r.ew_points) for r in duplicate.board_results(board_set)}
    assert on_desk == {(1, 3, 1), (2, 0, 1)}

    # every other table plays (entered through the results service, as one batch)
    others = Match.objects.filter(round__stage=stage).exclude(pk=first.pk)
    points = {
        m.pk: (m.table_number % 4, m.round.number % 3) for m in others.select_related("round")
    }
    with transaction.atomic(), results.written_together() as batch:
        held = results.lock_matches(points)
        batch.preload(held.values())
        for pk, (home, away) in points.items():
            with batch.writing(held, pk) as locked:
                results.save_result(locked, deals((home, 1), (1, away)))
    assert duplicate.open_boards(board_set) == set(range(1, 25))
    assert export.build_document(tournament)["stages"][0]["duplicate"]["seed"] is None

    # the director rules board 2 of table 1, round 1 not played, North-South at fault
    page.goto(f"/desk/duplicato-24/match/{first.pk}/")
    ruling = page.locator("form[action$='/board-ruling/']")
    ruling.locator("select[name=board]").select_option("2")
    ruling.locator("select[name=kind]").select_option("not_played")
    ruling.locator("select[name=fault]").select_option("ns")
    ruling.locator("input[name=note]").fill("mazzo incompleto")
    with page.expect_navigation():
        ruling.locator("button[type=submit]").click()
    assert page.locator(".msg-success").first.is_visible(), page.locator("main").inner_text()
    assert page.locator(".board-rulings strong").count() == 1
    save_screenshot(page, "duplicate-03-ruling")
    two = {s.line: s for s in duplicate.scores(board_set) if s.board == 2}
    assert two[first.home_id].adjusted and two[first.home_id].score == Fraction(22 * 40, 100)

    # the public pages: the ranking per direction, a board's traveller, a line's boards
    page.goto(f"/t/duplicato-24/stage/{stage.pk}/")
    main = page.locator("main")
    assert main.locator("table.field").count() == 2  # North-South and East-West
    assert main.locator("table.field tbody tr").count() == 24
    save_screenshot(page, "duplicate-04-ranking")
    with page.expect_navigation():
        main.locator("p.boards a", has_text=re.compile(r"^2$")).click()
    assert page.locator("table.traveller tbody tr").count() == 12  # every table held board 2
    assert page.locator("table.traveller tbody tr").first.locator("abbr").count() == 1  # ruled
    # the other 11 tables are factored to the full top, said under the table
    assert "Neuberg" in page.locator("main").inner_text()
    save_screenshot(page, "duplicate-05-traveller")
    with page.expect_navigation():
        page.locator("table.traveller tbody tr").first.locator("td a").first.click()
    assert page.locator("table.line-boards tbody tr").count() == 24  # 12 rounds of 2 boards
    save_screenshot(page, "duplicate-06-line-boards")

    page.goto("/desk/duplicato-24/")
    row = page.locator("table.desk-stages tbody tr", has_text="Smazzate ripetute")
    row.locator("input[name=confirm]").check()
    with page.expect_navigation():
        row.locator("form[action$='/close/'] button[type=submit]").click()
    assert page.locator(".msg-success").first.is_visible(), page.locator("main").inner_text()
    closed = BoardSet.objects.get(stage=stage)
    assert export.build_document(tournament)["stages"][0]["duplicate"]["seed"] == closed.seed
    totals = scoring.totals(duplicate.scores(closed))
    assert len(totals) == 24 and all(t.top == 12 * 2 * 22 for t in totals.values())
