"""``{% match_rows matches show_group as rows %}``: a table's match rows, cached one by one
(``public.rows``)."""

from django import template

from public import rows

register = template.Library()


@register.simple_tag(takes_context=True)
def match_rows(context, matches, show_group=False):
    return rows.match_rows(context["tournament"], list(matches), bool(show_group))
