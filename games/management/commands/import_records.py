"""``python manage.py import_records PATH``: bulk-submit match records.

PATH is a folder of ``*.json`` files (searched recursively, in name order) or a JSON-lines file
(``.jsonl``/``.ndjson``, one record per line; a single ``.json`` file is one record). Each
record names its match by a top-level ``"match": <id>`` field beside the record's own fields;
failing that, a file named ``match-<id>.json`` (or ``match-<id>-anything.json``) names it.

Every record goes through ``games.services.submit_record``, the API's code path: the same checks,
the same storage, the same verification task. Records already stored (same content hash for the
same match) are skipped, so a stopped import can simply be run again.
"""

import logging
import re
from pathlib import Path
from typing import TextIO, cast

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _
from tqdm import tqdm

from games import services
from games.exceptions import SubmissionError
from games.models import Submission
from tournaments.models import Match

logger = logging.getLogger(__name__)

FILENAME_MATCH = re.compile(r"^match-(\d+)(?:[-_.].*)?\.json$", re.IGNORECASE)
JSONL_SUFFIXES = {".jsonl", ".ndjson"}


def iter_items(path: Path):
    """(where, raw bytes, match id from the file name or None) for every record under ``path``."""
    if path.is_dir():
        for file in sorted(path.rglob("*.json")):
            found = FILENAME_MATCH.match(file.name)
            yield str(file), file.read_bytes(), int(found.group(1)) if found else None
        return
    if path.suffix.lower() in JSONL_SUFFIXES:
        with path.open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield f"{path}:{number}", line, None
        return
    found = FILENAME_MATCH.match(path.name)
    yield str(path), path.read_bytes(), int(found.group(1)) if found else None


def count_items(path: Path) -> int | None:
    if path.is_dir():
        return sum(1 for _ in path.rglob("*.json"))
    if path.suffix.lower() in JSONL_SUFFIXES:
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.strip())
    return 1


class Command(BaseCommand):
    help = "Submit match records from a folder of JSON files or a JSON-lines file."

    def add_arguments(self, parser):
        parser.add_argument("path", help="A folder of .json files or a .jsonl file.")
        parser.add_argument("--user", help="Username recorded as the submitter.")
        parser.add_argument(
            "--stop-on-error", action="store_true", help="Stop at the first refused record."
        )
        parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")

    def handle(self, path, user=None, stop_on_error=False, no_progress=False, **options):
        root = Path(path)
        if not root.exists():
            raise CommandError(_("%(path)s does not exist.") % {"path": path})
        submitter = None
        if user:
            submitter = get_user_model().objects.filter(username=user).first()
            if submitter is None:
                raise CommandError(_("No user %(user)s.") % {"user": user})
        counts = {"stored": 0, "already": 0, "refused": 0}
        # The stream the command's stderr wraps (the stubs type unknown attributes as methods).
        stream = cast(TextIO, self.stderr._out)
        bar = tqdm(
            iter_items(root),
            total=count_items(root),
            unit="record",
            disable=no_progress or None,
            file=stream,
        )
        for where, raw, file_match in bar:
            try:
                created = self._one(raw, file_match, submitter)
            except SubmissionError as exc:
                counts["refused"] += 1
                bar.write(f"{where}: {exc.code}: {exc.message}", file=stream)
                if stop_on_error:
                    raise CommandError(_("Stopped at %(where)s.") % {"where": where}) from exc
                continue
            counts["stored" if created else "already"] += 1
            bar.set_postfix(counts, refresh=False)
        bar.close()
        self.stdout.write(
            _("%(stored)d stored, %(already)d already there, %(refused)d refused.") % counts
        )
        return None

    def _one(self, raw, file_match, submitter):
        document = services.decode_document(raw)
        match_id = document.get(services.MATCH_FIELD, file_match)
        if match_id is None:
            raise SubmissionError(
                _('The record names no match: add "match": <id> or name the file match-<id>.json.'),
                code="no_match",
                field=services.MATCH_FIELD,
            )
        if file_match is not None and str(match_id) != str(file_match):
            raise SubmissionError(
                _("The file name says match %(file)s but the record says match %(record)s.")
                % {"file": file_match, "record": match_id},
                code="wrong_match",
                field=services.MATCH_FIELD,
            )
        try:
            match = Match.objects.select_related("round__stage__tournament").get(pk=int(match_id))
        except (Match.DoesNotExist, TypeError, ValueError) as exc:
            raise SubmissionError(
                _("No match %(id)s.") % {"id": match_id}, code="no_such_match", field="match"
            ) from exc
        result = services.submit_record(
            match, document, user=submitter, source=Submission.Source.IMPORT
        )
        return result.created
