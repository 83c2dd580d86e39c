"""Desk URLs of play at the table (namespace ``room``), included under ``desk/``.

Links and cards, the room view; the players' phone pages are ``/p/<token>/`` elsewhere.
"""

from django.urls import path

from scoresheets import desk_views as views

desk_urlpatterns = [
    path("<slug:slug>/links/", views.links_page, name="links"),
    path("<slug:slug>/links/issue/", views.issue_links, name="issue"),
    path("<slug:slug>/links/reissue/", views.reissue_link, name="reissue"),
    path("<slug:slug>/links/revoke/", views.revoke_link, name="revoke"),
    path("<slug:slug>/links/cards/", views.line_cards, name="line-cards"),
    path(
        "<slug:slug>/round/<int:round_id>/cards/prepare/",
        views.prepare_cards,
        name="prepare-cards",
    ),
    path("<slug:slug>/room/", views.room_page, name="current"),
    path("<slug:slug>/room/<int:round_id>/", views.room_round, name="round"),
    path("<slug:slug>/room/<int:round_id>/start/", views.start_round, name="start"),
]
