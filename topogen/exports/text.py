"""Helpers shared by the text exporters: spreadsheet-safe cells and provenance."""

from __future__ import annotations

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell_safe(value):
    """Text that a spreadsheet would read as a formula is prefixed with ``'`` (formula injection).

    Numbers pass through unchanged; only strings beginning with ``= + - @`` (or a
    tab / carriage return) are neutralised.
    """
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value
