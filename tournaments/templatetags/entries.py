"""``{% withdrawn_badge line_id %}``: marks a withdrawn line wherever a tournament page names it.

The withdrawn lines of the page's ``tournament`` are read once per render (kept on the
tournament object), so a page with many rows costs one query.
"""

from django import template
from django.utils.html import format_html
from django.utils.translation import gettext as _

register = template.Library()


def withdrawn_ids(tournament):
    """The withdrawn lines of ``tournament``, read once per tournament object."""
    ids = getattr(tournament, "_withdrawn_line_ids", None)
    if ids is None:
        from tournaments.services.entries import withdrawn_line_ids

        ids = withdrawn_line_ids(tournament)
        tournament._withdrawn_line_ids = ids
    return ids


@register.simple_tag(takes_context=True)
def withdrawn_badge(context, line_id, tournament=None):
    tournament = tournament or context.get("tournament")
    if tournament is None or not line_id or line_id not in withdrawn_ids(tournament):
        return ""
    return format_html(' <span class="badge badge-withdrawn">{}</span>', _("withdrawn"))
