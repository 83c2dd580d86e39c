from django.urls import path

from live.consumers import TournamentConsumer

websocket_urlpatterns = [
    path("ws/t/<slug:slug>/", TournamentConsumer.as_asgi()),
]
