from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PublicConfig(AppConfig):
    """The public pages and the site's shell (base templates, static files)."""

    name = "public"
    verbose_name = _("Public pages")

    def ready(self) -> None:
        from live import patches
        from public import caching, rows

        patches.register(rows.rows_in_languages)
        caching.connect()
