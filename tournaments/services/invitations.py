"""Accounts by invitation: an organizer makes a one-time, expiring link for a co-organizer,
scorer or referee; whoever opens it sets a user name and password (or, logged in, takes the role
on their own account). No shell, no admin.

Only the token's SHA-256 is kept, so the database does not hold usable links; who may invite and
whether a link still works is ``tournaments.access`` (``can_invite``, ``invitation_usable``).
"""

from __future__ import annotations

import datetime
import hashlib
import logging
import secrets

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from tournaments.access import invitation_usable
from tournaments.exceptions import InvitationError
from tournaments.models import Invitation, Role
from tournaments.services import changelog, roles

logger = logging.getLogger(__name__)

VALID_DAYS = 7


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invite(tournament, role, *, by=None, note="", days=VALID_DAYS) -> tuple[Invitation, str]:
    """A new invitation and its token (shown once: only its hash is stored)."""
    if role not in Role.values:
        raise InvitationError(_("Unknown role."))
    token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        tournament=tournament,
        role=role,
        note=note.strip(),
        token_hash=_hash(token),
        created_by=by if getattr(by, "is_authenticated", False) else None,
        expires_at=timezone.now() + datetime.timedelta(days=days),
    )
    changelog.record(
        tournament, "invitation.made", user=by, invitation=invitation.pk, role=role, note=note
    )
    return invitation, token


def find(token: str) -> Invitation | None:
    """The invitation of ``token`` if it can still be used (else ``None``)."""
    invitation = (
        Invitation.objects.select_related("tournament").filter(token_hash=_hash(token)).first()
    )
    return invitation if invitation_usable(invitation, timezone.now()) else None


def _locked(token: str) -> Invitation:
    invitation = (
        Invitation.objects.select_for_update()
        .select_related("tournament")
        .filter(token_hash=_hash(token))
        .first()
    )
    if not invitation_usable(invitation, timezone.now()):
        raise InvitationError()
    assert invitation is not None
    return invitation


def _used(invitation: Invitation, user) -> None:
    roles.grant(invitation.tournament, user, invitation.role, by=invitation.created_by)
    invitation.used_at = timezone.now()
    invitation.used_by = user
    invitation.save(update_fields=["used_at", "used_by"])
    changelog.record(
        invitation.tournament,
        "invitation.used",
        user=user,
        invitation=invitation.pk,
        role=invitation.role,
    )


@transaction.atomic
def accept_new_account(token: str, *, username: str, password: str):
    """Make the account the invitation is for and give it the role; the link is spent."""
    invitation = _locked(token)
    model = get_user_model()
    username = username.strip()
    if not username:
        raise InvitationError(_("Choose a user name."))
    if model.objects.filter(username__iexact=username).exists():
        raise InvitationError(
            _("The user name “%(name)s” is taken: choose another.") % {"name": username}
        )
    user = model(username=username)
    try:
        model._meta.get_field("username").run_validators(username)
        password_validation.validate_password(password, user)
    except ValidationError as error:
        raise InvitationError(" ".join(error.messages)) from error
    user.set_password(password)
    user.save()
    _used(invitation, user)
    logger.info("invitation %s: account %s made", invitation.pk, user.pk)
    return user


@transaction.atomic
def accept_as(token: str, user) -> Invitation:
    """Give the invitation's role to ``user`` (already logged in); the link is spent."""
    invitation = _locked(token)
    _used(invitation, user)
    return invitation


@transaction.atomic
def withdraw(tournament, invitation_id, *, by=None) -> Invitation:
    """Withdraw an invitation not used yet."""
    invitation = (
        Invitation.objects.select_for_update()
        .filter(pk=invitation_id, tournament=tournament)
        .first()
    )
    if invitation is None or invitation.used_at is not None:
        raise InvitationError(_("This invitation was used or no longer exists."))
    if invitation.revoked_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
        changelog.record(tournament, "invitation.withdrawn", user=by, invitation=invitation.pk)
    return invitation
