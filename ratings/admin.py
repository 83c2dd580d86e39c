"""Admin: rating runs and ratings are read-only (they are a cache of the match log)."""

from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _

from ratings.models import Rating, RatingChange, RatingRun


class ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(RatingRun)
class RatingRunAdmin(ReadOnly):
    list_display = [
        "id",
        "kind",
        "reason",
        "games",
        "seconds",
        "model",
        "openskill_version",
        "started_at",
    ]
    list_filter = ["kind"]
    actions = ["recompute_all"]

    @admin.action(description=_("Recompute all ratings from the match log"))
    def recompute_all(self, request, queryset):
        from ratings.tasks import recompute_ratings

        recompute_ratings.delay()
        self.message_user(request, _("A full recompute was queued."), messages.SUCCESS)


@admin.register(Rating)
class RatingAdmin(ReadOnly):
    list_display = ["player", "partner", "pool", "display", "mu", "sigma", "games", "last_played"]
    list_filter = ["pool"]
    search_fields = ["player__name", "player__federation_id", "partner__name"]
    list_select_related = ["player", "partner"]


@admin.register(RatingChange)
class RatingChangeAdmin(ReadOnly):
    list_display = [
        "played_on",
        "match",
        "pool",
        "player",
        "result",
        "mu_before",
        "mu_after",
        "sigma_after",
    ]
    list_filter = ["pool", "result"]
    search_fields = ["player__name"]
    list_select_related = ["player", "match"]
    raw_id_fields = ["match", "player", "partner", "run"]
