"""The page a refused form gets when its CSRF token no longer matches (``CSRF_FAILURE_VIEW``).

Django's own page is English and technical; a player or an organizer meets it after logging in
or out in another tab, or after a session expired, on a form they still hold (the players'
accept and dispute forms, the desk). It needs no more than: the page was out of date, go back,
reload and send again.
"""

import logging

from django.shortcuts import render

logger = logging.getLogger(__name__)


def csrf_failure(request, reason=""):
    logger.info("csrf refused %s %s: %s", request.method, request.path, reason)
    return render(request, "403_csrf.html", status=403)
