"""One Celery task per webhook delivery; retries with doubling waits, a bounded number of times.

On a worker a failed attempt is retried with ``self.retry(countdown=...)``. With no broker
(eager Celery on the embedded default) a retry could only wait inside the request that caused
the event, so a delivery gets one attempt there unless ``WEBHOOK_RETRY_EAGER`` is set (tests);
a failed delivery can be sent again from the desk. ``sweep_stuck`` (Celery beat) queues again a
delivery whose broker message was lost, so none stays pending.
"""

import logging
import time

from celery import shared_task
from django.conf import settings

from webhooks import services

logger = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, max_retries=None, name=services.DELIVER)
def deliver(self, delivery_id: str) -> None:
    if self.request.is_eager:
        _deliver_in_process(delivery_id)
        return
    last = self.request.retries + 1 >= settings.WEBHOOK_MAX_ATTEMPTS
    retry_in = services.attempt(delivery_id, last=last)
    if retry_in is not None:
        raise self.retry(countdown=retry_in)


def _deliver_in_process(delivery_id: str) -> None:
    attempts = settings.WEBHOOK_MAX_ATTEMPTS if settings.WEBHOOK_RETRY_EAGER else 1
    for number in range(1, attempts + 1):
        retry_in = services.attempt(delivery_id, last=number == attempts)
        if retry_in is None:
            return
        time.sleep(retry_in)


@shared_task(name="webhooks.tasks.sweep_stuck", ignore_result=True)
def sweep_stuck(limit: int = 500) -> int:
    """Celery beat's sweep (config/celery.py): deliveries whose message was lost go out again."""
    return services.requeue_stuck(limit=limit)
