"""Accounts by invitation: an organizer makes a one-time, expiring link on the roles page; the
invitee sets a user name and password and lands on the desk with the role; the link then (or
once expired or withdrawn) no longer works; only organizers may invite."""

import datetime
import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from tests.pages.factories import build_tournament
from tournaments import access
from tournaments.exceptions import InvitationError
from tournaments.models import Invitation, Role, TournamentRole
from tournaments.services import invitations

pytestmark = pytest.mark.django_db

PASSWORD = "Briscola-a-Bari-2026"


@pytest.fixture
def tournament():
    return build_tournament(4, slug="invito", play=False, knockout=False)


@pytest.fixture
def organizer(tournament):
    user = User.objects.create_user("direttore", password="x-pass-12345")
    tournament.organizers.add(user)
    return user


def _link(client, tournament, role):
    page = client.post(
        reverse("desk:invite", args=[tournament.slug]), {"role": role, "note": "Maria, arbitro"}
    )
    assert page.status_code == 200
    found = re.search(r'value="(http[^"]+/desk/invitation/[^"]+/)"', page.content.decode())
    assert found, "the new link is shown once on the page"
    return found.group(1).split("testserver", 1)[1]


def test_invited_referee_makes_an_account_once_and_lands_on_the_desk(client, tournament, organizer):
    client.force_login(organizer)
    url = _link(client, tournament, Role.REFEREE)
    invitation = Invitation.objects.get(tournament=tournament)
    assert url.rstrip("/").rsplit("/", 1)[1] not in invitation.token_hash  # only the hash kept
    client.logout()
    page = client.get(url)
    assert page.status_code == 200 and tournament.name in page.content.decode()
    # a weak password is refused with the validator's message; nothing is made
    weak = client.post(url, {"username": "maria", "password1": "123", "password2": "123"})
    assert weak.status_code == 400
    assert not User.objects.filter(username="maria").exists()
    done = client.post(url, {"username": "maria", "password1": PASSWORD, "password2": PASSWORD})
    assert done.status_code == 302
    assert done["Location"] == reverse("desk:tournament", args=[tournament.slug])
    maria = User.objects.get(username="maria")
    assert maria.check_password(PASSWORD)
    assert access.roles_of(maria, tournament) == {Role.REFEREE}
    assert client.get(done["Location"]).status_code == 200  # logged in, on the desk
    client.logout()
    # the link is spent
    assert client.get(url).status_code == 404
    again = client.post(url, {"username": "other", "password1": PASSWORD, "password2": PASSWORD})
    assert again.status_code == 404
    assert not User.objects.filter(username="other").exists()


def test_expired_and_withdrawn_links_do_not_work(client, tournament, organizer):
    expired, old_token = invitations.invite(tournament, Role.SCORER, by=organizer)
    Invitation.objects.filter(pk=expired.pk).update(
        expires_at=timezone.now() - datetime.timedelta(minutes=1)
    )
    with pytest.raises(InvitationError):
        invitations.accept_new_account(old_token, username="luca", password=PASSWORD)
    withdrawn, token = invitations.invite(tournament, Role.SCORER, by=organizer)
    client.force_login(organizer)
    roles_page = client.get(reverse("desk:roles", args=[tournament.slug])).content.decode()
    assert reverse("desk:withdraw-invitation", args=[tournament.slug, withdrawn.pk]) in roles_page
    client.post(reverse("desk:withdraw-invitation", args=[tournament.slug, withdrawn.pk]))
    client.logout()
    assert client.get(reverse("desk:accept-invitation", args=[token])).status_code == 404
    assert client.get(reverse("desk:accept-invitation", args=["made-up"])).status_code == 404
    assert not User.objects.filter(username="luca").exists()


def test_a_logged_in_user_takes_the_role_on_their_account(client, tournament, organizer):
    _invitation, token = invitations.invite(tournament, Role.ORGANIZER, by=organizer)
    anna = User.objects.create_user("anna", password=PASSWORD)
    client.force_login(anna)
    response = client.post(reverse("desk:accept-invitation", args=[token]), {"action": "take"})
    assert response.status_code == 302
    assert TournamentRole.objects.filter(user=anna, role=Role.ORGANIZER).exists()


def test_taken_user_name_is_refused_and_only_organizers_invite(client, tournament, organizer):
    _invitation, token = invitations.invite(tournament, Role.SCORER, by=organizer)
    response = client.post(
        reverse("desk:accept-invitation", args=[token]),
        {"username": "DIRETTORE", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert response.status_code == 400
    assert Invitation.objects.get(token_hash__isnull=False, role=Role.SCORER).used_at is None
    scorer = User.objects.create_user("segnapunti", password=PASSWORD)
    TournamentRole.objects.create(tournament=tournament, user=scorer, role=Role.SCORER)
    client.force_login(scorer)
    refused = client.post(reverse("desk:invite", args=[tournament.slug]), {"role": "organizer"})
    assert refused.status_code == 403
    assert Invitation.objects.filter(tournament=tournament).count() == 1
