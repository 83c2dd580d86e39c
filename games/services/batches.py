"""Verifying the records waiting beside a task's own in one batch: claimed together, replayed
by the engine outside any transaction, written group by group."""

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Exists, F, OuterRef, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from games.models import Submission
from games.services import verifying
from games.services.enqueueing import BATCH_SIZE, take_wake, wake_workers
from games.services.verifying import (
    TRANSIENT_ERRORS,
    VERDICT_FIELDS,
    mark_error,
    run_verification,
    slow_reason,
    store_verdict,
)
from tournaments.models import Match, ResultVersion
from tournaments.services import results, rows

logger = logging.getLogger(__name__)

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

# A group is written once it holds this many verdicts or the engine has spent this much of the
# process's CPU on it: one slow record does not keep the others' verdicts unwritten. A batch is
# one group when the engine keeps up: each group costs a dozen queries whatever its size. CPU,
# not the wall clock: on a loaded machine a batch waits for a core, and counting that wait
# split batches into groups that each paid the dozen queries and an announcement.
GROUP_SIZE = 4 * BATCH_SIZE
GROUP_WAIT_S = 0.2
# A wake-up's worker (``verify_all_waiting``) claims the records waiting this many at a time: a
# group's fixed cost (a dozen statements, the commit, one announcement and rating request) was
# most of a lone record's CPU in batches of ``BATCH_SIZE`` (2.5 against 1.7 ms a record for 200,
# in one process). A batch that kills its worker leaves each of its records to be verified
# alone: rare, and the price of the poison record's guarantee whatever the size.
WAKE_BATCH_SIZE = getattr(settings, "GAMES_WAKE_BATCH_SIZE", 4 * BATCH_SIZE)
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


def _claim_waiting(bound: int) -> list[int]:
    """Claim up to ``bound`` records waiting for a first try, none of them the task's own (the
    own record is held by another worker's batch): only rows no transaction locks and no
    session claims, as ``_claim_batch`` takes the others, in one statement committed before
    the engine runs."""
    table = Submission._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH waiting AS (
                SELECT id FROM {table}
                WHERE state = %(pending)s AND attempts = 0
                ORDER BY id LIMIT %(bound)s
                FOR UPDATE SKIP LOCKED
            ), taken AS (
                SELECT id FROM waiting WHERE pg_try_advisory_lock({_claim_key("id")})
            )
            UPDATE {table} AS submission SET attempts = submission.attempts + 1
            FROM taken WHERE submission.id = taken.id
            RETURNING submission.id
            """,
            {"pending": Submission.State.PENDING, "bound": bound},
        )
        return sorted(row[0] for row in cursor.fetchall())


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
            # Another worker's batch took it along. Rather than send its message again at
            # once (one more message for every record taken along, when records come one at
            # a time), lead a batch of the records still waiting meanwhile; by its end the
            # other batch has usually written this one, and its message ends here.
            claimed = _claim_waiting(bound) if bound > 0 else []
            if claimed:
                _verify_claimed(claimed, None, too_slow)
            state = _state_of(submission_id)
            return "claimed" if state == Submission.State.PENDING else "already-final"
        if own != Submission.State.PENDING:
            return "already-final"
        claimed = [submission_id]
        taken = _claim_batch(submission_id, bound - 1) if bound > 1 else []
        claimed += taken[1:]  # the own record is released whatever happens
        alone = taken[:1] != [submission_id]
        if alone:
            # An earlier delivery died with it (or it is final by now): verify it alone.
            return run_verification(submission_id)
        states = _verify_claimed(claimed, submission_id, too_slow)
        state = states.get(submission_id) or _state_of(submission_id)
        return state or "missing"
    except BaseException:
        claimed = None  # stopped part-way (a time limit, a lost connection): release them all
        raise
    finally:
        _release(claimed)


def _claim_orphan() -> int | None:
    """Claim one record whose earlier delivery died with it (pending, tried before, no live
    worker holding it), to be verified alone: the one tried fewest times first, so a record
    that keeps killing its worker comes after the others it took down with it."""
    table = Submission._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH candidates AS MATERIALIZED (
                SELECT id FROM {table}
                WHERE state = %(pending)s AND attempts > 0
                ORDER BY attempts, id LIMIT %(bound)s
            )
            -- no ORDER BY here: the scan stops at the first claim it takes, in the order above
            SELECT id FROM candidates WHERE pg_try_advisory_lock({_claim_key("id")}) LIMIT 1
            """,
            {"pending": Submission.State.PENDING, "bound": BATCH_SIZE},
        )
        row = cursor.fetchone()
    if row is None:
        return None
    return row[0]


def verify_all_waiting(*, bound: int = WAKE_BATCH_SIZE, budget_s: float, too_slow=()) -> int:
    """A wake-up's work (``wake_workers``): clear its mark, then claim the records waiting for
    a first try ``bound`` at a time and verify each batch, until none is left; then those whose
    earlier delivery died, one at a time and alone. Returns how many records it took.

    A batch as full as ``bound`` wakes another worker first (more may be waiting), so two
    workers share a backlog with a message a batch rather than one a record. After
    ``budget_s`` the rest is left to a wake-up sent for it, below the task's time limit.
    Database trouble gives the records of the batch under way back their first try and
    raises (the task retries)."""
    take_wake()
    started = time.monotonic()
    taken = 0
    while True:
        if time.monotonic() - started > budget_s:
            wake_workers()
            return taken
        claimed: list[int] | None = []
        alone: int | None = None
        try:
            claimed = _claim_waiting(bound)
            if not claimed:
                alone = _claim_orphan()
                if alone is None:
                    return taken
                claimed = [alone]
                _verify_alone(alone, too_slow)
            else:
                if len(claimed) >= bound:
                    wake_workers()
                _verify_claimed(claimed, None, too_slow)
            taken += len(claimed)
        except TRANSIENT_ERRORS:
            if claimed and alone is None:
                _uncount(claimed)
            elif alone is not None:
                _uncount([alone])
            claimed = None
            raise
        except BaseException:
            claimed = None  # stopped part-way: release every claim this session holds
            raise
        finally:
            _release(claimed)


def claims_held_elsewhere() -> bool:
    """Whether records tried before are still pending, after a wake-up's worker found none it
    could claim: another session holds them. Either a live worker's batch, which ends by its
    task's time limit, or a worker that just died, whose PostgreSQL session lets go of its
    claims a moment after the worker is gone: on RabbitMQ, its wake-up can come back to another
    worker within that moment, which then finds nothing to do, and nothing else would come for
    those records but the beat sweep, minutes later."""
    return Submission.objects.filter(state=Submission.State.PENDING, attempts__gt=0).exists()


def _verify_alone(submission_id: int, too_slow) -> None:
    """A record whose earlier delivery died, verified alone (``run_verification`` counts its
    attempts and ends it failed after ``MAX_ATTEMPTS``)."""
    try:
        run_verification(submission_id)
    except TRANSIENT_ERRORS:
        raise
    except too_slow:
        logger.error("submission %s: verification stopped by the time limit", submission_id)
        mark_error(submission_id, slow_reason())
    except Exception as exc:
        logger.exception("submission %s: verification failed", submission_id)
        mark_error(submission_id, f"{type(exc).__name__}: {exc}")


def _uncount(ids: list[int]) -> None:
    """Database trouble is not the records' fault: their attempt does not count (the database
    may be gone, in which case they are verified alone later)."""
    try:
        Submission.objects.filter(
            pk__in=ids, state=Submission.State.PENDING, attempts__gt=0
        ).update(attempts=F("attempts") - 1)
    except DatabaseError:
        logger.warning("could not give submissions %s back their try", ids)


def _state_of(submission_id: int) -> str | None:
    return Submission.objects.filter(pk=submission_id).values_list("state", flat=True).first()


def _verify_claimed(claimed: list[int], own: int | None, too_slow) -> dict[int, str]:
    """Read the claimed records still pending (as JSON text, for the engine), ``own`` first,
    and verify them as one batch; the states they reached."""
    batch = list(
        Submission.objects.filter(pk__in=claimed, state=Submission.State.PENDING)
        .defer("document")
        .annotate(record_text=record_text())
        .select_related("submitter")
        .order_by("pk")
    )
    batch.sort(key=lambda sub: sub.pk != own)
    states = _verify_batch(batch, too_slow)
    logger.info("submission %s: batch of %d", own or "(none: taken along)", len(batch))
    return states


def _verify_batch(batch: Sequence[Submission], too_slow) -> dict[int, str]:
    """Verify and write ``batch`` group by group; the states the records reached."""
    states: dict[int, str] = {}
    group: list[_Work] = []
    started = time.process_time()
    for index, submission in enumerate(batch):
        work = _Work(submission)
        try:
            # the record's JSON text, read by verify_waiting
            work.verdict = verifying.compute_verdict(vars(submission)["record_text"])
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
        if len(group) >= GROUP_SIZE or time.process_time() - started > GROUP_WAIT_S:
            states.update(_write_group(group))
            group, started = [], time.process_time()
    if group:
        states.update(_write_group(group))
    return states


def _write_group(group: list[_Work]) -> dict[int, str]:
    """One transaction: the group's matches locked in one query, each record in a savepoint
    when its result writes before the flush (one that fails ends in ``error`` alone), the
    submissions saved in one bulk update, the results announced once after the commit. Returns
    the states of the records it wrote (not those another delivery got to first)."""
    ids = [work.submission.pk for work in group]
    with transaction.atomic(), results.written_together() as batch:
        matches = results.lock_matches(work.submission.match_id for work in group)
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
                    store_verdict(
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
                    matches.update(results.lock_matches([submission.match_id]))
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
