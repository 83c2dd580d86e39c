"""Root URLs: admin, language switch; each app adds its own under its prefix."""

from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from desk.urls import desk_urlpatterns
from games.api.schema import RecordSchemaGenerator
from public.urls import public_urlpatterns
from ratings.urls import api_urlpatterns as ratings_api_urlpatterns
from ratings.urls import export_urlpatterns as ratings_export_urlpatterns
from scoresheets.desk_urls import desk_urlpatterns as room_desk_urlpatterns
from scoresheets.urls import phone_urlpatterns as table_phone_urlpatterns
from scoresheets.urls import referee_urlpatterns as table_referee_urlpatterns
from webhooks.urls import desk_urlpatterns as webhooks_desk_urlpatterns

urlpatterns = [
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("api/v1/", include("games.api.urls")),
    path("api/v1/", include("tournaments.api.urls")),
    path("api/v1/", include((ratings_api_urlpatterns, "ratings-api"))),
    path("ratings/", include("ratings.urls")),
    path("export/v1/", include((ratings_export_urlpatterns, "export"))),
    path(
        "api/schema/",
        SpectacularAPIView.as_view(generator_class=RecordSchemaGenerator),
        name="schema",
    ),
    # Swagger UI's own script comes as a file (the split view), so scripts stay 'self' only; its
    # React widgets set inline styles, allowed on this URL alone (docs/security.md).
    path(
        "api/docs/",
        csp_update({"style-src": [UNSAFE_INLINE]})(
            SpectacularSwaggerSplitView.as_view(url_name="schema")
        ),
        name="api-docs",
    ),
    # Organizer's desk and public pages; the public pages take the site root, last.
    path("desk/", include((desk_urlpatterns, "desk"))),
    path("desk/", include((webhooks_desk_urlpatterns, "webhooks"))),
    path("desk/", include((room_desk_urlpatterns, "room"))),
    path("desk/", include((table_referee_urlpatterns, "referee"))),
    # the players' phones at the table: the token in the URL is the credential
    path("p/", include((table_phone_urlpatterns, "table"))),
    path("", include((public_urlpatterns, "public"))),
]
