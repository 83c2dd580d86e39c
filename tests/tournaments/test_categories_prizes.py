"""Categories and prizes: stored, imported, ranked per category, handed out, exported, shown."""

import io
import json

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tests.pages.factories import build_tournament, play_stage
from tournaments import selectors as sel
from tournaments.exceptions import PrizeError
from tournaments.models import (
    Category,
    Entry,
    Line,
    Prize,
    Stage,
    category_label,
    normalize_category,
)
from tournaments.services import entries, pairing, prizes, schedule
from tournaments.services.export import build_document, dumps
from tournaments.services.importer import import_document

pytestmark = pytest.mark.django_db

WOMEN_CATS = {1: "women", 2: "men", 3: "women", 4: "Comune di Bra", 5: "women", 6: "men"}


def _played(slug="premi", public=True):
    """Six lines, one round robin played; categories set by seed."""
    tournament = build_tournament(6, slug=slug, knockout=False, public=public)
    for entry in Entry.objects.filter(tournament=tournament):
        entry.category = WOMEN_CATS[entry.seed]
        entry.save(update_fields=["category"])
    return tournament


def _final(tournament):
    doc = build_document(tournament)
    names = {line["ref"]: line["name"] for line in doc["lines"]}
    cats = {line["ref"]: line["category"] for line in doc["lines"]}
    order = sorted(doc["final_standings"], key=lambda p: p["rank"])
    return doc, [(names[p["line"]], cats[p["line"]]) for p in order], names


def test_a_built_in_category_is_recognised_in_italian_or_english_a_free_one_kept():
    assert normalize_category("  Donne ") == normalize_category("women") == Category.WOMEN
    assert normalize_category("over 63") == Category.OVER_63
    assert normalize_category("Comune   di Bra") == "Comune di Bra"
    assert category_label("Comune di Bra") == "Comune di Bra"


def test_csv_import_reads_the_category_column():
    tournament = build_tournament(2, slug="csv-cat", knockout=False, play=False)
    text = "linea;giocatore 1;categoria\nRosa;Anna;Femminile\nBlu;Bruno;Circolo Aurora\n"
    # the Italian label is the built-in category; any other text a category of its own
    entries.import_lines_csv(tournament, io.StringIO(text))
    got = dict(
        Entry.objects.filter(tournament=tournament, seed__gt=2).values_list(
            "line__name", "category"
        )
    )
    assert got == {"Rosa": "women", "Blu": "Circolo Aurora"}


def test_prizes_go_in_order_of_value_and_a_line_takes_only_its_best():
    tournament = _played()
    _doc, ranking, _names = _final(tournament)
    women = [name for name, cat in ranking if cat == "women"]
    prizes.add_prize(tournament, place=1, value=300, label="Coppa")
    prizes.add_prize(tournament, place=2, value=150, label="Targa")
    prizes.add_prize(tournament, place=1, value=200, label="Prima donna", category="Donne")
    doc = build_document(tournament)
    names = {line["ref"]: line["name"] for line in doc["lines"]}
    handed = [(p["label"], names.get(p["line"])) for p in doc["prizes"]]
    # by hand: the overall winner takes the cup; the best woman not yet awarded the women's
    # prize (200 is handed out before 150); the 2nd prize to the best line left
    first = ranking[0][0]
    best_woman = next(name for name in women if name != first)
    second = next(name for name, _cat in ranking if name not in (first, best_woman))
    assert handed == [("Coppa", first), ("Prima donna", best_woman), ("Targa", second)]

    with pytest.raises(PrizeError):
        prizes.add_prize(tournament, place=1, value=10, label="Doppione", category="women")


def test_ranking_per_category_renumbers_and_export_round_trips():
    tournament = _played(slug="giro")
    prizes.add_prize(
        tournament, place=1, value=100, label="Coppa del comune", category="Comune di Bra"
    )
    podium = sel.podium(tournament, "women")
    assert [line.rank for line in podium.ranking] == [1, 2, 3]
    assert {line.category for line in podium.ranking} == {str(Category.WOMEN.label)}
    assert ("Comune di Bra", "Comune di Bra") in podium.categories
    assert sel.podium(tournament, "no such").category == ""  # unknown: the overall ranking

    first = dumps(build_document(tournament))
    copy = import_document(json.loads(first), slug=tournament.slug + "-copia")
    assert Prize.objects.filter(tournament=copy).count() == 1
    again = json.loads(dumps(build_document(copy)))
    original = json.loads(first)
    assert again["lines"] == original["lines"]
    assert again["prizes"] == original["prizes"]


def test_podium_pages_show_prizes_and_the_desk_edits_the_list(client):
    tournament = _played(slug="podio")
    organizer = User.objects.create_user("org-premi", password="x-pass-12345")
    tournament.organizers.add(organizer)
    client.force_login(organizer)
    desk = reverse("desk:podium", args=[tournament.slug])
    response = client.post(
        reverse("desk:add-prize", args=[tournament.slug]),
        {"category": "Donne", "place": "1", "value": "50", "label": "Prosciutto"},
    )
    assert response.status_code == 302
    prize = Prize.objects.get(tournament=tournament)
    assert prize.category == "women"
    html = client.get(desk).content.decode()
    assert (
        "Prosciutto" in html
        and 'action="' + reverse("desk:remove-prize", args=[tournament.slug, prize.pk]) in html
    )
    client.logout()
    public = client.get(reverse("public:podium", args=[tournament.slug]) + "?category=women")
    assert public.status_code == 200
    assert "Prosciutto" in public.content.decode()
    client.force_login(organizer)
    client.post(reverse("desk:remove-prize", args=[tournament.slug, prize.pk]))
    assert not Prize.objects.filter(tournament=tournament).exists()


def test_the_line_form_sets_the_category(client):
    tournament = build_tournament(2, slug="forma", knockout=False, play=False)
    organizer = User.objects.create_user("org-forma", password="x-pass-12345")
    tournament.organizers.add(organizer)
    client.force_login(organizer)
    entry = Entry.objects.get(tournament=tournament, seed=1)
    url = reverse("desk:edit-line", args=[tournament.slug, entry.line_id])
    assert 'list="categories"' in client.get(url).content.decode()
    client.post(url, {"name": entry.line.name, "seed": "1", "category": "Over 63", "player1": "X"})
    entry.refresh_from_db()
    assert entry.category == Category.OVER_63


def test_after_a_knockout_the_lines_it_did_not_take_are_placed_by_the_combined_ranking():
    """An open day: Mitchell, Danish, a knock-out of 4. The final standings used to hold the
    bracket's four lines only, so an Over 63 prize went to nobody when no pair over 63 reached
    the knock-out. By hand: places 1-4 from the bracket, then the eight others in the order of
    the combined ranking that qualified them; the Over 63 prize to the better of the two pairs
    over 63, both left out of the knock-out."""
    tournament = build_tournament(12, slug="open-premi", play=False, knockout=False)
    Stage.objects.filter(tournament=tournament).delete()
    mitchell = Stage.objects.create(
        tournament=tournament, order=1, name="Mitchell", kind="mitchell", rounds_planned=2
    )
    danish = Stage.objects.create(
        tournament=tournament, order=2, name="Danese", kind="danish", advance_count=4
    )
    knockout = Stage.objects.create(
        tournament=tournament, order=3, name="Finale", kind="knockout", third_place_match=True
    )
    for stage in (mitchell, danish):
        for _round in range(2):
            pairing.pair_next_round(stage)
            play_stage(stage)
        if stage == danish:
            combined = [row.line_id for row in pairing.open_standings(danish)]
        schedule.close_stage(stage)
    while knockout.rounds.filter(matches__status="scheduled").exists():
        play_stage(knockout)
    schedule.close_stage(knockout)
    over_63 = combined[-2:]  # the two last of the combined ranking
    Entry.objects.filter(tournament=tournament, line_id__in=over_63).update(
        category=Category.OVER_63
    )
    prizes.add_prize(tournament, place=1, value=100, label="Primi", category="")
    prizes.add_prize(tournament, place=1, value=50, label="Over 63", category="Over 63")

    doc = build_document(tournament)
    ref_of_name = {line["name"]: line["ref"] for line in doc["lines"]}
    ref = {line.pk: ref_of_name[line.name] for line in Line.objects.filter(pk__in=combined)}
    final = doc["final_standings"]
    bracket = [place["line"] for place in final[:4]]
    assert [place["rank"] for place in final[:4]] == [1, 2, 3, 4]
    assert len(final) == 12
    # the eight others in the combined ranking's order, places going on from 5
    assert [place["line"] for place in final[4:]] == [
        ref[line] for line in combined if ref[line] not in bracket
    ]
    ranks = [place["rank"] for place in final[4:]]
    assert ranks[0] == 5 and ranks == sorted(ranks) and ranks[-1] <= 12
    handed = {p["label"]: p["line"] for p in doc["prizes"]}
    assert handed["Over 63"] == ref[over_63[0]]
    assert handed["Primi"] == bracket[0]
