"""The players' phone pages (no account: the token in the URL is the credential) and the
referee's page on the desk.

A token nobody issued is a 404; a revoked one gets its own refusal (410: ask the desk for a new
card); a match the link may not act on (``tournaments.access.link_may_act``) is a 404. Every
change goes through ``scoresheets.services.reports``; refusals come back as the service's
sentence, so nothing a phone sends gives a 500 or stores half a sheet.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import uuid
from functools import wraps
from math import ceil
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.db.models import Q
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import is_same_domain
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST
from rest_framework.throttling import SimpleRateThrottle

from scoresheets import keychain, selectors
from scoresheets.models import TableReport
from scoresheets.selectors import SheetStep
from scoresheets.services import offline, reports
from tournaments import selectors as tsel
from tournaments.access import Action, desk_login_required, desk_tournament, link_may_act
from tournaments.exceptions import ResultError, StaleResult, VersionRequired
from tournaments.models import Match, Stage
from tournaments.services import duplicate, results
from tournaments.services.rows import one_row

logger = logging.getLogger(__name__)

MAX_BODY = 40_000


class _LinkThrottle(SimpleRateThrottle):
    """Requests per private link (not per address: a venue's phones share one Wi-Fi address),
    counted in the default cache (locmem on one process, Redis across workers)."""

    scope = "table-link"

    def get_cache_key(self, request, view):
        digest = hashlib.sha256(view.token.encode()).hexdigest()[:32]
        return self.cache_format % {"scope": self.scope, "ident": digest}


class _MissThrottle(SimpleRateThrottle):
    """Unknown tokens per client address (``get_ident``: REMOTE_ADDR, or the proxy's entry in
    X-Forwarded-For behind HTTPS): guessing is limited per address, not only per token. Only
    misses are counted; an address over the limit gets 429 on every phone page, before any
    lookup."""

    scope = "table-link-miss"
    duration: int
    num_requests: int

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def over(self, request) -> bool:
        """Whether the address used up its misses (counts nothing)."""
        self.key = self.get_cache_key(request, None)
        self.history = self.cache.get(self.key, [])
        self.now = self.timer()
        while self.history and self.history[-1] <= self.now - self.duration:
            self.history.pop()
        return len(self.history) >= self.num_requests

    def miss(self, request) -> None:
        # records the miss (up to the limit); no view: the cache key reads only the address
        self.allow_request(request, None)  # type: ignore[arg-type]


def _too_many(wait, *, json_answer):
    wait = max(1, ceil(wait or 1))
    response = _refusal(
        _("Too many requests; try again in %(s)d seconds.") % {"s": wait},
        429,
        json_answer=json_answer,
    )
    response["Retry-After"] = str(wait)
    return response


def _refusal(message, status, *, json_answer):
    """A refusal before the view runs, as the caller reads it: the open sheet's script reads
    JSON (an HTML or text answer would look like a dropped connection to it), a page reads
    text."""
    if json_answer:
        return JsonResponse({"ok": False, "error": str(message)}, status=status)
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


def _throttled(view, *, json_answer=False):
    @wraps(view)
    def wrapped(request, token, *args, **kwargs):
        key = token
        token = keychain.token_for(request, key)
        if not token:
            return _refusal(_no_key_sentence(), 403, json_answer=json_answer)
        misses = _MissThrottle()
        if misses.over(request):
            return _too_many(misses.wait(), json_answer=json_answer)
        throttle = _LinkThrottle()
        # The throttle reads only what ``_LinkThrottle.get_cache_key`` reads of the "view"
        # (its token); the stubs want an APIView.
        if not throttle.allow_request(request, _Token(token)):  # type: ignore[arg-type]
            return _too_many(throttle.wait(), json_answer=json_answer)
        try:
            response = view(request, token, *args, **kwargs)
        except _NoSuchLink:
            misses.miss(request)
            raise Http404("No such link") from None
        link = getattr(request, "table_link", None)
        if link is not None and key == token:  # opened with the token: trade it for the cookie
            keychain.remember(request, response, link.pk, token)
        return response

    return wrapped


def _no_key_sentence():
    return _(
        "This phone does not hold this card's link (the browser's data was cleared, or another "
        "browser): scan the card's QR code again."
    )


class _Token:
    def __init__(self, token):
        self.token = str(token)[:64]


class _Revoked(Exception):
    def __init__(self, link):
        self.link = link


class _NoSuchLink(Http404):
    """A token nobody issued: a 404 that counts against the address (``_MissThrottle``)."""


def _link(token):
    link = selectors.link_by_token(token)
    if link is None:
        raise _NoSuchLink("No such link")
    if not link.is_live:
        raise _Revoked(link)
    return link


def _revoked_page(request, link):
    return render(
        request,
        "scoresheets/revoked.html",
        {"tournament": link.tournament, "line": link.line},
        status=410,
    )


def _with_link(view=None, *, json_answer=False):
    """Resolve the token (404 / 410) and throttle, before the view runs; ``json_answer`` for
    the endpoints the sheet's script calls, so a revoked card or the throttle reaches the
    player as a refusal, not as "no connection"."""
    if view is None:
        return lambda view: _with_link(view, json_answer=json_answer)

    @wraps(view)
    def wrapped(request, token, *args, **kwargs):
        try:
            link = _link(token)
        except _Revoked as revoked:
            if json_answer:
                return _refusal(_revoked_sentence(revoked.link), 410, json_answer=True)
            return _revoked_page(request, revoked.link)
        # a logged-in user (a scorer, a referee, an organizer) acting through a link acts as
        # themselves: the change log and the versions name them (reports.acting_user)
        user = getattr(request, "user", None)
        link.acted_by = user if user is not None and user.is_authenticated else None
        offline.touch(link)
        link.path_key = keychain.path_key(link.pk)
        request.table_link = link
        # the address without the token, which the page puts in the address bar
        request.table_path = request.path.replace(f"/{token}/", f"/{link.path_key}/", 1)
        return view(request, link, *args, **kwargs)

    return _throttled(wrapped, json_answer=json_answer)


# The JSON calls of the sheet's script (check, submit, sync) do without Django's CSRF token.
# That token belongs to the browser's session, not to the card: a login on the same phone, a
# session that ended or a cleared cookie rotates it under a sheet already typed, and a queued
# sheet sent hours later by the service worker carries the token of the page that queued it.
# Django then answers an HTML 403 the outbox cannot read, and the sheet stayed "not sent yet"
# forever. The credential of these calls is the card: its token in the address, or the
# keychain's cookie (HttpOnly, SameSite=Lax, path /p/), which a cross-site request does not
# carry. What CSRF protection is still owed (a cookie is sent by the browser by itself, and a
# desk user's session names who acted) is checked on every call instead, with nothing that
# expires: the call must come from a page of this site (``Origin`` and ``Sec-Fetch-Site``,
# when the browser sends them: every current one does), and must not be a request another
# site's page can make without asking first (a form's or a "simple" request's content types,
# or none; the script sends JSON, which across origins needs a CORS preflight this site never
# grants). docs/security.md, "The sheet's calls and CSRF". The answer forms of the sheet page keep
# Django's token: they are posted from a page just rendered.
_SIMPLE_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain")


def _own_origin(request, origin: str) -> bool:
    """Whether ``origin`` is this site's, as Django's own CSRF check reads it: the address the
    request reached, or one of ``CSRF_TRUSTED_ORIGINS`` (a proxy that passes another host
    name or port than the phone used; ``*.`` for any subdomain). The desk's forms pass that
    check, so the sheet's calls from the same pages must too."""
    if origin == f"{request.scheme}://{request.get_host()}":
        return True
    trusted = settings.CSRF_TRUSTED_ORIGINS
    if origin in trusted:
        return True
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return any(
        is_same_domain(parts.netloc, allowed.netloc.lstrip("*"))
        for allowed in map(urlsplit, (o for o in trusted if "*" in o))
        if allowed.scheme == parts.scheme
    )


def _from_this_site(view):
    """Refuse (403, JSON) a call of the sheet's script that another site's page could have
    made; see the comment above."""

    @wraps(view)
    def wrapped(request, link, *args, **kwargs):
        origin = request.headers.get("Origin")
        fetch_site = request.headers.get("Sec-Fetch-Site")
        content_type = request.content_type.lower()
        if (
            (origin is not None and not _own_origin(request, origin))
            or (fetch_site is not None and fetch_site not in ("same-origin", "none"))
            or content_type in _SIMPLE_TYPES
            # no type at all (a Blob or ArrayBuffer body) is a simple request too; the script
            # always names its JSON
            or not content_type
        ):
            return _refusal(
                _("This request did not come from the score sheet's own page."),
                403,
                json_answer=True,
            )
        return view(request, link, *args, **kwargs)

    return wrapped


def _revoked_sentence(link):
    # the same sentence as scoresheets/revoked.html, so one translation serves both
    return _(
        "The link of this card for “%(line)s” was revoked by the organizers (a lost or "
        "replaced card). Ask the tournament desk for a new card."
    ) % {"line": link.line.name}


def _match(link, match_id) -> Match:
    match = one_row(
        selectors.matches_of(link)
        .filter(pk=match_id)
        # the tournament is the link's, read with it (matches_of filters on it)
        .select_related("round__stage", "home", "away", "group")
    )
    if match is None or not link_may_act(link, match):
        raise Http404("No such match for this link")
    if match.round.stage.tournament_id == link.tournament_id:
        match.round.stage.tournament = link.tournament
    return match


# --------------------------------------------------------------------------- shown sheets


def _categories(tournament):
    return [(c, tsel.category_label(c)) for c in tsel.scoring_categories(tournament)]


def differing_deals(sheet, other) -> set[int]:
    """The positions of the deals where two sheets of one match disagree (points, categories,
    tie-break), a deal only one of them has included: what the referee looks at first."""
    if not sheet or not other:
        return set()
    ours, theirs = sheet.get("deals", []), other.get("deals", [])

    def said(deal):
        return (deal.get("points"), deal.get("breakdown"), bool(deal.get("tiebreak")))

    return {
        index
        for index in range(max(len(ours), len(theirs)))
        if index >= len(ours) or index >= len(theirs) or said(ours[index]) != said(theirs[index])
    }


def _shown_deals(sheet, categories, differing=frozenset()):
    """A version's deals for a read-only sheet: per deal, each side's points and categories,
    and the running totals; ``differing`` marks the deals another sheet tells otherwise."""
    rows: list[dict[str, Any]] = []
    running = [0, 0]
    for deal in (sheet or {}).get("deals", []):
        points = deal["points"]
        running = [running[0] + points[0], running[1] + points[1]]
        rows.append(
            {
                "number": deal.get("number", len(rows)) + 1,
                "points": points,
                "running": list(running),
                "tiebreak": deal.get("tiebreak", False),
                "differs": len(rows) in differing,
                "cells": [
                    (label, deal["breakdown"][0].get(key, 0), deal["breakdown"][1].get(key, 0))
                    for key, label in categories
                    if deal["breakdown"][0].get(key) or deal["breakdown"][1].get(key)
                ],
            }
        )
    return rows


def _sheet_of(version):
    return version.sheet if version is not None else None


def _names(match):
    return (match.home.name if match.home_id else "?", match.away.name if match.away_id else "?")


# --------------------------------------------------------------------------- phone pages


@require_http_methods(["GET"])
@_with_link
def line_page(request, link):
    """The line's matches on its card: round, table, opponent, state, what to do next."""
    # only the line's own matches: a card's cost must not grow with the room (the referee's
    # page and the beat sweep check the whole tournament)
    matches = list(
        selectors.matches_of(link)
        .select_related("round__stage", "home", "away")
        .order_by("round__stage__order", "round__number", "table_number", "pk")
    )
    # the card's sheets in one query; expired ones referred (and read again) only when due
    sheets = selectors.reports_by_match(matches)
    if any(reports.any_due(found, link.tournament) for found in sheets.values()):
        reports.expire_due(matches=selectors.matches_of(link))
        sheets = selectors.reports_by_match(matches)
    rows = []
    for match in matches:
        side = reports.side_of(link, match)
        opponent = match.away if side == Match.Slot.HOME else match.home
        rows.append(
            {
                "match": match,
                "opponent": opponent,
                "state": selectors.sheet_state(match, side, sheets[match.pk]),
                "url": reverse("table:sheet", args=[link.path_key, match.pk]),
            }
        )
    return render(
        request,
        "scoresheets/line.html",
        {"link": link, "tournament": link.tournament, "line": link.line, "rows": rows},
    )


@require_http_methods(["GET", "POST"])
@_with_link
def sheet_page(request, link, match_id):
    """One match's sheet: typed deal by deal, or the other side's to sign or dispute."""
    match = _match(link, match_id)
    tournament = match.round.stage.tournament
    side = reports.side_of(link, match)
    error, status = "", 200
    if request.method == "POST":
        reports.expire_due(match=match)
        action = request.POST.get("action", "")
        report_id = _int(request.POST.get("report"))
        try:
            if action == "accept":
                reports.accept(link, match, report_id=report_id)
                messages.success(request, _("You signed the sheet. Thank you!"))
            elif action == "dispute_signed":
                offline.dispute_signed(link, match, request.POST.get("comment", ""))
                messages.success(request, _("Your objection went to the referee."))
            elif action == "dispute":
                reports.dispute(link, match, request.POST.get("comment", ""), report_id=report_id)
                messages.success(request, _("Your objection went to the referee."))
            else:
                raise ResultError(_("Unknown action."))
            return redirect("table:sheet", token=link.path_key, match_id=match.pk)
        except ResultError as refusal:
            error, status = str(refusal), 400
        match.refresh_from_db()
    state_reports = selectors.reports_of(match)
    if reports.any_due(state_reports, tournament):  # read once; again only when one expired
        reports.expire_due(match=match)
        state_reports = selectors.reports_of(match)
    state = selectors.sheet_state(match, side, state_reports)
    current = results.in_force(match)
    categories = _categories(tournament)
    own = request.GET.get("own") == "1"
    entering = state.code == SheetStep.ENTER or (
        own and state.code in (SheetStep.ANSWER, SheetStep.WAITING)
    )
    shown = None
    if (
        state.code in (SheetStep.ANSWER, SheetStep.WAITING, SheetStep.REFEREE)
        and state.report is not None
    ):
        shown = _sheet_of(state.report.version)
    elif state.code == SheetStep.IN_FORCE:
        shown = _sheet_of(current)
    draft = next(
        (r for r in state_reports if r.side == side and r.state == TableReport.State.DRAFT), None
    )
    own_sheet = state.report.deals if own and state.report and state.report.side == side else []
    entry = {
        "categories": [{"key": k, "label": str(label)} for k, label in categories],
        "deals": (draft.deals if draft else []) or own_sheet,
        "names": list(_names(match)),
        "lines": [match.home_id, match.away_id],
        "side": 0 if side == Match.Slot.HOME else 1,
        "time_limited": bool(tournament.time_limit_s),
        # the engine's referee as data, for the phone to read the sheet offline
        "referee": results.offline_referee(match),
    }
    context = {
        "link": link,
        "tournament": tournament,
        "match": match,
        "side": side,
        "names": _names(match),
        "other_name": _names(match)[1 if side == Match.Slot.HOME else 0],
        "state": state,
        "error": error,
        "entering": entering,
        "shown": _shown_deals(shown, categories) if shown else None,
        "shown_result": (shown or {}).get("result"),
        "categories": categories,
        "entry": entry,
        "entry_json": json.dumps(entry),
        "client_key": uuid.uuid4(),
        "based_on": current.number if current else "",
        "storage_key": f"scopa-table:{match.pk}:{side}",
        "knockout": match.round.stage.kind == Stage.Kind.KNOCKOUT,
        # a duplicate table plays prepared boards as its deals, in this order
        "boards": (
            duplicate.board_numbers_of_match(match)
            if match.round.stage.kind == Stage.Kind.DUPLICATE
            else ()
        ),
        "line_url": reverse("table:line", args=[link.path_key]),
        "signed_here": offline.disputable(link, match, state_reports),
    }
    return render(request, "scoresheets/sheet.html", context, status=status)


def _int(raw):
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None


def _finite(text):
    value = float(text)
    if not math.isfinite(value):  # 1e400: PostgreSQL's jsonb keeps no infinity
        raise ValueError(text)
    return value


def _no_constant(name):
    raise ValueError(name)  # NaN, Infinity: not JSON, and PostgreSQL's jsonb refuses them


def _json_body(request):
    if len(request.body or b"") > MAX_BODY:
        raise ResultError(_("The sheet is too long or not readable."))
    try:
        data = json.loads(request.body or b"{}", parse_float=_finite, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as error:
        # RecursionError: nested deeper than the reader goes, well within MAX_BODY
        raise ResultError(_("The sheet is too long or not readable.")) from error
    if not isinstance(data, dict):
        raise ResultError(_("The sheet is too long or not readable."))
    return data


@csrf_exempt  # the card is the credential: see _from_this_site
@require_POST
@_with_link(json_answer=True)
@_from_this_site
def check_sheet(request, link, match_id):
    """The server's reading of the sheet as typed so far (totals, over, the referee's
    sentence, what the next deal must be); the draft is kept, so the desk sees the table
    entering its result. The sheet's script calls it at the first change and when the typing
    pauses, and reads its refusals; it referees the sheet itself with the port of the engine's
    referee (a page without the port reads the whole answer, after each pause)."""
    match = _match(link, match_id)
    try:
        data = _json_body(request)
        typed = data.get("deals", [])
        reports.keep_draft(link, match, typed)
    except ResultError as refusal:
        return JsonResponse({"ok": False, "error": str(refusal)})
    return JsonResponse(
        reports.sheet_reading(match, typed, time_expired=bool(data.get("time_expired")))
    )


@csrf_exempt  # the card is the credential: see _from_this_site
@require_POST
@_with_link(json_answer=True)
@_from_this_site
def submit_sheet(request, link, match_id):
    """Submit this side's sheet (JSON); the same ``client_key`` again stores nothing."""
    match = _match(link, match_id)
    url = reverse("table:sheet", args=[link.path_key, match.pk])
    try:
        data = _json_body(request)
        submitted = reports.submit(
            link,
            match,
            data.get("deals", []),
            client_key=data.get("client_key", ""),
            time_expired=bool(data.get("time_expired")),
            based_on=data.get("based_on", ""),
        )
    except StaleResult as refusal:
        return JsonResponse({"ok": False, "error": str(refusal), "url": url}, status=409)
    except ResultError as refusal:
        return JsonResponse({"ok": False, "error": str(refusal)}, status=400)
    if submitted.created:
        messages.success(request, _("Sheet sent."))
    return JsonResponse({"ok": True, "created": submitted.created, "url": url})


# --------------------------------------------------------------------------- the referee


def _referee_reports(tournament):
    reports.expire_due(tournament=tournament)
    candidates = (
        TableReport.objects.filter(match__round__stage__tournament=tournament)
        .filter(
            Q(state__in=reports.REFEREE_WAITS)
            | Q(state=TableReport.State.ACCEPTED, version__status="awaiting")
        )
        .select_related(
            "version", "counter_version", "match__home", "match__away", "match__round__stage"
        )
        .order_by("submitted_at", "pk")
    )
    return [report for report in candidates if reports.for_referee(report)]


@desk_login_required
@require_http_methods(["GET", "POST"])
def referee_page(request, slug):
    """Disputed and unanswered sheets, both versions side by side; the referee decides."""
    tournament = desk_tournament(request, slug, Action.DECIDE)
    status = 200
    if request.method == "POST":
        report = (
            TableReport.objects.filter(
                match__round__stage__tournament=tournament, pk=_int(request.POST.get("report"))
            )
            .select_related("match")
            .first()
        )
        try:
            if report is None:
                raise ResultError(_("No such sheet."))
            reports.decide(
                report,
                request.POST.get("choice", ""),
                user=request.user,
                reason=request.POST.get("reason", ""),
                based_on=request.POST.get("based_on"),  # the version in force shown; None: 428
            )
            messages.success(request, _("Decision recorded."))
            return redirect("referee:disputes", slug=tournament.slug)
        except StaleResult as refusal:
            messages.error(request, str(refusal))
            status = 409
        except VersionRequired as refusal:
            messages.error(request, str(refusal))
            status = 428
        except ResultError as refusal:
            messages.error(request, str(refusal))
            status = 400
    categories = _categories(tournament)
    items = []
    for report in _referee_reports(tournament):
        match = report.match
        current = results.in_force(match)
        reported = _sheet_of(report.version)
        # compared with the other side's sheet, or else with the result in force
        other = _sheet_of(report.counter_version) or _sheet_of(current)
        differing = differing_deals(reported, other)
        sides = [
            {
                "label": _("Sheet of %(line)s") % {"line": _side_line(match, report.side)},
                "choice": "reported",
                "deals": _shown_deals(reported, categories, differing),
                "result": (reported or {}).get("result"),
            }
        ]
        if report.counter_version_id:
            sides.append(
                {
                    "label": _("Sheet of %(line)s")
                    % {"line": _side_line(match, reports.other_side(report.side))},
                    "choice": "counter",
                    "deals": _shown_deals(_sheet_of(report.counter_version), categories, differing),
                    "result": (_sheet_of(report.counter_version) or {}).get("result"),
                }
            )
        items.append(
            {
                "report": report,
                "match": match,
                "names": _names(match),
                "sides": sides,
                "in_force": current if current and not current.is_removal else None,
                "based_on": current.number if current else "",
            }
        )
    return render(
        request,
        "scoresheets/referee.html",
        {"tournament": tournament, "items": items},
        status=status,
    )


def _side_line(match, side):
    line = match.home if side == Match.Slot.HOME else match.away
    return line.name if line else "?"


# --------------------------------------------------------------------------- the outbox


@csrf_exempt  # the card is the credential: see _from_this_site
@require_POST
@_with_link(json_answer=True)
@_from_this_site
def sync_sheet(request, link, match_id):
    """One send of a sheet from the phone's outbox (``offline.sync``): answered with where the
    sheet stands. 409: refused for good (the match changed), the phone keeps it for the
    referee; 400: a refusal the player can fix (a wrong code, an impossible sheet); a dropped
    answer is simply sent again with the same key."""
    match = _match(link, match_id)
    try:
        data = _json_body(request)
        synced = offline.sync(
            link,
            match,
            data.get("deals", []),
            client_key=data.get("client_key", ""),
            based_on=data.get("based_on", ""),
            lines=_lines(data.get("lines")),
            time_expired=bool(data.get("time_expired")),
            code=str(data.get("code") or "")[:32],
            queued=bool(data.get("queued")),
        )
    except offline.SheetChanged as refusal:
        return JsonResponse({"ok": False, "error": str(refusal), "keep": True}, status=409)
    except ResultError as refusal:
        return JsonResponse({"ok": False, "error": str(refusal)}, status=400)
    if synced.status == offline.Status.WRONG_CODE:
        return JsonResponse(
            {
                "ok": False,
                "status": synced.status,
                "error": offline.wrong_code_sentence(synced.tries_left),
                "tries_left": synced.tries_left,
            },
            status=400,
        )
    return JsonResponse({"ok": True, "status": synced.status, "created": synced.created})


def _lines(raw):
    """The [home, away] line ids the phone typed against (``None``: an old page, not sent)."""
    if not isinstance(raw, list) or len(raw) != 2:
        return None
    return [_int(value) for value in raw]


@require_http_methods(["GET"])
@_with_link(json_answer=True)
def sheet_status(request, link, match_id):
    """Where the sheet sent with ``?key=`` stands now (the phone polls it while the other line
    has not signed)."""
    no_sheet = JsonResponse({"ok": False, "error": _("No such sheet.")}, status=404)
    try:
        key = uuid.UUID(request.GET.get("key", ""))
    except ValueError:
        _match(link, match_id)  # a match the link may not act on is a 404 whatever the key
        return no_sheet
    # The phone asks every few seconds while it waits: the sheet with its match and versions
    # in one query, the link's rights checked on that match as ``_match`` checks them.
    report = one_row(  # one report at most: unique match and key
        TableReport.objects.filter(match_id=match_id, client_key=key).select_related(
            "match__round__stage", "version", "counter_version"
        )
    )
    if report is None:
        _match(link, match_id)
        return no_sheet
    if not link_may_act(link, report.match):
        raise Http404("No such match for this link")
    match = report.match
    if report.side != reports.side_of(link, match) or report.state == TableReport.State.DRAFT:
        return no_sheet
    return JsonResponse({"ok": True, "status": offline.status_of(report)})


# --------------------------------------------------------------------------- the installable app


def _shell_version() -> str:
    """Changes whenever the service worker's own text or a file of the shell changes, so a new
    release replaces the phones' copies. Hashed again only when one of the files changed (their
    sizes and times): every phone opening its card asks for the service worker."""
    from django.contrib.staticfiles import finders
    from django.template.loader import get_template

    template = get_template("scoresheets/app/sw.js")
    source = template.template.source  # type: ignore[attr-defined]
    paths = [found for name in _SHELL_FILES if (found := finders.find(name))]
    stamp = (
        source,
        tuple((path, os.stat(path).st_mtime_ns, os.stat(path).st_size) for path in paths),
    )
    if _shell_hashed.get("stamp") == stamp:
        return str(_shell_hashed["version"])
    digest = hashlib.sha256()
    digest.update(source.encode())
    for path in paths:
        with open(path, "rb") as handle:
            digest.update(handle.read())
    version = digest.hexdigest()[:12]
    _shell_hashed.update(stamp=stamp, version=version)
    return version


_shell_hashed: dict[str, object] = {}


_SHELL_FILES = (
    "css/site.css",
    "css/table.css",
    "js/site.js",
    "js/table-store.js",
    "js/table-outbox.js",
    "js/sheet-referee.js",
    "js/table-sheet.js",
    "js/table-app.js",
    "img/table-icon.svg",
)


@require_http_methods(["GET"])
def service_worker(request):
    """The service worker of the phone pages, served from ``/p/`` so that its scope is the
    players' pages and nothing else of the site."""
    response = render(
        request,
        "scoresheets/app/sw.js",
        {"version": _shell_version()},
        content_type="text/javascript; charset=utf-8",
    )
    response["Cache-Control"] = "no-cache"
    return response


@require_http_methods(["GET"])
@_with_link
def manifest(request, link):
    """The web app manifest of one link: installed from the home screen, it opens this link."""
    start = reverse("table:line", args=[link.path_key])
    name = f"{link.line.name} · {link.tournament.name}"
    response = render(
        request,
        "scoresheets/app/manifest.webmanifest",
        {
            "name_json": json.dumps(name),
            "short_json": json.dumps(link.line.name[:12]),
            "start_url": start,
            "scope": reverse("table:service-worker").rsplit("/", 1)[0] + "/",
        },
        content_type="application/manifest+json",
    )
    response["Cache-Control"] = "no-store"
    return response
