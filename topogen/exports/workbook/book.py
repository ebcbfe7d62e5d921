"""``<name>.xlsx``: the procurement workbook (openpyxl, write-only streaming).

Sheets, in order:

``Summary``
    provenance (tool version; spec sha256 in cell B3), the spec, each
    architecture's totals (switches, transceivers, cables, NICs, cost, power,
    cost per GPU) with the savings of rail-only, the cost by component with a
    native bar chart, and notes. Totals are formulas over the BOM sheets, so
    they follow any edit there.
``BOM <arch>``
    one row per SKU: SKU, description, category, where it is used, quantity,
    unit price, extended price (``=quantity*unit price``), unit power, total
    power (``=quantity*unit power``), price and power sources; a totals row of
    ``SUM`` formulas.
``Networks``
    with a ``networks:`` section: every SKU of the storage, in-band and OOB
    networks priced, their subtotals and the cluster's totals.
``Subnets``
    with a ``networks:`` section: each in-band and OOB subnet of the address plan
    (:mod:`topogen.config.netaddr`): prefix, VLAN, gateway and the switches holding
    it, devices addressed, free addresses, size.
``Cabling <arch>``
    one row per cable. The first six columns are the ones cabling-validation
    tools read (``A-Node Name, A-Type, A-Port, Z-Node Name, Z-Type, Z-Port``;
    type ``HCA`` for a GPU NIC end, ``SW`` for a switch end), then the cable id
    of ``<arch>/cabling.csv``, tier, link, plane, speed, media and length class.
    A sheet holds 1,048,576 rows; a longer cabling continues on ``Cabling <arch>
    2``, ``3``... and the Summary says so.
``Ports <arch>``
    one row per switch, one column per port: the peer device and port
    (``hb0003-gpu7:nic0``) on each used port, empty on a free port.
``Validation``
    each architecture's findings and key figures.
``Analysis``
    with a workload: each analysis's table, parameters and caveats.
``Traffic``
    with ``build --traffic``: the DP ring, the MoE all-to-all and a permutation
    simulated on each wiring, healthy and with a spine down (figures, utilisation
    per link tier, busiest links).

Text from user input (catalog descriptions, sources, media names...) is never a
formula: every string is written as a string cell, and one starting with
``= + - @`` also gets Excel's quote prefix so that editing the cell keeps it
text (formula injection). Output is deterministic: document and zip timestamps
are fixed, so the same spec gives a byte-identical file.

The cabling and port-map sheets are the only large ones. They are streamed
(:mod:`topogen.exports.workbook.stream`): each row is integers (shared-string
indices of device and port names, numbers), turned into ``<row>`` XML a chunk
of rows at a time with numpy, without optional cell references, and deflated
on a second thread while the next chunk is formatted. ``fast=False`` writes
them through openpyxl, one cell per value, and gives the same cells.
"""

from __future__ import annotations

import datetime as _dt
import textwrap
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Iterator, Sequence
from xml.sax.saxutils import escape

import numpy as np
import openpyxl
from openpyxl.cell import WriteOnlyCell
from openpyxl.chart import BarChart, Reference
from openpyxl.packaging.custom import StringProperty
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter, quote_sheetname

from topogen import __version__
from topogen.analysis.render import COLUMNS, TITLES
from topogen.checks.validate import GROUPS
from topogen.exports.installers.cabling import generate_rows
from topogen.exports.summary import striping_text
from topogen.exports.workbook.stream import (
    FIXED_DATE_TIME,
    MISSING,
    ZIP64_OVER,
    Col,
    SharedStrings,
    StreamedSheet,
    assemble,
    clean_text,
    digits,
    new_streamed_sheet,
    rows_xml,
    save_package,
    si_xml,
    t_open,
    text_matrix,
    zdigits,
)
from topogen.config.addressing import ip_text
from topogen.fabric import networks as nw
from topogen.fabric.model import CHUNK, Fabric
from topogen.fabric.naming import ISL_LINK, GpuNames, device_names
from topogen.fabric.view import view
from topogen.layout.labels import FloorView
from topogen.spec.counts import link_tier_name
from topogen.util.text import FORMULA_START, NUMBER

ROW_LIMIT = 1_048_576  # rows per sheet in Excel, header included
COL_LIMIT = 16_384  # columns per sheet in Excel
FIXED_TIME = _dt.datetime(*FIXED_DATE_TIME)  # the zip epoch: no clock reaches the file
COMPRESSLEVEL = 1  # deflate level; zlib's default 6 takes 3x the time for a ~20% smaller file

MONEY = '"$"#,##0.00'
MONEY_WHOLE = '"$"#,##0'
COUNT = "#,##0"
WATTS = "#,##0.0"
KILOWATTS = "#,##0.0"
PERCENT = "0.0%"

CABLING_COLUMNS = ("A-Node Name", "A-Type", "A-Port", "Z-Node Name", "Z-Type", "Z-Port", "Cable", "Tier", "Link", "Plane", "Speed (Gb/s)", "Media", "Length class")
CABLING_WIDTHS = (18, 8, 8, 18, 8, 8, 10, 6, 12, 7, 13, 28, 13)
FLOOR_COLUMNS = ("Length (m)", "A-Rack", "A-U", "Z-Rack", "Z-U", "Label")  # with a layout: where each end is, how long, what to print on it
FLOOR_WIDTHS = (11, 8, 6, 8, 6, 36)
NODE_TYPE = {True: "HCA", False: "SW"}  # A-Type / Z-Type of a GPU NIC end, a switch end
PORTS_FIXED = ("Switch", "Role", "Tier", "Plane", "Rails", "Ports used")
PORTS_WIDTHS = (20, 7, 6, 7, 9, 11)
PORT_WIDTH = 16  # a port cell: "hb003-gpu7 nic0", "spine-p0-3 p12"
BOM_COLUMNS = ("SKU", "Description", "Category", "Used in", "Quantity", "Unit price", "Extended price", "Unit power (W)", "Total power (kW)", "Price source", "Power source")
BOM_WIDTHS = (26, 50, 12, 34, 12, 14, 17, 15, 16, 50, 40)
COMPONENTS = (("switch", "Switches"), ("transceiver", "Transceivers"), ("cable", "Cables"), ("nic", "NICs"))
FINDING_COLUMNS = ("Architecture", "Check", "Severity", "Devices", "Ports", "Cables", "Message", "Hint")

_BOLD = Font(bold=True)
_TITLE = Font(bold=True, size=14)
_HEAD_FILL = PatternFill("solid", fgColor="DDEBF7")
_WRAP = Alignment(wrap_text=True, vertical="top")
_BANNER_FONT = Font(bold=True, color="9C0006")
_BANNER_FILL = PatternFill("solid", fgColor="FFC7CE")


# --------------------------------------------------------------------------- cells


class Formula(str):
    """A formula we mean to write (``"=SUM(A1:A3)"``); every other string is stored as text."""


def is_risky(text: str) -> bool:
    """True for text a spreadsheet would take for a formula when typed in (formula injection).

    As the CSV rule of :mod:`topogen.util.text`: ``= + - @`` first, or after leading
    blanks and quotes (``' =4+4'``, a catalog description; ``'"=1"'``), unless what
    follows is a plain number.
    """
    if text.startswith(FORMULA_START):
        return True
    rest = text.lstrip(' "')
    return rest != text and rest.startswith(("=", "+", "-", "@")) and rest != "-" and not NUMBER.fullmatch(rest)


def cell(ws, value: Any, fmt: str | None = None, font: Font | None = None, fill: PatternFill | None = None) -> Any:
    """A write-only cell for ``value``.

    A :class:`Formula` becomes a formula. Any other ``str`` is a string cell,
    never a formula (openpyxl would otherwise turn ``"=..."`` into one), with
    Excel's quote prefix when it starts with ``= + - @``.
    """
    if isinstance(value, Formula):
        c = WriteOnlyCell(ws, value=str(value))
    elif isinstance(value, str):
        text = clean_text(value)
        c = WriteOnlyCell(ws, value=text)
        c.data_type = "s"
        if is_risky(text):
            c.quotePrefix = True
    else:
        c = WriteOnlyCell(ws, value=value)
    if fmt:
        c.number_format = fmt
    if font:
        c.font = font
    if fill:
        c.fill = fill
    return c


def safe_row(ws, values: Sequence[Any]) -> list:
    """A row for ``ws.append`` in which no plain string can become a formula."""
    return [cell(ws, v) if isinstance(v, str) and (v.startswith("=") or is_risky(v)) else v for v in values]


def wrapped(ws, value: Any) -> Any:
    """A text cell that wraps in its column (on screen and on paper) instead of running into the next one."""
    c = cell(ws, value)
    c.alignment = _WRAP
    return c


def header_row(ws, names: Sequence[str]) -> list:
    """Bold, shaded, wrapped header cells (a long header wraps instead of being cut off)."""
    out = [cell(ws, n, font=_BOLD, fill=_HEAD_FILL) for n in names]
    for c in out:
        c.alignment = _WRAP
    return out


PAGE_WIDTH = 220  # column-width units (characters) a landscape A4/Letter page holds at about 60 % scale (7 pt): still legible


def print_setup(ws, title_rows: str | None = "1:1", width: float | None = None, title_cols: str | None = None) -> None:
    """Landscape, as many pages wide as ``width`` (the sheet's columns, in characters) needs at a legible scale
    (one page when not given), as many tall as the rows need; the header row (and ``title_cols``) repeated on every page.

    A 64-port Ports sheet fitted to one page would print at about 2 pt; at
    :data:`PAGE_WIDTH` characters a page it takes a few pages across, each with the switch names.
    """
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1 if width is None else max(1, -(-int(width) // PAGE_WIDTH))
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    if title_rows:
        ws.print_title_rows = title_rows
    if title_cols:
        ws.print_title_cols = title_cols


def estimate_lines(ctx) -> tuple[int, int]:
    """``(estimated, priced)``: BOM lines whose price source says it is an estimate, of all priced lines."""
    lines = [x for a in ctx.fabrics for x in sku_lines(ctx, a) if x.unit_price]
    return sum("estimate" in (x.price_source or "").lower() for x in lines), len(lines)


def set_widths(ws, widths: Sequence[float]) -> None:
    for i, w in enumerate(widths, 1):
        ws.column_dimensions[get_column_letter(i)].width = w


def style_id(ws, alignment: Alignment, quote: bool = False) -> int:
    """Style index of a cell with ``alignment`` (and the quote prefix of risky text), for streamed rows."""
    c = WriteOnlyCell(ws, value="x")
    c.alignment = alignment
    c.quotePrefix = quote
    return c.style_id


def quote_style_id(ws) -> int:
    """Style index of a plain quote-prefixed cell, for risky text in templated rows."""
    c = WriteOnlyCell(ws, value="x")
    c.quotePrefix = True
    return c.style_id


def fill(kinds: Sequence[Any], row: Sequence[Any]) -> list:
    """All cell values of a row whose constant columns are :class:`Const`, filled in (openpyxl's path)."""
    it = iter(row)
    return [k.value if isinstance(k, Const) else next(it) for k in kinds]


@dataclass(frozen=True, slots=True)
class Const:
    """A column with the same value on every row of a tier."""

    value: Any


def _new_sheet(wb, title: str, streamed: bool):
    ws = new_streamed_sheet(wb, title) if streamed else wb.create_sheet(title)
    print_setup(ws)
    return ws


STREAM_ROWS = 16_384  # rows per streamed chunk (about 5 MB of XML for the cabling)


# ------------------------------------------------------------- shared strings of a fabric


class FabricStrings:
    """Shared-string indices of one fabric's device names and port names, and the style of each name.

    GPU names (``hb0003-gpu7``) are a reserved family rendered from the GPU
    id; switch names are interned. A name a spreadsheet would take for a
    formula (``=...``) gets the quote-prefix style, as openpyxl's path does.
    """

    def __init__(self, fabric: Fabric, sst: SharedStrings, quote: int):
        self.fabric, self.sst, self.quote = fabric, sst, quote
        self.gpus = fabric.gpus
        self.gpu_base = gpu_names_family(sst, fabric.spec)
        names = [s.name for s in fabric.switches]
        self.switch = sst.add_all(names)
        self.switch_style = np.array([quote if is_risky(clean_text(n)) else 0 for n in names], dtype=np.int64)
        self.risky = bool(self.switch_style.any())
        self._ports: dict[str, np.ndarray] = {}  # per prefix: index of "<prefix><n>" at n, MISSING until used
        self._native: np.ndarray | None = None  # index of every switch port name (view(fabric).native's table), once used

    def devices(self, ids: np.ndarray) -> Col:
        """The name cells of devices ``ids`` (GPUs, then switches, by device id)."""
        gpu = ids < self.gpus
        sw = np.where(gpu, 0, ids - self.gpus)
        values = np.where(gpu, self.gpu_base + ids, self.switch[sw] if len(self.switch) else 0)
        style = np.where(gpu, 0, self.switch_style[sw]) if self.risky else 0
        return Col(values, "s", style)

    def switch_ports(self, dev: np.ndarray, ports: np.ndarray) -> np.ndarray:
        """Indices of the names of ports ``ports`` of switches ``dev`` (device ids): the switch model's own names (:mod:`topogen.fabric.ports`)."""
        sp = view(self.fabric).native
        if not sp.native:
            return self.ports("p", ports)
        if self._native is None:
            self._native = self.sst.add_all(sp.table.tolist())
        return self._native[sp.codes(np.asarray(dev, np.int64) - self.gpus, ports)]

    def ports(self, prefix: str, ports: np.ndarray) -> np.ndarray:
        """Indices of port names ``<prefix><n>`` (``nic0``, ``p17``), interned on first use."""
        table = self._ports.get(prefix, np.zeros(0, np.int64))
        top = int(ports.max(initial=-1))
        if top >= len(table):
            table = self._ports[prefix] = np.concatenate([table, np.full(top + 1 - len(table), MISSING, np.int64)])
        new = np.unique(ports[table[ports] == MISSING])
        table[new] = self.sst.add_all(f"{prefix}{i}" for i in new.tolist())
        return table[ports]


def text_col(sst: SharedStrings, values: Sequence[str | None], quote: int) -> Col:
    """A streamed column of any text, one per row ("" or None: no cell); text that reads as a formula gets the quote prefix.

    One dict look-up per row: for columns no integer code describes (a note,
    a user's label). Device and port names go through :class:`FabricStrings`.
    """
    idx = np.fromiter((sst.add(v) if v else MISSING for v in values), np.int64, len(values))
    risky = np.fromiter((bool(v) and is_risky(clean_text(v)) for v in values), bool, len(values))
    return Col(idx, "s", np.where(risky, quote, 0) if risky.any() else 0)


def common_strings(ctx, sst: SharedStrings) -> None:
    """Intern the short texts of every cabling row first (end types, link names, media, port names).

    They repeat on every row, so giving them one- or two-digit shared-string
    indices (before the GPU names take six) makes each row about a tenth shorter.
    """
    for text in NODE_TYPE.values():
        sst.add(text)
    for arch, fabric in ctx.fabrics.items():
        for t in range(1, fabric.tiers + 1):
            sst.add(link_tier_name(t))
        if len(fabric.isls):
            sst.add(ISL_LINK)
        for name, length_class in media_columns(ctx, arch).values():
            for text in (name, length_class):
                if text:
                    sst.add(text)
    radix = max((int(f.switch_ports().max(initial=0)) for f in ctx.fabrics.values()), default=0)  # interfaces: a faster uplink is one port
    nics = max((int(f.links.a_port[f.links.a_dev < f.gpus].max(initial=-1)) + 1 for f in ctx.fabrics.values()), default=0)
    for i in range(1, radix + 1):
        sst.add(f"p{i}")
    for i in range(nics):
        sst.add(f"nic{i}")


def gpu_names_family(sst: SharedStrings, spec) -> int:
    """Reserve every GPU's name (``hb0003-gpu7``, in GPU id order) in ``sst``; its first index."""
    names = GpuNames.of(spec)
    gpus, hb_domain = spec.gpus, spec.hb_domain

    def render() -> Iterator[bytes]:
        for lo in range(0, gpus, CHUNK):
            ids = np.arange(lo, min(lo + CHUNK, gpus))
            yield assemble(len(ids), [b"<si><t>", *gpu_name_fields(names, ids), b"</t></si>"])

    return sst.reserve(("gpu names", gpus, hb_domain, names.template), gpus, render, item_bytes=24 + names.dw + names.rw + names.extra_bytes)


def gpu_name_fields(names: GpuNames, ids: np.ndarray) -> list:
    """The byte fields of GPU names (:meth:`GpuNames.name`), for :func:`assemble`."""
    if names.template is not None:
        return names.template.byte_fields(names._values(ids), zdigits)
    d, r = np.divmod(ids, names.hb)
    return [b"hb", zdigits(d, names.dw), b"-gpu", zdigits(r, names.rw)]


# ----------------------------------------------------------------------- layout


@dataclass(frozen=True, slots=True)
class Part:
    """One sheet of a (possibly split) table: its title and its slice of the data rows."""

    title: str
    start: int
    stop: int


def split(base: str, rows: int, max_rows: int) -> list[Part]:
    """Sheets for ``rows`` data rows under one header each, ``max_rows`` rows per sheet at most."""
    per = max_rows - 1
    if rows <= per:
        return [Part(base, 0, rows)]
    n = -(-rows // per)
    return [Part(f"{base} {i + 1}", i * per, min((i + 1) * per, rows)) for i in range(n)]


@dataclass
class Layout:
    """Sheet names and sizes, fixed before anything is written (write-only sheets stream in order)."""

    bom: dict[str, str] = field(default_factory=dict)
    bom_rows: dict[str, int] = field(default_factory=dict)
    cabling: dict[str, list[Part]] = field(default_factory=dict)
    ports: dict[str, list[Part]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def plan(ctx, max_rows: int) -> Layout:
    lay = Layout()
    for arch, fabric in ctx.fabrics.items():
        lay.bom[arch] = f"BOM {arch}"
        lay.bom_rows[arch] = len(sku_lines(ctx, arch))
        lay.cabling[arch] = split(f"Cabling {arch}", fabric.cables, max_rows)
        lay.ports[arch] = split(f"Ports {arch}", len(fabric.switches), max_rows)
        for what, parts, count in (("cabling", lay.cabling[arch], fabric.cables), ("port map", lay.ports[arch], len(fabric.switches))):
            if len(parts) > 1:
                lay.notes.append(
                    f"The {arch} {what} has {count:,} rows, more than one sheet holds ({max_rows - 1:,} under "
                    f"its header), so it is split over {len(parts)} sheets: {', '.join(p.title for p in parts)}."
                )
        radix = int(fabric.switch_ports().max(initial=0))
        if radix > COL_LIMIT - len(PORTS_FIXED):
            lay.notes.append(f"The {arch} port map shows ports p1..p{COL_LIMIT - len(PORTS_FIXED)} only: a sheet has {COL_LIMIT:,} columns; the cabling sheets list every port.")
    return lay


def _bom(ctx, arch: str):
    return (getattr(ctx, "boms", None) or {}).get(arch)


def sku_lines(ctx, arch: str) -> list:
    """The BOM's lines per SKU (:meth:`topogen.bom.bill.Bom.sku_lines`), or none when no BOM was compiled."""
    b = _bom(ctx, arch)
    return b.sku_lines() if b is not None else []


# ---------------------------------------------------------------------- cabling


def short_media(name: str) -> str:
    """A media name as a printed cell holds it: the catalog's short name before ``:`` (``DR4 single-mode``).

    The full description is on the BOM sheet and in cabling.csv.
    """
    head = name.split(":", 1)[0].strip()
    return head or name


def media_columns(ctx, arch: str) -> dict[int, tuple[str, str]]:
    """``{tier: (short media name, length class)}`` from the architecture's BOM (empty without one).

    Key :data:`ISL_CODE` (0) holds a leaf pair's ISLs: the media most of them use.
    """
    b = _bom(ctx, arch)
    if b is None:
        return {}
    out = {int(t): (short_media(m.name), m.length_class) for t, m in b.media.items()}
    if b.isls and b.link_media is not None:
        idx = b.link_media.index[len(b.link_media.index) - b.isls :]
        m = b.link_media.media[int(np.bincount(idx).argmax())]
        out[ISL_CODE] = (short_media(m.name), m.length_class)
    return out


@dataclass(frozen=True, slots=True)
class Floor:
    """The floor columns of one fabric's cabling sheets: each end's rack and U, the sold length, the label."""

    lay: Any  # topogen.layout.Layout
    view: Any  # topogen.layout.labels.FloorView

    @property
    def whole_lengths(self) -> bool:
        """Lengths written as numbers (all whole metres, as sold by default), else as text (``2.5``)."""
        return bool(np.all(np.mod(self.lay.length_m, 1) == 0))

    def lengths(self, sl: slice) -> list:
        x = self.lay.length_m[sl]
        return x.astype(np.int64).tolist() if self.whole_lengths else [f"{v:g}" for v in x.tolist()]

    def values(self, sl: slice) -> Iterator[tuple]:
        """``(length, a rack, a U, z rack, z U, label)`` of each cable of ``sl`` (openpyxl's path)."""
        p, names = self.lay.placement, self.lay.racks.name
        links = self.view.fabric.cable_table()
        a, z = links.a_dev[sl], links.z_dev[sl]
        ra, rz = [names[i] for i in p.rack[a].tolist()], [names[i] for i in p.rack[z].tolist()]
        return zip(self.lengths(sl), ra, p.u[a].tolist(), rz, p.u[z].tolist(), self.view.labels(sl))


ISL_CODE = 0  # the row code of a leaf pair's ISL in the cabling sheets (link tiers are 1, 2...)


def cabling_kinds(tier: int, media: tuple[str, str]) -> list:
    """Cabling columns for links of ``tier`` (:data:`ISL_CODE`: an ISL): the end types, link name and media are constant per tier."""
    isl = tier == ISL_CODE
    return [
        "s", Const(NODE_TYPE[tier == 1]), "s",  # A end: name, type, port
        "s", Const(NODE_TYPE[False]), "s",  # Z end
        "n", Const(1 if isl else tier), Const(ISL_LINK if isl else link_tier_name(tier)), "n", "n",  # cable, tier, link, plane, speed
        Const(media[0]), Const(media[1]),
    ]


def cabling_rows(fabric: Fabric) -> Iterator[tuple[int, tuple]]:
    """``(tier, values)`` per cable, in cable order, from :func:`topogen.exports.installers.cabling.generate_rows`, then the ISLs.

    ``values`` are the variable columns: A name, A port, Z name, Z port, cable
    id, plane, speed; an ISL's tier is :data:`ISL_CODE`.
    """
    for cable, tier, _link, plane, a_dev, _ar, a_port, a_speed, z_dev, _zr, z_port, _zs in generate_rows(fabric):
        yield tier, (a_dev, a_port, z_dev, z_port, cable, plane, a_speed)
    I, names = fabric.isls, [s.name for s in fabric.switches]
    v = view(fabric)
    a_ports, z_ports = v.ports(I.a_dev, I.a_port).tolist(), v.ports(I.z_dev, I.z_port).tolist()
    for j, (a, z, plane, speed) in enumerate(zip(*(c.tolist() for c in (I.a_dev, I.z_dev, I.plane, I.a_speed)))):
        yield ISL_CODE, (names[a - fabric.gpus], a_ports[j], names[z - fabric.gpus], z_ports[j], len(fabric.links) + j + 1, plane, speed)


def text_by_tier(fs: "FabricStrings", texts: dict[int, str]) -> tuple[np.ndarray, np.ndarray | int]:
    """Shared-string index and style per tier (indexed by tier number) of a text constant per tier; "" is no cell."""
    top = max(texts, default=0)
    idx = np.full(top + 1, MISSING, np.int64)
    style = np.zeros(top + 1, np.int64)
    for t, text in texts.items():
        if text:
            idx[t] = fs.sst.add(text)
            style[t] = fs.quote if is_risky(clean_text(text)) else 0
    return idx, (style if style.any() else 0)


def _by(table: tuple[np.ndarray, np.ndarray | int], tier: np.ndarray, kind: str = "s") -> Col:
    idx, style = table
    return Col(idx[tier], kind, style if np.ndim(style) == 0 else style[tier])


class CableLabels:
    """Shared-string indices of one cabling sheet's labels, without holding the labels.

    A label is unique to its cable, so a 131,072-GPU workbook has about 900,000 of
    them; interned one by one (:meth:`SharedStrings.add`) they held about 135 MB of
    strings, dict entries and index objects until the package was written. Here
    each chunk's new labels are a reserved family (:meth:`SharedStrings.reserve`),
    formatted again when the table is written, and only a hash per row is kept
    to find a label met before (in the table, or on another sheet: the two
    architectures share some cables' labels). The indices, their order and the
    table's bytes are those of interning each label in row order.
    """

    def __init__(self, sst: SharedStrings, view, lo: int, prior: np.ndarray, hashes: np.ndarray, bound: np.ndarray):
        self.sst, self.view, self.lo = sst, view, lo
        self.prior, self.hashes, self.bound = prior, hashes, bound

    @classmethod
    def of(cls, sst: SharedStrings, view, lo: int, hi: int) -> "CableLabels | None":
        """The labels of cable rows ``lo .. hi``: each row's index if its label is already in ``sst`` (else -1); None if two rows' labels hash alike."""
        n = hi - lo
        prior, hashes, bound = np.full(n, -1, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
        known = sst.lookup
        for s in range(lo, hi, STREAM_ROWS):
            e = min(s + STREAM_ROWS, hi)
            texts = view.labels(slice(s, e))
            hashes[s - lo : e - lo] = np.fromiter(map(hash, texts), np.int64, e - s)
            bound[s - lo : e - lo] = np.fromiter(map(len, texts), np.int64, e - s)
            prior[s - lo : e - lo] = [known(t) for t in texts]
        if len(np.unique(hashes)) != n:
            return None  # never seen: labels are unique to their cable; the caller interns them one by one
        for other in sst.label_sets:  # earlier sheets' labels, by hash, confirmed text by text
            pos = np.minimum(np.searchsorted(other.sorted_hashes, hashes), max(len(other.sorted_hashes) - 1, 0))
            hit = np.flatnonzero((prior < 0) & (other.sorted_hashes[pos] == hashes)) if len(other.sorted_hashes) else np.zeros(0, np.int64)
            if len(hit):
                theirs = other.sorted_rows[pos[hit]]
                same = np.fromiter(map(str.__eq__, view.labels(lo + hit), other.view.labels(theirs)), bool, len(hit))
                prior[hit[same]] = other.sorted_index[pos[hit][same]]
        out = cls(sst, view, lo, prior, hashes, 40 + 6 * bound)
        out.index = np.full(n, -1, np.int64)
        return out

    def indices(self, lo: int, hi: int) -> np.ndarray:
        """Indices of the labels of rows ``lo .. hi`` (the next chunk, in order), the new ones reserved as one family."""
        a, b = lo - self.lo, hi - self.lo
        idx = self.prior[a:b].copy()
        new = np.flatnonzero(idx < 0)
        if len(new):
            rows, view = lo + new, self.view
            base = self.sst.reserve(("cable labels", id(self), lo), len(new), lambda: iter(["".join(map(si_xml, view.labels(rows))).encode()]), item_bytes=0)
            self.sst.bytes_bound += int(self.bound[a:b][new].sum())  # what interning them would add
            idx[new] = base + np.arange(len(new))
        self.index[a:b] = idx
        if hi - self.lo == len(self.prior):  # the sheet's last chunk: later sheets look its labels up
            order = np.argsort(self.hashes, kind="stable")
            self.sorted_hashes, self.sorted_rows, self.sorted_index = self.hashes[order], self.lo + order, self.index[order]
            self.sst.label_sets.append(self)
            self.prior = self.bound = self.hashes = self.index = None
        return idx


def cabling_xml(fabric: Fabric, part: Part, fs: FabricStrings, media: dict[int, tuple[str, str]], legs: tuple[np.ndarray, np.ndarray] | None = None, floor: Floor | None = None, wrap: int = 0) -> Iterator[bytes]:
    """The ``<row>`` XML of one cabling sheet (cables ``part.start .. part.stop``), a chunk of rows at a time.

    ``legs``: each cable's breakout cable and that cable's shared-string index (the Breakout cable column).
    ``floor``: the floor columns; ``wrap``: the style of the media cells (wrapped, never running into the next column).
    """
    L = fabric.cable_table()  # the links, then a leaf pair's ISLs (row code ISL_CODE)
    tiers = range(ISL_CODE if len(fabric.isls) else 1, max(fabric.tiers, int(L.tier.max(initial=1))) + 1)
    a_type = text_by_tier(fs, {t: NODE_TYPE[t == 1] for t in tiers})
    z_type = text_by_tier(fs, {t: NODE_TYPE[False] for t in tiers})
    link = text_by_tier(fs, {t: ISL_LINK if t == ISL_CODE else link_tier_name(t) for t in tiers})
    medium = text_by_tier(fs, {t: media.get(t, ("", ""))[0] for t in tiers})
    if wrap:
        medium = (medium[0], np.where(np.asarray(medium[1]) == fs.quote, wrap[1], wrap[0]) if np.ndim(medium[1]) else wrap[0])
    length = text_by_tier(fs, {t: media.get(t, ("", ""))[1] for t in tiers})
    if floor is not None:
        p = floor.lay.placement
        rack_of = fs.sst.add_all(floor.lay.racks.name)[p.rack]  # each device's rack, as a shared string
    labels = CableLabels.of(fs.sst, floor.view, part.start, part.stop) if floor is not None else None
    for lo in range(part.start, part.stop, STREAM_ROWS):
        hi = min(lo + STREAM_ROWS, part.stop)
        sl = slice(lo, hi)
        tier = L.tier[sl].astype(np.int64)
        code = tier.copy()
        code[max(len(fabric.links) - lo, 0) :] = ISL_CODE
        a, z = L.a_dev[sl], L.z_dev[sl]
        gpu = a < fabric.gpus
        a_port = L.a_port[sl].astype(np.int64)
        a_port_idx = np.empty(hi - lo, np.int64)
        a_port_idx[gpu] = fs.ports("nic", a_port[gpu])
        a_port_idx[~gpu] = fs.switch_ports(a[~gpu], a_port[~gpu])
        cols = [
            fs.devices(a), _by(a_type, code), Col(a_port_idx, "s"),
            fs.devices(z), _by(z_type, code), Col(fs.switch_ports(z, L.z_port[sl].astype(np.int64)), "s"),
            Col(np.arange(lo + 1, hi + 1)), Col(tier), _by(link, code), Col(L.plane[sl]), Col(L.a_speed[sl]),
            _by(medium, code), _by(length, code),
        ]
        if floor is not None:
            lens = floor.lay.length_m[sl]
            cols += [
                Col(lens.astype(np.int64)) if floor.whole_lengths else Col(fs.sst.add_all(f"{v:g}" for v in lens.tolist()), "s"),
                Col(rack_of[a], "s"), Col(p.u[a].astype(np.int64)), Col(rack_of[z], "s"), Col(p.u[z].astype(np.int64)),
                Col(labels.indices(lo, hi) if labels is not None else fs.sst.add_all(floor.view.labels(sl)), "s"),
            ]
        if legs is not None:
            g = legs[0][sl]
            cols.append(Col(np.where(g >= 0, legs[1][np.maximum(g, 0)], MISSING), "s"))
        yield rows_xml(lo - part.start + 2, hi - lo, cols, fs.sst)


def write_cabling(wb, fabric: Fabric, parts: list[Part], media: dict[int, tuple[str, str]], fs: FabricStrings | None, breakouts=None, lay=None) -> None:
    """The cabling sheets of one fabric: streamed with ``fs`` (the fabric's shared strings), else through openpyxl.

    With a layout (``lay``) the floor columns follow (:data:`FLOOR_COLUMNS`: length, each end's
    rack and U, the label), so the printed sheet is what an installer pulls from. A fabric
    with breakout cables (``breakouts``) gets a last column naming each leg's cable, as cabling.csv.
    Media cells wrap: a long media name stays in its column on screen and on paper.
    """
    bo = breakouts if breakouts is not None and len(breakouts) else None
    floor = Floor(lay, FloorView(fabric, lay)) if lay is not None else None
    columns, widths = CABLING_COLUMNS, CABLING_WIDTHS
    if floor is not None:
        columns, widths = columns + FLOOR_COLUMNS, widths + FLOOR_WIDTHS
    if bo is not None:
        columns, widths = columns + ("Breakout cable",), widths + (22,)
    sheets = []
    for p in parts:
        ws = _new_sheet(wb, p.title, fs is not None)
        ws.freeze_panes = "B2"
        set_widths(ws, widths)
        ws.auto_filter.ref = f"A1:{get_column_letter(len(columns))}{p.stop - p.start + 1}"
        ws.append(header_row(ws, columns))
        sheets.append(ws)
    names = bo.names(fabric, np.arange(len(bo))) if bo is not None else []
    media_col = CABLING_COLUMNS.index("Media")
    if fs is not None:
        legs = (bo.group, fs.sst.add_all(names)) if bo is not None else None
        wrap = (style_id(sheets[0], _WRAP) if sheets else 0, style_id(sheets[0], _WRAP, quote=True) if sheets else 0)
        for ws, p in zip(sheets, parts):
            stream_into(ws, partial(cabling_xml, fabric, p, fs, media, legs, floor, wrap), p.stop - p.start + 1, len(columns))
        return
    kinds = {t: cabling_kinds(t, media.get(t, ("", ""))) + ["s"] * (6 if floor is not None else 0) + ["s"] * (bo is not None) for t in range(ISL_CODE, fabric.tiers + 1)}
    rows = cabling_rows(fabric)
    extra = floor.values(slice(0, fabric.cables)) if floor is not None else None
    for ws, p in zip(sheets, parts):
        for i in range(p.start, p.stop):
            tier, values = next(rows)
            if extra is not None:
                values = (*values, *next(extra))
            if bo is not None:
                values = (*values, names[bo.group[i]] if bo.group[i] >= 0 else None)
            row = safe_row(ws, fill(kinds[tier], values))
            if row[media_col] is not None:
                if not hasattr(row[media_col], "alignment"):
                    row[media_col] = cell(ws, row[media_col])
                row[media_col].alignment = _WRAP
            ws.append(row)


def stream_into(ws: StreamedSheet, rows, last_row: int, last_col: int) -> None:
    """Give a streamed sheet its rows (called when the package is written) and its extent."""
    ws.rows, ws.last_row, ws.last_col = rows, last_row, last_col
    ws.big = last_row * last_col * 48 > ZIP64_OVER  # 48 bytes: the longest cell this writer emits, rounded up


# --------------------------------------------------------------------- port map


def _rails_text(rails: tuple[int, ...]) -> str:
    if not rails:
        return "all"
    if len(rails) > 1 and rails == tuple(range(rails[0], rails[-1] + 1)):
        return f"{rails[0]}-{rails[-1]}"
    return ",".join(map(str, rails))


def port_ends(fabric: Fabric) -> tuple[np.ndarray, ...]:
    """Every switch end of every link, sorted by (switch, port).

    Returns ``(switch index, port, peer device, peer port)`` arrays: a GPU–leaf
    link has one switch end, a switch–switch link two.
    """
    L = fabric.cable_table()  # a leaf pair's ISLs have two switch ends, as a switch-switch link
    n = fabric.gpus
    up = L.a_dev >= n
    sw = np.concatenate([L.z_dev - n, L.a_dev[up] - n])
    port = np.concatenate([L.z_port, L.a_port[up]]).astype(np.int64)
    peer = np.concatenate([L.a_dev, L.z_dev[up]])
    peer_port = np.concatenate([L.a_port, L.z_port[up]])
    order = np.argsort(sw * (int(port.max(initial=0)) + 1) + port, kind="stable")
    return sw[order], port[order], peer[order], peer_port[order]


def port_map_rows(fabric: Fabric) -> Iterator[tuple[tuple, list[tuple[int, str]]]]:
    """Per switch, in device order: its fixed columns and its ``(port, "peer:peer_port")`` pairs.

    Names are formatted a chunk of switches at a time, so memory stays flat.
    """
    sw, port, peer, peer_port = port_ends(fabric)
    gn = GpuNames.of(fabric.spec)
    sw_names = np.array([s.name for s in fabric.switches], dtype=object)
    bounds = np.searchsorted(sw, np.arange(len(fabric.switches) + 1))
    step = max(1, CHUNK // max(1, fabric.spec.radix))
    for s0 in range(0, len(fabric.switches), step):
        s1 = min(s0 + step, len(fabric.switches))
        lo, hi = int(bounds[s0]), int(bounds[s1])
        pr = peer[lo:hi]
        names = device_names(fabric, pr, sw_names, gn).tolist()
        gpu = (pr < fabric.gpus).tolist()
        labels = [f"{nm}:{'nic' if g else 'p'}{pp}" for nm, g, pp in zip(names, gpu, peer_port[lo:hi].tolist())]
        ports = port[lo:hi].tolist()
        for s in range(s0, s1):
            a, b = int(bounds[s]) - lo, int(bounds[s + 1]) - lo
            d = fabric.switches[s]
            yield (d.name, d.role, d.tier, d.plane, _rails_text(d.rails), b - a), list(zip(ports[a:b], labels[a:b]))


def port_labels(fabric: Fabric, fs: FabricStrings, arch: str, sw: np.ndarray, port: np.ndarray, peer: np.ndarray, peer_port: np.ndarray) -> tuple[np.ndarray, np.ndarray | int]:
    """Shared-string index and style of every switch end's port-map cell, its peer ``"device:port"``.

    Two reserved families: every GPU NIC (``hb0003-gpu7:nic0``, GPU id x
    NICs per GPU, shared by the architectures) and this fabric's switch ends
    that face another switch (``leaf-g0-r3:p33``, in (switch, port) order).
    """
    n = fabric.gpus
    gpu = peer < n
    nics = int(peer_port[gpu].max(initial=-1)) + 1
    names = GpuNames.of(fabric.spec)

    def gpu_render() -> Iterator[bytes]:
        for lo in range(0, n * nics, CHUNK):
            k = np.arange(lo, min(lo + CHUNK, n * nics))
            g, nic = np.divmod(k, nics)
            yield assemble(len(k), [b"<si><t>", *gpu_name_fields(names, g), b":nic", digits(nic), b"</t></si>"])

    gpu_base = fs.sst.reserve(("gpu nic labels", n, fabric.hb_domain, nics), n * nics, gpu_render, item_bytes=32 + names.dw + names.rw + names.extra_bytes) if nics else 0
    stride = int(port.max(initial=0)) + 1
    ends = (sw * stride + port)[~gpu]  # switch ends facing a switch, sorted: each is some end's peer
    sw_names = [clean_text(s.name) for s in fabric.switches]
    name_bytes = text_matrix([f"<si>{t_open(nm)}{escape(nm)}".encode() for nm in sw_names])

    def switch_render() -> Iterator[bytes]:
        for lo in range(0, len(ends), CHUNK):
            s, p = np.divmod(ends[lo : lo + CHUNK], stride)
            yield assemble(len(s), [name_bytes[s], b":p", digits(p), b"</t></si>"])

    item = 24 + name_bytes.shape[1]
    sw_base = fs.sst.reserve(("switch port labels", arch), len(ends), switch_render, item_bytes=item) if len(ends) else 0
    peer_sw = np.where(gpu, 0, peer - n)
    label = np.where(gpu, gpu_base + peer * max(nics, 1) + peer_port, sw_base + np.searchsorted(ends, peer_sw * stride + peer_port))
    style = np.where(gpu, 0, fs.switch_style[peer_sw]) if fs.risky else 0
    return label, style


def port_map_xml(fabric: Fabric, part: Part, fs: FabricStrings, radix: int, arch: str) -> Iterator[bytes]:
    """The ``<row>`` XML of one port-map sheet (switches ``part.start .. part.stop``), a chunk of switches at a time.

    The port ends and their labels are computed here, when the sheet is
    written, so one architecture's arrays are alive at a time.
    """
    ends = port_ends(fabric)
    sw, port = ends[0], ends[1]
    label, style = port_labels(fabric, fs, arch, *ends)
    del ends
    bounds = np.searchsorted(sw, np.arange(len(fabric.switches) + 1))
    switches = fabric.switches
    roles = fs.sst.add_all(d.role for d in switches[part.start : part.stop])
    rails = fs.sst.add_all(_rails_text(d.rails) for d in switches[part.start : part.stop])
    step = max(1, STREAM_ROWS * len(CABLING_COLUMNS) // (len(PORTS_FIXED) + radix))
    for s0 in range(part.start, part.stop, step):
        s1 = min(s0 + step, part.stop)
        lo, hi = int(bounds[s0]), int(bounds[s1])
        m = s1 - s0
        ids = np.arange(s0, s1)
        keep = port[lo:hi] <= radix
        row, colno = (sw[lo:hi] - s0)[keep], (port[lo:hi] - 1)[keep]
        grid = np.full((m, radix), MISSING, np.int64)
        grid[row, colno] = label[lo:hi][keep]
        sgrid: Any = 0
        if np.ndim(style):
            sgrid = np.zeros((m, radix), np.int64)
            sgrid[row, colno] = style[lo:hi][keep]
        cols = [
            fs.devices(ids + fabric.gpus),
            Col(roles[s0 - part.start : s1 - part.start], "s"),
            Col(np.array([d.tier for d in switches[s0:s1]], np.int64)),
            Col(np.array([d.plane for d in switches[s0:s1]], np.int64)),
            Col(rails[s0 - part.start : s1 - part.start], "s"),
            Col(np.diff(bounds[s0 : s1 + 1])),
        ]
        cols += [Col(grid[:, j], "s", sgrid if np.ndim(sgrid) == 0 else sgrid[:, j]) for j in range(radix)]
        yield rows_xml(s0 - part.start + 2, m, cols, fs.sst)


def write_port_map(wb, fabric: Fabric, parts: list[Part], fs: FabricStrings | None, arch: str) -> None:
    """The port-map sheets of one fabric: streamed with ``fs`` (the fabric's shared strings), else through openpyxl."""
    nfix = len(PORTS_FIXED)
    radix = min(int(fabric.switch_ports().max(initial=0)), COL_LIMIT - nfix)  # p1..p<interfaces> (a faster uplink is one port)
    letters = [get_column_letter(i) for i in range(1, nfix + radix + 1)]
    sheets = []
    for p in parts:
        ws = _new_sheet(wb, p.title, fs is not None)
        ws.freeze_panes = "B2"
        widths = PORTS_WIDTHS + (PORT_WIDTH,) * radix
        print_setup(ws, width=sum(widths), title_cols="A:A")  # pages across, each starting with the switch name
        set_widths(ws, widths)
        ws.auto_filter.ref = f"A1:{letters[-1]}{p.stop - p.start + 1}"
        ws.append(header_row(ws, list(PORTS_FIXED) + [f"p{i}" for i in range(1, radix + 1)]))
        sheets.append(ws)
    if fs is not None:
        for ws, p in zip(sheets, parts):
            stream_into(ws, partial(port_map_xml, fabric, p, fs, radix, arch), p.stop - p.start + 1, nfix + radix)
        return
    rows = port_map_rows(fabric)
    for ws, p in zip(sheets, parts):
        for _ in range(p.start, p.stop):
            fixed, used = next(rows)
            row: list[Any] = list(fixed) + [None] * radix
            for q, lab in used:
                if q <= radix:
                    row[nfix + q - 1] = lab
            ws.append(safe_row(ws, row))


# -------------------------------------------------------------------------- BOM


def bom_refs(lay: Layout, arch: str) -> dict[str, str] | None:
    """Absolute references into one BOM sheet, for the Summary's formulas (None: no BOM lines)."""
    n = lay.bom_rows[arch]
    if not n:
        return None
    q = quote_sheetname(lay.bom[arch])
    last = n + 1
    return {
        "category": f"{q}!$C$2:$C${last}",
        "quantity": f"{q}!$E$2:$E${last}",
        "extended": f"{q}!$G$2:$G${last}",
        "total_price": f"{q}!$G${last + 1}",
        "total_power": f"{q}!$I${last + 1}",
    }


def write_bom(wb, ctx, arch: str, lay: Layout) -> None:
    """One row per SKU; extended price, total power and the totals are live formulas."""
    ws = wb.create_sheet(lay.bom[arch])
    print_setup(ws)
    ws.freeze_panes = "B2"
    set_widths(ws, BOM_WIDTHS)
    lines = sku_lines(ctx, arch)
    last = len(lines) + 1
    ws.auto_filter.ref = f"A1:{get_column_letter(len(BOM_COLUMNS))}{last}"
    ws.append(header_row(ws, BOM_COLUMNS))
    for r, x in enumerate(lines, 2):
        row = [
            cell(ws, x.sku),
            cell(ws, x.description),
            cell(ws, x.category),
            cell(ws, x.used_in),
            cell(ws, x.quantity, COUNT),
            cell(ws, x.unit_price, MONEY),
            cell(ws, Formula(f"=E{r}*F{r}"), MONEY),
            cell(ws, x.unit_power_w, WATTS),
            cell(ws, Formula(f"=E{r}*H{r}/1000"), KILOWATTS),
            cell(ws, x.price_source),
            cell(ws, x.power_source),
        ]
        wrapped = (1, 3, 9, 10)  # long text wraps in its column instead of running off the page
        for i in wrapped:
            row[i].alignment = _WRAP
        lines_needed = max(-(-len(str(row[i].value or "")) // max(1, int(BOM_WIDTHS[i]) - 2)) for i in wrapped)
        ws.row_dimensions[r].height = 15 * max(1, lines_needed)  # readers that do not fit rows to wrapped text
        ws.append(row)
    if not lines:
        ws.append([cell(ws, "no bill of materials was compiled for this architecture")])
        return
    ws.append([
        cell(ws, "Total", font=_BOLD), None, None, None, None, None,
        cell(ws, Formula(f"=SUM(G2:G{last})"), MONEY, font=_BOLD), None,
        cell(ws, Formula(f"=SUM(I2:I{last})"), KILOWATTS, font=_BOLD),
    ])
    b = _bom(ctx, arch)
    if ctx.spec.spares is not None and b is not None:
        write_spares(ws, b.spares(ctx.spec.spares), last + 1)
    write_length_histogram(ws, b)


def write_spares(ws, lines: list, total_row: int) -> None:
    """Below the BOM total: a spares line per SKU (the spec's spares: policy), their own subtotal; not in the capex above."""
    ws.append([])
    ws.append(header_row(ws, ["Spares (spec spares:)", "Description", "Category", "Policy", "Quantity", "Unit price", "Extended price"]))
    first = total_row + 3
    for r, x in enumerate(lines, first):
        ws.append([cell(ws, x.sku), wrapped(ws, x.description), cell(ws, x.category), wrapped(ws, x.used_in), cell(ws, x.quantity, COUNT), cell(ws, x.unit_price, MONEY), cell(ws, Formula(f"=E{r}*F{r}"), MONEY)])
    end = first + len(lines) - 1
    ws.append([cell(ws, "Spares total", font=_BOLD), None, None, None, cell(ws, Formula(f"=SUM(E{first}:E{end})") if lines else 0, COUNT, font=_BOLD), None,
               cell(ws, Formula(f"=SUM(G{first}:G{end})") if lines else 0, MONEY, font=_BOLD)])


def write_length_histogram(ws, bom) -> None:
    """Below the BOM: cables per link tier, sold length and media (the layout's length histogram)."""
    rows = bom.length_rows() if bom is not None else []
    if not rows:
        return
    ws.append([])
    ws.append([cell(ws, "Cable lengths (from the floor layout)", font=_BOLD)])
    ws.append(header_row(ws, ("link", "length (m)", "media", "cable SKU", "cables")))
    for _tier, link, length, media, sku, count in rows:
        ws.append([cell(ws, link), cell(ws, length, COUNT), cell(ws, media), cell(ws, sku), cell(ws, count, COUNT)])


# ---------------------------------------------------------------------- Summary


def _one_cell(value):
    """A spec value as one cell: lists (per-tier radix, oversubscription, leaf first) joined,
    a section (``layout:``) as its set keys, ``key value; ...``, in the spec's order."""
    if isinstance(value, dict):
        return "; ".join(f"{k} {_one_cell(v)}" for k, v in value.items() if v is not None)
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    return value


DECISION_FIGURES = (
    ("capex_usd", "Capex (USD)", MONEY_WHOLE), ("power_w", "Power (W)", COUNT), ("racks", "Racks", COUNT), ("switches", "Switches", COUNT),
    ("cables", "Cables", COUNT), ("transceivers", "Transceivers", COUNT), ("iteration_s", "Iteration, Eq. 1 (s)", "0.0000"),
    ("alltoall_step_s", "Expert all-to-alls per step (s)", "0.0000"), ("step_s", "Step time (s)", "0.0000"),
    ("expected_failures_per_month", "Expected component failures per month", "0.0000"),
)


def lines_of(text: str, width: float) -> int:
    """Printed lines a wrapped cell of ``width`` characters needs for ``text``."""
    return max(1, -(-len(text) // max(1, int(width) - 2)))


DECISION_WIDTHS = (64, 26, 26, 16, 16)


def write_decision(wb, ctx) -> None:
    """The first sheet: summary.json's decision (report.html's content), the recommendation first, one printed page wide."""
    d = ctx.summary.get("decision")
    if d is None:
        return
    ws = wb.create_sheet("Decision")
    print_setup(ws, None)
    side = d["architectures"]
    arches = list(side)
    set_widths(ws, DECISION_WIDTHS)
    row = [0]

    def put(values: list, text: str | None = None) -> None:
        row[0] += 1
        if text is not None:  # a wrapped text in column A: the row as tall as its lines (readers that do not fit rows)
            ws.row_dimensions[row[0]].height = 15 * lines_of(text, DECISION_WIDTHS[0])
        ws.append(values)

    def text(t: str, font=None) -> None:
        c = wrapped(ws, t)
        if font is not None:
            c.font = font
        put([c], t)

    put([cell(ws, f"{ctx.spec.name}: which fabric to buy", font=_TITLE)])
    text(d["sentence"], _BOLD)
    put([])
    put(header_row(ws, ["Why"]))
    for r in d["reasons"]:
        text(r)
    if d.get("other_wins_when"):
        text(f"When the other design would win: {d['other_wins_when']}")
    put([])
    put(header_row(ws, ["Side by side", *arches]))
    for key, label, fmt in DECISION_FIGURES:
        put([cell(ws, label), *[None if side[a].get(key) is None else cell(ws, side[a][key], fmt) for a in arches]])
    put([])
    put(header_row(ws, ["Collectives on the wiring", "Architecture", "Failed", "Slowest pair", "Mean pair"]))
    for a in arches:
        for c in side[a].get("collectives") or ():
            put([cell(ws, c["pattern"]), cell(ws, a), cell(ws, c["failed"]), cell(ws, c["slowest_pair"], PERCENT), cell(ws, c["mean_pair"], PERCENT)])
    text(d["collectives_note"])
    put([])
    put(header_row(ws, ["Blast radius", "Architecture", "Example", "GPUs cut off", "GPUs degraded"]))
    for a in arches:
        for b in side[a]["blast_radius"]:
            ex = wrapped(ws, b["example"])
            row[0] += 1
            ws.row_dimensions[row[0]].height = 15 * lines_of(b["example"], DECISION_WIDTHS[2])
            ws.append([cell(ws, b["component"]), cell(ws, a), ex, cell(ws, b["gpus_cut_off"], COUNT), cell(ws, b["gpus_degraded"], COUNT)])
    put([])
    heads = ["Failures per month", *[f"{a}: count, expected" for a in arches], "Rate per month"]
    hr = header_row(ws, heads)
    row[0] += 1
    ws.row_dimensions[row[0]].height = 30
    ws.append(hr)
    for j, rate in enumerate(d["failure_rates"]):
        put([cell(ws, rate["component"]), *[cell(ws, f"{side[a]['failures_per_month'][j]['count']:,}, {side[a]['failures_per_month'][j]['expected_per_month']:.4f}") for a in arches], cell(ws, rate["per_month"], "0.0000%")])
    for rate in d["failure_rates"]:
        text(f"{rate['component']} [{rate['status']}]: {rate['source']}")
    text(f"Rule [assumed]: the step time is Eq. 1's iteration plus the expert all-to-alls; the cheaper design is recommended while its step time is within {100 * d['tolerance']:.0f} % of the other's.")


def write_summary(wb, ctx, lay: Layout) -> None:
    """Provenance, spec, totals per architecture with savings, cost by component and its chart, notes."""
    spec = ctx.spec
    ws = wb.create_sheet("Summary")
    print_setup(ws, None)
    ws.page_setup.fitToHeight = 1  # the Summary is one printed page
    arches = list(ctx.fabrics)
    both = arches == ["rail-optimized", "rail-only"]
    set_widths(ws, (36, 20, 20, 22, 11))
    rows: list[list] = []

    def add(*values) -> int:
        rows.append(list(values))
        return len(rows)  # its 1-based row number

    add(cell(ws, f"{spec.name}: procurement workbook", font=_TITLE))
    add(cell(ws, "Generated by"), cell(ws, f"topogen {__version__}"))
    add(cell(ws, "Spec sha256"), cell(ws, spec.digest()))  # B3: the provenance cell
    estimated, priced = estimate_lines(ctx)
    if estimated:  # A4: where a buyer sees the totals
        add(cell(ws, f"ESTIMATES, NOT QUOTES: {estimated} of {priced} priced BOM lines are estimates. Replace them with your quotes.", font=_BANNER_FONT, fill=_BANNER_FILL))
    else:
        add()
    arches = list(ctx.fabrics)
    refs = {a: bom_refs(lay, a) for a in arches}
    nets = (ctx.summary.get("networks") or {}).get("architectures") or {}
    if any(refs.values()):  # the cluster's total first: the compute fabric plus every other network
        add(*header_row(ws, ["Cluster total", *arches]))
        compute = add(cell(ws, "Compute fabric (USD)"), *[cell(ws, Formula(f"={refs[a]['total_price']}"), MONEY_WHOLE) if refs[a] else None for a in arches])
        if nets:
            other = add(cell(ws, "Other networks: storage, in-band, OOB (USD)"), *[cell(ws, nets[a]["totals"]["other_cost_usd"], MONEY_WHOLE) if a in nets else None for a in arches])
            col = {a: get_column_letter(2 + i) for i, a in enumerate(arches)}
            add(cell(ws, "Cluster total (USD)", font=_BOLD), *[cell(ws, Formula(f"={col[a]}{compute}+{col[a]}{other}"), MONEY_WHOLE, font=_BOLD) for a in arches])
        else:
            col = {a: get_column_letter(2 + i) for i, a in enumerate(arches)}
            add(cell(ws, "Cluster total (USD)", font=_BOLD), *[cell(ws, Formula(f"={col[a]}{compute}"), MONEY_WHOLE, font=_BOLD) for a in arches])  # no other networks in the spec
    decision = ctx.summary.get("decision")
    if decision is not None:
        c = wrapped(ws, f"Recommendation: {decision['sentence']} (the Decision sheet has the figures it rests on)")
        c.font = _BOLD
        r = add(c)
        ws.row_dimensions[r].height = 15 * lines_of(c.value, 36)
    add(*header_row(ws, ("Spec", "Value")))
    spec_row = {}
    for key, value in spec.to_dict().items():
        value = spec.workload.describe() if key == "workload" else value  # the section in one line; the Analysis sheet has the rest
        value = _one_cell(value)
        spec_row[key] = add(cell(ws, key), cell(ws, value, COUNT if type(value) is int else None))
    add()

    sec = {a: ctx.summary["architectures"][a] for a in arches}
    refs = {a: bom_refs(lay, a) for a in arches}
    col = {a: get_column_letter(2 + i) for i, a in enumerate(arches)}
    add(*header_row(ws, ["Totals", *arches, *(("Rail-only saves", "Saves %") if both else ())]))

    def sumif(a: str, category: str, what: str) -> Formula | None:
        r = refs[a]
        return None if r is None else Formula(f'=SUMIF({r["category"]},"{category}",{r[what]})')

    def metric(label: str, per_arch: dict[str, Any], fmt: str) -> int:
        r = len(rows) + 1
        vals = [None if per_arch[a] is None else cell(ws, per_arch[a], fmt) for a in arches]
        savings = [cell(ws, Formula(f"=B{r}-C{r}"), fmt), cell(ws, Formula(f'=IF(B{r}=0,"",(B{r}-C{r})/B{r})'), PERCENT)] if both else []
        return add(cell(ws, label), *vals, *savings)

    has_nics = any(x.category == "nic" for a in arches for x in sku_lines(ctx, a))
    metric("Tiers", {a: sec[a]["tiers"] for a in arches}, COUNT)
    metric("Switches", {a: sumif(a, "switch", "quantity") or sec[a]["switches"] for a in arches}, COUNT)
    metric("Transceivers", {a: sumif(a, "transceiver", "quantity") for a in arches}, COUNT)
    metric("Cables", {a: sumif(a, "cable", "quantity") for a in arches}, COUNT)
    if has_nics:
        metric("NICs", {a: sumif(a, "nic", "quantity") for a in arches}, COUNT)
    metric("Links", {a: sec[a]["links"] for a in arches}, COUNT)
    metric("Unused switch ports", {a: sec[a]["unused_switch_ports"] for a in arches}, COUNT)
    cost = metric("Cost (USD)", {a: refs[a] and Formula(f"={refs[a]['total_price']}") for a in arches}, MONEY_WHOLE)
    power = metric("Power (kW)", {a: refs[a] and Formula(f"={refs[a]['total_power']}") for a in arches}, KILOWATTS)
    gpus = f"$B${spec_row['gpus']}"
    metric("Cost per GPU (USD)", {a: refs[a] and Formula(f"={col[a]}{cost}/{gpus}") for a in arches}, MONEY)
    metric("Power per GPU (W)", {a: refs[a] and Formula(f"={col[a]}{power}*1000/{gpus}") for a in arches}, WATTS)
    reports = _reports(ctx)
    if reports:
        add(cell(ws, "Valid"), *[cell(ws, "yes" if reports[a].valid else "NO") if a in reports else None for a in arches])
        add(cell(ws, "Validation errors / warnings"), *[cell(ws, f"{reports[a].errors} / {reports[a].warnings}") if a in reports else None for a in arches])
        hops = {a: (reports[a].figures.get("worst_case_hops") or {}) if a in reports else {} for a in arches}
        paths = [cell(ws, hops[a].get("path", "")) if hops[a] else None for a in arches]
        for c in paths:
            if c is not None:
                c.alignment = _WRAP  # a long path wraps in its column instead of being cut off by the next
        add(cell(ws, "Worst-case path"), *paths)
    add()

    add(*header_row(ws, ["Cost by component (USD)", *arches]))
    first = len(rows) + 1
    for category, label in COMPONENTS:
        if category != "nic" or has_nics:
            add(cell(ws, label), *[None if refs[a] is None else cell(ws, sumif(a, category, "extended"), MONEY_WHOLE) for a in arches])
    last = len(rows)
    add()

    notes = list(lay.notes)
    for a in arches:
        notes += [f"{a}: {n}" for n in sec[a]["notes"]]
        if "striping" in sec[a]:
            notes.append(f"{a}: {striping_text(sec[a]['striping'], sec[a]['tiers'])}")
        if refs[a] is None:
            notes.append(f"{a}: no bill of materials was compiled, so its cost, power, transceiver and cable figures are empty.")
    notes.append("Cabling sheets: one row per cable, A = lower end, Z = upper end; A-Type/Z-Type HCA is a GPU NIC port, SW a switch port; the Cable column is the cable id of <arch>/cabling.csv.")
    notes.append(
        f"Ports sheets: below the top tier a switch's down ports come first (a leaf: p1..p{spec.shape.split(1)[0]}) and its uplinks follow; "
        "top-tier switches use every port facing down."
    )
    notes.append("Cost and power figures are formulas over the BOM sheets: edit a unit price or quantity there and the totals, savings and chart follow.")
    add(*header_row(ws, ["Notes"]))
    for n in notes:  # wrapped in their cell, the row as tall as the text (a long note never widens the printed page)
        r = add(wrapped(ws, n))
        ws.row_dimensions[r].height = 15 * lines_of(n, 36)
    for row in rows:
        ws.append(row)

    if any(refs.values()):
        chart = BarChart()
        chart.type = "col"
        chart.grouping = "clustered"
        chart.title = "Cost by component"
        chart.y_axis.title = "USD"
        chart.y_axis.number_format = MONEY_WHOLE
        chart.x_axis.delete = False  # openpyxl 3.1 hides axes unless told
        chart.y_axis.delete = False
        chart.add_data(Reference(ws, min_col=2, max_col=1 + len(arches), min_row=first - 1, max_row=last), titles_from_data=True)
        chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
        chart.width, chart.height = 18, 9
        ws.add_chart(chart, f"A{len(rows) + 2}")  # below the notes, inside the printed columns (to the right it fell off the page)


# ------------------------------------------------------------------- Validation


def _reports(ctx) -> dict:
    return getattr(ctx, "reports", None) or {}


def flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Nested key figures as ``("a.b.c", scalar)`` rows; lists become comma-joined text."""
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            out += flatten(v, f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(value, (list, tuple)):
        return [(prefix, ", ".join(map(str, value)))]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalar -> int/float/bool
    if value is None or isinstance(value, (int, float, str)):
        return [(prefix, value)]
    return [(prefix, str(value))]


def table_sheet(wb, title: str, columns: tuple[str, ...], widths: tuple[int, ...]):
    """A new printable sheet of one table: its column widths, its header row, frozen under the header."""
    ws = wb.create_sheet(title)
    print_setup(ws)
    ws.freeze_panes = "A2"
    set_widths(ws, widths)
    ws.append(header_row(ws, columns))
    return ws


NETWORK_COLUMNS = ("Architecture", "Network", "Category", "SKU", "Used in", "Quantity", "Unit price", "Extended price", "Unit power (W)", "Total power (kW)")
NETWORK_WIDTHS = (16, 10, 12, 22, 80, 10, 12, 15, 15, 16)  # 208 of the page's 220 units: "Used in" mostly on one line


def write_networks(wb, ctx) -> None:
    """The storage, in-band and OOB networks (spec ``networks:``): every SKU priced, per network, the other networks' and the cluster's totals."""
    ws = table_sheet(wb, "Networks", NETWORK_COLUMNS, NETWORK_WIDTHS)
    r = 1
    sections = ctx.summary.get("networks", {}).get("architectures", {})
    for arch, boms in ctx.network_boms.items():
        subtotals = []
        for b in boms:
            first = r + 1
            for x in b.sku_lines():
                r += 1
                row = [cell(ws, arch), cell(ws, b.network), cell(ws, x.category), cell(ws, x.sku), wrapped(ws, x.used_in), cell(ws, x.quantity, COUNT), cell(ws, x.unit_price, MONEY), cell(ws, Formula(f"=F{r}*G{r}"), MONEY), cell(ws, x.unit_power_w, WATTS), cell(ws, Formula(f"=F{r}*I{r}/1000"), KILOWATTS)]
                ws.row_dimensions[r].height = 15 * max(1, -(-len(x.used_in) // (NETWORK_WIDTHS[4] - 2)))
                ws.append(row)
            r += 1
            subtotals.append(r)
            ws.append([cell(ws, arch), cell(ws, b.network, font=_BOLD), None, cell(ws, f"{b.switch_count:,} switches, {b.cable_count:,} cables", font=_BOLD), None, None, None, cell(ws, Formula(f"=SUM(H{first}:H{r - 1})"), MONEY, font=_BOLD), None, cell(ws, Formula(f"=SUM(J{first}:J{r - 1})"), KILOWATTS, font=_BOLD)])
        t = sections.get(arch, {}).get("totals")
        if t is None:
            continue
        r += 1
        other = r
        ws.append([cell(ws, arch), cell(ws, "others", font=_BOLD), None, cell(ws, f"{t['other_switches']:,} switches, {t['other_cables']:,} cables", font=_BOLD), None, None, None, cell(ws, Formula("=" + "+".join(f"H{i}" for i in subtotals)) if subtotals else 0, MONEY, font=_BOLD), None, cell(ws, Formula("=" + "+".join(f"J{i}" for i in subtotals)) if subtotals else 0, KILOWATTS, font=_BOLD)])
        if t.get("compute_cost_usd") is None:
            continue
        r += 2
        ws.append([cell(ws, arch), cell(ws, "compute", font=_BOLD), None, cell(ws, f"{t['compute_switches']:,} switches, {t['compute_cables']:,} cables", font=_BOLD), None, None, None, cell(ws, t["compute_cost_usd"], MONEY, font=_BOLD), None, cell(ws, t["compute_power_w"] / 1000, KILOWATTS, font=_BOLD)])
        ws.append([cell(ws, arch), cell(ws, "all", font=_BOLD), None, cell(ws, f"all networks: {t['all_switches']:,} switches, {t['all_cables']:,} cables", font=_BOLD), None, None, None, cell(ws, Formula(f"=H{r - 1}+H{other}"), MONEY, font=_BOLD), None, cell(ws, Formula(f"=J{r - 1}+J{other}"), KILOWATTS, font=_BOLD)])
    notes = [t for sec in sections.values() for t in sec.get("notes", [])]
    for text in dict.fromkeys(notes):
        ws.append([cell(ws, "note"), None, None, cell(ws, text)])


def write_validation(wb, ctx) -> None:
    """Findings of every architecture (a filterable table), then the checks and key figures."""
    ws = wb.create_sheet("Validation")
    print_setup(ws)
    ws.freeze_panes = "A2"
    widths = (16, 22, 9, 30, 24, 8, 64, 44)  # 217 characters: one landscape page at a legible scale (PAGE_WIDTH)
    set_widths(ws, widths)
    reports = _reports(ctx)
    ws.append(header_row(ws, FINDING_COLUMNS))
    rows = 1

    def tall(row: int, texts: dict[int, str]) -> None:
        """Row ``row`` as tall as its longest wrapped text (column index -> text): printed lines never overlap."""
        ws.row_dimensions[row].height = 15 * max(lines_of(t, widths[i]) for i, t in texts.items())

    for arch in ctx.fabrics:
        rep = reports.get(arch)
        for f in getattr(rep, "findings", ()):
            rows += 1
            tall(rows, {3: _text(f.devices), 4: _text(f.ports), 5: _text(f.cables), 6: f.message, 7: f.hint})
            ws.append([wrapped(ws, arch), wrapped(ws, f.check), wrapped(ws, f.severity), wrapped(ws, _text(f.devices)), wrapped(ws, _text(f.ports)), wrapped(ws, _text(f.cables)), wrapped(ws, f.message), wrapped(ws, f.hint)])
        for check, (sev, n) in sorted(getattr(rep, "suppressed", {}).items()):
            ws.append([cell(ws, arch), cell(ws, check), cell(ws, sev), None, None, None, cell(ws, f"{n:,} more {check} findings, not listed")])
            rows += 1
    if rows == 1:
        ws.append([cell(ws, "no findings" if reports else "validation did not run")])
        rows += 1
    ws.auto_filter.ref = f"A1:{get_column_letter(len(FINDING_COLUMNS))}{rows}"
    if not reports:
        return

    ws.append([])
    ws.append(header_row(ws, ("Architecture", "Check", "Status", "Detail")))
    rows += 2
    for arch in ctx.fabrics:
        rep = reports.get(arch)
        if rep is None:
            continue
        for g, (num, title) in GROUPS.items():
            rows += 1
            detail = _text(rep.checks.get(g, ""))
            tall(rows, {1: f"{num}. {title}", 3: detail})
            ws.append([wrapped(ws, arch), wrapped(ws, f"{num}. {title}"), wrapped(ws, rep.group_status(g)), wrapped(ws, detail)])
    ws.append([])
    ws.append(header_row(ws, ("Architecture", "Key figure", "Value")))
    rows += 2
    for arch in ctx.fabrics:
        rep = reports.get(arch)
        if rep is None:
            continue
        for k, v in flatten(rep.key_figures()):
            rows += 1
            tall(rows, {1: k})
            ws.append([wrapped(ws, arch), wrapped(ws, k), cell(ws, v, COUNT if type(v) is int else None)])


def write_analysis(wb, ctx) -> None:
    """*Analysis*: each analysis of the spec's workload as a table, its parameters (status, source) and caveats.

    Only when the spec has a ``workload:``; the rows are those of summary.json's
    ``analysis`` section (:func:`topogen.analysis.fabric.build_section`), the
    columns those ``topogen analyze`` prints, with raw numbers (seconds, bytes, GB/s, fractions).
    """
    sections = getattr(ctx, "analysis", None)
    if not sections:
        return

    ws = wb.create_sheet("Analysis")
    print_setup(ws, None)
    set_widths(ws, (34, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16))
    bold = Font(bold=True, size=12)
    for key, sec in sections.items():
        kind = sec.get("analysis", key)
        ws.append([cell(ws, f"{TITLES[kind]} [{key}]", font=bold)])
        if "skipped" in sec:
            ws.append([cell(ws, f"not run: {sec['skipped']}")])
            ws.append([])
            continue
        cols = [(h or "chosen", k) for h, k, _fmt in COLUMNS[kind]]
        ws.append(header_row(ws, [h for h, _k in cols]))
        for r in sec["rows"]:
            ws.append([cell(ws, v) if isinstance(v, str) else (cell(ws, v, analysis_format(k, v)) if isinstance(v, (int, float)) and not isinstance(v, bool) else v) for k, v in ((k, r.get(k)) for _h, k in cols)])
        for n in sec.get("notes", ()):
            ws.append([cell(ws, f"note: {n}")])
        ws.append(header_row(ws, ("Parameter", "Value", "Unit", "Status", "Source")))
        for p in sec["parameters"]:
            v = p["value"]
            value = cell(ws, v) if isinstance(v, str) else (cell(ws, v, "0.###E+0" if abs(v) >= 1e9 else "#,##0.###") if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
            ws.append([cell(ws, p["name"]), value, cell(ws, p["unit"]), cell(ws, p["status"]), cell(ws, p["source"])])
        for c in sec["caveats"]:
            ws.append([cell(ws, "caveat"), cell(ws, c)])
        ws.append([])


TRAFFIC_COLUMNS = (
    ("Architecture", "arch", None), ("Pattern", "pattern", None), ("Failed", "failed", None), ("Flows stand for", "aggregation", None),
    ("GPU pairs", "pairs", COUNT), ("Flows", "flows", COUNT), ("Slowest pair (of NIC line rate)", "min_rate_fraction", "0.0%"),
    ("Mean pair (of NIC line rate)", "mean_rate_fraction", "0.0%"), ("Busiest link: offered / capacity", "max_link_load", "0.00"),
    ("DP all-reduce bus bandwidth (GB/s)", "bus_bandwidth_GBps", "#,##0.0"), ("Slowest pair vs intact", "change.min_rate_fraction", "+0.0%;-0.0%;0.0%"),
)
TIER_COLUMNS = (("Link tier", "tier", None), ("Links", "links", COUNT), ("Mean utilisation", "mean_utilisation", "0.0%"), ("Max utilisation", "max_utilisation", "0.0%"), ("Max offered / capacity", "max_offered_over_capacity", "0.00"))
BUSY_COLUMNS = (("Link", "link", None), ("Link tier", "tier", None), ("Direction", "direction", None), ("Capacity (Gb/s)", "capacity_gbps", "#,##0"), ("Offered / capacity", "offered_over_capacity", "0.00"), ("Utilisation", "utilisation", "0.0%"))


def write_traffic(wb, ctx) -> None:
    """*Traffic*: the collectives simulated on each wiring (``build --traffic``, :mod:`topogen.traffic.overview`).

    Per architecture x pattern x failure case: the figures ``topogen simulate``
    prints (rates as fractions of NIC line rate, the busiest link's offered
    load over capacity, the DP ring's bus bandwidth), then utilisation per link
    tier, then the busiest links by name, then notes.
    """
    sec = getattr(ctx, "traffic", None)
    if not sec:
        return
    ws = wb.create_sheet("Traffic")
    print_setup(ws, None)
    widths = (15, 15, 16, 40, 14, 12, 14, 14, 14, 14, 14)
    set_widths(ws, widths)
    bold = Font(bold=True, size=12)
    at = [0]  # rows written so far

    def append(values: list) -> None:
        at[0] += 1
        ws.append(values)

    def head(names: list[str]) -> None:
        lines = max(-(-len(h) // max(1, widths[i] - 2)) for i, h in enumerate(names))
        ws.row_dimensions[at[0] + 1].height = 15 * max(1, lines)  # readers that do not fit rows to wrapped text
        append(header_row(ws, names))

    def get(r: dict, key: str) -> Any:
        top, _, rest = key.partition(".")
        v = r.get(top)
        return v.get(rest) if rest and isinstance(v, dict) else v

    def value(r: dict, key: str, fmt: str | None) -> Any:
        v = get(r, key)
        return cell(ws, "-") if v is None else cell(ws, v, fmt if not isinstance(v, str) else None)

    def table(rows: list[tuple[str, str, str, dict]], columns) -> None:
        head(["Architecture", "Pattern", "Failed", *[h for h, _k, _f in columns]])
        for arch, pattern, failed, r in rows:
            append([cell(ws, arch), cell(ws, pattern), cell(ws, failed), *[value(r, k, f) for _h, k, f in columns]])

    append([cell(ws, f"Traffic on the wiring: {sec['routing']} routing, max-min fair rates (topogen simulate)", font=_TITLE)])
    append([cell(ws, "Rates are fractions of the sender's NIC line rate; all-to-all: per GPU, over the pairs that cross the network. A failure row: one spine down.")])
    append([])
    head([h for h, _k, _f in TRAFFIC_COLUMNS])
    for r in sec["rows"]:
        append([value(r, k, f) for _h, k, f in TRAFFIC_COLUMNS])
    append([])
    append([cell(ws, "Utilisation per link tier (at the max-min rates)", font=bold)])
    table([(r["arch"], r["pattern"], r["failed"], t) for r in sec["rows"] for t in r["tiers"]], TIER_COLUMNS)
    append([])
    append([cell(ws, "Busiest links (offered load over capacity before any sharing, then utilisation)", font=bold)])
    table([(r["arch"], r["pattern"], r["failed"], b) for r in sec["rows"] for b in r["busiest_links"]], BUSY_COLUMNS)
    append([])
    notes = [f"note ({r['arch']}, {r['pattern']}, {r['failed']}): {n}" for r in sec["rows"] for n in r["notes"]] + [f"note: {n}" for n in sec["notes"]]
    for n in notes:  # lines that fit the printed page (the sheet is about 180 characters wide)
        for line in textwrap.wrap(n, 170, subsequent_indent="    "):
            append([cell(ws, line)])


PERCENT_KEYS = ("relative", "overhead", "overhead_pipelined", "overhead_serial", "nic_share", "change_vs_smaller_k")


def analysis_format(key: str, value: float) -> str:
    """The number format of an analysis cell, as ``topogen analyze`` prints it (bytes in GB: ``,,,`` divides by 10^9).

    Raw full-precision floats in a 16-character column run into the next cell on paper.
    """
    if key in PERCENT_KEYS:
        return "0.00%"
    if key == "bytes_per_pair":
        return '#,##0.000,,'  # MB
    if "bytes" in key:
        return "#,##0.00,,,"  # GB
    if key.endswith("_s"):
        return "0.0000"
    if isinstance(value, int) or float(value).is_integer():
        return COUNT
    return "#,##0.0##"


def _text(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v))
    return str(v)


# ------------------------------------------------------------------------ saving


def set_properties(wb, ctx) -> None:
    """Provenance in the document properties (generator, spec hash), as on Summary!B3."""
    spec = ctx.spec
    gen = f"topogen {__version__}"
    p = wb.properties
    p.creator = gen
    p.lastModifiedBy = gen
    p.title = f"{spec.name}: procurement workbook"
    p.subject = "GPU cluster scale-out network: bill of materials, cabling, port map"
    p.description = f"generated by {spec.provenance()}"
    p.keywords = f"{gen}; spec sha256:{spec.digest()}"
    p.created = FIXED_TIME
    p.modified = FIXED_TIME
    wb.custom_doc_props.append(StringProperty(name="generator", value=gen))
    wb.custom_doc_props.append(StringProperty(name="spec_sha256", value=spec.digest()))


# ------------------------------------------------------------------------ export


SUBNET_COLUMNS = ("Architecture", "Network", "Subnet", "VLAN", "Gateway", "Gateway on", "Devices", "Free addresses", "Addresses")
SUBNET_WIDTHS = (16, 9, 18, 7, 15, 44, 10, 15, 11)


def write_subnets(wb, ctx) -> None:
    """The in-band and OOB subnets of the address plan (:mod:`topogen.config.netaddr`): prefix, VLAN, gateway, devices, free addresses."""
    ws = table_sheet(wb, "Subnets", SUBNET_COLUMNS, SUBNET_WIDTHS)
    for arch, a in ctx.network_addresses.items():
        n = ctx.networks[arch]
        for net in (nw.INBAND, nw.OOB):
            sub = a.subnets[net]
            for b, g, sw, h, f in zip(ip_text(sub.base).tolist(), ip_text(sub.gateway).tolist(), sub.switches, sub.hosts.tolist(), sub.free().tolist()):
                ws.append([cell(ws, arch), cell(ws, nw.NETWORK_NAMES[net]), cell(ws, f"{b}/{sub.plen}"), cell(ws, sub.vlan), cell(ws, g), cell(ws, ", ".join(n.switches[i].name for i in sw)), cell(ws, h, COUNT), cell(ws, f, COUNT), cell(ws, sub.size, COUNT)])


def write_workbook(ctx, path: Path, max_rows: int = ROW_LIMIT, fast: bool = True) -> None:
    """Write the workbook of ``ctx`` to ``path``; ``max_rows`` is lowered only by tests of the split.

    ``fast=False`` writes the cabling and port-map sheets through openpyxl, one
    cell per value (the reference the streamed sheets are tested against).
    """
    wb = openpyxl.Workbook(write_only=True)
    sst = SharedStrings()
    lay = plan(ctx, max_rows)
    write_decision(wb, ctx)
    write_summary(wb, ctx, lay)
    for arch in ctx.fabrics:
        write_bom(wb, ctx, arch, lay)
    if getattr(ctx, "networks", None):
        write_networks(wb, ctx)
    if getattr(ctx, "network_addresses", None):
        write_subnets(wb, ctx)
    quote = quote_style_id(wb.worksheets[0])
    if fast:
        common_strings(ctx, sst)
    strings = {arch: FabricStrings(fabric, sst, quote) if fast else None for arch, fabric in ctx.fabrics.items()}
    for arch, fabric in ctx.fabrics.items():
        write_cabling(wb, fabric, lay.cabling[arch], media_columns(ctx, arch), strings[arch], getattr(_bom(ctx, arch), "breakouts", None), (getattr(ctx, "layouts", None) or {}).get(arch))
    for arch, fabric in ctx.fabrics.items():
        write_port_map(wb, fabric, lay.ports[arch], strings[arch], arch)
    write_validation(wb, ctx)
    write_analysis(wb, ctx)
    write_traffic(wb, ctx)
    set_properties(wb, ctx)
    save_package(wb, path, sst, COMPRESSLEVEL)


def export(ctx, dest: Path) -> list[Path]:
    path = Path(dest) / f"{ctx.spec.name}.xlsx"
    write_workbook(ctx, path)
    return [path]
