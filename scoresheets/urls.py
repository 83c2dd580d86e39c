"""URLs of the table: the players' phone pages (mounted under ``/p/``, namespace ``table``) and
the referee's page on the desk (under ``/desk/``, namespace ``referee``)."""

from django.urls import path

from scoresheets import views

phone_urlpatterns = [
    path("sw.js", views.service_worker, name="service-worker"),
    path("<str:token>/manifest.webmanifest", views.manifest, name="manifest"),
    path("<str:token>/", views.line_page, name="line"),
    path("<str:token>/m/<int:match_id>/", views.sheet_page, name="sheet"),
    path("<str:token>/m/<int:match_id>/check/", views.check_sheet, name="check"),
    path("<str:token>/m/<int:match_id>/submit/", views.submit_sheet, name="submit"),
    path("<str:token>/m/<int:match_id>/sync/", views.sync_sheet, name="sync"),
    path("<str:token>/m/<int:match_id>/status/", views.sheet_status, name="status"),
]

referee_urlpatterns = [
    path("<slug:slug>/table/disputes/", views.referee_page, name="disputes"),
]
