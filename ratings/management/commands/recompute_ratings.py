"""Replay the match log and rebuild the rating cache (the same numbers as incremental updates)."""

import logging
from datetime import date

from django.core.management.base import BaseCommand, CommandError

from ratings.services.ratings import recompute, start_key_for_date

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Replay verified results in order and rebuild ratings, from the start or from DATE."

    def add_arguments(self, parser):
        parser.add_argument("--from", dest="from_date", help="YYYY-MM-DD: replay from this date")

    def handle(self, *args, from_date=None, **options):
        start = None
        if from_date:
            try:
                start = start_key_for_date(date.fromisoformat(from_date))
            except ValueError as exc:
                raise CommandError(f"--from must be a date YYYY-MM-DD: {from_date}") from exc
        run = recompute(start, reason="recompute_ratings command")
        self.stdout.write(
            f"{run.get_kind_display()}: {run.games} games in {run.seconds:.2f}s "
            f"({run.model}, openskill {run.openskill_version})"
        )
