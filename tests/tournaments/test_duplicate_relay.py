"""The relay table on the database: the organizer chooses it over the skip (from the desk's
session form too), the stage's matches are the relay movement's, a board shared by the relay's
two tables opens only once both have played it, the printed table card says which boards a
table plays and that the relay shares them, and the export carries the choice back."""

import json

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tests.tournaments.test_duplicate_stage import _play, _tournament
from tournaments.algorithms import duplicate as scoring
from tournaments.algorithms import duplicate_movement
from tournaments.models import BoardSet, Match, Stage
from tournaments.services import duplicate, export, schedule
from tournaments.services.importer import import_document

pytestmark = pytest.mark.django_db


def _matches(stage):
    return list(
        Match.objects.filter(round__stage=stage)
        .select_related("round")
        .order_by("round__number", "table_number")
    )


def test_the_relay_replaces_the_skip_and_a_shared_board_opens_once_both_tables_played():
    tournament = _tournament(8)  # 4 tables, 4 rounds of 2 boards
    stage = tournament.stages.get()
    board_set = duplicate.draw_duplicate(stage, seed="relais", relay=True)
    assert board_set.relay
    order = [line.pk for line in schedule.seeded_lines(tournament)]
    movement = duplicate_movement.mitchell_movement(order, 2, relay=True)
    matches = _matches(stage)
    assert [(m.round.number, m.table_number, m.home_id, m.away_id) for m in matches] == [
        (t.round, t.table, t.ns, t.ew) for ts in movement for t in ts
    ]
    # nobody skips: every North-South line meets every East-West line once
    assert len({(m.home_id, m.away_id) for m in matches}) == 16
    first, *_middle, last = [m for m in matches if m.round.number == 1]
    assert duplicate.board_numbers_of_match(first) == duplicate.board_numbers_of_match(last)
    assert set(duplicate.tables_holding(board_set).values()) == {4}
    # round 1: table 1 plays, the relay's other table has not: boards 1-2 stay secret
    _play(first, board_set)
    assert not {1, 2} & duplicate.open_boards(board_set)
    assert duplicate.traveller(board_set, 1) is None


def test_the_relay_is_kept_only_where_it_applies():
    odd_tables = duplicate.draw_duplicate(_tournament(6).stages.get(), relay=True)
    assert not odd_tables.relay  # 3 tables need neither the skip nor a relay
    howell = duplicate.draw_duplicate(_tournament(8).stages.get(), movement="howell", relay=True)
    assert not howell.relay
    skip = duplicate.draw_duplicate(_tournament(8).stages.get())
    assert not skip.relay


def test_the_table_card_says_the_boards_and_the_relay(client):
    tournament = _tournament(8)
    stage = tournament.stages.get()
    duplicate.draw_duplicate(stage, seed="relais", relay=True)
    organizer = User.objects.create_user("arbitro", password="x-pass-12345")
    tournament.organizers.add(organizer)
    client.login(username="arbitro", password="x-pass-12345")
    round_2 = stage.rounds.get(number=2)
    page = client.get(reverse("desk:print", args=[tournament.slug, round_2.pk])).content.decode()
    cards = page.split('class="table-card page"')[1:]
    assert len(cards) == 4
    # round 2: tables 1 and 4 share boards 3-4, table 2 plays 5-6, table 3 1-2; 7-8 rest
    assert "<strong>3, 4</strong>" in cards[0] and "<strong>3, 4</strong>" in cards[3]
    assert "<strong>5, 6</strong>" in cards[1] and "<strong>1, 2</strong>" in cards[2]
    for card, other in ((cards[0], 4), (cards[3], 1)):
        assert f"tavolo {other}" in card or f"table {other}" in card
    assert "relais" not in cards[1] + cards[2] and "relay" not in cards[1] + cards[2]
    intro = page.split('class="table-card page"')[0]
    assert "7, 8" in intro


def test_the_desk_session_form_draws_the_relay(client):
    from tests.tournaments.conftest import make_tournament

    tournament = make_tournament(n_lines=8)
    organizer = User.objects.create_user("direttrice", password="x-pass-12345")
    tournament.organizers.add(organizer)
    client.login(username="direttrice", password="x-pass-12345")
    page = client.get(reverse("desk:stages", args=[tournament.slug])).content.decode()
    assert 'name="relay"' in page
    answer = client.post(
        reverse("desk:stages", args=[tournament.slug]),
        {
            "form": "duplicate",
            "movement": "mitchell",
            "scoring": "matchpoints",
            "boards_per_round": "2",
            "relay": "on",
        },
    )
    assert answer.status_code == 302, answer.content.decode()
    assert BoardSet.objects.get(stage__tournament=tournament).relay


def test_the_export_carries_the_relay_and_the_import_moves_the_same_way():
    tournament = _tournament(8)
    stage = tournament.stages.get()
    board_set = duplicate.draw_duplicate(stage, seed="relais", relay=True)
    for match in _matches(stage):
        _play(match, board_set)
    stage.status = Stage.Status.CLOSED
    stage.save()
    doc = json.loads(json.dumps(export.build_document(tournament)))
    assert doc["stages"][0]["duplicate"]["relay"] is True
    copy = import_document(doc, slug="copia-relais")
    again = BoardSet.objects.get(stage__tournament=copy)
    assert again.relay
    got = sorted(t.score for t in scoring.totals(duplicate.scores(again)).values())
    want = sorted(t.score for t in scoring.totals(duplicate.scores(board_set)).values())
    assert got == want


def test_the_players_phone_sheet_names_the_boards_of_its_deals(client):
    from scoresheets.services import links

    tournament = _tournament(8)
    stage = tournament.stages.get()
    duplicate.draw_duplicate(stage, seed="relais", relay=True)
    match = Match.objects.get(round__stage=stage, round__number=2, table_number=4)
    card = links.link_for(tournament, match.home)
    page = client.get(reverse("table:sheet", args=[card.token, match.pk])).content.decode()
    sentence = page.split('class="meta sheet-boards">', 1)[1].split("</p>", 1)[0]
    assert "3, 4" in sentence  # round 2, table 4: the relay's boards 3-4


def test_the_movement_cards_give_each_line_its_boards_and_the_relay(client):
    tournament = _tournament(8)
    stage = tournament.stages.get()
    duplicate.draw_duplicate(stage, seed="relais", relay=True)
    organizer = User.objects.create_user("arbitro", password="x-pass-12345")
    tournament.organizers.add(organizer)
    client.login(username="arbitro", password="x-pass-12345")
    desk = client.get(reverse("desk:tournament", args=[tournament.slug])).content.decode()
    url = reverse("desk:movement-cards", args=[tournament.slug, stage.pk])
    assert url in desk
    page = client.get(url).content.decode()
    cards = page.split('class="table-card page movement-card"')[1:]
    assert len(cards) == 8
    first = schedule.seeded_lines(tournament)[0]  # North-South at table 1, the relay's table
    card = next(c for c in cards if first.name in c.split("</p>", 2)[1])
    rows = card.split("<tbody>", 1)[1].split("</tr>")[:4]
    assert [row.split("<td>")[5].split("<")[0].strip() for row in rows] == [
        "1, 2",
        "3, 4",
        "5, 6",
        "7, 8",
    ]
    assert all("4)" in row for row in rows)  # relay with table 4, every round
