"""Poison records end: a record whose verification kills or hangs its worker is marked failed
after a bounded number of deliveries instead of being redelivered for ever."""

from unittest import mock

import pytest
from celery.exceptions import SoftTimeLimitExceeded

from games import services, tasks
from tests.api import factories
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db


class WorkerDied(BaseException):
    """What the task sees of a SIGKILL: nothing after this point runs."""


def stored(match, seed=1):
    t = match.round.stage.tournament
    return services.submit_record(match, factories.record(t, seed=seed)).submission


def test_a_record_that_kills_its_worker_fails_after_the_bounded_deliveries(match):
    sub = stored(match)
    with mock.patch.object(services.verifying, "compute_verdict", side_effect=WorkerDied):
        for _ in range(services.MAX_ATTEMPTS):
            with pytest.raises(WorkerDied):
                tasks.verify_submission.apply((sub.pk,), throw=True)
            sub.refresh_from_db()
            assert sub.state == "pending"
        # The next delivery does not run the engine again: it ends the submission.
        assert tasks.verify_submission.apply((sub.pk,)).get() == "failed"
    sub.refresh_from_db()
    assert sub.state == "error"
    assert sub.attempts == services.MAX_ATTEMPTS
    assert str(services.MAX_ATTEMPTS) in sub.error_reason
    assert tasks.verify_submission.apply((sub.pk,)).get() == "already-final"


def test_the_failed_status_is_in_the_api_and_a_rerun_starts_over(match, eager_celery):
    sub = stored(match)
    with mock.patch.object(services.verifying, "compute_verdict", side_effect=WorkerDied):
        for _ in range(services.MAX_ATTEMPTS):
            with pytest.raises(WorkerDied):
                tasks.verify_submission.apply((sub.pk,), throw=True)
    tasks.verify_submission.apply((sub.pk,))
    organizer = match.round.stage.tournament.organizers.first()
    client = client_for(organizer or factories.user("poison-admin", is_staff=True), token=True)
    data = client.get(f"/api/v1/submissions/{sub.pk}/").json()
    assert data["state"] == "error"
    assert data["attempts"] == services.MAX_ATTEMPTS
    assert data["error_reason"]
    sub.refresh_from_db()
    services.rerun_verification(sub)  # the organizer fixed the cause: attempts start again
    sub.refresh_from_db()
    assert sub.attempts == 0


def test_a_hung_verification_is_stopped_by_the_soft_time_limit(match):
    sub = stored(match)
    assert tasks.verify_submission.soft_time_limit and tasks.verify_submission.time_limit
    assert tasks.verify_submission.soft_time_limit < tasks.verify_submission.time_limit
    stopped = SoftTimeLimitExceeded
    with mock.patch.object(services.verifying, "compute_verdict", side_effect=stopped):
        assert tasks.verify_submission.apply((sub.pk,)).get() == "error"
    sub.refresh_from_db()
    assert sub.state == "error"
    assert str(tasks.VERIFY_SOFT_LIMIT_S) in sub.error_reason


def test_every_task_touching_the_database_has_time_limits_and_retries():
    from celery import current_app

    from ratings import tasks as rating_tasks  # noqa: F401  (registers them)

    names = [n for n in current_app.tasks if n.startswith(("games.", "ratings."))]
    assert "ratings.rate_pending" in names
    for name in names:
        task = current_app.tasks[name]
        assert task.time_limit and task.soft_time_limit, name
        # the verification tasks retry in their own handler (games.tasks._verify)
        if name not in (
            "games.tasks.verify_submission",
            "games.tasks.verify_submissions",
            "games.tasks.verify_waiting_records",
        ):
            assert "OperationalError" in {e.__name__ for e in task.autoretry_for}, name
