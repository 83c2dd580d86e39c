"""Write a tournament's federation export (JSON, or a CSV) to stdout or a file."""

import logging

from django.core.management.base import BaseCommand, CommandError

from tournaments.models import Tournament
from tournaments.services.export import build_document, dumps, results_csv, standings_csv

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Export a tournament as scopa-tournament-export/1 JSON (or standings/results CSV)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("-o", "--output", help="file to write (default: stdout)")
        parser.add_argument(
            "--as", dest="kind", choices=["json", "standings.csv", "results.csv"], default="json"
        )

    def handle(self, *args, slug, output=None, kind="json", **options):
        tournament = Tournament.objects.filter(slug=slug).first()
        if tournament is None:
            raise CommandError(f"no tournament with slug {slug!r}")
        # the command line is the organizer's: every board and result, for an import
        doc = build_document(tournament, full=True)
        body = {"json": dumps, "standings.csv": standings_csv, "results.csv": results_csv}[kind](
            doc
        )
        if output:
            with open(output, "wb") as fh:
                fh.write(body)
        else:
            self.stdout.write(body.decode(), ending="")
