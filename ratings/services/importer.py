"""Restore a ``scopa-tournament-export/1`` document on this instance.

Everything is created in one transaction in the file's order, so the new rows keep the relative
order the export numbered them in and exporting again gives the same bytes. Players with a
federation id are matched to existing players; the others, and all lines, are created.
"""

from __future__ import annotations

import datetime as dt
import logging

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from ratings.services.export import FORMAT
from tournaments.models import (
    ChangeLog,
    DealResult,
    Entry,
    Group,
    GroupMember,
    Line,
    LineMember,
    Match,
    MatchResult,
    Player,
    Round,
    Stage,
    Tournament,
    VPTable,
    VPTableRow,
)

logger = logging.getLogger(__name__)


class TournamentImportError(Exception):
    """A file that cannot be imported; nothing was saved."""

    default_message = gettext_lazy("The tournament file was not imported.")

    def __init__(self, message=None):
        self.message = message if message is not None else self.default_message
        super().__init__(str(self.message))

    def __str__(self):
        return str(self.message)


def _pairing_settings(data: dict | None) -> dict:
    """A Danish, Swiss or Mitchell stage's settings from its ``pairing`` object."""
    if not data:
        return {}
    fields = (
        "rounds_planned",
        "first_round",
        "draw_seed",
        "bye_scoring",
        "bye_vp",
        "arrow_switch",
        "late_entry_until_round",
        "carry_over",
        "advance_count",
    )
    settings = {name: data[name] for name in fields if name in data}
    settings["stage_tiebreaks"] = list(data.get("tiebreaks") or [])
    return settings


def _vp_table(data: dict) -> VPTable:
    rows = [list(r) for r in data.get("rows", [])]
    table = VPTable.objects.filter(slug=data["slug"]).first()
    if table is not None:
        have = [
            [r.vp_winner, r.vp_loser, r.mp_from, r.mp_to] for r in table.rows.order_by("mp_from")
        ]
        if have != sorted(rows, key=lambda r: r[2]):
            raise TournamentImportError(
                _("VP table “%(slug)s” exists here with different rows; rename it in the file.")
                % {"slug": data["slug"]}
            )
        return table
    table = VPTable.objects.create(
        slug=data["slug"],
        name=data["name"],
        kind=data["kind"],
        target_points=data.get("target_points"),
        deals_min=data.get("deals_min"),
        deals_max=data.get("deals_max"),
        win_vp=data["win_vp"],
        draw_vp=data["draw_vp"],
        loss_vp=data["loss_vp"],
        timeout_min_vp=data["timeout_min_vp"],
    )
    VPTableRow.objects.bulk_create(
        VPTableRow(table=table, vp_winner=w, vp_loser=lo, mp_from=a, mp_to=b)
        for w, lo, a, b in rows
    )
    return table


def _player(data: dict) -> Player:
    fid = data.get("federation_id") or ""
    if fid:
        found = Player.objects.filter(federation_id=fid).first()
        if found is not None:
            return found
    return Player.objects.create(
        name=data["name"], federation_id=fid, club=data.get("club", ""), city=data.get("city", "")
    )


def _date(value):
    return dt.date.fromisoformat(value) if value else None


def import_document(doc: dict, *, slug: str | None = None) -> Tournament:
    """Create the tournament of ``doc``; raise ``TournamentImportError`` (nothing saved) if the
    document is not a valid export or the slug is taken."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise TournamentImportError(_("This is not a “%(format)s” document.") % {"format": FORMAT})
    try:
        with transaction.atomic():
            tournament = _import(doc, slug)
    except TournamentImportError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise TournamentImportError(
            _("The file is malformed: %(error)s") % {"error": repr(exc)}
        ) from exc
    except (IntegrityError, ValidationError) as exc:
        raise TournamentImportError(
            _("The file conflicts with data here: %(error)s") % {"error": exc}
        ) from exc
    logger.info("imported tournament %s", tournament.slug)
    transaction.on_commit(lambda: _rate(tournament))
    return tournament


def _rate(tournament):
    from ratings.tasks import recompute_ratings_from

    try:
        recompute_ratings_from.delay(tournament.start_date.isoformat())
    except Exception:  # ratings can always be rebuilt with recompute_ratings
        logger.exception("could not enqueue the rating replay after importing %s", tournament)


def _import(doc: dict, slug: str | None) -> Tournament:
    t = doc["tournament"]
    slug = slug or t["slug"]
    if Tournament.objects.filter(slug=slug).exists():
        raise TournamentImportError(
            _("A tournament with slug “%(slug)s” already exists here.") % {"slug": slug}
        )
    players = {p["ref"]: _player(p) for p in doc["players"]}
    tournament = Tournament(
        slug=slug,
        name=t["name"],
        start_date=_date(t["start_date"]),
        end_date=_date(t.get("end_date")),
        venue=t.get("venue", ""),
        status=t["status"],
        is_public=t.get("is_public", True),
        variant=t["variant"],
        options=t.get("options") or {},
        deck_style=t["deck_style"],
        seats_per_line=t["seats_per_line"],
        end_rule=t["end_rule"],
        end_value=t["end_value"],
        time_limit_s=t.get("time_limit_s"),
        vp_table=_vp_table(t["vp_table"]),
        tiebreaks=list(t["tiebreaks"]),
        lots_seed=t.get("lots_seed", 0),
    )
    tournament.full_clean()
    tournament.save()

    lines = {}
    for data in doc["lines"]:
        line = Line.objects.create(name=data["name"])
        LineMember.objects.bulk_create(
            LineMember(line=line, player=players[ref], position=i)
            for i, ref in enumerate(data["players"])
        )
        lines[data["ref"]] = line
        if data.get("entered", True):
            Entry.objects.create(
                tournament=tournament,
                line=line,
                seed=data.get("seed"),
                withdrawn=data.get("withdrawn", False),
                checked_in=bool(data.get("checked_in", False)),
            )

    def line_id(ref):
        return lines[ref].id if ref else None

    matches: dict[str, Match] = {}
    links: list[tuple[Match, dict]] = []
    deals: list[DealResult] = []
    results: list[MatchResult] = []
    for s in doc["stages"]:
        stage = Stage.objects.create(
            tournament=tournament,
            order=s["order"],
            name=s["name"],
            kind=s["kind"],
            status=s["status"],
            double_round_robin=s.get("double_round_robin", False),
            third_place_match=s.get("third_place_match", False),
            **_pairing_settings(s.get("pairing")),
        )
        groups = {}
        for g in s["groups"]:
            group = Group.objects.create(stage=stage, name=g["name"], order=g.get("order", 0))
            GroupMember.objects.bulk_create(
                GroupMember(
                    group=group,
                    line=lines[x["line"]],
                    position=x["position"],
                    joined_round=x.get("joined_round", 1),
                )
                for x in g["members"]
            )
            groups[g["name"]] = group
        for r in s["rounds"]:
            starts = parse_datetime(r["starts_at"]) if r.get("starts_at") else None
            rnd = Round.objects.create(
                stage=stage, number=r["number"], name=r.get("name", ""), starts_at=starts
            )
            for m in r["matches"]:
                match = Match.objects.create(
                    round=rnd,
                    group=groups[m["group"]] if m.get("group") else None,
                    home_id=line_id(m.get("home")),
                    away_id=line_id(m.get("away")),
                    table_number=m.get("table"),
                    status=m["status"],
                    outcome=m.get("outcome") or "",
                    winner_id=line_id(m.get("winner")),
                    offender_id=line_id(m.get("offender")),
                    bracket_position=m.get("bracket_position"),
                    next_slot=m.get("next_slot") or "",
                    loser_next_slot=m.get("loser_next_slot") or "",
                    is_third_place=m.get("is_third_place", False),
                )
                matches[m["ref"]] = match
                links.append((match, m))
                deals.extend(
                    DealResult(
                        match=match,
                        number=d["number"],
                        line_id=line_id(d["line"]),
                        points=d["points"],
                        breakdown=d.get("breakdown") or {},
                        is_tiebreak=d.get("is_tiebreak", False),
                        is_penalty=d.get("is_penalty", False),
                    )
                    for d in m.get("deals", [])
                )
                results.extend(
                    MatchResult(
                        match=match,
                        line_id=line_id(x["line"]),
                        points=x["points"],
                        mp=x["mp"],
                        vp=x["vp"],
                        won=x["won"],
                        drawn=x["drawn"],
                    )
                    for x in m.get("results", [])
                )
    linked = []
    for match, m in links:
        if m.get("next_match") or m.get("loser_next_match"):
            match.next_match = matches[m["next_match"]] if m.get("next_match") else None
            match.loser_next_match = (
                matches[m["loser_next_match"]] if m.get("loser_next_match") else None
            )
            linked.append(match)
    Match.objects.bulk_update(linked, ["next_match", "loser_next_match"])
    DealResult.objects.bulk_create(deals)
    MatchResult.objects.bulk_create(results)
    ChangeLog.objects.create(
        tournament=tournament, action="tournament.imported", detail={"format": FORMAT}
    )
    return tournament
