"""The tournament domain: players, lines, tournaments, stages, groups, rounds, matches, results.

The algorithms that fill these tables (schedules, brackets, VP conversion, standings) live in
``tournaments.algorithms`` as plain functions; ``tournaments.services`` is the thin layer that
reads and writes these models for them.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils.functional import lazy
from django.utils.translation import get_language, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from scopa.variants import VARIANTS
from tournaments.algorithms.standings import TIEBREAKS
from tournaments.algorithms.vp import OUTCOME_LABELS
from tournaments.sources import ResultSource

logger = logging.getLogger(__name__)

ID_MAX = 2**63 - 1
"""The largest id a row can have (``DEFAULT_AUTO_FIELD`` is a 64-bit signed integer): a bigger
number names no row, and is refused before it reaches a query, which would fail on it."""


def engine_lang() -> str:
    """The rules engine's language for the active Django language (Italian unless English)."""
    return "en" if (get_language() or "").startswith("en") else "it"


def _engine_label(label):
    """An engine ``Label`` (Italian and English) as a lazy string in the active language."""

    def text():
        return label(engine_lang())

    return lazy(text, str)()


def _member(value):
    return value.upper().replace("-", "_")


# django-stubs types the class syntax of Choices only, not the functional API used here.
Variant = models.TextChoices(  # type: ignore[call-overload]
    "Variant",
    [(_member(key), (key, _engine_label(v.name))) for key, v in VARIANTS.items()],
)
Variant.__doc__ = "The variants of ``scopa.variants.VARIANTS``, as records name them."


class DeckStyle(models.TextChoices):
    NAPOLETANE = "napoletane", _("Napoletane")
    PIACENTINE = "piacentine", _("Piacentine")
    SICILIANE = "siciliane", _("Siciliane")
    PIEMONTESI = "piemontesi", _("Piemontesi")
    TREVISANE = "trevisane", _("Trevisane")
    SPAGNOLE = "spagnole", _("Spagnole")
    FRANCESI = "francesi", _("Francesi")


class EndRule(models.TextChoices):
    TARGET = "target", _("Target points")
    DEALS = "deals", _("Number of deals")


# django-stubs types the class syntax of Choices only, not the functional API used here.
TieBreak = models.TextChoices(  # type: ignore[call-overload]
    "TieBreak",
    [(_member(key), (str(key), _(metric.label))) for key, metric in TIEBREAKS.items()],
)
TieBreak.__doc__ = "Standings criteria after VP: ``tournaments.algorithms.standings.TIEBREAKS``."


DEFAULT_TIEBREAKS = [
    TieBreak.MP,
    TieBreak.HEAD_TO_HEAD,
    TieBreak.POINTS_SCORED,
    TieBreak.MATCHES_WON,
    TieBreak.LOTS,
]


def default_tiebreaks():
    return [str(t) for t in DEFAULT_TIEBREAKS]


class Player(models.Model):
    name = models.CharField(_("name"), max_length=120)
    federation_id = models.CharField(
        _("federation id"),
        max_length=40,
        blank=True,
        help_text=_("Unique when given; used by the federation export."),
    )
    club = models.CharField(_("club"), max_length=120, blank=True)
    city = models.CharField(_("city"), max_length=80, blank=True)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        verbose_name=_("user account"),
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="player",
        help_text=_("Lets the player submit records for their own matches."),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("player")
        verbose_name_plural = _("players")
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["federation_id"],
                condition=~Q(federation_id=""),
                name="unique_player_federation_id",
            )
        ]

    def __str__(self):
        return self.name


class Line(models.Model):
    """One side of a match: a single player, a pair or a trio playing as one."""

    name = models.CharField(_("display name"), max_length=160)
    players: models.ManyToManyField[Player, LineMember] = models.ManyToManyField(
        Player, through="LineMember", related_name="lines", verbose_name=_("players")
    )
    club = models.CharField(
        _("club or municipality"),
        max_length=120,
        blank=True,
        help_text=_(
            "The club or municipality the line represents: stages that keep clubs apart do not "
            "pair two lines of the same one."
        ),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("line")
        verbose_name_plural = _("lines")
        ordering = ["name", "id"]

    def __str__(self):
        return self.name


class LineMember(models.Model):
    line = models.ForeignKey(
        Line,
        on_delete=models.CASCADE,
        related_name="members",
        verbose_name=_("line"),
        db_index=False,  # unique_line_player (line, …) leads with it
    )
    player = models.ForeignKey(
        Player, on_delete=models.PROTECT, related_name="memberships", verbose_name=_("player")
    )
    position = models.PositiveSmallIntegerField(
        _("position"), default=0, help_text=_("Order within the line: 0, 1, 2.")
    )

    class Meta:
        verbose_name = _("line member")
        verbose_name_plural = _("line members")
        ordering = ["line", "position"]
        constraints = [
            models.UniqueConstraint(fields=["line", "player"], name="unique_line_player"),
            models.UniqueConstraint(fields=["line", "position"], name="unique_line_position"),
            models.CheckConstraint(condition=Q(position__lte=2), name="line_at_most_three"),
        ]

    def __str__(self):
        return f"{self.line}: {self.player}"


class VPTable(models.Model):
    """A scale from a match's point difference (MP) to Victory Points; rows are data."""

    class Kind(models.TextChoices):
        MARGIN = "margin", _("Point difference to VP")
        WIN_DRAW_LOSS = "win_draw_loss", _("Win / draw / loss")

    slug = models.SlugField(_("slug"), unique=True)
    name = models.CharField(_("name"), max_length=120)
    kind = models.CharField(_("kind"), max_length=20, choices=Kind.choices, default=Kind.MARGIN)
    target_points = models.PositiveSmallIntegerField(
        _("target points"), null=True, blank=True, help_text=_("For a match played to T points.")
    )
    deals_min = models.PositiveSmallIntegerField(_("from deals"), null=True, blank=True)
    deals_max = models.PositiveSmallIntegerField(_("to deals"), null=True, blank=True)
    win_vp = models.PositiveSmallIntegerField(_("VP for a win"), default=20)
    draw_vp = models.PositiveSmallIntegerField(_("VP for a draw"), default=10)
    loss_vp = models.PositiveSmallIntegerField(_("VP for a loss"), default=0)
    timeout_min_vp = models.PositiveSmallIntegerField(
        _("minimum VP after an opponent's timeout"), default=14
    )

    class Meta:
        verbose_name = _("VP table")
        verbose_name_plural = _("VP tables")
        ordering = ["kind", "target_points", "deals_min", "slug"]

    def __str__(self):
        return self.name


class VPTableRow(models.Model):
    table = models.ForeignKey(
        VPTable,
        on_delete=models.CASCADE,
        related_name="rows",
        verbose_name=_("table"),
        db_index=False,  # unique_vp_row_start (table, …) leads with it
    )
    vp_winner = models.PositiveSmallIntegerField(_("winner's VP"))
    vp_loser = models.PositiveSmallIntegerField(_("loser's VP"))
    mp_from = models.PositiveSmallIntegerField(_("from MP"))
    mp_to = models.PositiveSmallIntegerField(
        _("to MP"), null=True, blank=True, help_text=_("Empty means 'or more'.")
    )

    class Meta:
        verbose_name = _("VP table row")
        verbose_name_plural = _("VP table rows")
        ordering = ["table", "mp_from"]
        constraints = [
            models.UniqueConstraint(fields=["table", "mp_from"], name="unique_vp_row_start"),
        ]

    def __str__(self):
        upper = "+" if self.mp_to is None else self.mp_to
        return f"{self.vp_winner}-{self.vp_loser}: {self.mp_from}–{upper}"


class Tournament(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        RUNNING = "running", _("Running")
        FINISHED = "finished", _("Finished")

    slug = models.SlugField(_("slug"), unique=True)
    name = models.CharField(_("name"), max_length=200)
    start_date = models.DateField(_("start date"))
    end_date = models.DateField(_("end date"), null=True, blank=True)
    venue = models.CharField(_("venue"), max_length=200, blank=True)
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.DRAFT
    )
    is_public = models.BooleanField(_("public"), default=True)

    variant = models.CharField(
        _("variant"), max_length=20, choices=Variant.choices, default=Variant.SCOPA
    )
    options = models.JSONField(
        _("rule options"),
        default=dict,
        blank=True,
        help_text=_("Rule options of the game; a missing option takes the variant's default."),
    )
    deck_style = models.CharField(
        _("deck style"), max_length=20, choices=DeckStyle.choices, default=DeckStyle.NAPOLETANE
    )
    seats_per_line = models.PositiveSmallIntegerField(
        _("players per line"),
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(3)],
    )
    end_rule = models.CharField(
        _("match end"), max_length=10, choices=EndRule.choices, default=EndRule.TARGET
    )
    end_value = models.PositiveSmallIntegerField(
        _("target points or number of deals"),
        default=11,
        validators=[MinValueValidator(1)],
    )
    time_limit_s = models.PositiveIntegerField(_("time limit (seconds)"), null=True, blank=True)
    countersign_minutes = models.PositiveSmallIntegerField(
        _("time to countersign (minutes)"),
        default=10,
        help_text=_(
            "A result the players report from their phones that the other side neither accepts "
            "nor disputes within this time goes to the referee."
        ),
    )
    vp_table = models.ForeignKey(
        VPTable,
        on_delete=models.PROTECT,
        related_name="tournaments",
        verbose_name=_("VP table"),
    )
    tiebreaks = models.JSONField(
        _("tie-breaks"),
        default=default_tiebreaks,
        help_text=_("Ordered standings criteria after VP."),
    )
    lots_seed = models.BigIntegerField(
        _("drawing-of-lots seed"),
        default=0,
        help_text=_("Stored so a ranking decided by lots can be reproduced."),
    )
    rated_when_private = models.BooleanField(
        _("rated while private"),
        default=False,
        help_text=_(
            "Whether this tournament's matches count toward ratings while it is private. "
            "A public tournament's matches always count."
        ),
    )
    lines: models.ManyToManyField[Line, Entry] = models.ManyToManyField(
        Line, through="Entry", related_name="tournaments", verbose_name=_("lines")
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name = _("tournament")
        verbose_name_plural = _("tournaments")
        ordering = ["-start_date", "name"]

    def __str__(self):
        return self.name

    def clean(self):
        if not isinstance(self.tiebreaks, list) or not all(
            isinstance(t, str) for t in self.tiebreaks
        ):
            raise ValidationError({"tiebreaks": _("Tie-breaks must be a list of names.")})
        valid = {str(t) for t in TieBreak}
        unknown = [t for t in self.tiebreaks if t not in valid]
        if unknown:
            raise ValidationError(
                {"tiebreaks": _("Unknown tie-breaks: %(names)s") % {"names": ", ".join(unknown)}}
            )
        options_error = rule_options_error(self.options)
        if options_error:
            raise ValidationError({"options": options_error})
        if self.end_date and self.end_date < self.start_date:
            raise ValidationError({"end_date": _("The tournament cannot end before it starts.")})

    @property
    def seats(self):
        """Seats at a table: two lines of ``seats_per_line`` players each."""
        return 2 * self.seats_per_line

    @property
    def organizers(self):
        """The users holding the organizer role (``TournamentRole``); ``.add(user)`` grants it.

        Kept so code written against the former ``organizers`` field keeps working; access
        decisions go through ``tournaments.access``, never through this list.
        """
        return RoleHolders(self, Role.ORGANIZER)

    @property
    def referees(self):
        """The users holding the referee role; see ``organizers``."""
        return RoleHolders(self, Role.REFEREE)

    def match_end(self):
        """The ``end`` object of a ``scopa-match/1`` record for this tournament's matches."""
        end = {str(self.end_rule): self.end_value}
        if self.time_limit_s:
            end["time_limit_s"] = self.time_limit_s
        return end


def rule_options_error(options):
    """Why ``options`` is not a set of the variant's rule options (scopa/variants.py), as a
    sentence, or ``None``.

    Checked here, not only in the API, so the admin cannot store options that the desk, the
    pages and the record checks would then trip over.
    """
    import msgspec

    from scopa.record import OptionsInput

    if options in (None, ""):
        return None
    if not isinstance(options, dict):
        return _('Rule options must be an object: {"name": value}.')
    known = set(OptionsInput.__struct_fields__)
    unknown = sorted(str(name) for name in options if name not in known)
    if unknown:
        return _("Unknown rule options: %(names)s.") % {"names": ", ".join(unknown)}
    wrong = []
    for name, value in options.items():
        try:
            msgspec.convert({name: value}, OptionsInput)
        except msgspec.ValidationError:
            wrong.append(name)
    if wrong:
        return _("These rule options have a value they cannot take: %(names)s.") % {
            "names": ", ".join(sorted(wrong))
        }
    return None


class Category(models.TextChoices):
    """The built-in categories a line plays in (the one registry of them); an organizer may also
    name free ones (a club, a municipality), stored as typed. Only the category is stored, never
    a birth date: an over-63 line is one the organizer says is over 63."""

    MEN = "men", _("Men")
    WOMEN = "women", _("Women")
    MIXED = "mixed", _("Mixed")
    OVER_63 = "over-63", _("Over 63")


CATEGORY_ALIASES = {
    "uomini": Category.MEN,
    "maschi": Category.MEN,
    "donne": Category.WOMEN,
    "misto": Category.MIXED,
    "miste": Category.MIXED,
    "over63": Category.OVER_63,
    "over 63": Category.OVER_63,
}
"""Other words organizers use for the built-in categories (their labels are recognised too)."""


def normalize_category(text: str) -> str:
    """A category as typed (the desk's form, a CSV cell): a built-in one by its value or its
    Italian or English label, in any case, is stored as its value; any other text is a free
    category, stored as typed (trimmed, spaces collapsed)."""
    from django.utils import translation

    text = " ".join((text or "").split())[:60]
    wanted = text.casefold()
    if wanted in CATEGORY_ALIASES:
        return CATEGORY_ALIASES[wanted].value
    for choice in Category:
        names = {choice.value}
        for lang in ("it", "en"):
            with translation.override(lang):
                names.add(str(choice.label).casefold())
        if wanted in names:
            return choice.value
    return text


def category_label(value: str) -> str:
    """How a stored category reads: a built-in one translated, a free one as typed."""
    if value in Category.values:
        return str(Category(value).label)
    return value


class Entry(models.Model):
    """A line registered in a tournament, with its seed and the category it plays in."""

    tournament = models.ForeignKey(
        Tournament,
        on_delete=models.CASCADE,
        related_name="entries",
        verbose_name=_("tournament"),
        db_index=False,  # unique_entry (tournament, …) leads with it
    )
    line = models.ForeignKey(
        Line, on_delete=models.PROTECT, related_name="entries", verbose_name=_("line")
    )
    seed = models.PositiveIntegerField(_("seed"), null=True, blank=True)
    withdrawn = models.BooleanField(_("withdrawn"), default=False)
    checked_in = models.BooleanField(
        _("checked in"),
        default=False,
        help_text=_("Present at the check-in before round 1 of a Danish, Swiss or Mitchell stage."),
    )
    category = models.CharField(
        _("category"),
        max_length=60,
        blank=True,
        help_text=_(
            "Men, women, mixed, over 63, or a category you name (a club, a municipality); "
            "empty: the overall ranking only."
        ),
    )

    class Meta:
        verbose_name = _("entry")
        verbose_name_plural = _("entries")
        ordering = ["tournament", "seed", "id"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "line"], name="unique_entry"),
        ]

    def __str__(self):
        return f"{self.tournament}: {self.line}"

    @property
    def category_display(self) -> str:
        return category_label(self.category)


class Stage(models.Model):
    class Kind(models.TextChoices):
        ROUND_ROBIN = "round_robin", _("Round-robin groups")
        KNOCKOUT = "knockout", _("Knock-out bracket")
        DANISH = "danish", _("Danish rounds")
        SWISS = "swiss", _("Swiss rounds (FIDE Dutch)")
        MITCHELL = "mitchell", _("Mitchell movement (pairs)")
        DUPLICATE = "duplicate", _("Duplicate (the same deals at every table)")

    class FirstRound(models.TextChoices):
        SEED = "seed", _("By seed")
        RANDOM = "random", _("At random")

    class ByeScoring(models.TextChoices):
        FORFEIT_WIN = "forfeit_win", _("As a win by forfeit")
        SET_VP = "set_vp", _("A set VP score")

    class Status(models.TextChoices):
        PENDING = "pending", _("Pending")
        RUNNING = "running", _("Running")
        CLOSED = "closed", _("Closed")

    tournament = models.ForeignKey(
        Tournament,
        on_delete=models.CASCADE,
        related_name="stages",
        verbose_name=_("tournament"),
        db_index=False,  # unique_stage_order (tournament, …) leads with it
    )
    order = models.PositiveSmallIntegerField(_("order"))
    name = models.CharField(_("name"), max_length=120)
    kind = models.CharField(_("kind"), max_length=20, choices=Kind.choices)
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.PENDING
    )
    double_round_robin = models.BooleanField(_("double round robin"), default=False)
    third_place_match = models.BooleanField(_("third-place match"), default=False)
    # Danish, Swiss and Mitchell stages: paired round by round (tournaments.services.pairing)
    rounds_planned = models.PositiveSmallIntegerField(
        _("number of rounds"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1), MaxValueValidator(99)],
        help_text=_("Danish, Swiss and Mitchell stages: how many rounds to pair."),
    )
    first_round = models.CharField(
        _("round 1 order"), max_length=10, choices=FirstRound.choices, default=FirstRound.SEED
    )
    draw_seed = models.BigIntegerField(
        _("draw seed"),
        default=0,
        help_text=_("Stored so a random round 1 can be reproduced."),
    )
    bye_scoring = models.CharField(
        _("bye scored"),
        max_length=12,
        choices=ByeScoring.choices,
        default=ByeScoring.FORFEIT_WIN,
    )
    bye_vp = models.PositiveSmallIntegerField(
        _("VP for a bye"),
        null=True,
        blank=True,
        help_text=_("With a set VP score; also what a late entry gets for each missed round."),
    )
    arrow_switch = models.BooleanField(
        _("arrow switch"),
        default=False,
        help_text=_("Mitchell: in the last round East-West lines play as home."),
    )
    keep_clubs_apart = models.BooleanField(
        _("keep clubs apart"),
        default=False,
        help_text=_(
            "Mitchell: the lines of one club or municipality sit in the same direction, so "
            "they never meet. Danish: two lines of one club meet only when no other pairing "
            "of the round is possible. Swiss: they meet only when no round of the Dutch "
            "rules keeps every club apart."
        ),
    )
    late_entry_until_round = models.PositiveSmallIntegerField(
        _("late entries up to round"),
        null=True,
        blank=True,
        help_text=_("Lines entered late join the pairing up to this round; empty: none."),
    )
    carry_over = models.BooleanField(
        _("carry over earlier rounds"),
        default=True,
        help_text=_(
            "Danish and Swiss: the standings that pair the rounds include the earlier Danish, "
            "Swiss and Mitchell stages of the tournament."
        ),
    )
    advance_count = models.PositiveSmallIntegerField(
        _("lines going on"),
        null=True,
        blank=True,
        help_text=_("Danish, Swiss, Mitchell: the top lines that seed a following knock-out."),
    )
    stage_tiebreaks = models.JSONField(
        _("stage tie-breaks"),
        default=list,
        blank=True,
        help_text=_("Tie-breaks of this stage; empty: the tournament's."),
    )
    category_places = models.JSONField(
        _("places kept for categories"),
        default=dict,
        blank=True,
        help_text=_(
            "Danish, Swiss, Mitchell: of the lines going on, how many are kept for the best "
            "lines of a category (its value: 2 for “women”), whatever their place overall."
        ),
    )

    class Meta:
        verbose_name = _("stage")
        verbose_name_plural = _("stages")
        ordering = ["tournament", "order"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "order"], name="unique_stage_order"),
        ]

    def __str__(self):
        return f"{self.tournament} – {self.name}"

    @property
    def is_knockout(self):
        return self.kind == self.Kind.KNOCKOUT

    @property
    def is_paired_by_round(self):
        """Danish, Swiss and Mitchell stages: one round at a time, one group of every line."""
        return self.kind in PAIRED_BY_ROUND

    def clean(self):
        if self.stage_tiebreaks:
            valid = {str(t) for t in TieBreak}
            unknown = [t for t in self.stage_tiebreaks if t not in valid]
            if unknown:
                raise ValidationError(
                    {
                        "stage_tiebreaks": _("Unknown tie-breaks: %(names)s")
                        % {"names": ", ".join(map(str, unknown))}
                    }
                )
        if self.bye_scoring == self.ByeScoring.SET_VP and self.bye_vp is None:
            raise ValidationError({"bye_vp": _("Give the VP score of a bye.")})
        if self.category_places:
            self._clean_category_places()
        if self.keep_clubs_apart and self.kind not in (
            self.Kind.MITCHELL,
            self.Kind.DANISH,
            self.Kind.SWISS,
        ):
            raise ValidationError(
                {"keep_clubs_apart": _("Only Mitchell, Danish and Swiss stages keep clubs apart.")}
            )

    def _clean_category_places(self):
        places = self.category_places
        if self.kind and self.kind not in PAIRED_BY_ROUND:
            raise ValidationError(
                {
                    "category_places": _(
                        "Only Danish, Swiss and Mitchell stages keep places for categories."
                    )
                }
            )
        if not isinstance(places, dict) or not all(
            isinstance(name, str) and name and type(count) is int and count > 0
            for name, count in places.items()
        ):
            raise ValidationError(
                {"category_places": _("Give each category a whole number of places, at least 1.")}
            )
        if self.advance_count is not None and sum(places.values()) > self.advance_count:
            raise ValidationError(
                {
                    "category_places": _(
                        "%(kept)d places are kept for categories, more than the %(n)d lines "
                        "going on."
                    )
                    % {"kept": sum(places.values()), "n": self.advance_count}
                }
            )


PAIRED_BY_ROUND = frozenset({Stage.Kind.DANISH, Stage.Kind.SWISS, Stage.Kind.MITCHELL})


class Group(models.Model):
    """A round-robin group within a stage."""

    stage = models.ForeignKey(
        Stage,
        on_delete=models.CASCADE,
        related_name="groups",
        verbose_name=_("stage"),
        db_index=False,  # unique_group_name (stage, …) leads with it
    )
    name = models.CharField(_("name"), max_length=40)
    order = models.PositiveSmallIntegerField(_("order"), default=0)
    lines: models.ManyToManyField[Line, GroupMember] = models.ManyToManyField(
        Line, through="GroupMember", related_name="groups", verbose_name=_("lines")
    )

    class Meta:
        verbose_name = pgettext_lazy("round-robin group", "group")
        verbose_name_plural = pgettext_lazy("round-robin group", "groups")
        ordering = ["stage", "order", "name"]
        constraints = [
            models.UniqueConstraint(fields=["stage", "name"], name="unique_group_name"),
        ]

    def __str__(self):
        return f"{self.stage.name} – {self.name}"


class GroupMember(models.Model):
    group = models.ForeignKey(
        Group,
        on_delete=models.CASCADE,
        related_name="members",
        verbose_name=pgettext_lazy("round-robin group", "group"),
        db_index=False,  # unique_group_line (group, …) leads with it
    )
    line = models.ForeignKey(
        Line, on_delete=models.PROTECT, related_name="group_memberships", verbose_name=_("line")
    )
    position = models.PositiveSmallIntegerField(
        _("position"), help_text=_("1-based number in the Berger table.")
    )
    joined_round = models.PositiveSmallIntegerField(
        _("joined in round"),
        default=1,
        help_text=_("A late entry's first round (earlier rounds get the bye score)."),
    )

    class Meta:
        verbose_name = _("group member")
        verbose_name_plural = _("group members")
        ordering = ["group", "position"]
        constraints = [
            models.UniqueConstraint(fields=["group", "line"], name="unique_group_line"),
            models.UniqueConstraint(fields=["group", "position"], name="unique_group_position"),
        ]

    def __str__(self):
        return f"{self.group}: {self.position}. {self.line}"


class Round(models.Model):
    stage = models.ForeignKey(
        Stage,
        on_delete=models.CASCADE,
        related_name="rounds",
        verbose_name=_("stage"),
        db_index=False,  # unique_round_number (stage, …) leads with it
    )
    number = models.PositiveSmallIntegerField(_("number"))
    name = models.CharField(_("name"), max_length=80, blank=True)
    starts_at = models.DateTimeField(_("starts at"), null=True, blank=True)
    needs_review = models.BooleanField(
        _("earlier result corrected"),
        default=False,
        help_text=_(
            "A result of an earlier round changed after this round was paired: keep it or "
            "pair it again."
        ),
    )

    class Meta:
        verbose_name = _("round")
        verbose_name_plural = _("rounds")
        ordering = ["stage", "number"]
        constraints = [
            models.UniqueConstraint(fields=["stage", "number"], name="unique_round_number"),
        ]

    def __str__(self):
        return self.name or str(_("Round %(number)d") % {"number": self.number})


class BoardSet(models.Model):
    """The prepared deals of a duplicate stage (``scopa/boards.py``), stored with the stage.

    ``boards`` are the engine's boards as plain data (``Board.as_dict``), drawn from ``seed``;
    ``start_order`` the line ids in start order, from which the movement (and so which boards
    each table plays in each round) is worked out again. The seed is shown only once the stage
    is closed (``tournaments.services.duplicate``).
    """

    class Movement(models.TextChoices):
        MITCHELL = "mitchell", _("Mitchell (boards move down, East-West lines up)")
        HOWELL = "howell", _("Howell (every line meets every other)")

    class Scoring(models.TextChoices):
        MATCHPOINTS = "matchpoints", _("Matchpoints (percentage)")
        DIFFERENCE = "difference", _("Difference from the average, in VP")

    stage = models.OneToOneField(
        Stage, on_delete=models.CASCADE, related_name="board_set", verbose_name=_("stage")
    )
    seed = models.CharField(_("board seed"), max_length=64)
    movement = models.CharField(
        _("movement"), max_length=10, choices=Movement.choices, default=Movement.MITCHELL
    )
    scoring = models.CharField(
        _("scoring"), max_length=12, choices=Scoring.choices, default=Scoring.MATCHPOINTS
    )
    boards_per_round = models.PositiveSmallIntegerField(
        _("boards per round"), validators=[MinValueValidator(1), MaxValueValidator(36)]
    )
    arrow_switch = models.BooleanField(
        _("arrow switch"),
        default=False,
        help_text=_(
            "Mitchell: the lines of each table swap seats in the last round, and one ranking "
            "of all the lines replaces the two by direction."
        ),
    )
    relay = models.BooleanField(
        _("relay table"),
        default=False,
        help_text=_(
            "Mitchell with an even number of tables: the first and the last table share a "
            "board set and a bye-stand rests one, instead of the East-West lines skipping a "
            "table halfway."
        ),
    )
    rounds = models.PositiveSmallIntegerField(
        _("rounds"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text=_("The first rounds of the movement played; empty: the full movement."),
    )
    boards = models.JSONField(_("boards"), default=list)
    start_order = models.JSONField(_("start order"), default=list)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("board set")
        verbose_name_plural = _("board sets")

    def __str__(self):
        return f"{self.stage}: {len(self.boards)}"


# django-stubs types the class syntax of Choices only, not the functional API used here.
Outcome = models.TextChoices(  # type: ignore[call-overload]
    "Outcome",
    [(_member(key), (str(key), _(label))) for key, label in OUTCOME_LABELS.items()],
)
Outcome.__doc__ = "How a match ended: ``tournaments.algorithms.vp.Outcome`` and its labels."


class Match(models.Model):
    class Status(models.TextChoices):
        SCHEDULED = "scheduled", _("Scheduled")
        IN_PROGRESS = "in_progress", _("In progress")
        DONE = "done", _("Result in")

    class Slot(models.TextChoices):
        HOME = "home", pgettext_lazy("side of a match", "Home")
        AWAY = "away", pgettext_lazy("side of a match", "Away")

    round = models.ForeignKey(
        Round, on_delete=models.CASCADE, related_name="matches", verbose_name=_("round")
    )
    group = models.ForeignKey(
        Group,
        on_delete=models.CASCADE,
        related_name="matches",
        null=True,
        blank=True,
        verbose_name=pgettext_lazy("round-robin group", "group"),
        db_index=False,  # the (group, status) index leads with it
    )
    home = models.ForeignKey(
        Line,
        on_delete=models.PROTECT,
        related_name="home_matches",
        null=True,
        blank=True,
        verbose_name=_("home line"),
    )
    away = models.ForeignKey(
        Line,
        on_delete=models.PROTECT,
        related_name="away_matches",
        null=True,
        blank=True,
        verbose_name=_("away line"),
        help_text=_("Empty for a bye, or while a knock-out slot waits for its winner."),
    )
    table_number = models.PositiveSmallIntegerField(_("table"), null=True, blank=True)
    status = models.CharField(
        _("status"), max_length=12, choices=Status.choices, default=Status.SCHEDULED
    )
    outcome = models.CharField(
        _("outcome"), max_length=10, choices=Outcome.choices, blank=True, default=""
    )
    offender = models.ForeignKey(
        Line,
        on_delete=models.PROTECT,
        related_name="offences",
        null=True,
        blank=True,
        verbose_name=_("offending line"),
        help_text=_("The line that timed out, abandoned or forfeited."),
    )
    winner = models.ForeignKey(
        Line,
        on_delete=models.PROTECT,
        related_name="won_matches",
        null=True,
        blank=True,
        verbose_name=_("winner"),
    )
    has_tiebreak = models.BooleanField(
        _("decided by tie-break deals"),
        default=False,
        help_text=_("Updated with each result: whether tie-break deals decided the match."),
    )
    # Knock-out wiring: the winner (or, for a semi-final, the loser) moves on.
    bracket_position = models.PositiveSmallIntegerField(
        _("bracket position"), null=True, blank=True
    )
    next_match = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="feeders",
        verbose_name=_("winner goes to"),
    )
    next_slot = models.CharField(_("as"), max_length=4, choices=Slot.choices, blank=True)
    loser_next_match = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="loser_feeders",
        verbose_name=_("loser goes to"),
    )
    loser_next_slot = models.CharField(
        _("loser as"), max_length=4, choices=Slot.choices, blank=True
    )
    is_third_place = models.BooleanField(_("third-place match"), default=False)
    # Indexed: the rating workers look for the matches changed in the last minutes.
    updated_at = models.DateTimeField(_("updated at"), auto_now=True, db_index=True)

    class Meta:
        verbose_name = _("match")
        verbose_name_plural = _("matches")
        ordering = ["round", "table_number", "id"]
        indexes = [models.Index(fields=["group", "status"])]
        constraints = [
            models.CheckConstraint(
                condition=Q(home__isnull=True) | Q(away__isnull=True) | ~Q(home=models.F("away")),
                name="match_lines_differ",
            ),
        ]

    def __str__(self):
        home = self.home or _("(to be decided)")
        away = self.away or (_("bye") if self.outcome == Outcome.BYE else _("(to be decided)"))
        return f"{home} – {away}"

    @property
    def lines(self):
        return [self.home, self.away]

    @property
    def is_bye(self):
        return self.outcome == Outcome.BYE

    @property
    def round_label(self):
        """The round as a reader names this match's: the third-place match shares the final's
        round but is not the final."""
        if self.is_third_place:
            return _("Third-place match")
        return str(self.round)


class MatchResult(models.Model):
    """A line's result in a match: points, MP and VP, as standings read them."""

    match = models.ForeignKey(
        Match,
        on_delete=models.CASCADE,
        related_name="results",
        verbose_name=_("match"),
        db_index=False,  # unique_match_result (match, line) leads with it
    )
    line = models.ForeignKey(
        Line, on_delete=models.PROTECT, related_name="results", verbose_name=_("line")
    )
    points = models.SmallIntegerField(_("points"))
    mp = models.SmallIntegerField(_("MP"))
    vp = models.PositiveSmallIntegerField(_("VP"))
    won = models.BooleanField(_("won"), default=False)
    drawn = models.BooleanField(_("drawn"), default=False)

    class Meta:
        verbose_name = _("match result")
        verbose_name_plural = _("match results")
        ordering = ["match", "line"]
        constraints = [
            models.UniqueConstraint(fields=["match", "line"], name="unique_match_result"),
        ]

    def __str__(self):
        return f"{self.match}: {self.line} {self.vp} VP"


class BoardAdjustment(models.Model):
    """The director's ruling on one board at one table of a duplicate stage: the deck was fouled
    (misprepared) or the table could not play the board. The board then scores the adjusted
    percentages of ``tournaments.algorithms.duplicate`` by fault instead of the deal stored for
    it, and takes no part in the other tables' comparison."""

    class Kind(models.TextChoices):
        FOULED = "fouled", _("Fouled or misprepared deck")
        NOT_PLAYED = "not_played", _("Not played")
        OTHER_DECK = (
            "other_deck",
            _("Played with a misprepared deck: compared with the tables that held the same one"),
        )

    class Fault(models.TextChoices):
        NEITHER = "neither", _("Neither line at fault")
        NORTH_SOUTH = "ns", _("North-South at fault")
        EAST_WEST = "ew", _("East-West at fault")
        BOTH = "both", _("Both lines at fault")

    match = models.ForeignKey(
        Match,
        on_delete=models.CASCADE,
        related_name="board_adjustments",
        verbose_name=_("match"),
        db_index=False,  # unique_board_adjustment (match, …) leads with it
    )
    board = models.PositiveSmallIntegerField(_("board"))
    kind = models.CharField(_("what happened"), max_length=12, choices=Kind.choices)
    fault = models.CharField(_("fault"), max_length=8, choices=Fault.choices)
    deck = models.CharField(
        _("deck held"),
        max_length=20,
        blank=True,
        help_text=_(
            "A board played with a misprepared deck: the same name at every table that held the "
            "same deck (they are compared only among themselves)."
        ),
    )
    note = models.CharField(_("note"), max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("ruled by"),
    )
    created_at = models.DateTimeField(_("ruled at"), auto_now_add=True)

    class Meta:
        verbose_name = _("adjusted board")
        verbose_name_plural = _("adjusted boards")
        ordering = ["match", "board"]
        constraints = [
            models.UniqueConstraint(fields=["match", "board"], name="unique_board_adjustment"),
        ]

    def __str__(self):
        return f"{self.match}: {self.board} {self.fault}"


class ChangeLog(models.Model):
    """Who changed what and when: every organizer action on results and rounds is recorded."""

    tournament = models.ForeignKey(
        Tournament, on_delete=models.CASCADE, related_name="changes", verbose_name=_("tournament")
    )
    match = models.ForeignKey(
        Match,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="changes",
        verbose_name=_("match"),
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        verbose_name=_("user"),
    )
    action = models.CharField(_("action"), max_length=60)
    detail = models.JSONField(_("detail"), default=dict, blank=True)
    created_at = models.DateTimeField(_("when"), auto_now_add=True)

    class Meta:
        verbose_name = _("change")
        verbose_name_plural = _("changes")
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action}"


class Role(models.TextChoices):
    """What a user is in one tournament; ``tournaments.access`` says what each may do."""

    ORGANIZER = "organizer", _("organizer")
    SCORER = "scorer", _("scorer")
    REFEREE = "referee", _("referee")
    VIEWER = "viewer", _("viewer")


class TournamentRole(models.Model):
    """A user's role in one tournament: the only source of per-tournament rights.

    Staff status grants nothing on a tournament; superusers need no role.
    """

    tournament = models.ForeignKey(
        Tournament,
        on_delete=models.CASCADE,
        related_name="roles",
        verbose_name=_("tournament"),
        db_index=False,  # unique_tournament_user_role (tournament, …) leads with it
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="tournament_roles",
        verbose_name=_("user"),
    )
    role = models.CharField(_("role"), max_length=10, choices=Role.choices)
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("granted by"),
    )
    granted_at = models.DateTimeField(_("granted at"), auto_now_add=True)

    class Meta:
        verbose_name = _("tournament role")
        verbose_name_plural = _("tournament roles")
        ordering = ["tournament", "role", "user"]
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "user", "role"], name="unique_tournament_user_role"
            )
        ]

    def __str__(self):
        return f"{self.user} – {self.get_role_display()} – {self.tournament}"


class PairingJob(models.Model):
    """A round paired in a Celery worker (pairings that can take over a second, e.g. Swiss):
    the desk shows its state while it runs and its refusal if it fails."""

    class State(models.TextChoices):
        QUEUED = "queued", _("Waiting for a worker")
        RUNNING = "running", _("Pairing")
        DONE = "done", _("Paired")
        FAILED = "failed", _("Refused")

    stage = models.ForeignKey(
        Stage, on_delete=models.CASCADE, related_name="pairing_jobs", verbose_name=_("stage")
    )
    state = models.CharField(_("state"), max_length=10, choices=State.choices, default=State.QUEUED)
    message = models.TextField(_("message"), blank=True)
    round = models.ForeignKey(
        "Round",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("round"),
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("requested by"),
    )
    created_at = models.DateTimeField(_("requested at"), auto_now_add=True)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        verbose_name = _("pairing job")
        verbose_name_plural = _("pairing jobs")
        ordering = ["stage", "-created_at"]

    def __str__(self):
        return f"{self.stage} – {self.get_state_display()}"


class Invitation(models.Model):
    """A one-time, expiring link by which an organizer brings a co-organizer, scorer or referee
    in: whoever opens it chooses a user name and a password and gets the role. Only the token's
    SHA-256 is stored (the link is shown once to the organizer who made it)."""

    tournament = models.ForeignKey(
        Tournament,
        on_delete=models.CASCADE,
        related_name="invitations",
        verbose_name=_("tournament"),
    )
    role = models.CharField(_("role"), max_length=10, choices=Role.choices)
    note = models.CharField(
        _("for"), max_length=120, blank=True, help_text=_("Who it is for, as a reminder.")
    )
    token_hash = models.CharField(_("token hash"), max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("invited by"),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    expires_at = models.DateTimeField(_("expires at"))
    used_at = models.DateTimeField(_("used at"), null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("account made"),
    )
    revoked_at = models.DateTimeField(_("withdrawn at"), null=True, blank=True)

    class Meta:
        verbose_name = _("invitation")
        verbose_name_plural = _("invitations")
        ordering = ["tournament", "-created_at"]

    def __str__(self):
        return f"{self.get_role_display()} – {self.tournament}"


class RoleHolders:
    """The users with one role in one tournament, with ``add``/``remove`` like a related set."""

    def __init__(self, tournament, role):
        self.tournament = tournament
        self.role = role

    def _users(self):
        from django.contrib.auth import get_user_model

        return get_user_model().objects.filter(
            tournament_roles__tournament=self.tournament, tournament_roles__role=self.role
        )

    def all(self):
        return self._users()

    def filter(self, *args, **kwargs):
        return self._users().filter(*args, **kwargs)

    def exists(self):
        return self._users().exists()

    def first(self):
        return self._users().order_by("pk").first()

    def __iter__(self):
        return iter(self._users())

    def __contains__(self, user):
        return self._users().filter(pk=user.pk).exists()

    def add(self, *users):
        for user in users:
            TournamentRole.objects.get_or_create(
                tournament=self.tournament, user=user, role=self.role
            )

    def remove(self, *users):
        TournamentRole.objects.filter(
            tournament=self.tournament, user__in=users, role=self.role
        ).delete()


class ResultVersion(models.Model):
    """One version of a match's result, from any source; exactly one per match is in force.

    ``MatchResult`` and the match row are the projection of the version in force that standings
    read; only ``tournaments.services.results`` writes either. The deals live in ``sheet`` alone
    (:func:`tournaments.services.results.deals_in_force` reads them). A version whose ``sheet`` is
    ``None`` removes the result (a deletion is a version too, so the next save still names the
    version it was based on).
    """

    class Status(models.TextChoices):
        IN_FORCE = "in_force", _("In force")
        SUPERSEDED = "superseded", _("Superseded")
        AWAITING = "awaiting", _("Awaiting decision")
        REJECTED = "rejected", _("Rejected")
        # a side's own sheet at the table, until the other side answers (scoresheets)
        PROPOSED = "proposed", _("Awaiting the other side's signature")

    match = models.ForeignKey(
        Match,
        on_delete=models.CASCADE,
        related_name="versions",
        verbose_name=_("match"),
        db_index=False,  # unique_result_version (match, number) leads with it
    )
    number = models.PositiveIntegerField(_("version"), help_text=_("1, 2, … per match."))
    source = models.CharField(_("source"), max_length=12, choices=ResultSource.choices)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="result_versions",
        verbose_name=_("author"),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    based_on = models.ForeignKey(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("based on"),
        help_text=_("The version in force when this one was made."),
    )
    status = models.CharField(_("status"), max_length=12, choices=Status.choices)
    sheet = models.JSONField(
        _("sheet"),
        null=True,
        blank=True,
        help_text=_("Deals, outcome, offending side and result; empty for a deletion."),
    )
    submission = models.ForeignKey(
        "games.Submission",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="result_versions",
        verbose_name=_("record submission"),
    )
    reason = models.TextField(_("reason"), blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("decided by"),
    )
    decided_at = models.DateTimeField(_("decided at"), null=True, blank=True)

    class Meta:
        verbose_name = _("result version")
        verbose_name_plural = _("result versions")
        ordering = ["match", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["match", "number"], name="unique_result_version"),
            models.UniqueConstraint(
                fields=["match"],
                condition=Q(status="in_force"),
                name="one_result_version_in_force",
            ),
        ]

    def __str__(self):
        return f"{self.match_id} v{self.number} ({self.get_status_display()})"

    @property
    def is_removal(self):
        return self.sheet is None

    @property
    def is_confirmed(self):
        """Entered by the organizer's side, or accepted by an explicit decision."""
        from tournaments.sources import speaks_for_organizer

        return speaks_for_organizer(self.source) or self.decided_at is not None


class ForbiddenPairing(models.Model):
    """Two lines of a tournament that the organizer says must never meet (a married couple, a
    club's two teams at a qualifier): Danish and Swiss rounds never pair them, a Mitchell
    movement seats them in the same direction. Stored with ``line_a`` the lower id."""

    tournament = models.ForeignKey(
        Tournament,
        on_delete=models.CASCADE,
        related_name="forbidden_pairings",
        verbose_name=_("tournament"),
        db_index=False,  # unique_forbidden_pairing (tournament, …) leads with it
    )
    line_a = models.ForeignKey(
        Line, on_delete=models.CASCADE, related_name="+", verbose_name=_("line")
    )
    line_b = models.ForeignKey(
        Line, on_delete=models.CASCADE, related_name="+", verbose_name=_("line")
    )
    note = models.CharField(_("note"), max_length=200, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("forbidden pairing")
        verbose_name_plural = _("forbidden pairings")
        ordering = ["tournament", "line_a", "line_b"]
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "line_a", "line_b"], name="unique_forbidden_pairing"
            ),
            models.CheckConstraint(
                condition=Q(line_a__lt=F("line_b")), name="forbidden_pairing_ordered"
            ),
        ]

    def __str__(self):
        return f"{self.line_a} ≠ {self.line_b}"


class Prize(models.Model):
    """One prize of a tournament's prize list: a place overall or within a category.

    Prizes are handed out in order of value (``tournaments.algorithms.prizes``), so a line takes
    only its best prize; the place orders prizes of equal value and reads in the label.
    """

    tournament = models.ForeignKey(
        Tournament,
        on_delete=models.CASCADE,
        related_name="prizes",
        verbose_name=_("tournament"),
        db_index=False,  # unique_prize_place (tournament, …) leads with it
    )
    category = models.CharField(
        _("category"), max_length=60, blank=True, help_text=_("Empty: the overall ranking.")
    )
    place = models.PositiveSmallIntegerField(
        _("place"), validators=[MinValueValidator(1), MaxValueValidator(999)]
    )
    value = models.PositiveIntegerField(
        _("value"),
        validators=[MaxValueValidator(10_000_000)],
        help_text=_(
            "The prize's worth (for example in euros): higher values are handed out first."
        ),
    )
    label = models.CharField(_("label"), max_length=120)

    class Meta:
        verbose_name = _("prize")
        verbose_name_plural = _("prizes")
        ordering = ["tournament", "-value", "place", "category", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "category", "place"], name="unique_prize_place"
            ),
        ]

    def __str__(self):
        return self.label

    @property
    def category_display(self) -> str:
        return category_label(self.category)


class PenaltyRule(models.Model):
    """One row of a tournament's penalty table, published before play (lateness: a warning up to
    5 minutes, VP deducted from 5 to 10, the match lost after 10; a no-show)."""

    class Kind(models.TextChoices):
        WARNING = "warning", _("Warning")
        DEDUCTION = "deduction", _("VP deducted")
        FORFEIT = "forfeit", _("Match lost by forfeit")

    tournament = models.ForeignKey(
        Tournament,
        on_delete=models.CASCADE,
        related_name="penalty_rules",
        verbose_name=_("tournament"),
        db_index=False,  # unique_penalty_rule (tournament, …) leads with it
    )
    label = models.CharField(_("label"), max_length=120)
    kind = models.CharField(_("kind"), max_length=10, choices=Kind.choices)
    vp = models.PositiveSmallIntegerField(
        _("VP deducted"),
        default=0,
        validators=[MaxValueValidator(1000)],
        help_text=_("For a deduction: the VP taken off the line's total."),
    )

    class Meta:
        verbose_name = _("penalty rule")
        verbose_name_plural = _("penalty table")
        ordering = ["tournament", "id"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "label"], name="unique_penalty_rule"),
        ]

    def __str__(self):
        return self.label


class Penalty(models.Model):
    """A penalty the referee gave a line in a match, with a reason.

    Kept apart from the match's result versions, so a later correction of the result leaves it
    standing: the standings take ``vp`` off the line's total. A forfeit is also a result, written
    by ``tournaments.services.results``; its row here only records the decision.
    """

    match = models.ForeignKey(
        Match, on_delete=models.CASCADE, related_name="penalties", verbose_name=_("match")
    )
    line = models.ForeignKey(
        Line, on_delete=models.PROTECT, related_name="penalties", verbose_name=_("line")
    )
    kind = models.CharField(_("kind"), max_length=10, choices=PenaltyRule.Kind.choices)
    label = models.CharField(_("label"), max_length=120)
    vp = models.PositiveSmallIntegerField(_("VP deducted"), default=0)
    reason = models.CharField(_("reason"), max_length=300)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("given by"),
    )
    created_at = models.DateTimeField(_("given at"), auto_now_add=True)

    class Meta:
        verbose_name = _("penalty")
        verbose_name_plural = _("penalties")
        ordering = ["match", "id"]

    def __str__(self):
        return f"{self.match_id} {self.line_id}: {self.label}"
