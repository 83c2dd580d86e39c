"""One error body for the whole API: ``{"error": {"code", "message", "field"}}``.

Every view of ``/api/v1/`` uses :func:`api_exception_handler` (through :class:`ApiErrorsMixin`),
so a client parses failures one way whatever went wrong: bad JSON, a refused record, a missing
permission, a page that does not exist.
"""

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from django.utils.translation import gettext as _
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from tournaments.exceptions import RefusalWithStatus, StaleResult, TournamentError, VersionRequired

logger = logging.getLogger(__name__)


def error_body(code, message, field=None, **extra):
    body = {"code": code, "message": str(message), "field": field}
    body.update({k: v for k, v in extra.items() if v is not None})
    return {"error": body}


def _first_error(detail, path=""):
    """The first (field, message, code) in a DRF ValidationError detail, depth first."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = key if key != "non_field_errors" else ""
            sub = f"{path}.{name}" if path and name else (name or path)
            found = _first_error(value, sub)
            if found:
                return found
        return None
    if isinstance(detail, list):
        for index, value in enumerate(detail):
            sub = path if not isinstance(value, dict | list) else f"{path}[{index}]"
            found = _first_error(value, sub)
            if found:
                return found
        return None
    return (path or None, str(detail), getattr(detail, "code", "invalid"))


def api_exception_handler(exc, context):
    if isinstance(exc, RefusalWithStatus):
        return Response({"error": exc.as_dict()}, status=exc.status)
    if isinstance(exc, StaleResult):
        body = error_body("stale_version", exc)
        body["current"] = version_body(exc.current)
        return Response(body, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, VersionRequired):
        body = error_body("version_required", exc, "based_on")
        return Response(body, status=status.HTTP_428_PRECONDITION_REQUIRED)
    if isinstance(exc, TournamentError):
        code = type(exc).__name__.removesuffix("Error").lower() or "refused"
        return Response(error_body(f"{code}_refused", exc), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, RequestDataTooBig):
        return Response(
            error_body("too_large", _("The request body is larger than the limit.")),
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        found = _first_error(exc.detail) or (None, _("Invalid input."), "invalid")
        field, message, code = found
        response.data = error_body(code, message, field, details=response.data)
    elif isinstance(exc, exceptions.ParseError):
        response.data = error_body("malformed_json", exc.detail)
    else:
        detail = getattr(exc, "detail", "")
        error_code = getattr(detail, "code", None) or getattr(exc, "default_code", "error")
        response.data = error_body(error_code, detail)
    return response


class ApiErrorsMixin:
    """Use the API's error body in this view (instead of a project-wide setting)."""

    def get_exception_handler(self):
        return api_exception_handler


def version_body(version):
    """A result version as the API shows it (the 409's ``current``): ``None`` for no version."""
    if version is None:
        return None
    return {
        "number": version.number,
        "status": version.status,
        "source": version.source,
        "author": version.author.username if version.author_id else None,
        "created_at": version.created_at.isoformat(),
        "reason": version.reason,
        "sheet": version.sheet,
    }
