"""Who may read and write what: reads follow ``Tournament.is_public``; writes are the organizers'.

A private tournament is visible only to its organizers and referees (and superusers); for anyone
else it does not exist (404, not 403), so its name does not leak.
"""

from django.db.models import Q
from rest_framework import permissions

from tournaments.models import LineMember, Match, Tournament


def visible_tournaments(user):
    qs = Tournament.objects.all()
    if user is not None and user.is_authenticated and user.is_superuser:
        return qs
    condition = Q(is_public=True)
    if user is not None and user.is_authenticated:
        staff_ids = Tournament.objects.filter(Q(organizers=user) | Q(referees=user)).values("pk")
        condition |= Q(pk__in=staff_ids)
    return qs.filter(condition)


def is_organizer(user, tournament) -> bool:
    if not (user and user.is_authenticated):
        return False
    return user.is_superuser or tournament.organizers.filter(pk=user.pk).exists()


def is_staff_of(user, tournament) -> bool:
    """Organizer or referee of ``tournament``."""
    if not (user and user.is_authenticated):
        return False
    return (
        user.is_superuser
        or tournament.organizers.filter(pk=user.pk).exists()
        or tournament.referees.filter(pk=user.pk).exists()
    )


def plays_in(user, match: Match) -> bool:
    """Whether ``user`` is a player (Player.user) of one of the match's two lines."""
    if not (user and user.is_authenticated):
        return False
    lines = [pk for pk in (match.home_id, match.away_id) if pk]
    return LineMember.objects.filter(line_id__in=lines, player__user=user).exists()


def can_submit(user, match: Match) -> bool:
    """Organizers, referees and the match's own players may submit its record."""
    tournament = match.round.stage.tournament
    return is_staff_of(user, tournament) or plays_in(user, match)


def can_create_tournament(user) -> bool:
    return bool(
        user
        and user.is_authenticated
        and (user.is_staff or user.has_perm("tournaments.add_tournament"))
    )


class IsOrganizerOrReadOnly(permissions.BasePermission):
    """Reads for whoever sees the object; writes for the tournament's organizers."""

    def has_object_permission(self, request, view, obj):
        if request.method in permissions.SAFE_METHODS:
            return True
        tournament = obj if isinstance(obj, Tournament) else view.tournament_of(obj)
        return is_organizer(request.user, tournament)
