"""Register the lines of a CSV file in a tournament (all or nothing), from the command line."""

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from tournaments.exceptions import LineImportError
from tournaments.models import Tournament
from tournaments.services.entries import EXPECTED_HEADER, import_lines_csv


class Command(BaseCommand):
    help = "Import lines from a CSV file into a tournament. Columns: " + EXPECTED_HEADER

    def add_arguments(self, parser):
        parser.add_argument("tournament", help="the tournament's slug")
        parser.add_argument("file", help="CSV file (UTF-8, comma or semicolon separated)")

    def handle(self, *args, **options):
        tournament = Tournament.objects.filter(slug=options["tournament"]).first()
        if tournament is None:
            raise CommandError(_("No tournament “%(slug)s”.") % {"slug": options["tournament"]})
        try:
            with open(options["file"], "rb") as handle:
                lines = import_lines_csv(tournament, handle)
        except OSError as error:
            raise CommandError(str(error)) from error
        except LineImportError as error:
            for row, message in error.errors:
                self.stderr.write(_("row %(row)s: %(message)s") % {"row": row, "message": message})
            raise CommandError(str(error.message)) from error
        self.stdout.write(
            _("%(n)d lines imported into “%(name)s”.") % {"n": len(lines), "name": tournament.name}
        )
