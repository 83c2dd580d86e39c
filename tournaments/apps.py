from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TournamentsConfig(AppConfig):
    name = "tournaments"
    verbose_name = _("Tournaments")

    def ready(self):
        from tournaments.signals import match_result_changed

        def forfeit_withdrawn(sender, match, **kwargs):
            """A withdrawn line that a knock-out result gives an opponent forfeits at once."""
            from tournaments.services.lifecycle import forfeit_withdrawn

            forfeit_withdrawn(match)

        match_result_changed.connect(
            forfeit_withdrawn, weak=False, dispatch_uid="tournaments.forfeit_withdrawn"
        )
