from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TournamentsConfig(AppConfig):
    name = "tournaments"
    verbose_name = _("Tournaments")

    def ready(self):
        # connects the receiver that flags rounds paired before a corrected result
        from tournaments.services import pairing  # noqa: F401
