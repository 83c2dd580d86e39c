"""ASGI entry point: Django over HTTP, the live pages' WebSockets (``live``) beside it."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A server answering the public: the settings refuse to start it on the development key.
os.environ.setdefault("SCOPA_ENTRY_POINT", "asgi")
django_asgi_app = get_asgi_application()
# Only the settings read it, once: processes started from this one (a test run's Celery workers)
# must not inherit it.
os.environ.pop("SCOPA_ENTRY_POINT", None)

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs the apps loaded)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from live.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)
