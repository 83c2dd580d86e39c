"""Desk URLs of the webhooks (namespace ``webhooks``), included under ``desk/``."""

from django.urls import path

from webhooks import views

desk_urlpatterns = [
    path("<slug:slug>/webhooks/", views.webhooks_desk, name="desk"),
    path(
        "<slug:slug>/webhooks/<int:endpoint_id>/delete/",
        views.delete_endpoint,
        name="delete",
    ),
    path(
        "<slug:slug>/webhooks/deliveries/<uuid:delivery_id>/resend/",
        views.resend_delivery,
        name="resend",
    ),
]
