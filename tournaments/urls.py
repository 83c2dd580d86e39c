"""URLs of the public pages (namespace ``public``, at the site root) and the desk (``desk``).

``config/urls.py`` includes them as ``include((public_urlpatterns, "public"))`` and
``include((desk_urlpatterns, "desk"))`` under ``desk/``.
"""

from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

from tournaments.views import desk, desk_day, public

public_urlpatterns = [
    path("", public.tournament_list, name="home"),
    path("t/<slug:slug>/", public.tournament_home, name="tournament"),
    path("t/<slug:slug>/stage/<int:stage_id>/", public.stage_page, name="stage"),
    path("t/<slug:slug>/group/<int:group_id>/", public.group_page, name="group"),
    path("t/<slug:slug>/round/<int:round_id>/", public.round_page, name="round"),
    path("t/<slug:slug>/match/<int:match_id>/", public.match_page, name="match"),
    path("players/<int:player_id>/", public.player_page, name="player"),
    path("lines/<int:line_id>/", public.line_page, name="line"),
]

desk_urlpatterns = [
    path("", desk.desk_home, name="home"),
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="tournaments/desk/login.html"),
        name="login",
    ),
    path(
        "logout/",
        auth_views.LogoutView.as_view(next_page=reverse_lazy("public:home")),
        name="logout",
    ),
    path("new/", desk_day.new_tournament, name="new"),
    path("<slug:slug>/", desk.tournament_desk, name="tournament"),
    path("<slug:slug>/lines/", desk_day.lines, name="lines"),
    path("<slug:slug>/lines/add/", desk_day.add_line, name="add-line"),
    path("<slug:slug>/lines/import/", desk_day.import_lines, name="import-lines"),
    path("<slug:slug>/lines/<int:line_id>/", desk_day.edit_line, name="edit-line"),
    path("<slug:slug>/lines/<int:line_id>/withdraw/", desk_day.withdraw_line, name="withdraw"),
    path("<slug:slug>/stage/<int:stage_id>/reopen/", desk_day.reopen_stage, name="reopen"),
    path("<slug:slug>/stage/<int:stage_id>/drift/", desk_day.stage_drift, name="drift"),
    path("<slug:slug>/round/<int:round_id>/sheet/", desk_day.round_sheet, name="sheet"),
    path(
        "<slug:slug>/round/<int:round_id>/projector/",
        desk_day.round_projector,
        name="projector",
    ),
    path("<slug:slug>/podium/", desk_day.podium, name="podium"),
    path("<slug:slug>/stage/<int:stage_id>/generate/", desk.generate_stage, name="generate"),
    path("<slug:slug>/stage/<int:stage_id>/close/", desk.close_stage, name="close"),
    path("<slug:slug>/round/<int:round_id>/print/", desk.print_round, name="print"),
    path("<slug:slug>/match/<int:match_id>/", desk.enter_result, name="match"),
]
