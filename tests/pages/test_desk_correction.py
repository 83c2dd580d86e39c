"""Correcting a recorded result on the desk starts from the version's deals and
replaces them whole, even when the correction ends the match sooner than the record did."""

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tests.pages.factories import add_verified_record, build_tournament
from tournaments.models import Match
from tournaments.services import results

pytestmark = pytest.mark.django_db


def _form_data(page):
    """What a browser posts back from the desk's result form, unchanged."""
    data = {}
    for tag in re.findall(r"<input[^>]*>", page):
        name = re.search(r'name="([^"]+)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name is None or value is None:
            continue
        if ('type="checkbox"' in tag or 'type="radio"' in tag) and " checked" not in tag:
            continue
        data[name.group(1)] = value.group(1)
    for select in re.finditer(r'<select[^>]*name="([^"]+)"[^>]*>(.*?)</select>', page, re.S):
        chosen = re.search(r'<option value="([^"]*)"[^>]*selected', select.group(2))
        data[select.group(1)] = chosen.group(1) if chosen else ""
    return data


def test_a_correction_that_ends_the_match_sooner_is_saved_without_clearing_rows(client):
    tournament = build_tournament(4, slug="correzione", play=False, knockout=False)
    user = User.objects.create_user("direttore", password="x-pass-12345")
    tournament.organizers.add(user)
    client.force_login(user)
    match = Match.objects.filter(round__stage__tournament=tournament).order_by("pk")[2]
    add_verified_record(match, seed=2)
    record = results.in_force(match)
    url = reverse("desk:match", args=[tournament.slug, match.pk])
    data = _form_data(client.get(url).content.decode())
    # one more scopa for home in the first deal: the match is now over before the record's end
    data["d0-home-scope"] = str(int(data.get("d0-home-scope") or 0) + 1)
    data["d0-home-points"] = str(int(data["d0-home-points"]) + 1)
    data.update(action="save", reason="una scopa non contata")
    response = client.post(url, data, follow=True)
    assert response.status_code == 200
    corrected = results.in_force(match)
    assert corrected.number == record.number + 1
    assert len(corrected.sheet["deals"]) < len(record.sheet["deals"])
    assert "del risultato precedente" in response.content.decode()  # the desk says so


def test_deleting_a_result_is_a_secondary_action_asked_once_more(client):
    """Before, "Cancella il risultato" looked as harmless as "Salva il risultato" and deleted
    at once."""
    tournament = build_tournament(4, slug="cancella", play=False, knockout=False)
    user = User.objects.create_user("direttore", password="x-pass-12345")
    tournament.organizers.add(user)
    client.force_login(user)
    match = Match.objects.filter(round__stage__tournament=tournament).order_by("pk").first()
    results.enter_result(match, [{"points": [11, 0], "breakdown": [{"scope": 11}, {}]}])
    url = reverse("desk:match", args=[tournament.slug, match.pk])
    page = client.get(url).content.decode()
    delete_button = re.search(r'<button[^>]*value="delete"[^>]*>', page).group(0)
    save_button = re.search(r'<button[^>]*value="save"[^>]*>', page).group(0)
    assert 'class="secondary"' in delete_button and "secondary" not in save_button
    asked = client.post(url, {"action": "delete", "based_on": "1", "reason": "tavolo sbagliato"})
    assert asked.status_code == 200
    assert results.in_force(match).sheet is not None  # nothing deleted yet
    html = asked.content.decode()
    assert 'name="confirm_delete"' in html and "tavolo sbagliato" in html
    done = client.post(
        url,
        {"action": "delete", "based_on": "1", "reason": "tavolo sbagliato", "confirm_delete": "1"},
    )
    assert done.status_code == 302
    assert results.in_force(match).sheet is None


def test_a_lines_timeout_and_the_matchs_time_limit_are_told_apart(client):
    """Before, "Esito: Tempo scaduto" (a line's clock ran out) and the "tempo scaduto" box (the
    match's time ran out) said the same for two different things."""
    from tournaments.models import Tournament

    tournament = build_tournament(4, slug="a-tempo", play=False, knockout=False)
    Tournament.objects.filter(pk=tournament.pk).update(time_limit_s=3600)
    user = User.objects.create_user("direttore", password="x-pass-12345")
    tournament.organizers.add(user)
    client.force_login(user)
    match = Match.objects.filter(round__stage__tournament=tournament).order_by("pk").first()
    html = client.get(reverse("desk:match", args=[tournament.slug, match.pk])).content.decode()
    outcome = re.search(r'<option value="timeout"[^>]*>([^<]*)</option>', html).group(1)
    box = re.search(r'name="time_expired"[^>]*>([^<]*)</label>', html).group(1)
    assert outcome.strip() == "Fuori tempo"
    assert "tempo limite dell'incontro" in box.replace("&#x27;", "'")
    assert "scadut" not in outcome.lower() + box.lower()


def test_the_third_place_match_is_not_listed_as_the_final(client):
    """The third-place match shares the final's round and was listed under "Finale"
    (bracket page, round page, its table card)."""
    from tests.pages.factories import play_stage
    from tournaments.models import Stage
    from tournaments.services import schedule

    tournament = build_tournament(8, slug="podio", groups=2)
    schedule.close_stage(tournament.stages.get(order=1), per_group=2)
    knockout = tournament.stages.get(order=2)
    play_stage(knockout)  # the semi-finals; the final and the third-place match get their lines
    third = Match.objects.get(round__stage=knockout, is_third_place=True)
    final = Match.objects.get(round=third.round, is_third_place=False)
    assert knockout.kind == Stage.Kind.KNOCKOUT
    user = User.objects.create_user("direttore", password="x-pass-12345")
    tournament.organizers.add(user)
    client.force_login(user)

    def caption_of(html, match):
        at = html.rindex(f"/match/{match.pk}/")
        return re.findall(r"<caption>([^<]*)</caption>", html[:at])[-1]

    for url in (
        reverse("public:stage", args=[tournament.slug, knockout.pk]),
        reverse("public:round", args=[tournament.slug, third.round_id]),
    ):
        html = client.get(url).content.decode()
        assert caption_of(html, third) == "Finale per il terzo posto", url
        assert caption_of(html, final) == "Finale", url
    cards = client.get(reverse("desk:print", args=[tournament.slug, third.round_id]))
    text = cards.content.decode()
    assert text.count("Finale per il terzo posto") >= 1


def test_a_match_won_on_the_last_capture_says_who_won_and_why(client):
    """12–12 and VP 10–10 were shown without saying who won and why."""
    from tests.tournaments.conftest import KO, make_tournament
    from tests.tournaments.helpers import deal, deals
    from tournaments.services import schedule

    tournament = make_tournament("scopa-tre-smazzate", n_lines=2, stages=[KO], is_public=True)
    stage = tournament.stages.get()
    schedule.generate_knockout(stage, [e.line for e in tournament.entries.order_by("seed")])
    match = Match.objects.get(round__stage=stage)
    level = [*deals((4, 1), (1, 4), (2, 2)), *[deal(2, 2, tiebreak=True) for _ in range(2)]]
    results.enter_result(match, [*level, deal(1, 1, tiebreak=True, last_capture=0)])
    match.refresh_from_db()
    assert match.winner_id == match.away_id
    why = f"Vince {match.away.name}: il terzo spareggio è finito in parità e l'ultima presa"
    html = client.get(reverse("public:match", args=[tournament.slug, match.pk])).content.decode()
    assert why in html.replace("&#x27;", "'")
    stage_page = client.get(reverse("public:round", args=[tournament.slug, match.round_id]))
    assert "deciso dall'ultima presa del terzo spareggio" in stage_page.content.decode()
    # the desk's sentence after saving the result says it too
    from django.utils import translation

    from desk.views.tournament import _summary

    with translation.override("it"):
        assert why in _summary(Match.objects.prefetch_related("results").get(pk=match.pk))
