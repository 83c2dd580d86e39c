"""The desk's roles page: an organizer grants and revokes per-tournament roles.

What each role may do is ``tournaments.access.ROLE_ACTIONS``; writing is
``tournaments.services.roles``; this view only reads the form and shows refusals.
"""

import logging

from django import forms
from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from tournaments.access import Action, desk_login_required, desk_tournament
from tournaments.exceptions import RoleError
from tournaments.models import Role, TournamentRole
from tournaments.services import roles

logger = logging.getLogger(__name__)


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
    holders = (
        TournamentRole.objects.filter(tournament=tournament)
        .select_related("user", "granted_by")
        .order_by("role", "user__username")
    )
    descriptions = _role_descriptions()
    context = {
        "tournament": tournament,
        "form": form,
        "holders": holders,
        "roles": [(value, label, descriptions[value]) for value, label in Role.choices],
    }
    return render(request, "desk/roles.html", context, status=400 if form.errors else 200)


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
