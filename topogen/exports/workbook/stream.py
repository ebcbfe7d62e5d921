"""Streamed SpreadsheetML for the workbook's large sheets (cabling, port map).

A row of the large sheets is a handful of integers: shared-string indices
(device and port names, the constant text of a tier) and numbers (cable id,
plane, speed). :func:`rows_xml` turns a chunk of rows, given as one numpy
array per column (:class:`Col`), into ``<row>`` XML without a Python loop per
row: each cell is a fixed-width byte field (the digits right-aligned, NUL
bytes in front), the fields are laid side by side in one ``uint8`` matrix and
the NULs are dropped. No optional cell reference is written (``<c t="s">``,
not ``<c r="A123" t="s">``): a cell without one is the next column
(ECMA-376 Part 1, 18.3.1.4); an empty cell inside a row is ``<c/>``.

:class:`SharedStrings` is the workbook's ``xl/sharedStrings.xml``: small
texts are interned as rows need them; large generated families (every GPU's
name, every switch port's ``name:pN`` label) are reserved as index ranges
and rendered with numpy only when the part is written, so no Python string
per GPU is ever held.

:class:`ZipStream` writes the zip on a second thread: zlib releases the GIL,
so one chunk is deflated while the next is formatted. Entries carry a fixed
time and mode, and the bytes depend only on the content (deterministic).

:func:`save_package` puts it together: openpyxl writes the package (small
sheets, styles, chart, defined names, properties) into memory, with each
large sheet as a placeholder holding its header row and its settings (widths,
frozen panes, filter, print setup); the placeholders are then filled with
streamed rows on the way into the final zip, and the shared-string part is
added with its relationship and content type.
"""

from __future__ import annotations

import itertools
import queue
import re
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence
from xml.sax.saxutils import escape

import numpy as np
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.utils import get_column_letter
from openpyxl.worksheet._write_only import WriteOnlyWorksheet

CELL_TEXT_LIMIT = 32_767  # characters per cell in Excel
TRUNCATED = " [truncated]"
FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)  # the zip epoch: no clock reaches the file
MISSING = -1  # a Col value for "no cell here"
ZIP64_OVER = (1 << 31) - 1  # an entry that may exceed this many bytes is written with Zip64 sizes (zipfile's limit)

SST_PART = "xl/sharedStrings.xml"
SST_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"
SST_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings"
MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


# ------------------------------------------------------------------------- text


def clean_text(text: str) -> str:
    """Text a cell can hold: no control characters XML cannot carry, at most 32,767 characters.

    Either would make Excel refuse or "repair" the file.
    """
    text = ILLEGAL_CHARACTERS_RE.sub("", text)
    if len(text) > CELL_TEXT_LIMIT:
        text = text[: CELL_TEXT_LIMIT - len(TRUNCATED)] + TRUNCATED
    return text


def t_open(text: str) -> str:
    """The ``<t>`` start tag for ``text``: leading or trailing spaces are kept only with ``xml:space``."""
    return '<t xml:space="preserve">' if text != text.strip() else "<t>"


def si_xml(text: str) -> str:
    """One shared-string item: ``<si><t>text</t></si>``, cleaned and escaped."""
    text = clean_text(text)
    return f"<si>{t_open(text)}{escape(text)}</t></si>"


# ------------------------------------------------------------- numpy byte fields


def _quads() -> np.ndarray:
    """Four-digit groups as little-endian uint32: ``[0, 10000)`` in full (``0007``), ``[10000, 20000)`` with leading NULs (``\\0\\0\\07``; ``0`` stays), 20000 all NUL."""
    full = [f"{i:04d}".encode() for i in range(10000)]
    top = [f"{i:d}".encode().rjust(4, b"\0") for i in range(10000)]
    return np.frombuffer(b"".join(full + top + [b"\0" * 4]), dtype="<u4").copy()


_QUADS = _quads()


def digits(values: np.ndarray) -> np.ndarray:
    """``(n, w)`` uint8: each integer's decimal text right-aligned, NUL bytes on its left.

    Four digits per step, looked up in a table as one uint32 (a quarter of the
    divisions of digit by digit); the most significant group of each value
    comes from the table's NUL-padded half, groups above it are all NUL.
    """
    v = np.asarray(values, dtype=np.int64)
    neg = v < 0
    if neg.any():
        return _signed_digits(v, neg)
    nd = len(str(int(v.max(initial=0))))
    groups = -(-nd // 4)
    out = np.empty((len(v), groups), "<u4")
    x = v
    for k in range(groups):
        q, r = np.divmod(x, 10000)
        idx = r + 10000 * (q == 0)
        if k:
            idx[x == 0] = 20000
        out[:, groups - 1 - k] = _QUADS.take(idx)
        x = q
    return out.view(np.uint8).reshape(len(v), 4 * groups)[:, 4 * groups - nd :]


def _signed_digits(v: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """:func:`digits` of integers some of which are negative: a ``-`` before the digits."""
    a = np.abs(v)
    body = digits(a)
    used = np.ones(len(v), np.int64)  # digits of each value
    for k in range(1, body.shape[1]):
        used += a >= 10**k
    out = np.zeros((len(v), body.shape[1] + 1), np.uint8)
    out[:, 1:] = body
    rows = np.flatnonzero(neg)
    out[rows, out.shape[1] - 1 - used[rows]] = ord("-")
    return out


def zdigits(values: np.ndarray, width: int) -> np.ndarray:
    """``(n, width)`` uint8: non-negative integers zero-padded to ``width`` digits (wider ones keep all digits)."""
    v = np.asarray(values, dtype=np.int64)
    w = max(width, len(str(int(v.max(initial=0)))))
    out = np.empty((len(v), w), np.uint8)
    x = v.copy()
    for k in range(w):
        x, d = np.divmod(x, 10)
        out[:, w - 1 - k] = d + 48
    if w > width:  # only values wider than ``width`` show the extra leading digits
        for k in range(width, w):
            out[v < 10**k, w - 1 - k] = 0
    return out


def text_matrix(texts: Sequence[bytes]) -> np.ndarray:
    """``(n, w)`` uint8 of byte strings, NUL-padded to the longest (NUL never occurs in XML text)."""
    arr = np.array(list(texts) or [b""], dtype=bytes)
    w = max(1, arr.dtype.itemsize)
    return arr.astype(f"S{w}").view(np.uint8).reshape(len(arr), w)[: len(texts)]


def assemble(n: int, fields: Sequence[Any]) -> bytes:
    """Lay ``fields`` side by side for ``n`` rows and drop the NUL padding.

    A field is ``bytes`` (the same on every row) or an ``(n, w)`` uint8 matrix.
    The constant bytes go in with one broadcast row; only the matrices are
    copied field by field.
    """
    merged: list = []
    for f in fields:  # adjacent constants become one
        if isinstance(f, bytes) and merged and isinstance(merged[-1], bytes):
            merged[-1] += f
        else:
            merged.append(f)
    widths = [len(f) if isinstance(f, bytes) else f.shape[1] for f in merged]
    template = np.zeros(sum(widths), np.uint8)
    o = 0
    for f, w in zip(merged, widths):
        if isinstance(f, bytes):
            template[o : o + w] = np.frombuffer(f, np.uint8)
        o += w
    out = np.empty((n, len(template)), np.uint8)
    out[:] = template
    o = 0
    for f, w in zip(merged, widths):
        if not isinstance(f, bytes) and w:
            out[:, o : o + w] = f
        o += w
    return out.tobytes().translate(None, b"\0")


# ---------------------------------------------------------------- shared strings


class SharedStrings:
    """The workbook's shared-string table, ``xl/sharedStrings.xml``.

    Index order is the order of first use: :meth:`add` interns one text;
    :meth:`reserve` sets aside a range for a generated family whose items
    :meth:`render` produces when the part is written (chunks of ``<si>``
    XML). ``count`` counts the cells that refer to the table (the part's
    ``count`` attribute; ``uniqueCount`` is the number of items).
    """

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._segments: list[list | tuple[int, Callable[[], Iterator[bytes]]]] = []
        self._families: dict[Any, int] = {}
        self.size = 0
        self.count = 0
        self.bytes_bound = 0  # an upper bound of the part's size, to decide on Zip64 sizes
        self.label_sets: list = []  # cabling labels reserved as families (book.CableLabels), looked up by later sheets

    def add(self, text: str) -> int:
        """Index of ``text``, interned on first use."""
        i = self._index.get(text)
        if i is None:
            i = self._index[text] = self.size
            self.size += 1
            if not self._segments or not isinstance(self._segments[-1], list):
                self._segments.append([])
            self._segments[-1].append(text)
            self.bytes_bound += 40 + 6 * len(text)  # escaping at most sextuples a character's bytes
        return i

    def lookup(self, text: str) -> int:
        """Index of ``text`` if interned, else -1."""
        return self._index.get(text, -1)

    def add_all(self, texts: Iterable[str]) -> np.ndarray:
        return np.fromiter((self.add(t) for t in texts), dtype=np.int64)

    def reserve(self, key: Any, size: int, render: Callable[[], Iterator[bytes]], item_bytes: int) -> int:
        """First index of ``size`` items that ``render()`` yields as ``<si>`` XML, each at most ``item_bytes`` long; one range per ``key``."""
        base = self._families.get(key)
        if base is None:
            base = self._families[key] = self.size
            self.size += size
            self.bytes_bound += size * item_bytes
            self._segments.append((size, render))
        return base

    def xml(self) -> Iterator[bytes]:
        yield (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
               f'<sst xmlns="{MAIN_NS}" count="{self.count}" uniqueCount="{self.size}">').encode()
        for seg in self._segments:
            if isinstance(seg, list):
                for i in range(0, len(seg), 4096):
                    yield "".join(map(si_xml, seg[i : i + 4096])).encode()
            else:
                size, render = seg
                n = 0
                for chunk in render():
                    n += chunk.count(b"<si>")
                    yield chunk
                if n != size:
                    raise AssertionError(f"a shared-string family rendered {n} items, {size} reserved")
        yield b"</sst>"


# --------------------------------------------------------------------- row chunks


@dataclass(frozen=True, slots=True)
class Col:
    """One column of a chunk of rows.

    ``values`` are numbers (``kind="n"``) or shared-string indices
    (``kind="s"``), one per row, or one int for every row; :data:`MISSING`
    leaves the cell empty. ``style`` is the cell format (a ``cellXfs`` index
    of ``xl/styles.xml``), per row or for all.
    """

    values: np.ndarray | int
    kind: str = "n"
    style: np.ndarray | int = 0


def _prefix(kind: str, style: int) -> bytes:
    s = f' s="{style}"' if style else ""
    t = ' t="s"' if kind == "s" else ""
    return f"<c{s}{t}><v>".encode()


_SUFFIX = b"</v></c>"
_EMPTY = b"<c/>"


def _cell_fields(col: Col, n: int, miss: np.ndarray | None) -> list:
    """The byte fields of one column: its start tag up to ``<v>`` (one per style), the digits, the end tags."""
    if np.ndim(col.style) == 0:
        start: Any = _prefix(col.kind, int(col.style))
    else:
        styles, inv = np.unique(np.asarray(col.style, dtype=np.int64), return_inverse=True)
        start = text_matrix([_prefix(col.kind, int(s)) for s in styles])[inv]
    if isinstance(col.values, (int, np.integer)):
        return [start, str(int(col.values)).encode() + _SUFFIX]
    values = np.asarray(col.values)
    if values.dtype.kind == "f":
        return [start, float_text(values, miss), _SUFFIX]
    return [start, digits(values if miss is None else np.where(miss, 0, values)), _SUFFIX]


def float_text(values: np.ndarray, miss: np.ndarray | None) -> np.ndarray:
    """Shortest round-trip text of floats (``0.1``, ``1e-05``), one Python call each: for small columns."""
    if not np.isfinite(values).all():
        raise ValueError("a spreadsheet cell cannot hold NaN or infinity")
    text = [repr(float(v)).encode() for v in values.tolist()]
    if miss is not None:
        text = [b"0" if m else t for t, m in zip(text, miss.tolist())]
    return text_matrix(text)


def rows_xml(first: int, n: int, cols: Sequence[Col], sst: SharedStrings | None = None) -> bytes:
    """``<row>`` XML of ``n`` rows numbered from ``first``, one cell per column and no cell references.

    A cell whose value is :data:`MISSING` is written ``<c/>`` when a later cell
    of its row has a value (so the cells after it keep their columns) and left
    out when none does. ``sst`` counts the string cells (its ``count``).
    """
    if n == 0:
        return b""
    if sst is not None:
        sst.count += rows_count_strings(cols, n)
    fields: list = [b'<row r="', digits(np.arange(first, first + n)), b'">']
    spans = []  # per column: its fields and its missing mask (None: never missing)
    for col in cols:
        miss = None
        if not isinstance(col.values, (int, np.integer)):
            miss = np.asarray(col.values) == MISSING
            miss = miss if miss.any() else None
        start = len(fields)
        fields += _cell_fields(col, n, miss)
        spans.append((start, len(fields), miss))
    fields.append(b"</row>")
    if any(m is not None for _a, _b, m in spans):
        _blank_missing(fields, spans, n)
    return assemble(n, fields)


def _blank_missing(fields: list, spans: list, n: int) -> None:
    """NUL out the missing cells; ``<c/>`` where a later cell of the row has a value."""
    later = np.zeros(n, bool)  # a cell to the right has a value
    for start, stop, miss in reversed(spans):
        if miss is None:
            later[:] = True
            continue
        for i in range(start, stop):
            f = fields[i]
            if isinstance(f, bytes):
                f = fields[i] = np.broadcast_to(np.frombuffer(f, np.uint8), (n, len(f))).copy()
            f[miss] = 0
        fields[start][miss & later, : len(_EMPTY)] = np.frombuffer(_EMPTY, np.uint8)
        later |= ~miss


def rows_count_strings(cols: Sequence[Col], n: int) -> int:
    """Cells of a chunk that refer to the shared-string table."""
    total = 0
    for c in cols:
        if c.kind != "s":
            continue
        total += n if isinstance(c.values, (int, np.integer)) else int(np.count_nonzero(c.values != MISSING))
    return total


# ---------------------------------------------------------------------- the zip


class ZipStream:
    """A zip written on a second thread: entries arrive as chunks of bytes and are deflated there.

    zlib releases the GIL while it compresses, so the caller formats the next
    chunk meanwhile. A bounded queue keeps memory flat. Every entry carries a
    fixed time and mode.
    """

    def __init__(self, path: Path, level: int, depth: int = 4):
        self.zf = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, allowZip64=True, compresslevel=level)
        self.level = level
        self.q: queue.Queue = queue.Queue(maxsize=depth)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="xlsx-deflate", daemon=True)
        self.thread.start()

    def info(self, name: str) -> zipfile.ZipInfo:
        zi = zipfile.ZipInfo(name, date_time=FIXED_DATE_TIME)
        zi.compress_type = zipfile.ZIP_DEFLATED
        zi.external_attr = 0o644 << 16
        if hasattr(zi, "compress_level"):  # Python >= 3.13
            zi.compress_level = self.level
        else:
            zi._compresslevel = self.level
        return zi

    def _run(self) -> None:
        dst = None
        while True:
            item = self.q.get()
            if item is None:
                return
            if self.error is not None:
                continue  # drain after a failure so the producer never blocks
            kind, payload = item
            try:
                if kind == "open":
                    name, big = payload
                    dst = self.zf.open(self.info(name), "w", force_zip64=big)
                elif kind == "data":
                    dst.write(payload)
                else:
                    dst.close()
                    dst = None
            except BaseException as e:  # handed to the producer, re-raised there
                self.error = e

    def _put(self, item) -> None:
        if self.error is not None:
            raise self.error
        self.q.put(item)

    def entry(self, name: str, chunks: Iterable[bytes], big: bool = False) -> None:
        """Write one entry from ``chunks``; ``big``: it may exceed 2 GiB (Zip64 sizes, only then: not every reader likes them)."""
        self._put(("open", (name, big)))
        for c in chunks:
            if c:
                self._put(("data", c))
        self._put(("close", None))

    def close(self) -> None:
        self.q.put(None)
        self.thread.join()
        self.zf.close()
        if self.error is not None:
            raise self.error

    def abort(self) -> None:
        """Stop the writer thread after a failure of the producer (the file is left incomplete)."""
        self.error = self.error or RuntimeError("aborted")
        self.q.put(None)
        self.thread.join()
        self.zf.close()


# ------------------------------------------------------------------ the package


class StreamedSheet(WriteOnlyWorksheet):
    """A write-only sheet whose data rows come from ``rows`` (chunks of ``<row>`` XML) when the package is saved.

    openpyxl writes what is appended (the header row) and every setting; the
    rows follow the last appended row. ``last_row`` and ``last_col`` give the
    ``<dimension>``; ``big`` asks for Zip64 sizes.
    """

    rows: Callable[[], Iterator[bytes]] | None = None
    last_row: int = 1
    last_col: int = 1
    big: bool = False


def new_streamed_sheet(wb, title: str) -> StreamedSheet:
    ws = StreamedSheet(parent=wb, title=title)
    wb._add_sheet(ws)
    return ws


class _Collector:
    """What openpyxl's ``ExcelWriter`` takes for a zip: keeps every part in memory, in order."""

    def __init__(self) -> None:
        self.parts: list[tuple[str, bytes]] = []

    def writestr(self, name, data, *args, **kw) -> None:
        name = name.filename if isinstance(name, zipfile.ZipInfo) else name
        self.parts.append((name, data.encode() if isinstance(data, str) else bytes(data)))

    def write(self, filename, arcname=None, *args, **kw) -> None:
        self.parts.append((arcname or Path(filename).name, Path(filename).read_bytes()))

    def namelist(self) -> list[str]:
        return [name for name, _data in self.parts]

    def close(self) -> None:
        pass


_SHEET_PR = re.compile(rb"<sheetPr\b[^>]*/>|<sheetPr\b.*?</sheetPr>", re.S)
_WORKSHEET_OPEN = re.compile(rb"<worksheet\b[^>]*>")


def split_placeholder(xml: bytes, ref: str) -> tuple[bytes, bytes]:
    """A placeholder sheet's XML before and after the point where data rows go, with its ``<dimension>``."""
    dim = f'<dimension ref="{ref}"/>'.encode()
    m = _SHEET_PR.search(xml) or _WORKSHEET_OPEN.search(xml)
    xml = xml[: m.end()] + dim + xml[m.end() :]
    i = xml.find(b"</sheetData>")
    if i < 0:
        i = xml.find(b"<sheetData/>")
        if i < 0:
            raise ValueError("placeholder sheet without sheetData")
        return xml[:i] + b"<sheetData>", b"</sheetData>" + xml[i + len(b"<sheetData/>") :]
    return xml[:i], xml[i:]


def _with_sst(name: str, data: bytes) -> bytes:
    """[Content_Types].xml and the workbook's rels, with the shared-string part added."""
    if name == "[Content_Types].xml" and SST_TYPE.encode() not in data:
        return data.replace(b"</Types>", f'<Override PartName="/{SST_PART}" ContentType="{SST_TYPE}"/></Types>'.encode())
    if name == "xl/_rels/workbook.xml.rels" and SST_REL.encode() not in data:
        ids = set(re.findall(rb'Id="([^"]+)"', data))
        k = len(ids) + 1
        while f"rId{k}".encode() in ids:
            k += 1
        return data.replace(b"</Relationships>", f'<Relationship Type="{SST_REL}" Target="sharedStrings.xml" Id="rId{k}"/></Relationships>'.encode())
    return data


def save_package(wb, path: Path, sst: SharedStrings, level: int) -> None:
    """Write ``wb`` to ``path``: openpyxl's parts, each :class:`StreamedSheet` filled with its rows, the shared strings last."""
    from openpyxl.writer.excel import ExcelWriter

    parts = _Collector()
    ExcelWriter(wb, parts).save()
    streamed = {ws.path[1:]: ws for ws in wb.worksheets if isinstance(ws, StreamedSheet)}
    z = ZipStream(path, level)
    try:
        for name, data in parts.parts:
            ws = streamed.get(name)
            if ws is None:
                z.entry(name, [_with_sst(name, data)])
                continue
            head, tail = split_placeholder(data, f"A1:{get_column_letter(ws.last_col)}{ws.last_row}")
            z.entry(name, itertools.chain([head], ws.rows() if ws.rows else (), [tail]), big=ws.big)
        z.entry(SST_PART, sst.xml(), big=sst.bytes_bound > ZIP64_OVER)
    except BaseException:
        z.abort()
        raise
    z.close()
