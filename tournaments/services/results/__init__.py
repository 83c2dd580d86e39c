"""Match results: the one way a result is written, from every source.

Every source (desk, API, verified record, import, forfeit, the bye of a draw, the players'
sheets) ends in ``versions._save_version``, in ONE transaction with the match row locked. The
package has one module per job, each importing only those above it in this list:

- ``reading``: the deal and decision value types; a sheet read and written back (pure).
- ``deciding``: the engine's referee and match-end rule, asked for this match.
- ``stored``: the version in force and the deals of a result, as stored.
- ``batch``: the batch writer, which writes and announces results written together.
- ``projection``: the version in force projected into ``MatchResult`` and the match row.
- ``versions``: versions and precedence; every writer of the organizer and the records.
- ``players``: the players' sheets, proposed and countersigned at the table.

Callers import from here: ``from tournaments.services import results``.
"""

from tournaments.services.results.batch import (
    JOINED_STAGES_UP_TO,
    PROJECTED_MATCH_FIELDS,
    SCORE_COLUMNS,
    ResultBatch,
    ScoreRow,
    lock_matches,
    send_results_changed,
    written_together,
)
from tournaments.services.results.deciding import (
    SheetProgress,
    decide,
    decision_from_verdict,
    offline_referee,
    sheet_progress,
)
from tournaments.services.results.players import (
    countersign,
    entry_refusal,
    lock_match,
    propose_result,
    refer_version,
    withdraw_version,
)
from tournaments.services.results.projection import (
    bye_score,
)
from tournaments.services.results.reading import (
    MAX_DEAL_NUMBER,
    MAX_DEAL_POINTS,
    MAX_DEALS,
    MAX_TIEBREAK_DEALS,
    OFFENCE_OUTCOMES,
    PLAYED_OUTCOMES,
    Breakdown,
    Deal,
    Decision,
    Sheet,
    bye_sheet,
    deals_of,
    decision_of,
    parse_deals,
    same_result,
    sheet_of,
)
from tournaments.services.results.stored import (
    deals_in_force,
    deals_of_match,
    deals_of_version,
    in_force,
    in_force_id,
)
from tournaments.services.results.versions import (
    UNCHECKED,
    Actor,
    BasedOn,
    SavedVersion,
    Unchecked,
    accept_version,
    apply_verified_result,
    check_based_on,
    delete_result,
    enter_result,
    import_result,
    named_version,
    reject_version,
    save_bye,
    save_result,
)

__all__ = [
    "JOINED_STAGES_UP_TO",
    "MAX_DEALS",
    "MAX_DEAL_NUMBER",
    "MAX_DEAL_POINTS",
    "MAX_TIEBREAK_DEALS",
    "OFFENCE_OUTCOMES",
    "PLAYED_OUTCOMES",
    "PROJECTED_MATCH_FIELDS",
    "SCORE_COLUMNS",
    "UNCHECKED",
    "Actor",
    "BasedOn",
    "Breakdown",
    "Deal",
    "Decision",
    "ResultBatch",
    "SavedVersion",
    "ScoreRow",
    "Sheet",
    "SheetProgress",
    "Unchecked",
    "accept_version",
    "apply_verified_result",
    "bye_score",
    "bye_sheet",
    "check_based_on",
    "countersign",
    "deals_in_force",
    "deals_of",
    "deals_of_match",
    "deals_of_version",
    "decide",
    "decision_from_verdict",
    "decision_of",
    "delete_result",
    "enter_result",
    "entry_refusal",
    "import_result",
    "in_force",
    "in_force_id",
    "lock_match",
    "lock_matches",
    "named_version",
    "offline_referee",
    "parse_deals",
    "propose_result",
    "refer_version",
    "reject_version",
    "same_result",
    "save_bye",
    "save_result",
    "send_results_changed",
    "sheet_of",
    "sheet_progress",
    "withdraw_version",
    "written_together",
]
