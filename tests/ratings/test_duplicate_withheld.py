"""A duplicate table whose result is withheld (``tournaments.access.withheld_results``: it holds
a board some other table has still to play) moves no rating: a rating that changed after it
would tell the public how the board went, on the player pages, the rating lists and the
seeding. Its rating applies once the board opens (the last table's result), or once the stage
is closed, however long ago it was played."""

from datetime import timedelta

import pytest
from django.utils import timezone

from ratings.models import RatedMatch, RatingChange
from ratings.services.ratings import pending_match_ids, rate_pending, recompute
from tests.ratings.test_service import snapshot
from tests.tournaments.test_duplicate_stage import _play, _tournament
from tournaments import access
from tournaments.models import Match, Stage
from tournaments.services import duplicate, results

pytestmark = pytest.mark.django_db


@pytest.fixture
def session():
    """6 lines, 3 tables, 3 rounds of 2 boards: every table has played but the last, so the
    two other tables holding its boards are withheld."""
    tournament = _tournament(6)
    stage = tournament.stages.get()
    board_set = duplicate.draw_duplicate(stage, seed="classifica")
    matches = list(
        Match.objects.filter(round__stage=stage)
        .select_related("round")
        .order_by("round__number", "table_number")
    )
    for match in matches[:-1]:
        _play(match, board_set)
    last = matches[-1]
    withheld = set(access.withheld_results(None, tournament)) - {last.pk}
    assert len(withheld) == 2
    return tournament, stage, board_set, matches, last, withheld


def _rated():
    return set(RatedMatch.objects.values_list("match_id", flat=True))


def _age(match_ids):
    """As if these tables had played long before the debounced runs look back."""
    Match.objects.filter(pk__in=match_ids).update(updated_at=timezone.now() - timedelta(hours=2))


def test_a_withheld_table_moves_no_rating_until_its_boards_open(session):
    _tournament, _stage, board_set, matches, last, withheld = session
    rate_pending()
    played = {m.pk for m in matches[:-1]}
    assert _rated() == played - withheld
    assert not RatingChange.objects.filter(match_id__in=withheld).exists()
    assert not set(pending_match_ids()) & withheld  # not pending either: nothing to announce
    _age(withheld)
    _play(last, board_set)  # the boards open
    # the debounced run looks at what changed lately: the tables the result opened come along
    rate_pending(since=timezone.now() - timedelta(minutes=10))
    assert _rated() == played | {last.pk}
    assert RatingChange.objects.filter(match_id__in=withheld).count() == 2 * len(withheld)
    rated = snapshot()
    recompute()
    assert snapshot() == rated  # the late tables took their place in the order of play


def test_a_deleted_result_that_makes_a_board_secret_again_takes_its_tables_ratings_back(session):
    """The last table's result opened the boards and the withheld tables were rated; then it
    is deleted: the boards are secret again, and so are those tables' results. Their ratings
    go with the next debounced run, not the beat sweep's full look minutes later."""
    tournament, _stage, board_set, _matches, last, withheld = session
    _play(last, board_set)
    rate_pending()
    assert withheld | {last.pk} <= _rated()
    _age(withheld)  # played long before: only the deletion changed lately
    results.delete_result(Match.objects.get(pk=last.pk), reason="wrong table")
    assert withheld <= set(access.withheld_results(None, tournament))
    rate_pending(since=timezone.now() - timedelta(minutes=10))
    assert not _rated() & (withheld | {last.pk})
    assert not RatingChange.objects.filter(match_id__in=withheld).exists()


def test_closing_the_stage_applies_the_withheld_ratings(
    session, eager_celery, django_capture_on_commit_callbacks
):
    _tournament, stage, _board_set, _matches, _last, withheld = session
    rate_pending()
    _age(withheld)
    assert not _rated() & withheld
    # the last table never plays: closing the session opens every board
    with django_capture_on_commit_callbacks(execute=True):
        stage.status = Stage.Status.CLOSED
        stage.save()
    assert withheld <= _rated()


def test_a_full_recompute_leaves_the_withheld_tables_out_too(session):
    _tournament, _stage, _board_set, _matches, _last, withheld = session
    recompute()
    assert not _rated() & withheld
