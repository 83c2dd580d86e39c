from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class GamesConfig(AppConfig):
    name = "games"
    verbose_name = _("Games")

    def ready(self):
        # Registers the tasks in Celery's registry in every process, not only workers: the
        # services send verifications by task name (``games.services.enqueueing``) and never
        # import the tasks module, which imports them.
        from games import tasks  # noqa: F401
