"""The Celery application.

With no ``CELERY_BROKER_URL`` the settings make every task run eagerly in the caller's process,
so the project works on a fresh machine with nothing else running.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("scopa")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# `celery beat` re-enqueues submissions left pending (see games.tasks.sweep_pending), so a broker
# outage delays verification but loses nothing.
app.conf.beat_schedule = {
    "sweep-pending-submissions": {
        "task": "games.tasks.sweep_pending",
        "schedule": float(os.environ.get("SCOPA_SWEEP_EVERY_S", "60")),
    },
}
