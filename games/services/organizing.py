"""The organizer's actions on a record: verify it again, let its verified version stand."""

import logging
from functools import partial

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from games.exceptions import SubmissionStateError
from games.models import Submission
from games.services.enqueueing import enqueue_verification
from tournaments.services import results

logger = logging.getLogger(__name__)


def rerun_verification(submission: Submission) -> None:
    """Send a submission back to ``pending`` and verify it again."""
    with transaction.atomic():
        Submission.objects.filter(pk=submission.pk).update(
            state=Submission.State.PENDING,
            error_reason="",
            enqueued_at=timezone.now(),
            attempts=0,
        )
        transaction.on_commit(partial(enqueue_verification, submission.pk, stamped=True))


def choose_standing(submission: Submission, *, user=None, based_on=None) -> None:
    """The organizer's decision for a verified record: its result version comes into force.

    ``based_on`` is the version in force the organizer saw (``""`` or ``0``: none): a stale one
    is refused with ``StaleResult``, a missing one (``None``) with ``VersionRequired``.
    """
    based_on = results.named_version(based_on)

    version = submission.result_versions.order_by("-number").first()
    if submission.state != Submission.State.VERIFIED or version is None:
        raise SubmissionStateError(
            _("Only a verified version can stand; this one is %(state)s.")
            % {"state": submission.get_state_display()}
        )
    results.accept_version(version, user=user, based_on=based_on)
    logger.info("match %s: version %s now stands", submission.match_id, submission.version)
