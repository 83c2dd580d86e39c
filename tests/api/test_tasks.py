"""The verification task in-process: idempotent, retries transient failures, keeps the reason
of anything else; the sweep re-enqueues what a broker outage left pending."""

import datetime
import json
from unittest import mock

import pytest
from celery.exceptions import Retry
from django.core.management import call_command
from django.db import OperationalError
from django.utils import timezone, translation

from config.celery import app as celery_app
from games import services, tasks
from games.models import Submission
from tests.api import factories
from tournaments.models import ChangeLog, MatchResult, ResultVersion

pytestmark = pytest.mark.django_db


def stored(match, seed=1, **kwargs):
    """A pending submission, stored without running its task (on_commit not executed)."""
    t = match.round.stage.tournament
    return services.submit_record(match, factories.record(t, seed=seed), **kwargs).submission


def test_a_redelivered_task_applies_nothing_twice(match):
    sub = stored(match)
    assert tasks.verify_submission.delay(sub.pk).get() == "verified"
    versions = list(ResultVersion.objects.filter(match=match).values_list("id", "status"))
    logs = ChangeLog.objects.filter(match=match).count()
    assert tasks.verify_submission.delay(sub.pk).get() == "already-final"
    assert list(ResultVersion.objects.filter(match=match).values_list("id", "status")) == versions
    assert MatchResult.objects.filter(match=match).count() == 2
    assert ChangeLog.objects.filter(match=match).count() == logs
    sub.refresh_from_db()
    assert sub.attempts == 1


def test_a_transient_database_error_is_retried(match):
    sub = stored(match)
    real = services.run_verification
    calls = []

    def flaky(submission_id):
        calls.append(submission_id)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real(submission_id)

    with mock.patch.object(services, "run_verification", flaky):
        with pytest.raises(Retry) as retried:
            tasks.verify_submission.apply((sub.pk,), throw=True)
        assert retried.value.when == 1  # backoff: 1 s, then 2, 4, … up to 60
        sub.refresh_from_db()
        assert sub.state == "pending"
        tasks.verify_submission.apply((sub.pk,), retries=1)
    sub.refresh_from_db()
    assert len(calls) == 2
    assert sub.state == "verified"


def test_a_persistent_database_error_ends_in_error_with_the_reason(match):
    sub = stored(match)
    boom = OperationalError("could not connect to server")
    with mock.patch.object(services, "run_verification", side_effect=boom):
        tasks.verify_submission.apply((sub.pk,), retries=tasks.MAX_RETRIES)
    sub.refresh_from_db()
    assert sub.state == "error"
    assert "could not connect" in sub.error_reason


def test_an_unexpected_failure_ends_in_error_with_the_reason(match):
    sub = stored(match)
    with mock.patch.object(services.verifying, "compute_verdict", side_effect=KeyError("totals")):
        assert tasks.verify_submission.delay(sub.pk).get() == "error"
    sub.refresh_from_db()
    assert sub.state == "error"
    assert "KeyError" in sub.error_reason
    assert MatchResult.objects.filter(match=match).count() == 0


def test_a_result_the_tournament_refuses_ends_in_error(match):
    from tournaments.exceptions import ResultError

    sub = stored(match)
    with mock.patch(
        "tournaments.services.results.apply_verified_result",
        side_effect=ResultError("The later match already has a result."),
    ):
        tasks.verify_submission.delay(sub.pk)
    sub.refresh_from_db()
    assert sub.state == "error"
    assert "later match" in sub.error_reason


def test_broker_down_at_submit_leaves_it_pending_and_the_sweep_sends_it(
    match, django_capture_on_commit_callbacks
):
    celery_app.conf.task_always_eager = False
    try:
        refused = ConnectionRefusedError(111)
        with (
            mock.patch.object(tasks.verify_submission, "apply_async", side_effect=refused),
            # a record stored alone on PostgreSQL wakes the workers instead
            mock.patch.object(tasks.verify_waiting_records, "apply_async", side_effect=refused),
            django_capture_on_commit_callbacks(execute=True),
        ):
            sub = stored(match)
        sub.refresh_from_db()
        assert sub.state == "pending" and sub.enqueued_at is None
    finally:
        celery_app.conf.task_always_eager = True
    # Not old enough yet: the sweep leaves it alone.
    assert tasks.sweep_pending.delay().get() == 0
    Submission.objects.filter(pk=sub.pk).update(
        submitted_at=timezone.now() - datetime.timedelta(minutes=5)
    )
    assert tasks.sweep_pending.delay().get() == 1
    sub.refresh_from_db()
    assert sub.state == "verified"


@pytest.mark.skipif(not services.batching_available(), reason="wake-ups need PostgreSQL")
def test_the_sweep_wakes_the_workers_once_for_every_record_left_pending(tournament):
    """It sent one message a record; one wake-up's worker takes them all, batch after batch,
    and a record whose earlier delivery died alone (``services.verify_all_waiting``)."""
    subs = [stored(match, seed=i) for i, match in enumerate(factories.matches(tournament)[:3])]
    Submission.objects.filter(pk__in=[s.pk for s in subs]).update(
        submitted_at=timezone.now() - datetime.timedelta(minutes=5), enqueued_at=None
    )
    services.take_wake()  # no wake-up out
    with (
        mock.patch.object(services, "wakes_available", return_value=True),
        mock.patch.object(tasks.verify_waiting_records, "apply_async") as wake,
        mock.patch.object(tasks.verify_submission, "apply_async") as one,
    ):
        assert tasks.sweep_pending() == 3
        assert wake.call_count == 1 and one.call_count == 0
        # stamped with the wake-up, so the next sweep leaves them to it
        assert not Submission.objects.filter(pk__in=[s.pk for s in subs], enqueued_at=None)
        Submission.objects.filter(pk__in=[s.pk for s in subs]).update(enqueued_at=None)
        # a wake-up is out (its mark is fresh): none is sent, its worker sees them
        assert tasks.sweep_pending() == 0
        assert wake.call_count == 1 and one.call_count == 0
    services.verify_all_waiting(budget_s=60)
    assert {s.state for s in Submission.objects.filter(pk__in=[s.pk for s in subs])} == {"verified"}


def test_the_sweep_is_in_the_beat_schedule():
    entry = celery_app.conf.beat_schedule["sweep-pending-submissions"]
    assert entry["task"] == "games.tasks.sweep_pending"


def test_import_folder_and_jsonl_restartable(tmp_path, tournament):
    m1, m2, m3 = factories.matches(tournament)
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / f"match-{m1.pk}.json").write_text(json.dumps(factories.record(tournament, seed=1)))
    doc = factories.record(tournament, seed=2)
    doc["match"] = m2.pk
    (folder / "second.json").write_text(json.dumps(doc))
    (folder / "nomatch.json").write_text(json.dumps(factories.record(tournament, seed=3)))
    (folder / f"match-{m3.pk}-broken.json").write_text("{oops")
    out, err = _run(folder)
    assert "2 stored, 0 already there, 2 refused" in out
    assert "no_match" in err and "malformed_json" in err
    out, _err = _run(folder)
    assert "0 stored, 2 already there, 2 refused" in out
    assert Submission.objects.count() == 2
    assert set(Submission.objects.values_list("state", flat=True)) == {"verified"}
    assert Submission.objects.get(match=m2).document == factories.record(tournament, seed=2)
    # The same record as JSON lines: nothing new; a new record for m3 is stored.
    lines = tmp_path / "records.jsonl"
    third = factories.record(tournament, seed=4)
    third["match"] = m3.pk
    lines.write_text(json.dumps(doc) + "\n\n" + json.dumps(third) + "\n")
    out, _err = _run(lines)
    assert "1 stored, 1 already there, 0 refused" in out
    assert Submission.objects.filter(source="import").count() == 3


def _run(path):
    import io

    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch("django.db.transaction.on_commit", lambda fn, *a, **k: fn()),
        translation.override("en"),
    ):
        call_command("import_records", str(path), "--no-progress", stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()
