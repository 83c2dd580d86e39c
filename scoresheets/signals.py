"""The table's sheets follow the results that come into force from elsewhere (the desk, the API,
a record): ``tournaments.signals.results_changed`` is sent once the change committed."""

import logging

from tournaments.signals import results_changed

logger = logging.getLogger(__name__)


def on_results_changed(sender, matches, **kwargs):
    from scoresheets.services import reports

    for match in reports.matches_to_settle(matches):
        try:
            reports.on_result_changed(match)
        except Exception:  # the result is stored: a sheet left open is settled by the referee
            logger.exception("match %s: table reports not brought up to date", match.pk)


def connect():
    results_changed.connect(on_results_changed, dispatch_uid="scoresheets.result")
