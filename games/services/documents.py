"""Reading a match record as sent: bytes to a JSON object, the batch's envelope, the engine's
parse. No query: a document that cannot be read is refused before anything touches the
database."""

import contextlib
import json
import logging
import re

from django.conf import settings
from django.utils.translation import get_language
from django.utils.translation import gettext as _

import scopa
from games.exceptions import MalformedDocument, RecordTooLarge, UnreadableRecord
from tournaments.models import ID_MAX

logger = logging.getLogger(__name__)

MAX_RECORD_BYTES = getattr(settings, "GAMES_MAX_RECORD_BYTES", 1024 * 1024)

# A batch (``POST /api/v1/records/``): how many records, and its body's size (below Django's
# DATA_UPLOAD_MAX_MEMORY_SIZE, so the answer is ours).
MAX_BATCH_RECORDS = getattr(settings, "GAMES_MAX_BATCH_RECORDS", 100)
MAX_BATCH_BYTES = getattr(settings, "GAMES_MAX_BATCH_BYTES", 2 * 1024 * 1024)

# Field beside the record naming its match (bulk import; optional on the API).
MATCH_FIELD = "match"


def decode_document(raw: bytes):
    """Bytes of a request body or file to a JSON object, or a SubmissionError."""
    if len(raw) > MAX_RECORD_BYTES:
        raise RecordTooLarge(
            _("The record is %(size)d bytes; the limit is %(limit)d bytes.")
            % {"size": len(raw), "limit": MAX_RECORD_BYTES}
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedDocument(_("The body is not UTF-8 text.")) from exc
    try:
        document = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise MalformedDocument(
            _("The body is not valid JSON: %(reason)s") % {"reason": exc}
        ) from exc
    check_storable_text(document)
    if not isinstance(document, dict):
        raise MalformedDocument(
            _("The record must be a JSON object, not %(kind)s.")
            % {"kind": type(document).__name__},
            code="invalid_type",
        )
    return document


def decode_batch(raw: bytes) -> list:
    """Bytes of a batch's body to its list of documents, or a SubmissionError for the whole.

    The documents themselves are checked one by one (``submit_records``): one bad record does
    not refuse the others.
    """
    if len(raw) > MAX_BATCH_BYTES:
        raise RecordTooLarge(
            _("The batch is %(size)d bytes; the limit is %(limit)d bytes.")
            % {"size": len(raw), "limit": MAX_BATCH_BYTES}
        )
    try:
        documents = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError as exc:
        raise MalformedDocument(_("The body is not UTF-8 text.")) from exc
    except (ValueError, RecursionError) as exc:
        raise MalformedDocument(
            _("The body is not valid JSON: %(reason)s") % {"reason": exc}
        ) from exc
    if not isinstance(documents, list) or not documents:
        raise MalformedDocument(
            _("A batch is a JSON array of match records, each naming its match."),
            code="invalid_type",
        )
    if len(documents) > MAX_BATCH_RECORDS:
        raise MalformedDocument(
            _("A batch holds at most %(limit)d records; this one has %(n)d.")
            % {"limit": MAX_BATCH_RECORDS, "n": len(documents)},
            code="too_many_records",
        )
    return documents


_ID_DIGITS = len(str(ID_MAX))


def match_named(document) -> int | None:
    """The match id a batch's document names in its ``match`` field, if it names one."""
    if not isinstance(document, dict):
        return None
    named = document.get(MATCH_FIELD)
    if isinstance(named, bool):
        return None
    if isinstance(named, str) and named.isascii() and named.isdigit() and len(named) <= _ID_DIGITS:
        # Written as the id is ("7", not "007"): ``check_record_fits`` compares the text.
        named = int(named) if str(int(named)) == named else None
    if isinstance(named, int):
        return named if 0 < named <= ID_MAX else None
    return None


# A NUL in any string of a document: ``json.dumps`` writes it ``\u0000``, after an even number
# of backslashes (an odd number would make the backslash part of an escaped ``\\``).
_NUL_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def check_storable_text(document) -> int:
    """Refuse text that cannot be hashed as UTF-8 nor stored: a NUL (PostgreSQL's JSONB refuses
    it), a lone surrogate (``"\\ud800"`` is valid JSON but no Unicode character) or a number
    read as infinity. Returns the size of the document's JSON text in bytes (what the per-match
    cap counts).

    Checked on the document's JSON text (one pass in C) rather than string by string: a record
    holds thousands of strings, and the walk cost more than the rest of a submission.
    """
    try:
        text = json.dumps(document, ensure_ascii=False, allow_nan=False)
    except RecursionError as exc:  # writing recurses one level deeper than reading did
        raise MalformedDocument(
            _("The record is nested too deeply to be a match record."), code="too_deep"
        ) from exc
    except ValueError as exc:  # 1e400 reads as infinity, which JSON (and JSONB) cannot hold
        raise MalformedDocument(
            _("The record contains a number too large to be stored."),
            code="number_out_of_range",
        ) from exc
    if _NUL_ESCAPE.search(text):
        raise MalformedDocument(
            _("The record contains a NUL character (\\u0000), which cannot be stored."),
            code="nul_character",
        )
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise MalformedDocument(
            _("The record contains an unpaired surrogate (%(text)s), which is not text.")
            % {"text": ascii(text[exc.start : exc.end])},
            code="invalid_text",
        ) from exc


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def record_body(document: dict) -> dict:
    """The ``scopa-match/1`` record itself, without the ``match`` field an importer may add."""
    if MATCH_FIELD in document:
        return {k: v for k, v in document.items() if k != MATCH_FIELD}
    return document


def parse(document: dict):
    """The engine's parsed record, or UnreadableRecord naming the field."""
    try:
        return scopa.parse_record(record_body(document))
    except scopa.RecordError as exc:
        lang = (getattr(settings, "LANGUAGE_CODE", "it") or "it")[:2]
        with contextlib.suppress(Exception):  # outside a request
            lang = (get_language() or lang)[:2]
        try:
            message = exc.message(lang)
        except Exception:
            message = str(exc)
        raise UnreadableRecord(
            message, code=getattr(exc, "code", None) or "unreadable_record", field=exc.field
        ) from exc
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
        # The engine promises RecordError only; never let a bad document become a 500.
        logger.warning("parse_record raised %r instead of RecordError", exc)
        message = _("The record cannot be read: %(reason)s") % {"reason": exc}
        raise UnreadableRecord(message) from exc
