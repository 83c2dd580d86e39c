from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LiveConfig(AppConfig):
    name = "live"
    verbose_name = _("Live pages")

    def ready(self) -> None:
        from live import signals

        signals.connect()
