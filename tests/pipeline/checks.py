"""What every pipeline test checks at the end: every submission final, every result in force
applied once and rated once."""

import time
from collections import Counter

import pytest
from django.db import transaction
from django.db.models import Count

from games.models import Submission
from tests.api import factories
from tests.api.conftest import client_for
from tournaments.models import ChangeLog, MatchResult, ResultVersion
from tournaments.services.results import deals_in_force


def submit_all(tournament, organizer, seed_base=0, matches=None):
    """Post a record for each match (of the tournament, or ``matches``) over the API."""
    client = client_for(organizer, token=True)
    ids = []
    if matches is None:
        matches = factories.matches(tournament)
    for index, match in enumerate(matches):
        doc = factories.record(tournament, seed=seed_base + index)
        response = client.post(f"/api/v1/matches/{match.pk}/records/", data=doc, format="json")
        assert response.status_code == 202, response.content
        ids.append(response.json()["id"])
    return ids


def submit_batches(tournament, organizer, seed_base=0, size=50):
    """Post a record for each match of the tournament over the API, ``size`` records a request
    (``POST /api/v1/records/``): one verification message per batch."""
    client = client_for(organizer, token=True)
    matches = factories.matches(tournament)
    ids = []
    for start in range(0, len(matches), size):
        body = [
            {**factories.record(tournament, seed=seed_base + start + i), "match": match.pk}
            for i, match in enumerate(matches[start : start + size])
        ]
        response = client.post("/api/v1/records/", data=body, format="json")
        assert response.status_code == 207, response.content
        results = response.json()["results"]
        assert {item["status"] for item in results} == {202}, results
        ids += [item["submission"]["id"] for item in results]
    return ids


def wait_until_final(ids, workers, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pending = Submission.objects.filter(pk__in=ids, state="pending").count()
        if pending == 0:
            return
        time.sleep(0.25)
    states = Counter(Submission.objects.filter(pk__in=ids).values_list("state", flat=True))
    pytest.fail(f"not all verified after {timeout}s: {dict(states)}\n{workers.logs()}")


def assert_applied_exactly_once(tournament):
    subs = Submission.objects.filter(match__round__stage__tournament=tournament)
    assert set(subs.values_list("state", flat=True)) == {"verified"}
    assert subs.standing().count() == subs.count()
    versions = Counter(
        ResultVersion.objects.filter(submission__in=subs).values_list("submission", flat=True)
    )
    assert set(versions.values()) == {1} and len(versions) == subs.count()
    logs = Counter(
        ChangeLog.objects.filter(tournament=tournament, action="result.verified").values_list(
            "match_id", flat=True
        )
    )
    assert set(logs.values()) == {1}, "a result was applied twice"
    assert len(logs) == subs.count()
    per_match = (
        MatchResult.objects.filter(match__round__stage__tournament=tournament)
        .values("match")
        .annotate(n=Count("id"))
    )
    assert {row["n"] for row in per_match} == {2}
    in_force = deals_in_force([sub.match_id for sub in subs])
    for sub in subs:
        deals = sum(1 for d in sub.verdict["deals"] if not d.get("void"))
        assert len(in_force[sub.match_id]) == deals


def assert_rated_exactly_once(tournament, workers, timeout=60):
    """Every result in force rated once: one rated entry and one change per player and match,
    with nobody having announced anything but the workers' own messages and sweeps."""
    from ratings.models import RatedMatch, RatingChange
    from ratings.services.ratings import pending_match_ids

    deadline = time.monotonic() + timeout
    while pending_match_ids() and time.monotonic() < deadline:
        time.sleep(0.25)
    assert pending_match_ids() == [], workers.logs()
    done = MatchResult.objects.filter(match__round__stage__tournament=tournament).values("match_id")
    matches = set(done.values_list("match_id", flat=True))
    rated = Counter(RatedMatch.objects.filter(match__in=matches).values_list("match", flat=True))
    assert set(rated) == matches and set(rated.values()) == {1}
    changes = Counter(
        RatingChange.objects.filter(match__in=matches).values_list("match", flat=True)
    )
    assert set(changes.values()) == {2}  # singles: one change per player


def wait_for_progress(ids, workers, done=10, timeout=60):
    """Until ``done`` of the submissions are final; fails if the burst ended before the fault
    could hit it."""
    deadline = time.monotonic() + timeout
    while Submission.objects.filter(pk__in=ids).exclude(state="pending").count() < done:
        assert time.monotonic() < deadline, workers.logs()
        time.sleep(0.02)
    left = Submission.objects.filter(pk__in=ids, state="pending").count()
    assert left > 0, "the burst was over before the fault; make it longer"


def pause_mid_run(ids, workers, done=5, timeout=60):
    """Freeze the workers once ``done`` submissions are final, with others still to do: the
    fault the test stages next hits work under way, whatever the machine's speed."""
    deadline = time.monotonic() + timeout
    while Submission.objects.filter(pk__in=ids).exclude(state="pending").count() < done:
        assert time.monotonic() < deadline, workers.logs()
        time.sleep(0.02)
    workers.pause()
    left = Submission.objects.filter(pk__in=ids, state="pending").count()
    assert left > 0, "the burst was over before the workers froze; make it longer"
    return left


def submit_at_once(tournament, organizer, seed_base=0, matches=None):
    """``submit_all`` in one transaction: the records and their messages appear together at the
    commit, so the workers (started before) boot while the records are posted, and the burst
    is queued whole when they begin."""
    with transaction.atomic():
        return submit_all(tournament, organizer, seed_base, matches)
