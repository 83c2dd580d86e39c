"""Granting and revoking per-tournament roles: the one place that writes ``TournamentRole``.

Who may call these is ``tournaments.access`` (``Action.MANAGE_ROLES``); the views check it.
"""

import logging

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils.translation import gettext as _

from tournaments.access import forget_roles
from tournaments.exceptions import RoleError
from tournaments.models import Role, TournamentRole
from tournaments.services import changelog

logger = logging.getLogger(__name__)


def grant(tournament, user, role, *, by=None):
    """Give ``user`` the ``role`` in ``tournament``; granting a held role again changes nothing."""
    if role not in Role.values:
        raise RoleError(_("Unknown role."))
    with transaction.atomic():
        row, created = TournamentRole.objects.get_or_create(
            tournament=tournament,
            user=user,
            role=role,
            defaults={"granted_by": by if getattr(by, "is_authenticated", False) else None},
        )
        if created:
            changelog.record(
                tournament, "role.granted", user=by, grantee=user.get_username(), role=role
            )
    forget_roles(user)
    return row


def grant_by_username(tournament, username, role, *, by=None):
    """``grant`` to the active user called ``username``, or a ``RoleError``."""
    user = get_user_model().objects.filter(username=username.strip(), is_active=True).first()
    if user is None:
        raise RoleError(_("There is no active user called “%(name)s”.") % {"name": username})
    return grant(tournament, user, role, by=by)


def revoke(tournament, role_id, *, by=None):
    """Take one role back; the tournament's last organizer role cannot be taken back."""
    with transaction.atomic():
        row = (
            TournamentRole.objects.select_for_update()
            .select_related("user")
            .filter(pk=role_id, tournament=tournament)
            .first()
        )
        if row is None:
            raise RoleError(_("This role no longer exists."))
        if row.role == Role.ORGANIZER:
            organizers = TournamentRole.objects.select_for_update().filter(
                tournament=tournament, role=Role.ORGANIZER
            )
            if len(organizers) <= 1:
                raise RoleError(_("A tournament keeps at least one organizer."))
        row.delete()
        changelog.record(
            tournament, "role.revoked", user=by, grantee=row.user.get_username(), role=row.role
        )
    forget_roles(row.user)
    return row
