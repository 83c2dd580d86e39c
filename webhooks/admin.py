"""Webhooks in the admin, for superusers only: site-wide endpoints (every public tournament)
are registered here; organizers use their tournament's desk page."""

from django.contrib import admin, messages
from django.db import models
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from tournaments.access import can_manage_site
from webhooks import network, services
from webhooks.exceptions import WebhookURLError
from webhooks.models import Delivery, Endpoint


class SuperuserOnly(admin.ModelAdmin):
    """Site-wide endpoints: the access policy's ``can_manage_site`` decides."""

    def has_module_permission(self, request):
        return can_manage_site(request.user)

    def has_view_permission(self, request, obj=None):
        return self.has_module_permission(request)

    def has_add_permission(self, request):
        return self.has_module_permission(request)

    def has_change_permission(self, request, obj=None):
        return self.has_module_permission(request)

    def has_delete_permission(self, request, obj=None):
        return self.has_module_permission(request)


@admin.register(Endpoint)
class EndpointAdmin(SuperuserOnly):
    list_display = ["url", "tournament", "description", "is_active", "created_at"]
    list_filter = ["is_active"]
    raw_id_fields = ["tournament"]
    exclude = ["created_by"]
    # Receivers are HTTPS sites: a URL typed without a scheme gets https:// (Django 6's default;
    # saying so also ends Django 5's deprecation warning about it).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        original_clean = form.clean

        def clean(form_self):
            original_clean(form_self)
            data = form_self.cleaned_data  # what a ModelForm's clean returns
            url = data.get("url")
            if url:
                try:
                    network.resolve(url)
                except WebhookURLError as error:
                    form_self.add_error("url", error.message)
            return data

        # The form class is the one the admin generates for the request: its clean is wrapped.
        form.clean = clean  # type: ignore[method-assign]
        return form

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(Delivery)
class DeliveryAdmin(SuperuserOnly):
    list_display = ["id", "event", "endpoint", "tournament", "status", "attempts", "created_at"]
    list_filter = ["status", "event"]
    readonly_fields = [f.name for f in Delivery._meta.fields]
    actions = ["send_again"]

    def has_add_permission(self, request):
        return False

    @admin.action(description=gettext_lazy("Send again"))
    def send_again(self, request, queryset):
        for delivery in queryset:
            services.resend(delivery)
        messages.success(request, _("Deliveries queued to be sent again."))
