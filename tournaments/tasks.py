"""Celery tasks of the tournament core: thin, the work is in ``tournaments.services``."""

import logging

from celery import shared_task

logger = logging.getLogger(__name__)


@shared_task(name="tournaments.pair_round", acks_late=True, soft_time_limit=600)
def pair_round(job_id: int) -> str:
    """Pair a round asked for on the desk (``services.pairing_jobs``)."""
    from tournaments.services import pairing_jobs

    job = pairing_jobs.run(job_id)
    return job.state if job is not None else "gone"
