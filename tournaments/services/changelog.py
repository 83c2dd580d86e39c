"""Recording organizer actions: who changed what and when.

The log line of a change is written when its transaction commits: a change rolled back (the
desk's "Check only", a refused batch) leaves neither a row nor a line in the log.
"""

import logging
from functools import partial

from django.db import transaction

from tournaments.models import ChangeLog
from tournaments.services.rows import create_many, send_saved

logger = logging.getLogger(__name__)


def _user_or_none(user):
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return user


def entry(tournament, action, *, match=None, user=None, **detail) -> ChangeLog:
    """One ChangeLog row, not saved yet (for :func:`record_many`)."""
    return ChangeLog(
        tournament=tournament,
        match=match,
        user=_user_or_none(user),
        action=action,
        detail=detail,
    )


def record(tournament, action, *, match=None, user=None, **detail) -> ChangeLog:
    """Write one ChangeLog row; call it inside the transaction of the change it records."""
    row = entry(tournament, action, match=match, user=user, **detail)
    row.save()
    transaction.on_commit(
        partial(logger.info, "tournament %s: %s %s", tournament.pk, action, detail)
    )
    return row


def record_many(rows: list[ChangeLog]) -> list[ChangeLog]:
    """Write several ChangeLog rows in one statement (a batch of results). ``post_save`` is sent
    once per tournament, for its last row: its listeners (the desk's live page) hear that the
    log changed, not each row."""
    created = create_many(rows)
    last = {}
    for row in created:
        transaction.on_commit(
            partial(logger.info, "tournament %s: %s %s", row.tournament_id, row.action, row.detail)
        )
        last[row.tournament_id] = row
    send_saved(last.values(), created=True)
    return created
