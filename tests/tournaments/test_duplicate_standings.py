"""A duplicate stage's standings and qualification read from its scores against the field: the
worked example of docs/tournament-core.md ("Duplicate") played on the database, ranked digit for
digit per direction (matchpoints, then VP of the differences), the director's adjusted board,
the columns in the export and the API, and the knock-out seeded from each direction's top."""

import json

import pytest

from tests.algorithms.test_duplicate import ORDER, PLAYED, SESSION
from tests.tournaments.conftest import make_tournament
from tests.tournaments.helpers import deals
from tournaments.exceptions import BoardRulingError, ScheduleError
from tournaments.models import BoardAdjustment, BoardSet, ChangeLog, Match, Stage, VPTable
from tournaments.services import (
    duplicate,
    export,
    lifecycle,
    qualification,
    results,
    schedule,
    standings,
)
from tournaments.services.importer import import_document

pytestmark = pytest.mark.django_db

DUPLICATE = {"name": "Smazzate ripetute", "kind": Stage.Kind.DUPLICATE}
KO = {"name": "Finale", "kind": Stage.Kind.KNOCKOUT}


def _example(scoring=BoardSet.Scoring.MATCHPOINTS, stages=(DUPLICATE,), arrow_switch=False):
    """The docs' session: 8 lines (N1, E1, N2, ... in seed order), 4 rounds of 2 boards, board 5
    at table 4 not played (entered 0-0, ruled neither at fault)."""
    tournament = make_tournament("scopa-tre-smazzate", n_lines=8, stages=list(stages), end_value=2)
    tournament.vp_table = VPTable.objects.get(slug="points-7")
    tournament.save()
    stage = tournament.stages.order_by("order").first()
    board_set = duplicate.draw_duplicate(
        stage, seed="esempio", scoring=scoring, arrow_switch=arrow_switch
    )
    names = {
        line.pk: name for line, name in zip(schedule.seeded_lines(tournament), ORDER, strict=True)
    }
    for match in Match.objects.filter(round__stage=stage).select_related("round"):
        played = PLAYED[(match.round.number, match.table_number)]
        results.save_result(match, deals(*(p or (0, 0) for p in played)))
        if played[0] is None:
            duplicate.rule_board(
                match,
                duplicate.board_numbers_of_match(match)[0],
                kind=BoardAdjustment.Kind.NOT_PLAYED,
                fault=BoardAdjustment.Fault.NEITHER,
                note="mazzo preparato male",
            )
    return tournament, stage, board_set, names


def _shown(stage, names):
    ((_group, rows),) = standings.stage_standings(stage)
    return [
        (row.direction, row.rank, names[row.line.pk], row.field_score, row.field_percentage, row.vp)
        for row in rows
    ]


def test_matchpoints_rank_each_direction_by_percentage_digit_for_digit():
    _tournament, stage, _board_set, names = _example()
    shown = [
        (d, rank, name, score, f"{float(pct):.2f}")
        for d, rank, name, score, pct, _vp in _shown(stage, names)
    ]
    assert shown == [
        ("ns", 1, "N3", SESSION["N3"][0], "67.36"),
        ("ns", 2, "N1", SESSION["N1"][0], "45.83"),
        ("ns", 3, "N2", SESSION["N2"][0], "45.14"),
        ("ns", 4, "N4", SESSION["N4"][0], "42.92"),
        ("ew", 1, "E3", SESSION["E3"][0], "59.72"),
        ("ew", 2, "E1", SESSION["E1"][0], "54.86"),
        ("ew", 3, "E4", SESSION["E4"][0], "45.00"),
        ("ew", 4, "E2", SESSION["E2"][0], "41.67"),
    ]


def test_differences_rank_each_direction_by_their_vp_digit_for_digit():
    _tournament, stage, _board_set, names = _example(BoardSet.Scoring.DIFFERENCE)
    shown = [(d, rank, name, score, vp) for d, rank, name, score, pct, vp in _shown(stage, names)]
    assert shown == [
        ("ns", 1, "N3", SESSION["N3"][2], 46),
        ("ns", 2, "N1", SESSION["N1"][2], 41),
        ("ns", 3, "N2", SESSION["N2"][2], 38),
        ("ns", 4, "N4", SESSION["N4"][2], 37),
        ("ew", 1, "E3", SESSION["E3"][2], 46),
        ("ew", 2, "E1", SESSION["E1"][2], 42),
        ("ew", 3, "E2", SESSION["E2"][2], 36),
        ("ew", 4, "E4", SESSION["E4"][2], 35),
    ]


def test_the_ruling_is_what_the_board_scores_and_it_is_logged():
    _tournament, stage, board_set, names = _example()
    match = Match.objects.get(round__stage=stage, round__number=4, table_number=4)
    assert ChangeLog.objects.filter(action="board.ruled", match=match).count() == 1
    five = {names[s.line]: s for s in duplicate.scores(board_set) if s.board == 5}
    assert five["N4"].adjusted and float(five["N4"].score) == 3.6
    # withdrawn, the 0-0 entered for the board counts: N4 is compared like everyone else
    assert duplicate.clear_ruling(match, 5)
    five = {names[s.line]: s for s in duplicate.scores(board_set) if s.board == 5}
    assert not five["N4"].adjusted and five["N4"].score == 2  # 0 beats N3's -1 only
    assert ChangeLog.objects.filter(action="board.ruling_cleared", match=match).exists()
    with pytest.raises(BoardRulingError, match=r"Board 1|smazzata 1"):
        duplicate.rule_board(match, 1, kind="fouled", fault="ns")
    with pytest.raises(BoardRulingError):
        duplicate.rule_board(match, 5, kind="fouled", fault="nobody")


def test_the_export_and_the_api_carry_the_score_against_the_field(client):
    tournament, stage, _board_set, _names = _example()

    doc = export.build_document(tournament)
    rows = doc["stages"][0]["groups"][0]["standings"]
    assert [(r["direction"], r["rank"], r["field_percentage"]) for r in rows][:2] == [
        ("ns", 1, 67.36),
        ("ns", 2, 45.83),
    ]
    assert rows[0]["field_score"] == 32.33
    csv_lines = export.standings_csv(doc).decode().splitlines()
    assert csv_lines[0].endswith("penalty,direction,field_score,field_percentage")
    assert csv_lines[1].endswith(",ns,32.33,67.36")
    api = client.get(f"/api/v1/stages/{stage.pk}/standings/").json()
    first = api[0]["rows"][0]
    assert (first["direction"], first["field_score"], first["field_percentage"]) == (
        "ns",
        32.33,
        67.36,
    )


def test_the_knockout_is_seeded_from_each_directions_top():
    tournament, stage, _board_set, names = _example(stages=(DUPLICATE, KO))
    stage.advance_count = 4
    stage.save()
    schedule.close_stage(stage)
    final = tournament.stages.get(kind=Stage.Kind.KNOCKOUT)
    first_round = Match.objects.filter(round__stage=final, round__number=1).order_by(
        "bracket_position"
    )
    met = {frozenset((names[m.home_id], names[m.away_id])) for m in first_round}
    # seeds N3 (67.36), E3 (59.72), E1 (54.86), N1 (45.83): 1 v 4 and 2 v 3
    assert met == {frozenset(("N3", "N1")), frozenset(("E3", "E1"))}


def test_a_duplicate_stage_without_boards_cannot_seed_a_knockout():
    tournament = make_tournament(
        "scopa-tre-smazzate", n_lines=8, stages=[DUPLICATE, KO], end_value=2
    )
    stage = tournament.stages.get(kind=Stage.Kind.DUPLICATE)

    with pytest.raises(ScheduleError):
        qualification.duplicate_seeds(stage, 4)


def test_the_difference_method_needs_a_table_of_margins():
    tournament = make_tournament("scopa-tre-smazzate", n_lines=8, stages=[DUPLICATE], end_value=2)
    tournament.vp_table = VPTable.objects.get(slug="win-draw-loss")
    tournament.save()
    with pytest.raises(ScheduleError, match=r"margin|scarti"):
        duplicate.draw_duplicate(tournament.stages.get(), scoring=BoardSet.Scoring.DIFFERENCE)


def test_the_arrow_switch_seats_the_east_west_lines_north_south_and_ranks_one_field():
    _tournament, stage, board_set, names = _example(arrow_switch=True)
    last = Match.objects.filter(round__stage=stage, round__number=4).order_by("table_number")
    # the last round's home (North-South) seat goes to the East-West line of the start order
    assert [(names[m.home_id], names[m.away_id]) for m in last] == [
        ("E1", "N1"),
        ("E2", "N2"),
        ("E3", "N3"),
        ("E4", "N4"),
    ]
    ((_group, rows),) = standings.stage_standings(stage)
    assert {row.direction for row in rows} == {""} and len(rows) == 8
    assert [row.rank for row in rows] == sorted(row.rank for row in rows)
    percentages = [row.field_percentage for row in rows]
    assert percentages == sorted(percentages, reverse=True)
    # board 7 at round 4 table 1: E1 sits North-South and is compared with N2, N3, N4 there
    seven = {names[s.line]: s.score for s in duplicate.scores(board_set) if s.board == 7}
    assert (seven["E1"], seven["N1"]) == (3, 3)
    doc = duplicate.export_doc(board_set, str)
    assert doc["arrow_switch"] is True
    # a following knock-out takes the top of the one ranking
    stage.advance_count = 2
    assert qualification.duplicate_seeds(stage, 2) == [row.line for row in rows[:2]]


def test_the_export_carries_the_rulings_and_the_arrow_switch_and_the_import_ranks_alike():
    for arrow_switch in (False, True):
        tournament, _stage, board_set, _names = _example(arrow_switch=arrow_switch)
        doc = json.loads(json.dumps(export.build_document(tournament)))
        ruled = [
            m["board_rulings"]
            for r in doc["stages"][0]["rounds"]
            for m in r["matches"]
            if m.get("board_rulings")
        ]
        # the director's note stays on the desk: the export is public
        assert ruled == [[{"board": 5, "kind": "not_played", "fault": "neither"}]]
        assert doc["stages"][0]["duplicate"]["arrow_switch"] is arrow_switch
        copy = import_document(doc, slug=f"copia-{int(arrow_switch)}")
        again = BoardSet.objects.get(stage__tournament=copy)
        assert again.arrow_switch is arrow_switch
        original = [
            (r.rank, r.direction, r.score, r.vp) for r in duplicate.field_ranking(board_set)
        ]
        copied = [(r.rank, r.direction, r.score, r.vp) for r in duplicate.field_ranking(again)]
        # the ruling came back too: without it board 5's 0-0 would be scored at table 4
        assert copied == original


def test_a_correction_that_changes_a_duplicate_stages_qualifiers_is_reported_and_reseeded():
    _tournament, stage, _board_set, names = _example(stages=(DUPLICATE, KO))
    stage.advance_count = 4
    stage.save()
    schedule.close_stage(stage)
    assert lifecycle.qualifier_drift(stage) is None
    lifecycle.reopen_stage(stage)
    # N1 loses both boards of round 1 0-4 (it won 3-1 and drew 2-2). By hand: on board 1 N1 goes
    # from 4 to 0 matchpoints, N4 from 2 to 4, N2 from 0 to 2; on board 2 N1 from 2 to 0, N4 from
    # 0 to 2. N1 22 - 6 = 16, N2 65/3 + 2 = 71/3, N4 20.6 + 4 = 24.6: N4 is now second.
    match = Match.objects.get(round__stage=stage, round__number=1, table_number=1)
    results.save_result(match, deals((0, 4), (0, 4)), based_on=1)
    drift = lifecycle.qualifier_drift(stage)
    assert drift is not None, "the bracket keeps the old qualifier silently"
    assert {names[line.pk] for line in drift.out} == {"N1"}
    assert {names[line.pk] for line in drift.into} == {"N4"}
    assert lifecycle.reseed_unplayed(stage) >= 1
    assert lifecycle.qualifier_drift(stage) is None


@pytest.mark.parametrize(
    "spoil",
    [{"fault": "zzz"}, {"kind": "lost"}, {"board": 99}],
    ids=["fault", "kind", "board"],
)
def test_a_file_with_a_ruling_this_product_cannot_score_is_refused(spoil):
    from tournaments.services.importer import TournamentImportError

    tournament, _stage, _board_set, _names = _example()
    doc = json.loads(json.dumps(export.build_document(tournament)))
    ruled = next(
        m for r in doc["stages"][0]["rounds"] for m in r["matches"] if m.get("board_rulings")
    )
    ruled["board_rulings"][0].update(spoil)
    with pytest.raises(TournamentImportError, match=r"decisione su una smazzata|board ruling"):
        import_document(doc, slug="copia")


def test_a_closed_stages_boards_take_no_ruling_nor_its_withdrawal():
    _tournament, stage, board_set, _names = _example()
    ranking = [(r.line, r.score) for r in duplicate.field_ranking(board_set)]
    ruled = BoardAdjustment.objects.get()
    Stage.objects.filter(pk=stage.pk).update(status=Stage.Status.CLOSED)
    match = Match.objects.get(pk=ruled.match_id)
    other = next(b for b in duplicate.board_numbers_of_match(match) if b != ruled.board)
    with pytest.raises(BoardRulingError):
        duplicate.rule_board(match, other, kind="fouled", fault="ns")
    with pytest.raises(BoardRulingError):
        duplicate.clear_ruling(match, ruled.board)
    assert [(r.line, r.score) for r in duplicate.field_ranking(board_set)] == ranking


def test_a_penalty_under_matchpoints_takes_percentage_points_off():
    """The penalty table's deduction counts its VP as percentage points by matchpoints: N3's
    67.36 % less 2 is 65.36 % (still first); less 25 more it falls below N1's 45.83 %."""
    from tournaments.services import penalties

    tournament, stage, _board_set, names = _example()
    n3 = next(pk for pk, name in names.items() if name == "N3")
    match = Match.objects.filter(round__stage=stage, home_id=n3).first()
    late = penalties.add_rule(tournament, label="Ritardo", kind="deduction", vp=2)
    penalties.apply_penalty(match, n3, late.pk, reason="arrivata tardi")
    shown = {n: (rank, round(float(p), 2)) for _d, rank, n, _s, p, _vp in _shown(stage, names)}
    assert shown["N3"] == (1, 65.36) and shown["N1"] == (2, 45.83)
    heavy = penalties.add_rule(tournament, label="Comportamento", kind="deduction", vp=25)
    penalties.apply_penalty(match, n3, heavy.pk, reason="discussione al tavolo")
    shown = {n: (rank, round(float(p), 2)) for _d, rank, n, _s, p, _vp in _shown(stage, names)}
    assert shown["N3"] == (4, 40.36) and shown["N1"] == (1, 45.83)


def test_tables_that_held_a_misprepared_deck_are_compared_among_themselves():
    """Board 7 of the docs' session: tables 4 (round 1) and 3 (round 2) held the same wrong
    deck "B" and played it. N4 +4 beats N3 0 there, N1 0 beats N2 −3 on the deck as prepared;
    each pair is factored to the full top 6 (E = 4, N = 2): 5 and 1."""
    tournament, stage, board_set, names = _example()
    for number, table in ((1, 4), (2, 3)):
        match = Match.objects.get(round__stage=stage, round__number=number, table_number=table)
        duplicate.rule_board(match, 7, kind="other_deck", fault="neither", deck=" b ")
    seven = {names[s.line]: s for s in duplicate.scores(board_set) if s.board == 7}
    assert {n: seven[n].score for n in ("N4", "N3", "N1", "N2")} == {
        "N4": 5,
        "N3": 1,
        "N1": 5,
        "N2": 1,
    }
    assert all(s.factored and not s.adjusted for s in seven.values())
    doc = json.loads(json.dumps(export.build_document(tournament)))
    rulings = [
        a
        for r in doc["stages"][0]["rounds"]
        for m in r["matches"]
        for a in m.get("board_rulings", [])
    ]
    assert {"board": 7, "kind": "other_deck", "fault": "neither", "deck": "b"} in rulings
    copy = import_document(doc, slug="copia-mazzo-b")
    again = BoardSet.objects.get(stage__tournament=copy)
    copied = sorted(float(s.score) for s in duplicate.scores(again) if s.board == 7)
    assert copied == sorted(float(s.score) for s in seven.values())
