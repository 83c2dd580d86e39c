from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = _("Webhooks")

    def ready(self):
        from webhooks import signals

        signals.connect()
        # Registers the delivery task in Celery's registry in every process: the services
        # send it by name (``services.DELIVER``) and never import the tasks module.
        from webhooks import tasks  # noqa: F401
