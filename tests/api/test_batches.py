"""Verification in batches on the real PostgreSQL: one worker takes the records waiting, a failing
record fails alone, and two workers taking overlapping batches never apply a record twice."""

import json
import threading
import time
from collections import Counter
from unittest import mock

import pytest
from django.db import OperationalError, connection, connections
from django.db.models import F

from games import services
from games.models import Submission
from tests.api import factories
from tournaments.models import ChangeLog, ResultVersion
from tournaments.services import results

pytestmark = pytest.mark.skipif(
    not services.batching_available(), reason="batches need PostgreSQL's advisory locks"
)


def pending_records(tournament, seed_base=0):
    """One stored, not yet verified record per match (nothing is enqueued)."""
    with mock.patch.object(services.enqueueing, "enqueue_verification"):
        return [
            services.submit_record(
                match, factories.record(tournament, seed=seed_base + index)
            ).submission.pk
            for index, match in enumerate(factories.matches(tournament))
        ]


def close_session(other) -> None:
    """Close another session and wait until PostgreSQL has ended it: its backend lets go of
    its advisory locks as it exits, a moment after the client hangs up. The test runs in a
    transaction, in which PostgreSQL reads ``pg_stat_activity`` once and keeps that snapshot:
    each look clears it first."""
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    other.close()
    with connection.cursor() as cursor:
        for _ in range(500):
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid])
            if cursor.fetchone() is None:
                return
            time.sleep(0.01)
    raise AssertionError(f"session {pid} still there after 5 s")


def applied_once(tournament):
    logs = Counter(
        ChangeLog.objects.filter(tournament=tournament, action="result.verified").values_list(
            "match_id", flat=True
        )
    )
    return set(logs.values()) <= {1}


@pytest.mark.django_db
def test_one_failing_record_fails_alone_and_the_batch_commits_the_others():
    tournament = factories.tournament(lines=5)  # 10 matches
    ids = pending_records(tournament)
    engine_fails, writer_fails = ids[3], ids[6]
    compute = services.compute_verdict
    apply = results.apply_verified_result
    boom_match = Submission.objects.get(pk=writer_fails).match_id

    failing = services.record_body(Submission.objects.get(pk=engine_fails).document)

    def compute_or_fail(document):
        verdict = compute(document)
        # a batch hands the engine each record as JSON text
        if (json.loads(document) if isinstance(document, str) else document) == failing:
            raise RuntimeError("the engine broke on this one")
        return verdict

    def apply_or_fail(match, verdict, **kwargs):
        saved = apply(match, verdict, **kwargs)  # writes, then fails: its savepoint undoes it
        if match.pk == boom_match:
            raise RuntimeError("the writer broke on this one")
        return saved

    with (
        mock.patch.object(services.verifying, "compute_verdict", compute_or_fail),
        mock.patch.object(results, "apply_verified_result", apply_or_fail),
    ):
        assert services.verify_waiting(ids[0]) == "verified"

    subs = {sub.pk: sub for sub in Submission.objects.filter(pk__in=ids)}
    assert {pk: sub.attempts for pk, sub in subs.items()} == dict.fromkeys(ids, 1)
    assert subs[engine_fails].state == "error"
    assert "engine broke" in subs[engine_fails].error_reason
    assert subs[writer_fails].state == "error"
    assert "writer broke" in subs[writer_fails].error_reason
    assert not ResultVersion.objects.filter(submission=writer_fails).exists()
    assert subs[writer_fails].match.status == "scheduled"  # nothing of it was kept
    good = [pk for pk in ids if pk not in (engine_fails, writer_fails)]
    assert {subs[pk].state for pk in good} == {"verified"}
    assert Submission.objects.filter(pk__in=good).standing().count() == len(good)
    assert applied_once(tournament)


@pytest.mark.django_db
def test_records_another_worker_holds_are_left_to_it_and_the_others_verified_meanwhile():
    """A message whose record another worker's batch took along leads a batch of the records
    still waiting (it sent itself again at once: one more message for every record taken
    along, when records come one at a time)."""
    tournament = factories.tournament(lines=4)  # 6 matches
    ids = pending_records(tournament, seed_base=100)
    held = ids[:2]
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:  # another worker's session claims two records
            cursor.execute(
                f"SELECT pg_try_advisory_lock({services.batches._claim_key('id')}) "
                "FROM unnest(%s::bigint[]) AS id",
                [held],
            )
        assert services.verify_waiting(held[0]) == "claimed"  # still held: it looks again
        assert services.verify_waiting(ids[2]) == "already-final"  # verified meanwhile
    finally:
        close_session(other)  # its session's claims end with it, as a dead worker's do
    states = dict(Submission.objects.filter(pk__in=ids).values_list("pk", "state"))
    assert [states[pk] for pk in held] == ["pending", "pending"]
    assert {states[pk] for pk in ids[2:]} == {"verified"}
    assert set(Submission.objects.filter(pk__in=held).values_list("attempts", flat=True)) == {
        0
    }  # never tried: they may still join a batch
    assert services.verify_waiting(held[1]) == "verified"
    assert Submission.objects.filter(pk__in=ids, state="verified").count() == len(ids)


@pytest.mark.django_db
def test_a_message_whose_record_another_batch_wrote_meanwhile_ends_without_looking_again():
    """The other batch wrote the record while this message led its own: the message ends
    (it sent itself again, one more message for the record)."""
    tournament = factories.tournament(lines=4)  # 6 matches
    ids = pending_records(tournament, seed_base=150)
    other = connections.create_connection("default")
    claim_waiting = services.batches._claim_waiting

    def the_other_batch_writes_meanwhile(bound):
        # (the rows are this test's, uncommitted: the other session cannot write them itself)
        Submission.objects.filter(pk=ids[0]).update(state="rejected")
        return claim_waiting(bound)

    try:
        with other.cursor() as cursor:  # another worker's batch holds the first
            key = services.batches._claim_key("%s")
            cursor.execute(f"SELECT pg_try_advisory_lock({key})", [ids[0]])
        with mock.patch.object(
            services.batches, "_claim_waiting", the_other_batch_writes_meanwhile
        ):
            assert services.verify_waiting(ids[0]) == "already-final"
    finally:
        close_session(other)
    assert Submission.objects.filter(pk__in=ids[1:], state="verified").count() == len(ids) - 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "offset", [2**31, 2**63 - 2**20], ids=["past-32-bits", "near-the-largest-id"]
)
def test_records_with_ids_past_32_bits_up_to_the_largest_are_claimed_and_verified(offset):
    """Submission ids are bigints; the claim took the id as a 32-bit integer, so from 2**31 on
    a record could not be claimed ("integer out of range"), neither alone nor in a batch; then
    its key went past a bigint from 5 * 10**18 on ("bigint out of range")."""
    tournament = factories.tournament(lines=4)  # 6 matches
    small = pending_records(tournament, seed_base=300)
    Submission.objects.filter(pk__in=small).update(id=F("id") + offset)  # nothing refers to them
    ids = [pk + offset for pk in small]
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:  # another worker's session claims the last one
            key = services.batches._claim_key("%s")
            cursor.execute(f"SELECT pg_try_advisory_lock({key})", [ids[-1]])
        assert services.verify_waiting(ids[-1]) == "claimed"  # the others verified meanwhile
        assert services.verify_waiting(ids[0]) == "already-final"
    finally:
        close_session(other)
    states = dict(Submission.objects.filter(pk__in=ids).values_list("pk", "state"))
    assert [states[pk] for pk in ids] == ["verified"] * 5 + ["pending"]
    assert services.verify_waiting(ids[-1]) == "verified"
    assert applied_once(tournament)


def claims_free(ids) -> bool:
    """Whether another session can claim each of ``ids`` now (its claims then let go)."""
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute(
                f"SELECT bool_and(pg_try_advisory_lock({services.batches._claim_key('id')})) "
                "FROM unnest(%s::bigint[]) AS id",
                [ids],
            )
            return cursor.fetchone()[0]
    finally:
        close_session(other)


class Stopped(Exception):
    """What a task's soft time limit raises, wherever the task is."""


@pytest.mark.django_db
@pytest.mark.parametrize("where", ["_claim_own", "_claim_batch", "_verify_batch"])
def test_a_batch_stopped_part_way_leaves_no_record_claimed(where):
    """A worker keeps its connection, and a claim is a lock of its session: a batch stopped
    right after claiming (before it knew which records it took) kept the others claimed for
    as long as that worker lived, so no other worker took them and their own messages found
    them "claimed"."""
    tournament = factories.tournament(lines=4)  # 6 matches
    ids = pending_records(tournament, seed_base=400)
    real = getattr(services.batches, where)

    def stopped(*args, **kwargs):
        real(*args, **kwargs)
        raise Stopped

    with mock.patch.object(services.batches, where, stopped), pytest.raises(Stopped):
        services.verify_waiting(ids[0])
    assert claims_free(ids)
    for pk in ids:  # their messages come back and every record is verified
        services.verify_waiting(pk)
    assert Submission.objects.filter(pk__in=ids, state="verified").count() == len(ids)


@pytest.mark.django_db
def test_claims_on_ids_2_48_apart_are_all_released_after_a_stop():
    """Two ids 2**48 apart share a claim key, which one session then holds twice (its own
    record, and the other taken in its batch); ``pg_locks`` shows it once, so releasing each
    row once left the key held for as long as the worker kept its connection."""
    own = 7
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT pg_try_advisory_lock({services.batches._claim_key('id')}) "
            "FROM unnest(%s::bigint[]) AS id",
            [[own, own + 2**48, own + 1]],
        )
        assert [taken for (taken,) in cursor.fetchall()] == [True, True, True]
    services.batches._release(None)
    assert claims_free([own, own + 1])


@pytest.mark.django_db(transaction=True)
def test_two_workers_taking_overlapping_batches_apply_each_record_once():
    tournament = factories.tournament(lines=9)  # 36 matches
    ids = pending_records(tournament, seed_base=200)
    start = threading.Barrier(4)
    errors = []

    def worker(own):
        try:
            start.wait()
            for pk in own:
                services.verify_waiting(pk, bound=8)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    # Four workers, each woken by its own records' messages, all picking from the same queue.
    threads = [threading.Thread(target=worker, args=(ids[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    for pk in Submission.objects.filter(pk__in=ids, state="pending").values_list("pk", flat=True):
        services.verify_waiting(pk)  # a message that found its record claimed comes back
    assert Submission.objects.filter(pk__in=ids, state="verified").count() == len(ids)
    assert ResultVersion.objects.filter(submission__in=ids).count() == len(ids)
    assert applied_once(tournament)
    assert set(Submission.objects.filter(pk__in=ids).values_list("attempts", flat=True)) == {1}


@pytest.mark.django_db(transaction=True)
def test_database_trouble_while_writing_a_group_is_retried_not_blamed_on_the_record():
    """A deadlock, a lost connection or a database restarting while one verdict is written is
    the database's trouble: the group is undone and the error reaches the task (which retries),
    instead of the record ending in ``error`` for good (what a lone record's task does too)."""
    tournament = factories.tournament(lines=4)  # 6 matches
    ids = pending_records(tournament, seed_base=900)
    apply = results.apply_verified_result
    boom_match = Submission.objects.get(pk=ids[2]).match_id

    def apply_or_deadlock(match, verdict, **kwargs):
        if match.pk == boom_match:
            raise OperationalError("deadlock detected")
        return apply(match, verdict, **kwargs)

    with (
        mock.patch.object(results, "apply_verified_result", apply_or_deadlock),
        pytest.raises(OperationalError),
    ):
        services.verify_waiting(ids[0])
    assert Submission.objects.get(pk=ids[2]).state == "pending"
    assert not ResultVersion.objects.filter(submission__in=ids).exists()  # the group undone
    # The retry, and the records' own messages, verify every one of them once.
    for pk in ids:
        services.verify_waiting(pk)
    assert set(Submission.objects.filter(pk__in=ids).values_list("state", flat=True)) == {
        "verified"
    }
    assert applied_once(tournament)
