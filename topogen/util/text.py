"""Text from a spec or catalog into an output file: escaped for the place it lands.

Every exporter that puts text into a comment, a CSV field or a spreadsheet cell
goes through these helpers, so no such text can end a comment, split a record,
or start a formula. Catalog text with control characters is refused at input
(exit 2); these helpers are the second line.

**The CSV rule** (:func:`csv_field`, the only way a CSV field is written: every
CSV file of every exporter, through :mod:`topogen.fabric.view` or the writers below):

1. A spreadsheet may open the file with ``,``, ``;`` or tab as the separator, so
   a cell can start at the start of a field or after any ``,`` ``;`` tab or line
   break inside it. Wherever a cell could start with ``= + - @`` (after blanks or
   quotes), a ``'`` goes before that character, unless the would-be cell is a plain
   number (``-5``, ``+1.5e3``) or a lone ``-``. ``=HYPERLINK(...)`` becomes ``'=HYPERLINK(...)``
   and ``a;=1+1`` becomes ``a;'=1+1`` (OWASP's CSV-injection guidance, for every
   separator).
2. A field holding ``" , ; tab CR LF`` is quoted, inner quotes doubled (Python's
   ``csv.writer`` leaves ``;`` and tab unquoted, which splits a record in a
   spreadsheet set to those separators).

Generated names (devices, ports, racks) never need either step, so their bytes
are what ``csv.writer`` writes.
"""

from __future__ import annotations

import re
from typing import Iterable

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
CSV_SPECIAL = re.compile(r'[",;\t\r\n]')  # fields with these are quoted (';' and tab: spreadsheet locales)
CSV_QUOTED = '",;\t\r\n'
LINE_BREAKS = re.compile(r"[\r\n\u0085\u2028\u2029]+")
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
# where a cell may start (the field's start, or after a separator or line break), its blanks and quotes, then a formula character and the rest of that cell
_RISKY_FIRST = frozenset('=+-@ "\t\r')  # a field starting with one of these may need step 1
_SEPARATOR = re.compile(r"[,;\t\r\n]")  # ... as may one where a cell could start inside it
_CELL_START = re.compile(r'(^|[,;\t\r\n])([ "]*)([=+\-@][^,;\t\r\n]*)')


def cell_safe(value):
    """Text that a spreadsheet would read as a formula is prefixed with ``'`` (formula injection).

    Numbers pass through unchanged; only strings beginning with ``= + - @`` (or a
    tab / carriage return) are neutralised, as OWASP's CSV-injection guidance says.
    For a spreadsheet cell (XLSX), which holds one value; a CSV field goes through
    :func:`csv_field`.
    """
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def _neutral(m: re.Match) -> str:
    lead, blanks, cell = m.groups()
    return m.group(0) if cell == "-" or NUMBER.fullmatch(cell) else f"{lead}{blanks}'{cell}"


def csv_text(text: str) -> str:
    """Step 1 of the CSV rule (module docstring): a ``'`` before every formula a spreadsheet could see in ``text``.

    A name like ``hb0000-gpu0`` (no separator inside, a safe first character) is
    returned as it is without running the pattern: most fields are such names.
    """
    if not text or (text[0] not in _RISKY_FIRST and not _SEPARATOR.search(text)):
        return text
    if text[0] in ("\t", "\r"):
        text = "'" + text
    return _CELL_START.sub(_neutral, text)


def csv_field(value) -> str:
    """One CSV field by the CSV rule (module docstring): formula starts neutralised, quoted when it holds ``" , ; tab CR LF``."""
    if value is None:
        return ""
    if not isinstance(value, str):
        return str(value)  # numbers: as Python writes them (a negative number is not a formula)
    s = csv_text(value)
    return '"' + s.replace('"', '""') + '"' if CSV_SPECIAL.search(s) else s


def csv_line(row: Iterable) -> str:
    """A CSV record with ``\\n`` end, every field through :func:`csv_field`."""
    return ",".join(csv_field(v) for v in row) + "\n"


class CsvWriter:
    """A ``csv.writer`` look-alike writing every field through :func:`csv_field` (one Python step per row)."""

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
