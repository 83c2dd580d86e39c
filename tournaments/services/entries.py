"""Registering lines in a tournament: one by one or from a CSV file (all or nothing)."""

from __future__ import annotations

import csv
import io
import logging
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from tournaments import access
from tournaments.exceptions import LineImportError, TournamentError
from tournaments.models import Entry, Line, LineMember, Player, Round, normalize_category
from tournaments.services import changelog, rows
from tournaments.services.csv_cells import restore

logger = logging.getLogger(__name__)

MAX_IMPORT_BYTES = 2 * 1024 * 1024
MAX_IMPORT_ROWS = 10_000
MAX_SEED = rows.integer_range(Entry._meta.get_field("seed"))[1]  # what every database stores

# Accepted header names (English and Italian) for each column.
COLUMNS = {
    "line": ("line", "line name", "linea", "nome linea", "name", "nome"),
    "player1": ("player 1", "player1", "giocatore 1", "giocatore1"),
    "player2": ("player 2", "player2", "giocatore 2", "giocatore2"),
    "player3": ("player 3", "player3", "giocatore 3", "giocatore3"),
    "fid1": ("federation id 1", "federation_id1", "federation id", "tessera 1", "tessera"),
    "fid2": ("federation id 2", "federation_id2", "tessera 2"),
    "fid3": ("federation id 3", "federation_id3", "tessera 3"),
    "club": ("club", "circolo"),
    "city": ("city", "città", "citta"),
    "seed": ("seed", "testa di serie"),
    "category": ("category", "categoria"),
}
EXPECTED_HEADER = (
    "line,player 1,player 2,player 3,federation id 1,federation id 2,federation id 3,club,city,"
    "seed,category"
)


@dataclass
class LineRow:
    """A line to register: its name and its players as ``(name, federation id)``."""

    name: str
    players: list[tuple[str, str]]
    club: str = ""
    city: str = ""
    seed: int | None = None
    category: str = ""
    row_number: int | None = None
    errors: list[str] = field(default_factory=list)


def _next_seed(tournament):
    return (Entry.objects.filter(tournament=tournament).aggregate(m=Max("seed"))["m"] or 0) + 1


def _players_of(rows: list[LineRow]) -> list[list[Player]]:
    """The players of each row, in its order: the one a federation id already names, else a new
    player (saved here, all in one statement, in the order of the rows)."""
    fids = {fid for row in rows for _name, fid in row.players if fid}
    known = {p.federation_id: p for p in Player.objects.filter(federation_id__in=fids)}
    new: list[Player] = []
    players = []
    for row in rows:
        of_row = []
        for name, fid in row.players:
            player = known.get(fid) if fid else None
            if player is None:
                player = Player(name=name, federation_id=fid, club=row.club, city=row.city)
                new.append(player)
                if fid:
                    known[fid] = player
            of_row.append(player)
        players.append(of_row)
    Player.objects.bulk_create(new)
    return players


def checks_in_new_lines(tournament) -> bool:
    """Whether a line entered now is checked in: the check-in list is in use (a line is ticked)
    and a round is already paired, so the line is a late entry registered at the desk, where
    it is present. Left unticked it would be left out of every draw still to come."""
    return (
        Entry.objects.filter(tournament=tournament, checked_in=True).exists()
        and Round.objects.filter(stage__tournament=tournament).exists()
    )


def _validate(tournament, rows: list[LineRow], user=None):
    taken_names = set(
        Entry.objects.filter(tournament=tournament).values_list("line__name", flat=True)
    )
    taken_names = {name.casefold() for name in taken_names}
    # first row (number) of each line name, federation id and seed in the file
    seen_names: dict[str, int | None] = {}
    seen_fids: dict[str, int | None] = {}
    seen_seeds: dict[int, int | None] = {}
    used_seeds = set(
        Entry.objects.filter(tournament=tournament, seed__isnull=False).values_list(
            "seed", flat=True
        )
    )
    fids = {fid for row in rows for _name, fid in row.players if fid}
    known = dict(Player.objects.filter(federation_id__in=fids).values_list("federation_id", "name"))
    # the name of a player the importer cannot see is not shown (a hidden player's
    # name for a guessed federation id); None (seed_demo, the shell) sees everyone
    hidden = set()
    if user is not None:
        seen = access.visible_players(user).filter(federation_id__in=fids)
        hidden = set(known) - set(seen.values_list("federation_id", flat=True))
    entered = set(
        Entry.objects.filter(
            tournament=tournament, line__members__player__federation_id__in=fids
        ).values_list("line__members__player__federation_id", flat=True)
    )
    for row in rows:
        if not row.name:
            row.errors.append(_("the line has no name"))
        elif row.name.casefold() in taken_names:
            row.errors.append(
                _("a line named “%(name)s” is already registered") % {"name": row.name}
            )
        elif row.name.casefold() in seen_names:
            row.errors.append(
                _("same line name as row %(row)d") % {"row": seen_names[row.name.casefold()]}
            )
        else:
            seen_names[row.name.casefold()] = row.row_number
        if len(row.players) != tournament.seats_per_line:
            row.errors.append(
                ngettext(
                    "%(got)d player, but lines of this tournament have %(n)d",
                    "%(got)d players, but lines of this tournament have %(n)d",
                    len(row.players),
                )
                % {"got": len(row.players), "n": tournament.seats_per_line}
            )
        for name, fid in row.players:
            if len(name) > 120:
                row.errors.append(_("a player's name is too long"))
            if not fid:
                continue
            if len(fid) > 40:
                row.errors.append(_("federation id “%(id)s” is too long") % {"id": fid[:40]})
            elif fid in seen_fids:
                row.errors.append(
                    _("federation id %(id)s already appears in row %(row)d")
                    % {"id": fid, "row": seen_fids[fid]}
                )
            else:
                seen_fids[fid] = row.row_number
            if fid in entered:
                row.errors.append(_("player %(id)s already plays in this tournament") % {"id": fid})
            if fid in hidden and known[fid].casefold() != name.casefold():
                row.errors.append(
                    _("federation id %(id)s belongs to another player, not to %(name)s")
                    % {"id": fid, "name": name}
                )
            elif fid in known and known[fid].casefold() != name.casefold():
                row.errors.append(
                    _("federation id %(id)s belongs to %(known)s, not to %(name)s")
                    % {"id": fid, "known": known[fid], "name": name}
                )
        if row.seed is not None:
            if row.seed in used_seeds:
                row.errors.append(_("seed %(seed)d is already taken") % {"seed": row.seed})
            elif row.seed in seen_seeds:
                row.errors.append(
                    _("seed %(seed)d already appears in row %(row)d")
                    % {"seed": row.seed, "row": seen_seeds[row.seed]}
                )
            else:
                seen_seeds[row.seed] = row.row_number


@transaction.atomic
def add_lines(tournament, rows: list[LineRow], *, user=None, action="lines.added"):
    """Register lines (validated together: all or nothing)."""
    _validate(tournament, rows, user)
    errors = [(row.row_number, message) for row in rows for message in row.errors]
    if errors:
        raise LineImportError(errors)
    seed = _next_seed(tournament)
    used = {row.seed for row in rows if row.seed is not None}
    checked_in = checks_in_new_lines(tournament)
    for row in rows:
        if row.seed is None:
            while seed in used:
                seed += 1
            row.seed = seed
            used.add(seed)
    # A statement per table, not per line: an open day's thousand lines in four.
    players = _players_of(rows)
    lines = Line.objects.bulk_create(
        Line(name=row.name, club=" ".join(row.club.split())[:120]) for row in rows
    )
    LineMember.objects.bulk_create(
        LineMember(line=line, player=player, position=position)
        for line, of_row in zip(lines, players, strict=True)
        for position, player in enumerate(of_row)
    )
    Entry.objects.bulk_create(
        Entry(
            tournament=tournament,
            line=line,
            seed=row.seed,
            checked_in=checked_in,
            category=normalize_category(row.category),
        )
        for line, row in zip(lines, rows, strict=True)
    )
    changelog.record(tournament, action, user=user, lines=len(lines))
    return lines


def add_line(tournament, name, players, *, club="", city="", seed=None, category="", user=None):
    """Register one line; ``players`` are names or ``(name, federation id)`` pairs."""
    players = [(p, "") if isinstance(p, str) else (p[0], p[1] or "") for p in players]
    try:
        return add_lines(
            tournament,
            [
                LineRow(
                    name=name,
                    players=players,
                    club=club,
                    city=city,
                    seed=seed,
                    category=category,
                    row_number=1,
                )
            ],
            user=user,
            action="line.added",
        )[0]
    except LineImportError as error:
        raise TournamentError("; ".join(message for _row, message in error.errors)) from error


@transaction.atomic
def register_line(tournament, line, *, seed=None, user=None):
    """Enter an existing line (its players already chosen) in ``tournament``, with the checks
    of :func:`add_lines`: the tournament's players per line, no player already playing in
    another of its lines, a line name and a seed not yet taken. Raises ``TournamentError``
    (nothing stored)."""
    members = list(line.members.select_related("player").order_by("position"))
    problems = []
    if len(members) != tournament.seats_per_line:
        problems.append(
            ngettext(
                "%(got)d player, but lines of this tournament have %(n)d",
                "%(got)d players, but lines of this tournament have %(n)d",
                len(members),
            )
            % {"got": len(members), "n": tournament.seats_per_line}
        )
    entered = set(
        LineMember.objects.filter(
            line__entries__tournament=tournament,
            player_id__in=[member.player_id for member in members],
        )
        .exclude(line=line)
        .values_list("player_id", flat=True)
    )
    for member in members:
        if member.player_id in entered:
            problems.append(
                _("player %(id)s already plays in this tournament")
                % {"id": member.player.federation_id or member.player.name}
            )
    same_name = Entry.objects.filter(tournament=tournament, line__name__iexact=line.name)
    if same_name.exclude(line=line).exists():
        problems.append(_("a line named “%(name)s” is already registered") % {"name": line.name})
    if seed is not None and Entry.objects.filter(tournament=tournament, seed=seed).exists():
        problems.append(_("seed %(seed)d is already taken") % {"seed": seed})
    if problems:
        raise TournamentError("; ".join(problems))
    entry = Entry.objects.create(
        tournament=tournament, line=line, seed=seed, checked_in=checks_in_new_lines(tournament)
    )
    changelog.record(tournament, "line.added", user=user, lines=1)
    return entry


def _read_text(file) -> str:
    data = file.read() if hasattr(file, "read") else file
    if isinstance(data, bytes):
        if len(data) > MAX_IMPORT_BYTES:
            raise LineImportError([], _("The file is too large (at most 2 MB)."))
        for encoding in ("utf-8-sig", "cp1252"):
            try:
                return data.decode(encoding)
            except UnicodeDecodeError:
                continue
        raise LineImportError([], _("The file is not readable text (UTF-8 expected)."))
    if len(data) > MAX_IMPORT_BYTES:
        raise LineImportError([], _("The file is too large (at most 2 MB)."))
    return data.lstrip("\ufeff")


def _check_text(text: str) -> str:
    """Refuse a NUL (no database column stores it; a spreadsheet never writes one)."""
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise LineImportError([(line, _("the row contains a NUL character"))])
    return text


def _column_map(header):
    normalized = [h.strip().casefold() for h in header]
    mapping = {}
    for key, names in COLUMNS.items():
        for index, name in enumerate(normalized):
            if name in names:
                mapping[key] = index
                break
    return mapping


def parse_lines_csv(file) -> list[LineRow]:
    """Rows of a CSV (comma or semicolon separated, header required); row numbers count the
    header as row 1, as spreadsheets show them."""
    text = _check_text(_read_text(file))
    try:
        dialect = csv.Sniffer().sniff(text.splitlines()[0] if text else "", delimiters=",;\t")
        delimiter = dialect.delimiter
    except csv.Error:
        delimiter = ","
    # newline="": a quoted cell may hold a line break (the csv module's own advice)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        raise LineImportError([], _("The file is empty.")) from None
    except csv.Error as error:
        raise LineImportError([(1, str(error))]) from error
    mapping = _column_map(header)
    if "line" not in mapping or "player1" not in mapping:
        raise LineImportError(
            [
                (
                    1,
                    _("the header must name at least the columns: %(cols)s")
                    % {"cols": EXPECTED_HEADER},
                )
            ]
        )
    rows: list[LineRow] = []
    try:
        for number, cells in enumerate(reader, start=2):
            if not any(cell.strip() for cell in cells):
                continue
            if len(rows) >= MAX_IMPORT_ROWS:
                raise LineImportError(
                    [], _("Too many rows (at most %(n)d).") % {"n": MAX_IMPORT_ROWS}
                )

            def cell(key, cells=cells):
                index = mapping.get(key)
                if index is None or index >= len(cells):
                    return ""
                return restore(cells[index].strip())

            players = []
            for n in (1, 2, 3):
                name = cell(f"player{n}")
                if name:
                    players.append((name, cell(f"fid{n}")))
            row = LineRow(
                name=cell("line")[:160],
                players=players,
                club=cell("club")[:120],
                city=cell("city")[:80],
                category=cell("category"),
                row_number=number,
            )
            seed = cell("seed")
            if seed:
                # a length check first: int() refuses more than a few thousand digits
                if (
                    seed.isdecimal()
                    and len(seed) <= len(str(MAX_SEED))
                    and 0 < int(seed) <= MAX_SEED
                ):
                    row.seed = int(seed)
                else:
                    row.errors.append(_("the seed must be a positive whole number"))
            for n in (1, 2, 3):
                if cell(f"fid{n}") and not cell(f"player{n}"):
                    row.errors.append(
                        _("federation id %(n)d given without player %(n)d") % {"n": n}
                    )
            rows.append(row)
    except csv.Error as error:
        raise LineImportError([(reader.line_num, str(error))]) from error
    if not rows:
        raise LineImportError([], _("The file has no lines."))
    return rows


def import_lines_csv(tournament, file, *, user=None):
    """Register every line of a CSV file, or none: ``LineImportError.errors`` lists
    ``(row number, message)`` for every problem found."""
    rows = parse_lines_csv(file)
    return add_lines(tournament, rows, user=user, action="lines.imported")


@transaction.atomic
def edit_line(
    tournament,
    line,
    *,
    name,
    seed=None,
    player_names=None,
    category=None,
    club=None,
    user=None,
):
    """Rename a registered line, change its seed, its category or its club or municipality
    (``None``: unchanged) or fix its players' names (typos).

    Refuses a name or a seed another line of the tournament already has.
    """
    entry = Entry.objects.select_for_update().filter(tournament=tournament, line=line).first()
    if entry is None:
        raise TournamentError(_("This line is not registered in the tournament."))
    name = name.strip()
    problems = []
    if not name:
        problems.append(_("the line has no name"))
    others = Entry.objects.filter(tournament=tournament).exclude(pk=entry.pk)
    if name and others.filter(line__name__iexact=name).exists():
        problems.append(_("a line named “%(name)s” is already registered") % {"name": name})
    if seed is not None and others.filter(seed=seed).exists():
        problems.append(_("seed %(seed)d is already taken") % {"seed": seed})
    if problems:
        raise TournamentError("; ".join(str(p) for p in problems))
    before = {"name": line.name, "seed": entry.seed, "category": entry.category, "club": line.club}
    line.name = name
    if club is not None:
        line.club = " ".join(club.split())[:120]
    line.save(update_fields=["name", "club"])
    entry.seed = seed
    if category is not None:
        entry.category = normalize_category(category)
    entry.save(update_fields=["seed", "category"])
    for member in line.members.select_related("player"):
        new_name = (player_names or {}).get(member.position, "").strip()
        if new_name and new_name != member.player.name:
            member.player.name = new_name[:120]
            member.player.save(update_fields=["name"])
    changelog.record(
        tournament, "line.edited", user=user, line=line.pk, line_name=name, before=before
    )
    return entry


def withdrawn_line_ids(tournament) -> set[int]:
    """The lines withdrawn from ``tournament`` (an instance or its id): out of every draw and
    every seeding still to come."""
    return set(
        Entry.objects.filter(tournament=tournament, withdrawn=True).values_list(
            "line_id", flat=True
        )
    )
