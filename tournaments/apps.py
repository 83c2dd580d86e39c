from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TournamentsConfig(AppConfig):
    name = "tournaments"
    verbose_name = _("Tournaments")

    def ready(self):
        from tournaments.signals import results_changed

        def forfeit_withdrawn(sender, matches, **kwargs):
            """A withdrawn line that a knock-out result gives an opponent forfeits at once."""
            from tournaments.services.lifecycle import forfeit_withdrawn

            for match in matches:
                if match.next_match_id is not None or match.loser_next_match_id is not None:
                    forfeit_withdrawn(match)

        results_changed.connect(
            forfeit_withdrawn, weak=False, dispatch_uid="tournaments.forfeit_withdrawn"
        )

        # connects the receiver that flags rounds paired before a corrected result
        from tournaments.services import pairing  # noqa: F401
