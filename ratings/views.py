"""Rating pages and the federation export endpoints (thin: the work is in ``services``)."""

import hashlib
import json
import logging
from datetime import UTC, date, datetime, timedelta
from functools import wraps
from math import ceil
from types import SimpleNamespace

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.http import http_date
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from ratings.models import Pool
from ratings.services import queries
from tournaments import access
from tournaments.services import export

logger = logging.getLogger(__name__)

MAX_RANGE_DAYS = 400
EPOCH = datetime(2000, 1, 1, tzinfo=UTC)  # Last-Modified of an empty range
CONTENT_TYPES = {
    "json": "application/json",
    "standings.csv": "text/csv; charset=utf-8",
    "results.csv": "text/csv; charset=utf-8",
}


class ExportRangeError(ValueError):
    """A date range a puller sent that we cannot serve (a 400 with this message)."""


# --- pages ------------------------------------------------------------------------------------


@require_GET
def leaderboard(request):
    pool = request.GET.get("pool") or queries.default_pool()
    if pool not in Pool.values:
        raise Http404("unknown pool")
    rows = queries.leaderboard(pool, viewer=request.user)
    return render(
        request,
        "ratings/leaderboard.html",
        {
            "pool": pool,
            "pools": Pool.choices,
            "rows": rows,
            "min_games": queries.MIN_GAMES,
            "active_days": queries.ACTIVE_DAYS,
            "levels": queries.skill_levels(),
        },
    )


@require_GET
def player(request, player_id):
    # a player is shown only through a tournament the viewer may see: 404 otherwise
    person = get_object_or_404(access.visible_players(request.user), pk=player_id)
    ratings = queries.player_ratings(person)
    return render(
        request,
        "ratings/player.html",
        {
            "player": person,
            "ratings": ratings,
            "solo": [s for s in ratings if s.rating.partner_id is None],
            "units": [s for s in ratings if s.rating.partner_id is not None],
        },
    )


# --- export -----------------------------------------------------------------------------------


def _respond(request, rendered, kind, *, filename, public):
    last_modified = int(rendered.last_modified.timestamp())
    response = get_conditional_response(request, etag=rendered.etag, last_modified=last_modified)
    if response is None:
        response = HttpResponse(rendered.body, content_type=CONTENT_TYPES[kind])
        if kind != "json":
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["ETag"] = rendered.etag
    response["Last-Modified"] = http_date(last_modified)
    if public:
        patch_cache_control(response, public=True, max_age=60)
    else:
        patch_cache_control(response, private=True, max_age=0)
    patch_vary_headers(response, ["Cookie", "Authorization"])
    return response


def _visible(request, slug):
    tournament = access.exportable_tournaments(request.user).filter(slug=slug).first()
    if tournament is None:
        raise Http404("No such tournament")
    return tournament


def _throttled(scope):
    """DRF's scoped throttle (rates in ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``, counted in
    the default cache) on a plain Django view: 429 with ``Retry-After`` past the rate."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            throttle = ScopedRateThrottle()
            # The throttle reads only the view's ``throttle_scope``; the stubs want an APIView.
            view_stand_in = SimpleNamespace(throttle_scope=scope)
            if not throttle.allow_request(request, view_stand_in):  # type: ignore[arg-type]
                wait = max(1, ceil(throttle.wait() or 1))
                response = HttpResponse(
                    _("Too many requests; try again in %(s)d seconds.") % {"s": wait},
                    status=429,
                    content_type="text/plain; charset=utf-8",
                )
                response["Retry-After"] = str(wait)
                return response
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


@require_GET
@_throttled("export")
def tournament_export(request, slug, kind="json"):
    return _tournament_export(request, slug, kind)


def _tournament_export(request, slug, kind="json"):
    tournament = _visible(request, slug)
    # the organizer's export carries a running duplicate stage's secret boards and tables
    full = access.sees_secret_boards(request.user, tournament)
    rendered = export.rendered(tournament, kind, full=full)
    return _respond(
        request,
        rendered,
        kind,
        filename=f"{tournament.slug}-{kind.replace('.csv', '')}.csv",
        public=access.open_to_everyone(tournament) and not full,
    )


def _parse_range(params):
    try:
        start = date.fromisoformat(params.get("from", ""))
        end = date.fromisoformat(params.get("to", ""))
    except ValueError as exc:
        raise ExportRangeError(_("Give the dates as from=YYYY-MM-DD and to=YYYY-MM-DD.")) from exc
    if end < start:
        raise ExportRangeError(_("The end of the range comes before its start."))
    if end - start > timedelta(days=MAX_RANGE_DAYS):
        raise ExportRangeError(
            _("Ask for at most %(days)d days at a time.") % {"days": MAX_RANGE_DAYS}
        )
    return start, end


class ExportResultsAPI(APIView):
    """``GET /api/v1/export/results?from=&to=``: every visible tournament starting in the range,
    as ``scopa-results-export/1`` (a list of ``scopa-tournament-export/1`` documents), with an
    ETag and Last-Modified for cheap conditional pulls."""

    permission_classes = [AllowAny]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "export"

    @extend_schema(
        parameters=[
            OpenApiParameter("from", OpenApiTypes.DATE, required=True),
            OpenApiParameter("to", OpenApiTypes.DATE, required=True),
        ],
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="scopa-results-export/1"),
            304: OpenApiResponse(description="Not modified (If-None-Match / If-Modified-Since)"),
            400: OpenApiResponse(OpenApiTypes.OBJECT, description="Bad date range"),
        },
    )
    def get(self, request):
        try:
            start, end = _parse_range(request.query_params)
        except ExportRangeError as exc:
            return Response({"detail": str(exc)}, status=400)
        tournaments = list(
            access.exportable_tournaments(request.user)
            .filter(start_date__gte=start, start_date__lte=end)
            .order_by("start_date", "slug")
        )
        full = {t.pk: access.sees_secret_boards(request.user, t) for t in tournaments}
        parts = [export.rendered(t, "json", full=full[t.pk]) for t in tournaments]
        doc = {
            "format": export.RANGE_FORMAT,
            "from": start.isoformat(),
            "to": end.isoformat(),
            "tournaments": [json.loads(p.body) for p in parts],
        }
        body = export.dumps(doc)
        rendered = export.Rendered(
            body,
            '"' + hashlib.sha256(body).hexdigest()[:32] + '"',
            max((p.last_modified for p in parts), default=EPOCH),
        )
        public = all(access.open_to_everyone(t) and not full[t.pk] for t in tournaments)
        return _respond(request, rendered, "json", filename="results.json", public=public)


class ExportTournamentAPI(APIView):
    """``GET /api/v1/export/tournaments/<slug>``: the same document as ``/export/v1/``."""

    permission_classes = [AllowAny]
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "export"

    @extend_schema(
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="scopa-tournament-export/1"),
            304: OpenApiResponse(description="Not modified"),
            404: OpenApiResponse(description="No such (visible) tournament"),
        },
    )
    def get(self, request, slug):
        return _tournament_export(request._request, slug)
