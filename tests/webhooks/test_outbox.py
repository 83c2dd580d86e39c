"""The deliveries of an event are written in the transaction of the change that causes it (a
result written, replaced or deleted; a stage closed, a tournament finished): they commit or roll
back with it, only the queueing waits for the commit, and the sweep sends what was recorded but
never queued (the process died, the database connection dropped, the broker refused)."""

import contextlib
import json
import logging
from datetime import timedelta
from unittest import mock

import psycopg
import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from games import services as games
from tests.api import factories
from tests.db import other_connection
from tests.tournaments.conftest import RR, make_tournament
from tests.tournaments.helpers import deals
from tests.webhooks.test_webhooks import SECRET, endpoint, group_match, verify
from tournaments.models import Match, MatchResult, Stage, Tournament
from tournaments.services import results, schedule
from webhooks import services
from webhooks.models import Delivery

on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="needs PostgreSQL (DATABASE_URL)"
)


@pytest.fixture
def ready(webhook_settings, eager_celery, receiver):
    webhook_settings.WEBHOOK_STUCK_AFTER_S = 300
    return receiver


def after_the_grace():
    return timezone.now() + timedelta(seconds=301)


def enter(match):
    results.enter_result(match, deals((5, 2), (3, 4), (4, 1)))


@pytest.mark.django_db
def test_a_result_whose_after_commit_work_never_runs_keeps_its_delivery(
    ready, django_capture_on_commit_callbacks
):
    """The process dies right after the commit: no after-commit callback runs. The delivery
    was committed with the result, never queued; the sweep sends it once the grace is over."""
    match = group_match()
    endpoint(match.round.stage.tournament, ready.url)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        enter(match)
    assert callbacks  # the queueing (and results_changed) were left to the commit

    delivery = Delivery.objects.get()
    assert delivery.status == Delivery.Status.PENDING and delivery.queued_at is None
    assert json.loads(delivery.body)["match"]["id"] == match.pk and not ready.requests
    assert services.requeue_stuck() == 0  # just recorded: its message may still be coming
    assert services.requeue_stuck(after_the_grace()) == 1
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.DELIVERED and delivery.queued_at is not None
    ((headers, body),) = ready.requests
    assert headers["X-Scopa-Delivery"] == str(delivery.pk) and verify(SECRET, headers, body)
    assert json.loads(body)["results"]  # the result as committed
    assert services.requeue_stuck(after_the_grace()) == 0


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_a_connection_lost_right_after_the_commit_loses_no_delivery(ready):
    """A real commit, then PostgreSQL drops the connection before anything after the commit
    could run (the old dispatch ran there, so the event was lost)."""
    match = group_match()
    endpoint(match.round.stage.tournament, ready.url)
    pid = connection.connection.info.backend_pid

    def drop_the_connection():
        with other_connection() as other:
            other.execute("SELECT pg_terminate_backend(%s)", [pid])

    # what followed the commit failed
    with contextlib.suppress(DatabaseError), transaction.atomic():
        transaction.on_commit(drop_the_connection)  # the first thing after the commit
        enter(match)
    connection.close()

    assert Match.objects.get(pk=match.pk).status == Match.Status.DONE
    delivery = Delivery.objects.get()
    assert delivery.status == Delivery.Status.PENDING and not ready.requests
    assert services.requeue_stuck(after_the_grace()) == 1
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.DELIVERED
    assert [h["X-Scopa-Delivery"] for h, _ in ready.requests] == [str(delivery.pk)]


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_an_endpoint_deleted_while_a_result_is_written_does_not_fail_the_result(ready):
    """The delivery's foreign keys are checked in its savepoint, not at the result's commit: an
    organizer deleting the endpoint meanwhile waits for the commit (here: gives up), and the
    result is stored. Checked at the commit, the result itself was lost."""
    match = group_match()
    hook = endpoint(match.round.stage.tournament, ready.url)

    def delete_the_endpoint():
        with other_connection() as other:
            other.execute("SET lock_timeout = '300ms'")
            with contextlib.suppress(psycopg.errors.LockNotAvailable):
                other.execute("DELETE FROM webhooks_delivery WHERE endpoint_id = %s", [hook.pk])
                other.execute("DELETE FROM webhooks_endpoint WHERE id = %s", [hook.pk])

    with transaction.atomic():
        enter(match)
        delete_the_endpoint()

    assert Match.objects.get(pk=match.pk).status == Match.Status.DONE
    assert Delivery.objects.filter(endpoint=hook).count() == 1


@pytest.mark.django_db
def test_a_result_rolled_back_leaves_no_delivery(ready, django_capture_on_commit_callbacks):
    match = group_match()
    endpoint(match.round.stage.tournament, ready.url)
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        contextlib.suppress(RuntimeError),
        transaction.atomic(),
    ):
        enter(match)
        assert Delivery.objects.count() == 1  # written with the result...
        raise RuntimeError("the request fails after the result was written")
    assert not callbacks  # ...and nothing is queued for a rollback
    assert not Delivery.objects.exists() and not ready.requests
    assert Match.objects.get(pk=match.pk).status == Match.Status.SCHEDULED


def _failing_write(ids):
    with connection.cursor() as cursor:  # a real database error, inside the savepoint
        cursor.execute("SELECT * FROM webhooks_no_such_table")


@pytest.mark.django_db
def test_a_failure_recording_the_delivery_neither_fails_nor_loses_the_result(
    ready, django_capture_on_commit_callbacks, caplog
):
    """The savepoint undoes the failed write, the result commits whole, and the deliveries
    are recorded once more after the commit."""
    match = group_match()
    endpoint(match.round.stage.tournament, ready.url)
    real = services._result_deliveries
    calls = iter([_failing_write, real])
    with (
        mock.patch.object(services, "_result_deliveries", lambda ids: next(calls)(ids)),
        django_capture_on_commit_callbacks(execute=True),
    ):
        enter(match)
    assert Match.objects.get(pk=match.pk).status == Match.Status.DONE
    assert MatchResult.objects.filter(match=match).count() == 2
    assert "trying again after the commit" in caplog.text
    assert Delivery.objects.get().status == Delivery.Status.DELIVERED
    assert len(ready.requests) == 1


@pytest.mark.django_db
def test_a_delivery_that_cannot_be_recorded_at_all_is_logged_with_its_match(
    ready, django_capture_on_commit_callbacks, caplog
):
    match = group_match()
    endpoint(match.round.stage.tournament, ready.url)
    caplog.set_level(logging.ERROR, logger="webhooks.services")
    with (
        mock.patch.object(services, "_result_deliveries", _failing_write),
        django_capture_on_commit_callbacks(execute=True),
    ):
        enter(match)
    assert Match.objects.get(pk=match.pk).status == Match.Status.DONE
    assert not Delivery.objects.exists()
    lost = [r for r in caplog.records if "not recorded" in r.getMessage()]
    assert len(lost) == 1 and f"[{match.pk}]" in lost[0].getMessage()


# -- a batch of verified records ---------------------------------------------------------------


def _submit(match, seed):
    document = factories.record(match.round.stage.tournament, seed=seed)
    with mock.patch.object(games.enqueueing, "enqueue_verification"):
        return games.submit_record(match, document).submission.pk


def _statements(queries, table):
    return [q["sql"] for q in queries if f'"{table}"' in q["sql"]]


@on_postgresql
@pytest.mark.django_db
def test_a_batch_of_records_makes_one_delivery_per_listened_match_in_its_transaction(
    ready, django_capture_on_commit_callbacks, monkeypatch
):
    """One batch of the games pipeline over two tournaments of three matches each, one of them
    listened to: one query asking whether any endpoint is active, one whether one hears these
    tournaments, then one per tournament, one insert, a delivery per match of the listened
    tournament with the state the transaction commits."""
    monkeypatch.setattr(games, "GROUP_WAIT_S", 60)  # one group, whatever the machine's speed
    listened, quiet = factories.tournament(lines=3), factories.tournament(lines=3)
    endpoint(listened, ready.url)
    matches = factories.matches(listened) + factories.matches(quiet)
    ids = [_submit(match, seed=300 + i) for i, match in enumerate(matches)]
    with (
        django_capture_on_commit_callbacks(execute=False) as callbacks,
        CaptureQueriesContext(connection) as queries,
    ):
        assert games.verify_waiting(ids[0], bound=len(ids)) == "verified"
    assert len(_statements(queries, "webhooks_endpoint")) == 2 + 2
    (insert,) = _statements(queries, "webhooks_delivery")
    assert insert.startswith("INSERT")
    deliveries = list(Delivery.objects.all())
    heard = [m.pk for m in factories.matches(listened)]
    assert sorted(json.loads(d.body)["match"]["id"] for d in deliveries) == heard
    for delivery in deliveries:
        body = json.loads(delivery.body)
        scores = MatchResult.objects.filter(match_id=body["match"]["id"])
        assert body["event"] == "result.in_force" and body["match"]["status"] == "done"
        assert {r["line_id"]: r["points"] for r in body["results"]} == {
            r.line_id: r.points for r in scores
        }
    assert not ready.requests
    for callback in callbacks:  # now the commit's work: queued and sent
        callback()
    assert len(ready.requests) == len(heard)
    assert set(Delivery.objects.values_list("status", flat=True)) == {"delivered"}


@pytest.mark.django_db
def test_recording_results_costs_no_query_per_match_without_endpoints(
    webhook_settings, django_assert_num_queries
):
    tournament = make_tournament(n_lines=4, stages=[RR])
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    matches = list(Match.objects.filter(round__stage=stage))
    assert len(matches) == 6
    # whether an endpoint hears their tournaments, and no savepoint: as many for one as for six
    with django_assert_num_queries(1):
        services.record_results([matches[0].pk])
    with django_assert_num_queries(1) as queries:
        services.record_results([m.pk for m in matches])
    # and that one is plain: the question over the matches' tournaments cost 2 ms to build
    (asked,) = [q["sql"] for q in queries]
    assert "webhooks_endpoint" in asked and "tournaments_match" not in asked


# -- stages and tournaments ----------------------------------------------------------------------


def _finished_group(capture):
    match = group_match()
    with capture(execute=True):
        enter(match)
    return match.round.stage


@pytest.mark.django_db
def test_a_transition_is_recorded_with_its_change_and_swept_if_never_queued(
    ready, django_capture_on_commit_callbacks
):
    stage = _finished_group(django_capture_on_commit_callbacks)
    tournament = stage.tournament
    endpoint(tournament, ready.url)
    with django_capture_on_commit_callbacks(execute=False):  # the process dies after the commit
        schedule.close_stage(stage)  # closes the only stage: the tournament is finished
    bodies = {d.event: json.loads(d.body) for d in Delivery.objects.all()}
    events = sorted(bodies)
    assert events == ["stage.closed", "tournament.finished"]
    # read when each was written: the stage closes first, then the tournament finishes
    assert bodies["stage.closed"]["stage"]["status"] == "closed"
    assert bodies["stage.closed"]["tournament"]["status"] == "running"
    assert bodies["tournament.finished"]["tournament"]["status"] == "finished"
    assert not ready.requests
    assert services.requeue_stuck(after_the_grace()) == 2
    sent = sorted(json.loads(body)["event"] for _, body in ready.requests)
    assert sent == events
    assert Tournament.objects.get(pk=tournament.pk).status == Tournament.Status.FINISHED


@pytest.mark.django_db
def test_a_transition_rolled_back_leaves_no_delivery(ready, django_capture_on_commit_callbacks):
    stage = _finished_group(django_capture_on_commit_callbacks)
    endpoint(stage.tournament, ready.url)
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        contextlib.suppress(RuntimeError),
        transaction.atomic(),
    ):
        schedule.close_stage(stage)
        assert Delivery.objects.count() == 2
        raise RuntimeError("undone")
    assert not callbacks and not Delivery.objects.exists() and not ready.requests
    assert Stage.objects.get(pk=stage.pk).status != Stage.Status.CLOSED


@pytest.mark.django_db
def test_a_transition_without_endpoints_writes_nothing(
    webhook_settings, django_capture_on_commit_callbacks
):
    stage = _finished_group(django_capture_on_commit_callbacks)
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        CaptureQueriesContext(connection) as queries,
    ):
        schedule.close_stage(stage)
    assert len(_statements(queries, "webhooks_endpoint")) == 2  # the stage's, the tournament's
    assert not _statements(queries, "webhooks_delivery") and not Delivery.objects.exists()
    assert not [c for c in callbacks if getattr(c, "func", None) is services._queue]


# -- a batch with a match whose event cannot be built --------------------------------------------


@pytest.mark.django_db
def test_a_match_whose_event_cannot_be_built_costs_only_its_own_event(
    webhook_settings, django_capture_on_commit_callbacks, caplog
):
    """The other matches of the batch are written in the transaction as usual (they all went
    to the after-commit path, failed there again and were lost); the bad one is logged."""
    tournament = make_tournament(n_lines=4, stages=[RR])
    stage = tournament.stages.get()
    schedule.create_groups(stage, 1)
    schedule.generate_round_robin(stage)
    matches = list(Match.objects.filter(round__stage=stage).order_by("pk"))
    endpoint(tournament, "https://example.org/h")
    bad = matches[2]
    real = services.match_payload

    def payload(match, results=None):
        if match.pk == bad.pk:
            raise KeyError("a line the payload cannot name")
        return real(match, results)

    caplog.set_level(logging.ERROR, logger="webhooks.services")
    with (
        mock.patch.object(services, "match_payload", payload),
        django_capture_on_commit_callbacks(execute=False) as callbacks,
    ):
        recorded = services.record_results([m.pk for m in matches])
    written = sorted(json.loads(d.body)["match"]["id"] for d in Delivery.objects.all())
    assert (
        written
        == [m.pk for m in matches if m != bad]
        == sorted(json.loads(d.body)["match"]["id"] for d in recorded)
    )
    assert [getattr(c, "func", None) for c in callbacks] == [services._queue]
    (logged,) = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert f"match {bad.pk} " in logged.getMessage()


# -- one sender per delivery ---------------------------------------------------------------------


class Broker:
    """The messages handed to the broker, each one a worker would send; ``meanwhile``: what
    happens once, while the next message is being handed over."""

    def __init__(self):
        self.sent = []
        self.meanwhile = None

    def take(self, delivery_id, **options):
        self.sent.append(delivery_id)
        meanwhile, self.meanwhile = self.meanwhile, None
        if meanwhile:
            meanwhile()


@pytest.fixture
def broker(webhook_settings):
    from webhooks.tasks import deliver

    webhook_settings.WEBHOOK_STUCK_AFTER_S = 300
    broker = Broker()
    with (
        mock.patch.object(deliver, "delay", broker.take),
        mock.patch.object(deliver, "apply_async", lambda args, **kw: broker.take(*args, **kw)),
    ):
        yield broker


def _committed_after_a_long_transaction(match, capture, endpoints=1):
    """A result whose transaction stayed open longer than the grace: its deliveries, committed,
    are as old as lost ones, and the commit's queueing has not run yet (returned)."""
    for number in range(endpoints):
        endpoint(match.round.stage.tournament, f"https://example.org/h{number}")
    with capture(execute=False) as callbacks:
        enter(match)
    Delivery.objects.update(created_at=timezone.now() - timedelta(seconds=301))
    return callbacks


def _run(callbacks):
    for callback in callbacks:
        callback()


@pytest.mark.django_db
def test_the_queueing_after_the_commit_leaves_what_the_sweep_sent_meanwhile(
    broker, django_capture_on_commit_callbacks
):
    match = group_match()
    callbacks = _committed_after_a_long_transaction(match, django_capture_on_commit_callbacks)
    assert services.requeue_stuck() == 1
    _run(callbacks)
    assert broker.sent == [str(Delivery.objects.get().pk)]


@pytest.mark.django_db
def test_a_sweep_while_the_commit_queues_a_delivery_leaves_it(
    broker, django_capture_on_commit_callbacks
):
    """The sweep runs between the message going out and ``queued_at`` being stamped (stamped
    only after the message, the sweep read it as never queued and sent it again)."""
    match = group_match()
    callbacks = _committed_after_a_long_transaction(match, django_capture_on_commit_callbacks)
    swept = []
    broker.meanwhile = lambda: swept.append(services.requeue_stuck())
    _run(callbacks)
    assert swept == [0] and broker.sent == [str(Delivery.objects.get().pk)]


@pytest.mark.django_db
def test_two_sweeps_at_once_send_each_delivery_once(broker, django_capture_on_commit_callbacks):
    """A second sweep (beat's next run, the first still going) sends what the first read but
    has not claimed yet; the first then leaves it."""
    match = group_match()
    _committed_after_a_long_transaction(match, django_capture_on_commit_callbacks, endpoints=2)
    swept = []
    broker.meanwhile = lambda: swept.append(services.requeue_stuck())
    assert services.requeue_stuck() == 1 and swept == [1]
    assert sorted(broker.sent) == sorted(str(d.pk) for d in Delivery.objects.all())
    assert len(broker.sent) == 2


@pytest.mark.django_db
def test_a_delivery_the_broker_refused_is_left_unqueued_for_the_sweep(
    broker, django_capture_on_commit_callbacks
):
    match = group_match()
    callbacks = _committed_after_a_long_transaction(match, django_capture_on_commit_callbacks)
    with mock.patch("webhooks.tasks.deliver.delay", side_effect=ConnectionError("broker down")):
        _run(callbacks)
    delivery = Delivery.objects.get()
    assert delivery.queued_at is None and not broker.sent
    assert services.requeue_stuck() == 1 and broker.sent == [str(delivery.pk)]
