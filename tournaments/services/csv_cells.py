"""Spreadsheet-safe CSV cells: the one rule for every CSV the project writes or reads back.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula to
spreadsheet software (CSV or "formula" injection: a line named ``=HYPERLINK(...)``). Written
cells get a leading apostrophe, which spreadsheets show as text and do not print; reading a CSV
back removes that apostrophe again, so a name genuinely starting with ``-`` or ``=`` round-trips.
Numbers are written as numbers (a negative score stays a number).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
ESCAPE = "'"


def _escaped(text: str) -> bool:
    """Whether ``text`` is, after any apostrophes, a formula start: such text gets one more
    apostrophe when written, so a name that really begins with ``'=`` also reads back as it was."""
    return text.lstrip(ESCAPE).startswith(FORMULA_STARTS)


def neutralise(value: object) -> object:
    """``value`` as it may go into a CSV cell: text that a spreadsheet would run, made text."""
    if isinstance(value, str) and _escaped(value):
        return ESCAPE + value
    return value


def restore(text: str) -> str:
    """The text :func:`neutralise` was given, from a cell read back."""
    if text.startswith(ESCAPE) and _escaped(text):
        return text[1:]
    return text


def write_csv(rows: Iterable[Iterable[object]]) -> bytes:
    """UTF-8 CSV of ``rows``, every cell neutralised, lines ending in CRLF (RFC 4180): the csv
    module quotes only cells holding a character of the line terminator, so with a bare LF a
    carriage return inside a name would break the row."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerows([neutralise(cell) for cell in row] for row in rows)
    return buffer.getvalue().encode()
