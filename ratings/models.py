"""Ratings are a cache of the match log: current ratings, their history, and every rating run.

``Rating`` holds the latest state per subject and pool; ``RatingChange`` one row per subject per
rated match (the history the chart draws and the replay restarts from); ``RatingRun`` records the
parameters and package version of every update or replay.
"""

import logging

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from ratings.algorithms.rating import (
    DEFAULT_PARAMS,
    POOL_LABELS,
    display_rating,
    is_provisional,
)

logger = logging.getLogger(__name__)


# django-stubs types the class syntax of Choices only, not the functional API used here.
Pool = models.TextChoices(  # type: ignore[call-overload]
    "Pool", [(key.name, (str(key), _(label))) for key, label in POOL_LABELS.items()]
)
Pool.__doc__ = "Rating pools: ``ratings.algorithms.rating.Pool`` and its labels."


class RatingRun(models.Model):
    class Kind(models.TextChoices):
        INCREMENTAL = "incremental", _("Incremental update")
        REPLAY = "replay", _("Replay from a point")
        FULL = "full", _("Full recompute")

    kind = models.CharField(_("kind"), max_length=12, choices=Kind.choices)
    reason = models.CharField(_("reason"), max_length=200, blank=True)
    replay_from = models.JSONField(
        _("replayed from"), null=True, blank=True, help_text=_("The game key the replay began at.")
    )
    model = models.CharField(_("model"), max_length=40)
    openskill_version = models.CharField(_("openskill version"), max_length=20)
    mu = models.FloatField(_("initial μ"))
    sigma = models.FloatField(_("initial σ"))
    beta = models.FloatField(_("β"))
    tau = models.FloatField(_("τ"))
    params = models.JSONField(_("all parameters"), default=dict)
    games = models.PositiveIntegerField(_("games rated"), default=0)
    started_at = models.DateTimeField(_("started at"), auto_now_add=True)
    seconds = models.FloatField(_("duration (s)"), null=True, blank=True)

    class Meta:
        verbose_name = _("rating run")
        verbose_name_plural = _("rating runs")
        ordering = ["-id"]

    def __str__(self):
        return f"{self.get_kind_display()} #{self.pk}"


class RatedMatch(models.Model):
    """Which matches the cache holds, with the key and fingerprint they were rated under.

    A changed fingerprint or key (a corrected result, a moved round) means a replay from there.
    ``stamp`` is the match's ``updated_at`` that was rated: a match whose ``updated_at`` differs
    (or a rateable match without a row) is what ``rate_pending`` looks at, so the set of results
    still to rate is read from the database, never from messages.
    """

    match = models.OneToOneField(
        "tournaments.Match",
        on_delete=models.CASCADE,
        related_name="rating_entry",
        verbose_name=_("match"),
    )
    played_on = models.DateField(_("played on"))
    tournament_id_key = models.BigIntegerField(_("tournament"))
    stage_order = models.IntegerField(_("stage order"))
    round_number = models.IntegerField(_("round number"))
    fingerprint = models.CharField(_("fingerprint"), max_length=80)
    stamp = models.DateTimeField(
        _("rated at match version"),
        null=True,
        blank=True,
        help_text=_("The match's last change when it was rated; a newer change means re-rate."),
    )

    class Meta:
        verbose_name = _("rated match")
        verbose_name_plural = _("rated matches")
        indexes = [
            models.Index(
                fields=["played_on", "tournament_id_key", "stage_order", "round_number", "match"],
                name="ratedmatch_key",
            )
        ]

    def __str__(self):
        return f"{self.match_id}"


class Rating(models.Model):
    pool = models.CharField(_("pool"), max_length=12, choices=Pool.choices)
    player = models.ForeignKey(
        "tournaments.Player",
        on_delete=models.CASCADE,
        related_name="ratings",
        verbose_name=_("player"),
    )
    partner = models.ForeignKey(
        "tournaments.Player",
        on_delete=models.CASCADE,
        related_name="partner_ratings",
        null=True,
        blank=True,
        verbose_name=_("partner"),
        help_text=_("Set for a fixed pair's own rating."),
    )
    mu = models.FloatField(_("μ"))
    sigma = models.FloatField(_("σ"))
    games = models.PositiveIntegerField(_("games"), default=0)
    wins = models.PositiveIntegerField(_("wins"), default=0)
    draws = models.PositiveIntegerField(_("draws"), default=0)
    losses = models.PositiveIntegerField(_("losses"), default=0)
    last_played = models.DateField(_("last played"), null=True, blank=True)
    display = models.IntegerField(_("rating"), db_index=True)

    class Meta:
        verbose_name = _("rating")
        verbose_name_plural = _("ratings")
        ordering = ["pool", "-display", "player"]
        constraints = [
            models.UniqueConstraint(
                fields=["pool", "player"],
                condition=Q(partner__isnull=True),
                name="unique_player_rating",
            ),
            models.UniqueConstraint(
                fields=["pool", "player", "partner"],
                condition=Q(partner__isnull=False),
                name="unique_pair_rating",
            ),
        ]

    def __str__(self):
        return f"{self.get_pool_display()}: {self.player_id} {self.display}"

    @property
    def provisional(self):
        return is_provisional(self.sigma, DEFAULT_PARAMS)

    @property
    def rating(self):
        return display_rating(self.mu, DEFAULT_PARAMS)


class RatingChange(models.Model):
    """One subject's rating before and after one match, in replay order."""

    class Result(models.TextChoices):
        WIN = "win", _("Win")
        DRAW = "draw", _("Draw")
        LOSS = "loss", _("Loss")

    run = models.ForeignKey(
        RatingRun,
        on_delete=models.SET_NULL,
        null=True,
        related_name="changes",
        verbose_name=_("run"),
    )
    match = models.ForeignKey(
        "tournaments.Match",
        on_delete=models.CASCADE,
        related_name="rating_changes",
        verbose_name=_("match"),
    )
    pool = models.CharField(_("pool"), max_length=12, choices=Pool.choices)
    player = models.ForeignKey(
        "tournaments.Player",
        on_delete=models.CASCADE,
        related_name="rating_changes",
        verbose_name=_("player"),
    )
    partner = models.ForeignKey(
        "tournaments.Player",
        on_delete=models.CASCADE,
        related_name="partner_rating_changes",
        null=True,
        blank=True,
        verbose_name=_("partner"),
    )
    played_on = models.DateField(_("played on"))
    tournament_id_key = models.BigIntegerField(_("tournament"))
    stage_order = models.IntegerField(_("stage order"))
    round_number = models.IntegerField(_("round number"))
    result = models.CharField(_("result"), max_length=4, choices=Result.choices)
    mu_before = models.FloatField(_("μ before"))
    sigma_before = models.FloatField(_("σ before"))
    mu_after = models.FloatField(_("μ after"))
    sigma_after = models.FloatField(_("σ after"))
    games = models.PositiveIntegerField(_("games"))
    wins = models.PositiveIntegerField(_("wins"))
    draws = models.PositiveIntegerField(_("draws"))
    losses = models.PositiveIntegerField(_("losses"))

    class Meta:
        verbose_name = _("rating change")
        verbose_name_plural = _("rating changes")
        ordering = ["played_on", "tournament_id_key", "stage_order", "round_number", "match", "id"]
        indexes = [
            models.Index(
                fields=["played_on", "tournament_id_key", "stage_order", "round_number", "match"],
                name="ratingchange_key",
            ),
            models.Index(fields=["pool", "player", "partner"], name="ratingchange_subject"),
        ]

    def __str__(self):
        return f"{self.pool} {self.player_id}: {self.mu_before:.2f} → {self.mu_after:.2f}"


class RatingLock(models.Model):
    """A single row locked (SELECT … FOR UPDATE) while ratings are written, so workers queue."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)

    class Meta:
        verbose_name = _("rating lock")
        verbose_name_plural = _("rating locks")

    def __str__(self):
        return "rating lock"
