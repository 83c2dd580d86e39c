"""Root URLs: admin, language switch; each app adds its own under its prefix."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from games.api.schema import RecordSchemaGenerator
from tournaments.urls import desk_urlpatterns, public_urlpatterns

urlpatterns = [
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("api/v1/", include("games.api.urls")),
    path("api/v1/", include("tournaments.api.urls")),
    path(
        "api/schema/",
        SpectacularAPIView.as_view(generator_class=RecordSchemaGenerator),
        name="schema",
    ),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    # Organizer's desk and public pages (issue 5); the public pages take the site root, last.
    path("desk/", include((desk_urlpatterns, "desk"))),
    path("", include((public_urlpatterns, "public"))),
]
