"""Serializers of the tournament API: what a platform reads, and the organizer's few writes."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tournaments import access, standings_columns
from tournaments import selectors as sel
from tournaments.models import (
    ID_MAX,
    Entry,
    Group,
    Line,
    LineMember,
    Match,
    MatchResult,
    Player,
    Round,
    Stage,
    TieBreak,
    Tournament,
    VPTable,
    rule_options_error,
)
from tournaments.services import entries
from tournaments.services.results import deals_of, deals_of_match


class PlayerSerializer(serializers.ModelSerializer):
    class Meta:
        model = Player
        fields = ["id", "name", "federation_id", "club", "city"]


class LineMemberSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(source="player.id", read_only=True)
    name = serializers.CharField(source="player.name", read_only=True)

    class Meta:
        model = LineMember
        fields = ["id", "name", "position"]


class LineSerializer(serializers.ModelSerializer):
    players = LineMemberSerializer(source="members", many=True, read_only=True)

    class Meta:
        model = Line
        # the club or municipality a line represents is public as its players' clubs are
        fields = ["id", "name", "club", "players"]
        read_only_fields = ["club"]


class PairedLineSerializer(serializers.ModelSerializer):
    class Meta:
        model = Line
        fields = ["id", "name"]


class ForbiddenPairingSerializer(serializers.Serializer):
    """Two lines of a tournament that never meet. The organizer's ``note`` is given only to who
    may read it (``access.can_read_pairing_notes``: the context's ``notes``); for anyone else
    the field is absent."""

    id = serializers.IntegerField(read_only=True)
    lines = serializers.SerializerMethodField()
    note = serializers.CharField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)

    @extend_schema_field(PairedLineSerializer(many=True))
    def get_lines(self, pairing):
        return PairedLineSerializer([pairing.line_a, pairing.line_b], many=True).data

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if not self.context.get("notes"):
            data.pop("note", None)
        return data


class ForbidPairingSerializer(serializers.Serializer):
    """Forbid two lines registered in the tournament to meet (from the next pairing on)."""

    lines = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=ID_MAX),
        min_length=2,
        max_length=2,
        help_text=_("The ids of the two lines that must never meet."),
    )
    note = serializers.CharField(
        max_length=200,
        required=False,
        allow_blank=True,
        default="",
        help_text=_("Why (for the organizers only: never shown to the public or exported)."),
    )


class NewPlayerSerializer(serializers.Serializer):
    """A player named in a new line: an existing id, or a name (and federation id) to create."""

    id = serializers.IntegerField(required=False)
    name = serializers.CharField(max_length=120, required=False)
    federation_id = serializers.CharField(max_length=40, required=False, allow_blank=True)
    club = serializers.CharField(max_length=120, required=False, allow_blank=True)
    city = serializers.CharField(max_length=80, required=False, allow_blank=True)

    def validate(self, attrs):
        if "id" not in attrs and not attrs.get("name"):
            raise serializers.ValidationError(_("Give a player's id or name."))
        user = _caller(self)
        # a player the caller may not see is no player at all (the same answer as a wrong id)
        if "id" in attrs and not access.visible_players(user).filter(pk=attrs["id"]).exists():
            raise serializers.ValidationError({"id": _("No such player.")})
        fed = attrs.get("federation_id") or ""
        # A federation id names one person (unique): it is used only for a player the caller
        # can see. Any other, unknown or a hidden player's, gets the same refusal, so that the
        # answer tells nothing about players the caller cannot see; a
        # superuser sees every player, so an unknown id makes a new one.
        if "id" not in attrs and fed:
            visible = access.visible_players(user).filter(federation_id=fed).exists()
            if not visible and not access.can_manage_site(user):
                raise serializers.ValidationError(
                    {"federation_id": _("This federation id cannot be used here.")}
                )
        return attrs


def _caller(serializer):
    request = serializer.context.get("request")
    return getattr(request, "user", None)


class AddLineSerializer(serializers.Serializer):
    """Register a line in a tournament: an existing line, or a new one from its players."""

    line = serializers.IntegerField(required=False, help_text=_("An existing line's id."))
    name = serializers.CharField(max_length=160, required=False)
    club = serializers.CharField(
        max_length=120,
        required=False,
        allow_blank=True,
        help_text=_("The club or municipality a new line represents (kept apart by pairing)."),
    )
    players = NewPlayerSerializer(many=True, required=False)
    seed = serializers.IntegerField(
        required=False, min_value=1, max_value=entries.MAX_SEED, allow_null=True
    )

    def validate(self, attrs):
        tournament = self.context["tournament"]
        if "line" in attrs:
            if not access.visible_lines(_caller(self)).filter(pk=attrs["line"]).exists():
                raise serializers.ValidationError({"line": _("No such line.")})
            if Entry.objects.filter(tournament=tournament, line_id=attrs["line"]).exists():
                raise serializers.ValidationError({"line": _("This line is already registered.")})
            return attrs
        players = attrs.get("players") or []
        if len(players) != tournament.seats_per_line:
            raise serializers.ValidationError(
                {
                    "players": _("A line of this tournament has %(n)d players.")
                    % {"n": tournament.seats_per_line}
                }
            )
        return attrs

    @transaction.atomic
    def create(self, validated_data):
        tournament = self.context["tournament"]
        if "line" in validated_data:
            line = Line.objects.get(pk=validated_data["line"])
        else:
            players = []
            for data in validated_data["players"]:
                if "id" in data:
                    players.append(Player.objects.get(pk=data["id"]))
                    continue
                fed = data.get("federation_id") or ""
                player = Player.objects.filter(federation_id=fed).first() if fed else None
                if player is None:
                    player = Player.objects.create(
                        name=data["name"],
                        federation_id=fed,
                        club=data.get("club", ""),
                        city=data.get("city", ""),
                    )
                players.append(player)
            if len({p.pk for p in players}) != len(players):
                raise serializers.ValidationError({"players": _("A player appears twice.")})
            name = validated_data.get("name") or " / ".join(p.name for p in players)
            line = Line.objects.create(
                name=name, club=" ".join((validated_data.get("club") or "").split())
            )
            LineMember.objects.bulk_create(
                LineMember(line=line, player=p, position=i) for i, p in enumerate(players)
            )
        request = self.context.get("request")
        return entries.register_line(
            tournament,
            line,
            seed=validated_data.get("seed"),
            user=getattr(request, "user", None),
        )


class EntrySerializer(serializers.ModelSerializer):
    line = LineSerializer(read_only=True)

    class Meta:
        model = Entry
        fields = ["id", "tournament", "line", "seed", "withdrawn", "checked_in"]
        read_only_fields = ["checked_in"]


class SafeSlugRelatedField(serializers.SlugRelatedField):
    """A slug lookup that refuses NUL characters (PostgreSQL cannot compare them) as unknown."""

    def to_internal_value(self, data):
        if isinstance(data, str) and "\x00" in data:
            self.fail("does_not_exist", slug_name=self.slug_field, value=data.replace("\x00", ""))
        return super().to_internal_value(data)


class TournamentSerializer(serializers.ModelSerializer):
    vp_table = SafeSlugRelatedField(slug_field="slug", queryset=VPTable.objects.all())
    seats = serializers.IntegerField(read_only=True)

    class Meta:
        model = Tournament
        fields = [
            "id",
            "slug",
            "name",
            "start_date",
            "end_date",
            "venue",
            "status",
            "is_public",
            "variant",
            "options",
            "deck_style",
            "seats_per_line",
            "seats",
            "end_rule",
            "end_value",
            "time_limit_s",
            "vp_table",
            "tiebreaks",
        ]
        read_only_fields = ["status"]

    def validate_options(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError(_("Options must be an object."))
        error = rule_options_error(value)
        if error:
            raise serializers.ValidationError(error)
        return value

    def validate_tiebreaks(self, value):
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            raise serializers.ValidationError(_("Tie-breaks must be a list of names."))
        return value

    def validate(self, attrs):
        instance = Tournament(**{k: v for k, v in attrs.items()})
        try:
            instance.clean()
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from exc
        return attrs


class GroupSerializer(serializers.ModelSerializer):
    class Meta:
        model = Group
        fields = ["id", "stage", "name", "order"]


class StageSerializer(serializers.ModelSerializer):
    groups = GroupSerializer(many=True, read_only=True)

    class Meta:
        model = Stage
        fields = [
            "id",
            "tournament",
            "order",
            "name",
            "kind",
            "status",
            "double_round_robin",
            "third_place_match",
            "rounds_planned",
            "first_round",
            "bye_scoring",
            "bye_vp",
            "arrow_switch",
            "keep_clubs_apart",
            "late_entry_until_round",
            "carry_over",
            "advance_count",
            "category_places",
            "stage_tiebreaks",
            "groups",
        ]
        read_only_fields = ["status"]
        extra_kwargs = {
            "order": {
                "required": False,
                "help_text": _(
                    "Place in the day, 1 first (default: last); changing it moves "
                    "the stage among those not started."
                ),
            },
            "name": {"required": False},
        }
        # the order is kept gap-free by tournaments.services.stages, not by a uniqueness check
        validators: list = []

    stage_tiebreaks = serializers.ListField(
        child=serializers.ChoiceField(choices=TieBreak.choices),
        required=False,
        max_length=len(TieBreak.choices),
        help_text=_("Danish, Swiss, Mitchell: this stage's tie-breaks (empty: the tournament's)."),
    )

    def validate(self, attrs):
        if attrs.get("bye_scoring") == Stage.ByeScoring.SET_VP and attrs.get("bye_vp") is None:
            raise serializers.ValidationError({"bye_vp": _("Give the VP score of a bye.")})
        return attrs


class GenerateSerializer(serializers.Serializer):
    """Generate a stage: groups and round-robin rounds, or a knock-out bracket."""

    groups = serializers.IntegerField(
        required=False, min_value=1, help_text=_("Round robin: make this many groups first.")
    )
    seeds = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=ID_MAX),
        required=False,
        help_text=_("Knock-out: line ids, seed 1 first (default: the tournament's seeds)."),
    )
    replace = serializers.BooleanField(default=False)


class RoundSerializer(serializers.ModelSerializer):
    class Meta:
        model = Round
        fields = ["id", "stage", "number", "name", "starts_at", "needs_review"]
        read_only_fields = ["needs_review"]


class DealResultSerializer(serializers.Serializer):
    """One line's part of one deal of the result in force (home first, then away)."""

    number = serializers.IntegerField(help_text=_("0-based, as in records."))
    line = serializers.IntegerField()
    points = serializers.IntegerField()
    breakdown = serializers.DictField(child=serializers.IntegerField())
    is_tiebreak = serializers.BooleanField()
    is_penalty = serializers.BooleanField()


class MatchResultSerializer(serializers.ModelSerializer):
    class Meta:
        model = MatchResult
        fields = ["line", "points", "mp", "vp", "won", "drawn"]


class LineRefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Line
        fields = ["id", "name"]


class MatchSerializer(serializers.ModelSerializer):
    home = LineRefSerializer(read_only=True)
    away = LineRefSerializer(read_only=True)
    tournament = serializers.IntegerField(source="round.stage.tournament_id", read_only=True)
    stage = serializers.IntegerField(source="round.stage_id", read_only=True)
    results = serializers.SerializerMethodField()
    deals = serializers.SerializerMethodField()

    class Meta:
        model = Match
        fields = [
            "id",
            "tournament",
            "stage",
            "round",
            "group",
            "table_number",
            "home",
            "away",
            "status",
            "outcome",
            "offender",
            "winner",
            "next_match",
            "next_slot",
            "is_third_place",
            "results",
            "deals",
            "updated_at",
        ]

    def _withheld(self, match) -> bool:
        """Whether the caller may not read this table's result yet
        (``access.withheld_results``), asked once per tournament per answer."""
        stage = match.round.stage
        if stage.kind != Stage.Kind.DUPLICATE or stage.status == Stage.Status.CLOSED:
            return False
        known = self.context.setdefault("withheld_results", {})
        if stage.tournament_id not in known:
            request = self.context.get("request")
            known[stage.tournament_id] = access.withheld_results(
                getattr(request, "user", None), stage.tournament
            )
        return match.pk in known[stage.tournament_id]

    def to_representation(self, match):
        data = super().to_representation(match)
        if self._withheld(match):
            # a duplicate table holding a board still secret: shown as not played yet
            data.update(
                status=Match.Status.SCHEDULED,
                outcome=None,
                offender=None,
                winner=None,
                results=[],
                deals=[],
            )
        return data

    @extend_schema_field(MatchResultSerializer(many=True))
    def get_results(self, match):
        """Each line's result, the home line's first (prefetched by the view)."""
        rows = sorted(match.results.all(), key=lambda row: row.line_id != match.home_id)
        return MatchResultSerializer(rows, many=True).data

    @extend_schema_field(DealResultSerializer(many=True))
    def get_deals(self, match):
        """The deals of the version in force: prefetched by the view as ``versions_in_force``,
        or read here."""
        if hasattr(match, "versions_in_force"):
            deals = deals_of(match.versions_in_force[0].sheet) if match.versions_in_force else []
        else:
            deals = deals_of_match(match)
        lines = (match.home_id, match.away_id)
        # a duplicate table's deals on boards other tables have still to play stay out
        secret = sel.secret_deal_numbers(match)
        return [
            {
                "number": deal.number,
                "line": lines[side],
                "points": deal.points[side],
                "breakdown": deal.breakdown[side],
                "is_tiebreak": deal.is_tiebreak,
                "is_penalty": deal.is_penalty,
            }
            for deal in deals
            if deal.number not in secret
            for side in (0, 1)
        ]


class TwoPlacesField(serializers.FloatField):
    """A score against the field (an exact fraction) to two decimals."""

    def to_representation(self, value):
        return standings_columns.plain(value)


class StandingRowSerializer(serializers.Serializer):
    """A standings row: rank, line, the totals of ``standings_columns`` in their order, then the
    tournament's tie-break values."""

    rank = serializers.IntegerField()
    shared_rank = serializers.BooleanField()
    line = LineRefSerializer()
    tiebreaks = serializers.SerializerMethodField()

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        tiebreaks = fields.pop("tiebreaks")
        for column in standings_columns.COLUMNS:
            help_text = str(column.label)
            if column.kind == "text":
                fields[column.key] = serializers.CharField(help_text=help_text)
            elif column.kind == "decimal":
                fields[column.key] = TwoPlacesField(help_text=help_text, allow_null=True)
            else:
                fields[column.key] = serializers.IntegerField(help_text=help_text)
        fields["tiebreaks"] = tiebreaks
        return fields

    def get_tiebreaks(self, row) -> dict:
        return {str(name): _jsonable(value) for name, value in row.tiebreaks}


def _jsonable(value):
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


class BoardSerializer(serializers.Serializer):
    """One prepared deal (``scopa.Board.as_dict``): the deck in the order it is dealt, card
    codes as in a ``scopa-match/1`` record, and the dealer's seat."""

    number = serializers.IntegerField()
    variant = serializers.CharField()
    seats = serializers.IntegerField()
    dealer = serializers.IntegerField()
    deck = serializers.ListField(child=serializers.CharField())


class TableBoardsSerializer(serializers.Serializer):
    """The boards one duplicate table plays in its round, in order: deal i of its record is
    board i of this list."""

    match = serializers.IntegerField()
    round = serializers.IntegerField()
    table = serializers.IntegerField(allow_null=True)
    boards = BoardSerializer(many=True)
