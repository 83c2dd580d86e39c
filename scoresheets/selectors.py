"""Reading private links: selectors return data or None; views decide the HTTP answer."""

import enum
import re
from dataclasses import dataclass

from scoresheets import tokens
from scoresheets.models import PrivateLink, TableReport
from tournaments.services.rows import one_row

# What ``models.new_token`` makes (``secrets.token_urlsafe``: the URL-safe base64 alphabet), with
# room for longer tokens; anything else (a NUL, which PostgreSQL's text refuses, a space, a
# slash) is no token and never reaches the database.
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{16,64}")


def is_token_shaped(token: str) -> bool:
    return bool(token) and TOKEN_SHAPE.fullmatch(token) is not None


def link_by_token(token: str) -> PrivateLink | None:
    """The link with this token, live or revoked (a revoked one gets its own refusal)."""
    if not is_token_shaped(token):
        return None
    # the hash is unique (``one_row``: the default ordering would join and sort five tables on
    # every request of every phone); not its match (a card printed for one table): the phone
    # pages read only its id
    link = one_row(
        PrivateLink.objects.select_related("tournament", "line").filter(
            token_hash=tokens.token_hash(token)
        )
    )
    if link is not None:
        link._token = token  # the URL's own: no need to open the seal
    return link


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


# --------------------------------------------------------------------------- the table's state


class SheetStep(enum.StrEnum):
    """Where a match's sheet stands for one side."""

    ENTER = "enter"  # type the sheet
    ANSWER = "answer"  # the other side's sheet waits for this side's signature
    WAITING = "waiting"  # this side's sheet waits for the other side
    REFEREE = "referee"  # disputed, unanswered, or signed over another result: the referee
    IN_FORCE = "in_force"  # the result is in
    CLOSED = "closed"  # no entry here: the sentence says why


@dataclass
class SheetState:
    """Where a match's sheet stands for one side (``code``, a :class:`SheetStep`), and what that
    side does next (``sentence``)."""

    code: SheetStep
    sentence: str
    report: TableReport | None = None
    other_typing: bool = False


def reports_of(match):
    return list(
        TableReport.objects.filter(match=match)
        .select_related("version", "counter_version")
        .order_by("-updated_at", "-pk")
    )


def reports_by_match(matches) -> dict[int, list[TableReport]]:
    """``reports_of`` for several matches (a line's card) in one query, by match id."""
    found: dict[int, list[TableReport]] = {match.pk: [] for match in matches}
    if found:
        for report in (
            TableReport.objects.filter(match__in=list(found))
            .select_related("version", "counter_version")
            .order_by("-updated_at", "-pk")
        ):
            found[report.match_id].append(report)
    return found


def sheet_state(match, side: str, reports=None) -> SheetState:
    """The state of ``match``'s sheet as ``side`` sees it (read-only: expiry is the service's)."""
    from django.utils.translation import gettext as _

    from scoresheets.services.reports import entry_refusal, for_referee, other_side
    from tournaments.models import Outcome

    State = TableReport.State
    reports = reports_of(match) if reports is None else reports
    if match.outcome == Outcome.BYE:
        return SheetState(SheetStep.CLOSED, _("A bye has no result to enter."))
    for report in reports:
        if for_referee(report):
            return SheetState(
                SheetStep.REFEREE, _("The referee is deciding this match's result."), report
            )
    if match.status == match.Status.DONE:
        return SheetState(SheetStep.IN_FORCE, _("The result is in force."))
    refusal = entry_refusal(match)
    if refusal:
        return SheetState(SheetStep.CLOSED, refusal)
    for report in reports:
        if report.state == State.AWAITING:
            if report.side == side:
                return SheetState(
                    SheetStep.WAITING,
                    _("Your sheet is waiting for the other side's signature."),
                    report,
                )
            return SheetState(
                SheetStep.ANSWER, _("The other side sent its sheet: check it and sign it."), report
            )
    typing = any(r.state == State.DRAFT and r.side == other_side(side) for r in reports)
    return SheetState(SheetStep.ENTER, _("Enter the sheet deal by deal."), None, typing)
