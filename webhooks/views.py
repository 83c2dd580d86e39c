"""The desk's webhook page: a tournament's endpoints, its delivery log, "send again"."""

import logging

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from tournaments.access import Action, desk_login_required, desk_tournament
from webhooks import services
from webhooks.exceptions import WebhookURLError
from webhooks.models import Delivery, Endpoint

logger = logging.getLogger(__name__)

LOG_SIZE = 100


class EndpointForm(forms.Form):
    url = forms.URLField(label=gettext_lazy("Receiver URL"), max_length=500, assume_scheme="https")
    description = forms.CharField(label=gettext_lazy("Description"), max_length=200, required=False)


@desk_login_required
@require_http_methods(["GET", "POST"])
def webhooks_desk(request, slug):
    tournament = desk_tournament(request, slug, Action.EDIT_TOURNAMENT)
    form = EndpointForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.register_endpoint(
                tournament=tournament,
                url=form.cleaned_data["url"],
                description=form.cleaned_data["description"],
                user=request.user,
            )
        except WebhookURLError as error:
            form.add_error("url", error.message)
        else:
            messages.success(request, _("Webhook endpoint added."))
            return redirect("webhooks:desk", slug=tournament.slug)
    context = {
        "tournament": tournament,
        "form": form,
        "endpoints": Endpoint.objects.filter(tournament=tournament),
        "deliveries": Delivery.objects.filter(tournament=tournament)
        .select_related("endpoint")
        .order_by("-created_at")[:LOG_SIZE],
    }
    return render(request, "webhooks/desk.html", context)


@desk_login_required
@require_POST
def delete_endpoint(request, slug, endpoint_id):
    tournament = desk_tournament(request, slug, Action.EDIT_TOURNAMENT)
    endpoint = get_object_or_404(Endpoint, pk=endpoint_id, tournament=tournament)
    endpoint.delete()
    messages.success(request, _("Webhook endpoint removed."))
    return redirect("webhooks:desk", slug=tournament.slug)


@desk_login_required
@require_POST
def resend_delivery(request, slug, delivery_id):
    tournament = desk_tournament(request, slug, Action.EDIT_TOURNAMENT)
    delivery = get_object_or_404(Delivery, pk=delivery_id, tournament=tournament)
    services.resend(delivery)
    messages.success(request, _("Delivery queued to be sent again."))
    return redirect("webhooks:desk", slug=tournament.slug)
