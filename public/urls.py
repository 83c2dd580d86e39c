"""URLs of the public pages (namespace ``public``), which ``config/urls.py`` includes at the
site root, last."""

from django.urls import path

from public import views as public

public_urlpatterns = [
    path("", public.tournament_list, name="home"),
    path("t/<slug:slug>/", public.tournament_home, name="tournament"),
    path("t/<slug:slug>/podium/", public.podium_page, name="podium"),
    path("t/<slug:slug>/stage/<int:stage_id>/", public.stage_page, name="stage"),
    path("t/<slug:slug>/group/<int:group_id>/", public.group_page, name="group"),
    path(
        "t/<slug:slug>/stage/<int:stage_id>/board/<int:number>/",
        public.board_page,
        name="board",
    ),
    path(
        "t/<slug:slug>/stage/<int:stage_id>/line/<int:line_id>/",
        public.stage_line_page,
        name="stage-line",
    ),
    path("t/<slug:slug>/round/<int:round_id>/", public.round_page, name="round"),
    path("t/<slug:slug>/match/<int:match_id>/", public.match_page, name="match"),
    path("players/<int:player_id>/", public.player_page, name="player"),
    path("lines/<int:line_id>/", public.line_page, name="line"),
]
