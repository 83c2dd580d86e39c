"""Whether a readable record can be this match's record: same seats, variant, options, end and
knock-out flag as its tournament, and seats that name the match's own lines."""

import json
import logging

from django.conf import settings
from django.db import connection
from django.utils.translation import get_language
from django.utils.translation import gettext as _

import scopa
from games.exceptions import MatchNotReady, RecordMismatch
from games.services.documents import MATCH_FIELD, parse, record_body
from tournaments.models import Entry, LineMember, Match, Outcome, Player, Stage
from tournaments.services import duplicate

logger = logging.getLogger(__name__)

# Which rule options act on which variants (None: all). Options that only change how cards look
# (deck_style) are not compared; an option of another variant has no effect and is not compared.
_OPTION_VARIANTS = {
    "rebello": {"scopa", "scopa-d-assi"},
    "napola": {"scopa", "scopa-d-assi"},
    "primiera_missing_suit": {"scopa", "scopa-d-assi"},
    "void_three_kings": {"scopa", "scopa-d-assi"},
    "forced_capture": {"scopa-15"},
    "carte_viste": None,
    "carte_scoperte": None,
}
_NOT_COMPARED = {"deck_style"}


def effective_options(variant: str, options: dict | None) -> dict:
    """The options that act on ``variant``, defaults filled in, for comparing two rule sets."""
    merged = {**scopa.DEFAULT_OPTIONS.get(variant, {}), **(options or {})}
    return {
        name: value
        for name, value in merged.items()
        if name not in _NOT_COMPARED
        and ((applies := _OPTION_VARIANTS.get(name)) is None or variant in applies)
    }


def check_record_fits(match: Match, document: dict, by_ident=None) -> None:
    """Raise unless ``document`` is a readable record that can be ``match``'s record.

    ``by_ident``: the seat names' lines (``seat_lines``) when the caller read them for a batch.
    """
    claimed = document.get(MATCH_FIELD)
    if claimed is not None and str(claimed) != str(match.pk):
        raise RecordMismatch(
            _("The record names match %(claimed)s, but it was submitted to match %(match)s.")
            % {"claimed": claimed, "match": match.pk},
            code="wrong_match",
            field=MATCH_FIELD,
        )
    if match.home_id is None or match.away_id is None or match.outcome == Outcome.BYE:
        raise MatchNotReady()
    parse(document)
    record = record_body(document)
    tournament = match.round.stage.tournament

    seats = record.get("seats") or []
    if len(seats) != tournament.seats:
        raise RecordMismatch(
            _("The record has %(got)d seats; matches of this tournament have %(want)d.")
            % {"got": len(seats), "want": tournament.seats},
            code="seats_mismatch",
            field="seats",
        )
    variant = record.get("variant")
    if variant != tournament.variant:
        raise RecordMismatch(
            _("The record plays %(got)s; this tournament plays %(want)s.")
            % {"got": variant, "want": tournament.variant},
            code="variant_mismatch",
            field="variant",
        )
    got_options = effective_options(variant, record.get("options"))
    want_options = effective_options(variant, tournament.options)
    if got_options != want_options:
        differ = sorted(
            k
            for k in got_options.keys() | want_options.keys()
            if got_options.get(k) != want_options.get(k)
        )
        raise RecordMismatch(
            _("The record's rule options differ from the tournament's: %(names)s.")
            % {"names": ", ".join(differ)},
            code="options_mismatch",
            field="options",
            detail={"record": got_options, "tournament": want_options},
        )
    got_end = record.get("end") or {}
    want_end = tournament.match_end()
    if got_end != want_end:
        raise RecordMismatch(
            _("The record ends with %(got)s; this tournament's matches end with %(want)s.")
            % {"got": json.dumps(got_end), "want": json.dumps(want_end)},
            code="end_mismatch",
            field="end",
        )
    knockout = bool(record.get("knockout", False))
    if knockout != match.round.stage.is_knockout:
        raise RecordMismatch(
            _("The record says knockout=%(got)s, but this match is %(kind)s.")
            % {
                "got": str(knockout).lower(),
                "kind": _("a knock-out match") if not knockout else _("not a knock-out match"),
            },
            code="knockout_mismatch",
            field="knockout",
        )
    if by_ident is None:
        by_ident = seat_lines(tournament, seat_idents(seats), [match.home_id, match.away_id])
    _check_players(match, seats, by_ident)
    _check_boards(match, document)


def _check_boards(match: Match, document: dict) -> None:
    """In a duplicate stage a record must deal exactly its table's boards: a platform cannot
    swap a deal (the engine's referee sentence says which card differs)."""
    if match.round.stage.kind != Stage.Kind.DUPLICATE:
        return
    problems = duplicate.record_board_errors(match, parse(document))
    if problems:
        lang = (get_language() or settings.LANGUAGE_CODE or "it")[:2]
        raise RecordMismatch(
            _("The record was not played on this table's boards: %(why)s")
            % {"why": problems[0].message(lang)},
            code="wrong_board",
            field=f"deals[{problems[0].deal}]",
        )


def seat_idents(seats) -> set[str]:
    return {str(seat) for seat in seats} - {"", "None"}


def seat_lines(tournament, idents: set[str], line_ids) -> dict[str, set[int]]:
    """The lines of the players that ``idents`` (seat names) can name: players of
    ``tournament``'s lines or of the lines ``line_ids``, by name, federation id or username.

    One query, whatever the size of the tournament; a batch of records reads it once.
    """
    if not idents:
        return {}
    by_ident: dict[str, set[int]] = {}
    # Written out rather than built by the ORM: building this query (three joins, two ORs)
    # cost a lone submission about 1 ms of CPU, more than PostgreSQL takes to answer it.
    names = sorted(idents)
    lines = [pk for pk in line_ids if pk] or [0]  # no line is 0: an empty list is no SQL
    quote = connection.ops.quote_name
    user = Player._meta.get_field("user").related_model._meta.db_table  # type: ignore[union-attr]
    held = ", ".join(["%s"] * len(names))
    sql = f"""
        SELECT player.name, player.federation_id, account.username, member.line_id
        FROM {quote(Player._meta.db_table)} AS player
        LEFT JOIN {quote(user)} AS account ON account.id = player.user_id
        JOIN {quote(LineMember._meta.db_table)} AS member ON member.player_id = player.id
        WHERE (player.name IN ({held}) OR player.federation_id IN ({held})
               OR account.username IN ({held}))
          AND (member.line_id IN ({", ".join(["%s"] * len(lines))})
               OR member.line_id IN (SELECT entry.line_id
                                     FROM {quote(Entry._meta.db_table)} AS entry
                                     WHERE entry.tournament_id = %s))
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [*names, *names, *names, *lines, _pk(tournament)])
        players = cursor.fetchall()
    for name, fed, username, line in players:
        # Not the numeric player id: platforms often number their seats "1", "2".
        for ident in {name, fed, username} - {None, ""}:
            by_ident.setdefault(ident, set()).add(line)
    return by_ident


def _pk(tournament) -> int:
    return tournament if isinstance(tournament, int) else tournament.pk


def _check_players(match, seats, by_ident: dict[str, set[int]]) -> None:
    """Seats naming players of this tournament must name this match's lines, side by side.

    Platforms may use their own nicknames; a seat that names no player of the tournament is
    accepted. One that names a player of another line is a record for another match.
    """
    sides = [match.home_id, match.away_id]
    for index, seat in enumerate(seats):
        lines = by_ident.get(str(seat))
        if not lines:
            continue
        if sides[index % 2] not in lines:
            raise RecordMismatch(
                _("Seat %(seat)d (%(name)s) is not a player of this match's %(side)s line.")
                % {
                    "seat": index,
                    "name": seat,
                    "side": _("home") if index % 2 == 0 else _("away"),
                },
                code="wrong_players",
                field=f"seats[{index}]",
            )
