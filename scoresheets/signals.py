"""The table's sheets follow the results that come into force from elsewhere (the desk, the API,
a record): ``tournaments.signals.match_result_changed`` is sent once the change committed."""

import logging

from tournaments.signals import match_result_changed

logger = logging.getLogger(__name__)


def on_match_result_changed(sender, match, **kwargs):
    from scoresheets.services import reports

    try:
        reports.on_result_changed(match)
    except Exception:  # the result is stored: a sheet left open is settled by the referee
        logger.exception("match %s: table reports not brought up to date", match.pk)


def connect():
    match_result_changed.connect(on_match_result_changed, dispatch_uid="scoresheets.result")
