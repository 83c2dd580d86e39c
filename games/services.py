"""Submitting match records and verifying them: the one code path for the API, import and admin.

``submit_record`` checks that a document can be this match's record (readable, same seats,
variant, options and end as the tournament), stores it exactly as sent and enqueues its
verification once the row is committed. ``run_verification`` is what the Celery task does:
replay with the engine outside any lock, then write the verdict and the match's result in one
transaction with the match row locked, so a re-delivered task never applies a result twice.
``verify_waiting`` does the same for the records waiting beside a task's own, in groups.
"""

import json
import logging
import re
import time
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import (
    DatabaseError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    connection,
    transaction,
)
from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    Func,
    IntegerField,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Sum,
    TextField,
    When,
)
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext as _

import scopa
from games.exceptions import (
    MalformedDocument,
    MatchNotReady,
    RecordMismatch,
    RecordTooLarge,
    SubmissionError,
    SubmissionStateError,
    TooManyVersions,
    UnreadableRecord,
)
from games.models import Submission, content_hash
from tournaments.models import ID_MAX, Match, Outcome, Player, Stage
from tournaments.services import duplicate, rows

logger = logging.getLogger(__name__)

MAX_RECORD_BYTES = getattr(settings, "GAMES_MAX_RECORD_BYTES", 1024 * 1024)
# What one match may hold, so one submitter cannot fill the database (docs/security.md): stored
# versions, and the size of their JSON text together.
MAX_VERSIONS_PER_MATCH = getattr(settings, "GAMES_MAX_VERSIONS_PER_MATCH", 20)
MAX_BYTES_PER_MATCH = getattr(settings, "GAMES_MAX_BYTES_PER_MATCH", 4 * 1024 * 1024)

# A batch (``POST /api/v1/records/``): how many records, and its body's size (below Django's
# DATA_UPLOAD_MAX_MEMORY_SIZE, so the answer is ours).
MAX_BATCH_RECORDS = getattr(settings, "GAMES_MAX_BATCH_RECORDS", 100)
MAX_BATCH_BYTES = getattr(settings, "GAMES_MAX_BATCH_BYTES", 2 * 1024 * 1024)

# Field beside the record naming its match (bulk import; optional on the API).
MATCH_FIELD = "match"

# Which rule options act on which variants (None: all). Options that only change how cards look
# (deck_style) are not compared; an option of another variant has no effect and is not compared.
_OPTION_VARIANTS = {
    "rebello": {"scopa", "scopa-d-assi"},
    "napola": {"scopa", "scopa-d-assi"},
    "primiera_missing_suit": {"scopa", "scopa-d-assi"},
    "void_three_kings": {"scopa", "scopa-d-assi"},
    "forced_capture": {"scopa-15"},
    "carte_viste": None,
    "carte_scoperte": None,
}
_NOT_COMPARED = {"deck_style"}


# Database trouble that goes away by itself (connection lost, database restarting, deadlock,
# serialization failure): the task retries, the record is not at fault.
TRANSIENT_ERRORS = (OperationalError, InterfaceError)

# Deliveries of one submission that may end without a verdict (the worker killed by the record,
# or by the hard time limit) before it is marked failed.
MAX_ATTEMPTS = getattr(settings, "GAMES_MAX_VERIFY_ATTEMPTS", 3)

# One quick reconnect (a pooled connection gone stale after a broker restart), then give up and
# leave the submission to the sweep: a broker outage must not hold up the API's answer.
PUBLISH_RETRY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2}


@dataclass(frozen=True)
class SubmitResult:
    submission: Submission
    created: bool


# --- reading a document -----------------------------------------------------------------------


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
    _check_storable_text(document)
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


def _check_storable_text(document) -> int:
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


class OctetLength(Func):
    """The size of a text in bytes (UTF-8), not characters: the caps speak of bytes."""

    function = "OCTET_LENGTH"
    output_field = IntegerField()

    def as_sqlite(self, compiler, connection, **extra_context):
        return self.as_sql(
            compiler, connection, template="LENGTH(CAST(%(expressions)s AS BLOB))", **extra_context
        )


def _check_match_caps(stored: "StoredRecords", size: int) -> None:
    """Refuse a new version of ``size`` bytes beyond the per-match caps (versions: 429, total
    size: 413)."""
    if stored.count >= MAX_VERSIONS_PER_MATCH:
        raise TooManyVersions(
            _(
                "This match already has %(n)d record versions, the most one match may keep; "
                "ask the tournament's organizers to sort out the ones it has."
            )
            % {"n": stored.count}
        )
    if stored.size + size > MAX_BYTES_PER_MATCH:
        raise RecordTooLarge(
            _(
                "This match's records would take %(size)d bytes together; one match may keep "
                "%(limit)d bytes of records."
            )
            % {"size": stored.size + size, "limit": MAX_BYTES_PER_MATCH},
            code="match_records_too_large",
        )


@dataclass
class StoredRecords:
    """What a match keeps of its records (read under its lock, then kept up to date while a
    batch adds to it): how many versions, their JSON text's size in bytes, the last version
    number, and the submission ids of the hashes looked for."""

    count: int = 0
    size: int = 0
    last_version: int = 0
    same: dict[str, int] = field(default_factory=dict)


def stored_records(wanted: dict[int, set[str]]) -> dict[int, StoredRecords]:
    """What the matches ``wanted`` (match id: the hashes looked for) hold, read under their
    locks: one query for one record (the usual submission), two for a batch (a big OR of
    match and hash pairs would cost more to build than a second query)."""
    aggregates = {
        "n": Count("pk"),
        "size": Coalesce(Sum(OctetLength(Cast("document", TextField()))), 0),
        "last": Coalesce(Max("version"), 0),
    }
    lone = len(wanted) == 1 and len(digests := next(iter(wanted.values()))) == 1
    if lone:
        aggregates["same"] = Max(Case(When(content_hash=next(iter(digests)), then="pk")))
    tallies = {mid: StoredRecords() for mid in wanted}
    # The plugin types the rows from ``values()`` alone, not the aggregates annotated by name.
    rows: QuerySet[Submission, Mapping[str, Any]] = (
        Submission.objects.filter(match_id__in=wanted)
        .values("match_id")
        .order_by()
        .annotate(**aggregates)
    )
    for row in rows:
        tally = tallies[row["match_id"]]
        tally.count, tally.size, tally.last_version = row["n"], row["size"], row["last"]
        if row.get("same") is not None:
            tally.same[next(iter(wanted[row["match_id"]]))] = row["same"]
    hashes = set().union(*wanted.values())
    if not lone and hashes:
        for mid, digest, pk in Submission.objects.filter(
            match_id__in=wanted, content_hash__in=hashes
        ).values_list("match_id", "content_hash", "pk"):
            if digest in wanted[mid]:
                tallies[mid].same[digest] = pk
    return tallies


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
        try:
            from django.utils.translation import get_language

            lang = (get_language() or lang)[:2]
        except Exception:  # pragma: no cover - outside a request
            pass
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


def effective_options(variant: str, options: dict | None) -> dict:
    """The options that act on ``variant``, defaults filled in, for comparing two rule sets."""
    merged = {**scopa.DEFAULT_OPTIONS.get(variant, {}), **(options or {})}
    return {
        name: value
        for name, value in merged.items()
        if name not in _NOT_COMPARED
        and ((applies := _OPTION_VARIANTS.get(name)) is None or variant in applies)
    }


def check_record_fits(match: Match, document: dict, by_ident=None) -> None:
    """Raise unless ``document`` is a readable record that can be ``match``'s record.

    ``by_ident``: the seat names' lines (``seat_lines``) when the caller read them for a batch.
    """
    claimed = document.get(MATCH_FIELD)
    if claimed is not None and str(claimed) != str(match.pk):
        raise RecordMismatch(
            _("The record names match %(claimed)s, but it was submitted to match %(match)s.")
            % {"claimed": claimed, "match": match.pk},
            code="wrong_match",
            field=MATCH_FIELD,
        )
    if match.home_id is None or match.away_id is None or match.outcome == Outcome.BYE:
        raise MatchNotReady()
    parse(document)
    record = record_body(document)
    tournament = match.round.stage.tournament

    seats = record.get("seats") or []
    if len(seats) != tournament.seats:
        raise RecordMismatch(
            _("The record has %(got)d seats; matches of this tournament have %(want)d.")
            % {"got": len(seats), "want": tournament.seats},
            code="seats_mismatch",
            field="seats",
        )
    variant = record.get("variant")
    if variant != tournament.variant:
        raise RecordMismatch(
            _("The record plays %(got)s; this tournament plays %(want)s.")
            % {"got": variant, "want": tournament.variant},
            code="variant_mismatch",
            field="variant",
        )
    got_options = effective_options(variant, record.get("options"))
    want_options = effective_options(variant, tournament.options)
    if got_options != want_options:
        differ = sorted(
            k
            for k in got_options.keys() | want_options.keys()
            if got_options.get(k) != want_options.get(k)
        )
        raise RecordMismatch(
            _("The record's rule options differ from the tournament's: %(names)s.")
            % {"names": ", ".join(differ)},
            code="options_mismatch",
            field="options",
            detail={"record": got_options, "tournament": want_options},
        )
    got_end = record.get("end") or {}
    want_end = tournament.match_end()
    if got_end != want_end:
        raise RecordMismatch(
            _("The record ends with %(got)s; this tournament's matches end with %(want)s.")
            % {"got": json.dumps(got_end), "want": json.dumps(want_end)},
            code="end_mismatch",
            field="end",
        )
    knockout = bool(record.get("knockout", False))
    if knockout != match.round.stage.is_knockout:
        raise RecordMismatch(
            _("The record says knockout=%(got)s, but this match is %(kind)s.")
            % {
                "got": str(knockout).lower(),
                "kind": _("a knock-out match") if not knockout else _("not a knock-out match"),
            },
            code="knockout_mismatch",
            field="knockout",
        )
    if by_ident is None:
        by_ident = seat_lines(tournament, _seat_idents(seats), [match.home_id, match.away_id])
    _check_players(match, seats, by_ident)
    _check_boards(match, document)


def _check_boards(match: Match, document: dict) -> None:
    """In a duplicate stage a record must deal exactly its table's boards: a platform cannot
    swap a deal (the engine's referee sentence says which card differs)."""
    if match.round.stage.kind != Stage.Kind.DUPLICATE:
        return
    problems = duplicate.record_board_errors(match, parse(document))
    if problems:
        lang = (get_language() or settings.LANGUAGE_CODE or "it")[:2]
        raise RecordMismatch(
            _("The record was not played on this table's boards: %(why)s")
            % {"why": problems[0].message(lang)},
            code="wrong_board",
            field=f"deals[{problems[0].deal}]",
        )


def _seat_idents(seats) -> set[str]:
    return {str(seat) for seat in seats} - {"", "None"}


def seat_lines(tournament, idents: set[str], line_ids) -> dict[str, set[int]]:
    """The lines of the players that ``idents`` (seat names) can name: players of
    ``tournament``'s lines or of the lines ``line_ids``, by name, federation id or username.

    One query, whatever the size of the tournament; a batch of records reads it once.
    """
    if not idents:
        return {}
    players = (
        Player.objects.filter(
            Q(name__in=idents) | Q(federation_id__in=idents) | Q(user__username__in=idents)
        )
        .filter(Q(lines__entries__tournament=tournament) | Q(lines__in=list(line_ids)))
        .values_list("name", "federation_id", "user__username", "lines")
    )
    by_ident: dict[str, set[int]] = {}
    for name, fed, username, line in players:
        # Not the numeric player id: platforms often number their seats "1", "2".
        for ident in {name, fed, username} - {None, ""}:
            by_ident.setdefault(ident, set()).add(line)
    return by_ident


def _check_players(match, seats, by_ident: dict[str, set[int]]) -> None:
    """Seats naming players of this tournament must name this match's lines, side by side.

    Platforms may use their own nicknames; a seat that names no player of the tournament is
    accepted. One that names a player of another line is a record for another match.
    """
    sides = [match.home_id, match.away_id]
    for index, seat in enumerate(seats):
        lines = by_ident.get(str(seat))
        if not lines:
            continue
        if sides[index % 2] not in lines:
            raise RecordMismatch(
                _("Seat %(seat)d (%(name)s) is not a player of this match's %(side)s line.")
                % {
                    "seat": index,
                    "name": seat,
                    "side": _("home") if index % 2 == 0 else _("away"),
                },
                code="wrong_players",
                field=f"seats[{index}]",
            )


# --- submitting -------------------------------------------------------------------------------


def submit_record(
    match: Match,
    document: dict,
    *,
    user=None,
    source=Submission.Source.API,
    verify_now: bool = False,
) -> SubmitResult:
    """Store ``document`` as a new version of ``match``'s record, or return the same one.

    Raises a SubmissionError (nothing stored) when the document cannot be this match's record.
    ``submit_records`` says the rest.
    """
    outcome = submit_records([(match, document)], user=user, source=source, verify_now=verify_now)
    if isinstance(outcome[0], SubmissionError):
        raise outcome[0]
    return outcome[0]


@dataclass
class _Accepted:
    index: int
    match: Match
    body: dict
    digest: str
    size: int


def submit_records(
    entries: list[tuple[Match, dict]],
    *,
    user=None,
    source=Submission.Source.API,
    verify_now: bool = False,
    max_record_bytes: int | None = None,
) -> list[SubmitResult | SubmissionError]:
    """Store each ``(match, document)`` as a new version of the match's record, or find the
    same one already stored: each entry's outcome is its ``SubmitResult``, or the
    ``SubmissionError`` that refused it (nothing of it stored; the others are not held back).

    The checks run first, outside any transaction (seat names read once per tournament); then
    one transaction locks the matches, reads what they hold in one query, and stores the new
    versions in one insert. Verification is enqueued once the transaction commits, one message
    per batch of records (``enqueue_verifications``); ``verify_now`` runs it in the caller's
    transaction instead, for callers that need the result at once (the demo data builds its
    knock-out from the group results it has just stored). ``max_record_bytes``: the size limit
    of one record's JSON text, for a batch (a lone record's body was measured before).
    """
    outcomes: list[SubmitResult | SubmissionError | None] = [None] * len(entries)
    readable: list[tuple[int, Match, dict, dict, int]] = []
    for index, (match, document) in enumerate(entries):
        try:
            if not isinstance(document, dict):
                raise MalformedDocument(
                    _("The record must be a JSON object, not %(kind)s.")
                    % {"kind": type(document).__name__},
                    code="invalid_type",
                )
            # A ``match`` field is an envelope (it says where the record goes), not part of the
            # record: the record is stored and hashed without it, so API and import
            # submissions dedupe alike.
            body = record_body(document)
            # Before any query: a NUL or a lone surrogate in a seat name cannot be sent to
            # the database, and the seat names of the whole batch are read in one query.
            size = _check_storable_text(body)
            if max_record_bytes is not None and size > max_record_bytes:
                raise RecordTooLarge(
                    _("The record is %(size)d bytes; the limit is %(limit)d bytes.")
                    % {"size": size, "limit": max_record_bytes}
                )
        except SubmissionError as exc:
            outcomes[index] = exc
            continue
        readable.append((index, match, document, body, size))
    by_ident = _seat_lines_of([(match, document) for _i, match, document, _b, _s in readable])
    accepted: list[_Accepted] = []
    for index, match, document, body, size in readable:
        try:
            check_record_fits(match, document, by_ident.get(match.round.stage.tournament_id))
            accepted.append(_Accepted(index, match, body, content_hash(body), size))
        except SubmissionError as exc:
            outcomes[index] = exc
    if accepted:
        try:
            with transaction.atomic():
                stored = _store(accepted, user, source, verify_now)
        except IntegrityError:
            # A concurrent submission won a race (databases without row locks): one by one.
            if len(accepted) > 1:
                for item in accepted:
                    outcomes[item.index] = submit_records(
                        [(item.match, item.body)], user=user, source=source, verify_now=verify_now
                    )[0]
                return outcomes  # type: ignore[return-value]
            item = accepted[0]
            existing = Submission.objects.filter(match=item.match, content_hash=item.digest).first()
            if existing is None:
                raise
            stored = {item.index: SubmitResult(existing, False)}
        for index, outcome in stored.items():
            outcomes[index] = outcome
        _read_again_if_verified(outcomes, verify_now)
    return outcomes  # type: ignore[return-value]


def _read_again_if_verified(outcomes, verify_now) -> None:
    """Where the commit already ran the verification (the embedded default's eager tasks, outside
    any outer transaction), answer with the state it reached rather than ``pending``."""
    from games.tasks import verify_submission

    if verify_now or connection.in_atomic_block or not verify_submission.app.conf.task_always_eager:
        return
    created = [o for o in outcomes if isinstance(o, SubmitResult) and o.created]
    fresh = Submission.objects.in_bulk([o.submission.pk for o in created])
    for index, outcome in enumerate(outcomes):
        if isinstance(outcome, SubmitResult) and outcome.submission.pk in fresh and outcome.created:
            outcomes[index] = SubmitResult(fresh[outcome.submission.pk], True)


def _seat_lines_of(entries) -> dict[int, dict[str, set[int]]]:
    """``seat_lines`` for each tournament of ``entries`` (tournament id: lookup), one query per
    tournament for every record of the batch."""
    wanted: dict[int, tuple] = {}
    for match, document in entries:
        seats = record_body(document).get("seats") if isinstance(document, dict) else None
        if not isinstance(seats, list):
            continue  # refused as unreadable before the seats are looked at
        tournament = match.round.stage.tournament
        _tournament, idents, lines = wanted.setdefault(tournament.pk, (tournament, set(), set()))
        idents.update(_seat_idents(seats))
        lines.update(pk for pk in (match.home_id, match.away_id) if pk)
    return {pk: seat_lines(t, idents, lines) for pk, (t, idents, lines) in wanted.items()}


def _store(
    accepted: list[_Accepted], user, source, verify_now
) -> dict[int, SubmitResult | SubmissionError]:
    """The transaction of ``submit_records``: the outcome of each accepted entry, by index."""
    wanted: dict[int, set[str]] = {}
    for item in accepted:
        wanted.setdefault(item.match.pk, set()).add(item.digest)
    # The match row locks number versions one at a time and make the caps exact.
    list(
        Match.objects.select_for_update()
        .filter(pk__in=wanted)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    stored = stored_records(wanted)
    submitter = user if user is not None and user.is_authenticated else None
    outcomes: dict[int, SubmitResult | SubmissionError] = {}
    new: list[tuple[int, Submission]] = []
    same_ids: dict[int, int] = {}
    for item in accepted:
        held = stored[item.match.pk]
        if item.digest in held.same:
            same_ids[item.index] = held.same[item.digest]
            continue
        try:
            _check_match_caps(held, item.size)
        except SubmissionError as exc:
            outcomes[item.index] = exc
            continue
        held.count += 1
        held.size += item.size
        held.last_version += 1
        submission = Submission(
            match=item.match,
            version=held.last_version,
            document=item.body,
            content_hash=item.digest,
            submitter=submitter,
            source=source,
        )
        held.same[item.digest] = -1 - len(new)  # the same record twice in one batch
        new.append((item.index, submission))
    created = rows.create_many([submission for _index, submission in new])
    for (index, _unsaved), submission in zip(new, created, strict=True):
        outcomes[index] = SubmitResult(submission, True)
        logger.info(
            "match %s: stored record version %s (%s)",
            submission.match_id,
            submission.version,
            source,
        )
    earlier = {index: created[-1 - pk] for index, pk in same_ids.items() if pk < 0}
    found = Submission.objects.in_bulk([pk for pk in same_ids.values() if pk > 0])
    for index, pk in same_ids.items():
        outcomes[index] = SubmitResult(earlier[index] if pk < 0 else found[pk], False)
    ids = [submission.pk for submission in created]
    if verify_now:
        for submission in created:
            run_verification(submission.pk)
            submission.refresh_from_db()
    else:
        for submission in created:
            # Nothing can have a result version yet: the answer needs no query for it.
            submission.__dict__["latest_result_version"] = None
        if ids:
            transaction.on_commit(partial(enqueue_verifications, ids))
    return outcomes


def enqueue_verification(submission_id: int) -> bool:
    """Send the verification task; a broker outage leaves the submission pending for the sweep."""
    from games.tasks import verify_submission

    return _send(verify_submission, submission_id, [submission_id])


def enqueue_verifications(ids: list[int]) -> None:
    """Send the verification of records stored together: one message per ``BATCH_SIZE`` of
    them (its worker verifies them as one batch) rather than one per record. A message that
    cannot be sent leaves its records pending for the sweep."""
    from games.tasks import verify_submissions

    if len(ids) == 1:
        enqueue_verification(ids[0])
        return
    for start in range(0, len(ids), BATCH_SIZE):
        chunk = ids[start : start + BATCH_SIZE]
        _send(verify_submissions, chunk, chunk)


def _send(task, argument, ids: list[int]) -> bool:
    """Publish ``task(argument)`` and note when ``ids`` were enqueued; False (logged) when the
    broker refused it: the sweep will send them again."""
    try:
        task.apply_async((argument,), retry=True, retry_policy=PUBLISH_RETRY)
    except Exception as exc:  # broker down: kombu/redis raise many kinds
        if task.app.conf.task_always_eager:
            raise
        logger.warning("submissions %s: could not enqueue (%s); the sweep will", ids, exc)
        return False
    Submission.objects.filter(pk__in=ids, state=Submission.State.PENDING).update(
        enqueued_at=timezone.now()
    )
    return True


def pending_among(ids) -> list[int]:
    """The submissions of ``ids`` still pending, in id order."""
    return list(
        Submission.objects.filter(pk__in=list(ids), state=Submission.State.PENDING)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def stale_pending(older_than_s: float):
    """Pending submissions not (re-)enqueued for ``older_than_s`` seconds."""
    cutoff = timezone.now() - timedelta(seconds=older_than_s)
    return (
        Submission.objects.filter(state=Submission.State.PENDING)
        .annotate(last_try=Coalesce("enqueued_at", "submitted_at"))
        .filter(last_try__lt=cutoff)
        .order_by("submitted_at")
    )


# --- verifying --------------------------------------------------------------------------------


def compute_verdict(document: dict | str) -> dict:
    """The engine's verdict; for an illegal record the errors in English are kept too.

    ``document``: the stored document, or the record's JSON text (:func:`record_text`), which
    the engine reads straight into its own types."""
    body = document if isinstance(document, str) else record_body(document)
    lang = (getattr(settings, "LANGUAGE_CODE", "it") or "it")[:2]
    verdict = scopa.verify_document(body, lang=lang)
    errors = verdict.get("errors") or []
    if errors and all("messages" in e for e in errors):
        verdict["errors_en"] = [
            {**e, "message": e["messages"].get("en", e["message"])} for e in errors
        ]
    elif errors and lang != "en":
        other = scopa.verify_document(body, lang="en")
        verdict["errors_en"] = other.get("errors", [])
    verdict["lang"] = lang
    return verdict


def run_verification(submission_id: int) -> str:
    """Verify one submission; safe to run any number of times (a final state is never redone)."""
    submission = Submission.objects.filter(pk=submission_id).first()
    if submission is None:
        logger.warning("submission %s: not found", submission_id)
        return "missing"
    if submission.is_final:
        return "already-final"
    if submission.attempts >= MAX_ATTEMPTS:
        # Every earlier delivery died with its worker (killed, out of memory, hard time limit)
        # before writing anything: stop here instead of redelivering it for ever.
        mark_error(submission_id, poison_reason(submission.attempts))
        logger.error("submission %s: given up after %s attempts", submission_id, MAX_ATTEMPTS)
        return "failed"
    # Counted (and committed) before the engine runs, so a delivery that kills its worker
    # still counts; a delivery that ends normally leaves the submission final.
    Submission.objects.filter(pk=submission_id).update(attempts=F("attempts") + 1)
    verdict = compute_verdict(submission.document)  # pure CPU work, outside any lock
    with transaction.atomic():
        match = Match.objects.select_for_update().get(pk=submission.match_id)
        submission = Submission.objects.select_for_update().get(pk=submission_id)
        if submission.is_final:
            return "already-final"
        version = submission.result_versions.order_by("-number").first()
        _store_verdict(match, submission, verdict, version)
        submission.save()
    logger.info("submission %s: %s", submission_id, submission.state)
    return submission.state


# --- verifying in batches ---------------------------------------------------------------------
#
# A worker takes the records waiting for verification (its own message's record and up to
# ``BATCH_SIZE - 1`` others that no delivery has tried yet), runs the engine on each outside any
# transaction, and writes their verdicts group by group: one transaction per group, one lock
# query for the group's matches, a savepoint per record, the submissions saved in bulk.
#
# A record in a batch is claimed twice over: ``attempts`` is raised (committed) before the engine
# runs, which keeps it out of any other batch, and a session advisory lock on its id says a live
# worker holds it, which PostgreSQL drops by itself when that worker dies. A record whose earlier
# delivery died (``attempts`` > 0, no lock) is verified alone, so a record that kills its worker
# takes nobody with it more than once and ends failed after ``MAX_ATTEMPTS`` deliveries.

BATCH_SIZE = getattr(settings, "GAMES_VERIFY_BATCH_SIZE", 50)
# A group is written once it holds this many verdicts or has waited this long for the engine:
# one slow record does not keep the others' verdicts unwritten. A batch is one group when the
# engine keeps up: each group costs a dozen queries whatever its size.
GROUP_SIZE = BATCH_SIZE
GROUP_WAIT_S = 0.05
# A claim is a session advisory lock on one 64-bit key: this namespace in the high 16 bits, the
# low 48 bits of the submission's id below them. Every id under 2**48 has a key of its own; ids
# further apart share one, which only makes one of them wait for the sweep while the other is
# verified. (The two-key form took the id as a 32-bit integer, which no id from 2**31 on is:
# such a record could not be claimed.)
_CLAIM_NAMESPACE = 15_001


def _claim_key(column: str) -> str:
    """SQL for the advisory-lock key of the submission whose id is ``column``."""
    # PostgreSQL gives ``<<``, ``|`` and ``&`` one precedence, left to right: hence the brackets
    return f"(({_CLAIM_NAMESPACE}::bigint << 48) | ({column} & 281474976710655))"  # 2**48 - 1


@dataclass
class _Work:
    submission: Submission
    verdict: dict | None = None
    error: str = ""


def record_text():
    """The stored record as JSON text, for the engine.

    A batch reads its records this way: the engine decodes the text into its own types in a
    fraction of what reading the document into Python objects first costs (about 1 ms a
    record, more than the engine's verification). The column keeps the text
    (``models.RecordField``), so PostgreSQL hands it over as stored; records are stored
    without the envelope's ``match`` field (``submit_records``), which the engine would refuse."""
    return Cast("document", TextField())


def batching_available() -> bool:
    """Batches need PostgreSQL's advisory locks; elsewhere every record is verified alone."""
    return connection.vendor == "postgresql"


_HELD = "held"  # what _claim_own answers for a pending record another session holds


def _claim_own(submission_id: int) -> str | None:
    """A task's own record: its state (``None``: no such record), and for a pending record its
    claim taken in the same query, or ``_HELD`` when a live worker holds it."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT state, CASE WHEN state = %s THEN pg_try_advisory_lock({_claim_key('id')}) END "
            f"FROM {Submission._meta.db_table} WHERE id = %s",
            [Submission.State.PENDING, submission_id],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    state, claimed = row
    return _HELD if state == Submission.State.PENDING and not claimed else state


def _claim_batch(submission_id: int, more: int) -> list[int]:
    """Claim a task's own record (its advisory lock already held) and up to ``more`` others
    waiting for a first try, in one statement (committed before the engine runs: a batch that
    kills its worker leaves these records one attempt each, to be verified alone).

    The own row is waited for while nothing else is held; the others are only rows no
    transaction locks and no session claims, so two claims never wait for each other. Returns
    the ids claimed, the own first; without it (an earlier delivery died with it, or it is
    final by now) nothing is claimed."""
    table = Submission._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH own AS (
                SELECT id FROM {table}
                WHERE id = %(own)s AND state = %(pending)s AND attempts = 0
                FOR UPDATE
            ), others AS (
                SELECT id FROM {table}
                WHERE state = %(pending)s AND attempts = 0 AND id <> %(own)s
                    AND EXISTS (SELECT 1 FROM own)
                ORDER BY id LIMIT %(more)s
                FOR UPDATE SKIP LOCKED
            ), taken AS (
                SELECT id FROM own
                UNION ALL
                SELECT id FROM others WHERE pg_try_advisory_lock({_claim_key("id")})
            )
            UPDATE {table} AS submission SET attempts = submission.attempts + 1
            FROM taken WHERE submission.id = taken.id
            RETURNING submission.id
            """,
            {
                "own": submission_id,
                "pending": Submission.State.PENDING,
                "more": more,
            },
        )
        ids = [row[0] for row in cursor.fetchall()]
    return sorted(ids, key=lambda pk: pk != submission_id)


def _release(ids: list[int] | None) -> None:
    """Release the claims on ``ids``; ``None``: every claim this session holds (a task stopped
    part-way, which may not know which claims it took; its worker keeps the connection, so a
    claim left held would keep the record from every other worker)."""
    if ids == []:
        return
    if ids is None:
        # a key's high 32 bits are ``classid``; their top 16 bits, the namespace
        sql = (
            "SELECT pg_advisory_unlock(classid::bigint << 32 | objid::bigint) FROM pg_locks "
            "WHERE locktype = 'advisory' AND objsubid = 1 AND pid = pg_backend_pid() "
            "AND classid::bigint >> 16 = %s"
        )
        params: list = [_CLAIM_NAMESPACE]
    else:
        sql = f"SELECT pg_advisory_unlock({_claim_key('id')}) FROM unnest(%s::bigint[]) AS id"
        params = [ids]
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            if ids is None:
                # A key held twice (two ids 2**48 apart, see _claim_key) is one row of
                # pg_locks: again while any is left (a bound, not a count: a session holds no
                # more claims than a batch takes).
                for _ in range(BATCH_SIZE * 10):
                    if not cursor.fetchall():
                        break
                    cursor.execute(sql, params)
    except DatabaseError:
        # The connection is gone, and its session locks with it.
        logger.warning("could not release the claims on submissions %s", ids or "(all)")


def verify_waiting(submission_id: int, *, bound: int = BATCH_SIZE, too_slow=()) -> str:
    """Verify ``submission_id`` and up to ``bound - 1`` other records waiting for a first try.

    Returns the state of ``submission_id`` ("already-final", "claimed" when a live worker
    holds it, "missing"). ``too_slow``: exception types of the task's soft time limit; the
    record under way then ends in ``error``, the verdicts reached so far are written and the
    rest go back to waiting (first try still to come).
    """
    claimed: list[int] | None = []
    try:
        own = _claim_own(submission_id)
        if own is None:
            logger.warning("submission %s: not found", submission_id)
            return "missing"
        if own is _HELD:
            return "claimed"
        if own != Submission.State.PENDING:
            return "already-final"
        claimed = [submission_id]
        taken = _claim_batch(submission_id, bound - 1) if bound > 1 else []
        claimed += taken[1:]  # the own record is released whatever happens
        alone = taken[:1] != [submission_id]
        if alone:
            # An earlier delivery died with it (or it is final by now): verify it alone.
            return run_verification(submission_id)
        batch = list(
            Submission.objects.filter(pk__in=claimed, state=Submission.State.PENDING)
            .defer("document")
            .annotate(record_text=record_text())
            .select_related("submitter")
            .order_by("pk")
        )
        batch.sort(key=lambda sub: sub.pk != submission_id)
        states = _verify_batch(batch, too_slow)
        state = states.get(submission_id) or (
            Submission.objects.filter(pk=submission_id).values_list("state", flat=True).first()
        )
        logger.info("submission %s: %s (batch of %d)", submission_id, state, len(batch))
        return state or "missing"
    except BaseException:
        claimed = None  # stopped part-way (a time limit, a lost connection): release them all
        raise
    finally:
        _release(claimed)


def _verify_batch(batch: Sequence[Submission], too_slow) -> dict[int, str]:
    """Verify and write ``batch`` group by group; the states the records reached."""
    states: dict[int, str] = {}
    group: list[_Work] = []
    started = time.monotonic()
    for index, submission in enumerate(batch):
        work = _Work(submission)
        try:
            work.verdict = compute_verdict(vars(submission)["record_text"])  # see verify_waiting
        except too_slow:
            logger.error("submission %s: verification stopped by the time limit", submission.pk)
            work.error = slow_reason()
            group.append(work)
            states.update(_write_group(group))
            rest = [sub.pk for sub in batch[index + 1 :]]
            Submission.objects.filter(pk__in=rest, attempts__gt=0).update(
                attempts=F("attempts") - 1
            )
            return states
        except Exception as exc:
            logger.exception("submission %s: verification failed", submission.pk)
            work.error = f"{type(exc).__name__}: {exc}"
        group.append(work)
        if len(group) >= GROUP_SIZE or time.monotonic() - started > GROUP_WAIT_S:
            states.update(_write_group(group))
            group, started = [], time.monotonic()
    if group:
        states.update(_write_group(group))
    return states


def _write_group(group: list[_Work]) -> dict[int, str]:
    """One transaction: the group's matches locked in one query, each record in a savepoint
    when its result writes before the flush (one that fails ends in ``error`` alone), the
    submissions saved in one bulk update, the results announced once after the commit. Returns
    the states of the records it wrote (not those another delivery got to first)."""
    from tournaments.models import ResultVersion
    from tournaments.services.results import lock_matches, written_together

    ids = [work.submission.pk for work in group]
    with transaction.atomic(), written_together() as batch:
        matches = lock_matches(work.submission.match_id for work in group)
        # the records still pending, and whether each already became a version (a rerun)
        still_pending = dict(
            Submission.objects.select_for_update(of=("self",))
            .filter(pk__in=ids, state=Submission.State.PENDING)
            .annotate(has_version=Exists(ResultVersion.objects.filter(submission=OuterRef("pk"))))
            .values_list("pk", "has_version")
        )
        batch.preload(matches.values())
        versions: dict[int | None, ResultVersion] = {}
        rerun = [pk for pk, has_version in still_pending.items() if has_version]
        for version in ResultVersion.objects.filter(submission__in=rerun).order_by("number"):
            versions[version.submission_id] = version  # the latest wins
        changed = []
        for work in group:
            submission = work.submission
            if submission.pk not in still_pending:
                continue  # a rerun or another delivery got there first
            changed.append(submission)
            if work.error:
                submission.state = Submission.State.ERROR
                submission.error_reason = work.error[:4000]
                submission.verified_at = timezone.now()
                continue
            with batch.writing(matches, submission.match_id) as match:
                mark = batch.mark()
                try:
                    # A record whose result writes at once gets a savepoint of its own; any
                    # other only gathers rows for the flush, which undo() takes back.
                    _store_verdict(
                        match,
                        submission,
                        work.verdict,
                        versions.get(submission.pk),
                        locked=True,
                        savepoint=batch.writes_now(match),
                    )
                except TRANSIENT_ERRORS:
                    # Not this record's fault: the group is undone and the task retries.
                    raise
                except Exception as exc:
                    logger.exception("submission %s: storing the verdict failed", submission.pk)
                    submission.state = Submission.State.ERROR
                    submission.error_reason = f"{type(exc).__name__}: {exc}"[:4000]
                    # The savepoint undid its writes: nothing of it to announce, and the match
                    # as stored, not as left in memory.
                    batch.undo(mark, match)
                    matches.update(lock_matches([submission.match_id]))
                    continue
                if submission.state == Submission.State.ERROR:
                    batch.undo(mark, match)  # refused: its savepoint undid what it wrote
        rows.update_each(changed, VERDICT_FIELDS)
        _saved_in_bulk(changed, matches)
    logger.info("wrote %d verdicts in one transaction", len(changed))
    return {submission.pk: str(submission.state) for submission in changed}


def _saved_in_bulk(submissions: list[Submission], matches: dict[int, Match]) -> None:
    """The records a group refused or failed are announced as if each had been saved alone,
    once per tournament (the bulk update sends no ``post_save``): its listeners, the desk's live
    page (``live.signals``), hear that a record waits there. Verified records change a result,
    which is announced on its own."""
    last: dict[int, Submission] = {}
    for submission in submissions:
        match = matches.get(submission.match_id)  # None: its stage went since (nothing to tell)
        if match and submission.state in (Submission.State.REJECTED, Submission.State.ERROR):
            last[match.round.stage.tournament_id] = submission
    rows.send_saved(last.values(), created=False, update_fields=frozenset(VERDICT_FIELDS))


def slow_reason() -> str:
    from games.tasks import VERIFY_SOFT_LIMIT_S

    return _("Verification took longer than %(s)d seconds and was stopped.") % {
        "s": VERIFY_SOFT_LIMIT_S
    }


# Fields a verification writes on its submission (saved one by one, or in bulk for a batch).
VERDICT_FIELDS = ("state", "verdict", "verified_at", "has_mismatches", "error_reason")


def _store_verdict(match, submission, verdict, version, *, locked=False, savepoint=True):
    """Set one verified record's verdict and, the first time it verifies, store its result.

    The match row is locked by the caller (``locked``: with its related rows, by
    ``lock_matches``); ``version`` is the record's latest result version, if any. The version
    goes through the one service that writes results (``tournaments.services.results``), which
    decides whether it comes into force or waits for the organizer. A record that already has a
    version (a rerun) only gets its verdict refreshed and a report: a rerun applies nothing by
    itself. The caller saves the submission's ``VERDICT_FIELDS``. ``savepoint=False``: the
    caller's ``ResultBatch`` (``tournaments.services.results.batch``) says this result writes
    nothing before its flush.
    """
    from tournaments.exceptions import ResultError
    from tournaments.services.results import apply_verified_result, decision_from_verdict, sheet_of
    from tournaments.services.results import same_result as same_sheet

    now = timezone.now()
    submission.verdict = verdict
    submission.verified_at = now
    submission.has_mismatches = bool(verdict.get("declared_mismatches"))
    if not verdict.get("valid"):
        submission.state = Submission.State.REJECTED
        if version is not None and version.status == version.Status.IN_FORCE:
            submission.error_reason = _(
                "This version no longer verifies but the match's result still comes from it: "
                "enter the result at the desk."
            )
        return
    if version is not None:
        submission.state = Submission.State.VERIFIED
        submission.error_reason = ""
        try:
            agrees = same_sheet(sheet_of(decision_from_verdict(match, verdict)), version.sheet)
        except ResultError as exc:
            agrees, submission.error_reason = False, str(exc)
        if not agrees and not submission.error_reason:
            submission.error_reason = _(
                "Verified again: the record now gives a different result from its version "
                "%(n)d. Nothing was changed; enter the result at the desk if it must change."
            ) % {"n": version.number}
        return
    try:
        with transaction.atomic() if savepoint else nullcontext():
            apply_verified_result(
                match,
                verdict,
                user=submission.submitter,
                source=_source(submission),
                submission=submission,
                locked=locked,
            )
    except ResultError as exc:
        submission.state = Submission.State.ERROR
        submission.error_reason = str(exc)
        return
    submission.state = Submission.State.VERIFIED
    submission.error_reason = ""


def _source(submission):
    """How the change log names the submission a result came from."""
    return f"submission:{submission.pk} v{submission.version}"


def poison_reason(attempts: int) -> str:
    return _(
        "Verification stopped its worker %(n)d times (a crash or the time limit) and was "
        "abandoned; run it again once the cause is fixed."
    ) % {"n": attempts}


def uncount_attempt(submission_id: int) -> None:
    """A delivery that ends in a retry (database trouble) is not a poison attempt."""
    Submission.objects.filter(pk=submission_id, attempts__gt=0).update(attempts=F("attempts") - 1)


def mark_error(submission_id: int, reason: str) -> None:
    """End a submission in ``error`` with the reason kept (unless it already reached a verdict)."""
    Submission.objects.filter(pk=submission_id, state=Submission.State.PENDING).update(
        state=Submission.State.ERROR, error_reason=reason[:4000], verified_at=timezone.now()
    )


# --- organizer actions ------------------------------------------------------------------------


def rerun_verification(submission: Submission) -> None:
    """Send a submission back to ``pending`` and verify it again."""
    with transaction.atomic():
        Submission.objects.filter(pk=submission.pk).update(
            state=Submission.State.PENDING, error_reason="", enqueued_at=None, attempts=0
        )
        transaction.on_commit(partial(enqueue_verification, submission.pk))


def choose_standing(submission: Submission, *, user=None, based_on=None) -> None:
    """The organizer's decision for a verified record: its result version comes into force.

    ``based_on`` is the version in force the organizer saw (``""`` or ``0``: none): a stale one
    is refused with ``StaleResult``, a missing one (``None``) with ``VersionRequired``.
    """
    from tournaments.services.results import accept_version, named_version

    based_on = named_version(based_on)

    version = submission.result_versions.order_by("-number").first()
    if submission.state != Submission.State.VERIFIED or version is None:
        raise SubmissionStateError(
            _("Only a verified version can stand; this one is %(state)s.")
            % {"state": submission.get_state_display()}
        )
    accept_version(version, user=user, based_on=based_on)
    logger.info("match %s: version %s now stands", submission.match_id, submission.version)
