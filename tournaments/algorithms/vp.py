"""From a match result to Victory Points (VP) and Match Points (MP).

The tables are data (``tournaments/data/vp_tables.json``, seed 000 and seed 003), validated here
so that an organizer's own table cannot silently leave a margin without VP. See
``shared/spec/vp-tables.md`` for the rules this module follows.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_TABLES_PATH = Path(__file__).resolve().parent.parent / "data" / "vp_tables.json"

FORFEIT_MARGIN = 1
"""A line that does not show up abandons before any deal: its opponent gets only the extra scopa."""


class VPTableError(ValueError):
    """A VP table that cannot convert every margin unambiguously.

    ``message`` is marked for the catalog with ``%(name)d`` placeholders filled from
    ``params``: ``str()`` gives it in English, an interface translates ``message`` first
    (``tournaments.services.vp.describe``), since organizers read it when editing a table."""

    def __init__(self, message: str, **params: int) -> None:
        super().__init__(message % params if params else message)
        self.message = message
        self.params = params


class TableKind(enum.StrEnum):
    """How a table turns a result into VP."""

    MARGIN = "margin"  # MP (point difference) → VP scale, seed 000
    WIN_DRAW_LOSS = "win_draw_loss"  # fixed VP for win, draw, loss, seed 003


def gettext_noop(message: str) -> str:
    """Marks a label for the translation catalog; the caller translates it when shown."""
    return message


_NO_MP_ROWS = gettext_noop("a win/draw/loss table has no MP rows")


class Outcome(enum.StrEnum):
    """How a match ended (values stored in the database; labels in :data:`OUTCOME_LABELS`)."""

    COMPLETED = "completed"
    TIMEOUT = "timeout"
    ABANDON = "abandon"
    FORFEIT = "forfeit"
    BYE = "bye"


OUTCOME_LABELS: Mapping[Outcome, str] = {
    Outcome.COMPLETED: gettext_noop("Completed"),
    Outcome.TIMEOUT: gettext_noop("Timeout"),
    Outcome.ABANDON: gettext_noop("Abandon"),
    Outcome.FORFEIT: gettext_noop("Forfeit"),
    Outcome.BYE: gettext_noop("Bye"),
}
"""Each outcome's label, a msgid the caller translates."""


@dataclass(frozen=True)
class VPRow:
    """Margins ``mp_from..mp_to`` give the winner ``vp_winner`` and the loser ``vp_loser``.

    ``mp_to`` ``None`` means "or more" (only the last row).
    """

    vp_winner: int
    vp_loser: int
    mp_from: int
    mp_to: int | None

    def covers(self, margin: int) -> bool:
        return self.mp_from <= margin and (self.mp_to is None or margin <= self.mp_to)


@dataclass(frozen=True)
class MatchScore:
    """VP and MP of a match's winner and loser (for a draw, either line)."""

    vp_winner: int
    vp_loser: int
    mp_winner: int
    mp_loser: int


@dataclass(frozen=True)
class VPTable:
    """A VP table; validated on construction (raises :class:`VPTableError`)."""

    rows: tuple[VPRow, ...]
    kind: TableKind = TableKind.MARGIN
    win_vp: int = 20
    draw_vp: int = 10
    loss_vp: int = 0
    timeout_min_vp: int = 14

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows", tuple(self.rows))
        object.__setattr__(self, "kind", TableKind(self.kind))
        if self.kind is TableKind.MARGIN:
            _validate_margin_rows(self.rows, self.timeout_min_vp)
        else:
            if self.rows:
                raise VPTableError(_NO_MP_ROWS)
            points = {"win": self.win_vp, "draw": self.draw_vp, "loss": self.loss_vp}
            if not self.win_vp >= self.draw_vp >= self.loss_vp >= 0:
                raise VPTableError(
                    gettext_noop("need win ≥ draw ≥ loss ≥ 0 VP, got %(win)d/%(draw)d/%(loss)d"),
                    **points,
                )
            # Two draws may be worth less than a win and a loss (3/1/0, the Valliadi's 3 for a
            # win) but never more: then two lines would gain by agreeing a draw.
            if self.win_vp + self.loss_vp < 2 * self.draw_vp:
                raise VPTableError(
                    gettext_noop(
                        "two draws (2×%(draw)d) may not be worth more VP than a win and a loss "
                        "(%(win)d+%(loss)d)"
                    ),
                    **points,
                )
            if not 0 <= self.timeout_min_vp <= self.win_vp + self.loss_vp:
                raise VPTableError(
                    gettext_noop("timeout minimum %(vp)d VP is out of range"),
                    vp=self.timeout_min_vp,
                )

    def row_for_margin(self, margin: int) -> VPRow:
        """The row whose MP range holds ``margin`` (margin tables only)."""
        if self.kind is not TableKind.MARGIN:
            raise VPTableError(_NO_MP_ROWS)
        if margin < 0:
            raise ValueError(f"a margin is never negative, got {margin}")
        for row in self.rows:
            if row.covers(margin):
                return row
        raise AssertionError("validated tables cover every margin")  # pragma: no cover

    def row_for_winner_vp(self, vp: int) -> VPRow:
        """The row where the winner gets ``vp`` VP."""
        for row in self.rows:
            if row.vp_winner == vp:
                return row
        raise VPTableError(gettext_noop("no row gives the winner %(vp)d VP"), vp=vp)

    @property
    def offender_row(self) -> VPRow:
        """The row whose smallest MP, negated, is a timeout/abandon offender's MP.

        The row where the loser gets 0 VP (20-0), or the last row when the table stops above 0
        (7-point table: 18-2, so -8).
        """
        return next((row for row in self.rows if row.vp_loser == 0), self.rows[-1])


def _validate_margin_rows(rows: tuple[VPRow, ...], timeout_min_vp: int) -> None:
    if not rows:
        raise VPTableError(gettext_noop("a margin table needs at least one row"))
    if rows[0].mp_from != 0:
        raise VPTableError(
            gettext_noop("the first row must start at 0 MP, not %(mp)d"), mp=rows[0].mp_from
        )
    total = rows[0].vp_winner + rows[0].vp_loser
    for index, row in enumerate(rows, start=1):
        vp = {"row": index, "winner": row.vp_winner, "loser": row.vp_loser}
        if row.vp_winner + row.vp_loser != total:
            raise VPTableError(
                gettext_noop(
                    "row %(row)d splits %(winner)d+%(loser)d VP, the first row splits %(total)d"
                ),
                total=total,
                **vp,
            )
        if row.vp_loser < 0 or row.vp_winner < row.vp_loser:
            raise VPTableError(
                gettext_noop("row %(row)d gives the winner %(winner)d VP and the loser %(loser)d"),
                **vp,
            )
        if row.mp_to is not None and row.mp_to < row.mp_from:
            raise VPTableError(
                gettext_noop("row %(row)d runs from %(mp_from)d MP down to %(mp_to)d"),
                row=index,
                mp_from=row.mp_from,
                mp_to=row.mp_to,
            )
        if row.mp_to is None and index != len(rows):
            raise VPTableError(
                gettext_noop("row %(row)d is open-ended ('or more') but is not the last row"),
                row=index,
            )
        if index > 1:
            previous = rows[index - 2]
            assert previous.mp_to is not None
            if row.mp_from != previous.mp_to + 1:
                between = {
                    "previous": index - 1,
                    "mp_to": previous.mp_to,
                    "row": index,
                    "mp_from": row.mp_from,
                }
                if row.mp_from > previous.mp_to + 1:
                    message = gettext_noop(
                        "gap between row %(previous)d (to %(mp_to)d MP) and row %(row)d "
                        "(from %(mp_from)d MP)"
                    )
                else:
                    message = gettext_noop(
                        "overlap between row %(previous)d (to %(mp_to)d MP) and row %(row)d "
                        "(from %(mp_from)d MP)"
                    )
                raise VPTableError(message, **between)
            if row.vp_winner <= previous.vp_winner:
                raise VPTableError(
                    gettext_noop(
                        "row %(row)d gives the winner %(winner)d VP, not more than row "
                        "%(previous)d (%(previous_winner)d)"
                    ),
                    previous=index - 1,
                    previous_winner=previous.vp_winner,
                    **vp,
                )
    if rows[-1].mp_to is not None:
        raise VPTableError(
            gettext_noop("the last row must be open-ended ('or more'), it stops at %(mp_to)d MP"),
            mp_to=rows[-1].mp_to,
        )
    if timeout_min_vp not in {row.vp_winner for row in rows}:
        raise VPTableError(
            gettext_noop(
                "timeout minimum %(vp)d VP is no winner's VP in the table, so its MP cannot be "
                "read back"
            ),
            vp=timeout_min_vp,
        )


def match_score(
    table: VPTable,
    margin: int,
    outcome: Outcome = Outcome.COMPLETED,
    *,
    draw: bool = False,
) -> MatchScore:
    """Convert a match's margin into VP and MP for its winner and loser.

    ``margin`` is the winner's points minus the loser's, after any timeout penalty (the rules
    engine applies the penalty). Completed: the table's VP for the margin, MP ±margin; a margin of
    0 with a winner (knock-out decided by the last-capture rule) gets the table's 0-margin row on
    a margin table and a win on a win/draw/loss table. Timeout and abandon (vp-tables.md): the
    offender 0 VP, the other line the table's VP but at least ``timeout_min_vp``; MP read back
    from the rows (winner: the smallest MP of its VP's row; offender: minus the smallest MP of
    :attr:`VPTable.offender_row`). A win/draw/loss table has no MP rows, so MP stay the point
    difference. Forfeit (the line did not show up): an abandon before any deal, margin
    :data:`FORFEIT_MARGIN` (the extra scopa); ``margin`` is ignored. Bye: all zeros; standings
    ignore byes, which are not matches played.
    """
    outcome = Outcome(outcome)
    if outcome is Outcome.BYE:
        return MatchScore(0, 0, 0, 0)
    if outcome is Outcome.FORFEIT:
        return match_score(table, FORFEIT_MARGIN, Outcome.ABANDON)
    if margin < 0:
        raise ValueError(f"a margin is never negative, got {margin}")
    if draw:
        if outcome is not Outcome.COMPLETED:
            raise ValueError(f"a {outcome} match has a loser, it cannot be a draw")
        if margin != 0:
            raise ValueError(f"a draw has margin 0, got {margin}")
        if table.kind is TableKind.WIN_DRAW_LOSS:
            return MatchScore(table.draw_vp, table.draw_vp, 0, 0)
        row = table.row_for_margin(0)
        return MatchScore(row.vp_winner, row.vp_loser, 0, 0)

    if outcome is Outcome.COMPLETED:
        if table.kind is TableKind.WIN_DRAW_LOSS:
            return MatchScore(table.win_vp, table.loss_vp, margin, -margin)
        row = table.row_for_margin(margin)
        return MatchScore(row.vp_winner, row.vp_loser, margin, -margin)

    # timeout or abandon
    if table.kind is TableKind.WIN_DRAW_LOSS:
        return MatchScore(max(table.win_vp, table.timeout_min_vp), 0, margin, -margin)
    vp_winner = max(table.row_for_margin(margin).vp_winner, table.timeout_min_vp)
    mp_winner = table.row_for_winner_vp(vp_winner).mp_from
    return MatchScore(vp_winner, 0, mp_winner, -table.offender_row.mp_from)


def table_from_dict(data: Mapping[str, Any]) -> VPTable:
    """Build a table from one entry of ``vp_tables.json`` (extra keys such as names are ignored)."""
    try:
        rows = tuple(VPRow(*row) for row in data.get("rows", ()))
        return VPTable(
            rows=rows,
            kind=TableKind(data.get("kind", TableKind.MARGIN)),
            win_vp=data.get("win_vp", 20),
            draw_vp=data.get("draw_vp", 10),
            loss_vp=data.get("loss_vp", 0),
            timeout_min_vp=data.get("timeout_min_vp", 14),
        )
    except VPTableError as error:
        raise VPTableError(f"table {data.get('slug', '?')!r}: {error}") from error
    except (TypeError, ValueError) as error:
        raise VPTableError(f"table {data.get('slug', '?')!r} is malformed: {error}") from error


def load_tables(path: Path | str = DEFAULT_TABLES_PATH) -> dict[str, VPTable]:
    """The tables of a ``vp_tables.json`` file by slug, each validated."""
    with open(path, encoding="utf-8") as handle:
        entries = json.load(handle)
    tables: dict[str, VPTable] = {}
    for entry in entries:
        slug = entry["slug"]
        if slug in tables:
            raise VPTableError(f"table {slug!r} appears twice")
        tables[slug] = table_from_dict(entry)
    return tables
