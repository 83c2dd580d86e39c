"""Celery tasks of the table: thin, the work is in ``scoresheets.services.reports``."""

import logging

from celery import shared_task

logger = logging.getLogger(__name__)


@shared_task(name="scoresheets.expire_reports", acks_late=True, soft_time_limit=120)
def expire_reports() -> int:
    """The beat sweep: sheets not countersigned in their tournament's time go to the referee
    (the pages showing a sheet check it too, so a stopped beat delays nothing a player sees)."""
    from scoresheets.services.reports import expire_due

    return expire_due()
