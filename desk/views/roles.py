"""The desk's roles page: an organizer grants and revokes per-tournament roles, and invites
co-organizers, scorers and referees by a one-time link that makes their account.

What each role may do is ``tournaments.access.ROLE_ACTIONS``; writing is
``tournaments.services.roles``; this view only reads the form and shows refusals.
"""

import logging

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from tournaments import selectors as sel
from tournaments.access import Action, desk_login_required, desk_tournament
from tournaments.exceptions import RoleError
from tournaments.models import Role, TournamentRole
from tournaments.services import invitations, roles

logger = logging.getLogger(__name__)


class InviteForm(forms.Form):
    role = forms.ChoiceField(
        label=gettext_lazy("role"),
        choices=[(v, label) for v, label in Role.choices if v != Role.VIEWER],
    )
    note = forms.CharField(
        label=gettext_lazy("for"),
        max_length=120,
        required=False,
        help_text=gettext_lazy("Who it is for, as a reminder (a name, an e-mail address)."),
    )


class NewAccountForm(forms.Form):
    username = forms.CharField(label=gettext_lazy("user name"), max_length=150)
    password1 = forms.CharField(
        label=gettext_lazy("password"), widget=forms.PasswordInput, strip=False
    )
    password2 = forms.CharField(
        label=gettext_lazy("password again"), widget=forms.PasswordInput, strip=False
    )

    def clean(self):
        cleaned = super().clean() or {}
        if cleaned.get("password1") != cleaned.get("password2"):
            raise forms.ValidationError(gettext_lazy("The two passwords differ."))
        return cleaned


class GrantRoleForm(forms.Form):
    username = forms.CharField(label=gettext_lazy("user name"), max_length=150)
    role = forms.ChoiceField(label=gettext_lazy("role"), choices=Role.choices)


def _role_descriptions():
    return {
        Role.ORGANIZER: _("runs everything, including roles"),
        Role.SCORER: _("enters and corrects results, sees submissions"),
        Role.REFEREE: _("decides disputed results and records"),
        Role.VIEWER: _("sees the tournament while it is private"),
    }


@desk_login_required
@require_http_methods(["GET", "POST"])
def roles_page(request, slug):
    tournament = desk_tournament(request, slug, Action.MANAGE_ROLES)
    form = GrantRoleForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            roles.grant_by_username(
                tournament,
                form.cleaned_data["username"],
                form.cleaned_data["role"],
                by=request.user,
            )
        except RoleError as refusal:
            messages.error(request, str(refusal))
        else:
            messages.success(request, _("Role granted."))
            return redirect("desk:roles", slug=tournament.slug)
    return _roles_page(request, tournament, form=form)


def _roles_page(request, tournament, *, form=None, invite_form=None, new_link=None):
    form = form or GrantRoleForm()
    invite_form = invite_form or InviteForm()
    holders = (
        TournamentRole.objects.filter(tournament=tournament)
        .select_related("user", "granted_by")
        .order_by("role", "user__username")
    )
    descriptions = _role_descriptions()
    context = {
        "tournament": tournament,
        "form": form,
        "invite_form": invite_form,
        "new_link": new_link,
        "invitations": sel.open_invitations(tournament),
        "valid_days": invitations.VALID_DAYS,
        "holders": holders,
        "roles": [(value, label, descriptions[value]) for value, label in Role.choices],
    }
    failed = form.errors or invite_form.errors
    return render(request, "desk/roles.html", context, status=400 if failed else 200)


@desk_login_required
@require_POST
def invite(request, slug):
    """Make a one-time link; it is shown once, on the page this answers."""
    tournament = desk_tournament(request, slug, Action.MANAGE_ROLES)
    invite_form = InviteForm(request.POST)
    new_link = None
    if invite_form.is_valid():
        try:
            _invitation, token = invitations.invite(
                tournament,
                invite_form.cleaned_data["role"],
                by=request.user,
                note=invite_form.cleaned_data["note"],
            )
        except RoleError as refusal:
            messages.error(request, str(refusal))
        else:
            new_link = request.build_absolute_uri(reverse("desk:accept-invitation", args=[token]))
            invite_form = InviteForm()
    return _roles_page(request, tournament, invite_form=invite_form, new_link=new_link)


@desk_login_required
@require_POST
def withdraw_invitation(request, slug, invitation_id):
    tournament = desk_tournament(request, slug, Action.MANAGE_ROLES)
    try:
        invitations.withdraw(tournament, invitation_id, by=request.user)
    except RoleError as refusal:
        messages.error(request, str(refusal))
    else:
        messages.success(request, _("Invitation withdrawn: its link no longer works."))
    return redirect("desk:roles", slug=tournament.slug)


@require_http_methods(["GET", "POST"])
def accept_invitation(request, invite_token):
    """The invitation link: the token is the credential (``access.invitation_usable``); whoever
    holds it makes an account with the role, or takes the role on the account they are in."""
    invitation = invitations.find(invite_token)
    if invitation is None:
        return render(request, "desk/invitation_gone.html", status=404)
    form = NewAccountForm(request.POST if request.method == "POST" else None)
    if request.method == "POST":
        try:
            if request.POST.get("action") == "take" and request.user.is_authenticated:
                invitations.accept_as(invite_token, request.user)
                user = request.user
            elif request.POST.get("action") != "take" and form.is_valid():
                user = invitations.accept_new_account(
                    invite_token,
                    username=form.cleaned_data["username"],
                    password=form.cleaned_data["password1"],
                )
                login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            else:
                user = None
        except RoleError as refusal:
            form.add_error(None, str(refusal))
        else:
            if user is not None:
                messages.success(
                    request,
                    _("Welcome: you are %(role)s of “%(name)s”.")
                    % {"role": invitation.get_role_display(), "name": invitation.tournament.name},
                )
                return redirect("desk:tournament", slug=invitation.tournament.slug)
    context = {"invitation": invitation, "form": form}
    return render(request, "desk/invitation.html", context, status=400 if form.errors else 200)


@desk_login_required
@require_POST
def revoke_role(request, slug, role_id):
    tournament = desk_tournament(request, slug, Action.MANAGE_ROLES)
    try:
        roles.revoke(tournament, role_id, by=request.user)
    except RoleError as refusal:
        messages.error(request, str(refusal))
    else:
        messages.success(request, _("Role revoked."))
    return redirect("desk:roles", slug=tournament.slug)
