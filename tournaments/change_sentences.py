"""Change-log entries as sentences with names (the desk and the admin show these, not codes).

``ChangeLog.detail`` keeps ids (``winner=26``) so it survives renames; here they become the
lines' and stages' names, in the reader's language.
"""

import logging

from django.utils.translation import gettext as _

from tournaments.models import BoardAdjustment, Line, Outcome, Stage

logger = logging.getLogger(__name__)


def _names(model, ids):
    ids = [i for i in ids if isinstance(i, int)]
    return dict(model.objects.filter(pk__in=ids).values_list("pk", "name")) if ids else {}


def _result_sentence(change, lines):
    detail = change.detail
    match = change.match
    totals = detail.get("totals") or []
    if match is None or len(totals) != 2:
        return ""
    home = match.home.name if match.home_id else "–"
    away = match.away.name if match.away_id else "–"
    outcome = detail.get("outcome")
    text = _("%(home)s %(hp)s – %(ap)s %(away)s") % {
        "home": home,
        "away": away,
        "hp": totals[0],
        "ap": totals[1],
    }
    winner = lines.get(detail.get("winner"))
    if winner:
        text += "; " + _("won by %(line)s") % {"line": winner}
    else:
        text += "; " + _("drawn")
    if outcome and outcome != Outcome.COMPLETED:
        text += " (" + str(Outcome(outcome).label).lower() + ")"
    if detail.get("replaced"):
        text += "; " + _("replaces the previous result")
    return text + "."


def describe(change, *, lines=None, stages=None):
    """One sentence about a ChangeLog row (empty when the label says it all)."""
    detail = change.detail or {}
    lines = lines if lines is not None else _names(Line, [detail.get("winner"), detail.get("line")])
    stages = stages if stages is not None else _names(Stage, [detail.get("stage")])
    action = change.action
    if action in ("result.entered", "result.imported", "result.verified"):
        return _result_sentence(change, lines)
    if action == "result.bye" and change.match is not None:
        return _("%(match)s: %(vp)s VP.") % {
            "match": change.match,
            "vp": (detail.get("vp") or ["?"])[0],
        }
    if action == "board.ruled" and change.match is not None:
        kinds, faults = dict(BoardAdjustment.Kind.choices), dict(BoardAdjustment.Fault.choices)
        return _("%(match)s, board %(board)s: %(kind)s; %(fault)s.") % {
            "match": change.match,
            "board": detail.get("board", "?"),
            "kind": kinds.get(str(detail.get("kind")), detail.get("kind")),
            "fault": faults.get(str(detail.get("fault")), detail.get("fault")),
        }
    if action == "board.ruling_cleared" and change.match is not None:
        return _("%(match)s, board %(board)s: the deal played counts again.") % {
            "match": change.match,
            "board": detail.get("board", "?"),
        }
    if action == "tournament.match_end":
        return _("Matches end after %(n)s deals.") % {"n": detail.get("deals", "?")}
    if action == "result.deleted" and change.match is not None:
        return _("Result of %(match)s deleted.") % {"match": change.match}
    stage = stages.get(detail.get("stage")) or detail.get("stage_name")
    line = lines.get(detail.get("line")) or detail.get("line_name")
    if action.startswith("line.") and line:
        return _("Line: %(line)s.") % {"line": line}
    if action in ("lines.added", "lines.imported") and detail.get("lines"):
        return _("%(n)s lines.") % {"n": detail["lines"]}
    if action == "rounds.generated" and stage:
        return _("%(stage)s: %(rounds)s rounds, %(matches)s matches.") % {
            "stage": stage,
            "rounds": detail.get("rounds", "?"),
            "matches": detail.get("matches", "?"),
        }
    if action == "groups.created" and stage:
        return _("%(stage)s: %(groups)s groups.") % {"stage": stage, "groups": detail.get("groups")}
    if stage:
        return _("Stage: %(stage)s.") % {"stage": stage}
    if action.startswith("admin.") and detail.get("fields"):
        return _("Fields changed: %(fields)s.") % {"fields": ", ".join(detail["fields"])}
    return ""


def describe_all(changes):
    """Set ``sentence`` on each change, reading every name it needs in two queries."""
    changes = list(changes)
    line_ids, stage_ids = [], []
    for change in changes:
        detail = change.detail or {}
        line_ids += [detail.get("winner"), detail.get("line")]
        stage_ids.append(detail.get("stage"))
    lines, stages = _names(Line, line_ids), _names(Stage, stage_ids)
    for change in changes:
        try:
            change.sentence = describe(change, lines=lines, stages=stages)
        except (KeyError, TypeError, ValueError):  # an old row with another shape
            logger.warning("change %s: detail not describable", change.pk)
            change.sentence = ""
    return changes


def action_labels():
    return {
        "result.entered": _("Result entered"),
        "result.imported": _("Result imported"),
        "result.verified": _("Verified record applied"),
        "result.deleted": _("Result deleted"),
        "result.bye": _("Bye scored"),
        "result.awaiting": _("Record waiting for a decision"),
        "result.accepted": _("Version accepted"),
        "result.rejected": _("Version rejected"),
        "result.proposed": _("Players' sheet submitted"),
        "result.countersigned": _("Players' sheet signed by both sides"),
        "result.withdrawn": _("Players' sheet withdrawn"),
        "table.started": _("Sheet being entered at the table"),
        "table.submitted": _("Sheet submitted at the table"),
        "table.accepted": _("Sheet accepted by the other side"),
        "table.disputed": _("Sheet disputed by the other side"),
        "table.expired": _("Sheet not answered in time"),
        "table.decided": _("Referee's decision on a disputed sheet"),
        "table.superseded": _("Sheet superseded by another result"),
        "board.ruled": _("Adjusted score on a board"),
        "board.ruling_cleared": _("Adjusted score on a board withdrawn"),
        "stage.closed": _("Stage closed"),
        "stage.reopened": _("Stage reopened"),
        "bracket.reseeded": _("Knock-out re-seeded from the current standings"),
        "bracket.kept": _("Knock-out kept as drawn"),
        "line.withdrawn": _("Line withdrawn"),
        "line.reinstated": _("Line back in the draw"),
        "line.edited": _("Line edited"),
        "pairing.forbidden": _("Two lines kept from meeting"),
        "pairing.allowed": _("Two lines allowed to meet again"),
        "bracket.generated": _("Bracket generated"),
        "rounds.generated": _("Rounds generated"),
        "tournament.match_end": _("Matches set to end after a round's boards"),
        "groups.created": _("Groups created"),
        "lines.added": _("Lines added"),
        "lines.imported": _("Lines imported (CSV)"),
        "line.added": _("Line added"),
        "tournament.created": _("Tournament created"),
        "role.granted": _("Role granted"),
        "role.revoked": _("Role revoked"),
        "round.started": _("Round started"),
        "round.paired": _("Round paired"),
        "round.unpaired": _("Round's pairing cancelled, to pair it again"),
        "round.kept": _("Round kept as paired"),
        "round.flagged": _("Later rounds flagged after a correction"),
        "entries.checked_in": _("Check-in list saved"),
        "stage.lines_drawn": _("Lines of the stage set at round 1"),
        "stage.late_entries": _("Late entries joined the stage"),
        "tournament.imported": _("Tournament imported"),
        "link_issued": _("Private link issued"),
        "link_revoked": _("Private link revoked"),
    }


def admin_action_labels():
    """``admin.<model>.<verb>``, written by the admin's save and delete hooks."""
    return {
        "added": _("Added in the admin"),
        "changed": _("Changed in the admin"),
        "deleted": _("Deleted in the admin"),
    }


def labelled(changes):
    """The entries as sentences (``describe_all``), each with the label of its action."""
    changes = describe_all(changes)
    labels = action_labels()
    admin_labels = admin_action_labels()
    for change in changes:
        label = labels.get(change.action)
        if label is None and change.action.startswith("admin."):
            label = admin_labels.get(change.action.rsplit(".", 1)[-1])
        change.action_label = label or change.action
    return changes
