"""A batch of records written beside another session (real PostgreSQL): what the batch reads about
a match's versions must be what the transaction it waited for committed, and a database error
while its rows are copied in is the database's trouble, retried."""

import threading
import time
from unittest import mock

import pytest
from django.db import OperationalError, connection, connections, transaction

from games import services
from games.models import Submission
from tests.api import factories
from tests.pages.factories import winning_deals
from tournaments.models import MatchResult, ResultVersion
from tournaments.services import results

pytestmark = pytest.mark.skipif(
    not services.batching_available(), reason="batches need PostgreSQL's advisory locks"
)


def _waiting_on_a_lock(pid) -> bool:
    """Whether session ``pid`` waits for a lock now: asked in a transaction, so the snapshot of
    ``pg_stat_activity`` that PostgreSQL keeps until its end is cleared first."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return bool(row) and row[0] == "Lock"


def _while_the_batch_waits(change, pk):
    """Run ``change`` in a transaction of its own that holds the match until a worker's batch
    verifying record ``pk`` waits for it; the batch's outcome for ``pk``."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        worker_pid = cursor.fetchone()[0]
    holds_the_match = threading.Event()
    errors = []

    def other():
        try:
            with transaction.atomic():
                change()
                holds_the_match.set()
                deadline = time.monotonic() + 20
                while not _waiting_on_a_lock(worker_pid) and time.monotonic() < deadline:
                    time.sleep(0.02)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
            holds_the_match.set()
        finally:
            connection.close()

    thread = threading.Thread(target=other)
    thread.start()
    holds_the_match.wait(20)
    try:
        state = services.verify_waiting(pk)
    finally:
        thread.join(30)
    assert not errors
    return state


def _versions(match):
    return list(
        ResultVersion.objects.filter(match=match)
        .order_by("number")
        .values_list("number", "source", "status")
    )


def _submit(match, seed, *, declared=True):
    document = factories.record(match.round.stage.tournament, seed=seed)
    if not declared:  # another record of the same result
        for deal in document["deals"]:
            deal.pop("declared", None)
    with mock.patch.object(services.enqueueing, "enqueue_verification"):
        return services.submit_record(match, document).submission.pk


@pytest.mark.django_db(transaction=True)
def test_a_version_brought_back_while_the_batch_waits_is_the_one_it_weighs_the_record_against():
    """The organizer brings a record's version back into force while a batch waits for the
    match: a second record of that same result comes into force beside it, as it would have a
    moment later, instead of being weighed against the desk's version just put aside."""
    tournament = factories.tournament(lines=4)
    match = factories.matches(tournament)[0]
    services.run_verification(_submit(match, seed=7))  # v1, the record's result
    results.save_result(match, winning_deals(0, 1))  # v2, the desk's, in force
    first = ResultVersion.objects.get(match=match, number=1)
    again = _submit(match, seed=7, declared=False)

    assert _while_the_batch_waits(lambda: results.accept_version(first), again) == "verified"
    assert _versions(match) == [
        (1, "record", "superseded"),
        (2, "desk", "superseded"),
        (3, "record", "in_force"),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_result_committed_while_the_batch_waits_for_the_match_is_seen_by_the_batch():
    """The desk saves a result while a worker's batch waits for the match's lock: the record's
    version is numbered after the desk's and waits for a decision beside it, instead of reusing
    its number (the whole group failing on the unique number) or taking the desk's version for
    the one in force before it."""
    tournament = factories.tournament(lines=4)
    match = factories.matches(tournament)[0]
    pk = _submit(match, seed=7)
    state = _while_the_batch_waits(lambda: results.save_result(match, winning_deals(0, 1)), pk)
    assert state == "verified"
    versions = list(
        ResultVersion.objects.filter(match=match)
        .order_by("number")
        .values_list("number", "source", "status")
    )
    assert versions == [(1, "desk", "in_force"), (2, "record", "awaiting")]
    assert Submission.objects.get(pk=pk).state == "verified"


@pytest.mark.django_db(transaction=True)
def test_database_trouble_while_a_group_s_rows_are_copied_is_retried_not_blamed_on_the_record():
    """The score rows are copied in at the flush: a database error there (here a lock it could
    not wait for) reaches the task as the database's trouble it retries, as for any other
    statement, not as the record's failure that ends it in ``error``."""
    tournament = factories.tournament(lines=3)
    ids = [_submit(match, seed=300 + i) for i, match in enumerate(factories.matches(tournament))]
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("BEGIN")
            cursor.execute(f"LOCK TABLE {MatchResult._meta.db_table} IN ACCESS EXCLUSIVE MODE")
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '200ms'")
        with pytest.raises(OperationalError):
            services.verify_waiting(ids[0])
    finally:
        other.close()
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
    assert set(Submission.objects.filter(pk__in=ids).values_list("state", flat=True)) == {"pending"}
    assert not ResultVersion.objects.filter(submission__in=ids).exists()
