"""Request body parsers of the API."""

import json

from django.utils.translation import gettext as _
from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, also refusing JSON nested too deep for Python's parser, and lone
    surrogates.

    ``json.loads`` raises ``RecursionError`` (not a ``ValueError``) on a body such as
    ``[[[[…]]]]`` fifty thousand deep; DRF lets it through as a 500.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError(
                _("The body is not valid JSON: %(reason)s") % {"reason": _("nested too deep")}
            ) from exc
        # "\ud800" is valid JSON but no text: echoed in an error it would break the answer
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ParseError(
                _("The body is not valid JSON: %(reason)s")
                % {"reason": _("it holds an unpaired surrogate, which is not text")}
            ) from exc
        return data
