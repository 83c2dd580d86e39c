"""Danish, Swiss and Mitchell stages through the services: pairing, byes, entries during the
event, the correction flag, and a mixed event that round-trips through the export."""

from __future__ import annotations

import json

import pytest

from tests.pages.factories import play_stage, winning_deals
from tournaments.algorithms import mitchell
from tournaments.exceptions import PairingError, ResultError
from tournaments.models import (
    ChangeLog,
    Entry,
    GroupMember,
    Match,
    MatchResult,
    Outcome,
    ResultVersion,
    Round,
    Stage,
)
from tournaments.services import pairing, results, schedule
from tournaments.services.export import build_document
from tournaments.services.importer import import_document
from tournaments.services.standings import stage_standings

from .conftest import make_tournament

pytestmark = pytest.mark.django_db

DANISH = {"name": "Danese", "kind": Stage.Kind.DANISH}


def _stage(tournament, order=1, **fields):
    fields.setdefault("name", "Turni")
    fields.setdefault("kind", Stage.Kind.DANISH)
    return Stage.objects.create(tournament=tournament, order=order, **fields)


def _pairs(round_row):
    return {
        frozenset((m.home_id, m.away_id))
        for m in round_row.matches.filter(away__isnull=False, home__isnull=False)
    }


def _byes(round_row):
    return list(round_row.matches.filter(outcome=Outcome.BYE).values_list("home_id", flat=True))


def test_danish_pairs_by_standing_without_rematches_and_scores_the_bye():
    tournament = make_tournament(n_lines=7)
    stage = _stage(tournament, rounds_planned=4)
    seen: set[frozenset[int]] = set()
    bye_lines = []
    for number in range(1, 5):
        round_row = pairing.pair_next_round(stage)
        assert round_row.number == number
        pairs = _pairs(round_row)
        assert not pairs & seen
        seen |= pairs
        bye_lines += _byes(round_row)
        play_stage(stage)
    assert len(bye_lines) == 4 and len(set(bye_lines)) == 4
    # a forfeit-win bye is worth what the VP table gives a forfeit winner
    bye = MatchResult.objects.filter(match__outcome=Outcome.BYE).first()
    assert bye.won and bye.vp > 0
    rows = stage_standings(stage)[0][1]
    assert sum(row.vp for row in rows) == sum(
        MatchResult.objects.filter(match__round__stage=stage).values_list("vp", flat=True)
    )
    with pytest.raises(PairingError):
        pairing.pair_next_round(stage)


def test_round_two_follows_round_one_standings():
    tournament = make_tournament(n_lines=8)
    stage = _stage(tournament)
    pairing.pair_next_round(stage)
    play_stage(stage)
    order = [row.line_id for row in pairing.open_standings(stage)]
    second = pairing.pair_next_round(stage)
    first_table = second.matches.get(table_number=1)
    assert first_table.home_id == order[0]


def test_next_round_waits_for_every_result():
    tournament = make_tournament(n_lines=6)
    stage = _stage(tournament)
    pairing.pair_next_round(stage)
    with pytest.raises(PairingError):
        pairing.pair_next_round(stage)


def test_set_vp_bye_and_check_in_leave_absent_lines_out():
    tournament = make_tournament(n_lines=8)
    stage = _stage(tournament, bye_scoring=Stage.ByeScoring.SET_VP, bye_vp=12)
    entries = list(Entry.objects.filter(tournament=tournament).order_by("seed", "id"))
    present = [e.line_id for e in entries[:5]]
    pairing.set_check_in(tournament, present)
    round_row = pairing.pair_next_round(stage)
    seated = {line for pair in _pairs(round_row) for line in pair} | set(_byes(round_row))
    assert seated == set(present)
    bye = MatchResult.objects.get(match__round=round_row, match__outcome=Outcome.BYE)
    assert bye.vp == 12


def test_withdrawal_takes_effect_from_the_next_round_and_late_entry_gets_missed_rounds():
    tournament = make_tournament(n_lines=6)
    stage = _stage(
        tournament, late_entry_until_round=3, bye_scoring=Stage.ByeScoring.SET_VP, bye_vp=10
    )
    pairing.pair_next_round(stage)
    play_stage(stage)
    gone = Entry.objects.filter(tournament=tournament).order_by("seed", "id").first()
    gone.withdrawn = True
    gone.save()
    from tournaments.services import entries

    entries.add_lines(
        tournament,
        [entries.LineRow(name="Ritardataria", players=[("Ultimo Arrivato", "")], row_number=99)],
    )
    late = Entry.objects.get(tournament=tournament, line__name="Ritardataria")
    second = pairing.pair_next_round(stage)
    seated = {line for pair in _pairs(second) for line in pair} | set(_byes(second))
    assert gone.line_id not in seated
    assert late.line_id in seated
    member = GroupMember.objects.get(group__stage=stage, line_id=late.line_id)
    assert member.joined_round == 2
    missed = MatchResult.objects.get(match__round__number=1, line_id=late.line_id)
    assert missed.vp == 10


def test_byes_are_result_versions_of_the_bye_source_and_flag_no_round(
    django_capture_on_commit_callbacks,
):
    tournament = make_tournament(n_lines=5)
    stage = _stage(
        tournament, late_entry_until_round=3, bye_scoring=Stage.ByeScoring.SET_VP, bye_vp=11
    )
    with django_capture_on_commit_callbacks(execute=True):
        first = pairing.pair_next_round(stage)
    bye = first.matches.get(outcome=Outcome.BYE)
    version = results.in_force(bye)
    assert version.source == "bye" and version.sheet["outcome"] == Outcome.BYE
    assert ChangeLog.objects.filter(match=bye, action="result.bye").count() == 1
    assert MatchResult.objects.get(match=bye).vp == 11
    play_stage(stage)
    with django_capture_on_commit_callbacks(execute=True):
        pairing.pair_next_round(stage)
    play_stage(stage)
    from tournaments.services import entries

    entries.add_lines(
        tournament,
        [entries.LineRow(name="Tardiva", players=[("Ultima Giunta", "")], row_number=99)],
    )
    late = Entry.objects.get(tournament=tournament, line__name="Tardiva")
    with django_capture_on_commit_callbacks(execute=True):
        third = pairing.pair_next_round(stage)
    missed = ResultVersion.objects.filter(
        match__home_id=late.line_id, match__round__number__lt=3, source="bye"
    )
    assert missed.count() == 2
    assert all(v.status == ResultVersion.Status.IN_FORCE for v in missed)
    # the missed rounds' byes are part of this draw, not corrections of the earlier rounds
    assert not Round.objects.filter(stage=stage, needs_review=True).exists()
    assert third.number == 3
    # one writer: nobody enters or deletes a bye's result by hand
    with pytest.raises(ResultError):
        results.delete_result(bye)


def test_a_correction_flags_the_next_round_which_can_be_kept_or_paired_again(
    django_capture_on_commit_callbacks,
):
    tournament = make_tournament(n_lines=8)
    stage = _stage(tournament)
    first = pairing.pair_next_round(stage)
    play_stage(stage)
    second = pairing.pair_next_round(stage)
    match = first.matches.filter(away__isnull=False).first()
    with django_capture_on_commit_callbacks(execute=True):
        results.enter_result(match, winning_deals(1 if match.winner_id == match.home_id else 0, 0))
    second.refresh_from_db()
    assert second.needs_review
    pairing.keep_round(second)
    second.refresh_from_db()
    assert not second.needs_review
    results.enter_result(match, winning_deals(0, 3))
    again = pairing.repair_round(second)
    assert again.number == 2 and not again.needs_review
    assert Round.objects.filter(stage=stage).count() == 2
    play_stage(stage, limit=1)
    with pytest.raises(PairingError):
        pairing.repair_round(again)


def test_a_correction_in_a_mitchell_round_flags_only_what_reads_the_standings(
    django_capture_on_commit_callbacks,
):
    tournament = make_tournament(n_lines=8)
    movement = _stage(tournament, kind=Stage.Kind.MITCHELL, rounds_planned=2)
    first = pairing.pair_next_round(movement)
    play_stage(movement)
    second = pairing.pair_next_round(movement)
    match = first.matches.filter(away__isnull=False).first()
    with django_capture_on_commit_callbacks(execute=True):
        results.enter_result(match, winning_deals(1 if match.winner_id == match.home_id else 0, 0))
    second.refresh_from_db()
    assert not second.needs_review, "the movement does not depend on the results"
    play_stage(movement)
    schedule.close_stage(movement)
    danish_stage = _stage(tournament, order=2, name="Danese")
    danish_round = pairing.pair_next_round(danish_stage)
    from tournaments.services import lifecycle

    lifecycle.reopen_stage(movement)
    with django_capture_on_commit_callbacks(execute=True):
        results.enter_result(match, winning_deals(1 if match.winner_id == match.home_id else 0, 0))
    danish_round.refresh_from_db()
    assert danish_round.needs_review, "the Danish stage pairs on the Mitchell standings"


def test_swiss_pairs_through_the_library_and_our_standings_are_its_input():
    tournament = make_tournament(n_lines=9)
    stage = _stage(tournament, kind=Stage.Kind.SWISS, rounds_planned=4)
    seen: set[frozenset[int]] = set()
    for _number in range(4):
        round_row = pairing.pair_next_round(stage)
        pairs = _pairs(round_row)
        assert not pairs & seen
        seen |= pairs
        play_stage(stage)
    group = pairing.open_group(stage)
    order = list(group.members.order_by("position").values_list("line_id", flat=True))
    from tournaments.algorithms import swiss

    played_rounds = []
    for round_row in Round.objects.filter(stage=stage).order_by("number"):
        vp = {}
        for result in MatchResult.objects.filter(match__round=round_row):
            vp[result.line_id] = vp.get(result.line_id, 0) + result.vp
        played_rounds.append(
            swiss.PlayedRound(
                pairs=[
                    (m.home_id, m.away_id) for m in round_row.matches.filter(away__isnull=False)
                ],
                byes=_byes(round_row),
                vp=vp,
            )
        )
    lines, played = swiss.line_histories(order, played_rounds)
    standings = {row.line_id: row.vp for row in pairing.open_standings(stage)}
    assert {line.id: line.score for line in lines} == standings
    assert all(len(line.floats) == 4 and len(line.sides) == 4 - line.byes for line in lines)
    assert sum(line.byes for line in lines) == 4
    assert len(played) == 4 * 4


def test_a_late_swiss_line_missed_rounds_score_but_are_not_the_draws_byes(monkeypatch):
    from tournaments.algorithms import swiss

    tournament = make_tournament(n_lines=6)
    stage = _stage(
        tournament,
        kind=Stage.Kind.SWISS,
        late_entry_until_round=2,
        bye_scoring=Stage.ByeScoring.SET_VP,
        bye_vp=10,
    )
    pairing.pair_next_round(stage)
    play_stage(stage)
    late = _late_line(tournament, "Tardiva svizzera")
    seen = {}
    real = swiss.pair_swiss

    def spy(lines, played, **kwargs):
        seen.update({line.id: line for line in lines})
        return real(lines, played, **kwargs)

    monkeypatch.setattr(swiss, "pair_swiss", spy)
    second = pairing.pair_next_round(stage)
    assert seen[late].score == 10 and seen[late].byes == 0
    # seven lines now: the draw's bye may go to the late line, and it counts as a bye then
    assert len(_byes(second)) == 1


def test_a_swiss_stage_too_large_for_the_dutch_engine_is_refused_before_pairing(monkeypatch):
    from tournaments.algorithms import swiss

    monkeypatch.setattr(swiss, "MAX_LINES", 4)
    tournament = make_tournament(n_lines=5)
    stage = _stage(tournament, kind=Stage.Kind.SWISS)
    with pytest.raises(PairingError, match="alla danese"):
        pairing.pair_next_round(stage)
    assert not Round.objects.filter(stage=stage).exists()


def test_mitchell_stage_follows_the_movement_and_cards_say_where_next():
    tournament = make_tournament(n_lines=10)
    stage = _stage(tournament, kind=Stage.Kind.MITCHELL, rounds_planned=3, arrow_switch=True)
    round_row = pairing.pair_next_round(stage)
    group = pairing.open_group(stage)
    order = list(group.members.order_by("position").values_list("line_id", flat=True))
    expected = mitchell.mitchell_round(order, 1, rounds=3, arrow_switch=True)
    assert {(m.table_number, m.home_id, m.away_id) for m in round_row.matches.all()} == {
        (t.table, t.home, t.away) for t in expected
    }
    nxt = pairing.mitchell_next_seats(stage, 1)
    ew = order[1]
    assert nxt[ew].table == 2 and nxt[ew].direction is mitchell.Direction.EAST_WEST
    assert nxt[order[0]].table == 1
    play_stage(stage)
    pairing.pair_next_round(stage)
    play_stage(stage)
    last = pairing.pair_next_round(stage)
    # arrow switch: East-West lines are home in the last round
    directions = pairing.line_directions(stage)
    assert all(
        directions[m.home_id] is mitchell.Direction.EAST_WEST
        for m in last.matches.filter(away__isnull=False)
    )


def _late_line(tournament, name):
    from tournaments.services import entries

    entries.add_lines(
        tournament, [entries.LineRow(name=name, players=[("Ultimo Arrivato", "")], row_number=99)]
    )
    return Entry.objects.get(tournament=tournament, line__name=name).line_id


def test_mitchell_late_pair_takes_the_empty_east_west_seat_else_is_refused():
    tournament = make_tournament(n_lines=9)
    stage = _stage(tournament, kind=Stage.Kind.MITCHELL, late_entry_until_round=2)
    first = pairing.pair_next_round(stage)
    assert len(_byes(first)) == 1  # the North-South line facing the empty seat
    play_stage(stage)
    late = _late_line(tournament, "Ritardataria")
    second = pairing.pair_next_round(stage)
    order = list(
        pairing.open_group(stage).members.order_by("position").values_list("line_id", flat=True)
    )
    assert order[-1] == late and len(order) == 10
    expected = mitchell.mitchell_round(order, 2, rounds=5)
    assert {(m.table_number, m.home_id, m.away_id) for m in second.matches.all()} == {
        (t.table, t.home, t.away) for t in expected
    }
    assert not _byes(second), "the late pair fills the empty seat: nobody sits out"
    missed = MatchResult.objects.get(match__round=first, line_id=late)
    assert missed.match.outcome == Outcome.BYE
    play_stage(stage)
    # a second late pair has no seat left: refused with a message, nothing saved
    _late_line(tournament, "Seconda ritardataria")
    stage.late_entry_until_round = 3
    stage.save()
    with pytest.raises(PairingError, match="Mitchell"):
        pairing.pair_next_round(stage)
    assert Round.objects.filter(stage=stage).count() == 2


def test_a_line_with_a_bye_gets_a_table_card_that_says_so(client):
    from django.contrib.auth.models import User
    from django.urls import reverse
    from django.utils import translation

    tournament = make_tournament(n_lines=9)
    stage = _stage(tournament, kind=Stage.Kind.MITCHELL, rounds_planned=3)
    round_row = pairing.pair_next_round(stage)
    bye = round_row.matches.get(outcome=Outcome.BYE)
    user = User.objects.create_user("direttrice", password="x-pass-12345")
    tournament.organizers.add(user)
    client.force_login(user)
    with translation.override("en"):
        page = client.get(
            reverse("desk:print", args=[tournament.slug, round_row.pk]), HTTP_ACCEPT_LANGUAGE="en"
        ).content.decode()
    assert "sits out this round" in page
    card = page[page.index("sits out this round") - 600 :]
    assert bye.home.name in card
    assert f"next round: table {bye.table_number}, North-South" in card


def test_mixed_event_mitchell_danish_knockout_round_trips_through_the_export():
    tournament = make_tournament(n_lines=48, slug="open-misto")
    mitchell_stage = _stage(
        tournament, order=1, name="Mitchell", kind=Stage.Kind.MITCHELL, rounds_planned=3
    )
    danish_stage = _stage(
        tournament,
        order=2,
        name="Danese",
        kind=Stage.Kind.DANISH,
        rounds_planned=3,
        advance_count=8,
    )
    ko = _stage(tournament, order=3, name="Finali", kind=Stage.Kind.KNOCKOUT)
    for _number in range(3):
        pairing.pair_next_round(mitchell_stage)
        play_stage(mitchell_stage)
    schedule.close_stage(mitchell_stage)
    met = {
        frozenset((m.home_id, m.away_id)) for m in Match.objects.filter(round__stage=mitchell_stage)
    }
    for _number in range(3):
        round_row = pairing.pair_next_round(danish_stage)
        assert not _pairs(round_row) & met, "no rematch of the Mitchell rounds either"
        met |= _pairs(round_row)
        play_stage(danish_stage)
    top8 = [row.line_id for row in pairing.open_standings(danish_stage)][:8]
    schedule.close_stage(danish_stage)
    first_ko = ko.rounds.get(number=1)
    assert {line for m in first_ko.matches.all() for line in (m.home_id, m.away_id)} == set(top8)
    for _number in range(3):
        play_stage(ko)
    assert (
        not Match.objects.filter(round__stage__tournament=tournament)
        .exclude(status=Match.Status.DONE)
        .exists()
    )
    # Danish standings carry the Mitchell rounds over: 6 rounds for every line
    rows = pairing.open_standings(danish_stage)
    assert all(row.played + row.byes == 6 for row in rows)

    Entry.objects.filter(tournament=tournament).update(checked_in=True)
    first = build_document(tournament)
    assert all(line["checked_in"] for line in first["lines"] if line["entered"])
    copy = import_document(json.loads(json.dumps(first)), slug="open-misto-copia")
    again = build_document(copy)
    for doc in (first, again):
        # a drawing of lots depends on the new rows' ids; everything else must come back
        for stage_doc in doc["stages"]:
            for group in stage_doc["groups"]:
                group.pop("standings")
    assert json.dumps(again["stages"], sort_keys=True) == json.dumps(
        first["stages"], sort_keys=True
    )
    assert {s["kind"] for s in again["stages"]} == {"mitchell", "danish", "knockout"}
    assert again["stages"][1]["pairing"]["advance_count"] == 8
    assert again["lines"] == first["lines"]
    assert Entry.objects.filter(tournament=copy, checked_in=True).count() == 48


def test_a_swiss_stage_tells_the_engine_which_round_it_pairs(monkeypatch):
    # The Dutch rules read the round's number: round 1 pairs the top half against the bottom
    # half by start number (colours alternating from the top seed's, the bye to the last), and
    # the last round relaxes the colour rules for the top scorers of the rounds played. The
    # service used to count the round it had just created as played, so the engine paired the
    # stage's first round as round 2 (and every later one a round too late).
    from tournaments.algorithms import swiss

    told = []
    real = swiss.pair_swiss

    def spy(lines, played, **kwargs):
        told.append((kwargs["round_number"], kwargs["total_rounds"]))
        return real(lines, played, **kwargs)

    monkeypatch.setattr(swiss, "pair_swiss", spy)
    tournament = make_tournament(n_lines=7)
    stage = _stage(tournament, kind=Stage.Kind.SWISS, rounds_planned=3)
    first = pairing.pair_next_round(stage)
    order = list(
        pairing.open_group(stage).members.order_by("position").values_list("line_id", flat=True)
    )
    assert [
        (m.table_number, m.home_id, m.away_id)
        for m in first.matches.filter(away__isnull=False).order_by("table_number")
    ] == [(1, order[0], order[3]), (2, order[4], order[1]), (3, order[2], order[5])]
    assert _byes(first) == [order[6]]
    for _number in range(2):
        play_stage(stage)
        pairing.pair_next_round(stage)
    assert told == [(1, 3), (2, 3), (3, 3)]
