"""Registering lines and importing them from CSV (all or nothing, errors by row)."""

import pytest

from tests.tournaments.conftest import make_tournament
from tournaments.exceptions import LineImportError, TournamentError
from tournaments.models import Entry, Line, Player
from tournaments.services import entries

GOOD = (
    "line,player 1,federation id 1,club,city,seed\n"
    "Esposito,Gennaro Esposito,FIGS-1,Partenope,Napoli,2\n"
    "Russo,Salvatore Russo,FIGS-2,Partenope,Napoli,1\n"
    "Romano,Maria Romano,,Carte Salernitane,Salerno,\n"
)


@pytest.mark.django_db
def test_import_creates_players_lines_and_entries():
    tournament = make_tournament()
    lines = entries.import_lines_csv(tournament, GOOD.encode())
    assert [line.name for line in lines] == ["Esposito", "Russo", "Romano"]
    seeds = dict(Entry.objects.filter(tournament=tournament).values_list("line__name", "seed"))
    assert seeds == {"Esposito": 2, "Russo": 1, "Romano": 3}
    assert Player.objects.get(federation_id="FIGS-1").city == "Napoli"


@pytest.mark.django_db
def test_semicolon_italian_header_and_pairs():
    tournament = make_tournament("scopa-coppie-11")
    text = (
        "linea;giocatore 1;giocatore 2;tessera 1;tessera 2;circolo;città\n"
        "I Partenopei;Gennaro Esposito;Salvatore Russo;F-1;F-2;Partenope;Napoli\n"
    )
    (line,) = entries.import_lines_csv(tournament, text)
    assert [m.player.name for m in line.members.order_by("position")] == [
        "Gennaro Esposito",
        "Salvatore Russo",
    ]


@pytest.mark.django_db
def test_existing_player_is_reused_by_federation_id():
    Player.objects.create(name="Gennaro Esposito", federation_id="FIGS-1")
    tournament = make_tournament()
    entries.import_lines_csv(tournament, GOOD)
    assert Player.objects.filter(federation_id="FIGS-1").count() == 1


@pytest.mark.django_db
def test_errors_are_reported_by_row_and_nothing_is_saved():
    Player.objects.create(name="Qualcun Altro", federation_id="FIGS-9")
    tournament = make_tournament()
    text = (
        "line,player 1,player 2,federation id 1,seed\n"
        "Uno,Primo,,FIGS-1,1\n"
        ",Senza Nome,,,\n"  # row 3: no line name
        "Uno,Doppio,,FIGS-1,1\n"  # row 4: same name, same id, same seed
        "Tre,Terzo,Secondo,,\n"  # row 5: two players in a singles tournament
        "Quattro,Quarto,,FIGS-9,x\n"  # row 6: id of another player, bad seed
    )
    with pytest.raises(LineImportError) as error:
        entries.import_lines_csv(tournament, text)
    rows = {row for row, _message in error.value.errors}
    assert rows == {3, 4, 5, 6}
    assert len([r for r, _m in error.value.errors if r == 4]) == 3
    assert Line.objects.count() == 0 and Entry.objects.count() == 0
    assert Player.objects.count() == 1


@pytest.mark.django_db
def test_seeds_no_database_can_hold_are_row_errors_not_a_crash():
    tournament = make_tournament()
    text = (
        "line,player 1,seed\n"
        "Uno,Primo,²\n"  # a digit to str.isdigit, but no int
        "Due,Secondo,99999999999999999999999\n"  # beyond any integer column
        "Tre,Terzo,3\n"
    )
    with pytest.raises(LineImportError) as error:
        entries.import_lines_csv(tournament, text)
    assert {row for row, _message in error.value.errors} == {2, 3}
    assert Entry.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    "content",
    [b"", b"nome,cognome\nA,B\n", b"\xff\xfe\x00garbage", "line,player 1\n"],
)
def test_unusable_files_are_refused(content):
    with pytest.raises(LineImportError):
        entries.import_lines_csv(make_tournament(), content)


@pytest.mark.django_db
def test_import_twice_refuses_duplicates():
    tournament = make_tournament()
    entries.import_lines_csv(tournament, GOOD)
    with pytest.raises(LineImportError):
        entries.import_lines_csv(tournament, GOOD)
    assert Entry.objects.filter(tournament=tournament).count() == 3


@pytest.mark.django_db
def test_add_line_one_by_one():
    tournament = make_tournament()
    line = entries.add_line(tournament, "Solo", [("Mario Rossi", "R-1")], club="C", city="Roma")
    assert line.entries.get().seed == 1
    with pytest.raises(TournamentError):
        entries.add_line(tournament, "Solo", ["Altro"])


@pytest.mark.django_db
def test_import_lines_command(tmp_path):
    from io import StringIO

    from django.core.management import CommandError, call_command

    tournament = make_tournament()
    path = tmp_path / "lines.csv"
    path.write_text(GOOD, encoding="utf-8")
    out = StringIO()
    call_command("import_lines", tournament.slug, str(path), stdout=out)
    assert tournament.entries.count() == 3
    with pytest.raises(CommandError):
        call_command("import_lines", tournament.slug, str(path), stderr=StringIO())
    with pytest.raises(CommandError):
        call_command("import_lines", "nope", str(path))


@pytest.mark.django_db
def test_a_line_short_of_players_is_told_in_good_italian():
    from django.utils import translation

    tournament = make_tournament("scopa-coppie-11")
    with translation.override("it"), pytest.raises(LineImportError) as error:
        entries.import_lines_csv(tournament, "linea;giocatore 1\nSolo;Anna Conti\n")
    assert error.value.errors == [(2, "1 giocatore, ma le linee di questo torneo ne hanno 2")]


@pytest.mark.django_db
def test_register_line_refuses_a_player_already_entered_and_keeps_a_good_line():
    tournament = make_tournament(n_lines=1)
    taken = tournament.entries.get().line.members.get().player
    again = Line.objects.create(name="Di nuovo")
    again.members.create(player=taken, position=0)
    with pytest.raises(TournamentError):
        entries.register_line(tournament, again)
    fresh = Line.objects.create(name="Nuova")
    fresh.members.create(player=Player.objects.create(name="Nuovo Giocatore"), position=0)
    entry = entries.register_line(tournament, fresh, seed=5)
    assert (entry.line, entry.seed) == (fresh, 5)
    assert Entry.objects.filter(tournament=tournament).count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize("n", [2, 40])
def test_registering_lines_costs_the_same_queries_for_two_or_forty(
    n, django_assert_max_num_queries
):
    """Players, lines, members and entries go in one statement per table, whatever the count
    (an open day's thousand lines were four thousand statements). A known federation id still
    finds its player."""
    tournament = make_tournament("scopa-coppie-11")
    known = Player.objects.create(name="Giocatore 000", federation_id="F-0")
    rows = [
        entries.LineRow(
            name=f"Coppia {i:02d}",
            players=[(f"Giocatore {i:03d}", f"F-{i}" if i % 2 == 0 else ""), (f"Socio {i}", "")],
            club="Partenope",
            row_number=i + 1,
        )
        for i in range(n)
    ]
    with django_assert_max_num_queries(14):
        lines = entries.add_lines(tournament, rows)
    assert [line.name for line in lines] == [f"Coppia {i:02d}" for i in range(n)]
    members = {
        (m.line.name, m.position): m.player
        for m in Line.objects.get(name="Coppia 00").members.select_related("line", "player")
    }
    assert members[("Coppia 00", 0)] == known
    assert members[("Coppia 00", 1)].name == "Socio 0"
    entered = Entry.objects.filter(tournament=tournament).order_by("seed")
    assert [e.line.name for e in entered] == [f"Coppia {i:02d}" for i in range(n)]
    assert Player.objects.filter(federation_id__startswith="F-").count() == (n + 1) // 2
