"""``celery`` for the poison-record test: a record whose seats name ``POISON`` kills the pool
process verifying it (SIGKILL, as an out-of-memory kill or a crash in a C extension would)."""

import json
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from celery.__main__ import main  # noqa: E402

from games import services  # noqa: E402

POISON = "POISON"
_compute = services.verifying.compute_verdict


def compute_or_die(document):
    # a batch hands the engine the record's JSON text, a lone verification the document
    read = json.loads(document) if isinstance(document, str) else document
    if POISON in (read.get("seats") or []):
        os.kill(os.getpid(), signal.SIGKILL)
    return _compute(document)


services.verifying.compute_verdict = compute_or_die  # what every verification calls

if __name__ == "__main__":
    sys.argv[0] = "celery"
    sys.exit(main())
