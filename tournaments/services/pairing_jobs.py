"""Rounds paired in a Celery worker, never inside a web request, when the pairing can take over
a second (the FIDE Dutch engine of a Swiss stage of a hundred lines and more). The desk asks for
the round; a worker pairs it through ``pairing.pair_next_round``; the desk shows the job's state
while it waits and the refusal if there is one. With no broker (the embedded default) Celery runs
the task eagerly, so the round is there when the page comes back.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from tournaments.exceptions import PairingError, TournamentError
from tournaments.models import PairingJob, Stage
from tournaments.services import pairing

logger = logging.getLogger(__name__)

# Kinds whose pairing can take over a second: paired by a worker.
PAIRED_IN_WORKER = frozenset({Stage.Kind.SWISS})

ACTIVE = (PairingJob.State.QUEUED, PairingJob.State.RUNNING)


def in_worker(stage) -> bool:
    return stage.kind in PAIRED_IN_WORKER


def _enqueue(job_id: int) -> None:
    from tournaments.tasks import pair_round

    try:
        pair_round.delay(job_id)
    except Exception:  # a broker outage: the job says so instead of waiting forever
        logger.exception("pairing job %s: could not be queued", job_id)
        PairingJob.objects.filter(pk=job_id, state=PairingJob.State.QUEUED).update(
            state=PairingJob.State.FAILED,
            message=_("The pairing could not be sent to a worker: try again."),
            finished_at=timezone.now(),
        )


@transaction.atomic
def request_round(stage, *, user=None) -> PairingJob:
    """Queue the pairing of ``stage``'s next round (one job at a time per stage)."""
    stage = Stage.objects.select_for_update().get(pk=stage.pk)
    if PairingJob.objects.filter(stage=stage, state__in=ACTIVE).exists():
        raise PairingError(
            _("The next round of “%(stage)s” is being paired already.") % {"stage": stage.name}
        )
    job = PairingJob.objects.create(
        stage=stage, requested_by=user if getattr(user, "is_authenticated", False) else None
    )
    transaction.on_commit(lambda: _enqueue(job.pk))
    return job


def run(job_id: int) -> PairingJob | None:
    """The worker's part: pair the round, and record how it went."""
    claimed = PairingJob.objects.filter(pk=job_id, state=PairingJob.State.QUEUED).update(
        state=PairingJob.State.RUNNING, started_at=timezone.now()
    )
    job = PairingJob.objects.select_related("stage", "requested_by").filter(pk=job_id).first()
    if not claimed or job is None:
        return job  # already run (a message delivered twice) or gone with its stage
    try:
        round_row = pairing.pair_next_round(job.stage, user=job.requested_by)
    except TournamentError as error:
        job.state, job.message = PairingJob.State.FAILED, str(error)
    else:
        job.state, job.round = PairingJob.State.DONE, round_row
    job.finished_at = timezone.now()
    job.save(update_fields=["state", "message", "round", "finished_at"])
    logger.info("pairing job %s: %s", job.pk, job.state)
    return job


def desk_state(stage) -> PairingJob | None:
    """What the desk says of ``stage``'s pairing: the job still waiting or running, or the last
    one if it was refused (until a later job succeeds)."""
    job = PairingJob.objects.filter(stage=stage).order_by("-created_at", "-pk").first()
    if job is None or job.state == PairingJob.State.DONE:
        return None
    return job
