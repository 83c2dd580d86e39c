"""Issuing, re-issuing and revoking private links; every change goes to the change log."""

import logging
from collections.abc import Iterable
from typing import cast

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from scoresheets.models import PrivateLink
from tournaments.models import Line, Match, Tournament
from tournaments.services import changelog

logger = logging.getLogger(__name__)

# Who acts: a request's user (signed in or not), or nobody (the system, a test).
Actor = AbstractBaseUser | AnonymousUser | None


def _live(tournament: Tournament, line: Line, match: Match | None) -> QuerySet[PrivateLink]:
    # ordered by its own column: the model's ordering joins the (nullable) match, and
    # PostgreSQL refuses FOR UPDATE on the nullable side of an outer join
    return (
        PrivateLink.objects.select_for_update()
        .filter(tournament=tournament, line=line, match=match, revoked_at__isnull=True)
        .order_by("-created_at")
    )


@transaction.atomic
def link_for(
    tournament: Tournament, line: Line, match: Match | None = None, *, user: Actor = None
) -> PrivateLink:
    """The live link of ``line`` (for one ``match``, or for all its matches), made if missing."""
    existing = _live(tournament, line, match).first()
    if existing is not None:
        return existing
    link = PrivateLink.objects.create(
        tournament=tournament, line=line, match=match, created_by=_user(user)
    )
    changelog.record(
        tournament,
        "link_issued",
        match=match,
        user=user,
        line=line.pk,
        link=link.pk,
    )
    return link


@transaction.atomic
def reissue(link: PrivateLink, *, user: Actor = None) -> PrivateLink:
    """Revoke ``link`` and issue a new one with the same reach (a lost or shared card)."""
    revoke(link, user=user)
    return link_for(link.tournament, link.line, link.match, user=user)


@transaction.atomic
def revoke(link: PrivateLink, *, user: Actor = None) -> None:
    locked = PrivateLink.objects.select_for_update().get(pk=link.pk)
    if locked.revoked_at is not None:
        return
    locked.revoked_at = timezone.now()
    locked.revoked_by = _user(user)
    locked.save(update_fields=["revoked_at", "revoked_by"])
    link.revoked_at, link.revoked_by = locked.revoked_at, locked.revoked_by
    changelog.record(
        locked.tournament,
        "link_revoked",
        match=locked.match,
        user=user,
        line=locked.line_id,
        link=locked.pk,
    )


def ensure_line_links(
    tournament: Tournament, lines: Iterable[Line], *, user: Actor = None
) -> dict[int, PrivateLink]:
    """The live all-matches link of each of ``lines``, by line id (for printing line cards)."""
    return {line.pk: link_for(tournament, line, user=user) for line in lines}


def _user(user: Actor) -> User | None:
    """The user recorded as the author: ``user`` if signed in, else None."""
    if user is not None and getattr(user, "is_authenticated", False):
        return cast(User, user)  # signed in: an instance of AUTH_USER_MODEL, auth's User
    return None
