"""The import writes every result through the result writer: one version in force per result,
its change-log entry, and the projection the file shows; files it cannot reproduce are refused."""

import contextlib
import json
from unittest import mock

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from tests.pages.factories import play_stage
from tests.tournaments.conftest import make_tournament
from tests.tournaments.helpers import deals
from tournaments.exceptions import StaleResult
from tournaments.models import (
    ChangeLog,
    Line,
    LineMember,
    Match,
    MatchResult,
    Outcome,
    Player,
    ResultVersion,
    Round,
    Stage,
    Tournament,
)
from tournaments.services import lifecycle, pairing, results
from tournaments.services.export import build_document
from tournaments.services.importer import TournamentImportError, import_document
from tournaments.signals import results_changed

DEMO = "trofeo-golfo-2026"


@pytest.fixture(scope="module")
def demo_document(django_db_setup, django_db_blocker):
    """The demo's export, built once for the module in a transaction that is then rolled back:
    the tests import it into a database that does not hold the demo."""
    with django_db_blocker.unblock(), transaction.atomic():
        call_command("seed_demo", verbosity=0, stdout=open("/dev/null", "w"))  # noqa: SIM115
        document = json.dumps(build_document(Tournament.objects.get(slug=DEMO)))
        transaction.set_rollback(True)
    return document


@pytest.fixture
def demo_doc(db, demo_document):
    return json.loads(demo_document)


@contextlib.contextmanager
def announced():
    """The ids of the matches ``results_changed`` announces while the block runs."""
    heard: list[int] = []

    def listener(sender, matches, **kwargs):
        heard.extend(m.pk for m in matches)

    results_changed.connect(listener)
    try:
        yield heard
    finally:
        results_changed.disconnect(listener)


def _file_matches(doc):
    return [m for s in doc["stages"] for r in s["rounds"] for m in r["matches"]]


def _copied(doc, copy):
    """(file match, imported match) pairs: the export orders matches by stage, round, table
    (none last) and creation, and the import creates them in file order."""
    matches = sorted(
        Match.objects.filter(round__stage__tournament=copy).select_related("round__stage"),
        key=lambda m: (
            m.round.stage.order,
            m.round.number,
            m.table_number is None,
            m.table_number or 0,
            m.id,
        ),
    )
    return list(zip(_file_matches(doc), matches, strict=True))


def test_each_imported_result_is_one_version_in_force_giving_back_the_file(demo_doc):
    copy = import_document(demo_doc, slug="copia")
    pairs = _copied(demo_doc, copy)
    played = [(m, match) for m, match in pairs if m["results"]]
    assert len(played) == 32
    for m, match in pairs:
        versions = list(ResultVersion.objects.filter(match=match))
        if not m["results"]:  # a bye of the draw: no result, as when the draw made it
            assert versions == [] and results.in_force(match) is None
            continue
        assert [(v.status, v.source, v.number) for v in versions] == [("in_force", "import", 1)]
        version = results.in_force(match)
        assert version is not None and version.pk == versions[0].pk
        side = {m["home"]: 0, m["away"]: 1}
        # the sheet holds the file's deals, totals, outcome, winner and offending line
        assert sorted(
            (d["number"], side[d["line"]], d["points"], d["breakdown"], d["is_tiebreak"])
            for d in m["deals"]
        ) == sorted(
            (deal["number"], s, deal["points"][s], deal["breakdown"][s], deal["tiebreak"])
            for deal in version.sheet["deals"]
            for s in (0, 1)
        )
        assert {d["number"] for d in m["deals"] if d["is_penalty"]} == {
            deal["number"] for deal in version.sheet["deals"] if deal["penalty"]
        }
        totals = [0, 0]
        for x in m["results"]:
            totals[side[x["line"]]] = x["points"]
        assert version.sheet["result"]["totals"] == totals
        assert version.sheet["outcome"] == m["outcome"]
        assert version.sheet["result"]["winner"] == (side[m["winner"]] if m["winner"] else None)
        assert version.sheet["offender"] == (side[m["offender"]] if m["offender"] else None)
        # and its projection the file's VP and MP
        scored = {
            r.line_id: (r.points, r.mp, r.vp, r.won, r.drawn)
            for r in MatchResult.objects.filter(match=match)
        }
        lines = {0: match.home_id, 1: match.away_id}
        assert scored == {
            lines[side[x["line"]]]: (x["points"], x["mp"], x["vp"], x["won"], x["drawn"])
            for x in m["results"]
        }
        assert ChangeLog.objects.filter(match=match, action="result.imported").count() == 1
    # the imported stages are closed again, as in the file
    assert set(copy.stages.values_list("status", flat=True)) == {Stage.Status.CLOSED}


def test_a_correction_after_the_import_is_based_on_the_imported_version(demo_doc):
    copy = import_document(demo_doc, slug="copia")
    knockout = copy.stages.get(kind=Stage.Kind.KNOCKOUT)
    lifecycle.reopen_stage(knockout)
    final = (
        Match.objects.filter(round__stage=knockout, is_third_place=False)
        .order_by("-round__number")
        .first()
    )
    imported = results.in_force(final)
    assert imported.source == "import"
    with pytest.raises(StaleResult):  # saved as if the match had no result
        results.save_result(final, deals((2, 0), (2, 0), (2, 0)), based_on=None)
    saved = results.save_result(
        final, deals((2, 0), (2, 0), (2, 0)), based_on=imported.number, reason="verbale"
    )
    assert saved.created and saved.version.number == 2
    assert saved.version.based_on_id == imported.pk
    assert ResultVersion.objects.get(pk=imported.pk).status == ResultVersion.Status.SUPERSEDED
    assert results.in_force(final).pk == saved.version.pk
    final.refresh_from_db()
    assert final.winner_id == final.home_id


def test_a_danish_bye_is_imported_through_the_bye_writer_and_nothing_is_announced(
    db, django_capture_on_commit_callbacks
):
    tournament = make_tournament(n_lines=5, slug="danese-dispari")
    stage = Stage.objects.create(
        tournament=tournament, order=1, name="Danese", kind=Stage.Kind.DANISH, rounds_planned=2
    )
    for _number in range(2):
        pairing.pair_next_round(stage)
        play_stage(stage)
    doc = json.loads(json.dumps(build_document(tournament)))
    with (
        announced() as heard,
        mock.patch("ratings.tasks.recompute_ratings_from") as rate,
        django_capture_on_commit_callbacks(execute=True),
    ):
        copy = import_document(doc, slug="danese-copia")
    # one rating replay for the tournament, no announcement per result: a result announced
    # on its own would flag the later round as paired before a corrected result
    assert heard == [] and rate.delay.call_count == 1
    assert not Round.objects.filter(stage__tournament=copy, needs_review=True).exists()
    byes = Match.objects.filter(round__stage__tournament=copy, outcome=Outcome.BYE)
    assert byes.count() == 2
    for bye in byes:
        version = results.in_force(bye)
        assert version.source == "bye" and version.number == 1
        assert MatchResult.objects.filter(match=bye).count() == 1
    again = build_document(copy)
    for doc_ in (doc, again):
        for stage_doc in doc_["stages"]:
            for group in stage_doc["groups"]:
                group.pop("standings")
    assert again["stages"] == doc["stages"]


def _first_played(doc):
    return next(m for m in _file_matches(doc) if m["results"] and m["outcome"] == "completed")


@pytest.mark.parametrize(
    "spoil",
    [
        # VP the file's table does not give for that margin
        lambda m: m["results"][0].update(vp=m["results"][0]["vp"] + 1),
        # deals that do not add up to the totals
        lambda m: m["results"][0].update(points=m["results"][0]["points"] + 1),
        # a winner who does not play the match
        lambda m: m.update(winner="L999"),
        # a played match without its result
        lambda m: m.update(results=[], deals=[]),
    ],
    ids=["vp", "totals", "winner", "no-result"],
)
def test_a_file_the_writer_cannot_reproduce_is_refused_and_nothing_is_saved(demo_doc, spoil):
    spoil(_first_played(demo_doc))
    before = (
        Tournament.objects.count(),
        ResultVersion.objects.count(),
        ChangeLog.objects.count(),
    )
    with pytest.raises(TournamentImportError):
        import_document(demo_doc, slug="copia")
    assert (
        Tournament.objects.count(),
        ResultVersion.objects.count(),
        ChangeLog.objects.count(),
    ) == before


def test_two_lines_of_one_reference_are_refused_and_nothing_is_saved(demo_doc):
    demo_doc["lines"][1]["ref"] = demo_doc["lines"][0]["ref"]
    before = Tournament.objects.count(), Line.objects.count()
    with pytest.raises(TournamentImportError, match=r"riferimento|reference"):
        import_document(demo_doc, slug="copia")
    assert (Tournament.objects.count(), Line.objects.count()) == before


def test_a_federation_id_the_file_names_twice_is_one_player(demo_doc):
    by_ref = {player["ref"]: player for player in demo_doc["players"]}
    first = by_ref[demo_doc["lines"][0]["players"][0]]
    second = by_ref[demo_doc["lines"][1]["players"][0]]
    first["federation_id"] = second["federation_id"] = "FIGS-0001"
    copy = import_document(demo_doc, slug="copia")
    members = LineMember.objects.filter(line__entries__tournament=copy)
    assert (
        members.filter(player__federation_id="FIGS-0001").values("player").distinct().count() == 1
    )
    assert Player.objects.filter(federation_id="FIGS-0001").count() == 1


def _renumber_last_deal(m, number):
    last = max(d["number"] for d in m["deals"])
    for deal in m["deals"]:
        if deal["number"] == last:
            deal["number"] = number


@pytest.mark.parametrize(
    "spoil, words",
    [
        (lambda doc: _renumber_last_deal(_first_played(doc), 40_000), "32767"),
        (lambda doc: doc["stages"][0]["rounds"][0].update(number=40_000), "numero"),
        (lambda doc: _file_matches(doc)[0].update(table=-1), "tavolo"),
        (lambda doc: doc["lines"][0].update(name="x" * 1000), "nome"),
        (lambda doc: doc["stages"][0]["rounds"][0].update(number=40_000.0), "numero"),
        (lambda doc: _file_matches(doc)[0].update(table=1e10), "tavolo"),
        (lambda doc: doc["lines"][0].update(name=10**200), "nome"),
    ],
    ids=[
        *("deal-number", "round-number", "table", "line-name"),
        *("round-number-float", "table-float", "line-name-number"),
    ],
)
def test_a_value_the_store_cannot_keep_refuses_the_file_on_every_database(demo_doc, spoil, words):
    """A deal numbered 40,000 (a small integer column) was a 500 on PostgreSQL, which refuses
    the row, and kept on SQLite; so were a round number, a table or a name out of their
    columns' range. The file is refused with the field named, and nothing is saved."""
    spoil(demo_doc)
    before = (Tournament.objects.count(), ResultVersion.objects.count())
    with pytest.raises(TournamentImportError) as refused:
        import_document(demo_doc, slug="copia")
    assert words in str(refused.value)
    assert (Tournament.objects.count(), ResultVersion.objects.count()) == before


def test_an_import_writes_its_results_in_one_silent_batch(
    demo_doc, django_capture_on_commit_callbacks
):
    files = _file_matches(demo_doc)
    played = [m for m in files if m["results"]]
    with (
        announced() as heard,
        mock.patch("ratings.tasks.recompute_ratings_from") as rate,
        django_capture_on_commit_callbacks(execute=True),
        CaptureQueriesContext(connection) as captured,
    ):
        copy = import_document(demo_doc, slug="copia")
    # Creating the rows takes one query a match and about five a line (its players, the line,
    # its members, its entry). In one batch a result costs its version row, with the matches
    # locked in one query and the projection written in a few statements per flush (292 queries
    # here while each result took its own lock and savepoint); one result at a time cost about
    # twelve (549).
    assert len(captured) <= len(files) + 5 * len(demo_doc["lines"]) + 2 * len(played) + 60
    # nothing announced result by result; the tournament is rated once
    assert heard == [] and rate.delay.call_count == 1
    assert ResultVersion.objects.filter(match__round__stage__tournament=copy).count() == len(played)
