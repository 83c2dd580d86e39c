"""Reading private links: selectors return data or None; views decide the HTTP answer."""

from scoresheets.models import PrivateLink


def link_by_token(token: str) -> PrivateLink | None:
    """The link with this token, live or revoked (a revoked one gets its own refusal)."""
    if not token or len(token) > 64:
        return None
    return (
        PrivateLink.objects.select_related("tournament", "line", "match")
        .filter(token=token)
        .first()
    )


def matches_of(link: PrivateLink):
    """The matches a live link may act on: the line's own, in the link's tournament."""
    from django.db.models import Q

    from tournaments.models import Match

    if not link.is_live:
        return Match.objects.none()
    matches = Match.objects.filter(round__stage__tournament_id=link.tournament_id).filter(
        Q(home_id=link.line_id) | Q(away_id=link.line_id)
    )
    if link.match_id is not None:
        matches = matches.filter(pk=link.match_id)
    return matches
