"""Single faults in the middle of a burst, on each broker: after each one every submission ends
final, every result in force is applied once and rated once.

What brings everything to the end is the same on both brokers: messages that come back
(acknowledged late, requeued when a connection goes), and the beat sweeps, which read what is
left to do from the database (``games.tasks.sweep_pending``, ``ratings.tasks.rate_pending``).
The workers are frozen while a fault is staged, so it always hits work under way.
"""

import time

import pytest
from django.db import connection

from games.models import Submission
from tests.api import factories
from tests.pipeline.checks import (
    assert_applied_exactly_once,
    assert_rated_exactly_once,
    pause_mid_run,
    submit_all,
    submit_at_once,
    wait_until_final,
)
from tests.pipeline.conftest import AMQP_AVAILABLE, BOTH_BROKERS, SKIP_REASON

pytestmark = [
    pytest.mark.pipeline,
    pytest.mark.skipif(SKIP_REASON is not None, reason=SKIP_REASON or ""),
    # One xdist worker runs the pipeline tests one after the other: each starts Celery workers
    # (and the fault tests a private PostgreSQL), too much at once for two cores.
    pytest.mark.xdist_group("pipeline"),
]


@BOTH_BROKERS
def test_the_broker_lost_mid_run_and_back_empty_loses_nothing(workers, broker, db):
    """The broker goes away in the middle of a burst with every message it held (see
    ``Broker.stop``), records keep coming while it is away, and it comes back empty:
    submitting stays quick, the sweep sends again what was lost or never sent, the rating
    sweep rates what no message announced."""
    organizer = factories.user("fault-broker", is_staff=True)
    tournament = factories.tournament(lines=12, organizer=organizer)  # 66 matches
    matches = factories.matches(tournament)
    workers.start(beat=True, sweep_every_s=1, pending_after_s=2)
    ids = submit_at_once(tournament, organizer, seed_base=5000, matches=matches[:56])
    pause_mid_run(ids, workers)
    broker.stop()
    started = time.monotonic()
    late = submit_all(tournament, organizer, seed_base=5100, matches=matches[56:])
    assert time.monotonic() - started < 30, "submitting with the broker down must stay quick"
    unsent = Submission.objects.filter(pk__in=late)
    assert set(unsent.values_list("state", flat=True)) == {"pending"}
    assert not unsent.filter(enqueued_at__isnull=False).exists()
    broker.start()
    workers.resume()
    wait_until_final(ids + late, workers, timeout=90)
    assert_applied_exactly_once(tournament)
    assert_rated_exactly_once(tournament, workers)


@pytest.mark.skipif(not AMQP_AVAILABLE, reason="SCOPA_TEST_BROKER_URL names no RabbitMQ")
@pytest.mark.parametrize("broker_kind", ["amqp"])
def test_rabbitmq_gives_back_what_a_cut_connection_held(workers, broker, db):
    """No sweep runs here: RabbitMQ requeues the messages a connection held unacknowledged as
    soon as it goes, and the worker connects again. (Redis gives them back only after its
    visibility timeout, which is one reason the sweep exists.)"""
    organizer = factories.user("fault-amqp", is_staff=True)
    tournament = factories.tournament(lines=12, organizer=organizer)  # 66 matches
    workers.start()
    ids = submit_at_once(tournament, organizer, seed_base=6000)
    pause_mid_run(ids, workers)
    broker.cut_connections()
    workers.resume()
    wait_until_final(ids, workers, timeout=90)
    assert_applied_exactly_once(tournament)
    assert_rated_exactly_once(tournament, workers)


@BOTH_BROKERS
def test_a_postgresql_restart_mid_run_loses_nothing(workers, private_postgres, db):
    """The database ends every session and refuses new ones for a while, then comes back: the
    tasks it failed retry or are swept up, the workers connect again, nothing is applied or
    rated twice. The workers wake while it is down, so they meet the outage too."""
    organizer = factories.user("fault-pg", is_staff=True)
    tournament = factories.tournament(lines=12, organizer=organizer)  # 66 matches
    # Their DATABASE_URL names the private server, as this process's connection now does.
    workers.start(beat=True, sweep_every_s=1, pending_after_s=2)
    ids = submit_at_once(tournament, organizer, seed_base=7000)
    pause_mid_run(ids, workers)
    connection.close()
    private_postgres.stop("fast")
    workers.resume()
    time.sleep(2)
    private_postgres.start()
    wait_until_final(ids, workers, timeout=90)
    assert_applied_exactly_once(tournament)
    assert_rated_exactly_once(tournament, workers)
