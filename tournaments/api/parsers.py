"""Request body parsers of the API."""

from django.utils.translation import gettext as _
from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, also refusing JSON nested too deep for Python's parser.

    ``json.loads`` raises ``RecursionError`` (not a ``ValueError``) on a body such as
    ``[[[[…]]]]`` fifty thousand deep; DRF lets it through as a 500.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError(
                _("The body is not valid JSON: %(reason)s") % {"reason": _("nested too deep")}
            ) from exc
