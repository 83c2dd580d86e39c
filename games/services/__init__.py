"""Match records: submitted, checked, stored, verified; one code path for the API, the import
and the desk.

One module per job, each importing only those above it in this list:

- ``documents``: bytes to a JSON object, a batch's envelope, the engine's parse (no query).
- ``fitting``: whether a readable record can be this match's record.
- ``enqueueing``: sending verifications to the workers (by task name: no import of the tasks).
- ``verifying``: one record's verdict, written with its match's result.
- ``batches``: the records waiting beside a task's own, verified in one batch.
- ``submitting``: storing records as versions of their matches' records.
- ``organizing``: the organizer's actions on a record.

Callers import from here: ``from games import services``.
"""

from games.services.batches import (
    GROUP_SIZE,
    GROUP_WAIT_S,
    batching_available,
    claims_held_elsewhere,
    record_text,
    verify_all_waiting,
    verify_waiting,
)
from games.services.documents import (
    MATCH_FIELD,
    MAX_BATCH_BYTES,
    MAX_BATCH_RECORDS,
    MAX_RECORD_BYTES,
    check_storable_text,
    decode_batch,
    decode_document,
    match_named,
    parse,
    record_body,
)
from games.services.enqueueing import (
    BATCH_SIZE,
    PUBLISH_RETRY,
    VERIFY_MANY,
    VERIFY_ONE,
    VERIFY_WAITING,
    WAKE_STALE_S,
    eager,
    enqueue_verification,
    enqueue_verifications,
    pending_among,
    stale_pending,
    take_wake,
    wake_workers,
    wakes_available,
)
from games.services.fitting import (
    check_record_fits,
    effective_options,
    seat_idents,
    seat_lines,
)
from games.services.organizing import (
    choose_standing,
    rerun_verification,
)
from games.services.submitting import (
    MAX_BYTES_PER_MATCH,
    MAX_VERSIONS_PER_MATCH,
    OctetLength,
    StoredRecords,
    SubmitResult,
    stored_records,
    submit_record,
    submit_records,
)
from games.services.verifying import (
    MAX_ATTEMPTS,
    TRANSIENT_ERRORS,
    VERDICT_FIELDS,
    VERIFY_HARD_LIMIT_S,
    VERIFY_SOFT_LIMIT_S,
    compute_verdict,
    mark_error,
    poison_reason,
    run_verification,
    slow_reason,
    store_verdict,
    uncount_attempt,
)

__all__ = [
    "BATCH_SIZE",
    "GROUP_SIZE",
    "GROUP_WAIT_S",
    "MATCH_FIELD",
    "MAX_ATTEMPTS",
    "MAX_BATCH_BYTES",
    "MAX_BATCH_RECORDS",
    "MAX_BYTES_PER_MATCH",
    "MAX_RECORD_BYTES",
    "MAX_VERSIONS_PER_MATCH",
    "PUBLISH_RETRY",
    "TRANSIENT_ERRORS",
    "VERDICT_FIELDS",
    "VERIFY_HARD_LIMIT_S",
    "VERIFY_MANY",
    "VERIFY_ONE",
    "VERIFY_SOFT_LIMIT_S",
    "VERIFY_WAITING",
    "WAKE_STALE_S",
    "OctetLength",
    "StoredRecords",
    "SubmitResult",
    "batching_available",
    "check_record_fits",
    "check_storable_text",
    "choose_standing",
    "claims_held_elsewhere",
    "compute_verdict",
    "decode_batch",
    "decode_document",
    "eager",
    "effective_options",
    "enqueue_verification",
    "enqueue_verifications",
    "mark_error",
    "match_named",
    "parse",
    "pending_among",
    "poison_reason",
    "record_body",
    "record_text",
    "rerun_verification",
    "run_verification",
    "seat_idents",
    "seat_lines",
    "slow_reason",
    "stale_pending",
    "store_verdict",
    "stored_records",
    "submit_record",
    "submit_records",
    "take_wake",
    "uncount_attempt",
    "verify_all_waiting",
    "verify_waiting",
    "wake_workers",
    "wakes_available",
]
