"""The browsable API under the Content-Security-Policy (docs/security.md)."""

import logging

from csp.constants import UNSAFE_INLINE
from rest_framework.renderers import BrowsableAPIRenderer

logger = logging.getLogger(__name__)


class CSPBrowsableAPIRenderer(BrowsableAPIRenderer):
    """DRF's HTML pages lay themselves out with ``style`` attributes: allowed on those pages
    alone. Scripts stay ``'self'`` (DRF's are files; its CSRF data is a JSON ``<script>``)."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        response = (renderer_context or {}).get("response")
        if response is not None:
            response._csp_update = {"style-src": [UNSAFE_INLINE]}
        return super().render(data, accepted_media_type, renderer_context)
