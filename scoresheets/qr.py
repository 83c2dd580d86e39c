"""QR codes of private links, drawn as inline SVG by segno (pure Python, no image library).

segno writes one ``<path>`` with presentation attributes only (no ``style``, no script), so the
SVG passes the site's Content-Security-Policy (docs/security.md) inline in the page.
"""

import logging
from functools import lru_cache

import segno
from django.utils.safestring import SafeString, mark_safe

logger = logging.getLogger(__name__)


@lru_cache(maxsize=2048)  # a code is a pure function of its text; a round prints hundreds
def qr_svg(data: str) -> SafeString:
    """``data`` as a QR code in SVG, sized by CSS (a ``viewBox``, no width or height).

    Error correction "M" (15 %) survives a crease or a coffee ring on a printed card; segno
    raises it further when the code has room to spare.
    """
    code = segno.make_qr(data, error="m")
    svg = code.svg_inline(scale=1, border=4, omitsize=True, svgclass="qr", lineclass=None)
    # segno's own markup: the text only shapes the path's coordinates, never appears as text
    return mark_safe(svg)
