"""Replay the match log and rebuild the rating cache (the same numbers as incremental updates)."""

import logging
from datetime import date

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from ratings.services.ratings import recompute, start_key_for_date

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Replay verified results in order and rebuild ratings, from the start or from DATE."

    def add_arguments(self, parser):
        parser.add_argument("--from", dest="from_date", help="YYYY-MM-DD: replay from this date")
        parser.add_argument(
            "--no-progress", action="store_true", help="no progress bar (logs, cron jobs)"
        )

    def handle(self, *args, from_date=None, no_progress=False, **options):
        start = None
        if from_date:
            try:
                start = start_key_for_date(date.fromisoformat(from_date))
            except ValueError as exc:
                raise CommandError(f"--from must be a date YYYY-MM-DD: {from_date}") from exc
        # the stream itself: Django's wrapper would end each of the bar's redraws with a newline
        with Steps(getattr(self.stderr, "_out", self.stderr), disable=no_progress) as steps:
            run = recompute(start, reason="recompute_ratings command", progress=steps)
        self.stdout.write(
            f"{run.get_kind_display()}: {run.games} games in {run.seconds:.2f}s "
            f"({run.model}, openskill {run.openskill_version})"
        )


class Steps:
    """A progress bar for each step of a recompute, on stderr so that the command's report on
    stdout stays one line: rows read, games rated, rows written, then (PostgreSQL) the fresh
    tables' indexes built and the swap, or the commit; the last bar ends after the commit."""

    UNITS = {"reading": "row", "rating": "game", "writing": "row"}

    def __init__(self, stream, *, disable: bool = False):
        self.stream = stream
        self.disable = disable
        self.bar: tqdm | None = None
        self.step = ""

    def __call__(self, step: str, done: int, total: int) -> None:
        if step != self.step:
            self.close()
            self.step = step
            unit = self.UNITS.get(step, "step")
            self.bar = tqdm(
                total=total, desc=step, unit=unit, file=self.stream, disable=self.disable
            )
        if self.bar is not None:
            self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
