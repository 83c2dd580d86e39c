"""A realistic, public demo tournament: 16 lines in 4 groups, then a knock-out of 8.

Every result comes from a simulated match record (``scopa.simulate_match``, seeded, so
the demo is the same on every machine) submitted through ``games.services.submit_record`` as a
platform would send it, so each match keeps its verified record for the replay viewer. One group
match ends in a timeout, one in an abandon, and one knock-out match needs tie-break deals.
"""

import datetime
import logging
import time

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils.translation import gettext as _

from games.models import Submission
from games.services import submit_record
from tournaments.models import Line, Match, Outcome, Player, Stage, Tournament
from tournaments.services import entries, presets, results, schedule

logger = logging.getLogger(__name__)

DEMO_SLUG = "trofeo-golfo-2026"
DEMO_NAME = "Trofeo del Golfo 2026"
PRESET = "scopa-tre-smazzate"
BASE_SEED = 20260516

PLAYERS = [
    ("Gennaro Esposito", "FIGS-NA-0101", "Circolo Scopa Partenope", "Napoli"),
    ("Salvatore Russo", "FIGS-NA-0102", "Circolo Scopa Partenope", "Napoli"),
    ("Maria Romano", "FIGS-SA-0201", "ASD Carte Salernitane", "Salerno"),
    ("Antonio Colombo", "FIGS-MI-0301", "Bocciofila Milanese", "Milano"),
    ("Giuseppe Ricci", "FIGS-RM-0401", "Dopolavoro Ferroviario", "Roma"),
    ("Francesca Marino", "FIGS-BA-0501", "Circolo del Levante", "Bari"),
    ("Vincenzo Greco", "FIGS-PA-0601", "Società Scopone Palermo", "Palermo"),
    ("Rosa Bruno", "FIGS-CT-0701", "Circolo Etna", "Catania"),
    ("Luigi Gallo", "FIGS-TO-0801", "Circolo Sabaudo", "Torino"),
    ("Anna Conti", "FIGS-FI-0901", "Circolo Oltrarno", "Firenze"),
    ("Pasquale De Luca", "FIGS-CE-1001", "Pro Loco Caserta", "Caserta"),
    ("Carmela Mancini", "FIGS-AV-1101", "Circolo Irpino", "Avellino"),
    ("Francesco Costa", "FIGS-GE-1201", "Società Operaia", "Genova"),
    ("Teresa Giordano", "FIGS-BN-1301", "Circolo Sannita", "Benevento"),
    ("Domenico Rizzo", "FIGS-RC-1401", "Circolo dello Stretto", "Reggio Calabria"),
    ("Lucia Lombardi", "FIGS-BO-1501", "Circolo Felsineo", "Bologna"),
]

# index of a group match (in round and table order) → engine outcome
OFFENCES = {
    9: {"kind": "timeout", "seat": 1, "deal": 1, "play": 17},
    19: {"kind": "abandon", "seat": 0, "deal": 2, "play": 9},
}


def _engine():
    try:
        from scopa import simulate_match, verify_document
    except ImportError as error:  # pragma: no cover - the engine ships with the project
        raise CommandError(
            _("The rules engine is not available: %(error)s") % {"error": error}
        ) from error
    return simulate_match, verify_document


class Command(BaseCommand):
    help = "Create a demo tournament with all results filled in from verified simulated records."

    def add_arguments(self, parser):
        parser.add_argument(
            "--reset", action="store_true", help="Delete the demo tournament first if it exists."
        )

    def handle(self, *args, **options):
        verbosity = options.get("verbosity", 1)
        quiet = _quiet_loggers() if verbosity < 2 else []
        try:
            self._build(options, verbosity)
        finally:
            for log, level in quiet:
                log.setLevel(level)

    def _build(self, options, verbosity):
        started = time.perf_counter()
        existing = Tournament.objects.filter(slug=DEMO_SLUG).first()
        if existing is not None:
            if not options["reset"]:
                self.stdout.write(
                    _("The demo tournament “%(name)s” already exists; use --reset to rebuild it.")
                    % {"name": existing.name}
                )
                return
            delete_demo(existing)
        tournament = build_demo(self.stdout)
        username, password = demo_organizer(tournament)
        elapsed = time.perf_counter() - started
        self.stdout.write(
            self.style.SUCCESS(
                _("Demo tournament “%(name)s” ready (%(s).1f s).")
                % {"name": tournament.name, "s": elapsed}
            )
        )
        base = "http://127.0.0.1:8000"
        self.stdout.write(
            _("Public pages: %(url)s") % {"url": f"{base}/t/{tournament.slug}/"}
            + "\n"
            + _("Organizer's desk: %(url)s") % {"url": f"{base}/desk/{tournament.slug}/"}
            + "\n"
            + _("Log in at %(url)s as “%(user)s” with the password %(password)s (demo only).")
            % {"url": f"{base}/desk/login/", "user": username, "password": password}
        )


DEMO_ORGANIZER = "organizzatore-demo"


def _quiet_loggers():
    """Default verbosity: only warnings (the services and Celery log every step at INFO)."""
    changed = []
    for name in ("", "tournaments", "games", "ratings", "celery"):
        log = logging.getLogger(name)
        changed.append((log, log.level))
        log.setLevel(logging.WARNING)
    return changed


def demo_organizer(tournament):
    """An organizer login for the demo only (not staff): a fresh random password each run,
    printed once by the command."""
    import secrets

    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    user, _created = get_user_model().objects.get_or_create(username=DEMO_ORGANIZER)
    password = secrets.token_urlsafe(9)
    user.set_password(password)
    user.save()
    permission = Permission.objects.filter(codename="add_tournament").first()
    if permission is not None:
        user.user_permissions.add(permission)
    tournament.organizers.add(user)
    return user.username, password


@transaction.atomic
def delete_demo(tournament):
    line_ids = list(tournament.entries.values_list("line_id", flat=True))
    player_ids = list(Player.objects.filter(lines__in=line_ids).values_list("pk", flat=True))
    # Submissions are protected so a real record is never lost; demo records are ours to drop.
    Submission.objects.filter(match__round__stage__tournament=tournament).delete()
    tournament.delete()
    Line.objects.filter(pk__in=line_ids, entries__isnull=True).delete()
    Player.objects.filter(pk__in=player_ids, memberships__isnull=True).delete()


def _play(match, tournament, *, seed, knockout, outcome=None, want_tiebreak=False):
    """Simulate, verify and store one match; with ``want_tiebreak``, try seeds until the
    regular deals end level (a few dozen tries at most)."""
    simulate_match, verify_document = _engine()
    seats = [
        match.home.members.all()[0].player.federation_id,
        match.away.members.all()[0].player.federation_id,
    ]
    for attempt in range(400 if want_tiebreak else 1):
        record = simulate_match(
            variant=tournament.variant,
            seats=2,
            options=tournament.options or None,
            end=tournament.match_end(),
            knockout=knockout,
            seed=seed + 7919 * attempt,
            policy="greedy" if (seed + attempt) % 3 else "random",
            outcome=outcome,
        )
        record["seats"] = seats
        verdict = verify_document(record)
        if not verdict.get("valid"):
            raise CommandError(f"simulated record for {match} does not verify: {verdict['errors']}")
        if not want_tiebreak or any(d.get("tiebreak") for d in verdict["deals"]):
            break
    # Through the submission path, so each demo match keeps its record for the replay viewer.
    return submit_record(match, record, source=Submission.Source.DEMO, verify_now=True).submission


def _check_accepted(submission):
    """The demo record is the match's result in force (read once its result is written: inside
    ``written_together`` the result's rows wait for the end of the block)."""
    submission.refresh_from_db()
    if submission.state != Submission.State.VERIFIED or not submission.is_standing:
        raise CommandError(
            f"demo record for {submission.match} was not accepted: "
            f"{submission.state} {submission.error_reason}"
        )


@transaction.atomic
def build_demo(stdout=None):
    tournament = presets.create_tournament_from_preset(
        PRESET,
        name=DEMO_NAME,
        slug=DEMO_SLUG,
        start_date=datetime.date(2026, 5, 16),
        end_date=datetime.date(2026, 5, 17),
        venue="Circolo Scopa Partenope, Napoli",
        is_public=True,
        lots_seed=BASE_SEED,
        stages=[
            {"name": _("Groups"), "kind": Stage.Kind.ROUND_ROBIN},
            {"name": _("Knock-out"), "kind": Stage.Kind.KNOCKOUT, "third_place_match": True},
        ],
    )
    rows = [
        entries.LineRow(
            name=name,
            players=[(name, federation_id)],
            club=club,
            city=city,
            seed=seed,
            row_number=seed,
        )
        for seed, (name, federation_id, club, city) in enumerate(PLAYERS, start=1)
    ]
    entries.add_lines(tournament, rows)
    groups_stage, knockout = tournament.stages.order_by("order")
    schedule.create_groups(groups_stage, 4)
    schedule.generate_round_robin(groups_stage)

    matches = (
        Match.objects.filter(round__stage=groups_stage)
        .exclude(outcome=Outcome.BYE)
        .select_related("round", "group", "home", "away")
        .prefetch_related("home__members__player", "away__members__player")
        .order_by("round__number", "table_number")
    )
    # The group matches' results are written together, as a worker writes a batch of records:
    # their rows in one statement per table, one announcement (each match is played once and
    # none moves a line, so nothing has to be flushed before the end of the block).
    with results.written_together():
        played = [
            _play(
                match,
                tournament,
                seed=BASE_SEED + index,
                knockout=False,
                outcome=OFFENCES.get(index),
            )
            for index, match in enumerate(matches)
        ]
    for submission in played:
        _check_accepted(submission)
    schedule.close_stage(groups_stage, per_group=2)

    tiebreak_done = False
    for round_ in knockout.rounds.order_by("number"):
        for match in (
            round_.matches.exclude(outcome=Outcome.BYE)
            .select_related("home", "away")
            .prefetch_related("home__members__player", "away__members__player")
            .order_by("is_third_place", "bracket_position")
        ):
            submission = _play(
                match,
                tournament,
                seed=BASE_SEED + 1000 + round_.number * 10 + (match.bracket_position or 0),
                knockout=True,
                want_tiebreak=not tiebreak_done,
            )
            _check_accepted(submission)
            deals = submission.verdict["deals"]
            tiebreak_done = tiebreak_done or any(d.get("tiebreak") for d in deals)
    schedule.close_stage(knockout)  # the last stage: the tournament is finished
    tournament.refresh_from_db()
    return tournament
