from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = _("Webhooks")

    def ready(self):
        from webhooks import signals

        signals.connect()
