"""Login throttling glue for django-axes (settings name these; see docs/security.md)."""

import logging

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.shortcuts import render

logger = logging.getLogger(__name__)


class LoginThrottleBackend(AxesStandaloneBackend):
    """django-axes' check on every login made through a request (desk and admin login pages).

    ``authenticate()`` without a request (the shell, management commands, the test client's
    ``login()``) cannot be counted per address; it falls through to the next backend instead of
    failing, as axes' own backend would.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def client_address(request) -> str | None:
    """The address a login attempt is counted against.

    Behind the TLS proxy of ``HTTPS=true`` (``SECURE_PROXY_SSL_HEADER`` set) every request comes
    from the proxy: the client is the last ``X-Forwarded-For`` entry, the one our proxy appended
    (earlier entries are whatever the client sent, so rotating them must not reset the count).
    """
    if settings.SECURE_PROXY_SSL_HEADER:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        last = forwarded.rsplit(",", 1)[-1].strip()
        if last:
            return last
    return request.META.get("REMOTE_ADDR")


def lockout_response(request, original_response=None, credentials=None):
    """The page a locked-out login gets: 429, in the visitor's language, saying how long."""
    minutes = max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60))
    return render(
        request,
        "lockout.html",
        {"cooloff_minutes": minutes},
        status=settings.AXES_HTTP_RESPONSE_CODE,
    )
