"""A line's club or municipality: from the desk's form, the CSV and the export; the migration
that gives existing lines the club their players share."""

from __future__ import annotations

import io
import json

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tournaments.models import Line
from tournaments.services import entries
from tournaments.services.export import build_document
from tournaments.services.importer import import_document

from .conftest import make_tournament

pytestmark = pytest.mark.django_db


def test_a_lines_club_comes_from_the_form_the_csv_and_survives_the_export():
    tournament = make_tournament(n_lines=0)
    entries.add_line(tournament, "Gli Assi", ["Anna"], club="  Circolo  Tressette ")
    csv = "linea,giocatore 1,circolo\nI Re,Carla,Comune di Pozzuoli\n"
    entries.import_lines_csv(tournament, io.StringIO(csv))
    by_name = dict(Line.objects.values_list("name", "club"))
    assert by_name == {"Gli Assi": "Circolo Tressette", "I Re": "Comune di Pozzuoli"}
    assi = Line.objects.get(name="Gli Assi")
    entries.edit_line(tournament, assi, name="Gli Assi", club="Circolo Briscola")
    entries.edit_line(tournament, Line.objects.get(name="I Re"), name="I Re")  # club unchanged

    doc = json.loads(json.dumps(build_document(tournament)))
    copy = import_document(doc, slug="copia")
    clubs = dict(Line.objects.filter(entries__tournament=copy).values_list("name", "club"))
    assert clubs == {"Gli Assi": "Circolo Briscola", "I Re": "Comune di Pozzuoli"}
    # and the copy exports the same lines (every field made the round trip)
    assert json.loads(json.dumps(build_document(copy)))["lines"] == doc["lines"]


# --------------------------------------------------------------------------- the migration

BEFORE = [("tournaments", "0017_merge_prizes_and_the_day")]
AFTER = [("tournaments", "0018_line_club")]


@pytest.fixture
def back_to_the_latest_schema():
    """Going back unapplies every later migration: bring the schema to the latest again."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def _migrate(target):
    executor = MigrationExecutor(connection)
    executor.migrate(target)
    return executor.loader.project_state(target).apps


@pytest.mark.usefixtures("back_to_the_latest_schema")
@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_a_line_the_club_its_players_share_and_loses_nothing():
    old = _migrate(BEFORE)
    Player = old.get_model("tournaments", "Player")
    OldLine = old.get_model("tournaments", "Line")
    LineMember = old.get_model("tournaments", "LineMember")

    def line(name, *clubs):
        row = OldLine.objects.create(name=name)
        for position, club in enumerate(clubs):
            player = Player.objects.create(name=f"{name} {position}", club=club)
            LineMember.objects.create(line=row, player=player, position=position)
        return row.pk

    same = line("Stessi", "Circolo  Aurora", "Circolo Aurora")
    mixed = line("Misti", "Aurora", "Borea")
    none = line("Senza", "", "")
    half = line("Meta", "Aurora", "")

    new = _migrate(AFTER)
    clubs = dict(new.get_model("tournaments", "Line").objects.values_list("pk", "club"))
    assert clubs == {same: "Circolo Aurora", mixed: "", none: "", half: ""}
    players = new.get_model("tournaments", "Player").objects
    assert sorted(players.values_list("club", flat=True)) == sorted(
        ["Circolo  Aurora", "Circolo Aurora", "Aurora", "Borea", "", "", "Aurora", ""]
    )
