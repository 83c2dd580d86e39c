"""Template tags for other pages: ``{% rating_chart player %}``, ``{% win_probability match %}``.

{% load ratings_tags %}
{% rating_chart player %}            {# the player's busiest pool #}
{% rating_chart player "pairs" %}
{% win_probability match %}           {# nothing for a bye or an undecided slot #}
{% skill_level player %}              {# "Esperto (1680)" in the busiest pool, or nothing #}
"""

import logging

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from ratings.models import Pool
from ratings.rendering import rating_chart_svg
from ratings.services import queries

logger = logging.getLogger(__name__)
register = template.Library()


@register.simple_tag
def rating_chart(player, pool=None):
    pool = pool or queries.main_pool(player) or Pool.SINGLES
    points = queries.history(player, pool)
    label = dict(Pool.choices).get(pool, pool)
    svg = rating_chart_svg(
        points,
        title=_("Rating history of %(name)s (%(pool)s)") % {"name": player, "pool": label},
        empty_text=_("No rated matches yet."),
    )
    return mark_safe(svg)  # built from numbers and escaped text only


@register.simple_tag
def win_probability(match):
    """Only for a match still to be played: after the result, current ratings already contain
    it and the figure would mislead."""
    if getattr(match, "status", None) == "done":
        return ""
    try:
        probs = queries.match_win_probability(match)
    except Exception:  # a page must render even if the rating cache is being rebuilt
        logger.exception("win probability of match %s", getattr(match, "pk", None))
        return ""
    if probs is None:
        return ""
    home, away = probs
    return format_html(
        '<span class="win-probability" title="{}">{} {}% · {} {}%</span>',
        _("Chance of winning from the ratings (draws not counted)"),
        match.home,
        round(home * 100),
        match.away,
        round(away * 100),
    )


@register.simple_tag
def skill_level(player, pool=None):
    rows = [s for s in queries.player_ratings(player) if s.rating.partner_id is None]
    if pool:
        rows = [s for s in rows if s.rating.pool == pool]
    if not rows:
        return ""
    best = max(rows, key=lambda s: s.rating.games)
    mark = "*" if best.provisional else ""
    return format_html(
        '<span class="skill-level" data-level="{}">{} ({}{})</span>',
        best.level_slug,
        best.level,
        best.display,
        mark,
    )
