"""Migration 0013 takes away the deal rows that repeated the version in force: back, it rebuilds
them from the sheets; forward again, the match rows remember the tie-breaks and nothing is lost,
and a row no sheet stands for stops it."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tournaments.models import Match
from tournaments.services import results

from .helpers import deal, deals
from .test_results import group_match, knockout_match

BEFORE = [("tournaments", "0012_indexes_led_by_a_unique_one")]
AFTER = [("tournaments", "0013_deals_kept_once_in_the_version")]


def _migrate(target):
    executor = MigrationExecutor(connection)
    executor.migrate(target)
    return executor.loader.project_state(target).apps


@pytest.fixture
def back_to_the_latest_schema():
    """Going back to 0012 also unapplies every later migration (of any app depending on one):
    the schema is brought to the latest again after the test, or the next tests on this
    database would meet tables without their newer columns."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.usefixtures("back_to_the_latest_schema")
@pytest.mark.django_db(transaction=True)
def test_the_deal_rows_come_back_from_the_sheets_and_go_again():
    played = group_match()
    results.enter_result(played, deals((5, 2), (3, 4), (4, 1)))
    (decided,) = knockout_match()
    level = deals((4, 1), (1, 4), (2, 2))
    results.enter_result(decided, [*level, deal(2, 2, tiebreak=True), deal(1, 3, tiebreak=True)])
    deleted = group_match()
    results.enter_result(deleted, deals((11, 0)))
    results.delete_result(deleted, based_on=1, reason="wrong match")
    in_force = {m: results.deals_of_match(Match.objects.get(pk=m)) for m in (played.pk, decided.pk)}

    old = _migrate(BEFORE)
    rows = old.get_model("tournaments", "DealResult").objects
    assert not rows.filter(match=deleted.pk).exists()
    for match_id, expected in in_force.items():
        match = old.get_model("tournaments", "Match").objects.get(pk=match_id)
        by_number = {}
        for row in rows.filter(match=match_id):
            side = (match.home_id, match.away_id).index(row.line_id)
            by_number.setdefault(row.number, [None, None, row.is_tiebreak])[side] = row.points
        assert by_number == {d.number: [d.points[0], d.points[1], d.is_tiebreak] for d in expected}

    # a row no sheet in force stands for (written by hand): the migration stops, losing nothing
    stray = rows.create(
        match_id=deleted.pk, number=0, line_id=deleted.home_id, points=11, breakdown={}
    )
    with pytest.raises(RuntimeError, match=str(deleted.pk)):
        _migrate(AFTER)
    assert rows.filter(pk=stray.pk).exists()
    stray.delete()

    _migrate(AFTER)
    assert set(Match.objects.filter(has_tiebreak=True).values_list("pk", flat=True)) == {decided.pk}
    for match_id, expected in in_force.items():
        assert results.deals_of_match(Match.objects.get(pk=match_id)) == expected
