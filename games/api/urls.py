"""Routes of the records API, mounted under ``/api/v1/`` by ``config.urls``."""

from django.urls import path
from rest_framework.routers import SimpleRouter

from games.api import views

router = SimpleRouter()
router.register("submissions", views.SubmissionViewSet, basename="submission")

urlpatterns = [
    path(
        "matches/<int:match_id>/records/",
        views.MatchRecordsView.as_view(),
        name="match-records",
    ),
    path("records/", views.RecordBatchView.as_view(), name="record-batch"),
    *router.urls,
]
