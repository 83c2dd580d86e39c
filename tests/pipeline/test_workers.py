"""The whole path with real workers: submit over the API, verify in Celery, see the standings.

Marked ``pipeline``; skipped (with the reason) unless DATABASE_URL names PostgreSQL and
CELERY_BROKER_URL is set.
"""

import os
import signal
import time
from collections import Counter
from pathlib import Path

import pytest
from django.db import transaction

from games.models import Submission
from tests.api import factories
from tests.api.conftest import client_for
from tests.pipeline.checks import (
    assert_applied_exactly_once,
    assert_rated_exactly_once,
    pause_mid_run,
    submit_all,
    submit_at_once,
    submit_batches,
    wait_until_final,
)
from tests.pipeline.conftest import BOTH_BROKERS, SKIP_REASON
from tournaments.models import ChangeLog, MatchResult
from tournaments.services.standings import group_standings

pytestmark = [
    pytest.mark.pipeline,
    pytest.mark.skipif(SKIP_REASON is not None, reason=SKIP_REASON or ""),
    # One xdist worker runs the pipeline tests one after the other: each starts Celery workers
    # (and the fault tests a private PostgreSQL), too much at once for two cores.
    pytest.mark.xdist_group("pipeline"),
]


def expected_table(tournament):
    """Standings figures recomputed from the verdicts, independently of the services."""
    rows = {}
    for sub in Submission.objects.filter(
        match__round__stage__tournament=tournament, result_versions__status="in_force"
    ).select_related("match"):
        match, verdict = sub.match, sub.verdict
        for side, line_id in enumerate((match.home_id, match.away_id)):
            row = rows.setdefault(line_id, Counter())
            row["played"] += 1
            row["points_scored"] += verdict["totals"][side]
            row["points_conceded"] += verdict["totals"][1 - side]
            if verdict["winner"] is None:
                row["drawn"] += 1
            elif verdict["winner"] == side:
                row["won"] += 1
            else:
                row["lost"] += 1
    for result in MatchResult.objects.filter(match__round__stage__tournament=tournament):
        rows[result.line_id]["vp"] += result.vp
    return rows


def test_a_round_robin_of_records_all_verified_and_standings_right(workers, db):
    organizer = factories.user("pipeline-org", is_staff=True)
    tournament = factories.tournament(lines=14, organizer=organizer)  # 91 matches
    workers.start()
    ids = submit_all(tournament, organizer)
    assert len(ids) == 91
    wait_until_final(ids, workers, timeout=120)
    assert_applied_exactly_once(tournament)
    assert_rated_exactly_once(tournament, workers)
    expected = expected_table(tournament)
    group = tournament.stages.get().groups.get()
    table = group_standings(group)
    assert len(table) == 14
    for row in table:
        want = expected[row.line.pk]
        got = Counter(
            played=row.played,
            won=row.won,
            drawn=row.drawn,
            lost=row.lost,
            vp=row.vp,
            points_scored=row.points_scored,
            points_conceded=row.points_conceded,
        )
        assert +got == +want, row.line
    vps = [row.vp for row in table]
    assert vps == sorted(vps, reverse=True)


@BOTH_BROKERS
def test_records_sent_in_batches_are_each_verified_and_rated_once(workers, broker, db):
    """One message per batch of records (``verify_submissions``), two workers taking them."""
    organizer = factories.user("pipeline-batch", is_staff=True)
    tournament = factories.tournament(lines=14, organizer=organizer)  # 91 matches
    workers.start()
    workers.start()
    with transaction.atomic():  # the messages appear together, the workers take them at once
        ids = submit_batches(tournament, organizer, size=30)
    assert len(ids) == 91
    wait_until_final(ids, workers, timeout=90)
    assert_applied_exactly_once(tournament)
    assert_rated_exactly_once(tournament, workers)


@BOTH_BROKERS
def test_a_worker_killed_in_a_batch_of_records_loses_nothing(workers, broker, db):
    """The killed worker's message names its records: redelivered (or swept), it verifies
    those still pending; none is applied twice."""
    organizer = factories.user("pipeline-batch-kill", is_staff=True)
    tournament = factories.tournament(lines=12, organizer=organizer)  # 66 matches
    doomed = workers.start()
    workers.start(beat=broker.kind == "redis", sweep_every_s=1, pending_after_s=2)
    with transaction.atomic():
        ids = submit_batches(tournament, organizer, seed_base=500, size=11)
    pause_mid_run(ids, workers)
    workers.kill(doomed)
    workers.resume()
    wait_until_final(ids, workers, timeout=90)
    assert_applied_exactly_once(tournament)
    assert_rated_exactly_once(tournament, workers)


@BOTH_BROKERS
def test_a_worker_killed_mid_run_loses_nothing_and_applies_nothing_twice(workers, broker, db):
    organizer = factories.user("pipeline-kill", is_staff=True)
    tournament = factories.tournament(lines=12, organizer=organizer)  # 66 matches
    # What the killed worker held unacknowledged: RabbitMQ requeues it as soon as the
    # connection goes, so no sweep runs there; Redis gives it back only after its visibility
    # timeout, and the other worker's sweep (beat) sends it again sooner.
    doomed = workers.start()
    workers.start(beat=broker.kind == "redis", sweep_every_s=1, pending_after_s=2)
    ids = submit_at_once(tournament, organizer, seed_base=1000)
    pause_mid_run(ids, workers)
    workers.kill(doomed)  # SIGKILL to the worker and its pool children, mid-queue
    workers.resume()
    wait_until_final(ids, workers, timeout=90)
    assert_applied_exactly_once(tournament)
    assert_rated_exactly_once(tournament, workers)


def test_a_pool_process_killed_mid_task_is_redelivered_without_the_sweep(workers, db):
    """``reject_on_worker_lost``: the parent requeues the task its dead child was running."""
    organizer = factories.user("pipeline-child", is_staff=True)
    tournament = factories.tournament(lines=12, organizer=organizer)  # 66 matches
    worker = workers.start()  # no beat: only redelivery can finish the job
    ids = submit_all(tournament, organizer, seed_base=3000)
    deadline = time.monotonic() + 60
    while Submission.objects.filter(pk__in=ids).exclude(state="pending").count() < 5:
        assert time.monotonic() < deadline, workers.logs()
        time.sleep(0.02)
    children = Path(f"/proc/{worker.pid}/task/{worker.pid}/children").read_text().split()
    assert children, "the prefork worker has no pool processes"
    for child in children:
        os.kill(int(child), signal.SIGKILL)
    wait_until_final(ids, workers, timeout=90)
    assert_applied_exactly_once(tournament)
    assert_rated_exactly_once(tournament, workers)


def test_a_poison_record_ends_failed_and_holds_back_nothing(workers, db):
    """A record that kills the process verifying it: redelivered a bounded number of times,
    then marked failed; every other record of the burst is verified and rated."""
    from games.services import MAX_ATTEMPTS

    organizer = factories.user("pipeline-poison", is_staff=True)
    tournament = factories.tournament(lines=8, organizer=organizer)  # 28 matches
    workers.start(poison=True)
    client = client_for(organizer, token=True)
    matches = factories.matches(tournament)
    ids = []
    for index, match in enumerate(matches):
        doc = factories.record(tournament, seed=4000 + index)
        if index == 3:
            doc["seats"] = ["POISON", "nobody"]
        response = client.post(f"/api/v1/matches/{match.pk}/records/", data=doc, format="json")
        assert response.status_code == 202, response.content
        ids.append(response.json()["id"])
    wait_until_final(ids, workers, timeout=120)
    poison = Submission.objects.get(pk=ids[3])
    assert poison.state == "error" and poison.attempts == MAX_ATTEMPTS, workers.logs()
    assert str(MAX_ATTEMPTS) in poison.error_reason
    others = Submission.objects.filter(pk__in=ids).exclude(pk=poison.pk)
    assert set(others.values_list("state", flat=True)) == {"verified"}
    logs = Counter(
        ChangeLog.objects.filter(tournament=tournament, action="result.verified").values_list(
            "match_id", flat=True
        )
    )
    assert set(logs.values()) == {1} and len(logs) == others.count()
    assert_rated_exactly_once(tournament, workers)
