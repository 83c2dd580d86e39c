"""The API's view of ``tournaments.access``: thin adapters, no rule of their own.

A tournament the caller may not see does not exist for them (404, not 403), so its name does not
leak; one they see but may not change answers 403.
"""

from rest_framework import permissions

from tournaments import access
from tournaments.access import Action, can_create_tournament, plays_in, visible_tournaments
from tournaments.models import Match, Tournament

__all__ = [
    "Action",
    "IsOrganizerOrReadOnly",
    "can_create_tournament",
    "can_submit",
    "is_organizer",
    "is_staff_of",
    "plays_in",
    "visible_tournaments",
]


def is_organizer(user, tournament, action: Action = Action.EDIT_TOURNAMENT) -> bool:
    """Whether ``user`` may do ``action`` (by default: change the tournament itself)."""
    return access.can_manage(user, tournament, action)


def is_staff_of(user, tournament) -> bool:
    """Whether ``user`` may see the tournament's desk (organizer, scorer or referee)."""
    return access.can_manage(user, tournament, Action.VIEW_DESK)


def can_submit(user, match: Match) -> bool:
    return access.can_submit_record(user, match)


class IsOrganizerOrReadOnly(permissions.BasePermission):
    """Reads for whoever sees the object; writes for the tournament's organizers."""

    def has_object_permission(self, request, view, obj):
        if request.method in permissions.SAFE_METHODS:
            return True
        tournament = obj if isinstance(obj, Tournament) else view.tournament_of(obj)
        return is_organizer(request.user, tournament)
