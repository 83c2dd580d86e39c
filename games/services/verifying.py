"""Verifying one record: the engine's verdict, computed outside any lock, then written with
the match's result in one transaction with the match row locked, so a delivery that comes
twice never applies a result twice."""

import logging
from contextlib import nullcontext

from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

import scopa
from games.models import Submission
from games.services.documents import record_body
from tournaments.exceptions import ResultError
from tournaments.models import Match
from tournaments.services import results

logger = logging.getLogger(__name__)

# A record verifies in milliseconds; one that takes this long is stuck (the soft limit raises in
# the task, the hard limit kills the pool process and counts as a poison attempt).
VERIFY_SOFT_LIMIT_S = 30
VERIFY_HARD_LIMIT_S = 45

# Database trouble that goes away by itself (connection lost, database restarting, deadlock,
# serialization failure): the task retries, the record is not at fault.
TRANSIENT_ERRORS = (OperationalError, InterfaceError)

# Deliveries of one submission that may end without a verdict (the worker killed by the record,
# or by the hard time limit) before it is marked failed.
MAX_ATTEMPTS = getattr(settings, "GAMES_MAX_VERIFY_ATTEMPTS", 3)


def compute_verdict(document: dict | str) -> dict:
    """The engine's verdict; for an illegal record the errors in English are kept too.

    ``document``: the stored document, or the record's JSON text (:func:`record_text`), which
    the engine reads straight into its own types."""
    body = document if isinstance(document, str) else record_body(document)
    lang = (getattr(settings, "LANGUAGE_CODE", "it") or "it")[:2]
    verdict = scopa.verify_document(body, lang=lang)
    errors = verdict.get("errors") or []
    if errors and all("messages" in e for e in errors):
        verdict["errors_en"] = [
            {**e, "message": e["messages"].get("en", e["message"])} for e in errors
        ]
    elif errors and lang != "en":
        other = scopa.verify_document(body, lang="en")
        verdict["errors_en"] = other.get("errors", [])
    verdict["lang"] = lang
    return verdict


def run_verification(submission_id: int) -> str:
    """Verify one submission; safe to run any number of times (a final state is never redone)."""
    submission = Submission.objects.filter(pk=submission_id).first()
    if submission is None:
        logger.warning("submission %s: not found", submission_id)
        return "missing"
    if submission.is_final:
        return "already-final"
    if submission.attempts >= MAX_ATTEMPTS:
        # Every earlier delivery died with its worker (killed, out of memory, hard time limit)
        # before writing anything: stop here instead of redelivering it for ever.
        mark_error(submission_id, poison_reason(submission.attempts))
        logger.error("submission %s: given up after %s attempts", submission_id, MAX_ATTEMPTS)
        return "failed"
    # Counted (and committed) before the engine runs, so a delivery that kills its worker
    # still counts; a delivery that ends normally leaves the submission final.
    Submission.objects.filter(pk=submission_id).update(attempts=F("attempts") + 1)
    verdict = compute_verdict(submission.document)  # pure CPU work, outside any lock
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=submission.match_id)
        submission = Submission.objects.select_for_update().get(pk=submission_id)
        if submission.is_final:
            return "already-final"
        version = submission.result_versions.order_by("-number").first()
        store_verdict(match, submission, verdict, version)
        submission.save()
    logger.info("submission %s: %s", submission_id, submission.state)
    return submission.state


def slow_reason() -> str:
    return _("Verification took longer than %(s)d seconds and was stopped.") % {
        "s": VERIFY_SOFT_LIMIT_S
    }


# Fields a verification writes on its submission (saved one by one, or in bulk for a batch).
VERDICT_FIELDS = ("state", "verdict", "verified_at", "has_mismatches", "error_reason")


def store_verdict(match, submission, verdict, version, *, locked=False, savepoint=True):
    """Set one verified record's verdict and, the first time it verifies, store its result.

    The match row is locked by the caller (``locked``: with its related rows, by
    ``lock_matches``); ``version`` is the record's latest result version, if any. The version
    goes through the one service that writes results (``tournaments.services.results``), which
    decides whether it comes into force or waits for the organizer. A record that already has a
    version (a rerun) only gets its verdict refreshed and a report: a rerun applies nothing by
    itself. The caller saves the submission's ``VERDICT_FIELDS``. ``savepoint=False``: the
    caller's ``ResultBatch`` (``tournaments.services.results.batch``) says this result writes
    nothing before its flush.
    """
    now = timezone.now()
    submission.verdict = verdict
    submission.verified_at = now
    submission.has_mismatches = bool(verdict.get("declared_mismatches"))
    if not verdict.get("valid"):
        submission.state = Submission.State.REJECTED
        if version is not None and version.status == version.Status.IN_FORCE:
            submission.error_reason = _(
                "This version no longer verifies but the match's result still comes from it: "
                "enter the result at the desk."
            )
        return
    if version is not None:
        submission.state = Submission.State.VERIFIED
        submission.error_reason = ""
        try:
            decision = results.decision_from_verdict(match, verdict)
            agrees = results.same_result(results.sheet_of(decision), version.sheet)
        except ResultError as exc:
            agrees, submission.error_reason = False, str(exc)
        if not agrees and not submission.error_reason:
            submission.error_reason = _(
                "Verified again: the record now gives a different result from its version "
                "%(n)d. Nothing was changed; enter the result at the desk if it must change."
            ) % {"n": version.number}
        return
    try:
        with transaction.atomic() if savepoint else nullcontext():
            results.apply_verified_result(
                match,
                verdict,
                user=submission.submitter,
                source=_source(submission),
                submission=submission,
                locked=locked,
            )
    except ResultError as exc:
        submission.state = Submission.State.ERROR
        submission.error_reason = str(exc)
        return
    submission.state = Submission.State.VERIFIED
    submission.error_reason = ""


def _source(submission):
    """How the change log names the submission a result came from."""
    return f"submission:{submission.pk} v{submission.version}"


def poison_reason(attempts: int) -> str:
    return _(
        "Verification stopped its worker %(n)d times (a crash or the time limit) and was "
        "abandoned; run it again once the cause is fixed."
    ) % {"n": attempts}


def uncount_attempt(submission_id: int) -> None:
    """A delivery that ends in a retry (database trouble) is not a poison attempt."""
    Submission.objects.filter(pk=submission_id, attempts__gt=0).update(attempts=F("attempts") - 1)


def mark_error(submission_id: int, reason: str) -> None:
    """End a submission in ``error`` with the reason kept (unless it already reached a verdict)."""
    Submission.objects.filter(pk=submission_id, state=Submission.State.PENDING).update(
        state=Submission.State.ERROR, error_reason=reason[:4000], verified_at=timezone.now()
    )
