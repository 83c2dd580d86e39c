"""A round's results typed from the slips in one page (*Inserisci i risultati del turno*).

The form reads each table's slip (``desk.forms.RoundResultsForm``); the service saves every
table as the one-match form does, together (``tournaments.services.round_results``). This view
only decides the answer: back to the page when every typed table was saved, else the page again
with the refused tables still typed, each with its reason.
"""

import logging

from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods

from desk.forms import RoundResultsForm
from tournaments import selectors as sel
from tournaments.access import Action, desk_login_required, desk_tournament
from tournaments.services import round_results

logger = logging.getLogger(__name__)


def _table_names(matches):
    return ", ".join(
        str(match.table_number) if match.table_number else f"{match.home.name} – {match.away.name}"
        for match in matches
    )


@desk_login_required
@require_http_methods(["GET", "POST"])
def round_results_page(request, slug, round_id):
    """Every table of the round still without a result, its slip typed in one text box (one
    deal a line); saving keeps the tables refused, with their reasons, and saves the others."""
    tournament = desk_tournament(request, slug, Action.ENTER_RESULTS)
    round_ = sel.get_round(tournament, round_id)
    refusal = round_results.refusal_for_round(round_)
    categories = list(sel.scoring_categories(tournament))
    options = {"categories": categories, "time_limited": bool(tournament.time_limit_s)}
    status = 200
    stale: dict[int, str] = {}
    if request.method == "POST" and not refusal:
        posted = RoundResultsForm.posted_match_ids(request.POST)
        matches = round_results.tables_to_enter(round_, also=posted)
        form = RoundResultsForm(request.POST, matches=matches, **options)
        typed = form.typed_tables()
        outcomes = round_results.enter_round_results(round_, typed, user=request.user)
        by_id = {match.pk: match for match in matches}
        saved = [by_id[o.match_id] for o in outcomes if o.saved or o.unchanged]
        for outcome in outcomes:
            if outcome.stale:
                stale[outcome.match_id] = _stale_sentence(by_id[outcome.match_id], outcome)
            elif outcome.refusal:
                form.refuse(outcome.match_id, outcome.refusal)
        if saved:
            messages.success(
                request,
                ngettext(
                    "Saved: the result of table %(tables)s.",
                    "Saved: the results of %(n)d tables (%(tables)s).",
                    len(saved),
                )
                % {"n": len(saved), "tables": _table_names(saved)},
            )
        refused = [m for m in matches if m.pk in stale or form.has_error(f"t{m.pk}-deals")]
        if not refused:
            return redirect("desk:round-results", slug=tournament.slug, round_id=round_.pk)
        messages.error(
            request,
            ngettext(
                "Not saved: table %(tables)s. Its reason is in its row; correct it and save again.",
                "Not saved: %(n)d tables (%(tables)s). Each one's reason is in its row; correct "
                "them and save again.",
                len(refused),
            )
            % {"n": len(refused), "tables": _table_names(refused)},
        )
        # the tables saved now have a result and leave the page; the others stay as typed
        still = round_results.tables_to_enter(round_, also=[m.pk for m in refused])
        kept = RoundResultsForm(request.POST, matches=still, **options)
        kept.full_clean()
        for match in still:
            name = f"t{match.pk}-deals"
            if form.has_error(name):
                kept.errors[name] = form.errors[name]
        form = kept
        status = 409 if stale else 400
    else:
        form = RoundResultsForm(matches=round_results.tables_to_enter(round_), **options)
    return render(
        request,
        "desk/round_results.html",
        {
            "tournament": tournament,
            "round": round_,
            "refusal": refusal,
            "form": form,
            "rows": [{**row, "stale": stale.get(row["match"].pk, "")} for row in form.rows()],
            "category_labels": [sel.category_label(c) for c in categories],
        },
        status=status,
    )


def _stale_sentence(match, outcome):
    """What came into force on a table while its slip was being typed (nothing was saved)."""
    current = outcome.current
    sheet = current.sheet if current is not None else None
    if not sheet:
        return _(
            "The result of this table changed meanwhile: yours was not saved. Open the table's "
            "page to compare them."
        )
    home, away = sheet["result"]["totals"]
    return _(
        "A result of this table was saved meanwhile (%(home)s %(hp)d – %(ap)d %(away)s, "
        "%(source)s): yours was not saved. Open the table's page to compare them and correct "
        "the result there if yours is right."
    ) % {
        "home": match.home.name,
        "away": match.away.name,
        "hp": home,
        "ap": away,
        "source": current.get_source_display(),
    }
