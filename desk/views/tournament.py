"""The organizer's desk: run the day without the raw admin.

Who gets in and what they may do is ``tournaments.access`` (``desk_tournament``); staff status
alone opens nothing. Every change goes through ``tournaments.services`` (which validate, lock,
and write the ChangeLog); views only read forms and show refusals (``TournamentError``) as
messages, so nothing a user sends gives a 500.
"""

import logging

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from desk.forms import PenaltyForm
from games import selectors as record_selectors
from games import services as record_services
from tournaments import access
from tournaments import selectors as sel
from tournaments.access import Action, desk_login_required, desk_rights, desk_tournament
from tournaments.change_sentences import labelled
from tournaments.exceptions import (
    ClubsApartError,
    ResultError,
    StaleResult,
    TournamentError,
    VersionRequired,
)
from tournaments.models import (
    BoardSet,
    EndRule,
    Match,
    Outcome,
    ResultVersion,
    Round,
    Stage,
)

logger = logging.getLogger(__name__)

MIN_ROWS = 3
MAX_ROWS = 40


class _DryRun(Exception):
    """Raised inside a transaction to roll back a result that was only being checked."""


@desk_login_required
def desk_home(request):
    tournaments = sel.organized_tournaments(request.user)
    return render(
        request,
        "desk/home.html",
        {"tournaments": tournaments, "may_create": access.can_create_tournament(request.user)},
    )


@desk_login_required
def tournament_desk(request, slug):
    tournament = desk_tournament(request, slug)
    stages = sel.desk_stages(tournament)
    rounds: dict[int, list[Round]] = {}
    for round_ in sel.rounds_of(tournament):
        rounds.setdefault(round_.stage_id, []).append(round_)
    from tournaments.services import pairing_jobs

    # (a tournament without stages yet has nothing to follow: no [None] of its own)
    for stage, following in zip(stages, [*stages[1:], None][: len(stages)], strict=True):
        # only a stage that seeds a knock-out asks, when closed, how many lines go on
        stage.seeds_knockout = following is not None and following.kind == Stage.Kind.KNOCKOUT
        stage.round_list = rounds.get(stage.pk, [])
        in_play = _round_in_play(stage)
        stage.missing = _missing_from_round(in_play)
        stage.club_mates = _club_mates_in_round(stage, in_play)
        stage.pairing_job = pairing_jobs.desk_state(stage) if stage.is_paired_by_round else None
    context = {
        "tournament": tournament,
        "stages": stages,
        "missing": sel.missing_results(tournament),
        "submissions": record_selectors.submissions_needing_attention(tournament),
        "decisions": sel.pending_decisions(tournament),
        "changes": labelled(sel.recent_changes(tournament)),
        **_lifecycle_context(tournament, stages),
        "may": desk_rights(request.user, tournament),
        "poll_seconds": sel.poll_seconds(),
    }
    # The live part alone for htmx (public/static/js/live.js refreshes it when the desk
    # socket says so).
    template = (
        "desk/_desk_live.html" if request.headers.get("HX-Request") else "desk/tournament.html"
    )
    return render(request, template, context)


def _round_in_play(stage):
    """The last round of a running Danish, Swiss or Mitchell stage while some of its tables
    still play, else None: what the desk says about the round on the table is about it."""
    if not stage.is_paired_by_round or stage.status == Stage.Status.CLOSED or not stage.round_list:
        return None
    last = stage.round_list[-1]
    if not Match.objects.filter(round=last).exclude(status=Match.Status.DONE).exists():
        return None
    return last


def _missing_from_round(last):
    """Lines due to play but not seated in the round in play (the desk names them)."""
    from tournaments.services import pairing

    return pairing.missing_from_round(last) if last is not None else []


def _club_mates_in_round(stage, last):
    """Club-mates who meet in the round in play of a stage that keeps clubs apart: no pairing
    could keep them apart (the desk names them, also for a round paired by a worker)."""
    from tournaments.services import pairing

    if last is None or not stage.keep_clubs_apart:
        return []
    return pairing.club_meetings(last)


def _missing_message(round_row, missing):
    names = ", ".join(entry.line.name for entry in missing)
    return ngettext(
        "%(names)s is checked in but not paired in %(round)s.",
        "%(names)s are checked in but not paired in %(round)s.",
        len(missing),
    ) % {"names": names, "round": round_row}


def _lifecycle_context(tournament, stages):
    """Changed qualifiers per stage and the knock-out matches they mark (the stage lifecycle)."""
    from tournaments.services import lifecycle
    from tournaments.services.entries import withdrawn_line_ids

    drifts = {}
    for stage in stages:
        drift = lifecycle.qualifier_drift(stage)
        if drift is not None:
            drifts[stage.pk] = drift
        stage.drift = drift
    marked = {c.match.pk for drift in drifts.values() for c in drift.changes}
    return {
        "drifts": list(drifts.values()),
        "marked_ids": marked,
        "any_round": any(stage.n_rounds for stage in stages),
        "withdrawn_ids": withdrawn_line_ids(tournament),
    }


@desk_login_required
@require_POST
def generate_stage(request, slug, stage_id):
    """Create a stage's rounds: groups by seed (snake) and FIDE Berger rounds, or a first-stage
    bracket from the entries' seeds."""
    from tournaments.services import schedule

    tournament = desk_tournament(request, slug, Action.RUN_STAGES)
    stage = sel.get_stage(tournament, stage_id)
    # Regenerating deletes the stage's matches and their results: the organizer confirms it (the
    # scheduler refuses a stage whose matches have submitted records).
    replace = request.POST.get("replace") == "1"
    try:
        if stage.kind == Stage.Kind.DUPLICATE:
            from tournaments.services import duplicate

            duplicate.draw_duplicate(
                stage,
                movement=request.POST.get("movement") or BoardSet.Movement.MITCHELL,
                scoring=request.POST.get("scoring") or BoardSet.Scoring.MATCHPOINTS,
                arrow_switch=request.POST.get("arrow_switch") == "1",
                relay=request.POST.get("relay") == "1",
                # empty: the full movement
                rounds=_positive_int(request.POST.get("rounds"), default=None),
                user=request.user,
                replace=replace,
            )
        elif stage.kind == Stage.Kind.KNOCKOUT:
            # a bracket straight from the entries' seeds (a stage after groups is seeded by
            # closing the groups instead)
            schedule.generate_knockout(
                stage, schedule.seeded_lines(tournament), user=request.user, replace=replace
            )
        elif replace or not stage.groups.exists():
            n_groups = _positive_int(request.POST.get("groups"), default=1)
            schedule.create_groups(stage, n_groups, user=request.user, replace=replace)
        if stage.kind == Stage.Kind.ROUND_ROBIN:
            schedule.generate_round_robin(stage, user=request.user, replace=replace)
    except TournamentError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("Rounds of “%(stage)s” generated.") % {"stage": stage.name})
    return redirect("desk:tournament", slug=tournament.slug)


@desk_login_required
@require_POST
def close_stage(request, slug, stage_id):
    """Close a finished stage; a following knock-out is seeded from its standings."""
    from tournaments.services import schedule

    tournament = desk_tournament(request, slug, Action.RUN_STAGES)
    stage = sel.get_stage(tournament, stage_id)
    per_group = _positive_int(request.POST.get("per_group"), default=2)
    if not request.POST.get("confirm"):
        messages.error(request, _("Tick the box to confirm that the stage is complete."))
        return redirect("desk:tournament", slug=tournament.slug)
    try:
        next_stage = schedule.close_stage(stage, user=request.user, per_group=per_group)
    except TournamentError as error:
        messages.error(request, str(error))
    else:
        text = _("“%(stage)s” closed.") % {"stage": stage.name}
        if next_stage is not None and next_stage.kind == Stage.Kind.KNOCKOUT:
            text += " " + _("“%(next)s” seeded from its standings.") % {"next": next_stage.name}
        messages.success(request, text)
    return redirect("desk:tournament", slug=tournament.slug)


@desk_login_required
@require_POST
def pair_round(request, slug, stage_id):
    """Danish, Swiss, Mitchell: pair the next round from the standings after the last one."""
    from tournaments.services import pairing, pairing_jobs

    tournament = desk_tournament(request, slug, Action.RUN_STAGES)
    stage = sel.get_stage(tournament, stage_id)
    if pairing_jobs.in_worker(stage):
        # a pairing that can take over a second never runs inside the request
        try:
            pairing_jobs.request_round(stage, user=request.user)
        except TournamentError as error:
            messages.error(request, str(error))
        else:
            messages.info(
                request,
                _("The next round of “%(stage)s” is being paired; this page shows when it is.")
                % {"stage": stage.name},
            )
        return redirect("desk:tournament", slug=tournament.slug)
    accept = request.POST.get("accept_meetings") == "1"
    try:
        round_row = pairing.pair_next_round(stage, user=request.user, accept_meetings=accept)
    except ClubsApartError as error:
        # the organizer reads why the clubs cannot all be kept apart, and may pair anyway
        return render(
            request,
            "desk/pair_apart.html",
            {
                "tournament": tournament,
                "stage": stage,
                "reason": str(error),
                "late": bool(error.detail.get("late")),
            },
            status=409,
        )
    except TournamentError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            _("%(round)s of “%(stage)s” paired.") % {"round": round_row, "stage": stage.name},
        )
        missing = pairing.missing_from_round(round_row)
        if missing:
            messages.warning(request, _missing_message(round_row, missing))
    return redirect("desk:tournament", slug=tournament.slug)


@desk_login_required
@require_POST
def review_round(request, slug, round_id):
    """A round flagged after a correction: keep it, or pair it again while it has no result."""
    from tournaments.services import pairing

    tournament = desk_tournament(request, slug, Action.RUN_STAGES)
    round_ = sel.get_round(tournament, round_id)
    try:
        if request.POST.get("decision") == "repair":
            pairing.repair_round(round_, user=request.user)
            messages.success(request, _("%(round)s paired again.") % {"round": round_})
        else:
            pairing.keep_round(round_, user=request.user)
            messages.success(request, _("%(round)s kept as paired.") % {"round": round_})
    except TournamentError as error:
        messages.error(request, str(error))
    return redirect("desk:tournament", slug=tournament.slug)


@desk_login_required
@require_http_methods(["GET", "POST"])
def check_in(request, slug):
    """The check-in list before round 1: the lines not ticked are left out of the draw."""
    from tournaments.services import pairing

    tournament = desk_tournament(request, slug, Action.MANAGE_ENTRIES)
    if request.method == "POST":
        present = {_positive_int(raw, default=0) for raw in request.POST.getlist("present")}
        count = pairing.set_check_in(tournament, present - {0}, user=request.user)
        messages.success(request, _("Check-in saved: %(n)d lines present.") % {"n": count})
        return redirect("desk:checkin", slug=tournament.slug)
    entries = tournament.entries.select_related("line").order_by("seed", "line__name", "id")
    return render(
        request,
        "desk/checkin.html",
        {"tournament": tournament, "entries": entries},
    )


@desk_login_required
def print_round(request, slug, round_id):
    """Table cards and score sheets of a round, laid out for printing (print CSS)."""
    tournament = desk_tournament(request, slug)
    round_ = sel.get_round(tournament, round_id)
    in_round = list(sel.round_matches(round_))
    matches = [m for m in in_round if m.home_id and m.away_id]
    # a line with a bye gets a card too, so it knows it sits out (and where it goes next)
    byes = [m for m in in_round if m.is_bye and m.home_id]
    categories = _categories(tournament)
    if round_.stage.kind == Stage.Kind.MITCHELL:
        from tournaments.services import pairing

        next_seats = pairing.mitchell_next_seats(round_.stage, round_.number)
        for match in [*matches, *byes]:
            match.home_next = next_seats.get(match.home_id)
            match.away_next = next_seats.get(match.away_id)
    bye_stand: tuple[int, ...] = ()
    if round_.stage.kind == Stage.Kind.DUPLICATE:
        bye_stand = _duplicate_table_cards(round_, matches)
    from scoresheets.cards import attach_table_card_links

    # the QR codes are the lines' credentials: only for those who may enter results
    missing_links = False
    if access.can_see_links(request.user, tournament):
        missing_links = attach_table_card_links(request, tournament, matches)
    return render(
        request,
        "desk/print.html",
        {
            "tournament": tournament,
            "round": round_,
            "matches": matches,
            "missing_links": missing_links,
            "may": desk_rights(request.user, tournament),
            "byes": byes,
            "bye_stand": bye_stand,
            "bye_vp": _bye_vp(round_.stage) if byes else None,
            "categories": [(c, _category_label(c)) for c in categories],
            "sheet_rows": range(
                1, 8 if tournament.end_rule == "target" else tournament.end_value + 4
            ),
        },
    )


def _duplicate_table_cards(round_, matches) -> tuple[int, ...]:
    """A duplicate round's table cards: each match learns the boards its table plays and, at a
    relay table, the table it shares them with (``duplicate_boards``, ``relay_with``). Returns
    the boards resting on the bye-stand this round (none without a relay)."""
    from tournaments.algorithms import duplicate_movement
    from tournaments.models import BoardSet
    from tournaments.services import duplicate

    board_set = BoardSet.objects.filter(stage=round_.stage).first()
    if board_set is None:
        return ()
    movement = duplicate.movement_of(board_set)
    if not 1 <= round_.number <= len(movement):
        return ()
    tables = {t.table: t for t in movement[round_.number - 1]}
    for match in matches:
        table = tables.get(match.table_number or 0)
        match.duplicate_boards = table.boards if table else ()
        match.relay_with = table.relay_with if table else None
    if not board_set.relay:
        return ()
    n_tables = len(tables)
    resting = duplicate_movement.relay_sets(n_tables, round_.number)[1]
    return duplicate_movement.set_boards(resting, board_set.boards_per_round)


def _bye_vp(stage):
    """The VP a bye gets in ``stage``, printed on the bye's card (``None`` if it cannot be
    said: a VP table missing)."""
    from tournaments.services import results

    try:
        return results.bye_score(stage)[0]
    except ResultError:
        return None


@desk_login_required
@require_safe
def movement_cards(request, slug, stage_id):
    """A Mitchell or duplicate stage's movement cards: per line, its table and direction in
    every round, and whom it meets (in a duplicate stage also the boards, and the relay),
    laid out for printing (one card a line)."""
    tournament = desk_tournament(request, slug)
    stage = sel.get_stage(tournament, stage_id)
    cards = sel.movement_cards(stage)
    return render(
        request,
        "desk/movement_cards.html",
        {
            "tournament": tournament,
            "stage": stage,
            "cards": cards,
            "duplicate": stage.kind == Stage.Kind.DUPLICATE,
        },
    )


def _positive_int(raw, *, default):
    try:
        value = int(raw)
    except (TypeError, ValueError):
        return default
    return value if value > 0 else default


# --- result entry -----------------------------------------------------------------------------


def _categories(tournament):
    """The variant's breakdown keys under the tournament's options (the engine's registry), so
    hand-entered and verified deals are stored alike."""
    return list(sel.scoring_categories(tournament))


def _category_label(category):
    return sel.category_label(category)


def _blank_row(number, categories):
    return {
        "number": number,
        "home": {"points": "", "cells": [(c, "") for c in categories]},
        "away": {"points": "", "cells": [(c, "") for c in categories]},
        "tiebreak": False,
        "penalty": False,
        "last_capture": "",
    }


def _rows_from_db(deals, categories, n_rows):
    """The form's rows for the deals of the result in force (``deals``, from
    :func:`results.deals_of_version`), in order, then blank ones up to ``n_rows``. By position,
    not by number: a record's numbers skip its void deals, and the form numbers its rows."""
    rows = [_blank_row(i, categories) for i in range(n_rows)]
    for row, deal in zip(rows, deals, strict=False):
        for side, name in enumerate(("home", "away")):
            row[name] = {
                "points": deal.points[side],
                "cells": [(c, deal.breakdown[side].get(c, "")) for c in categories],
            }
        row["tiebreak"] = deal.is_tiebreak
        row["penalty"] = deal.is_penalty
        if deal.last_capture is not None:
            row["last_capture"] = str(deal.last_capture)
    return rows


def _rows_from_post(data, categories, n_rows):
    rows = []
    for i in range(n_rows):
        row = _blank_row(i, categories)
        for side in ("home", "away"):
            row[side] = {
                "points": data.get(f"d{i}-{side}-points", "").strip(),
                "cells": [(c, data.get(f"d{i}-{side}-{c}", "").strip()) for c in categories],
            }
        row["tiebreak"] = bool(data.get(f"d{i}-tiebreak"))
        row["penalty"] = bool(data.get(f"d{i}-penalty"))
        row["last_capture"] = data.get(f"d{i}-last_capture", "")
        rows.append(row)
    return rows


def _is_blank(row):
    return not any(
        row[side]["points"] != "" or any(v != "" for _c, v in row[side]["cells"])
        for side in ("home", "away")
    )


def _number(raw):
    """A typed figure as an int when it is one (``"7"``, ``"-2"``), else unchanged, so the
    service refuses it with its own message (``"²"`` is a digit to ``isdigit`` but no int)."""
    if isinstance(raw, int):
        return raw
    text = str(raw)
    if not text.lstrip("-").isdecimal():
        return raw
    try:
        return int(text)
    except ValueError:  # more digits than int() reads (sys.get_int_max_str_digits)
        return raw


def _deals_payload(rows):
    """Form rows → the ``deals`` list of ``results.enter_result`` (blank rows dropped).

    A side's points may be left empty: they are then the sum of its categories. Anything
    malformed is passed on unchanged so the service refuses it with its own message.
    """
    deals = []
    for row in rows:
        if _is_blank(row):
            continue
        points, breakdown = [], []
        for side in ("home", "away"):
            cells = {c: v for c, v in row[side]["cells"] if v != ""}
            parsed = {}
            for category, value in cells.items():
                parsed[category] = _number(value)
            breakdown.append(parsed)
            raw = row[side]["points"]
            if raw == "":
                numeric = [v for v in parsed.values() if isinstance(v, int)]
                raw = sum(numeric) if len(numeric) == len(parsed) else "?"
            points.append(_number(raw))
        deal = {
            "points": points,
            "breakdown": breakdown,
            "tiebreak": row["tiebreak"],
            "penalty": row["penalty"],
        }
        if row["last_capture"] in ("0", "1"):
            deal["last_capture"] = int(row["last_capture"])
        deals.append(deal)
    return deals


def _offender(match, raw):
    if raw == "home":
        return match.home
    if raw == "away":
        return match.away
    return None


def _summary(match):
    """A sentence about the stored (or dry-run) result, read from the match's MatchResults."""
    results = {r.line_id: r for r in match.results.all()}
    home, away = results.get(match.home_id), results.get(match.away_id)
    if home is None or away is None:
        return ""
    text = _("%(home)s %(hp)d – %(ap)d %(away)s: MP %(hmp)d / %(amp)d, VP %(hvp)d – %(avp)d.") % {
        "home": match.home.name,
        "away": match.away.name,
        "hp": home.points,
        "ap": away.points,
        "hmp": home.mp,
        "amp": away.mp,
        "hvp": home.vp,
        "avp": away.vp,
    }
    if home.points == away.points and match.winner_id in (match.home_id, match.away_id):
        # level points with a winner: the last capture of a level third tie-break deal lost it
        winner, loser = (
            (match.home, match.away)
            if match.winner_id == match.home_id
            else (match.away, match.home)
        )
        text += " " + _(
            "%(winner)s wins: the third tie-break deal ended level, and %(loser)s made its last "
            "capture, which loses it under the rules."
        ) % {"winner": winner.name, "loser": loser.name}
    return text


def _try_result(match, deals, outcome, offender, user, *, dry_run, time_expired=False, **save):
    """Run ``save_result``; on a dry run, roll everything back. Returns (summary, created)."""
    from tournaments.services import results

    try:
        with transaction.atomic():
            saved = results.save_result(
                match,
                deals,
                outcome=outcome,
                offender=offender,
                user=user,
                time_expired=time_expired,
                **({} if dry_run else save),
            )
            summary = _summary(Match.objects.prefetch_related("results").get(pk=match.pk))
            if saved.dropped:
                summary += " " + ngettext(
                    "The last deal of the earlier result was left out: the corrected match "
                    "was over before it.",
                    "The last %(n)d deals of the earlier result were left out: the corrected "
                    "match was over before them.",
                    saved.dropped,
                ) % {"n": saved.dropped}
            if dry_run:
                raise _DryRun(summary)
    except _DryRun as check:
        return str(check), False
    return summary, saved.created


def _sheet_summary(match, version):
    """A sentence about one version's result, for showing two versions side by side."""
    if version is None:
        return _("No result.")
    if version.sheet is None:
        return _("Result deleted.")
    result = version.sheet["result"]
    home, away = result["totals"]
    return _("%(home)s %(hp)d – %(ap)d %(away)s (%(outcome)s, %(deals)d deals).") % {
        "home": match.home.name if match.home_id else "?",
        "away": match.away.name if match.away_id else "?",
        "hp": home,
        "ap": away,
        "outcome": Outcome(version.sheet["outcome"]).label,
        "deals": len(version.sheet["deals"]),
    }


def _default_rows(tournament, categories, knockout):
    """Deal rows a blank form starts with: enough for the match as the tournament plays it.

    A match to T points takes at most about 2T / p deals, p being the points every deal gives
    out besides scope (one per category other than scope); over N deals, N rows (and the
    knock-out's tie-break deals).
    """
    if tournament.end_rule == EndRule.DEALS:
        rows = tournament.end_value + (3 if knockout else 0)
    else:
        per_deal = max(1, len([c for c in categories if c != "scope"]))
        rows = -(-(2 * tournament.end_value - 1) // per_deal)
    return max(MIN_ROWS, min(rows, MAX_ROWS))


def _result_editable(match):
    """Why a result cannot be entered here (a sentence), or ``""`` when it can."""
    from tournaments.services import results

    return results.entry_refusal(match)


def _ended_by_time(match, tournament):
    """Whether a stored result of a time-limited match was won without reaching the target
    (so time ran out), for showing the box ticked when the result is corrected."""
    if not tournament.time_limit_s or match.outcome != Outcome.COMPLETED:
        return False
    winner = next((r for r in match.results.all() if r.line_id == match.winner_id), None)
    return winner is not None and winner.points < tournament.end_value


def _decide(request, match, based_on):
    """Accept or reject the version named in the POST; returns an error sentence or ``""``."""
    from tournaments.services import results

    version = ResultVersion.objects.filter(
        match=match, pk=_positive_int(request.POST.get("version"), default=0)
    ).first()
    if version is None:
        return _("No such version of this result.")
    accept = request.POST["action"] == "accept"
    decide = results.accept_version if accept else results.reject_version
    reason = request.POST.get("reason", "").strip()[:2000]
    decide(version, user=request.user, based_on=based_on, reason=reason)
    if request.POST["action"] == "accept":
        messages.success(
            request, _("Version %(n)d is now the result in force.") % {"n": version.number}
        )
    else:
        messages.success(request, _("Version %(n)d rejected.") % {"n": version.number})
    return ""


def _verify_again(request, match, _based_on):
    """Send one of the match's record submissions back to the verifier; returns an error
    sentence or ``""``."""
    submission = record_selectors.match_submission(
        match, _positive_int(request.POST.get("submission"), default=0)
    )
    if submission is None:
        return _("No such record submission of this match.")
    record_services.rerun_verification(submission)
    messages.success(
        request,
        _("Record version %(n)d sent back to verification.") % {"n": submission.version},
    )
    return ""


DECISIONS = ("accept", "reject", "rerun")


def _board_rulings(match, can_decide):
    """A duplicate match's boards on its desk page, each with the director's ruling if any, and
    the form to give one (to those who decide)."""
    from desk.forms import BoardRulingForm
    from tournaments.models import BoardAdjustment
    from tournaments.services import duplicate

    boards = duplicate.board_numbers_of_match(match)
    if not boards:
        return {"duplicate_boards": []}
    rulings = {a.board: a for a in BoardAdjustment.objects.filter(match=match)}
    return {
        "duplicate_boards": [(number, rulings.get(number)) for number in boards],
        "ruling_form": (
            BoardRulingForm(match=match, boards=boards) if can_decide and match.away_id else None
        ),
    }


@desk_login_required
@require_http_methods(["GET", "POST"])
def enter_result(request, slug, match_id):
    """Enter, correct or delete a result deal by deal, and decide on versions waiting for the
    organizer; ``check`` validates without saving (htmx). Every save names the version it was
    based on, so a save over someone else's newer one is refused (409) and shows both."""
    from tournaments.services import results

    deciding = request.method == "POST" and request.POST.get("action") in DECISIONS
    if deciding:
        tournament = desk_tournament(request, slug, Action.DECIDE)
    elif request.method == "POST":
        tournament = desk_tournament(request, slug, Action.ENTER_RESULTS)
    else:  # the page: for those who enter results and for referees who decide on versions
        tournament = desk_tournament(request, slug, Action.VIEW_DESK)
        if not (
            access.can_manage(request.user, tournament, Action.ENTER_RESULTS)
            or access.can_manage(request.user, tournament, Action.DECIDE)
        ):
            raise PermissionDenied(_("You may not enter or decide results in this tournament."))
    match = sel.desk_match(tournament, match_id)
    categories = _categories(tournament)
    knockout = match.round.stage.kind == Stage.Kind.KNOCKOUT
    not_editable = _result_editable(match)
    current = results.in_force(match)
    error, summary, stale, reason = "", "", None, ""
    confirm_delete = False
    based_on = current.number if current else ""
    status = 200
    if request.method == "POST":
        action = request.POST.get("action", "save")
        n_rows = min(_positive_int(request.POST.get("rows"), default=MIN_ROWS), MAX_ROWS)
        rows = _rows_from_post(request.POST, categories, n_rows)
        outcome = request.POST.get("outcome", Outcome.COMPLETED)
        offender_side = request.POST.get("offender", "")
        dry_run = action == "check"
        time_expired = bool(tournament.time_limit_s and request.POST.get("time_expired"))
        # the version in force the form was read at ("": none); a POST without the field
        # names none and changes nothing (VersionRequired), never "don't check"
        based_on = request.POST.get("based_on")
        reason = request.POST.get("reason", "").strip()[:2000]
        try:
            if not_editable:
                raise ResultError(not_editable)
            if not dry_run:
                results.named_version(based_on)
            if action in DECISIONS:
                error = (_verify_again if action == "rerun" else _decide)(request, match, based_on)
                if not error:
                    return redirect("desk:match", slug=tournament.slug, match_id=match.pk)
            elif action == "delete" and not request.POST.get("confirm_delete"):
                # a deletion is asked once more, on its own, before anything is changed
                confirm_delete = True
            elif action == "delete":
                saved = results.delete_result(
                    match, user=request.user, reason=reason, based_on=based_on, reason_required=True
                )
                if saved.created:
                    messages.success(request, _("Result deleted."))
                return redirect("desk:match", slug=tournament.slug, match_id=match.pk)
            else:
                summary, created = _try_result(
                    match,
                    _deals_payload(rows),
                    outcome,
                    _offender(match, offender_side),
                    request.user,
                    dry_run=dry_run,
                    time_expired=time_expired,
                    based_on=based_on,
                    reason=reason,
                    reason_required=True,
                )
        except StaleResult as refusal:
            error, stale = str(refusal), refusal.current
            status = 409
        except VersionRequired as refusal:
            error, status = str(refusal), 428
        except TournamentError as refusal:
            error = str(refusal)
            status = 400
        if request.headers.get("HX-Request") and dry_run:
            return render(
                request,
                "desk/_feedback.html",
                {"error": error, "summary": summary, "checked": True},
            )
        if not error and not dry_run and not confirm_delete:
            if created:
                messages.success(request, _("Result saved. %(summary)s") % {"summary": summary})
            else:
                messages.info(request, _("Nothing changed: this result is already in force."))
            return redirect("desk:match", slug=tournament.slug, match_id=match.pk)
    else:
        deals = results.deals_of_version(match, current)
        n_rows = max(len(deals) + 1, _default_rows(tournament, categories, knockout))
        n_rows = min(_positive_int(request.GET.get("rows"), default=n_rows), MAX_ROWS)
        rows = _rows_from_db(deals, categories, n_rows)
        outcome = match.outcome or Outcome.COMPLETED
        offender_side = (
            "home"
            if match.offender_id and match.offender_id == match.home_id
            else "away"
            if match.offender_id
            else ""
        )
        time_expired = _ended_by_time(match, tournament)
    versions = sel.match_versions(match)
    in_force_now = next((v for v in versions if v.status == ResultVersion.Status.IN_FORCE), None)
    for version in versions:
        version.summary = _sheet_summary(match, version)
    if stale is not None or status in (409, 428):
        # the form keeps the user's entry; the next save is based on what is in force now
        based_on = in_force_now.number if in_force_now else ""
    can_decide = access.can_manage(request.user, tournament, Action.DECIDE)
    rules = list(tournament.penalty_rules.all()) if can_decide else []
    context = {
        "tournament": tournament,
        "match": match,
        "rows": rows,
        "n_rows": len(rows),
        "more_rows": min(len(rows) + 2, MAX_ROWS),
        "max_rows": MAX_ROWS,
        "categories": [(c, _category_label(c)) for c in categories],
        "knockout": knockout,
        "outcome": outcome,
        "offender": offender_side,
        "time_limited": bool(tournament.time_limit_s),
        "time_expired": time_expired,
        "outcomes": [(value, label) for value, label in Outcome.choices if value != Outcome.BYE],
        "error": error,
        "summary": summary,
        "submissions": record_selectors.match_submissions(match),
        "can_decide": can_decide,
        "penalties": sel.match_penalties(match),
        "penalty_form": (
            PenaltyForm(match=match, rules=rules)
            if can_decide and rules and match.away_id
            else None
        ),
        **_board_rulings(match, can_decide),
        "stage_closed": match.round.stage.status == Stage.Status.CLOSED,
        "not_editable": not_editable,
        "versions": versions,
        "in_force": in_force_now,
        "in_force_summary": _sheet_summary(match, in_force_now),
        "awaiting": [v for v in versions if v.status == ResultVersion.Status.AWAITING],
        "stale": status == 409,
        "based_on": based_on,
        "reason": reason,
        "has_result": match.status == Match.Status.DONE and not match.is_bye,
        "confirm_delete": confirm_delete,
    }
    return render(request, "desk/match.html", context, status=status)
