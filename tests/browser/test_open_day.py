"""The 48-line open day of issues 33 and 34, run from the desk alone in headless Chromium: the
wizard's open-day format (three Mitchell rounds, three Danish rounds, a knock-out of eight), 48
lines imported from a CSV file with two categories, places kept for them, a prize list,
check-in with absentees, movement cards and slips, the combined ranking, the knock-out seeded
from it, and the podium with its prizes. No admin URL, no shell, no API call.

Results: every Mitchell and Danish table's slip is typed in the desk's page for the round
(*Inserisci i risultati del turno*, ``_type_round``), one text box a table, and one result in
the desk's one-match form; every knock-out result is typed in the one-match form. No result is
written through a service.

Each step saves a screenshot (``SAVE_SCREENSHOTS=1``) that ``docs/organizer-guide.md`` shows.
"""

import re

import pytest
from django.contrib.auth.models import Permission, User
from django.utils.translation import gettext, override

from tests.browser.conftest import cache_static, save_screenshot
from tournaments.models import Category, Entry, Match, Tournament

pytestmark = pytest.mark.browser

_NAMES = (
    "Rossi, Russo, Ferrari, Esposito, Bianchi, Romano, Colombo, Ricci, Marino, Greco, "
    "Bruno, Gallo, Conti, De Luca, Mancini, Costa, Giordano, Rizzo, Lombardi, Moretti, "
    "Barbieri, Fontana, Santoro, Mariani, Rinaldi, Caruso, Ferrara, Galli, Martini, Leone, "
    "Longo, Gentile, Martinelli, Vitale, Lombardo, Serra, Coppola, De Santis, D'Angelo, "
    "Marchetti, Parisi, Villa, Conte, Ferraro, Ferri, Fabbri, Bianco, Marini, Grasso, "
    "Valentini, Messina, Sala, De Angelis, Gatti, Pellegrini, Palumbo, Sanna, Farina, "
    "Rizzi, Monti, Cattaneo, Morelli, Amato, Silvestri, Mazza, Testa, Grassi, Pellegrino, "
    "Carbone, Giuliani, Benedetti, Barone, Rossetti, Caputo, Montanari, Guerra, Palmieri, "
    "Bernardi, Martino, Fiore, De Rosa, Ferretti, Bellini, Basile, Riva, Donati, Piras, "
    "Vitali, Battaglia, Sartori, Neri, Costantini, Milani, Pagano, Ruggiero, Sorrentino, "
    "D'Amico, Orlando, Esposti, Negri"
)
SURNAMES = [name.strip() for name in _NAMES.split(",")]
CLUBS = ("Circolo Aurora", "Circolo del Porto", "Dopolavoro Ferroviario", "Bar Sport")
# seeds (1-based, the CSV's order) of the lines in each category
DONNE = {4, 9, 13, 20, 27, 33, 38, 45}
OVER_63 = {6, 15, 22, 30, 41, 47}
ABSENT = {11, 26, 40}  # seeds of the lines that do not show up


def _line_name(seed):
    return f"{SURNAMES[2 * seed - 2]} – {SURNAMES[2 * seed - 1]}"


def _csv():
    rows = ["linea;giocatore 1;giocatore 2;circolo;categoria"]
    for seed in range(1, 49):
        first, second = _line_name(seed).split(" – ")
        category = "Donne" if seed in DONNE else "Over 63" if seed in OVER_63 else ""
        rows.append(f"{_line_name(seed)};{first} A.;{second} B.;{CLUBS[seed % 4]};{category}")
    return "\n".join(rows) + "\n"


def _category(name):
    seed = next(s for s in range(1, 49) if _line_name(s) == name)
    return "Donne" if seed in DONNE else "Over 63" if seed in OVER_63 else ""


def _it(text):
    """The Italian label of ``text``, as the page (locale it-IT) shows it."""
    with override("it"):
        return gettext(text)


def _click(page, role, text):
    """Click the button or link labelled ``text`` (in Italian) and wait for the next page."""
    with page.expect_navigation():
        page.get_by_role(role, name=_it(text), exact=True).first.click()


def _ok(page):
    assert page.locator(".msg-success").first.is_visible(), page.locator("main").inner_text()


def _fill_all(page, tag, values):
    """What ``page.fill`` does (the value set, then an ``input`` event), for every field of
    ``values`` (name: text) in one call: one call a field took seconds over the day. No
    ``change`` event, so the one-match form's check-as-you-type (htmx) is not sent meanwhile."""
    filled = page.evaluate(
        """([tag, values]) => Object.entries(values).filter(([name, text]) => {
            const field = document.querySelector(`${tag}[name="${name}"]`);
            if (!field) return false;
            field.value = text;
            field.dispatchEvent(new Event("input", {bubbles: true}));
            return true;
        }).length""",
        [tag, values],
    )
    assert filled == len(values), f"{len(values) - filled} fields not on the page"


def type_result(page, *, winner="home", loser_scope=2):
    """Fill the desk's result form with one deal to 11, won by ``winner``, and save."""
    loser = "away" if winner == "home" else "home"
    cells = {f"d0-{winner}-scope": "7", f"d0-{loser}-scope": str(loser_scope)}
    cells.update({f"d0-{winner}-{c}": "1" for c in ("carte", "denari", "settebello", "primiera")})
    _fill_all(page, "input", cells)
    with page.expect_navigation():
        page.locator("button[name=action][value=save]").click()
    _ok(page)


def _slip(winner_side, loser_scope):
    """One deal to 11 as the slip's row reads: the winner's 7 scope and the four points (carte,
    denari, settebello, primiera), the loser's scope; the first line's figures first."""
    winner, loser = "7 1 1 1 1", f"{loser_scope} 0 0 0 0"
    return f"{winner}   {loser}" if winner_side == 0 else f"{loser}   {winner}"


def _type_round(page, round_row, seeds, *, screenshot=None):
    """The round's slips typed in the desk's page for the round, one table a box: the better
    seed wins, by a margin that varies with the seeds (so VP and the ranking's tie-breaks vary
    too). One fill a box, then one save for the whole round."""
    slug = round_row.stage.tournament.slug
    url = f"/desk/{slug}/round/{round_row.pk}/results/"
    if not page.url.endswith(url):
        page.goto(url)
    matches = (
        Match.objects.filter(round=round_row, home__isnull=False, away__isnull=False)
        .exclude(status=Match.Status.DONE)
        .order_by("table_number")
    )
    slips = {}
    for match in matches:
        home, away = seeds[match.home_id], seeds[match.away_id]
        slips[f"t{match.pk}-deals"] = _slip(0 if home < away else 1, (home + away) % 9)
    _fill_all(page, "textarea", slips)
    if screenshot:
        save_screenshot(page, screenshot, region="main", height=720)
    with page.expect_navigation():
        page.get_by_role("button", name=_it("Save the results typed")).click()
    _ok(page)
    assert not matches.all().exists(), page.locator("main").inner_text()  # read again


def _seated_once(round_row, due):
    seated = [
        line
        for pair in Match.objects.filter(round=round_row).values_list("home_id", "away_id")
        for line in pair
        if line
    ]
    return sorted(seated) == sorted(due)


def _stage_row(page, kind_name):
    return page.locator("table.desk-stages tbody tr", has_text=kind_name)


def _on_desk(page, slug):
    """The tournament's desk page, loaded only if the browser is not on it already."""
    if not page.url.split("?")[0].endswith(f"/desk/{slug}/"):
        page.goto(f"/desk/{slug}/")


def _close(page, stage):
    _on_desk(page, stage.tournament.slug)
    row = _stage_row(page, stage.name)
    row.locator("input[name=confirm]").check()
    with page.expect_navigation():
        row.locator("form[action$='/close/'] button[type=submit]").click()
    _ok(page)


def _pair(page, stage):
    _on_desk(page, stage.tournament.slug)
    with page.expect_navigation():
        _stage_row(page, stage.name).locator("form[action$='/pair/'] button").click()
    _ok(page)
    return stage.rounds.order_by("-number").first()


def _type_in_page(page, match, **kwargs):
    page.goto(f"/desk/{match.round.stage.tournament.slug}/match/{match.pk}/")
    type_result(page, **kwargs)


def test_a_48_line_open_day_from_the_wizard_to_the_prizes(page_factory, tmp_path):
    organizer = User.objects.create_user("direttrice", password="giornata-4321")
    organizer.user_permissions.add(Permission.objects.get(codename="add_tournament"))
    page = cache_static(page_factory())
    visited = []
    page.on("request", lambda request: visited.append(request.url))

    # 1. log in on the desk
    page.goto("/desk/login/?next=/desk/")
    page.fill("#id_username", "direttrice")
    page.fill("#id_password", "giornata-4321")
    _click(page, "button", "Log in")
    save_screenshot(page, "guide-01-desk-home")

    # 2. the wizard: pairs to 11, the open-day format
    _click(page, "link", "New tournament")
    page.select_option("#preset-pick", "scopa-coppie-11")
    _click(page, "button", "Use these rules")
    page.fill("#id_name", "Open di Scopa a coppie")
    page.fill("#id_start_date", "2026-06-13")
    page.fill("#id_venue", "Circolo Scopa, Napoli")
    page.fill("#id_time_limit_min", "40")
    page.select_option("#id_format", "open")
    page.fill("#id_mitchell_rounds", "3")
    page.fill("#id_danish_rounds", "3")
    page.select_option("#id_knockout_size", "8")
    page.check("#id_third_place_match")
    save_screenshot(page, "guide-02-wizard", region="fieldset:has(#id_format)")
    _click(page, "button", "Create the tournament")
    tournament = Tournament.objects.get(name="Open di Scopa a coppie")
    slug = tournament.slug
    mitchell, danish, knockout = tournament.stages.order_by("order")
    assert [mitchell.kind, danish.kind, knockout.kind] == ["mitchell", "danish", "knockout"]

    # 3. the 48 lines from a CSV file, with their categories
    csv_file = tmp_path / "iscritti.csv"
    csv_file.write_text(_csv(), encoding="utf-8")
    page.set_input_files("#id_file", str(csv_file))
    with page.expect_navigation():
        page.get_by_role("button", name=re.compile("^(Import|Importa)$")).click()
    assert tournament.entries.count() == 48
    seeds = dict(Entry.objects.filter(tournament=tournament).values_list("line_id", "seed"))
    line_of = {seed: line for line, seed in seeds.items()}
    save_screenshot(page, "guide-03-lines", height=560)

    # 4. the stages of the day; two places of the knock-out kept for women, one for over 63
    page.goto(f"/desk/{slug}/stages/")
    with page.expect_navigation():
        page.locator(f"#stage-{danish.pk}").get_by_role("link", name=_it("Change…")).click()
    page.fill("#id_category_places", "Donne: 2\nOver 63: 1")
    _click(page, "button", "Save")
    save_screenshot(page, "guide-04-stages", region="ol.stage-sequence")

    # 5. the prize list, kept on the podium page: overall and per category
    prize_list = [
        ("", 1, 500, "Primi assoluti"),
        ("", 2, 300, "Secondi assoluti"),
        ("", 3, 200, "Terzi assoluti"),
        ("Donne", 1, 150, "Prima coppia Donne"),
        ("Over 63", 1, 120, "Prima coppia Over 63"),
    ]
    page.goto(f"/desk/{slug}/podium/")
    for category, place, value, label in prize_list:
        page.fill("#id_category", category)
        page.fill("#id_place", str(place))
        page.fill("#id_value", str(value))
        page.fill("#id_label", label)
        _click(page, "button", "Add the prize")
    assert tournament.prizes.count() == 5

    # 6. check-in: everyone ticked but the three absentees
    page.goto(f"/desk/{slug}/check-in/")
    # the boxes of the pairs present, ticked as they arrive (in one go here); the absentees not
    page.locator("input[name=present]").evaluate_all(
        "boxes => boxes.forEach(b => b.checked = true)"
    )
    for seed in ABSENT:
        page.uncheck(f"#present-{line_of[seed]}")
    _click(page, "button", "Save the check-in")
    present = [line for seed, line in line_of.items() if seed not in ABSENT]
    assert Entry.objects.filter(tournament=tournament, checked_in=True).count() == 45

    # 7. Mitchell: three rounds; the movement cards, the slips, the pairings and the projector
    for number in (1, 2, 3):
        round_row = _pair(page, mitchell)
        assert _seated_once(round_row, present), f"Mitchell round {number}"
        if number == 1:
            page.goto(f"/desk/{slug}/stage/{mitchell.pk}/movement/")
            assert page.locator("section.movement-card").count() == 45
            save_screenshot(page, "guide-05-movement-cards", region="section.movement-card")
            page.goto(f"/desk/{slug}/round/{round_row.pk}/print/")
            assert page.locator(".tc-bye").count() == 1  # 45 lines: one sits out
            page.goto(f"/desk/{slug}/round/{round_row.pk}/sheet/")
            save_screenshot(page, "guide-06-pairings", height=640)
            page.goto(f"/desk/{slug}/round/{round_row.pk}/projector/")
            if page.locator("button[value=start]").count():
                with page.expect_navigation():
                    page.locator("button[value=start]").click()
            save_screenshot(page, "guide-07-projector", height=640)
            # a result typed at the desk, from the list of missing results
            page.goto(f"/desk/{slug}/")
            _click(page, "link", "Enter result")
            save_screenshot(page, "guide-08-result", height=900)
            type_result(page)
            # the other slips of the round, typed in the round's page from the desk
            page.goto(f"/desk/{slug}/")
            with page.expect_navigation():
                _stage_row(page, mitchell.name).get_by_role(
                    "link", name=_it("enter results")
                ).first.click()
            _type_round(page, round_row, seeds, screenshot="guide-08b-round-results")
        else:
            _type_round(page, round_row, seeds)
    _close(page, mitchell)

    # 8. Danish: three rounds paired on the combined ranking
    for number in (1, 2, 3):
        round_row = _pair(page, danish)
        assert _seated_once(round_row, present), f"Danish round {number}"
        _type_round(page, round_row, seeds)

    # 9. the combined ranking, as the public page shows it; the knock-out is seeded from it
    page.goto(f"/desk/{slug}/")
    with page.expect_navigation():
        _stage_row(page, danish.name).get_by_role("link", name=_it("ranking")).click()
    rows = page.locator("section.qualifying-ranking table tbody tr")
    ranking = [rows.nth(i).locator("th").inner_text().strip() for i in range(rows.count())]
    qualified = [
        rows.nth(i).locator("th").inner_text().strip()
        for i in range(rows.count())
        if "qualified" in (rows.nth(i).get_attribute("class") or "")
    ]
    assert len(ranking) == 45 and len(qualified) == 8
    assert sum(_category(name) == "Donne" for name in qualified) >= 2
    assert sum(_category(name) == "Over 63" for name in qualified) >= 1
    save_screenshot(page, "guide-09-ranking", region="section.qualifying-ranking", height=720)
    _close(page, danish)
    first_round = Match.objects.filter(round__stage=knockout, round__number=1)
    drawn = {
        frozenset((m.home.name, m.away.name)) for m in first_round.select_related("home", "away")
    }
    seeded = qualified  # in the order of the combined ranking
    assert drawn == {
        frozenset((seeded[a], seeded[b])) for a, b in ((0, 7), (3, 4), (1, 6), (2, 5))
    }, "the bracket: 1st–8th, 4th–5th, 2nd–7th, 3rd–6th of the combined ranking"

    # 10. the knock-out: the best-ranked Donne line wins it all; the other lines of a category
    # lose every match; otherwise the better-ranked line wins. Each result is typed in the
    # match's page (a knock-out match may need tie-break deals, so it has no round page).
    champion = next(name for name in qualified if _category(name) == "Donne")

    def strength(name):
        return (name != champion, _category(name) != "", qualified.index(name))

    while True:
        match = (
            Match.objects.filter(round__stage=knockout, home__isnull=False, away__isnull=False)
            .exclude(status=Match.Status.DONE)
            .select_related("home", "away", "round__stage__tournament")
            .order_by("round__number", "table_number", "id")
            .first()
        )
        if match is None:
            break
        home_wins = strength(match.home.name) < strength(match.away.name)
        _type_in_page(page, match, winner="home" if home_wins else "away")
    _close(page, knockout)
    save_screenshot(page, "guide-10-closed", region="table.desk-stages")
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED

    # 11. the podium and the prizes
    page.goto(f"/desk/{slug}/")
    _click(page, "link", "Podium and final standings")
    final = [
        (int(rank), name.strip())
        for rank, name in page.locator("table.final-standings tbody tr").evaluate_all(
            "rows => rows.map(r => [r.cells[0].innerText, r.cells[1].innerText])"
        )
    ]
    handed = [
        (label.strip(), winner.strip())
        for label, winner in page.locator("table.prizes tbody tr").evaluate_all(
            "rows => rows.map(r => [r.cells[0].innerText, r.cells[r.cells.length - 1].innerText])"
        )
    ]
    save_screenshot(page, "guide-11-podium", region="main", height=760)
    save_screenshot(page, "guide-12-prizes", region="table.prizes")
    # every line that played is placed: the bracket's eight, then the others as the combined
    # ranking that qualified them
    assert len(final) == 45
    assert [name for _rank, name in final[8:]] == [n for n in ranking if n not in qualified]

    # Worked by hand from the standings the page shows. The champion is a Donne line: the
    # overall first prize (500) is worth more than the Donne prize (150), so she takes it, and
    # the Donne prize goes down to the next Donne line in the standings; a line takes one prize.
    places = [name for _rank, name in final]
    assert places[0] == champion and final[0][0] == 1
    assert [rank for rank, _name in final[:4]] == [1, 2, 3, 4]
    next_donne = next(n for n in places if _category(n) == "Donne" and n != champion)
    first_over_63 = next(n for n in places if _category(n) == "Over 63")
    assert handed == [
        ("Primi assoluti", champion),
        ("Secondi assoluti", places[1]),
        ("Terzi assoluti", places[2]),
        ("Prima coppia Donne", next_donne),
        ("Prima coppia Over 63", first_over_63),
    ]
    assert len({winner for _label, winner in handed}) == 5, "one prize per line"

    # the Donne ranking: the overall standings filtered to the category, places renumbered
    with page.expect_navigation():
        page.locator("nav.category-tabs").get_by_role(
            "link", name=_it(Category.WOMEN.label)
        ).click()
    donne = page.locator("table.final-standings tbody tr th")
    assert donne.first.inner_text().strip() == champion
    assert page.locator("table.final-standings tbody tr td.num").first.inner_text() == "1"

    assert not [url for url in visited if "/admin/" in url], "the desk alone runs the day"
    assert not [url for url in visited if "/api/" in url], "no API call by hand"
