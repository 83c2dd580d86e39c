"""Records submitted one at a time wake the workers once, not one message a record: the mark
(``VerificationWake``), the worker's loop over what is waiting (``verify_all_waiting``), and the
records an earlier delivery died with, verified alone."""

from unittest import mock

import pytest
from django.db import OperationalError, connections
from django.utils import timezone

from games import services, tasks
from games.models import Submission, VerificationWake
from tests.api import factories
from tests.api.test_batches import applied_once, claims_free, close_session, pending_records
from tournaments.services import results

pytestmark = pytest.mark.skipif(
    not services.batching_available(), reason="wake-ups need PostgreSQL's advisory locks"
)


@pytest.fixture
def broker():
    """A broker that is not eager: what each send published, counted by task name."""
    sent: list[str] = []
    tasks = {
        name: services.enqueueing._task(name)
        for name in (services.VERIFY_WAITING, services.VERIFY_ONE)
    }
    patches = [
        mock.patch.object(services.enqueueing, "eager", return_value=False),
        *(
            mock.patch.object(task, "apply_async", lambda *a, _n=name, **k: sent.append(_n))
            for name, task in tasks.items()
        ),
    ]
    for patch in patches:
        patch.start()
    yield sent
    for patch in reversed(patches):
        patch.stop()


def submit_one_by_one(tournament, matches, seed_base):
    ids = []
    for index, match in enumerate(matches):
        with transaction_committed():
            outcome = services.submit_record(
                match, factories.record(tournament, seed=seed_base + index)
            )
        ids.append(outcome.submission.pk)
    return ids


class transaction_committed:
    """Run the on-commit callbacks of what the block stores, as its commit would (the test's
    own transaction never commits)."""

    def __enter__(self):
        self.captured = []
        self.patch = mock.patch(
            "django.db.transaction.on_commit", lambda func, **_kw: self.captured.append(func)
        )
        self.patch.start()

    def __exit__(self, *exc):
        self.patch.stop()
        if exc[0] is None:
            for func in self.captured:
                func()


@pytest.mark.django_db
def test_records_submitted_one_at_a_time_send_one_wake_up_while_it_is_out(broker):
    tournament = factories.tournament(lines=5)  # 10 matches
    matches = factories.matches(tournament)
    ids = submit_one_by_one(tournament, matches[:6], seed_base=0)
    assert broker == [services.VERIFY_WAITING]  # one message for the six, not six
    stamped = dict(Submission.objects.filter(pk__in=ids).values_list("pk", "enqueued_at"))
    assert stamped[ids[0]] is not None  # it sent the wake-up
    assert all(stamped[pk] is None for pk in ids[1:])  # covered by the one out
    services.take_wake()  # a worker takes it: the next record sends another
    submit_one_by_one(tournament, matches[6:8], seed_base=100)
    assert broker == [services.VERIFY_WAITING] * 2


@pytest.mark.django_db
def test_a_wake_up_out_too_long_counts_as_lost_and_the_next_record_sends_another(broker):
    tournament = factories.tournament(lines=4)
    matches = factories.matches(tournament)
    submit_one_by_one(tournament, matches[:1], seed_base=0)
    long_ago = timezone.now() - timezone.timedelta(seconds=services.WAKE_STALE_S + 1)
    VerificationWake.objects.update(requested_at=long_ago)
    submit_one_by_one(tournament, matches[1:2], seed_base=10)
    assert broker == [services.VERIFY_WAITING] * 2


@pytest.mark.django_db
def test_a_broker_that_refuses_the_wake_up_leaves_the_mark_clear_for_the_next_record(broker):
    tournament = factories.tournament(lines=4)
    matches = factories.matches(tournament)
    task = services.enqueueing._task(services.VERIFY_WAITING)
    with mock.patch.object(task, "apply_async", side_effect=ConnectionError("broker down")):
        (first,) = submit_one_by_one(tournament, matches[:1], seed_base=0)
    sub = Submission.objects.get(pk=first)
    assert sub.state == "pending" and sub.enqueued_at is None  # for the sweep
    assert VerificationWake.objects.get().requested_at is None
    submit_one_by_one(tournament, matches[1:2], seed_base=10)
    assert broker == [services.VERIFY_WAITING]


@pytest.mark.django_db
def test_a_wake_up_verifies_every_record_waiting_batch_after_batch(broker):
    tournament = factories.tournament(lines=5)  # 10 matches
    ids = pending_records(tournament)
    services.wake_workers(ids[:1])
    assert VerificationWake.objects.get().requested_at is not None
    assert services.verify_all_waiting(bound=4, budget_s=60) == len(ids)
    assert VerificationWake.objects.get().requested_at is None or broker
    states = set(Submission.objects.filter(pk__in=ids).values_list("state", flat=True))
    assert states == {"verified"}
    assert set(Submission.objects.filter(pk__in=ids).values_list("attempts", flat=True)) == {1}
    assert applied_once(tournament)
    # Full batches woke another worker to share them (the mark was clear after its take).
    assert broker.count(services.VERIFY_WAITING) == 2


@pytest.mark.django_db
def test_records_an_earlier_delivery_died_with_are_verified_alone_the_least_tried_first(broker):
    tournament = factories.tournament(lines=4)  # 6 matches
    ids = pending_records(tournament, seed_base=300)
    # A batch died holding the first three (one try each); the third killed two workers.
    Submission.objects.filter(pk__in=ids[:3]).update(attempts=1)
    Submission.objects.filter(pk=ids[0]).update(attempts=2)
    order = []
    run = services.batches.run_verification

    def noting(pk):
        order.append(pk)
        return run(pk)

    with mock.patch.object(services.batches, "run_verification", noting):
        assert services.verify_all_waiting(budget_s=60) == len(ids)
    assert order == [ids[1], ids[2], ids[0]]  # alone, the one tried most last
    attempts = dict(Submission.objects.filter(pk__in=ids).values_list("pk", "attempts"))
    assert [attempts[pk] for pk in ids[:3]] == [3, 2, 2]
    assert Submission.objects.filter(pk__in=ids, state="verified").count() == len(ids)
    assert applied_once(tournament)


@pytest.mark.django_db
def test_a_record_that_died_with_every_try_ends_failed_and_holds_back_nobody(broker):
    tournament = factories.tournament(lines=4)
    ids = pending_records(tournament, seed_base=400)
    Submission.objects.filter(pk=ids[0]).update(attempts=services.MAX_ATTEMPTS)
    services.verify_all_waiting(budget_s=60)
    poison = Submission.objects.get(pk=ids[0])
    assert poison.state == "error" and str(services.MAX_ATTEMPTS) in poison.error_reason
    assert Submission.objects.filter(pk__in=ids[1:], state="verified").count() == len(ids) - 1


@pytest.mark.django_db
def test_database_trouble_in_a_wake_up_gives_the_batch_back_its_first_try(broker):
    tournament = factories.tournament(lines=4)  # 6 matches
    ids = pending_records(tournament, seed_base=500)
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
        services.verify_all_waiting(budget_s=60)
    assert set(Submission.objects.filter(pk__in=ids).values_list("attempts", flat=True)) == {0}
    assert claims_free(ids)  # none left held by this session
    assert services.verify_all_waiting(budget_s=60) == len(ids)  # the retry
    assert applied_once(tournament)


@pytest.mark.django_db
def test_a_wake_up_looks_again_at_records_a_dying_worker_still_holds(broker, monkeypatch):
    """A worker killed mid-batch: RabbitMQ hands its wake-up to another worker at once, before
    PostgreSQL has ended the dead worker's session and let go of its claims. That worker found
    nothing it could claim and stopped, and the batch's records waited for the beat sweep
    (minutes); a redelivered wake-up looks again shortly, a bounded number of times."""
    monkeypatch.setattr(tasks, "_redelivered", lambda task: True)
    tournament = factories.tournament(lines=4)  # 6 matches
    ids = pending_records(tournament, seed_base=600)
    held = ids[:3]
    Submission.objects.filter(pk__in=held).update(attempts=1)  # the dead batch's try
    dying = connections.create_connection("default")
    try:
        with dying.cursor() as cursor:  # the dead worker's session, not ended yet
            cursor.execute(
                f"SELECT pg_try_advisory_lock({services.batches._claim_key('id')}) "
                "FROM unnest(%s::bigint[]) AS id",
                [held],
            )
        with mock.patch.object(tasks.verify_waiting_records, "apply_async") as again:
            assert tasks.verify_waiting_records() == len(ids) - len(held)
            again.assert_called_once_with((), kwargs={"looks": 1}, countdown=tasks.LOOK_AGAIN_S)
            again.reset_mock()
            # past the last look (longer than any live worker's task), the sweep's turn
            assert tasks.verify_waiting_records(looks=tasks.MAX_LOOKS) == 0
            again.assert_not_called()
    finally:
        close_session(dying)
    with mock.patch.object(tasks.verify_waiting_records, "apply_async") as again:
        assert tasks.verify_waiting_records(looks=1) == len(held)  # alone, one by one
        again.assert_not_called()  # nothing held any more: no look after this one
    assert Submission.objects.filter(pk__in=ids, state="verified").count() == len(ids)
    assert applied_once(tournament)


@pytest.mark.django_db
def test_a_first_delivery_leaves_a_live_worker_s_claims_to_it(broker):
    """Records another worker holds while a wake-up's worker finishes are that worker's to
    verify: a first delivery sends no look (it cost a message and five statements a record
    when records came one at a time)."""
    tournament = factories.tournament(lines=4)
    ids = pending_records(tournament, seed_base=700)
    Submission.objects.filter(pk=ids[0]).update(attempts=1)
    working = connections.create_connection("default")
    try:
        with working.cursor() as cursor:  # a live worker's batch
            cursor.execute(
                f"SELECT pg_try_advisory_lock({services.batches._claim_key('id')}) "
                "FROM unnest(%s::bigint[]) AS id",
                [ids[:1]],
            )
        with mock.patch.object(tasks.verify_waiting_records, "apply_async") as again:
            assert tasks.verify_waiting_records() == len(ids) - 1
            again.assert_not_called()
    finally:
        close_session(working)
