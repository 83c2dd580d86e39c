"""`manage.py verify_record FILE [FILE ...]`: one JSON verdict per line, exit 0/1/2.

The work is `scopa.cli.verify_files`, which `python -m scopa.cli` also runs
without Django. Exit status: 0 when every record is legal, 1 when one is illegal, 2 when one is
unreadable (2 wins over 1). `-` reads one record from standard input.
"""

import sys

from django.core.management.base import BaseCommand

from scopa.cli import verify_files


class Command(BaseCommand):
    help = "Replay scopa-match/1 records and print one JSON verdict per record."
    # The records are files: no database, URLs or models are read, so the system checks (which
    # import every view) are not run.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", metavar="FILE", help="record files; - for stdin")
        parser.add_argument("--lang", choices=("it", "en"), default="it")

    def handle(self, *args, files, lang, **options):
        # Bytes straight to a real stdout; call_command's StringIO gets text.
        binary = getattr(self.stdout, "buffer", None)  # OutputWrapper passes `buffer` through
        self.stdout.flush()  # whatever went through the text layer comes first
        if binary is not None:
            status = verify_files(files, lang, binary.write)
        else:
            status = verify_files(
                files, lang, lambda block: self.stdout.write(block.decode("utf-8"), ending="")
            )
        self.stdout.flush()
        if status:
            sys.exit(status)
