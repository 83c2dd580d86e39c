"""Tournament API views: reads follow the tournament's visibility; writes call the services."""

import logging

from django.db import transaction
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotAuthenticated, NotFound, PermissionDenied
from rest_framework.response import Response

from tournaments import access
from tournaments.access import Action
from tournaments.api import filters, serializers
from tournaments.api.errors import ApiErrorsMixin
from tournaments.api.permissions import (
    can_create_tournament,
    is_organizer,
    visible_tournaments,
)
from tournaments.exceptions import ForbiddenPairingError, RoundNotStarted
from tournaments.models import ID_MAX, Entry, Group, Line, Match, ResultVersion, Role, Round, Stage
from tournaments.services import duplicate, forbidden, pairing, roles, schedule, standings
from tournaments.services import stages as stage_service

logger = logging.getLogger(__name__)


class ReadOnlyViewSet(ApiErrorsMixin, viewsets.ReadOnlyModelViewSet):
    pass


class TournamentViewSet(ApiErrorsMixin, mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Tournaments; a private one is seen only by the holders of a role in it."""

    serializer_class = serializers.TournamentSerializer
    filterset_class = filters.TournamentFilter

    def get_queryset(self):
        return visible_tournaments(self.request.user).select_related("vp_table").order_by("-id")

    def create(self, request, *args, **kwargs):
        """Who may not create tournaments hears so before their data is checked."""
        if not can_create_tournament(request.user):
            raise PermissionDenied(_("You may not create tournaments."))
        return super().create(request, *args, **kwargs)

    def perform_create(self, serializer):
        with transaction.atomic():
            tournament = serializer.save()
            roles.grant(tournament, self.request.user, Role.ORGANIZER, by=self.request.user)
        logger.info("tournament %s created through the API", tournament.pk)

    @extend_schema(
        request=serializers.AddLineSerializer,
        responses={200: serializers.EntrySerializer(many=True), 201: serializers.EntrySerializer},
    )
    @action(detail=True, methods=["get", "post"])
    def lines(self, request, pk=None):
        """The lines registered in the tournament; an organizer POSTs to add one."""
        tournament = self.get_object()
        if request.method == "GET":
            entries = tournament.entries.select_related("line").prefetch_related(
                "line__members__player"
            )
            page = self.paginate_queryset(entries)
            data = serializers.EntrySerializer(page, many=True).data
            return self.get_paginated_response(data)
        if not is_organizer(request.user, tournament, Action.MANAGE_ENTRIES):
            raise PermissionDenied(_("Only the tournament's organizers may add lines."))
        serializer = serializers.AddLineSerializer(
            data=request.data, context={"tournament": tournament, "request": request}
        )
        serializer.is_valid(raise_exception=True)
        entry = serializer.save()
        return Response(serializers.EntrySerializer(entry).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=serializers.ForbidPairingSerializer,
        responses={
            200: serializers.ForbiddenPairingSerializer(many=True),
            201: serializers.ForbiddenPairingSerializer,
        },
    )
    @action(
        detail=True,
        methods=["get", "post"],
        url_path="forbidden-pairings",
        url_name="forbidden-pairings",
    )
    def forbidden_pairings(self, request, pk=None):
        """The pairs of lines that never meet; an organizer POSTs to forbid one. The note is
        read only by the tournament's staff (``access.can_read_pairing_notes``)."""
        tournament = self.get_object()
        notes = access.can_read_pairing_notes(request.user, tournament)
        if request.method == "GET":
            page = self.paginate_queryset(forbidden.forbidden_pairings_queryset(tournament))
            data = serializers.ForbiddenPairingSerializer(
                page, many=True, context={"notes": notes}
            ).data
            return self.get_paginated_response(data)
        if not is_organizer(request.user, tournament, Action.MANAGE_ENTRIES):
            raise PermissionDenied(_("Only the tournament's organizers may forbid pairings."))
        params = serializers.ForbidPairingSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        line_a, line_b = params.validated_data["lines"]
        created = forbidden.forbid_pairing(
            tournament, line_a, line_b, note=params.validated_data["note"], user=request.user
        )
        data = serializers.ForbiddenPairingSerializer(created, context={"notes": notes}).data
        return Response(data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={204: None})
    @action(
        detail=True,
        methods=["delete"],
        url_path=r"forbidden-pairings/(?P<pairing_id>[0-9]+)",
        url_name="forbidden-pairing",
    )
    def allow_pairing(self, request, pk=None, pairing_id=None):
        """Remove a forbidden pairing: its lines may meet from the next pairing on."""
        tournament = self.get_object()
        if not is_organizer(request.user, tournament, Action.MANAGE_ENTRIES):
            raise PermissionDenied(_("Only the tournament's organizers may allow pairings."))
        try:
            if int(pairing_id) > ID_MAX:
                raise ForbiddenPairingError()
            forbidden.allow_pairing(tournament, int(pairing_id), user=request.user)
        except ForbiddenPairingError as error:
            raise NotFound(str(error)) from error
        return Response(status=status.HTTP_204_NO_CONTENT)


class StageViewSet(
    ApiErrorsMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.ReadOnlyModelViewSet,
):
    """A tournament's stages; its organizers add, change, reorder (``order``) and remove the
    stages not started (``tournaments.services.stages``; a started one answers 409)."""

    serializer_class = serializers.StageSerializer
    filterset_class = filters.StageFilter
    # a stage is changed field by field (PATCH); a whole-stage PUT would also reset its kind
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_queryset(self):
        return (
            Stage.objects.filter(tournament__in=visible_tournaments(self.request.user))
            .prefetch_related("groups")
            .order_by("tournament_id", "order")
        )

    def _check_organizer(self, tournament):
        if not is_organizer(self.request.user, tournament):
            raise PermissionDenied(_("Only the tournament's organizers may change stages."))

    def perform_create(self, serializer):
        data = dict(serializer.validated_data)
        tournament = data.pop("tournament")
        if not visible_tournaments(self.request.user).filter(pk=tournament.pk).exists():
            raise NotFound()
        self._check_organizer(tournament)
        position = data.pop("order", None)
        serializer.instance = stage_service.add_stage(
            tournament, user=self.request.user, position=position, **data
        )

    def update(self, request, *args, **kwargs):
        """Who may not change the stage hears so before their data is checked."""
        self._check_organizer(self.get_object().tournament)
        return super().update(request, *args, **kwargs)

    def perform_update(self, serializer):
        stage = serializer.instance
        self._check_organizer(stage.tournament)
        data = dict(serializer.validated_data)
        if "tournament" in data and data.pop("tournament").pk != stage.tournament_id:
            from rest_framework.exceptions import ValidationError

            raise ValidationError({"tournament": _("A stage cannot move to another tournament.")})
        position = data.pop("order", None)
        with transaction.atomic():
            if data:
                stage = stage_service.update_stage(stage, user=self.request.user, **data)
            if position is not None and position != stage.order:
                stage = stage_service.move_stage(stage, position, user=self.request.user)
        serializer.instance = Stage.objects.prefetch_related("groups").get(pk=stage.pk)

    def perform_destroy(self, instance):
        self._check_organizer(instance.tournament)
        stage_service.remove_stage(instance, user=self.request.user)

    @extend_schema(
        request=serializers.GenerateSerializer,
        responses={201: serializers.RoundSerializer(many=True)},
    )
    @action(detail=True, methods=["post"])
    def generate(self, request, pk=None):
        """Generate the stage: groups then Berger rounds, or the knock-out bracket."""
        stage = self.get_object()
        if not is_organizer(request.user, stage.tournament, Action.RUN_STAGES):
            raise PermissionDenied(_("Only the tournament's organizers may generate rounds."))
        params = serializers.GenerateSerializer(data=request.data)
        params.is_valid(raise_exception=True)
        replace = params.validated_data["replace"]
        if stage.is_paired_by_round:
            rounds = [pairing.pair_next_round(stage, user=request.user)]
            data = serializers.RoundSerializer(rounds, many=True).data
            return Response(data, status=status.HTTP_201_CREATED)
        with transaction.atomic():
            if stage.kind == Stage.Kind.ROUND_ROBIN:
                if params.validated_data.get("groups"):
                    schedule.create_groups(
                        stage, params.validated_data["groups"], user=request.user, replace=replace
                    )
                rounds = schedule.generate_round_robin(stage, user=request.user, replace=replace)
            else:
                seeds = self._seeds(stage, params.validated_data.get("seeds"))
                rounds = schedule.generate_knockout(
                    stage, seeds, user=request.user, replace=replace
                )
        data = serializers.RoundSerializer(rounds, many=True).data
        return Response(data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={201: serializers.RoundSerializer})
    @action(detail=True, methods=["post"])
    def pair(self, request, pk=None):
        """Danish, Swiss, Mitchell: pair the next round from the standings after the last one."""
        stage = self.get_object()
        if not is_organizer(request.user, stage.tournament, Action.RUN_STAGES):
            raise PermissionDenied(_("Only the tournament's organizers may pair rounds."))
        # a Mitchell that cannot keep its clubs apart is refused unless the caller accepts the
        # fewest-meetings seating (``accept_meetings``), as on the desk
        data = request.data if hasattr(request.data, "get") else {}
        accept = str(data.get("accept_meetings", "")).lower() in ("1", "true")
        round_row = pairing.pair_next_round(stage, user=request.user, accept_meetings=accept)
        return Response(serializers.RoundSerializer(round_row).data, status=status.HTTP_201_CREATED)

    @staticmethod
    def _seeds(stage, ids):
        if not ids:
            return schedule.seeded_lines(stage.tournament)
        lines = Line.objects.in_bulk(ids)
        entered = set(
            Entry.objects.filter(tournament=stage.tournament, line_id__in=ids).values_list(
                "line_id", flat=True
            )
        )
        missing = [i for i in ids if i not in lines or i not in entered]
        if missing:
            from rest_framework.exceptions import ValidationError

            raise ValidationError(
                {"seeds": _("Not lines of this tournament: %(ids)s") % {"ids": missing}}
            )
        return [lines[i] for i in ids]

    @extend_schema(responses=serializers.StandingRowSerializer(many=True))
    @action(detail=True, methods=["get"])
    def standings(self, request, pk=None):
        """Standings of every group of the stage (a duplicate table still secret counts as not
        played yet for whoever may not see it, as in the public export)."""
        stage = self.get_object()
        hidden = access.withheld_results(request.user, stage.tournament)
        data = [
            {
                "group": {"id": group.pk, "name": group.name},
                "rows": serializers.StandingRowSerializer(rows, many=True).data,
            }
            for group, rows in standings.stage_standings(stage, leave_out=hidden)
        ]
        return Response(data)


class GroupViewSet(ReadOnlyViewSet):
    serializer_class = serializers.GroupSerializer
    filterset_fields = ["stage"]

    def get_queryset(self):
        return Group.objects.filter(
            stage__tournament__in=visible_tournaments(self.request.user)
        ).order_by("stage_id", "order", "name")

    @extend_schema(responses=serializers.StandingRowSerializer(many=True))
    @action(detail=True, methods=["get"])
    def standings(self, request, pk=None):
        """The group's standings: VP, then the tournament's tie-breaks."""
        group = self.get_object()
        hidden = access.withheld_results(request.user, group.stage.tournament)
        rows = standings.group_standings(group, leave_out=hidden)
        return Response(serializers.StandingRowSerializer(rows, many=True).data)


class RoundViewSet(ReadOnlyViewSet):
    serializer_class = serializers.RoundSerializer
    filterset_class = filters.RoundFilter

    def get_queryset(self):
        return Round.objects.filter(
            stage__tournament__in=visible_tournaments(self.request.user)
        ).order_by("stage_id", "number")

    def _organized_round(self, request):
        round_row = self.get_object()
        if not is_organizer(request.user, round_row.stage.tournament, Action.RUN_STAGES):
            raise PermissionDenied(_("Only the tournament's organizers may pair rounds."))
        return round_row

    @extend_schema(request=None, responses={200: serializers.RoundSerializer})
    @action(detail=True, methods=["post"])
    def keep(self, request, pk=None):
        """A round flagged after a correction of an earlier result: keep it as paired."""
        round_row = pairing.keep_round(self._organized_round(request), user=request.user)
        return Response(serializers.RoundSerializer(round_row).data)

    @extend_schema(request=None, responses={201: serializers.RoundSerializer})
    @action(detail=True, methods=["post"])
    def repair(self, request, pk=None):
        """Pair an unplayed last round again from the corrected standings."""
        round_row = pairing.repair_round(self._organized_round(request), user=request.user)
        return Response(serializers.RoundSerializer(round_row).data, status=status.HTTP_201_CREATED)


class MatchViewSet(ReadOnlyViewSet):
    """Matches with their deal results and per-line results (points, MP, VP)."""

    serializer_class = serializers.MatchSerializer
    filterset_class = filters.MatchFilter

    def get_queryset(self):
        return (
            Match.objects.filter(
                round__stage__tournament__in=visible_tournaments(self.request.user)
            )
            .select_related("round__stage", "home", "away")
            .prefetch_related(
                "results",
                Prefetch(
                    "versions",
                    queryset=ResultVersion.objects.filter(
                        status=ResultVersion.Status.IN_FORCE, sheet__isnull=False
                    )
                    .order_by()
                    .only("id", "match_id", "sheet"),
                    to_attr="versions_in_force",
                ),
            )
            .order_by("round_id", "table_number", "id")
        )

    @extend_schema(request=None, responses={200: serializers.TableBoardsSerializer})
    @action(detail=True, methods=["get"])
    def boards(self, request, pk=None):
        """A duplicate table's boards (full deck order and dealer), once its round has started,
        to whoever may submit its record; nothing of other tables."""
        if not request.user.is_authenticated:
            raise NotAuthenticated()
        match = self.get_object()
        if not access.can_receive_boards(request.user, match):
            raise PermissionDenied(_("Only this table's players and the staff get its boards."))
        boards = duplicate.boards_of_match(match)
        if not boards:
            raise NotFound(_("This match plays no prepared boards."))
        if match.round.starts_at is None:
            raise RoundNotStarted()
        data = {
            "match": match.pk,
            "round": match.round.number,
            "table": match.table_number,
            "boards": [board.as_dict() for board in boards],
        }
        return Response(serializers.TableBoardsSerializer(data).data)


class LineViewSet(ReadOnlyViewSet):
    serializer_class = serializers.LineSerializer
    filterset_class = filters.LineFilter

    def get_queryset(self):
        return (
            access.visible_lines(self.request.user)
            .prefetch_related("members__player")
            .order_by("name", "id")
        )


class PlayerViewSet(ReadOnlyViewSet):
    serializer_class = serializers.PlayerSerializer
    filterset_class = filters.PlayerFilter

    def get_queryset(self):
        return access.visible_players(self.request.user).order_by("name", "id")


def tournament_or_404(user, pk):
    return get_object_or_404(visible_tournaments(user), pk=pk)
