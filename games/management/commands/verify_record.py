"""`manage.py verify_record FILE [FILE ...]`: one JSON verdict per line, exit 0/1/2.

Exit status: 0 when every record is legal, 1 when one is illegal, 2 when one is unreadable
(2 wins over 1). `-` reads one record from standard input.
"""

import sys

import msgspec
from django.core.management.base import BaseCommand

from games.engine import RecordError, verify_document
from games.engine.verify import malformed_document

EXIT_LEGAL, EXIT_ILLEGAL, EXIT_UNREADABLE = 0, 1, 2
# msgspec writes a verdict about five times faster than json.dumps (UTF-8 kept, compact).
_ENCODER = msgspec.json.Encoder()
# Answers go out in blocks of about this many bytes (each line whole), not one write per record.
_FLUSH_AT = 1 << 16


class Command(BaseCommand):
    help = "Replay scopa-match/1 records and print one JSON verdict per record."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", metavar="FILE", help="record files; - for stdin")
        parser.add_argument("--lang", choices=("it", "en"), default="it")

    def _read(self, name: str) -> bytes:
        if name == "-":
            return sys.stdin.buffer.read()
        with open(name, "rb", buffering=0) as handle:  # one read of the whole file, no buffer
            return handle.readall()

    def handle(self, *args, files, lang, **options):
        """Verify each file in order; the answers are encoded into one byte buffer and written
        in blocks, as bytes when the output is a real file (as text to call_command's stdout)."""
        status = EXIT_LEGAL
        binary = getattr(self.stdout, "buffer", None)  # OutputWrapper passes `buffer` through
        pending = bytearray()
        self.stdout.flush()  # whatever went through the text layer comes first

        def flush() -> None:
            if binary is not None:
                binary.write(pending)
            else:
                self.stdout.write(pending.decode("utf-8"), ending="")
            pending.clear()

        for name in files:
            try:
                data = self._read(name)
            except OSError as exc:
                error = RecordError("file_unreadable", "$", detail=f"{name}: {exc.strerror}")
                answer = malformed_document(error, lang)
            else:
                answer = verify_document(data, lang)
            if answer.get("malformed"):
                status = EXIT_UNREADABLE
            elif not answer["valid"] and status == EXIT_LEGAL:
                status = EXIT_ILLEGAL
            _ENCODER.encode_into(answer, pending, -1)
            pending += b"\n"
            if len(pending) >= _FLUSH_AT:
                flush()
        flush()
        self.stdout.flush()
        if status:
            sys.exit(status)
