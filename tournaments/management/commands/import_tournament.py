"""Restore a tournament from a scopa-tournament-export/1 file (players matched by federation id)."""

import json
import logging

from django.core.management.base import BaseCommand, CommandError

from tournaments.services.importer import TournamentImportError, import_document

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Import a tournament exported by export_tournament or /export/v1/ on another instance."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--slug", help="import under another slug")

    def handle(self, *args, file, slug=None, **options):
        try:
            with open(file, encoding="utf-8") as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot read {file}: {exc}") from exc
        try:
            tournament = import_document(doc, slug=slug)
        except TournamentImportError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"imported {tournament.slug} ({tournament.name})")
