from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DeskConfig(AppConfig):
    """The organizer's desk: every workflow of the day, composed from the apps below it."""

    name = "desk"
    verbose_name = _("Organizer's desk")
