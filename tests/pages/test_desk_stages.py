"""The day composed on the desk: the wizard's open-day preset, the stages page (add, change,
move, remove, refusals), and the combined ranking the public stage page shows, which is the one
that seeded the knock-out."""

import datetime
import re

import pytest
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from tests.pages.factories import build_tournament, play_stage
from tournaments.algorithms import swiss
from tournaments.models import Entry, Line, Match, Stage, Tournament
from tournaments.services import pairing, schedule

pytestmark = pytest.mark.django_db


@pytest.fixture
def organizer():
    user = User.objects.create_user("direttrice", password="x-pass-12345")
    user.user_permissions.add(Permission.objects.get(codename="add_tournament"))
    return user


@pytest.fixture
def client_in(client, organizer):
    client.force_login(organizer)
    return client


def _kinds(tournament):
    return list(tournament.stages.order_by("order").values_list("kind", flat=True))


def test_wizard_open_day_preset_builds_mitchell_danish_knockout(client_in):
    page = client_in.get(reverse("desk:new"))
    assert str(swiss.MAX_LINES) in page.content.decode()  # the Swiss cap said up front
    form = page.context["form"]
    data = {
        "preset": form.preset_slug,
        "name": "Open di Natale",
        "start_date": datetime.date(2026, 12, 20).isoformat(),
        "seats_per_line": 2,
        "deck_style": form.fields["deck_style"].initial,
        "format": "open",
        "mitchell_rounds": 3,
        "danish_rounds": 4,
        "knockout_size": 16,
        "third_place_match": "on",
        "tiebreak_1": "mp",
    }
    for _name, field_name in form.option_names:
        initial = form.fields[field_name].initial
        if initial is not False:
            data[field_name] = initial
    response = client_in.post(reverse("desk:new"), data)
    assert response.status_code == 302, response.context["form"].errors
    tournament = Tournament.objects.get(name="Open di Natale")
    assert _kinds(tournament) == ["mitchell", "danish", "knockout"]
    danish = tournament.stages.get(kind="danish")
    assert (danish.rounds_planned, danish.advance_count, danish.carry_over) == (4, 16, True)


def test_stages_page_adds_changes_moves_and_removes(client_in, organizer):
    tournament = build_tournament(6, slug="giornata", play=False, knockout=False)
    tournament.organizers.add(organizer)
    url = reverse("desk:stages", args=[tournament.slug])
    assert client_in.get(url).status_code == 200
    for kind, rounds in (("danish", 3), ("knockout", "")):
        response = client_in.post(
            url,
            {
                "kind": kind,
                "rounds_planned": rounds,
                "first_round": "seed",
                "bye_scoring": "forfeit_win",
                "carry_over": "on",
            },
        )
        assert response.status_code == 302, response.content.decode()[-2000:]
    assert _kinds(tournament) == ["round_robin", "danish", "knockout"]
    knockout = tournament.stages.get(kind="knockout")
    danish = tournament.stages.get(kind="danish")
    client_in.post(
        reverse("desk:move-stage", args=[tournament.slug, knockout.pk]), {"direction": "up"}
    )
    assert _kinds(tournament) == ["round_robin", "knockout", "danish"]
    edit = reverse("desk:edit-stage", args=[tournament.slug, danish.pk])
    assert client_in.get(edit).status_code == 200
    response = client_in.post(
        edit,
        {
            "name": "Danese finale",
            "kind": "danish",
            "rounds_planned": 2,
            "first_round": "seed",
            "bye_scoring": "set_vp",
        },
    )
    # a set VP bye without its score: refused with the message, nothing saved
    assert response.status_code == 400
    assert "VP" in response.content.decode()
    danish.refresh_from_db()
    assert danish.rounds_planned == 3
    client_in.post(
        reverse("desk:remove-stage", args=[tournament.slug, knockout.pk]), {"confirm": "1"}
    )
    assert _kinds(tournament) == ["round_robin", "danish"]
    # the round robin has started: moving it is refused with a message, not a 500
    rr = tournament.stages.get(kind="round_robin")
    response = client_in.post(
        reverse("desk:move-stage", args=[tournament.slug, rr.pk]),
        {"direction": "down"},
        follow=True,
    )
    assert response.status_code == 200
    assert _kinds(tournament) == ["round_robin", "danish"]
    page = client_in.get(url).content.decode()
    assert reverse("desk:edit-stage", args=[tournament.slug, rr.pk]) not in page


def test_places_kept_for_categories_are_typed_on_the_desk_as_organizers_name_them(
    client_in, organizer
):
    tournament = build_tournament(4, slug="categorie", play=False, knockout=False)
    tournament.organizers.add(organizer)
    danish = Stage.objects.create(
        tournament=tournament, order=2, name="Danese", kind="danish", advance_count=4
    )
    edit = reverse("desk:edit-stage", args=[tournament.slug, danish.pk])
    fields = {
        "name": "Danese",
        "kind": "danish",
        "rounds_planned": 3,
        "first_round": "seed",
        "bye_scoring": "forfeit_win",
        "advance_count": 4,
        "carry_over": "on",
    }
    client_in.post(edit, {**fields, "category_places": "Donne: 1; Over 63: 2"})
    danish.refresh_from_db()
    assert danish.category_places == {"women": 1, "over-63": 2}
    # the form shows them back as the organizer reads them
    page = client_in.get(edit, HTTP_ACCEPT_LANGUAGE="it").content.decode()
    assert "Femminile: 1" in page
    # a line without its number of places, or with a digit int() cannot read: refused with
    # the message, nothing changed
    for typed in ("Donne", "Donne: ²"):
        response = client_in.post(edit, {**fields, "category_places": typed})
        assert response.status_code == 400
        assert "Donne: 2" in response.content.decode()
    danish.refresh_from_db()
    assert danish.category_places == {"women": 1, "over-63": 2}


def test_swiss_stage_over_the_cap_is_said_before_it_is_built(client_in, organizer):
    tournament = build_tournament(4, slug="svizzera", play=False, knockout=False)
    tournament.organizers.add(organizer)
    Stage.objects.create(tournament=tournament, order=2, name="Svizzera", kind="swiss")
    lines = Line.objects.bulk_create(Line(name=f"Extra {i}") for i in range(swiss.MAX_LINES))
    Entry.objects.bulk_create(Entry(tournament=tournament, line=line) for line in lines)
    page = client_in.get(
        reverse("desk:stages", args=[tournament.slug]), HTTP_ACCEPT_LANGUAGE="en"
    ).content.decode()
    assert "make this stage Danish" in page


def _open_day(n_lines=12):
    tournament = build_tournament(n_lines, slug="open", play=False, knockout=False)
    Stage.objects.filter(tournament=tournament).delete()
    mitchell = Stage.objects.create(
        tournament=tournament, order=1, name="Mitchell", kind="mitchell", rounds_planned=2
    )
    danish = Stage.objects.create(
        tournament=tournament,
        order=2,
        name="Danese",
        kind="danish",
        rounds_planned=2,
        advance_count=4,
    )
    Stage.objects.create(tournament=tournament, order=3, name="Finale", kind="knockout")
    for stage in (mitchell, danish):
        for _round in range(2):
            pairing.pair_next_round(stage)
            play_stage(stage)
        schedule.close_stage(stage)
    return tournament, danish


def test_public_stage_page_shows_the_combined_ranking_that_seeded_the_knockout(client):
    tournament, danish = _open_day()
    knockout = tournament.stages.get(kind="knockout")
    seeded = {
        line
        for pair in Match.objects.filter(round__stage=knockout, round__number=1).values_list(
            "home_id", "away_id"
        )
        for line in pair
        if line
    }
    html = client.get(
        reverse("public:stage", args=[tournament.slug, danish.pk]), HTTP_ACCEPT_LANGUAGE="en"
    ).content
    page = html.decode()
    assert "Combined ranking" in page and "“Mitchell” + “Danish”" not in page
    assert "“Mitchell” + “Danese”" in page
    section = page[page.index("qualifying-ranking") : page.index("</section>")]
    qualified = re.findall(r'<tr class="qualified">.*?/lines/(\d+)/', section, re.S)
    assert {int(pk) for pk in qualified} == seeded
    assert [r.line_id for r in pairing.open_standings(danish)][:4] == [int(pk) for pk in qualified]
    knockout_page = client.get(reverse("public:stage", args=[tournament.slug, knockout.pk]))
    assert "ranking-words" in knockout_page.content.decode()


def test_movement_cards_say_where_each_line_sits_as_the_rounds_then_seat_it(client_in, organizer):
    tournament = build_tournament(7, slug="mitchell", play=False, knockout=False)
    tournament.organizers.add(organizer)
    Stage.objects.filter(tournament=tournament).delete()
    stage = Stage.objects.create(
        tournament=tournament, order=1, name="Mitchell", kind="mitchell", rounds_planned=3
    )
    url = reverse("desk:movement-cards", args=[tournament.slug, stage.pk])
    assert client_in.get(url).status_code == 200  # before round 1: says to pair it first
    pairing.pair_next_round(stage)
    response = client_in.get(url)
    cards = {card.line.pk: card for card in response.context["cards"]}
    assert len(cards) == 7
    for number in range(1, 4):
        if number > 1:
            play_stage(stage)
            pairing.pair_next_round(stage)
        for match in Match.objects.filter(round__stage=stage, round__number=number):
            for line, other in ((match.home_id, match.away_id), (match.away_id, match.home_id)):
                if line is None:
                    continue
                row = cards[line].rows[number - 1]
                assert row[0] == number and row[1] == match.table_number
                assert row[3] == (Line.objects.get(pk=other).name if other else None)
    # the bye's card in the round's print says its score
    bye = Match.objects.filter(round__stage=stage, away__isnull=True).select_related("round")
    bye = bye.first()
    printed = client_in.get(
        reverse("desk:print", args=[tournament.slug, bye.round.pk]), HTTP_ACCEPT_LANGUAGE="en"
    )
    assert "Bye score:" in printed.content.decode()


def test_closing_a_stage_asks_how_many_go_on_only_when_it_seeds_a_knockout(client_in, organizer):
    """Closing a Mitchell sends every line on to the Danish rounds: the close form asked "Lines
    going on" all the same (8), a number nothing read. Only a stage that seeds a knock-out asks,
    and then only when its settings do not say how many already."""
    tournament = build_tournament(8, slug="open-close", play=False, knockout=False)
    tournament.organizers.add(organizer)
    Stage.objects.filter(tournament=tournament).delete()
    kinds = [("mitchell", None), ("danish", None), ("knockout", None)]
    stages = [
        Stage.objects.create(
            tournament=tournament, order=n, name=kind, kind=kind, rounds_planned=1, advance_count=a
        )
        for n, (kind, a) in enumerate(kinds, 1)
    ]
    mitchell, danish, _knockout = stages
    pairing.pair_next_round(mitchell)

    def close_forms():
        page = client_in.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
        forms = re.findall(
            r'<form method="post" action="[^"]*/stage/(\d+)/close/">(.*?)</form>', page, re.S
        )
        return {int(pk): 'name="per_group"' in body for pk, body in forms}

    assert close_forms() == {mitchell.pk: False}
    play_stage(mitchell)
    schedule.close_stage(mitchell)
    pairing.pair_next_round(danish)
    assert close_forms() == {danish.pk: True}
    Stage.objects.filter(pk=danish.pk).update(advance_count=4)  # the count set on the stage
    assert close_forms() == {danish.pk: False}
