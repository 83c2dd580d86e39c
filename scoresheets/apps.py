from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ScoresheetsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "scoresheets"
    verbose_name = _("Score sheets at the table")

    def ready(self):
        from scoresheets import signals

        signals.connect()
