"""A duplicate stage on the database: the board set stored with the stage, the movement drawn
at once, results read board by board from the results in force, the secrecy rules, and records
held to their table's boards when they are submitted."""

from fractions import Fraction
from itertools import pairwise

import pytest

import scopa
from games.exceptions import RecordMismatch
from games.services import check_record_fits
from tests.tournaments.conftest import make_tournament
from tests.tournaments.helpers import deals
from tournaments.algorithms import duplicate as scoring
from tournaments.algorithms import duplicate_movement
from tournaments.exceptions import ScheduleError
from tournaments.models import BoardSet, Match, Stage
from tournaments.services import duplicate, results, schedule

pytestmark = pytest.mark.django_db

DUPLICATE = {"name": "Smazzate ripetute", "kind": Stage.Kind.DUPLICATE}


def _tournament(n_lines, per_round=2):
    return make_tournament(
        "scopa-tre-smazzate", n_lines=n_lines, stages=[DUPLICATE], end_value=per_round
    )


def _points(match, board):
    """Some points that differ from board to board and table to table."""
    return ((board * 3 + match.table_number) % 5, (board + 2 * match.round.number) % 4)


def _play(match, board_set):
    numbers = duplicate.board_numbers_of_match(match)
    results.save_result(match, deals(*(_points(match, b) for b in numbers)))


def test_the_board_set_is_stored_with_the_stage_and_rebuilt_from_its_seed():
    tournament = _tournament(8)
    stage = tournament.stages.get()
    board_set = duplicate.draw_duplicate(stage, seed="serata-1")
    assert board_set.boards_per_round == 2
    assert duplicate.boards_of(board_set) == scopa.board_set(
        "serata-1", 8, variant="scopa", seat_count=2
    )
    order = schedule.seeded_lines(tournament)
    movement = duplicate_movement.mitchell_movement([line.pk for line in order], 2)
    stored = {
        (m.round.number, m.table_number, m.home_id, m.away_id)
        for m in Match.objects.filter(round__stage=stage)
    }
    assert stored == {(t.round, t.table, t.ns, t.ew) for ts in movement for t in ts}
    match = Match.objects.get(round__stage=stage, round__number=2, table_number=1)
    assert duplicate.board_numbers_of_match(match) == (3, 4)
    assert [b.number for b in duplicate.boards_of_match(match)] == [3, 4]
    assert not duplicate.seed_is_open(board_set)
    stage.status = Stage.Status.CLOSED
    stage.save()
    assert duplicate.seed_is_open(BoardSet.objects.get(stage=stage))


def test_a_fresh_seed_is_secret_and_differs_each_time():
    first = duplicate.draw_duplicate(_tournament(6).stages.get())
    second = duplicate.draw_duplicate(_tournament(6).stages.get())
    assert len(first.seed) == 16 and first.seed != second.seed


def test_a_duplicate_stage_needs_matches_that_end_by_deals_and_enough_tables():
    eleven = make_tournament(n_lines=8, stages=[DUPLICATE])
    with pytest.raises(ScheduleError, match=r"numero di smazzate|number of deals"):
        duplicate.draw_duplicate(eleven.stages.get())
    howell = duplicate.draw_duplicate(_tournament(4).stages.get(), movement="howell")
    assert Match.objects.filter(round__stage=howell.stage).count() == 6
    # two tables cannot skip: their Mitchell plays the relay (test_duplicate_relay.py)
    two_tables = duplicate.draw_duplicate(_tournament(4).stages.get())
    assert two_tables.relay and Match.objects.filter(round__stage=two_tables.stage).count() == 4


def test_boards_stay_secret_until_every_table_holding_them_has_played():
    tournament = _tournament(6)  # 3 tables, 3 rounds, boards 1-6
    stage = tournament.stages.get()
    board_set = duplicate.draw_duplicate(stage, seed="s")
    matches = list(Match.objects.filter(round__stage=stage).select_related("round"))
    last = matches.pop()
    for match in matches:
        _play(match, board_set)
    held_by_last = set(duplicate.board_numbers_of_match(last))
    assert duplicate.open_boards(board_set) == set(range(1, 7)) - held_by_last
    assert duplicate.traveller(board_set, min(held_by_last)) is None
    _play(last, board_set)
    assert duplicate.open_boards(board_set) == set(range(1, 7))
    traveller = duplicate.traveller(board_set, 1)
    assert traveller is not None and len(traveller) == 3


def test_scores_read_the_deals_in_force_board_by_board():
    tournament = _tournament(8)
    stage = tournament.stages.get()
    board_set = duplicate.draw_duplicate(stage, seed="s")
    matches = list(Match.objects.filter(round__stage=stage).select_related("round"))
    plain = []
    for match in matches:
        _play(match, board_set)
        for board in duplicate.board_numbers_of_match(match):
            ns, ew = _points(match, board)
            plain.append(
                scoring.BoardResult(board, match.table_number, match.home_id, match.away_id, ns, ew)
            )
    got = scoring.totals(duplicate.scores(board_set))
    want = scoring.totals(scoring.matchpoints(plain))
    assert {line: t.score for line, t in got.items()} == {line: t.score for line, t in want.items()}
    assert all(t.top == 4 * 2 * 6 for t in got.values())  # 4 rounds x 2 boards x top 6
    assert sum(t.score for t in got.values()) == 8 * 2 * 4 * 3  # n(n-1) a board and direction
    board_set.scoring = BoardSet.Scoring.DIFFERENCE
    diff = scoring.totals(duplicate.scores(board_set))
    assert sum(t.score for t in diff.values()) == Fraction(0)


def _record_on(match, boards):
    return scopa.simulate_match(
        variant="scopa", seats=2, decks=[(b.dealer, b.deck) for b in boards], seed=match.pk
    )


def test_a_record_on_its_boards_fits_and_one_on_other_cards_is_refused():
    stage = _tournament(6).stages.get()
    duplicate.draw_duplicate(stage, seed="s")
    match = Match.objects.get(round__stage=stage, round__number=1, table_number=2)
    boards = duplicate.boards_of_match(match)
    check_record_fits(match, _record_on(match, boards))
    other = Match.objects.get(round__stage=stage, round__number=1, table_number=1)
    with pytest.raises(RecordMismatch) as refused:
        check_record_fits(match, _record_on(match, duplicate.boards_of_match(other)))
    assert refused.value.code == "wrong_board"
    assert refused.value.field == "deals[0]"
    assert "smazzata preparata n. 3" in str(refused.value.message)


def test_the_export_keeps_the_secrets_and_the_import_rebuilds_the_board_set():
    import json

    from tournaments.services import export
    from tournaments.services.importer import TournamentImportError, import_document

    tournament = _tournament(6)
    stage = tournament.stages.get()
    board_set = duplicate.draw_duplicate(stage, seed="s")
    matches = list(Match.objects.filter(round__stage=stage).select_related("round"))
    for match in matches[:-1]:
        _play(match, board_set)
    doc = json.loads(json.dumps(export.build_document(tournament)))
    exported = doc["stages"][0]["duplicate"]
    assert exported["seed"] is None
    secret = set(duplicate.board_numbers_of_match(matches[-1]))
    assert {row["number"] for row in exported["boards"] if "deck" not in row} == secret
    with pytest.raises(TournamentImportError, match=r"segrete|secret"):
        import_document(doc, slug="copia-segreta")
    _play(matches[-1], board_set)
    stage.status = Stage.Status.CLOSED
    stage.save()
    doc = json.loads(json.dumps(export.build_document(tournament)))
    assert doc["stages"][0]["duplicate"]["seed"] == "s"
    copy = import_document(doc, slug="copia")
    again = BoardSet.objects.get(stage__tournament=copy)
    assert duplicate.boards_of(again) == duplicate.boards_of(board_set)
    assert (again.movement, again.scoring, again.boards_per_round) == ("mitchell", "matchpoints", 2)
    assert len(again.start_order) == 6
    got = scoring.totals(duplicate.scores(again))
    want = scoring.totals(duplicate.scores(board_set))
    assert sorted(t.score for t in got.values()) == sorted(t.score for t in want.values())
    doc["stages"][0]["duplicate"]["boards"][0]["deck"][0:2] = doc["stages"][0]["duplicate"][
        "boards"
    ][0]["deck"][1::-1]
    with pytest.raises(TournamentImportError, match=r"seme|seed"):
        import_document(doc, slug="copia-falsa")


def test_the_ranking_counts_only_the_open_boards_while_the_session_runs(client):
    """A board some table has still to play takes no part in the ranking: it would tell that
    table how the board goes, and compare the lines that played it on part of the field."""
    from tournaments.services import standings

    tournament = _tournament(6)  # 3 tables, 3 rounds, boards 1-6, each played 3 times
    stage = tournament.stages.get()
    board_set = duplicate.draw_duplicate(stage, seed="s")
    matches = list(Match.objects.filter(round__stage=stage).select_related("round"))
    last = matches.pop()
    for match in matches:
        _play(match, board_set)
    secret = set(duplicate.board_numbers_of_match(last))
    played = {line: set() for line in board_set.start_order}
    for match in matches:
        for board in duplicate.board_numbers_of_match(match):
            if board not in secret:
                played[match.home_id].add(board)
                played[match.away_id].add(board)
    ranking = duplicate.field_ranking(board_set)
    assert {row.line: row.boards for row in ranking} == {k: len(v) for k, v in played.items()}
    assert all(row.top == 4 * row.boards for row in ranking)  # E = 3: top 2·(3 − 1) a board

    # a correction on a secret board moves nothing anyone can see
    holder = next(m for m in matches if secret & set(duplicate.board_numbers_of_match(m)))
    index = duplicate.board_numbers_of_match(holder).index(
        min(secret & set(duplicate.board_numbers_of_match(holder)))
    )
    points = [_points(holder, b) for b in duplicate.board_numbers_of_match(holder)]
    points[index] = (9, 0) if points[index][0] < 9 else (0, 9)
    shown = [(r.line, r.field_score) for r in standings.stage_standings(stage)[0][1]]
    results.save_result(holder, deals(*points))
    assert [(r.line, r.field_score) for r in standings.stage_standings(stage)[0][1]] == shown
    page = client.get(f"/t/{tournament.slug}/stage/{stage.pk}/").content.decode()
    assert "4 smazzate aperte su 6" in page or "4 open boards of 6" in page

    _play(last, board_set)
    assert {row.boards for row in duplicate.field_ranking(board_set)} == {6}
    assert (
        "field-counts" not in client.get(f"/t/{tournament.slug}/stage/{stage.pk}/").content.decode()
    )


def test_the_public_export_withholds_the_secret_tables_and_the_organizers_carries_all(client):
    """While a duplicate stage runs, the public export shows a table that holds a board still
    secret as not played yet and no standings (their match totals count those tables); the
    organizer's export carries every board and result, and imports; the seed stays hidden."""
    import json

    from django.contrib.auth.models import User

    from tournaments.services.importer import import_document

    tournament = _tournament(6)
    stage = tournament.stages.get()
    board_set = duplicate.draw_duplicate(stage, seed="s")
    matches = list(Match.objects.filter(round__stage=stage).select_related("round"))
    for match in matches[:-1]:
        _play(match, board_set)
    secret = set(duplicate.board_numbers_of_match(matches[-1]))
    holding = {m.pk for m in matches if secret & set(duplicate.board_numbers_of_match(m))}
    assert len(holding) == 3  # two boards, each held by 3 tables of the 3 rounds
    url = f"/export/v1/tournaments/{tournament.slug}.json"

    public = json.loads(client.get(url).content)
    (stage_doc,) = public["stages"]
    rows = [m for r in stage_doc["rounds"] for m in r["matches"]]
    withheld = [m for m in rows if m["status"] == "scheduled"]
    assert len(withheld) == 3 and all(not m["deals"] and not m["results"] for m in withheld)
    assert all(m["deals"] and m["results"] for m in rows if m["status"] == "done")
    assert stage_doc["groups"][0]["standings"] == [] and public["final_standings"] == []
    assert stage_doc["duplicate"]["seed"] is None
    assert {b["number"] for b in stage_doc["duplicate"]["boards"] if "deck" not in b} == secret
    results_csv = client.get(f"/export/v1/tournaments/{tournament.slug}/results.csv")
    assert results_csv.content.decode().count("\n") == 1 + 9 - 1 - 2  # header, the tables shown

    organizer = User.objects.create_user("direttrice", password="x-pass-12345")
    tournament.organizers.add(organizer)
    client.login(username="direttrice", password="x-pass-12345")
    answer = client.get(url)
    assert "private" in answer["Cache-Control"]
    full = json.loads(answer.content)
    (stage_doc,) = full["stages"]
    rows = [m for r in stage_doc["rounds"] for m in r["matches"]]
    assert (
        sum(m["status"] == "done" for m in rows) == 8
        and len(stage_doc["groups"][0]["standings"]) == 6
    )
    assert all("deck" in b for b in stage_doc["duplicate"]["boards"])
    assert stage_doc["duplicate"]["seed"] is None  # never before the stage is closed
    copy = import_document(full, slug="copia-della-direttrice")
    again = BoardSet.objects.get(stage__tournament=copy)
    assert duplicate.boards_of(again) == duplicate.boards_of(board_set)


def test_a_mitchell_seats_forbidden_pairs_in_one_direction_and_a_howell_refuses_them():
    from tournaments.services import forbidden

    tournament = _tournament(8)
    first, second, third = [line.pk for line in schedule.seeded_lines(tournament)[:3]]
    forbidden.forbid_pairing(tournament, first, second)  # seeds 1 and 2 meet at table 1
    forbidden.forbid_pairing(tournament, second, third)
    board_set = duplicate.draw_duplicate(tournament.stages.get(), seed="s")
    met = {
        frozenset((m.home_id, m.away_id))
        for m in Match.objects.filter(round__stage=board_set.stage)
    }
    assert {frozenset((first, second)), frozenset((second, third))}.isdisjoint(met)
    assert len(met) == 4 * 3  # the skip: each North-South line meets one East-West line twice
    assert board_set.start_order.index(second) % 2 == board_set.start_order.index(first) % 2

    howell = _tournament(4)
    lines = [line.pk for line in schedule.seeded_lines(howell)]
    forbidden.forbid_pairing(howell, lines[0], lines[3])
    with pytest.raises(ScheduleError, match="Howell") as refused:
        duplicate.draw_duplicate(howell.stages.get(), movement="howell")
    assert "Linea 001 – Linea 004" in str(refused.value)
    assert not Match.objects.filter(round__stage__tournament=howell).exists()

    # 3 tables, 3 lines a direction: a chain of four forbidden pairs cannot sit in one
    small = _tournament(6)
    lines = [line.pk for line in schedule.seeded_lines(small)]
    for a, b in pairwise(lines[:4]):
        forbidden.forbid_pairing(small, a, b)
    with pytest.raises(ScheduleError, match=r"Mitchell"):
        duplicate.draw_duplicate(small.stages.get())
    assert not BoardSet.objects.filter(stage__tournament=small).exists()
