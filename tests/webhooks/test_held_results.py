"""A result on a duplicate board still secret is held, not sent: the platforms hear a table's
result once every table holding its boards has played them (then with the result in force
then), or once the stage is closed; a result withdrawn while held is never sent."""

import json

import pytest

from tests.tournaments.helpers import deals
from tests.tournaments.test_duplicate_stage import _play, _tournament
from tests.webhooks.test_webhooks import endpoint
from tournaments.models import Match, Stage
from tournaments.services import duplicate, results
from webhooks import services
from webhooks.models import Delivery, Event

pytestmark = pytest.mark.django_db


def _session():
    tournament = _tournament(6)  # 3 tables, 3 rounds of 2 boards, each board at 3 tables
    stage = tournament.stages.get()
    board_set = duplicate.draw_duplicate(stage, seed="trattenuti")
    matches = list(
        Match.objects.filter(round__stage=stage).select_related("round").order_by("round__number")
    )
    endpoint(tournament, "https://platform.example/hooks")
    return stage, board_set, matches


def _told(match):
    """What the endpoint has been (or is to be) told of ``match``: [(status, event, results)]."""
    rows = []
    for delivery in Delivery.objects.order_by("created_at"):
        body = json.loads(delivery.body)
        if body.get("match", {}).get("id") == match.pk:
            rows.append((delivery.status, body["event"], body["results"]))
    return rows


def test_a_secret_tables_result_is_held_until_its_boards_open(django_capture_on_commit_callbacks):
    _stage, board_set, matches = _session()
    with django_capture_on_commit_callbacks(execute=False):
        first = matches[0]  # round 1: its boards are still to be played at two other tables
        _play(first, board_set)
        ((status, event, sent),) = _told(first)
        assert status == Delivery.Status.HELD and event == Event.RESULT_IN_FORCE
        assert services.attempt(str(Delivery.objects.get().pk), last=True) is None  # not sent
        assert services.stuck_deliveries() == []

        # corrected while held: one delivery, and the result told is the last one
        results.save_result(first, deals((7, 0), (0, 1)))
        assert [s for s, *_ in _told(first)] == [Delivery.Status.HELD]

        holders = [
            m
            for m in matches
            if set(duplicate.board_numbers_of_match(m))
            & set(duplicate.board_numbers_of_match(first))
        ]
        others = [m for m in matches if m not in holders]
        for match in others:
            _play(match, board_set)
        for match in holders[1:]:
            _play(match, board_set)
        # every table holding round 1's boards has played: the result goes out as it is now
        ((status, event, sent),) = _told(first)
        assert status == Delivery.Status.PENDING and event == Event.RESULT_IN_FORCE
        assert [r["points"] for r in sent] == [
            r.points for r in sorted(first.results.all(), key=lambda r: r.line_id != first.home_id)
        ]
        assert not Delivery.objects.filter(status=Delivery.Status.HELD).exists()


def test_closing_the_stage_releases_the_held_results(django_capture_on_commit_callbacks):
    stage, board_set, matches = _session()
    with django_capture_on_commit_callbacks(execute=False):
        _play(matches[0], board_set)
        assert _told(matches[0])[0][0] == Delivery.Status.HELD
        stage.status = Stage.Status.CLOSED
        stage.save()
        assert _told(matches[0])[0][0] == Delivery.Status.PENDING
        events = [d.event for d in Delivery.objects.order_by("created_at")]
        assert events == [Event.RESULT_IN_FORCE, Event.STAGE_CLOSED]
