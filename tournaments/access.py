"""Who may see and do what in a tournament: the ONE access policy of the project.

Every page, desk view, admin class, API view and export asks here; nothing else looks at
``is_staff``, ``is_public`` or the roles to decide access.

- A superuser may do everything everywhere.
- Staff status alone grants nothing on a tournament (it only lets a user into the admin, where
  each model admin then shows only the tournaments the user's roles cover).
- A public tournament is seen by everyone; a private one only by the holders of a role in it.
- What a role may do is ``ROLE_ACTIONS``: organizer everything, scorer enters and corrects
  results, referee decides disputed results and records, viewer only sees.
- A player or a line is seen only through a tournament the viewer may see; anything a viewer may
  not see answers 404 (not 403) so that its name does not leak.
- Creating a tournament needs the ``tournaments.add_tournament`` permission; the creator becomes
  its organizer.
"""

import enum
import logging

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404
from django.utils.translation import gettext as _

from tournaments.models import (
    Entry,
    Line,
    LineMember,
    Match,
    Player,
    Role,
    Tournament,
    TournamentRole,
)

logger = logging.getLogger(__name__)


class Action(enum.StrEnum):
    """What a user may be allowed to do in one tournament."""

    VIEW = "view"  # see the tournament (its pages, lines, players) even when private
    VIEW_DESK = "view_desk"  # the desk: missing results, submissions, change log, table cards
    ENTER_RESULTS = "enter_results"  # enter and correct results; submit records
    DECIDE = "decide"  # decide disputed results and records (rerun, choose a version)
    RUN_STAGES = "run_stages"  # create groups, generate rounds, close and seed stages
    MANAGE_ENTRIES = "manage_entries"  # add, import and withdraw lines
    EDIT_TOURNAMENT = "edit_tournament"  # the tournament's own settings, stages
    MANAGE_ROLES = "manage_roles"  # grant and revoke roles
    EXPORT_PRIVATE = "export_private"  # the export of a private tournament


ROLE_ACTIONS: dict[str, frozenset[Action]] = {
    Role.ORGANIZER: frozenset(Action),
    Role.SCORER: frozenset({Action.VIEW, Action.VIEW_DESK, Action.ENTER_RESULTS}),
    Role.REFEREE: frozenset({Action.VIEW, Action.VIEW_DESK, Action.DECIDE, Action.EXPORT_PRIVATE}),
    Role.VIEWER: frozenset({Action.VIEW}),
}


def roles_with(action: Action) -> list[str]:
    """The roles that grant ``action``."""
    return [str(role) for role, actions in ROLE_ACTIONS.items() if action in actions]


def _authenticated(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active)


def _is_superuser(user) -> bool:
    return _authenticated(user) and user.is_superuser


def roles_of(user, tournament) -> set[str]:
    """The roles ``user`` holds in ``tournament`` (empty for anonymous users)."""
    if not _authenticated(user) or tournament is None:
        return set()
    cache = getattr(user, "_tournament_roles_cache", None)
    if cache is None:
        cache = {}
        user._tournament_roles_cache = cache  # one query per tournament per request
    if tournament.pk not in cache:
        cache[tournament.pk] = set(
            TournamentRole.objects.filter(user=user, tournament=tournament).values_list(
                "role", flat=True
            )
        )
    return cache[tournament.pk]


def forget_roles(user) -> None:
    """Drop the per-request role cache after roles changed."""
    if user is not None and hasattr(user, "_tournament_roles_cache"):
        del user._tournament_roles_cache


# --- decisions on one tournament --------------------------------------------------------------


def can_manage(user, tournament, action: Action) -> bool:
    """Whether ``user`` may do ``action`` in ``tournament``."""
    if tournament is None:
        return False
    if _is_superuser(user):
        return True
    return any(action in ROLE_ACTIONS.get(role, ()) for role in roles_of(user, tournament))


def can_view(user, tournament) -> bool:
    """Whether ``user`` may see ``tournament`` at all (its pages, its lines and players)."""
    if tournament is None:
        return False
    return tournament.is_public or can_manage(user, tournament, Action.VIEW)


def can_create_tournament(user) -> bool:
    return _authenticated(user) and user.has_perm("tournaments.add_tournament")


def can_manage_site(user) -> bool:
    """Site-wide settings that span tournaments (webhooks for every public tournament)."""
    return _is_superuser(user)


def can_see_links(user, tournament) -> bool:
    """Whether ``user`` may see and print the players' private links of ``tournament`` (the links
    page, line cards, the QR codes of table cards). A link's token is the credential to enter and
    countersign its line's results, so only those who may enter results see it; a referee who saw
    both lines' links could submit a sheet for one and countersign it for the other."""
    return can_manage(user, tournament, Action.ENTER_RESULTS)


def can_read_pairing_notes(user, tournament) -> bool:
    """Whether ``user`` may read the organizer's notes on forbidden pairings ("marito e
    moglie"): whoever sees the desk. Everyone who sees the tournament sees which lines never
    meet (the pairings follow from it); the note never reaches the export or anyone else."""
    return can_manage(user, tournament, Action.VIEW_DESK)


def plays_in(user, match: Match) -> bool:
    """Whether ``user`` is a player (``Player.user``) of one of the match's two lines."""
    if not _authenticated(user):
        return False
    lines = [pk for pk in (match.home_id, match.away_id) if pk]
    return LineMember.objects.filter(line_id__in=lines, player__user=user).exists()


def link_may_act(link, match: Match) -> bool:
    """Whether a private link (``scoresheets.models.PrivateLink``) may act on ``match``.

    A link is not a user: it grants nothing but its own line's side of its own line's matches
    (all of them in its tournament, or the one match it was printed for), while it is live.
    """
    if link is None or link.revoked_at is not None or match is None:
        return False
    if link.line_id not in (match.home_id, match.away_id):
        return False
    if link.match_id is not None and link.match_id != match.pk:
        return False
    return match.round.stage.tournament_id == link.tournament_id


def can_invite(user, tournament) -> bool:
    """Invitations bring new holders of a role: whoever may grant roles may invite."""
    return can_manage(user, tournament, Action.MANAGE_ROLES)


def invitation_usable(invitation, now) -> bool:
    """An invitation link is a credential, like a private link: it grants its one role in its
    one tournament, once, until it expires or is withdrawn; whoever holds it may use it."""
    return bool(
        invitation is not None
        and invitation.used_at is None
        and invitation.revoked_at is None
        and invitation.expires_at > now
    )


def can_submit_record(user, match: Match) -> bool:
    """A match's record is submitted by its own players, by whoever enters results, and by
    whoever decides disputed records."""
    tournament = match.round.stage.tournament
    return (
        can_manage(user, tournament, Action.ENTER_RESULTS)
        or can_manage(user, tournament, Action.DECIDE)
        or plays_in(user, match)
    )


def can_receive_boards(user, match: Match) -> bool:
    """A duplicate table's boards (their cards) go to whoever may submit its record: its own
    players' platform, the scorers, the referees and the organizers. Everyone else sees a board
    only once every table holding it has played it (``tournaments.services.duplicate``)."""
    return can_submit_record(user, match)


def sees_secret_boards(user, tournament) -> bool:
    """Whether ``user`` may see every board of a running duplicate stage and every table's result
    on it (the printed board sheets, the organizer's full export): those who run the stages. The
    public export and pages show a board only once every table holding it has played it."""
    return can_manage(user, tournament, Action.RUN_STAGES)


def withheld_results(user, tournament) -> frozenset[int]:
    """The ids of the matches of ``tournament`` whose result ``user`` may not read yet: the
    tables of a running duplicate stage that hold a board still secret (some table holding it
    has no result in force; their points, MP, VP and winner would tell that table how the board
    goes), for whoever does not ``sees_secret_boards``. Everything a non-organizer reads asks
    here and shows such a table as not played yet: the public pages (one copy for every
    visitor, so ``user`` None), the API, the public export, webhooks and live pushes."""
    if tournament is None or (user is not None and sees_secret_boards(user, tournament)):
        return frozenset()
    from tournaments.services import duplicate  # the services import this module

    return frozenset(duplicate.secret_tables_of(tournament))


def withheld_results_anywhere() -> frozenset[int]:
    """:func:`withheld_results` for a visitor over every tournament at once: what a page
    reading all tournaments together (the ratings, which would move after a secret table's
    result) may not take in yet."""
    from tournaments.services import duplicate  # the services import this module

    return frozenset(duplicate.secret_tables_anywhere())


# --- querysets --------------------------------------------------------------------------------


def _role_q(user, actions_any: list[Action], prefix: str = "") -> Q:
    roles = sorted({r for action in actions_any for r in roles_with(action)})
    return Q(
        Exists(
            TournamentRole.objects.filter(
                tournament=OuterRef(f"{prefix}pk" if prefix else "pk"),
                user=user,
                role__in=roles,
            )
        )
    )


def visible_tournaments(user) -> QuerySet:
    """Tournaments ``user`` may see: public ones and those where they hold any role."""
    queryset = Tournament.objects.all()
    if _is_superuser(user):
        return queryset
    if not _authenticated(user):
        return queryset.filter(is_public=True)
    return queryset.filter(Q(is_public=True) | _role_q(user, [Action.VIEW]))


def managed_tournaments(user, action: Action) -> QuerySet:
    """Tournaments where ``user`` may do ``action``."""
    queryset = Tournament.objects.all()
    if _is_superuser(user):
        return queryset
    if not _authenticated(user):
        return queryset.none()
    return queryset.filter(_role_q(user, [action]))


def visible_lines(user) -> QuerySet:
    """Lines entered in a tournament ``user`` may see."""
    if _is_superuser(user):
        return Line.objects.all()
    return Line.objects.filter(
        Exists(Entry.objects.filter(line=OuterRef("pk"), tournament__in=visible_tournaments(user)))
    )


def visible_players(user) -> QuerySet:
    """Players of a line entered in a tournament ``user`` may see."""
    if _is_superuser(user):
        return Player.objects.all()
    return Player.objects.filter(
        Exists(LineMember.objects.filter(player=OuterRef("pk"), line__in=visible_lines(user)))
    )


def open_to_everyone(tournament) -> bool:
    """Whether anyone, logged in or not, may see ``tournament`` (site-wide webhook endpoints
    hear exactly these)."""
    return bool(tournament.is_public)


def open_to_everyone_q(prefix: str = "") -> Q:
    """``open_to_everyone`` as a filter; ``prefix`` is the lookup path to the tournament."""
    return Q(**{f"{prefix}is_public": True})


def exportable_tournaments(user) -> QuerySet:
    """Tournaments ``user`` may export: those open to everyone, and private ones where their role
    allows exporting (staff status alone allows nothing)."""
    private = managed_tournaments(user, Action.EXPORT_PRIVATE).values("pk")
    return Tournament.objects.filter(open_to_everyone_q() | Q(pk__in=private))


def rated_tournaments_q(prefix: str = "") -> Q:
    """The tournaments whose matches count toward ratings: public ones, and private ones that
    say so (``Tournament.rated_when_private``). ``prefix`` is the lookup path to the tournament,
    e.g. ``"round__stage__tournament__"``."""
    return Q(**{f"{prefix}is_public": True}) | Q(**{f"{prefix}rated_when_private": True})


def desk_login_required(view):
    """Desk pages of every app: organizers log in on the desk's own page (the admin's accepts
    staff only)."""
    return login_required(view, login_url="desk:login")


def desk_tournament(request, slug, action=Action.VIEW_DESK):
    """The tournament ``slug`` if the user may do ``action`` in it: every desk page of every
    app gets its tournament here.

    One the user may not even see is a 404 (its name does not leak); one they see but may not do
    ``action`` in is a 403.
    """
    tournament = Tournament.objects.filter(slug=slug).first()
    user = request.user
    if tournament is None or not can_view(user, tournament):
        raise Http404("No such tournament")
    if not can_manage(user, tournament, action):
        raise PermissionDenied(_("You may not do this in this tournament."))
    return tournament


def desk_rights(user, tournament):
    """What the desk may offer ``user`` in ``tournament``: one flag per ``Action``."""
    return {str(action): can_manage(user, tournament, action) for action in Action}
