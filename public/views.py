"""Public pages for players and spectators: no login, tournaments marked public only.

Each page renders a cached fragment (see ``caching``) inside the site layout. htmx polls the
fragment alone (``HX-Request`` header) while a tournament is running, so pages update live.
"""

import logging

from django.http import HttpResponse, HttpResponseNotModified
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from games import selectors as record_selectors
from public import caching
from tournaments import selectors as sel
from tournaments.models import Match, Round, Stage, Tournament, engine_lang
from tournaments.rendering.bracket import BracketMatch, bracket_svg
from tournaments.rendering.cards import deck_faces

logger = logging.getLogger(__name__)


def _page(request, tournament, name, build, *args, extra=None):
    """Serve a cached fragment: whole page, or the fragment alone for htmx; ETag aware.

    ``build()`` returns ``(title, html)``, or ``(title, html, True)`` for a page whose live
    content is only match rows that a pushed result replaces in place (``public.rows``; every
    other live page fetches itself). It does every lookup itself (raising 404), so a
    cached page costs only the tournament query; an anonymous visitor's next request for the
    same page is served from the cache without it (``caching.from_cache``).
    """
    stamp = caching.stamp_of(tournament)
    etag = caching.etag_for(stamp, request)
    if caching.not_modified(request, etag):
        return caching.mark_cacheable(request, HttpResponseNotModified(), etag, stamp.version)
    kept = caching.kept_answer(request, tournament.slug, stamp, etag)
    if kept is not None:  # the stamp from the database, the rest from the cache
        return kept
    fragment = caching.cached_fragment(stamp, name, build, *args)
    title, html, *patchable = fragment.value
    if request.headers.get("HX-Request"):
        response = HttpResponse(html)
    else:
        context = {
            "tournament": tournament,
            "fragment": html,
            "page_title": title,
            "live": tournament.status == Tournament.Status.RUNNING,
            "live_version": fragment.version,
            "live_patch": bool(patchable and patchable[0]),
            "poll_seconds": sel.poll_seconds(),
            **(extra or {}),
        }
        response = render(request, "public/page.html", context)
    if not fragment.fresh:
        return caching.mark_not_cacheable(response, fragment.version)
    caching.keep_answer(request, tournament.slug, stamp, etag, response)
    return caching.mark_cacheable(request, response, etag, stamp.version)


@require_safe
def tournament_list(request):
    tournaments = sel.public_tournaments(request.user)
    return render(request, "public/list.html", {"tournaments": tournaments})


@require_safe
@caching.from_cache
def tournament_home(request, slug):
    tournament = sel.public_tournament(slug, request.user)

    def build():
        current = sel.current_round(tournament)
        context = {
            "tournament": tournament,
            "stages": sel.stages_with_groups(tournament),
            "current_round": current,
            "next_matches": sel.next_matches(current),
            "latest": sel.latest_results(tournament),
        }
        return tournament.name, render_to_string("public/_home.html", context)

    return _page(request, tournament, "home", build)


@require_safe
@caching.from_cache
def podium_page(request, slug):
    """The final ranking (overall or one category's) and who gets each prize."""
    tournament = sel.public_tournament(slug, request.user)
    category = request.GET.get("category", "")[:60]

    def build():
        data = sel.podium(tournament, category)
        html = render_to_string("public/_podium.html", {"tournament": tournament, "podium": data})
        title = _("Podium")
        if data.category:
            title = f"{title}: {data.categories_label}"
        return title, html

    return _page(request, tournament, "podium", build, category)


@require_safe
@caching.from_cache
def stage_page(request, slug, stage_id):
    """A round-robin stage: every group's standings; a knock-out stage: its bracket."""
    tournament = sel.public_tournament(slug, request.user)

    def build():
        stage = sel.get_stage(tournament, stage_id)
        if stage.kind == Stage.Kind.KNOCKOUT:
            return stage.name, _bracket_fragment(tournament, stage)
        tables = sel.stage_standings_tables(stage, tournament)
        return stage.name, render_to_string(
            "public/_stage.html",
            {
                "tournament": tournament,
                "stage": stage,
                "tables": tables,
                "rounds": sel.stage_rounds(stage),
                "directions": sel.direction_tables(stage, tables),
                "field": sel.field_tables(stage, tables),
                "board_set": sel.stage_board_set(stage),
                "ranking": sel.qualifying_ranking(stage, tournament),
                "words": sel.stage_words(stage, tournament),
            },
        )

    return _page(request, tournament, "stage", build, stage_id)


@require_safe
@caching.from_cache
def board_page(request, slug, stage_id, number):
    """A duplicate board's traveller: every table's result on it and each line's score against
    the field; 404 while some table holding it has not played it (its cards are secret)."""
    tournament = sel.public_tournament(slug, request.user)

    def build():
        stage = sel.get_stage(tournament, stage_id)
        data = sel.board_traveller(stage, number)
        with_replay = record_selectors.matches_with_replay(
            [row["match"].pk for row in data["rows"] if row["match"]]
        )
        for row in data["rows"]:
            row["replay"] = row["match"] is not None and row["match"].pk in with_replay
        html = render_to_string(
            "public/_board.html", {"tournament": tournament, "stage": stage, **data}
        )
        return f"{stage.name} – " + _("Board %(n)d") % {"n": number}, html

    return _page(request, tournament, "board", build, stage_id, number)


@require_safe
@caching.from_cache
def stage_line_page(request, slug, stage_id, line_id):
    """A line's boards in a duplicate stage, each with its score against the field."""
    tournament = sel.public_tournament(slug, request.user)

    def build():
        stage = sel.get_stage(tournament, stage_id)
        data = sel.line_boards(stage, line_id)
        html = render_to_string(
            "public/_line_boards.html", {"tournament": tournament, "stage": stage, **data}
        )
        return f"{stage.name} – {data['line'].name}", html

    return _page(request, tournament, "stage-line", build, stage_id, line_id)


@require_safe
@caching.from_cache
def group_page(request, slug, group_id):
    tournament = sel.public_tournament(slug, request.user)

    def build():
        group = sel.get_group(tournament, group_id)
        table = sel.group_standings_table(group, tournament)
        html = render_to_string(
            "public/_group.html",
            {"tournament": tournament, "group": group, "table": table, "with_grid": True},
        )
        return f"{group.stage.name} – {group.name}", html

    return _page(request, tournament, "group", build, group_id)


@require_safe
@caching.from_cache
def round_page(request, slug, round_id):
    tournament = sel.public_tournament(slug, request.user)

    def build():
        round_ = sel.get_round(tournament, round_id)
        html = render_to_string(
            "public/_round.html",
            {
                "tournament": tournament,
                "round": round_,
                "matches": sel.round_matches(round_, public=True),
            },
        )
        # a knock-out result also names a later round's players: those pages fetch themselves
        patchable = round_.stage.kind != Stage.Kind.KNOCKOUT
        return f"{round_.stage.name} – {round_}", html, patchable

    return _page(request, tournament, "round", build, round_id)


def _score(result):
    return "" if result is None else str(result.points)


def _bracket_fragment(tournament, stage):
    """Knock-out rounds as plain data → SVG, plus an accessible list of the same matches."""
    matches = sel.knockout_matches(stage)
    by_round: dict[int, tuple[Round, list[Match]]] = {}
    third = None
    for match in matches:
        if match.is_third_place:
            third = match
            continue
        by_round.setdefault(match.round_id, (match.round, []))[1].append(match)

    def box(match):
        return BracketMatch(
            home=match.home.name if match.home else None,
            away=match.away.name if match.away else (_("bye") if match.is_bye else None),
            home_score=_score(match.home_result),
            away_score=_score(match.away_result),
            winner=(
                "home"
                if match.winner_id and match.winner_id == match.home_id
                else "away"
                if match.winner_id and match.winner_id == match.away_id
                else None
            ),
            tiebreak=bool(match.has_tiebreak),
            note=(_("table %(n)s") % {"n": match.table_number}) if match.table_number else "",
            href=reverse("public:match", args=[tournament.slug, match.pk]),
        )

    rounds = [(str(round_), [box(m) for m in ms]) for round_, ms in by_round.values()]
    svg = bracket_svg(
        rounds,
        third_place=box(third) if third else None,
        title=_("Bracket of %(stage)s") % {"stage": stage.name},
        labels={
            "tbd": _("to be decided"),
            "tiebreak": _("decided by tie-break deals"),
            "third_place": _("Third place"),
        },
    )
    return render_to_string(
        "public/_bracket.html",
        {
            "tournament": tournament,
            "stage": stage,
            "svg": svg,
            "matches": matches,
            "words": sel.stage_words(stage, tournament),
        },
    )


@require_safe
@caching.from_cache
def match_page(request, slug, match_id):
    tournament = sel.public_tournament(slug, request.user)

    def build():
        match = sel.get_match(tournament, match_id, public=True)
        secret = sel.secret_deal_numbers(match)
        if match.withheld:  # a table still secret shows as not played: no deal at all
            secret |= {row["number"] for row in sel.match_deals(match)}
        deals = [row for row in sel.match_deals(match) if row["number"] not in secret]
        categories = sel.breakdown_categories(deals, tournament.variant, tournament.options)
        for row in deals:
            for side in ("home", "away"):
                deal = row[side]
                breakdown = (deal.breakdown or {}) if deal else {}
                row[f"{side}_cells"] = [breakdown.get(c, 0) for c in categories]
        timeline, faces, replay_error = None, None, ""
        submission = record_selectors.standing_submission(match)
        if submission is not None and secret:
            # a duplicate table's cards stay secret until every table has played its boards
            replay_error = _("The replay is shown once every table has played this match's boards.")
        elif submission is not None:
            timeline, replay_error = _timeline(submission)
            if timeline:
                lang = "en" if (get_language() or "").startswith("en") else "it"
                faces = deck_faces(tournament.deck_style, lang=lang)
        context = {
            "tournament": tournament,
            "match": match,
            "deals": deals,
            "secret_deals": len(secret),
            "categories": categories,
            "category_labels": [_category_label(c) for c in categories],
            "submission": submission,
            "timeline": timeline,
            "faces": faces,
            "replay_error": replay_error,
            "penalties": sel.match_penalties(match),
            "options": _options_shown(tournament, submission),
            "time_limit": _time_limit(tournament),
            "seats": _seat_names(submission),
        }
        title = f"{match.home or '–'} – {match.away or '–'}"
        return title, render_to_string("public/_match.html", context)

    return _page(request, tournament, "match", build, match_id, extra={"with_replay": True})


def _category_label(category):
    return sel.category_label(category)


def _options_shown(tournament, submission):
    """The rule options in force that apply to the match's variant, as recorded with the match
    (or the tournament's), labelled by the engine's registry: ``[(label, value)]`` where value
    is a bool or the choice's label. The deck style is shown with the deck above."""
    from scopa.variants import options_shown

    options = dict(tournament.options or {})
    variant = tournament.variant
    if submission is not None and isinstance(submission.document, dict):
        recorded = submission.document.get("options")
        if isinstance(recorded, dict):
            options.update(recorded)
        variant = submission.document.get("variant") or variant
    return [
        (option.label, option.raw if isinstance(option.raw, bool) else option.value)
        for option in options_shown(str(variant), options, engine_lang())
    ]


def _time_limit(tournament):
    """The match time limit as a page shows it (``60 min``), or empty without one."""
    seconds = tournament.time_limit_s
    if not seconds:
        return ""
    return f"{seconds // 60} min" if seconds % 60 == 0 else f"{seconds} s"


def _seat_names(submission):
    document = submission.document if submission is not None else None
    seats = document.get("seats") if isinstance(document, dict) else None
    return [str(s) for s in seats] if isinstance(seats, list) else []


def _timeline(submission):
    """The engine's play-by-play snapshots of a verified record; (None, reason) if unavailable."""
    try:
        from scopa import parse_record, replay_timeline
    except ImportError:
        return None, _("The replay is not available yet.")
    try:
        record = parse_record(submission.document)
        return replay_timeline(record), ""
    except Exception:  # a stored record the engine cannot replay must not break the page
        logger.exception("replay of submission %s failed", submission.pk)
        return None, _("This record cannot be replayed.")


@require_safe
def player_page(request, player_id):
    player = sel.get_player(player_id, request.user)
    lines = sel.player_lines(player, request.user)
    results = sel.public_results_for_lines([line.pk for line in lines], request.user)
    return render(
        request,
        "public/player.html",
        {
            "player": player,
            "lines": lines,
            "results": results,
            "totals": sel.totals_by_tournament(results),
        },
    )


@require_safe
def line_page(request, line_id):
    line = sel.get_line(line_id, request.user)
    results = sel.public_results_for_lines([line.pk], request.user)
    return render(
        request,
        "public/line.html",
        {"line": line, "results": results, "totals": sel.totals_by_tournament(results)},
    )
