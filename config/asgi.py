"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A server answering the public: the settings refuse to start it on the development key.
os.environ.setdefault("SCOPA_ENTRY_POINT", "asgi")
application = get_asgi_application()
