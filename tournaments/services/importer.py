"""Restore a ``scopa-tournament-export/1`` document on this instance.

Everything is created in one transaction in the file's order, so the new rows keep the relative
order the export numbered them in and exporting again gives the same bytes. Players with a
federation id are matched to existing players; the others, and all lines, are created.
"""

from __future__ import annotations

import datetime as dt
import logging

from django.core.exceptions import ValidationError
from django.db import DataError, IntegrityError, transaction
from django.utils.dateparse import parse_datetime
from django.utils.text import capfirst
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from tournaments.exceptions import ResultError
from tournaments.models import (
    BoardAdjustment,
    ChangeLog,
    Entry,
    ForbiddenPairing,
    Group,
    GroupMember,
    Line,
    LineMember,
    Match,
    MatchResult,
    Outcome,
    Penalty,
    PenaltyRule,
    Player,
    Prize,
    Round,
    Stage,
    Tournament,
    VPTable,
    VPTableRow,
)
from tournaments.services import duplicate, results, rows
from tournaments.services.export import FORMAT
from tournaments.signals import tournament_imported

logger = logging.getLogger(__name__)


class TournamentImportError(Exception):
    """A file that cannot be imported; nothing was saved."""

    default_message = gettext_lazy("The tournament file was not imported.")

    def __init__(self, message=None):
        self.message = message if message is not None else self.default_message
        super().__init__(str(self.message))

    def __str__(self):
        return str(self.message)


def _kept(obj):
    """``obj``, unless the file gives it a value its column cannot keep (PostgreSQL would
    refuse the row, SQLite keep it): then the file is refused, naming the field."""
    wrong = rows.unkeepable(obj)
    if wrong:
        raise TournamentImportError(
            _("%(what)s: a value the field cannot hold (%(fields)s).")
            % {
                "what": capfirst(obj._meta.verbose_name),
                "fields": ", ".join(str(field.verbose_name) for field in wrong),
            }
        )
    return obj


def _create(model, **values):
    """``model.objects.create`` for a row of the file."""
    obj = _kept(model(**values))
    obj.save(force_insert=True)
    return obj


def _create_all(objects) -> None:
    """``bulk_create`` for rows of the file, all of one model."""
    kept = [_kept(obj) for obj in objects]
    if kept:
        type(kept[0]).objects.bulk_create(kept)


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
        "keep_clubs_apart",
        "late_entry_until_round",
        "carry_over",
        "advance_count",
        "category_places",
    )
    settings = {name: data[name] for name in fields if name in data}
    if "category_places" in settings:
        # checked as the desk checks it: the qualification reads these numbers
        probe = Stage(
            category_places=settings["category_places"],
            advance_count=settings.get("advance_count"),
        )
        try:
            probe._clean_category_places()
        except ValidationError as error:
            raise TournamentImportError(" ".join(error.messages)) from None
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
    table = _create(
        VPTable,
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
    _create_all(
        VPTableRow(table=table, vp_winner=w, vp_loser=lo, mp_from=a, mp_to=b)
        for w, lo, a, b in rows
    )
    return table


def _players(docs: list[dict]) -> dict[str, Player]:
    """The file's players by reference: a player whose federation id is known here is that
    player (one query for all of them), the others are created together."""
    fids = {d.get("federation_id") for d in docs} - {None, ""}
    known = {p.federation_id: p for p in Player.objects.filter(federation_id__in=fids)}
    by_ref: dict[str, Player] = {}
    new: list[Player] = []
    for data in docs:
        fid = data.get("federation_id") or ""
        player = known.get(fid) if fid else None
        if player is None:
            player = Player(
                name=data["name"],
                federation_id=fid,
                club=data.get("club", ""),
                city=data.get("city", ""),
            )
            new.append(player)
            if fid:
                known[fid] = player  # the file's next mention of the id is this player
        by_ref[data["ref"]] = player
    _create_all(new)
    return by_ref


def _ruling(match: Match, m: dict, data: dict) -> BoardAdjustment:
    """A board ruling of the file, refused unless it names one of the match's boards and a
    kind and fault this product knows (the scores read them back)."""
    board = int(data["board"])
    if (
        data.get("kind") not in BoardAdjustment.Kind.values
        or data.get("fault") not in BoardAdjustment.Fault.values
        or board not in duplicate.board_numbers_of_match(match)
    ):
        raise TournamentImportError(
            _("Match %(ref)s: a board ruling names an unknown board, kind or fault.")
            % {"ref": m["ref"]}
        )
    return BoardAdjustment(
        match=match,
        board=board,
        kind=data["kind"],
        fault=data["fault"],
        deck=" ".join(str(data.get("deck") or "").split())[:20],
        note=data.get("note", ""),
    )


def _date(value):
    return dt.date.fromisoformat(value) if value else None


def _result_kind(m: dict) -> str | None:
    """What the writer stores for a match of the file: ``"result"``, ``"bye"`` (a bye scored
    like a result, in a Danish, Swiss or Mitchell stage) or nothing (a bye of a round robin or a
    bracket is part of the draw; a match not played yet)."""
    if m.get("outcome") == Outcome.BYE:
        return "bye" if m.get("results") else None
    if m["status"] == Match.Status.DONE:
        if not m.get("results"):
            raise TournamentImportError(
                _("Match %(ref)s is marked as played but has no result.") % {"ref": m["ref"]}
            )
        return "result"
    if m.get("results") or m.get("deals"):
        raise TournamentImportError(
            _("Match %(ref)s has a result but is not marked as played.") % {"ref": m["ref"]}
        )
    return None


def _store_result(m: dict, match: Match) -> None:
    """Write the match's result through the result writer (a version of source ``import``,
    its change-log entry and its projection), refusing the file if the writer refuses it.
    ``match`` is locked by :func:`results.lock_matches` in the import's transaction."""
    side_of = {ref: side for side, ref in enumerate((m.get("home"), m.get("away"))) if ref}

    def side(ref):
        if ref not in side_of:
            raise TournamentImportError(
                _("Match %(ref)s: line %(line)s does not play this match.")
                % {"ref": m["ref"], "line": ref}
            )
        return side_of[ref]

    try:
        if m.get("outcome") == Outcome.BYE:
            results.save_bye(match)
            return
        deals: dict[int, dict] = {}
        for d in m.get("deals", []):
            deal = deals.setdefault(
                d["number"],
                {
                    "number": d["number"],
                    "points": [0, 0],
                    "breakdown": [{}, {}],
                    "tiebreak": d.get("is_tiebreak", False),
                    "penalty": d.get("is_penalty", False),
                },
            )
            deal["points"][side(d["line"])] = d["points"]
            deal["breakdown"][side(d["line"])] = d.get("breakdown") or {}
        totals = [0, 0]
        for x in m["results"]:
            totals[side(x["line"])] = x["points"]
        results.import_result(
            match,
            [deals[number] for number in sorted(deals)],
            totals=totals,
            winner_side=side(m["winner"]) if m.get("winner") else None,
            outcome=m.get("outcome") or "",
            offender_side=side(m["offender"]) if m.get("offender") else None,
            locked=True,
        )
    except ResultError as error:
        raise TournamentImportError(
            _("Match %(ref)s: %(error)s") % {"ref": m["ref"], "error": error.message}
        ) from error


def _check_reproduced(links: list[tuple[Match, dict]], lines: dict[str, Line]) -> None:
    """Refuse the file unless the stored tournament gives back its matches: lines, outcome,
    winner, and VP and MP as the projection works them out from the file's VP table (an edited
    file, or a table changed after some results, would otherwise change them silently)."""
    ref_of = {line.id: ref for ref, line in lines.items()}
    ids = [match.id for match, _m in links]
    rows = {
        row["id"]: row
        for row in Match.objects.filter(id__in=ids).values(
            "id", "home_id", "away_id", "status", "outcome", "winner_id", "offender_id"
        )
    }
    scored: dict[int, dict[int, dict]] = {}
    for score in MatchResult.objects.filter(match_id__in=ids).values(
        "match_id", "line_id", "points", "mp", "vp", "won", "drawn"
    ):
        scored.setdefault(score["match_id"], {})[score["line_id"]] = dict(score)
    for match, m in links:
        row = rows[match.id]
        here = {
            "home": ref_of.get(row["home_id"]),
            "away": ref_of.get(row["away_id"]),
            "status": row["status"],
            "outcome": row["outcome"] or None,
            "winner": ref_of.get(row["winner_id"]),
            "offender": ref_of.get(row["offender_id"]),
            "results": [
                {
                    "line": ref_of[line_id],
                    "points": x["points"],
                    "mp": x["mp"],
                    "vp": x["vp"],
                    "won": x["won"],
                    "drawn": x["drawn"],
                }
                for line_id in (row["home_id"], row["away_id"])
                if (x := scored.get(match.id, {}).get(line_id))
            ],
        }
        for field, value in here.items():
            expected = m.get("results", []) if field == "results" else m.get(field) or None
            if value != expected:
                raise TournamentImportError(
                    _(
                        "Match %(ref)s, %(field)s: %(here)s once its result is stored here, "
                        "%(file)s in the file. The results do not fit the file's VP table or "
                        "bracket."
                    )
                    % {
                        "ref": m["ref"],
                        "field": _field_label(field),
                        "file": _figures(field, expected),
                        "here": _figures(field, value),
                    }
                )


def _field_label(field: str) -> str:
    return {
        "home": _("home line"),
        "away": _("away line"),
        "status": _("status"),
        "outcome": _("outcome"),
        "winner": _("winner"),
        "offender": _("offending line"),
        "results": _("points, MP and VP"),
    }[field]


def _figures(field: str, value) -> str:
    """A value of the comparison as the sentence shows it (results as points/MP/VP)."""
    if isinstance(value, list):
        return (
            "; ".join(f"{x['line']} {x['points']} / {x['mp']} MP / {x['vp']} VP" for x in value)
            or "—"
        )
    choices = {"status": Match.Status, "outcome": Outcome}.get(field)
    if choices is not None and value in choices.values:
        return str(choices(value).label)
    return "—" if value is None else str(value)


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
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, DataError) as exc:
        raise TournamentImportError(
            _("The file is malformed: %(error)s") % {"error": repr(exc)}
        ) from exc
    except (IntegrityError, ValidationError) as exc:
        raise TournamentImportError(
            _("The file conflicts with data here: %(error)s") % {"error": exc}
        ) from exc
    logger.info("imported tournament %s", tournament.slug)
    # older results came in at once: who follows results replays from the tournament's start
    transaction.on_commit(
        lambda: tournament_imported.send(sender=Tournament, tournament=tournament)
    )
    return tournament


def _import(doc: dict, slug: str | None) -> Tournament:
    t = doc["tournament"]
    slug = slug or t["slug"]
    if Tournament.objects.filter(slug=slug).exists():
        raise TournamentImportError(
            _("A tournament with slug “%(slug)s” already exists here.") % {"slug": slug}
        )
    players = _players(doc["players"])
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
    _kept(tournament).save()

    # lines, their members and entries each in one statement (a 1,000-line open imports in
    # seconds, not in a query a row)
    lines = {
        data["ref"]: Line(name=data["name"], club=data.get("club") or "") for data in doc["lines"]
    }
    if len(lines) != len(doc["lines"]):
        raise TournamentImportError(_("Two lines of the file have the same reference."))
    _create_all(lines.values())
    _create_all(
        LineMember(line=lines[data["ref"]], player=players[ref], position=i)
        for data in doc["lines"]
        for i, ref in enumerate(data["players"])
    )
    _create_all(
        Entry(
            tournament=tournament,
            line=lines[data["ref"]],
            seed=data.get("seed"),
            withdrawn=data.get("withdrawn", False),
            checked_in=bool(data.get("checked_in", False)),
            category=data.get("category") or "",
        )
        for data in doc["lines"]
        if data.get("entered", True)
    )
    for forbidden in doc.get("forbidden_pairings") or []:
        a, b = sorted((lines[ref] for ref in forbidden["lines"]), key=lambda line: line.pk)
        _create(
            ForbiddenPairing,
            tournament=tournament,
            line_a=a,
            line_b=b,
            note=forbidden.get("note") or "",
        )
    for rule in doc.get("penalty_table") or []:
        _create(
            PenaltyRule,
            tournament=tournament,
            label=rule["label"],
            kind=rule["kind"],
            vp=rule.get("vp", 0),
        )
    for prize in doc.get("prizes") or []:
        # the line a prize goes to is not read: the export derives it from the standings
        _create(
            Prize,
            tournament=tournament,
            category=prize.get("category") or "",
            place=prize["place"],
            value=prize["value"],
            label=prize["label"],
        )

    def line_id(ref):
        return lines[ref].id if ref else None

    matches: dict[str, Match] = {}
    links: list[tuple[Match, dict]] = []
    played: list[tuple[tuple[int, int], Match, dict]] = []
    closed: list[int] = []
    for s in doc["stages"]:
        stage = _create(
            Stage,
            tournament=tournament,
            order=s["order"],
            name=s["name"],
            kind=s["kind"],
            # a closed stage takes no result: it is closed once its results are in
            status=Stage.Status.RUNNING if s["status"] == Stage.Status.CLOSED else s["status"],
            double_round_robin=s.get("double_round_robin", False),
            third_place_match=s.get("third_place_match", False),
            **_pairing_settings(s.get("pairing")),
        )
        if s["status"] == Stage.Status.CLOSED:
            closed.append(stage.pk)
        if s.get("duplicate") is not None:
            try:
                duplicate.import_board_set(stage, s["duplicate"], line_id)
            except duplicate.BoardSetImportError as error:
                raise TournamentImportError(str(error)) from None
        groups = {}
        for g in s["groups"]:
            group = _create(Group, stage=stage, name=g["name"], order=g.get("order", 0))
            _create_all(
                GroupMember(
                    group=group,
                    line=lines[x["line"]],
                    position=x["position"],
                    joined_round=x.get("joined_round", 1),
                )
                for x in g["members"]
            )
            groups[g["name"]] = group
        rounds = [
            Round(
                stage=stage,
                number=r["number"],
                name=r.get("name", ""),
                starts_at=parse_datetime(r["starts_at"]) if r.get("starts_at") else None,
            )
            for r in s["rounds"]
        ]
        _create_all(rounds)
        stage_matches: list[Match] = []
        for rnd, r in zip(rounds, s["rounds"], strict=True):
            for m in r["matches"]:
                kind = _result_kind(m)
                # a match with a result starts without one: the result writer projects it
                match = Match(
                    round=rnd,
                    group=groups[m["group"]] if m.get("group") else None,
                    home_id=line_id(m.get("home")),
                    away_id=line_id(m.get("away")),
                    table_number=m.get("table"),
                    status=Match.Status.SCHEDULED if kind else m["status"],
                    outcome="" if kind == "result" else (m.get("outcome") or ""),
                    winner_id=None if kind else line_id(m.get("winner")),
                    offender_id=None if kind else line_id(m.get("offender")),
                    bracket_position=m.get("bracket_position"),
                    next_slot=m.get("next_slot") or "",
                    loser_next_slot=m.get("loser_next_slot") or "",
                    is_third_place=m.get("is_third_place", False),
                )
                stage_matches.append(match)
                matches[m["ref"]] = match
                links.append((match, m))
                if kind:
                    played.append(((s["order"], r["number"]), match, m))
        _create_all(stage_matches)
    linked = []
    for match, m in links:
        if m.get("next_match") or m.get("loser_next_match"):
            match.next_match = matches[m["next_match"]] if m.get("next_match") else None
            match.loser_next_match = (
                matches[m["loser_next_match"]] if m.get("loser_next_match") else None
            )
            linked.append(match)
    Match.objects.bulk_update(linked, ["next_match", "loser_next_match"])
    # Earlier rounds first: a knock-out result moves its lines on to a later match, which must
    # not have its own result yet (the lines are already there, so nothing moves).
    played.sort(key=lambda item: item[0])
    # One batch, announcing nothing (see results.written_together): the tournament is rated
    # once, after the commit. The matches are locked in one query. The batch is flushed before a
    # knock-out result, whose check of the later match and move of lines read the stored rows,
    # and at the end of the block, before the comparison reads the projection.
    with results.written_together(announce=False) as batch:
        held = results.lock_matches(match.pk for _when, match, _m in played)
        batch.preload(held.values())
        for _when, match, m in played:
            with batch.writing(held, match.pk) as locked:
                _store_result(m, locked)
    # penalties after the results: a forfeit's own result came in with the results above
    _create_all(
        Penalty(
            match=match,
            line=lines[p["line"]],
            kind=p["kind"],
            label=p["label"],
            vp=p.get("vp", 0),
            reason=p.get("reason", ""),
        )
        for match, m in links
        for p in m.get("penalties") or []
    )
    # a duplicate board's rulings: they replace the board's deal in the scores against the field
    _create_all(_ruling(match, m, a) for match, m in links for a in m.get("board_rulings") or [])
    Stage.objects.filter(pk__in=closed).update(status=Stage.Status.CLOSED)
    _check_reproduced(links, lines)
    ChangeLog.objects.create(
        tournament=tournament, action="tournament.imported", detail={"format": FORMAT}
    )
    return tournament
