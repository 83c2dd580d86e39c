"""Routes of the tournament API, mounted under ``/api/v1/`` by ``config.urls``."""

from rest_framework.routers import DefaultRouter

from tournaments.api import views

router = DefaultRouter()
router.register("tournaments", views.TournamentViewSet, basename="tournament")
router.register("stages", views.StageViewSet, basename="stage")
router.register("groups", views.GroupViewSet, basename="group")
router.register("rounds", views.RoundViewSet, basename="round")
router.register("matches", views.MatchViewSet, basename="match")
router.register("lines", views.LineViewSet, basename="line")
router.register("players", views.PlayerViewSet, basename="player")

urlpatterns = router.urls
