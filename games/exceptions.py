"""Errors a submitter can cause; each has a stable code, the field at fault and a translated text.

The API's exception handler turns them into ``{"error": {"code", "message", "field"}}`` with
their HTTP status; the import command prints them. None of them leaves anything stored.
"""

from django.utils.translation import gettext_lazy as _

from tournaments.exceptions import RefusalWithStatus


class SubmissionError(RefusalWithStatus):
    """A record that cannot be accepted for a match; nothing is stored."""

    status = 400
    code = "invalid_record"
    default_message = _("The record cannot be accepted.")

    def __init__(self, message=None, *, code=None, field=None, detail=None):
        self.message = message if message is not None else self.default_message
        if code:
            self.code = code
        self.field = field
        self.detail = detail
        super().__init__(str(self.message))

    def as_dict(self):
        body = {"code": self.code, "message": str(self.message), "field": self.field}
        if self.detail is not None:
            body["detail"] = self.detail
        return body


class RecordTooLarge(SubmissionError):
    status = 413
    code = "too_large"
    default_message = _("The record is larger than the limit.")


class MalformedDocument(SubmissionError):
    """Not JSON, or JSON that is not an object."""

    code = "malformed_json"
    default_message = _("The body is not a JSON document.")


class UnreadableRecord(SubmissionError):
    """JSON, but not a readable ``scopa-match/1`` record (the engine's RecordError)."""

    code = "unreadable_record"


class RecordMismatch(SubmissionError):
    """A readable record that cannot belong to this match: seats, variant, options, end, players."""

    status = 422
    code = "record_mismatch"


class MatchNotReady(SubmissionError):
    """The match has no two lines yet (a knock-out slot waiting for a winner) or is a bye."""

    status = 409
    code = "match_not_ready"
    default_message = _("This match does not have two lines yet; no record can be submitted.")


class SubmissionStateError(SubmissionError):
    """An organizer action that does not fit the submission's state."""

    status = 409
    code = "wrong_state"


class TooManyVersions(SubmissionError):
    """The match already holds as many record versions as one match may keep."""

    status = 429
    code = "too_many_versions"
    default_message = _("This match already has as many record versions as it may keep.")
