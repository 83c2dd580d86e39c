"""Recording organizer actions: who changed what and when."""

import logging

from tournaments.models import ChangeLog

logger = logging.getLogger(__name__)


def _user_or_none(user):
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return user


def record(tournament, action, *, match=None, user=None, **detail):
    """Write one ChangeLog row; call it inside the transaction of the change it records."""
    entry = ChangeLog.objects.create(
        tournament=tournament,
        match=match,
        user=_user_or_none(user),
        action=action,
        detail=detail,
    )
    logger.info("tournament %s: %s %s", tournament.pk, action, detail)
    return entry
