import logging

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

logger = logging.getLogger(__name__)


class RatingsConfig(AppConfig):
    name = "ratings"
    verbose_name = _("Ratings")

    def ready(self):
        from ratings.signals import on_match_result_changed

        try:
            from tournaments.signals import match_result_changed
        except ImportError:  # the tournament services are not there yet
            logger.warning("tournaments.signals is missing: ratings will not follow results")
            return
        match_result_changed.connect(
            on_match_result_changed, dispatch_uid="ratings.on_match_result_changed"
        )
