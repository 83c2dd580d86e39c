"""Webhook deliveries: which endpoints hear an event, the signed body, one attempt, a re-send.

Nothing here may break the work that caused the event: ``dispatch`` runs after the commit,
catches and logs its own failures, and queues one Celery task per delivery with
``transaction.on_commit``.
"""

import json
import logging
import time
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from tournaments.models import Match, MatchResult, Outcome, Stage, Tournament
from webhooks import network, signing
from webhooks.exceptions import WebhookURLError
from webhooks.models import Delivery, Endpoint, Event

logger = logging.getLogger(__name__)

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


def match_payload(match: Match) -> tuple[str, dict[str, Any]]:
    """The event and data for a match whose result was stored, replaced or deleted."""
    stage = match.round.stage
    tournament = stage.tournament
    in_force = match.status == Match.Status.DONE and match.outcome != Outcome.BYE
    results = (
        [
            {"line_id": r.line_id, "points": r.points, "vp": r.vp, "mp": r.mp}
            for r in MatchResult.objects.filter(match=match).order_by("line_id")
        ]
        if in_force
        else []
    )
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
        "results": results,
    }
    return (Event.RESULT_IN_FORCE if in_force else Event.RESULT_WITHDRAWN), data


def stage_payload(stage: Stage) -> dict[str, Any]:
    return {"tournament": _tournament_data(stage.tournament), "stage": _stage_data(stage)}


def tournament_payload(tournament: Tournament) -> dict[str, Any]:
    return {"tournament": _tournament_data(tournament)}


# -- dispatch ---------------------------------------------------------------------------------


def endpoints_for(tournament: Tournament):
    """The active endpoints of the tournament, plus the site-wide ones if it is public."""
    scope = Q(tournament=tournament)
    if tournament.is_public:
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


def create_deliveries(tournament: Tournament, event: str, data: dict[str, Any]) -> list[Delivery]:
    deliveries = []
    for endpoint in endpoints_for(tournament):
        delivery = Delivery(endpoint=endpoint, tournament=tournament, event=event)
        delivery.body = _body(str(delivery.id), event, data)
        deliveries.append(delivery)
    return Delivery.objects.bulk_create(deliveries)


def enqueue(delivery_id: str) -> None:
    """Queue one delivery after the current transaction commits (at once outside one)."""
    from webhooks.tasks import deliver

    def send():
        try:
            deliver.delay(delivery_id)
        except Exception:  # a broker outage: the delivery stays pending, "send again" works
            logger.exception("webhook delivery %s: could not be queued", delivery_id)

    transaction.on_commit(send)


def dispatch(tournament: Tournament, event: str, data: dict[str, Any]) -> list[Delivery]:
    """Record and queue the deliveries of an event; never raises."""
    try:
        deliveries = create_deliveries(tournament, event, data)
    except Exception:
        logger.exception("webhooks: could not record %s for tournament %s", event, tournament.pk)
        return []
    for delivery in deliveries:
        enqueue(str(delivery.pk))
    return deliveries


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
    if delivery is None or delivery.status == Delivery.Status.DELIVERED:
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
    """Send a delivery again, same id and body (receivers de-duplicate on the id)."""
    Delivery.objects.filter(pk=delivery.pk).update(
        status=Delivery.Status.PENDING, queued_at=timezone.now()
    )
    enqueue(str(delivery.pk))


# -- the sweep --------------------------------------------------------------------------------


def stuck_deliveries(now: datetime | None = None, limit: int = 500) -> list[Delivery]:
    """Deliveries whose broker message was lost: pending and queued more than
    ``WEBHOOK_STUCK_AFTER_S`` ago, or retrying with the retry due more than that long ago."""
    now = now or timezone.now()
    grace = timedelta(seconds=float(settings.WEBHOOK_STUCK_AFTER_S))
    pending = Delivery.objects.filter(status=Delivery.Status.PENDING, queued_at__lt=now - grace)
    found = list(pending.order_by("queued_at")[:limit])
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


def requeue_stuck(now: datetime | None = None, limit: int = 500) -> int:
    """Queue the stuck deliveries again; how many were queued. A retrying delivery keeps its
    count of retries, so the bound of ``WEBHOOK_MAX_ATTEMPTS`` still holds."""
    from webhooks.tasks import deliver

    queued = 0
    for delivery in stuck_deliveries(now, limit):
        retries = 0
        if delivery.status == Delivery.Status.RETRYING:
            retries = min(delivery.attempts, int(settings.WEBHOOK_MAX_ATTEMPTS) - 1)
        # Marked first: an attempt that runs at once then writes the final status after this.
        Delivery.objects.filter(pk=delivery.pk, status=delivery.status).update(
            status=Delivery.Status.PENDING, queued_at=timezone.now()
        )
        try:
            deliver.apply_async((str(delivery.pk),), retries=retries)
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
