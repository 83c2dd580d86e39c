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


def neutralise(value: object) -> object:
    """``value`` as it may go into a CSV cell: text that a spreadsheet would run, made text."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return ESCAPE + value
    return value


def restore(text: str) -> str:
    """The text :func:`neutralise` was given, from a cell read back."""
    if text.startswith(ESCAPE) and text[1:].startswith(FORMULA_STARTS):
        return text[1:]
    return text


def write_csv(rows: Iterable[Iterable[object]]) -> bytes:
    """UTF-8 CSV of ``rows``, every cell neutralised."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows([neutralise(cell) for cell in row] for row in rows)
    return buffer.getvalue().encode()
