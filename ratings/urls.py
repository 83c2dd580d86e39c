"""URLs of the ratings app: pages under /ratings/, the export under /export/v1/ and the API."""

from django.urls import path

from ratings import views

app_name = "ratings"

urlpatterns = [
    path("", views.leaderboard, name="leaderboard"),
    path("players/<int:player_id>/", views.player, name="player"),
]

export_urlpatterns = [
    path("tournaments/<slug:slug>.json", views.tournament_export, name="tournament-json"),
    path(
        "tournaments/<slug:slug>/standings.csv",
        views.tournament_export,
        {"kind": "standings.csv"},
        name="tournament-standings-csv",
    ),
    path(
        "tournaments/<slug:slug>/results.csv",
        views.tournament_export,
        {"kind": "results.csv"},
        name="tournament-results-csv",
    ),
]

api_urlpatterns = [
    path("export/results", views.ExportResultsAPI.as_view(), name="export-results"),
    path(
        "export/tournaments/<slug:slug>",
        views.ExportTournamentAPI.as_view(),
        name="export-tournament",
    ),
]
