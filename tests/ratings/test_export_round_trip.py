"""The federation export's round trip: export, empty the database, import, export again."""

import json

import pytest
from django.core.management import call_command
from django.db import connection

from tournaments.models import Player, Tournament
from tournaments.services.importer import import_document

DEMO = "trofeo-golfo-2026"


@pytest.mark.django_db(transaction=True)
def test_round_trip_into_an_empty_database_is_byte_identical(tmp_path):
    """Export, empty the database, import, export again: the same bytes.

    Runs on whatever database the environment names (PostgreSQL in CI, jsonb included)."""
    call_command("seed_demo", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
    path = tmp_path / "export.json"
    call_command("export_tournament", DEMO, output=str(path))
    first = path.read_bytes()
    call_command("flush", interactive=False, verbosity=0)
    assert not Tournament.objects.exists() and not Player.objects.exists()
    call_command("import_tournament", str(path), stdout=open("/dev/null", "w"))  # noqa: SIM115
    call_command("export_tournament", DEMO, output=str(tmp_path / "again.json"))
    assert (tmp_path / "again.json").read_bytes() == first
    # Players were matched by federation id on a second import under another slug.
    n_players = Player.objects.count()
    import_document(json.loads(first), slug="copia")
    assert Player.objects.count() == n_players
    assert connection.vendor in ("postgresql", "sqlite")
