"""Fixtures for the tournament core: tournaments from presets, lines, stages."""

import datetime

import pytest

from tournaments.models import Stage
from tournaments.services import entries, presets
from tournaments.services.vp import load_default_tables


def make_tournament(preset="scopa-classica-11", n_lines=0, stages=(), **overrides):
    # transaction=True tests (ours or other apps') flush the migration's VP tables: reload them
    load_default_tables()
    tournament = presets.create_tournament_from_preset(
        preset,
        name=overrides.pop("name", f"Torneo {preset}"),
        start_date=datetime.date(2026, 5, 1),
        stages=list(stages),
        lots_seed=overrides.pop("lots_seed", 12345),
        **overrides,
    )
    if n_lines:
        rows = [
            entries.LineRow(
                name=f"Linea {i:03d}",
                # as many players as the preset's lines have (the Valliadi plays pairs)
                players=[
                    (f"Giocatore {i:03d}{'abc'[k] if k else ''}", "")
                    for k in range(tournament.seats_per_line)
                ],
                row_number=i,
            )
            for i in range(1, n_lines + 1)
        ]
        entries.add_lines(tournament, rows)
    return tournament


RR = {"name": "Gironi", "kind": Stage.Kind.ROUND_ROBIN}
KO = {"name": "Eliminazione diretta", "kind": Stage.Kind.KNOCKOUT, "third_place_match": True}


@pytest.fixture
def tournament_factory(db):
    return make_tournament
