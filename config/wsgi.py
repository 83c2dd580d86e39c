"""WSGI entry point (gunicorn config.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A server answering the public: the settings refuse to start it on the development key.
os.environ.setdefault("SCOPA_ENTRY_POINT", "wsgi")
application = get_wsgi_application()
# Only the settings read it, once: processes started from this one (a test run's Celery workers)
# must not inherit it.
os.environ.pop("SCOPA_ENTRY_POINT", None)
