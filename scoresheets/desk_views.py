"""The desk's pages for play at the table: private links, printable cards, the room view.

Access is ``tournaments.access`` through ``access.desk_tournament``: whoever sees the desk sees the
room (``VIEW_DESK``); the links and the line cards show tokens, the credential of a line, so only
those who may enter results see them (``ENTER_RESULTS``, ``access.can_see_links``); issuing,
re-issuing and revoking a link is managing the entries (``MANAGE_ENTRIES``); starting a round's
clock is running the stages (``RUN_STAGES``).
Every change is a POST with its CSRF token; GET pages change nothing (printing the table cards
never issues a link by itself: ``prepare_cards`` does, on the organizer's request).
"""

import logging

from django.contrib import messages
from django.db import transaction
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from scoresheets import room
from scoresheets.addresses import referee_url
from scoresheets.cards import card
from scoresheets.models import PrivateLink
from scoresheets.services import links
from tournaments import selectors as sel
from tournaments.access import Action, desk_login_required, desk_rights, desk_tournament
from tournaments.models import Entry, Match, Round, Stage
from tournaments.services import schedule

logger = logging.getLogger(__name__)


def _int(raw):
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None


def _entries(tournament):
    return list(
        Entry.objects.filter(tournament=tournament)
        .select_related("line")
        .order_by("withdrawn", "seed", "line__name", "pk")
    )


def _live_links(tournament):
    return PrivateLink.objects.filter(tournament=tournament, revoked_at__isnull=True)


# --- the links page -------------------------------------------------------------------------


def _match_order(link: PrivateLink) -> tuple[int, int]:
    """Where a table card's match comes: its stage, then its round."""
    match = link.match
    assert match is not None  # only the links of a match are sorted by it
    return (match.round.stage.order, match.round.number)


@desk_login_required
@require_safe
def links_page(request, slug):
    """Each line with its live link (address, QR code, since when) and its table-card links."""
    tournament = desk_tournament(request, slug, Action.ENTER_RESULTS)
    live = _live_links(tournament).select_related(
        "match__round__stage", "match__home", "match__away", "created_by"
    )
    line_links: dict[int, PrivateLink] = {}
    match_links: dict[int, list[PrivateLink]] = {}
    for link in live:
        if link.match_id is None:
            line_links[link.line_id] = link
        else:
            match_links.setdefault(link.line_id, []).append(link)
    rows = []
    for entry in _entries(tournament):
        line = entry.line
        per_match = sorted(match_links.get(line.pk, []), key=_match_order)
        rows.append(
            {
                "entry": entry,
                "line": line,
                "card": card(request, line_links.get(line.pk)),
                "match_links": per_match,
            }
        )
    context = {
        "tournament": tournament,
        "rows": rows,
        "missing": sum(1 for row in rows if row["card"] is None and not row["entry"].withdrawn),
        "may": desk_rights(request.user, tournament),
    }
    return render(request, "scoresheets/desk/links.html", context)


@desk_login_required
@require_POST
def issue_links(request, slug):
    """Issue the missing line link of one line (``line``) or of every line still in play."""
    tournament = desk_tournament(request, slug, Action.MANAGE_ENTRIES)
    entries = [e for e in _entries(tournament) if not e.withdrawn]
    line_id = _int(request.POST.get("line"))
    if line_id is not None:
        entries = [e for e in _entries(tournament) if e.line_id == line_id]
        if not entries:
            messages.error(request, _("This line does not play in this tournament."))
            return redirect("room:links", slug=tournament.slug)
    before = set(_live_links(tournament).filter(match__isnull=True).values_list("pk", flat=True))
    issued = links.ensure_line_links(tournament, [e.line for e in entries], user=request.user)
    count = sum(1 for link in issued.values() if link.pk not in before)
    messages.success(request, _("Links issued: %(n)d.") % {"n": count})
    anchor = f"#line-{line_id}" if line_id is not None else ""
    return redirect(_links_url(tournament) + anchor)


def _link_from_post(request, tournament):
    link = (
        PrivateLink.objects.filter(tournament=tournament, pk=_int(request.POST.get("link")))
        .select_related("tournament", "line", "match")
        .first()
    )
    if link is None:
        messages.error(request, _("No such link in this tournament."))
    elif not link.is_live:
        messages.error(request, _("This link was already revoked."))
        link = None
    return link


def _back(request, tournament, link):
    """Back where the button was: the round's table cards or the links page."""
    if request.POST.get("next") == "print" and link.match_id:
        return redirect("desk:print", slug=tournament.slug, round_id=link.match.round_id)
    return redirect(_links_url(tournament) + f"#line-{link.line_id}")


def _links_url(tournament):
    return reverse("room:links", kwargs={"slug": tournament.slug})


@desk_login_required
@require_POST
def reissue_link(request, slug):
    """Revoke a link and issue a new one with the same reach (a lost or shared card)."""
    tournament = desk_tournament(request, slug, Action.MANAGE_ENTRIES)
    link = _link_from_post(request, tournament)
    if link is None:
        return redirect("room:links", slug=tournament.slug)
    links.reissue(link, user=request.user)
    messages.success(
        request,
        _("The old link of %(line)s no longer works; print or send the new one.")
        % {"line": link.line.name},
    )
    return _back(request, tournament, link)


@desk_login_required
@require_POST
def revoke_link(request, slug):
    tournament = desk_tournament(request, slug, Action.MANAGE_ENTRIES)
    link = _link_from_post(request, tournament)
    if link is None:
        return redirect("room:links", slug=tournament.slug)
    links.revoke(link, user=request.user)
    messages.success(request, _("Link of %(line)s revoked.") % {"line": link.line.name})
    return _back(request, tournament, link)


# --- printable cards ------------------------------------------------------------------------


@desk_login_required
@require_safe
def line_cards(request, slug):
    """One card per line (several per A4 sheet) with its link's QR code and address.

    ``?line=<id>`` prints one line's card. Lines without a live link get none: the links page
    issues them (a GET never does).
    """
    tournament = desk_tournament(request, slug, Action.ENTER_RESULTS)
    entries = [e for e in _entries(tournament) if not e.withdrawn]
    line_id = _int(request.GET.get("line"))
    if line_id is not None:
        entries = [e for e in _entries(tournament) if e.line_id == line_id]
    live = {
        link.line_id: link
        for link in _live_links(tournament).filter(
            match__isnull=True, line__in=[e.line_id for e in entries]
        )
    }
    cards = [(e.line, card(request, live.get(e.line_id))) for e in entries]
    context = {
        "tournament": tournament,
        "cards": [(line, c) for line, c in cards if c is not None],
        "without": [line for line, c in cards if c is None],
        "countersign_minutes": tournament.countersign_minutes,
    }
    return render(request, "scoresheets/desk/line_cards.html", context)


@desk_login_required
@require_POST
def prepare_cards(request, slug, round_id):
    """Issue the missing per-match links of a round, then show its table cards to print."""
    tournament = desk_tournament(request, slug, Action.MANAGE_ENTRIES)
    round_ = sel.get_round(tournament, round_id)
    matches = Match.objects.filter(round=round_, home__isnull=False, away__isnull=False)
    count = 0
    with transaction.atomic():
        for match in matches.select_related("home", "away"):
            for line in (match.home, match.away):
                assert line is not None  # the query keeps matches with both lines
                if not _live_links(tournament).filter(match=match, line=line).exists():
                    links.link_for(tournament, line, match, user=request.user)
                    count += 1
    messages.success(request, _("Links issued for the table cards: %(n)d.") % {"n": count})
    return redirect("desk:print", slug=tournament.slug, round_id=round_.pk)


# --- the room -------------------------------------------------------------------------------


def _current_rounds(tournament):
    """The round each running stage is playing: its first round with a match not finished,
    else its last round."""
    rounds = []
    stages = tournament.stages.filter(status=Stage.Status.RUNNING).order_by("order")
    for stage in stages:
        stage_rounds = Round.objects.filter(stage=stage).select_related("stage__tournament")
        playing = (
            stage_rounds.filter(
                matches__status__in=[Match.Status.SCHEDULED, Match.Status.IN_PROGRESS],
                matches__home__isnull=False,
                matches__away__isnull=False,
            )
            .order_by("number")
            .first()
        )
        chosen = playing or stage_rounds.order_by("-number").first()
        if chosen is not None:
            rounds.append(chosen)
    return rounds


def _round_view(tournament, round_, now):
    states = room.room_states(round_, now=now)
    for table in states:
        if table.for_referee:
            table.referee_url = referee_url(tournament, table.match_id)
    return {
        "round": round_,
        "tables": room.referee_first(states),
        "counts": room.counts(states),
        "elapsed": now - round_.starts_at if round_.starts_at else None,
    }


def _room(request, tournament, rounds, *, single):
    now = timezone.now()
    context = {
        "tournament": tournament,
        "rounds": [_round_view(tournament, r, now) for r in rounds],
        "single": single,
        "all_rounds": Round.objects.filter(stage__tournament=tournament)
        .select_related("stage")
        .order_by("stage__order", "number"),
        "may": desk_rights(request.user, tournament),
        "now": now,
        "poll_seconds": sel.poll_seconds(),
    }
    if request.headers.get("HX-Request"):
        return render(request, "scoresheets/desk/_room.html", context)
    return render(request, "scoresheets/desk/room.html", context)


@desk_login_required
@require_safe
def room_page(request, slug):
    """The rounds the running stages are playing, table by table."""
    tournament = desk_tournament(request, slug, Action.VIEW_DESK)
    return _room(request, tournament, _current_rounds(tournament), single=False)


@desk_login_required
@require_safe
def room_round(request, slug, round_id):
    """One round, table by table (any round, also a past one)."""
    tournament = desk_tournament(request, slug, Action.VIEW_DESK)
    round_ = sel.get_round(tournament, round_id)
    return _room(request, tournament, [round_], single=True)


@desk_login_required
@require_POST
def start_round(request, slug, round_id):
    """Start the round's clock now (the room counts the time from it); once only."""
    tournament = desk_tournament(request, slug, Action.RUN_STAGES)
    round_ = sel.get_round(tournament, round_id)
    if schedule.start_round(round_, user=request.user):
        messages.success(request, _("%(round)s started.") % {"round": round_})
    else:
        messages.info(request, _("This round had already started."))
    if request.POST.get("next") == "room":
        return redirect("room:current", slug=tournament.slug)
    return redirect("room:round", slug=tournament.slug, round_id=round_.pk)
