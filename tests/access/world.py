"""The fixture world of the access tests: a public tournament A with one holder of each role,
a private tournament B with its own organizer, a player of A's match, staff and a superuser.

Everything of B carries the marker ``zqx`` in its name, so a page that leaks B shows it.
"""

from dataclasses import dataclass, field

from django.contrib.auth.models import Group as AuthGroup
from django.contrib.auth.models import Permission, User

from games import services as record_services
from tests.api import factories as api_factories
from tests.pages.factories import build_tournament
from tournaments.models import (
    ChangeLog,
    Entry,
    ForbiddenPairing,
    Group,
    Match,
    Penalty,
    PenaltyRule,
    Prize,
    Role,
    Round,
    Stage,
    Tournament,
    TournamentRole,
    VPTable,
)

# In every name of tournament B; long enough that no random token on a page (CSRF, CSP nonce,
# private links) contains it by chance, which a three-letter marker did now and then.
SECRET = "zqxjwv"

ACTORS = (
    "anon",
    "plain",
    "player",
    "a_organizer",
    "a_scorer",
    "a_referee",
    "a_viewer",
    "b_organizer",
    "staff",
    "superuser",
)
"""Who asks; the columns of the expectation table, in this order."""

SEES_B = {"b_organizer", "superuser"}


@dataclass
class Side:
    """One tournament and one object of each kind in it, for URL arguments."""

    tournament: Tournament
    stage: Stage
    group: Group
    round: Round
    match: Match
    line: object
    player: object
    entry: Entry
    change: ChangeLog
    role: TournamentRole
    submission: object
    endpoint: object = None  # a webhook endpoint and one of its deliveries
    delivery: object = None
    invitation: object = None  # an invitation not used yet, and its token (the credential)
    invite_token: str = ""
    prize: object = None  # one prize of the tournament's prize list
    rule: object = None  # a row of its penalty table, and a penalty given in its match
    penalty: object = None
    pairing: object = None  # two lines the organizer forbids to meet
    by_model: dict = field(default_factory=dict)


def _side(tournament, role, submitter):
    stage = tournament.stages.order_by("order").first()
    match = (
        Match.objects.filter(round__stage=stage, away__isnull=False)
        .select_related("home", "round", "group")
        .order_by("round__number", "table_number", "id")
        .first()
    )
    line = match.home
    player = line.members.select_related("player").first().player
    document = api_factories.record(tournament)
    submission = record_services.submit_record(match, document, user=submitter).submission
    side = Side(
        tournament=tournament,
        stage=stage,
        group=match.group,
        round=match.round,
        match=match,
        line=line,
        player=player,
        entry=Entry.objects.get(tournament=tournament, line=line),
        change=ChangeLog.objects.filter(tournament=tournament).order_by("id").first(),
        role=role,
        submission=submission,
    )
    side.prize = Prize.objects.create(
        tournament=tournament, place=1, value=100, label=f"Coppa {tournament.name}"
    )
    side.rule = PenaltyRule.objects.create(tournament=tournament, label="Ritardo", kind="warning")
    side.penalty = Penalty.objects.create(
        match=match, line=line, kind="warning", label="Ritardo", reason="cinque minuti"
    )
    side.pairing = ForbiddenPairing.objects.create(
        tournament=tournament,
        line_a_id=min(match.home_id, match.away_id),
        line_b_id=max(match.home_id, match.away_id),
    )
    from webhooks.models import Delivery, Endpoint

    side.endpoint = Endpoint.objects.create(tournament=tournament, url="https://example.org/hook")
    side.delivery = Delivery.objects.create(
        endpoint=side.endpoint, tournament=tournament, event="result.in_force", body="{}"
    )
    from tournaments.services import invitations

    side.invitation, side.invite_token = invitations.invite(tournament, Role.SCORER)
    side.by_model = {
        "tournament": tournament,
        "stage": stage,
        "group": side.group,
        "round": side.round,
        "match": match,
        "line": line,
        "player": player,
        "entry": side.entry,
        "changelog": side.change,
        "submission": submission,
    }
    return side


def _admin_user(name, **extra):
    """A staff user with every model permission of the project's apps (what an organizer who
    uses the admin is given): roles, not these, decide which tournaments they reach."""
    user = User.objects.create_user(name, password="pw-" + name, is_staff=True, **extra)
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label__in=["tournaments", "games", "ratings"])
    )
    return user


def build_world():
    """Returns ``(users, {"A": Side, "B": Side}, shared)``; ``users`` by actor name."""
    users = {
        "plain": User.objects.create_user("plain", password="pw-plain"),
        "player": User.objects.create_user("giocatore", password="pw-giocatore"),
        "a_organizer": _admin_user("a_organizer"),
        "a_scorer": _admin_user("a_scorer"),
        "a_referee": _admin_user("a_referee"),
        "a_viewer": _admin_user("a_viewer"),
        "b_organizer": _admin_user("b_organizer"),
        "staff": _admin_user("staff"),
        "superuser": User.objects.create_superuser("root", password="pw-root"),
    }
    a = build_tournament(4, slug="alpha", public=True)
    b = build_tournament(4, slug=f"{SECRET}bravo", public=False)
    roles = {}
    for actor, role in (
        ("a_organizer", Role.ORGANIZER),
        ("a_scorer", Role.SCORER),
        ("a_referee", Role.REFEREE),
        ("a_viewer", Role.VIEWER),
    ):
        roles[actor] = TournamentRole.objects.create(tournament=a, user=users[actor], role=role)
    b_role = TournamentRole.objects.create(
        tournament=b, user=users["b_organizer"], role=Role.ORGANIZER
    )
    sides = {
        "A": _side(a, roles["a_scorer"], users["superuser"]),
        "B": _side(b, b_role, users["superuser"]),
    }
    player = sides["A"].player
    player.user = users["player"]
    player.save(update_fields=["user"])
    shared = {
        "user": users["plain"],
        "group": AuthGroup.objects.create(name="federazione"),
        "tokenproxy": users["plain"],
        "vptable": VPTable.objects.get(slug="points-11"),
    }
    return users, sides, shared
