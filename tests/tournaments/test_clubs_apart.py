"""Clubs kept apart and forbidden pairings through the services: the list and the stage option
in the export; Mitchell, Danish and Swiss stages that keep lines apart."""

from __future__ import annotations

import json

import pytest

from tests.pages.factories import play_stage
from tournaments.algorithms import mitchell
from tournaments.exceptions import ClubsApartError, ForbiddenPairingError, PairingError
from tournaments.models import Entry, ForbiddenPairing, Line, Match, Stage
from tournaments.services import forbidden, pairing
from tournaments.services.export import build_document
from tournaments.services.importer import import_document

from .conftest import make_tournament

pytestmark = pytest.mark.django_db


def _lines(tournament):
    return list(
        Entry.objects.filter(tournament=tournament)
        .order_by("seed")
        .values_list("line_id", flat=True)
    )


def _set_clubs(lines, clubs):
    for line_id, club in zip(lines, clubs, strict=True):
        Line.objects.filter(pk=line_id).update(club=club)


def _stage(tournament, kind, **fields):
    return Stage.objects.create(tournament=tournament, order=1, name="Turni", kind=kind, **fields)


def _meetings(stage):
    return {
        frozenset((m.home_id, m.away_id))
        for m in Match.objects.filter(round__stage=stage, home__isnull=False, away__isnull=False)
    }


def _club_meetings(stage):
    club = dict(Line.objects.values_list("pk", "club"))
    return [
        pair
        for pair in _meetings(stage)
        if len({club[line] for line in pair}) == 1 and all(club[line] for line in pair)
    ]


# --------------------------------------------------------------------------- the line's club


def test_forbidden_pairings_and_the_option_survive_the_export_without_the_private_note():
    tournament = make_tournament(n_lines=3)
    a, _b, c = _lines(tournament)
    forbidden.forbid_pairing(tournament, c, a, note="marito e moglie")
    _stage(tournament, Stage.Kind.MITCHELL, keep_clubs_apart=True)

    doc = json.loads(json.dumps(build_document(tournament)))
    # the organizer's note stays on the desk: the export is public
    assert doc["forbidden_pairings"] == [{"lines": ["L1", "L3"]}]
    assert "marito" not in json.dumps(doc)
    copy = import_document(doc, slug="copia")
    (kept,) = ForbiddenPairing.objects.filter(tournament=copy)
    assert {kept.line_a.name, kept.line_b.name} == {"Linea 001", "Linea 003"}
    assert Stage.objects.get(tournament=copy).keep_clubs_apart is True
    # and the copy exports the same document (every field made the round trip)
    again = json.loads(json.dumps(build_document(copy)))
    assert again["forbidden_pairings"] == doc["forbidden_pairings"]
    assert again["stages"][0]["pairing"] == doc["stages"][0]["pairing"]


def test_forbidden_pairings_refuse_what_makes_no_sense():
    tournament = make_tournament(n_lines=3)
    other = make_tournament(n_lines=1, name="Altro")
    a, b, _c = _lines(tournament)
    with pytest.raises(ForbiddenPairingError):
        forbidden.forbid_pairing(tournament, a, a)
    with pytest.raises(ForbiddenPairingError):
        forbidden.forbid_pairing(tournament, a, _lines(other)[0])
    pair = forbidden.forbid_pairing(tournament, b, a)
    assert (pair.line_a_id, pair.line_b_id) == (min(a, b), max(a, b))
    with pytest.raises(ForbiddenPairingError):
        forbidden.forbid_pairing(tournament, a, b)
    forbidden.allow_pairing(tournament, pair.pk)
    with pytest.raises(ForbiddenPairingError):
        forbidden.allow_pairing(tournament, pair.pk)


# --------------------------------------------------------------------------- Mitchell


def test_mitchell_seats_each_club_in_one_direction_and_they_never_meet():
    tournament = make_tournament(n_lines=10)
    lines = _lines(tournament)
    # by seed, two clubs of 2 and 3 that the plain movement would seat face to face
    _set_clubs(lines, ["Napoli", "Napoli", "Bari", "Bari", "Bari", "", "", "", "", ""])
    stage = _stage(tournament, Stage.Kind.MITCHELL, keep_clubs_apart=True)
    for _number in range(mitchell.table_count(10)):
        pairing.pair_next_round(stage)
        play_stage(stage)
    assert len(_meetings(stage)) == 25  # the full movement: each NS line meets each EW line
    assert _club_meetings(stage) == []
    directions = pairing.line_directions(stage)
    assert len({directions[line] for line in lines[:2]}) == 1
    assert len({directions[line] for line in lines[2:5]}) == 1


def test_mitchell_without_the_option_keeps_only_forbidden_pairs_apart():
    tournament = make_tournament(n_lines=4)
    a, b, c, d = _lines(tournament)
    _set_clubs([a, b, c, d], ["X", "X", "", ""])
    forbidden.forbid_pairing(tournament, a, d)
    stage = _stage(tournament, Stage.Kind.MITCHELL)
    for _number in range(2):
        pairing.pair_next_round(stage)
        play_stage(stage)
    meetings = _meetings(stage)
    assert frozenset((a, d)) not in meetings
    assert frozenset((a, b)) in meetings  # clubs are not kept apart without the option


def test_mitchell_says_when_a_club_is_too_large_and_seats_the_fewest_meetings_if_told():
    tournament = make_tournament(n_lines=6)
    lines = _lines(tournament)
    _set_clubs(lines, ["Comune di Ischia"] * 4 + ["", ""])
    stage = _stage(tournament, Stage.Kind.MITCHELL, keep_clubs_apart=True)
    with pytest.raises(ClubsApartError) as refused:
        pairing.pair_next_round(stage)
    message = str(refused.value)
    assert "Comune di Ischia" in message and "(3)" in message
    assert not stage.rounds.exists()  # nothing paired
    for _number in range(3):
        pairing.pair_next_round(stage, accept_meetings=True)
        play_stage(stage)
    assert len(_club_meetings(stage)) == 3  # 3 + 1 in the two directions: the fewest


# --------------------------------------------------------------------------- Danish and Swiss


def test_danish_keeps_club_mates_and_forbidden_pairs_apart_round_after_round():
    tournament = make_tournament(n_lines=12)
    lines = _lines(tournament)
    _set_clubs(lines, ["A", "A", "A", "B", "B", "B", "", "", "", "", "", ""])
    forbidden.forbid_pairing(tournament, lines[6], lines[7])
    forbidden.forbid_pairing(tournament, lines[8], lines[9])
    stage = _stage(tournament, Stage.Kind.DANISH, keep_clubs_apart=True)
    for _number in range(4):
        pairing.pair_next_round(stage)
        play_stage(stage)
    meetings = _meetings(stage)
    assert _club_meetings(stage) == []
    assert frozenset(lines[6:8]) not in meetings and frozenset(lines[8:10]) not in meetings
    # round 1 by seed would have paired 1–2 (both of club A): 1 met 4 instead
    first = _meetings_of(stage.rounds.get(number=1))
    assert frozenset((lines[0], lines[3])) in first


def test_a_danish_round_that_can_only_make_a_forbidden_pair_is_refused():
    tournament = make_tournament(n_lines=2)
    a, b = _lines(tournament)
    forbidden.forbid_pairing(tournament, a, b)
    stage = _stage(tournament, Stage.Kind.DANISH)
    with pytest.raises(PairingError) as refused:
        pairing.pair_next_round(stage)
    assert "vietat" in str(refused.value)  # Italian first: "abbinamenti vietati"
    assert not stage.rounds.exists()


def test_swiss_round_one_keeps_a_forbidden_pair_apart():
    # the same field without the forbidden pair: who the top seed meets in round 1
    plain = make_tournament(n_lines=8, name="Senza divieti")
    plain_lines = _lines(plain)
    plain_round = pairing.pair_next_round(_stage(plain, Stage.Kind.SWISS, rounds_planned=3))
    (opponent,) = next(p for p in _meetings_of(plain_round) if plain_lines[0] in p) - {
        plain_lines[0]
    }
    tournament = make_tournament(n_lines=8)
    lines = _lines(tournament)
    first = frozenset((lines[0], lines[plain_lines.index(opponent)]))
    forbidden.forbid_pairing(tournament, *first)
    stage = _stage(tournament, Stage.Kind.SWISS, rounds_planned=3)
    for _number in range(3):
        round_row = pairing.pair_next_round(stage)
        assert first not in _meetings_of(round_row)
        play_stage(stage)


def _meetings_of(round_row):
    return {
        frozenset((m.home_id, m.away_id))
        for m in round_row.matches.filter(home__isnull=False, away__isnull=False)
    }


# --------------------------------------------------------------------------- Mitchell, late


def _late_mitchell(late_club):
    """Nine lines in a Mitchell keeping clubs apart, round 1 played, and a late line of
    ``late_club`` checked in for round 2 (it can only take the empty East-West seat)."""
    from tournaments.services import entries

    tournament = make_tournament(n_lines=9)
    stage = _stage(tournament, Stage.Kind.MITCHELL, keep_clubs_apart=True, late_entry_until_round=2)
    pairing.pair_next_round(stage)
    play_stage(stage)
    order = list(
        pairing.open_group(stage).members.order_by("position").values_list("line_id", flat=True)
    )
    # North-South at table 2 (met by the empty seat in round 3) and at table 5 (round 1 only)
    _set_clubs([order[2], order[8]], ["Circolo Borgo", "Circolo Aurora"])
    entries.add_lines(
        tournament, [entries.LineRow(name="Ritardataria", players=[("Ultima", "")], row_number=99)]
    )
    late = Entry.objects.get(tournament=tournament, line__name="Ritardataria").line_id
    Line.objects.filter(pk=late).update(club=late_club)
    return tournament, stage, order, late


def test_a_late_mitchell_pair_is_refused_a_seat_facing_its_club_or_a_forbidden_line():
    tournament, stage, order, late = _late_mitchell("circolo  borgo")
    forbidden.forbid_pairing(tournament, late, order[4])  # North-South at table 3
    with pytest.raises(ClubsApartError) as refused:
        pairing.pair_next_round(stage)
    message = str(refused.value)  # Italian first, naming both lines it would meet
    assert "Linea 003" in message and "Linea 005" in message and "circolo" in message
    assert stage.rounds.count() == 1
    assert not pairing.open_group(stage).members.filter(line_id=late).exists()
    # the organizer has read which lines it meets and seats it anyway: the only free seat
    pairing.pair_next_round(stage, accept_meetings=True)
    for _number in range(3):
        play_stage(stage)
        pairing.pair_next_round(stage)
    play_stage(stage)
    met = {line for pair in _meetings(stage) if late in pair for line in pair} - {late}
    assert met == {order[0], order[2], order[4], order[6]}


def test_a_late_mitchell_pair_may_face_a_club_mate_it_meets_only_in_a_round_it_missed():
    _tournament, stage, order, late = _late_mitchell("Circolo Aurora")
    second = pairing.pair_next_round(stage)  # Aurora sits North-South at table 5
    (table,) = second.matches.filter(away_id=late)
    assert table.home_id == order[0]  # the empty seat reaches table 1 in round 2
    assert pairing.line_directions(stage)[late] is mitchell.Direction.EAST_WEST


def test_swiss_keeps_clubs_apart_and_names_the_meetings_it_cannot_avoid():
    tournament = make_tournament(n_lines=8)
    lines = _lines(tournament)
    # round 1 by the Dutch rules pairs 1–5 and 2–6: both pairs play for one club
    _set_clubs(lines, ["Aurora", "Borgo", "", "", "aurora", "BORGO", "", ""])
    stage = _stage(tournament, Stage.Kind.SWISS, rounds_planned=3, keep_clubs_apart=True)
    stage.full_clean()  # a Swiss stage takes the option
    for _number in range(3):
        round_row = pairing.pair_next_round(stage)
        assert pairing.club_meetings(round_row) == []
        play_stage(stage)
    assert _club_meetings(stage) == []
    # a club of three lines in four cannot be kept apart: paired anyway, and named
    small = make_tournament(n_lines=4, name="Piccolo")
    _set_clubs(_lines(small), ["Comune di Ischia"] * 3 + [""])
    swiss_stage = _stage(small, Stage.Kind.SWISS, rounds_planned=2, keep_clubs_apart=True)
    (meeting,) = pairing.club_meetings(pairing.pair_next_round(swiss_stage))
    assert all(name.startswith("Linea") for name in meeting)


def test_a_pairing_forbidden_once_a_mitchell_is_seated_is_refused_if_they_would_meet():
    """The seats of a Mitchell are set in round 1: two lines in opposite directions forbidden
    afterwards would still meet, so the forbidding is refused with the round; lines of one
    direction, or who met only in a round already paired, may be forbidden."""
    tournament = make_tournament(n_lines=8)
    stage = _stage(tournament, Stage.Kind.MITCHELL)
    first = pairing.pair_next_round(stage)
    order = list(
        pairing.open_group(stage).members.order_by("position").values_list("line_id", flat=True)
    )
    (met,) = [
        (m.home_id, m.away_id) for m in first.matches.filter(table_number=1)
    ]  # round 1, already paired: no meeting left
    ns = order[0]
    (third,) = [t for t in mitchell.mitchell_round(order, 3, rounds=4) if t.ns == ns]
    with pytest.raises(ForbiddenPairingError) as refused:
        forbidden.forbid_pairing(tournament, third.ew, ns)
    assert "turno 3" in str(refused.value)
    assert not ForbiddenPairing.objects.exists()
    forbidden.forbid_pairing(tournament, *met)
    forbidden.forbid_pairing(tournament, order[0], order[2])  # both North-South
    Entry.objects.filter(line_id=third.ew).update(withdrawn=True)  # plays no more
    forbidden.forbid_pairing(tournament, third.ew, ns)
    assert ForbiddenPairing.objects.count() == 3
