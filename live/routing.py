from typing import Any

from django.urls import path, re_path

from live.consumers import DeskConsumer, RefusingConsumer, TournamentConsumer

# django-stubs types the view of path() and re_path() as a Django view, not as the ASGI
# application a consumer's as_asgi() is (typeddjango/django-stubs#3354); the list is what
# Channels' URLRouter takes.
websocket_urlpatterns: list[Any] = [
    path("ws/t/<slug:slug>/", TournamentConsumer.as_asgi()),  # type: ignore[arg-type]
    path("ws/desk/<slug:slug>/", DeskConsumer.as_asgi()),  # type: ignore[arg-type]
    # Any other path: a refused handshake, not a server error.
    re_path(r"", RefusingConsumer.as_asgi()),  # type: ignore[arg-type]
]
