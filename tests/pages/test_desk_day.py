"""The organizer's day on the desk: wizard, lines, withdrawals, stage lifecycle, rounds."""

import datetime

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from tests.pages.factories import build_tournament, play_stage, winning_deals
from tournaments.models import ChangeLog, Entry, Match, Outcome, Stage, Tournament
from tournaments.services import results, schedule

pytestmark = pytest.mark.django_db


@pytest.fixture
def organizer():
    user = User.objects.create_user("organizzatrice", password="x-pass-12345")
    user.user_permissions.add(Permission.objects.get(codename="add_tournament"))
    return user


def _desk(tournament, organizer, client):
    tournament.organizers.add(organizer)
    client.force_login(organizer)
    return reverse("desk:tournament", args=[tournament.slug])


# --------------------------------------------------------------------------- wizard


def test_wizard_creates_a_pairs_valliadi_with_options_tiebreaks_and_stages(client, organizer):
    client.force_login(organizer)
    page = client.get(reverse("desk:new") + "?preset=valliadi-21-un-ora")
    assert page.status_code == 200
    form = page.context["form"]
    # the Valliadi plays pairs (seed 004: "la propria coppia")
    assert form.fields["seats_per_line"].initial == 2
    assert 'type="checkbox"' in page.content.decode()  # options are real fields, not JSON
    data = {
        "preset": "valliadi-21-un-ora",
        "name": "Valliadi di prova",
        "start_date": "2026-06-01",
        "venue": "Circolo, Torino",
        "is_public": "on",
        "seats_per_line": "2",
        "deck_style": "piemontesi",
        "time_limit_min": "60",
        "format": "groups_knockout",
        "third_place_match": "on",
        "option_rebello": "on",
        "option_primiera_missing_suit": "compare_present",
        "tiebreak_1": "head_to_head",
        "tiebreak_2": "mp",
        "tiebreak_3": "lots",
    }
    response = client.post(reverse("desk:new"), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    tournament = Tournament.objects.get(name="Valliadi di prova")
    assert tournament.seats_per_line == 2
    assert tournament.time_limit_s == 3600
    assert tournament.options["rebello"] is True
    assert tournament.options["primiera_missing_suit"] == "compare_present"
    assert tournament.tiebreaks == ["head_to_head", "mp", "lots"]
    assert [s.kind for s in tournament.stages.order_by("order")] == ["round_robin", "knockout"]
    assert tournament.organizers.filter(pk=organizer.pk).exists()
    assert tournament.status == Tournament.Status.DRAFT


def test_wizard_refuses_a_tiebreak_twice(client, organizer):
    client.force_login(organizer)
    data = {
        "preset": "scopa-classica-11",
        "name": "Doppio",
        "start_date": "2026-06-01",
        "seats_per_line": "1",
        "deck_style": "napoletane",
        "format": "groups",
        "tiebreak_1": "mp",
        "tiebreak_2": "mp",
    }
    response = client.post(reverse("desk:new"), data)
    assert response.status_code == 200
    assert not Tournament.objects.filter(name="Doppio").exists()


def test_wizard_needs_the_right_to_create(client):
    User.objects.create_user("curioso", password="x-pass-12345")
    client.login(username="curioso", password="x-pass-12345")
    assert client.get(reverse("desk:new")).status_code == 404


# --------------------------------------------------------------------------- lines


def _empty_tournament(organizer, seats=1):
    from tournaments.services.presets import create_tournament_from_preset

    preset = "scopa-coppie-11" if seats == 2 else "scopa-classica-11"
    return create_tournament_from_preset(
        preset,
        name="Righe",
        start_date=datetime.date(2026, 6, 1),
        user=organizer,
        stages=[{"name": "Gironi", "kind": "round_robin"}],
    )


def test_lines_pasted_from_a_spreadsheet_added_and_edited(client, organizer):
    tournament = _empty_tournament(organizer, seats=2)
    client.force_login(organizer)
    pasted = "Coppia A\tAnna\tBruno\nCoppia B\tCarla\tDario\n"
    response = client.post(reverse("desk:import-lines", args=[tournament.slug]), {"pasted": pasted})
    assert response.status_code == 302
    assert Entry.objects.filter(tournament=tournament).count() == 2
    response = client.post(
        reverse("desk:add-line", args=[tournament.slug]),
        {"name": "Coppia C", "player1": "Elena", "player2": "Fabio"},
    )
    assert response.status_code == 302
    entry = Entry.objects.get(tournament=tournament, line__name="Coppia C")
    url = reverse("desk:edit-line", args=[tournament.slug, entry.line_id])
    response = client.post(
        url, {"name": "Coppia Ci", "seed": "9", "player1": "Elena R.", "player2": "Fabio"}
    )
    assert response.status_code == 302
    entry.refresh_from_db()
    assert entry.line.name == "Coppia Ci" and entry.seed == 9
    assert entry.line.members.get(position=0).player.name == "Elena R."
    page = client.get(reverse("desk:lines", args=[tournament.slug])).content.decode()
    assert "Coppia Ci" in page


def test_csv_import_with_errors_stores_nothing(client, organizer):
    from django.core.files.uploadedfile import SimpleUploadedFile

    tournament = _empty_tournament(organizer)
    client.force_login(organizer)
    upload = SimpleUploadedFile("righe.csv", b"line,player 1\nUno,Anna\nUno,Bruno\n")
    response = client.post(reverse("desk:import-lines", args=[tournament.slug]), {"file": upload})
    assert response.status_code == 400
    assert not Entry.objects.filter(tournament=tournament).exists()


def test_withdrawal_from_the_desk_gives_forfeits_and_a_badge(client, organizer):
    tournament = build_tournament(4, slug="ritiri", play=False)
    _desk(tournament, organizer, client)
    play_stage(tournament.stages.get(order=1), limit=1)
    entry = Entry.objects.filter(tournament=tournament).order_by("seed").last()
    url = reverse("desk:withdraw", args=[tournament.slug, entry.line_id])
    confirm = client.get(url)
    assert confirm.status_code == 200 and len(confirm.context["pending"]) >= 2
    assert client.post(url, {"action": "withdraw"}).status_code == 302
    forfeits = Match.objects.filter(offender=entry.line, outcome=Outcome.FORFEIT)
    assert forfeits.count() == len(confirm.context["pending"])
    home = client.get(reverse("public:tournament", args=[tournament.slug])).content.decode()
    stage = tournament.stages.get(order=1)
    standings = client.get(reverse("public:stage", args=[tournament.slug, stage.pk]))
    assert "badge-withdrawn" in standings.content.decode() or "badge-withdrawn" in home


# --------------------------------------------------------------------------- stages


def _closed_groups_with_knockout():
    tournament = build_tournament(8, slug="fasi", groups=2)
    groups_stage = tournament.stages.get(order=1)
    schedule.close_stage(groups_stage, per_group=2)
    return tournament, groups_stage, tournament.stages.get(order=2)


def test_close_needs_the_confirm_control_and_says_reopening_is_possible(client, organizer):
    tournament = build_tournament(4, slug="chiudi")
    desk = _desk(tournament, organizer, client)
    page = client.get(desk).content.decode()
    assert "cannot be undone" not in page and "non può essere annullat" not in page
    assert 'name="confirm"' in page
    stage = tournament.stages.get(order=1)
    close = reverse("desk:close", args=[tournament.slug, stage.pk])
    client.post(close, {"per_group": "2"})
    stage.refresh_from_db()
    assert stage.status != Stage.Status.CLOSED
    client.post(close, {"per_group": "2", "confirm": "1"})
    stage.refresh_from_db()
    assert stage.status == Stage.Status.CLOSED


def test_reopen_from_the_desk_shows_dependents_and_close_again_works(client, organizer):
    tournament, groups_stage, knockout = _closed_groups_with_knockout()
    desk = _desk(tournament, organizer, client)
    semi = Match.objects.filter(round__stage=knockout, round__number=1).first()
    results.enter_result(semi, winning_deals(0, 4))
    assert (
        reverse("desk:reopen", args=[tournament.slug, groups_stage.pk])
        in client.get(desk).content.decode()
    )
    url = reverse("desk:reopen", args=[tournament.slug, groups_stage.pk])
    page = client.get(url)
    assert page.status_code == 200
    assert semi.home.name in page.content.decode()
    assert len(page.context["deps"].played) == 1
    assert client.post(url).status_code == 302
    groups_stage.refresh_from_db()
    assert groups_stage.status == Stage.Status.RUNNING
    close = reverse("desk:close", args=[tournament.slug, groups_stage.pk])
    response = client.post(close, {"per_group": "2", "confirm": "1"}, follow=True)
    groups_stage.refresh_from_db()
    assert groups_stage.status == Stage.Status.CLOSED
    assert "confirm to regenerate" not in response.content.decode()


def test_changed_qualifiers_are_marked_on_the_desk_and_reseeded_on_request(client, organizer):
    from tests.tournaments.test_lifecycle import _swap_second_and_third
    from tournaments.services import lifecycle

    tournament, groups_stage, knockout = _closed_groups_with_knockout()
    desk = _desk(tournament, organizer, client)
    lifecycle.reopen_stage(groups_stage)
    _second, third = _swap_second_and_third(groups_stage)
    page = client.get(desk)
    html = page.content.decode()
    assert page.context["drifts"], "the bracket keeps the old qualifier silently"
    assert third.name in html and 'value="reseed"' in html
    client.post(
        reverse("desk:drift", args=[tournament.slug, groups_stage.pk]), {"action": "reseed"}
    )
    first = Match.objects.filter(round__stage=knockout, round__number=1)
    assert first.filter(home=third).exists() or first.filter(away=third).exists()
    assert ChangeLog.objects.filter(action="bracket.reseeded").exists()
    assert not client.get(desk).context["drifts"]


def test_desk_does_not_claim_every_result_is_in_before_any_round(client, organizer):
    tournament = _empty_tournament(organizer)
    client.force_login(organizer)
    html = client.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
    assert "Every match with two lines has a result" not in html
    assert "Ogni incontro" not in html


def test_tournament_status_on_the_pages_follows_the_stages(client, organizer):
    tournament = build_tournament(4, slug="finito", knockout=False, status=Tournament.Status.DRAFT)
    desk = _desk(tournament, organizer, client)
    stage = tournament.stages.get(order=1)
    client.post(reverse("desk:close", args=[tournament.slug, stage.pk]), {"confirm": "1"})
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    html = client.get(desk).content.decode()
    assert "status-finished" in html


# --------------------------------------------------------------------------- rounds and podium


def test_pairings_sheet_projector_and_podium(client, organizer):
    tournament = build_tournament(4, slug="sala", play=False, knockout=False)
    tournament.time_limit_s = 3600
    tournament.save()
    _desk(tournament, organizer, client)
    round_ = tournament.stages.get(order=1).rounds.order_by("number").first()
    sheet = client.get(reverse("desk:sheet", args=[tournament.slug, round_.pk]))
    assert sheet.status_code == 200
    html = sheet.content.decode()
    assert "<script>" not in html and "onclick" not in html
    tables = [m.table_number for m in sheet.context["matches"] if m.table_number]
    assert tables == sorted(tables)
    url = reverse("desk:projector", args=[tournament.slug, round_.pk])
    assert 'value="start"' in client.get(url).content.decode()
    client.post(url, {"action": "start"})
    round_.refresh_from_db()
    assert round_.starts_at is not None
    assert "data-clock" in client.get(url).content.decode()
    fragment = client.get(url, HTTP_HX_REQUEST="true")
    assert "<html" not in fragment.content.decode()
    play_stage(tournament.stages.get(order=1))
    assert client.get(url).context["complete"]
    schedule.close_stage(tournament.stages.get(order=1))
    podium = client.get(reverse("desk:podium", args=[tournament.slug]))
    assert podium.status_code == 200
    assert podium.context["finished"] and len(podium.context["podium"].top) >= 3
    assert reverse("export:tournament-json", args=[tournament.slug]) in podium.content.decode()


# --------------------------------------------------------------------------- ordering and labels


def test_line_page_lists_matches_by_stage_then_round_newest_first(client):
    tournament = build_tournament(4, slug="ordine", groups=1)
    groups_stage, knockout = tournament.stages.order_by("order")
    schedule.close_stage(groups_stage, per_group=2)
    play_stage(knockout)
    play_stage(knockout)
    final = Match.objects.get(round__stage=knockout, next_match=None, is_third_place=False)
    page = client.get(reverse("public:line", args=[final.winner_id]))
    rounds = [(r.match.round.stage.order, r.match.round.number) for r in page.context["results"]]
    assert rounds == sorted(rounds, reverse=True), rounds


def test_third_place_match_is_labelled_as_such(client):
    tournament = build_tournament(8, slug="terzo", groups=2)
    groups_stage, knockout = tournament.stages.order_by("order")
    schedule.close_stage(groups_stage, per_group=2)
    play_stage(knockout)
    play_stage(knockout)
    third = Match.objects.get(round__stage=knockout, is_third_place=True)
    html = client.get(reverse("public:line", args=[third.home_id])).content.decode()
    final_name = str(third.round)
    assert f"{final_name}</a>" not in html.replace(f"– {final_name}</a>", "")
    assert str(third.round_label) in html
    page = client.get(reverse("public:match", args=[tournament.slug, third.pk])).content.decode()
    assert str(third.round_label) in page


def test_standings_csv_names_the_last_stage_not_final_in_english(client):
    from tournaments.services.export import build_document, standings_csv

    tournament = build_tournament(4, slug="csv", groups=1)
    groups_stage, knockout = tournament.stages.order_by("order")
    schedule.close_stage(groups_stage, per_group=2)
    play_stage(knockout)
    play_stage(knockout)
    text = standings_csv(build_document(tournament)).decode()
    assert "\nfinal," not in text
    assert knockout.name in text


def test_new_desk_pages_pass_the_accessibility_checks(client, organizer):
    from tests.pages.test_accessibility import audit

    tournament = build_tournament(4, slug="audit", play=False)
    _desk(tournament, organizer, client)
    round_ = tournament.stages.get(order=1).rounds.first()
    line = tournament.entries.first().line
    urls = [
        reverse("desk:new"),
        reverse("desk:lines", args=[tournament.slug]),
        reverse("desk:edit-line", args=[tournament.slug, line.pk]),
        reverse("desk:withdraw", args=[tournament.slug, line.pk]),
        reverse("desk:sheet", args=[tournament.slug, round_.pk]),
        reverse("desk:projector", args=[tournament.slug, round_.pk]),
        reverse("desk:podium", args=[tournament.slug]),
    ]
    for url in urls:
        assert audit(client.get(url).content.decode()) == [], url


def test_the_reseed_table_heads_the_bracket_as_drawn_in_words_that_fit(client, organizer):
    """The column of the bracket as drawn was headed "Pareggiati" (drawn matches)."""
    from tests.tournaments.test_lifecycle import _swap_second_and_third
    from tournaments.services import lifecycle

    tournament, groups_stage, _knockout = _closed_groups_with_knockout()
    desk = _desk(tournament, organizer, client)
    lifecycle.reopen_stage(groups_stage)
    _swap_second_and_third(groups_stage)
    html = client.get(desk).content.decode()
    table = html[html.index('class="drift-table"') : html.index("</table>", html.index("drift"))]
    assert "Pareggiati" not in table
    assert "In tabellone" in table


def test_the_wizard_calls_the_criteria_for_lines_level_on_vp_by_their_name(client, organizer):
    """The wizard's "Spareggi" section held the ranking criteria, while "spareggi"
    are the tie-break deals of a knock-out match."""
    client.force_login(organizer)
    html = client.get(reverse("desk:new") + "?preset=scopa-classica-11").content.decode()
    assert "<legend>Criteri di classifica a pari punti</legend>" in html
    assert "<legend>Spareggi</legend>" not in html
