from django.urls import path, re_path

from live.consumers import DeskConsumer, RefusingConsumer, TournamentConsumer

websocket_urlpatterns = [
    path("ws/t/<slug:slug>/", TournamentConsumer.as_asgi()),
    path("ws/desk/<slug:slug>/", DeskConsumer.as_asgi()),
    # Any other path: a refused handshake, not a server error.
    re_path(r"", RefusingConsumer.as_asgi()),
]
