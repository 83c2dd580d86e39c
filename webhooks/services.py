"""Webhook deliveries: which endpoints hear an event, the signed body, one attempt, a re-send.

The deliveries of an event are an outbox: they are written in the transaction of the change that
causes the event (``record_results``, ``record_transition``), so they commit or roll back with
it, and only handing them to the broker waits for the commit (``enqueue``). A process that dies
right after the commit, or a broker that refuses the message, leaves them pending with
``queued_at`` empty; the sweep (``requeue_stuck``) sends them. Either side claims a delivery
(stamps ``queued_at``, on the row as it read it) before handing it over, so the queueing after a
commit and a sweep running meanwhile do not both send it. Nothing here may break the change
itself: the rows are written in a savepoint of their own, and a failure is logged.
"""

import json
import logging
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from celery import current_app
from celery.app.task import Task
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, Q
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone

from tournaments import access
from tournaments.models import Match, MatchResult, Stage, Tournament
from webhooks import network, signing
from webhooks.exceptions import WebhookURLError
from webhooks.models import Delivery, Endpoint, Event

logger = logging.getLogger(__name__)

# The delivery task, by the name it is registered under (``webhooks.tasks``).
DELIVER = "webhooks.tasks.deliver"

SCHEMA = "scopa-webhook/1"


# -- payloads ---------------------------------------------------------------------------------


def _tournament_data(tournament: Tournament) -> dict[str, Any]:
    return {
        "id": tournament.pk,
        "slug": tournament.slug,
        "name": tournament.name,
        "status": tournament.status,
        "path": reverse("public:tournament", args=[tournament.slug]),
    }


def _stage_data(stage: Stage) -> dict[str, Any]:
    return {
        "id": stage.pk,
        "order": stage.order,
        "name": stage.name,
        "kind": stage.kind,
        "status": stage.status,
    }


def _line_data(line) -> dict[str, Any] | None:
    return None if line is None else {"id": line.pk, "name": line.name}


def _in_force(match: Match) -> bool:
    """Whether the match has a result in force (a scored bye of a Danish, Swiss or Mitchell
    round too: its line's score counts in the standings)."""
    return match.status == Match.Status.DONE


def home_first(match: Match, rows: Iterable[MatchResult]) -> list[MatchResult]:
    """A match's score rows, the home line's first (then the away line's)."""
    return sorted(rows, key=lambda row: row.line_id != match.home_id)


def match_payload(
    match: Match, results: list[MatchResult] | None = None
) -> tuple[str, dict[str, Any]]:
    """The event and data for a match whose result was stored, replaced or deleted.

    ``results``: the match's score rows, when the caller read those of several matches at once.
    """
    stage = match.round.stage
    tournament = stage.tournament
    in_force = _in_force(match)
    if results is None and in_force:
        results = list(MatchResult.objects.filter(match=match).order_by("line_id"))
    data = {
        "tournament": _tournament_data(tournament),
        "stage": _stage_data(stage),
        "match": {
            "id": match.pk,
            "round": match.round.number,
            "table": match.table_number,
            "home": _line_data(match.home),
            "away": _line_data(match.away),
            "status": match.status,
            "outcome": match.outcome,
            "winner_id": match.winner_id,
            "path": reverse("public:match", args=[tournament.slug, match.pk]),
        },
        "results": [
            {"line_id": r.line_id, "points": r.points, "vp": r.vp, "mp": r.mp}
            for r in home_first(match, results or [])
        ]
        if in_force
        else [],
    }
    return (Event.RESULT_IN_FORCE if in_force else Event.RESULT_WITHDRAWN), data


def stage_payload(stage: Stage) -> dict[str, Any]:
    return {"tournament": _tournament_data(stage.tournament), "stage": _stage_data(stage)}


def tournament_payload(tournament: Tournament) -> dict[str, Any]:
    return {"tournament": _tournament_data(tournament)}


# -- recording and queueing (the outbox) -----------------------------------------------------


def endpoints_for(tournament: Tournament):
    """The active endpoints of the tournament, plus the site-wide ones if it is public."""
    scope = Q(tournament=tournament)
    if access.open_to_everyone(tournament):
        scope |= Q(tournament__isnull=True)
    return Endpoint.objects.filter(scope, is_active=True)


def _body(delivery_id: str, event: str, data: dict[str, Any]) -> str:
    document = {
        "schema": SCHEMA,
        "id": delivery_id,
        "event": event,
        "occurred_at": timezone.now().isoformat(),
        **data,
    }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"), sort_keys=False)


def _deliveries(tournament, endpoints, event: str, data: dict[str, Any]) -> list[Delivery]:
    """One unsaved delivery of the event per endpoint."""
    deliveries = []
    for endpoint in endpoints:
        delivery = Delivery(endpoint=endpoint, tournament=tournament, event=event)
        delivery.body = _body(str(delivery.id), event, data)
        deliveries.append(delivery)
    return deliveries


def _anyone_listens(match_ids: list[int]) -> bool:
    """Whether an active endpoint hears any of these matches' tournaments; no model built (the
    verification of a batch of records asks this for every group it writes). With no active
    endpoint at all (most installations) it is one plain query; the question over the matches'
    tournaments, asked only otherwise, costs the ORM 2 ms of Python to build. An endpoint of no
    tournament hears the public ones."""
    if not Endpoint.objects.filter(is_active=True).exists():
        return False
    matches = Match.objects.filter(pk__in=match_ids)
    return (
        Endpoint.objects.filter(is_active=True)
        .filter(
            Q(tournament__in=matches.values("round__stage__tournament"))
            | Q(
                Q(tournament__isnull=True),
                Exists(matches.filter(access.open_to_everyone_q("round__stage__tournament__"))),
            )
        )
        .exists()
    )


def _held_match(delivery: Delivery) -> int | None:
    """The match a held delivery tells of (its body is ours: ``match.id``)."""
    try:
        return int(json.loads(delivery.body)["match"]["id"])
    except (ValueError, KeyError, TypeError):
        return None


def _drop_held(tournament_id: int, match_ids: set[int]) -> None:
    """Delete the held deliveries of these matches (a newer result of theirs is held in their
    place: the result released is the one in force then, told once)."""
    earlier = [
        d.pk
        for d in Delivery.objects.filter(tournament_id=tournament_id, status=Delivery.Status.HELD)
        if _held_match(d) in match_ids
    ]
    if earlier:
        Delivery.objects.filter(pk__in=earlier).delete()


def _release_held(tournament: Tournament) -> list[Delivery]:
    """The held deliveries of the tables whose boards are all open now (or whose stage is
    closed), pending again with the body of the result in force now; those of a result no
    longer in force are dropped (the endpoint never heard it). Returns the released ones."""
    held = list(Delivery.objects.filter(tournament=tournament, status=Delivery.Status.HELD))
    if not held:
        return []
    hidden = access.withheld_results(None, tournament)
    by_match: dict[int | None, list[Delivery]] = {}
    for delivery in held:
        by_match.setdefault(_held_match(delivery), []).append(delivery)
    ready = [pk for pk in by_match if pk not in hidden]
    if not ready:
        return []
    matches = {
        m.pk: m
        for m in Match.objects.select_related("round__stage__tournament", "home", "away").filter(
            pk__in=[pk for pk in ready if pk is not None]
        )
    }
    released: list[Delivery] = []
    dropped: list[Any] = []
    for pk in ready:
        match = matches.get(pk) if pk is not None else None
        event, data = match_payload(match) if match is not None else (None, {})
        for delivery in by_match[pk]:
            if event != Event.RESULT_IN_FORCE:
                dropped.append(delivery.pk)
                continue
            delivery.body = _body(str(delivery.id), event, data)
            delivery.status = Delivery.Status.PENDING
            released.append(delivery)
    if dropped:
        Delivery.objects.filter(pk__in=dropped).delete()
    if released:
        Delivery.objects.bulk_update(released, ["body", "status"])
    return released


def _result_deliveries(match_ids: list[int]) -> list[Delivery]:
    """Write the deliveries of these matches' results as the transaction has them: one query for
    the matches and one per tournament for its endpoints (most have none, and then that is all);
    with endpoints, one for the score rows and one insert. Callers asked
    :func:`_anyone_listens` first."""
    by_id = {
        match.pk: match
        for match in Match.objects.select_related(
            "round__stage__tournament", "home", "away"
        ).filter(pk__in=match_ids)
    }
    matches = [by_id[pk] for pk in match_ids if pk in by_id]
    heard: dict[int, list[Endpoint]] = {}
    for match in matches:
        tournament = match.round.stage.tournament
        if tournament.pk not in heard:
            heard[tournament.pk] = list(endpoints_for(tournament))
    listened = [m for m in matches if heard[m.round.stage.tournament_id]]
    if not listened:
        return []
    scores: dict[int, list[MatchResult]] = {}
    for row in MatchResult.objects.filter(
        match__in=[m.pk for m in listened if _in_force(m)]
    ).order_by("match", "line_id"):
        scores.setdefault(row.match_id, []).append(row)
    # a result on a duplicate board still secret is held until every table holding the board
    # has played it (access.withheld_results: what anyone who is not running the stages reads)
    running = {
        m.round.stage.tournament_id: m.round.stage.tournament
        for m in listened
        if _secret_possible(m)
    }
    hidden = {pk: access.withheld_results(None, t) for pk, t in running.items()}
    deliveries = []
    held: dict[int, set[int]] = {}  # tournament → its matches whose result is held
    for match in listened:
        tournament = match.round.stage.tournament
        try:  # from the rows read above: no query here, the transaction stays usable
            event, data = match_payload(match, scores.get(match.pk, []))
            made = _deliveries(tournament, heard[tournament.pk], event, data)
            if event == Event.RESULT_IN_FORCE and match.pk in hidden.get(tournament.pk, ()):
                for delivery in made:
                    delivery.status = Delivery.Status.HELD
                held.setdefault(tournament.pk, set()).add(match.pk)
            deliveries += made
        except Exception:  # this match's data, not the batch's: the others' events go out
            logger.exception("webhooks: the event of match %s could not be built; lost", match.pk)
    for tournament_id, held_ids in held.items():
        _drop_held(tournament_id, held_ids)
    written = Delivery.objects.bulk_create(deliveries) if deliveries else []
    for tournament in running.values():  # a result that opens boards sends the tables held
        written += _release_held(tournament)
    return written


def _secret_possible(match: Match) -> bool:
    """Whether the match is in a duplicate stage still running (its boards may be secret)."""
    stage = match.round.stage
    return stage.kind == Stage.Kind.DUPLICATE and stage.status != Stage.Status.CLOSED


def _transition_deliveries(model: type[Stage | Tournament], pk: int, event: str) -> list[Delivery]:
    """The deliveries of a stage closed or a tournament finished; the payload is built only
    when some endpoint hears the tournament (most have none), as for results."""
    fresh = model.objects.select_related(*(["tournament"] if model is Stage else [])).get(pk=pk)
    tournament = fresh.tournament if isinstance(fresh, Stage) else fresh
    # a duplicate stage closed opens its boards: the results held go out before it
    duplicate_closed = isinstance(fresh, Stage) and fresh.kind == Stage.Kind.DUPLICATE
    released = _release_held(tournament) if duplicate_closed else []
    endpoints = list(endpoints_for(tournament))
    if not endpoints:
        return released
    data = stage_payload(fresh) if isinstance(fresh, Stage) else tournament_payload(fresh)
    deliveries = _deliveries(tournament, endpoints, event, data)
    return released + Delivery.objects.bulk_create(deliveries)


def _write(write: Callable[[], list[Delivery]]) -> list[Delivery]:
    """Run ``write`` in a savepoint, its foreign keys checked there: they are deferred to the
    commit, where an endpoint deleted meanwhile would fail the caller's whole transaction (the
    result with it). Checked now, the endpoint rows are held until the commit instead."""
    with transaction.atomic():
        deliveries = write()
        if deliveries:
            connection.check_constraints(table_names=[Delivery._meta.db_table])
    return deliveries


def _record(write: Callable[[], list[Delivery]], what: str) -> list[Delivery]:
    """Write deliveries in a savepoint of the caller's transaction and queue them once it
    commits. A failure leaves the change as it is: logged, and tried once more after the
    commit (then the event is lost, and the log says which)."""
    try:
        deliveries = _write(write)
    except Exception:
        logger.exception("webhooks: could not record %s; trying again after the commit", what)
        transaction.on_commit(partial(_record_after_commit, write, what))
        return []
    enqueue(d.pk for d in deliveries if d.status != Delivery.Status.HELD)
    return deliveries


def _record_after_commit(write: Callable[[], list[Delivery]], what: str) -> None:
    try:
        deliveries = _write(write)
    except Exception:
        logger.exception("webhooks: %s not recorded: no delivery will be sent", what)
        return
    enqueue(d.pk for d in deliveries if d.status != Delivery.Status.HELD)


def record_results(match_ids: Iterable[int]) -> list[Delivery]:
    """The deliveries of these matches' results, stored, replaced or deleted in the current
    transaction (``tournaments.signals.results_written``). Writing them never raises (a
    savepoint); the read asking whether anyone listens comes first, in the caller's
    transaction, so that with nobody listening (most installations) a result, or a group of
    verified records, costs that one read instead of three statements. A database error on
    that read is the caller's, as on any of its own statements (a batch of records retries)."""
    ids = list(dict.fromkeys(match_ids))
    if not ids or not _anyone_listens(ids):
        return []
    return _record(partial(_result_deliveries, ids), f"the results of matches {ids}")


def record_transition(instance: Stage | Tournament, event: str) -> list[Delivery]:
    """The deliveries of a stage closed or a tournament finished, in the transaction that saved
    it; never raises."""
    model, pk = type(instance), instance.pk
    return _record(
        partial(_transition_deliveries, model, pk, event), f"{event} of {model.__name__} {pk}"
    )


def enqueue(delivery_ids: Iterable[Any]) -> None:
    """Hand deliveries to the broker after the current transaction commits (at once outside
    one). If that never happens (the process dies, the broker is down), they stay pending with
    ``queued_at`` empty and the sweep sends them."""
    ids = [str(pk) for pk in delivery_ids]
    if ids:
        transaction.on_commit(partial(_queue, ids))


def _claim_unqueued(ids: list[str], stamp: datetime) -> list[str]:
    """Stamp ``queued_at`` on those of these deliveries still pending and never queued, and
    return them: the only ones the caller may send. The rows are locked while read, skipping
    any the sweep is claiming, and the sweep claims only with ``queued_at`` as it read it, so a
    delivery goes to the broker from one side only."""
    with transaction.atomic():
        claimed = [
            str(pk)
            for pk in Delivery.objects.select_for_update(skip_locked=True)
            .filter(pk__in=ids, status=Delivery.Status.PENDING, queued_at__isnull=True)
            .values_list("pk", flat=True)
        ]
        if claimed:
            Delivery.objects.filter(pk__in=claimed).update(queued_at=stamp)
    return claimed


def _deliver() -> Task:
    """The delivery task, from Celery's registry by name: the tasks call the services, never
    the other way (``webhooks.apps`` imports the tasks module at start-up, so it is registered
    in every process; ``apply_async`` on it still runs eagerly with no broker)."""
    return current_app.tasks[DELIVER]


def _queue(ids: list[str]) -> None:
    deliver = _deliver()
    stamp = timezone.now()
    try:
        claimed = _claim_unqueued(ids, stamp)
    except Exception:  # the database is gone: they stay unqueued, the sweep sends them
        logger.exception("webhooks: could not queue deliveries %s; the sweep will", ids)
        return
    for number, delivery_id in enumerate(claimed):
        try:
            deliver.delay(delivery_id)
        except Exception:  # a broker outage: the rest would fail alike; the sweep sends them
            unsent = claimed[number:]
            logger.exception("webhooks: deliveries %s could not be queued; the sweep will", unsent)
            try:  # never queued after all, as the sweep reads them
                Delivery.objects.filter(pk__in=unsent, queued_at=stamp).update(queued_at=None)
            except Exception:  # stamped: the sweep sends them once the grace is over
                logger.exception("webhooks: could not mark deliveries %s unqueued", unsent)
            return


# -- attempts ---------------------------------------------------------------------------------


def backoff_s(attempt: int) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1-based): doubling, capped."""
    base = float(settings.WEBHOOK_RETRY_BASE_S)
    return min(base * 2 ** (attempt - 1), float(settings.WEBHOOK_RETRY_MAX_S))


def attempt(delivery_id: str, *, last: bool) -> float | None:
    """Send a delivery once; the seconds to wait before retrying, or None when done.

    ``last``: no retry will follow, so a failure is final. A refused URL is final at once.
    """
    delivery = Delivery.objects.select_related("endpoint").filter(pk=delivery_id).first()
    if delivery is None or delivery.status in (Delivery.Status.DELIVERED, Delivery.Status.HELD):
        return None
    body = delivery.body.encode()
    headers = signing.headers(
        secret=delivery.endpoint.secret,
        timestamp=int(time.time()),
        body=body,
        delivery_id=str(delivery.pk),
        event=delivery.event,
    )
    delivery.attempts += 1
    delivery.last_attempt_at = timezone.now()
    status_code = None
    error = ""
    final = last
    try:
        status_code = network.post(
            delivery.endpoint.url, body, headers, timeout=float(settings.WEBHOOK_TIMEOUT_S)
        )
    except WebhookURLError as refused:
        error, final = str(refused.message), True
    except (OSError, ValueError) as failure:  # refused, reset, timed out, TLS, bad response
        error = f"{type(failure).__name__}: {failure}"[:500]
    delivery.last_status_code = status_code
    if status_code is not None and 200 <= status_code < 300:
        delivery.status = Delivery.Status.DELIVERED
        delivery.delivered_at = timezone.now()
        delivery.last_error = ""
        retry_in = None
    else:
        delivery.last_error = error or f"HTTP {status_code}"
        delivery.status = Delivery.Status.FAILED if final else Delivery.Status.RETRYING
        retry_in = None if final else backoff_s(delivery.attempts)
    delivery.save(
        update_fields=[
            "attempts",
            "last_attempt_at",
            "last_status_code",
            "last_error",
            "status",
            "delivered_at",
        ]
    )
    logger.info(
        "webhook delivery %s (%s) attempt %s: %s",
        delivery.pk,
        delivery.event,
        delivery.attempts,
        delivery.status if not delivery.last_error else delivery.last_error,
    )
    return retry_in


def resend(delivery: Delivery) -> None:
    """Send a delivery again, same id and body (receivers de-duplicate on the id): pending and
    unqueued again, so the queueing after the commit (or the sweep) claims it like a new one.
    A held delivery stays held: it goes out by itself once its boards open."""
    if delivery.status == Delivery.Status.HELD:
        return
    Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.PENDING, queued_at=None)
    enqueue([delivery.pk])


# -- the sweep --------------------------------------------------------------------------------


def stuck_deliveries(now: datetime | None = None, limit: int = 500) -> list[Delivery]:
    """Deliveries whose broker message was lost or never sent: pending and queued (or, never
    queued, recorded) more than ``WEBHOOK_STUCK_AFTER_S`` ago, or retrying with the retry due
    more than that long ago."""
    now = now or timezone.now()
    grace = timedelta(seconds=float(settings.WEBHOOK_STUCK_AFTER_S))
    cutoff = now - grace
    # Last queued, or recorded if never queued: the expression of delivery_pending_idx.
    pending = Delivery.objects.alias(since=Coalesce("queued_at", "created_at")).filter(
        status=Delivery.Status.PENDING, since__lt=cutoff
    )
    found: list[Delivery] = list(pending.order_by("since")[:limit])
    # The shortest backoff narrows the query; each row's own backoff decides.
    earliest = now - grace - timedelta(seconds=backoff_s(1))
    retrying = Delivery.objects.filter(
        status=Delivery.Status.RETRYING, last_attempt_at__lt=earliest
    ).order_by("last_attempt_at")[:limit]
    for delivery in retrying:
        assert delivery.last_attempt_at is not None  # the filter above
        due = delivery.last_attempt_at + timedelta(seconds=backoff_s(delivery.attempts))
        if due + grace < now:
            found.append(delivery)
    return found[:limit]


def _claim_stuck(delivery: Delivery) -> bool:
    """Stamp a stuck delivery queued (pending again) if it is still as the sweep read it; a
    conditional update, so only one of two claimers succeeds."""
    unchanged = Q(pk=delivery.pk, status=delivery.status, attempts=delivery.attempts)
    if delivery.queued_at is None:
        unchanged &= Q(queued_at__isnull=True)
    else:
        unchanged &= Q(queued_at=delivery.queued_at)
    claimed = Delivery.objects.filter(unchanged).update(
        status=Delivery.Status.PENDING, queued_at=timezone.now()
    )
    return claimed == 1


def requeue_stuck(now: datetime | None = None, limit: int = 500) -> int:
    """Queue the stuck deliveries again; how many were queued. A retrying delivery keeps its
    count of retries, so the bound of ``WEBHOOK_MAX_ATTEMPTS`` still holds."""
    deliver = _deliver()
    queued = 0
    for delivery in stuck_deliveries(now, limit):
        retries = 0
        if delivery.status == Delivery.Status.RETRYING:
            retries = min(delivery.attempts, int(settings.WEBHOOK_MAX_ATTEMPTS) - 1)
        # Claimed first (an attempt that runs at once then writes its status after this), and
        # only if no one moved it since it was read: the queueing after its commit, another
        # sweep, an attempt. Those send it, or sent it, themselves.
        if not _claim_stuck(delivery):
            continue
        try:
            # celery-types leaves out apply_async's other message options (``retries`` is one).
            deliver.apply_async((str(delivery.pk),), retries=retries)  # type: ignore[call-arg]
        except Exception:  # the broker is still down: the next sweep tries again
            logger.exception("webhook sweep: could not queue delivery %s", delivery.pk)
            break
        queued += 1
    if queued:
        logger.warning("webhook sweep: %d stuck deliveries queued again", queued)
    return queued


def register_endpoint(*, tournament: Tournament | None, url: str, description="", user=None):
    """A new endpoint, after checking its URL; ``WebhookURLError`` if the site refuses it."""
    network.resolve(url)
    return Endpoint.objects.create(
        tournament=tournament, url=url, description=description, created_by=user
    )
