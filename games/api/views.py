"""Submission endpoints: ``POST /api/v1/matches/{id}/records/``, ``POST /api/v1/records/`` (a
batch of records, each naming its match) and ``/api/v1/submissions/``.

The view only authenticates, authorizes, caps the body size and hands the bytes to
``games.services``; every refusal there is a SubmissionError with its own status and code.
"""

import logging
from typing import Any

from django.db.models import Q
from django.utils.translation import gettext as _
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle

from games import services
from games.api.filters import SubmissionFilter
from games.api.schema import RECORD_REF
from games.api.serializers import SubmissionDocumentSerializer, SubmissionSerializer
from games.exceptions import MalformedDocument, RecordTooLarge, SubmissionError
from games.models import Submission
from tournaments import access
from tournaments.access import Action
from tournaments.api.errors import ApiErrorsMixin, error_body
from tournaments.api.permissions import can_submit, is_organizer, visible_tournaments
from tournaments.models import LineMember, Match

logger = logging.getLogger(__name__)

ERROR_BODY: dict[str, Any] = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "field": {"type": "string", "nullable": True},
            },
            "required": ["code", "message", "field"],
        }
    },
}

STAND_BODY = inline_serializer(
    name="StandRequest",
    fields={
        "based_on": serializers.IntegerField(
            required=False,
            allow_null=True,
            help_text="The number of the version in force you decided against (0 or null: none "
            "was in force). Required unless the If-Match header says it.",
        )
    },
)

STALE_BODY = {
    "type": "object",
    "properties": {
        "error": ERROR_BODY["properties"]["error"],
        "current": {"type": "object", "nullable": True},
    },
}

BATCH_BODY = {
    "type": "object",
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "index": {"type": "integer"},
                    "status": {"type": "integer"},
                    "submission": {"$ref": "#/components/schemas/Submission"},
                    "error": ERROR_BODY["properties"]["error"],
                },
                "required": ["index", "status"],
            },
        }
    },
}


def submissions_for(user):
    """Submissions ``user`` may see: their tournaments' (organizer/referee), their own, their
    matches'."""
    qs = Submission.objects.select_related("submitter", "match").with_version_status()
    if not user.is_authenticated:
        return qs.none()
    if user.is_superuser:
        return qs
    staff_of = access.managed_tournaments(user, Action.VIEW_DESK).values("pk")
    own_lines = LineMember.objects.filter(player__user=user).values("line_id")
    return qs.filter(
        Q(submitter=user)
        | Q(match__round__stage__tournament__in=staff_of)
        | Q(match__home__in=own_lines)
        | Q(match__away__in=own_lines)
    )


class MatchRecordsView(ApiErrorsMixin, GenericAPIView):
    """Submit a match record; list the match's submitted versions."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = SubmissionSerializer
    filterset_class = None
    throttle_scope = "record-submission"

    def get_throttles(self):
        """Submitting is throttled per user (``record-submission``); reading the list is not."""
        return [ScopedRateThrottle()] if self.request.method == "POST" else []

    def get_queryset(self):
        return submissions_for(self.request.user)

    def _match(self, match_id):
        match = (
            Match.objects.select_related("round__stage__tournament", "home", "away")
            .filter(pk=match_id)
            .first()
        )
        if match is None:
            raise NotFound(_("No such match."))
        return match

    @extend_schema(
        operation_id="matches_records_create",
        request={"application/json": RECORD_REF},
        responses={
            202: SubmissionSerializer,
            200: OpenApiResponse(SubmissionSerializer, description="The same record again."),
            400: OpenApiResponse(ERROR_BODY, description="Not JSON, or not a readable record."),
            401: OpenApiResponse(ERROR_BODY),
            403: OpenApiResponse(ERROR_BODY),
            404: OpenApiResponse(ERROR_BODY),
            409: OpenApiResponse(ERROR_BODY, description="The match has no two lines yet."),
            413: OpenApiResponse(ERROR_BODY, description="Larger than the limit (1 MiB)."),
            422: OpenApiResponse(
                ERROR_BODY,
                description="A readable record that cannot be this match's: seats, variant, "
                "options, end, knock-out or players differ.",
            ),
        },
        description=(
            "Stores the record exactly as sent and answers 202 with the submission; a worker "
            "verifies it. The same document again answers 200 with the same submission; a new "
            "document makes a new version. Nothing is stored when the answer is 4xx."
        ),
    )
    def post(self, request, match_id):
        match = self._match(match_id)
        user = request.user
        refusal = _match_or_refusal(user, match)
        if refusal is not None:
            raise refusal
        length = request.META.get("CONTENT_LENGTH") or "0"
        if length.isdigit() and int(length) > services.MAX_RECORD_BYTES:
            raise RecordTooLarge(
                _("The record is %(size)s bytes; the limit is %(limit)d bytes.")
                % {"size": length, "limit": services.MAX_RECORD_BYTES}
            )
        document = services.decode_document(request.body)
        result = services.submit_record(match, document, user=user)
        data = SubmissionSerializer(result.submission, context={"request": request}).data
        code = status.HTTP_202_ACCEPTED if result.created else status.HTTP_200_OK
        return Response(data, status=code, headers={"Location": data["url"]})

    @extend_schema(operation_id="matches_records_list", responses=SubmissionSerializer(many=True))
    def get(self, request, match_id):
        match = self._match(match_id)
        tournament_id = match.round.stage.tournament_id
        if not (
            visible_tournaments(request.user).filter(pk=tournament_id).exists()
            or can_submit(request.user, match)
        ):
            raise NotFound(_("No such match."))
        queryset = self.get_queryset().filter(match=match).order_by("-version")
        page = self.paginate_queryset(queryset)
        data = SubmissionSerializer(page, many=True, context={"request": request}).data
        return self.get_paginated_response(data)


def _match_or_refusal(user, match):
    """None when ``user`` may submit ``match``'s record, else the refusal (as the one-record
    endpoint answers it: 403 to whoever sees the tournament, 404 to anyone else)."""
    if match is not None and can_submit(user, match):
        return None
    if match is not None and (
        visible_tournaments(user).filter(pk=match.round.stage.tournament_id).exists()
    ):
        return PermissionDenied(
            _(
                "Only the tournament's organizers, referees and this match's players may "
                "submit its record."
            )
        )
    return NotFound(_("No such match."))


def _refusal_item(index, exc) -> dict:
    if isinstance(exc, SubmissionError):
        return {"index": index, "status": exc.status, "error": exc.as_dict()}
    code = exc.default_code
    return {"index": index, "status": exc.status_code, **error_body(code, exc.detail)}


class RecordBatchView(ApiErrorsMixin, GenericAPIView):
    """Submit many matches' records in one request (an online platform's finished games)."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = SubmissionSerializer
    filterset_class = None
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "record-batch"

    @extend_schema(
        operation_id="records_batch_create",
        request={
            "application/json": {
                "type": "array",
                "items": RECORD_REF,
                "maxItems": services.MAX_BATCH_RECORDS,
            }
        },
        responses={
            207: OpenApiResponse(
                BATCH_BODY,
                description="One outcome per record, in order: its status (202 stored, 200 the "
                "same record again, or the one-record endpoint's 4xx) with the submission or "
                "the error.",
            ),
            400: OpenApiResponse(ERROR_BODY, description="Not a JSON array of records."),
            401: OpenApiResponse(ERROR_BODY),
            413: OpenApiResponse(ERROR_BODY, description="Larger than the batch limit."),
        },
        description=(
            "A JSON array of match records, each naming its match in a `match` field (at most "
            f"{services.MAX_BATCH_RECORDS}). Each record is checked, stored and verified as "
            "`POST /matches/{id}/records/` would; a refused record does not hold back the "
            "others, and nothing of it is stored."
        ),
    )
    def post(self, request):
        length = request.META.get("CONTENT_LENGTH") or "0"
        if length.isdigit() and int(length) > services.MAX_BATCH_BYTES:
            raise RecordTooLarge(
                _("The batch is %(size)d bytes; the limit is %(limit)d bytes.")
                % {"size": int(length), "limit": services.MAX_BATCH_BYTES}
            )
        documents = services.decode_batch(request.body)
        wanted = [services.match_named(document) for document in documents]
        matches = Match.objects.select_related("round__stage__tournament", "home", "away").in_bulk(
            {pk for pk in wanted if pk is not None}
        )
        items: list = [None] * len(documents)
        entries, places = [], []
        for index, (document, pk) in enumerate(zip(documents, wanted, strict=True)):
            refusal = None
            if not isinstance(document, dict):
                refusal = MalformedDocument(
                    _("The record must be a JSON object, not %(kind)s.")
                    % {"kind": type(document).__name__},
                    code="invalid_type",
                    field=f"[{index}]",
                )
            elif pk is None:
                refusal = MalformedDocument(
                    _('Each record of a batch names its match in a "match" field.'),
                    code="no_match",
                    field=f"[{index}].match",
                )
            else:
                refusal = _match_or_refusal(request.user, matches.get(pk))
            if refusal is not None:
                items[index] = _refusal_item(index, refusal)
                continue
            entries.append((matches[pk], document))
            places.append(index)
        # Each record within the one-record endpoint's limit, measured on its JSON text.
        outcomes = services.submit_records(
            entries, user=request.user, max_record_bytes=services.MAX_RECORD_BYTES
        )
        stored = []
        for index, outcome in zip(places, outcomes, strict=True):
            if isinstance(outcome, SubmissionError):
                items[index] = _refusal_item(index, outcome)
            else:
                stored.append((index, outcome))
        # One serializer for them all: its fields are built once, not once per record.
        data = SubmissionSerializer(
            [outcome.submission for _index, outcome in stored],
            many=True,
            context={"request": request},
        ).data
        for (index, outcome), body in zip(stored, data, strict=True):
            code = status.HTTP_202_ACCEPTED if outcome.created else status.HTTP_200_OK
            items[index] = {"index": index, "status": code, "submission": body}
        return Response({"results": items}, status=status.HTTP_207_MULTI_STATUS)


class SubmissionViewSet(ApiErrorsMixin, viewsets.ReadOnlyModelViewSet):
    """Submitted records with their state and verdict; organizers rerun or choose versions."""

    permission_classes = [permissions.IsAuthenticated]
    filterset_class = SubmissionFilter

    def get_queryset(self):
        return submissions_for(self.request.user).order_by("-id")

    def get_serializer_class(self):
        if self.action == "retrieve":
            return SubmissionDocumentSerializer
        return SubmissionSerializer

    def _organizer_only(self, submission):
        """Rerunning and choosing a version decide a disputed record."""
        tournament = submission.match.round.stage.tournament
        if not is_organizer(self.request.user, tournament, Action.DECIDE):
            raise PermissionDenied(_("Only the tournament's organizers and referees may do this."))

    @extend_schema(request=None, responses={202: SubmissionSerializer})
    @action(detail=True, methods=["post"])
    def rerun(self, request, pk=None):
        """Verify the submission again (after an error, or an engine fix)."""
        submission = self.get_object()
        self._organizer_only(submission)
        services.rerun_verification(submission)
        submission.refresh_from_db()
        data = SubmissionSerializer(submission, context={"request": request}).data
        return Response(data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        request=STAND_BODY,
        parameters=[
            OpenApiParameter(
                "If-Match",
                str,
                OpenApiParameter.HEADER,
                description='The version in force you decided against, as `"n"` (`""`: none); '
                "instead of `based_on` in the body.",
            )
        ],
        responses={
            200: SubmissionSerializer,
            400: OpenApiResponse(ERROR_BODY, description="Not verified, or refused."),
            409: OpenApiResponse(
                STALE_BODY, description="Another version came into force: nothing changed."
            ),
            428: OpenApiResponse(
                ERROR_BODY,
                description="Neither `based_on` nor `If-Match` names the version in force you "
                "read (code `version_required`): nothing changed.",
            ),
        },
    )
    @action(detail=True, methods=["post"])
    def stand(self, request, pk=None):
        """Make this verified version the match's result; name the version in force you read
        (`based_on` or `If-Match`), or the answer is 428."""
        submission = self.get_object()
        self._organizer_only(submission)
        # the version in force the organizer saw: a body field or an If-Match header; neither
        # is a 428 (services.choose_standing), never "don't check"
        data = request.data if hasattr(request.data, "get") else {}
        based_on = None
        if "based_on" in data:
            based_on = "" if data["based_on"] is None else data["based_on"]
        elif "If-Match" in request.headers:
            based_on = request.headers["If-Match"].strip().removeprefix("W/").strip('"')
        services.choose_standing(submission, user=request.user, based_on=based_on)
        submission.refresh_from_db()
        return Response(SubmissionSerializer(submission, context={"request": request}).data)
