"""What the pages ask of the submitted match records: read-only queries, no writes."""

from __future__ import annotations

import logging

from django.db.models import Q

from games.models import Submission
from tournaments.models import ResultVersion

logger = logging.getLogger(__name__)


def standing_submission(match):
    """The verified record whose version is the match's result in force, or None (one query).

    Only then does the public page show a replay: a result entered at the desk over a record
    makes the record's replay irrelevant.
    """
    return (
        Submission.objects.filter(
            result_versions__match=match,
            result_versions__status=ResultVersion.Status.IN_FORCE,
            state=Submission.State.VERIFIED,
        )
        .only("id", "document", "verdict", "state", "version", "verified_at")
        .first()
    )


def submissions_needing_attention(tournament, limit=200):
    """Record submissions still pending, rejected or in error (newest first)."""
    return list(
        Submission.objects.filter(match__round__stage__tournament=tournament)
        .filter(
            Q(
                state__in=[
                    Submission.State.PENDING,
                    Submission.State.REJECTED,
                    Submission.State.ERROR,
                ]
            )
            | Q(result_versions__status=ResultVersion.Status.AWAITING)
        )
        .distinct()
        .select_related("match__home", "match__away", "match__round", "submitter")
        .with_version_status()
        .defer("document", "verdict")
        .order_by("-submitted_at", "-id")[:limit]
    )


def match_submission(match, submission_id):
    """One record submission of this match, or None."""
    return Submission.objects.filter(match=match, pk=submission_id).first()


def match_submissions(match):
    """Every record submission of one match, newest first."""
    return list(
        Submission.objects.filter(match=match)
        .select_related("submitter")
        .with_version_status()
        .defer("document")
        .order_by("-version")
    )


def matches_with_replay(match_ids):
    """The ids among ``match_ids`` whose result in force comes from a verified record (their
    match page shows its replay), in one query."""
    return set(
        Submission.objects.filter(
            result_versions__match__in=list(match_ids),
            result_versions__status=ResultVersion.Status.IN_FORCE,
            state=Submission.State.VERIFIED,
        ).values_list("result_versions__match_id", flat=True)
    )
