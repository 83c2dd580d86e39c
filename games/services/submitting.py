"""Submitting match records: the one code path for the API, the import and the desk.

Each record is checked outside any transaction (``documents``, ``fitting``), then stored in one
transaction with its match locked, so the per-match caps hold and versions number one by one;
its verification is enqueued once the row is committed (``enqueueing``).
"""

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Func, IntegerField, Max, QuerySet, Sum, TextField
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone
from django.utils.translation import gettext as _

from games.exceptions import (
    MalformedDocument,
    RecordTooLarge,
    SubmissionError,
    TooManyVersions,
)
from games.models import Submission, content_hash
from games.services.documents import check_storable_text, record_body
from games.services.enqueueing import eager, enqueue_verifications, wakes_available
from games.services.fitting import check_record_fits, seat_idents, seat_lines
from games.services.verifying import run_verification
from tournaments.models import Match
from tournaments.services import rows

logger = logging.getLogger(__name__)

# What one match may hold, so one submitter cannot fill the database (docs/security.md): stored
# versions, and the size of their JSON text together.
MAX_VERSIONS_PER_MATCH = getattr(settings, "GAMES_MAX_VERSIONS_PER_MATCH", 20)
MAX_BYTES_PER_MATCH = getattr(settings, "GAMES_MAX_BYTES_PER_MATCH", 4 * 1024 * 1024)


@dataclass(frozen=True)
class SubmitResult:
    submission: Submission
    created: bool


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
    lone = len(wanted) == 1 and len(digests := next(iter(wanted.values()))) == 1
    if lone:
        return {mid: _stored_record(mid, next(iter(digests))) for mid in wanted}
    aggregates = {
        "n": Count("pk"),
        "size": Coalesce(Sum(OctetLength(Cast("document", TextField()))), 0),
        "last": Coalesce(Max("version"), 0),
    }
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
    hashes = set().union(*wanted.values())
    if hashes:
        for mid, digest, pk in Submission.objects.filter(
            match_id__in=wanted, content_hash__in=hashes
        ).values_list("match_id", "content_hash", "pk"):
            if digest in wanted[mid]:
                tallies[mid].same[digest] = pk
    return tallies


def _stored_record(match_id: int, digest: str) -> StoredRecords:
    """``stored_records`` of one match and one hash (the usual submission), in one query
    written out: building it with the ORM cost more CPU than PostgreSQL takes to answer."""
    size = (
        "OCTET_LENGTH(CAST(document AS TEXT))"
        if connection.vendor == "postgresql"
        else "LENGTH(CAST(document AS BLOB))"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT COUNT(*), COALESCE(SUM({size}), 0), COALESCE(MAX(version), 0), "
            "MAX(CASE WHEN content_hash = %s THEN id END) "
            f"FROM {connection.ops.quote_name(Submission._meta.db_table)} WHERE match_id = %s",
            [digest, match_id],
        )
        count, total, last, same = cursor.fetchone()
    return StoredRecords(count, total, last, {digest: same} if same is not None else {})


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
            size = check_storable_text(body)
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
    if verify_now or connection.in_atomic_block or not eager():
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
        idents.update(seat_idents(seats))
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
    now = timezone.now()
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
            # stamped now, not by a query after the message goes out (cleared if it cannot)
            enqueued_at=None if verify_now else now,
        )
        held.same[item.digest] = -1 - len(new)  # the same record twice in one batch
        new.append((item.index, submission))
    unsaved = [submission for _index, submission in new]
    if len(unsaved) == 1 and not verify_now and wakes_available():
        # stamped by the wake-up it sends, if it sends one (``wake_workers``)
        unsaved[0].enqueued_at = None
    # One row: one INSERT ... RETURNING (a sequence query and a COPY are two round trips).
    created = (
        rows.create_many(unsaved) if len(unsaved) > 1 else Submission.objects.bulk_create(unsaved)
    )
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
            transaction.on_commit(partial(enqueue_verifications, ids, stamped=True))
    return outcomes
