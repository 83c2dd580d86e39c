"""URLs of the organizer's desk (namespace ``desk``), which ``config/urls.py`` includes under
``desk/``."""

from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy

from desk.views import boards as desk_boards
from desk.views import day as desk_day
from desk.views import penalties as desk_penalties
from desk.views import prizes as desk_prizes
from desk.views import roles as desk_roles
from desk.views import slips as desk_slips
from desk.views import stages as desk_stages
from desk.views import tournament as desk

desk_urlpatterns = [
    path("", desk.desk_home, name="home"),
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="desk/login.html"),
        name="login",
    ),
    path(
        "logout/",
        auth_views.LogoutView.as_view(next_page=reverse_lazy("public:home")),
        name="logout",
    ),
    path("new/", desk_day.new_tournament, name="new"),
    path(
        "invitation/<str:invite_token>/",
        desk_roles.accept_invitation,
        name="accept-invitation",
    ),
    path("<slug:slug>/", desk.tournament_desk, name="tournament"),
    path("<slug:slug>/lines/", desk_day.lines, name="lines"),
    path("<slug:slug>/lines/add/", desk_day.add_line, name="add-line"),
    path("<slug:slug>/lines/import/", desk_day.import_lines, name="import-lines"),
    path("<slug:slug>/lines/<int:line_id>/", desk_day.edit_line, name="edit-line"),
    path("<slug:slug>/lines/apart/", desk_day.forbid_pairing, name="forbid-pairing"),
    path(
        "<slug:slug>/lines/apart/<int:pairing_id>/remove/",
        desk_day.allow_pairing,
        name="allow-pairing",
    ),
    path("<slug:slug>/lines/<int:line_id>/withdraw/", desk_day.withdraw_line, name="withdraw"),
    path("<slug:slug>/stages/", desk_stages.stages_page, name="stages"),
    path("<slug:slug>/stage/<int:stage_id>/edit/", desk_stages.edit_stage, name="edit-stage"),
    path("<slug:slug>/stage/<int:stage_id>/move/", desk_stages.move_stage, name="move-stage"),
    path("<slug:slug>/stage/<int:stage_id>/remove/", desk_stages.remove_stage, name="remove-stage"),
    path("<slug:slug>/stage/<int:stage_id>/reopen/", desk_day.reopen_stage, name="reopen"),
    path("<slug:slug>/stage/<int:stage_id>/drift/", desk_day.stage_drift, name="drift"),
    path("<slug:slug>/round/<int:round_id>/sheet/", desk_day.round_sheet, name="sheet"),
    path(
        "<slug:slug>/round/<int:round_id>/projector/",
        desk_day.round_projector,
        name="projector",
    ),
    path("<slug:slug>/podium/", desk_day.podium, name="podium"),
    path("<slug:slug>/prizes/add/", desk_prizes.add_prize, name="add-prize"),
    path(
        "<slug:slug>/prizes/<int:prize_id>/remove/",
        desk_prizes.remove_prize,
        name="remove-prize",
    ),
    path("<slug:slug>/stage/<int:stage_id>/boards/", desk_boards.board_sheets, name="boards"),
    path("<slug:slug>/stage/<int:stage_id>/generate/", desk.generate_stage, name="generate"),
    path("<slug:slug>/stage/<int:stage_id>/close/", desk.close_stage, name="close"),
    path("<slug:slug>/round/<int:round_id>/print/", desk.print_round, name="print"),
    path("<slug:slug>/stage/<int:stage_id>/pair/", desk.pair_round, name="pair"),
    path("<slug:slug>/stage/<int:stage_id>/movement/", desk.movement_cards, name="movement-cards"),
    path("<slug:slug>/round/<int:round_id>/review/", desk.review_round, name="review"),
    path(
        "<slug:slug>/round/<int:round_id>/results/",
        desk_slips.round_results_page,
        name="round-results",
    ),
    path("<slug:slug>/check-in/", desk.check_in, name="checkin"),
    path("<slug:slug>/match/<int:match_id>/", desk.enter_result, name="match"),
    path(
        "<slug:slug>/match/<int:match_id>/board-ruling/",
        desk_boards.rule_board,
        name="rule-board",
    ),
    path(
        "<slug:slug>/match/<int:match_id>/board-ruling/<int:board>/withdraw/",
        desk_boards.clear_ruling,
        name="clear-ruling",
    ),
    path("<slug:slug>/penalties/", desk_penalties.penalty_table, name="penalties"),
    path(
        "<slug:slug>/penalties/<int:rule_id>/remove/",
        desk_penalties.remove_rule,
        name="remove-penalty-rule",
    ),
    path(
        "<slug:slug>/match/<int:match_id>/penalty/",
        desk_penalties.give_penalty,
        name="give-penalty",
    ),
    path(
        "<slug:slug>/match/<int:match_id>/penalty/<int:penalty_id>/withdraw/",
        desk_penalties.withdraw_penalty,
        name="withdraw-penalty",
    ),
    path("<slug:slug>/roles/", desk_roles.roles_page, name="roles"),
    path("<slug:slug>/roles/invite/", desk_roles.invite, name="invite"),
    path(
        "<slug:slug>/roles/invitation/<int:invitation_id>/withdraw/",
        desk_roles.withdraw_invitation,
        name="withdraw-invitation",
    ),
    path("<slug:slug>/roles/<int:role_id>/revoke/", desk_roles.revoke_role, name="revoke_role"),
]
