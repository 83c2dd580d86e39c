import logging

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

logger = logging.getLogger(__name__)


class RatingsConfig(AppConfig):
    name = "ratings"
    verbose_name = _("Ratings")

    def ready(self):
        from django.db.models.signals import post_save, pre_delete

        from ratings import signals
        from ratings.services.queries import line_ratings
        from ratings.signals import on_results_changed
        from tournaments.models import Stage, Tournament
        from tournaments.signals import results_changed, tournament_imported
        from tournaments.strengths import register_strength_source

        register_strength_source(line_ratings)
        pre_delete.connect(signals.on_tournament_deleted, sender=Tournament, dispatch_uid="r.t")
        pre_delete.connect(signals.on_stage_deleted, sender=Stage, dispatch_uid="r.s")
        post_save.connect(signals.on_stage_saved, sender=Stage, dispatch_uid="r.s.saved")

        results_changed.connect(on_results_changed, dispatch_uid="ratings.on_results_changed")
        tournament_imported.connect(
            signals.on_tournament_imported, dispatch_uid="ratings.on_tournament_imported"
        )
