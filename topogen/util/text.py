"""Text from a spec or catalog into an output file: escaped for the place it lands.

Every exporter that puts user text (spec name, catalog names, descriptions,
manufacturers) into a comment, a CSV field or a spreadsheet cell goes through these
helpers, so no such text can end a comment, split a record, or start a formula.
Catalog text with control characters is refused at input (exit 2); these helpers
are the second line.
"""

from __future__ import annotations

import re
from typing import Iterable

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
CSV_SPECIAL = re.compile(r'[",;\t\r\n]')  # fields with these are quoted (';' and tab: spreadsheet locales)
LINE_BREAKS = re.compile(r"[\r\n\u0085\u2028\u2029]+")


def cell_safe(value):
    """Text that a spreadsheet would read as a formula is prefixed with ``'`` (formula injection).

    Numbers pass through unchanged; only strings beginning with ``= + - @`` (or a
    tab / carriage return) are neutralised, as OWASP's CSV-injection guidance says.
    """
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def csv_field(value) -> str:
    """One CSV field: quoted (inner quotes doubled) when it holds ``" , ; tab CR LF``."""
    if value is None:
        return ""
    s = value if isinstance(value, str) else str(value)
    return '"' + s.replace('"', '""') + '"' if CSV_SPECIAL.search(s) else s


def csv_line(row: Iterable) -> str:
    """A CSV record with ``\\n`` end, every field through :func:`csv_field`."""
    return ",".join(csv_field(v) for v in row) + "\n"


class CarefulCsvWriter:
    """A ``csv.writer`` look-alike that also quotes fields holding ``;``, tab or CR.

    Python's writer with ``lineterminator="\\n"`` leaves a CR or ``;`` unquoted, which
    splits a record in a spreadsheet; this one is for files with catalog text (small:
    BOMs, NetBox devices and prerequisites), one Python step per row.
    """

    def __init__(self, fh):
        self.fh = fh

    def writerow(self, row: Iterable) -> None:
        self.fh.write(csv_line(row))

    def writerows(self, rows: Iterable[Iterable]) -> None:
        for row in rows:
            self.fh.write(csv_line(row))


def one_line(text: str) -> str:
    """Text for a line comment (DOT ``//``, ``#``): line breaks become spaces."""
    return LINE_BREAKS.sub(" ", text)


def xml_comment(text: str) -> str:
    """Text for inside ``<!-- ... -->``: no ``--`` (XML forbids it there), no trailing ``-``.

    A spec named ``a--b`` stays readable as ``a- -b``; the exact name is in the
    GraphML ``<data>`` of the graph, escaped as an attribute value.
    """
    s = one_line(text)
    while "--" in s:
        s = s.replace("--", "- -")
    return s + " " if s.endswith("-") else s
