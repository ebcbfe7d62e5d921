"""``<arch>/pull-sheets.csv`` (and ``<arch>/pull-sheets/<rack>_<rack>.csv``): the cables to pull, by rack pair.

Installers pull cables rack pair by rack pair. Every cable is listed once,
under the pair of racks it joins (``A01_A09``; a cable inside one rack under
``A01_A01``), pairs in rack-name order, then by length and label. Columns:
``sheet, label, cable, length_m, media, cable_sku, a_rack, a_u, a_device,
a_port, z_rack, z_u, z_device, z_port``, and on a fabric with breakout cables
``breakout_cable`` (as in cabling.csv: the legs of one harness name it). With at most
:data:`MAX_SHEET_FILES` rack pairs each also gets its own CSV; above that the
one grouped file is written (a note says so). A spec with a ``networks:`` section
also gets the storage, in-band and OOB cables' sheets beside them,
``<arch>/networks-pull-sheets.csv`` (:mod:`.network_pullsheets`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from topogen.exports.installers import network_pullsheets
from topogen.exports.installers.cabling import BREAKOUT_COLUMN, breakout_names
from topogen.exports.files import arch_dir, open_output
from topogen.fabric.model import CHUNK, Fabric
from topogen.fabric.view import csv_header, csv_lines, csv_table, number_texts
from topogen.layout.labels import FloorView

COLUMNS = ("sheet", "label", "cable", "length_m", "media", "cable_sku", "a_rack", "a_u", "a_device", "a_port", "z_rack", "z_u", "z_device", "z_port")
MAX_SHEET_FILES = 256


def sheet_order(fabric: Fabric, lay, floor: FloorView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cable rows in sheet order, each cable's sheet index and the sheet names (rack-name order).

    Sheets sort by name, cables within a sheet by length, then label. Labels
    are not sorted as strings: their order is the order of (rack, U, port) of
    each end when rack names are prefix-free, U numbers fit their padding and
    port names are printable (always so for generated names); else the labels
    are sorted as text.
    """
    L = fabric.cable_table()  # the links, then a leaf pair's ISLs
    p = lay.placement
    names = list(lay.racks.name)
    uniq, rrank = np.unique(np.asarray(names, dtype=str), return_inverse=True)
    ra, rz = p.rack[L.a_dev].astype(np.int64), p.rack[L.z_dev].astype(np.int64)
    ka, kz = rrank[ra], rrank[rz]
    lo, hi = np.minimum(ka, kz), np.maximum(ka, kz)
    pairs, pair = np.unique(lo * len(uniq) + hi, return_inverse=True)
    texts = [f"{uniq[q // len(uniq)]}_{uniq[q % len(uniq)]}" for q in pairs.tolist()]
    by_text = sorted(range(len(texts)), key=texts.__getitem__)
    sheet_rank = np.empty(len(texts), np.int64)
    sheet_rank[by_text] = np.arange(len(texts))
    sheet = sheet_rank[pair.reshape(-1)]
    sheet_names = np.asarray([texts[i] for i in by_text], dtype=object)
    v = floor.names
    ifaces = v.interface_names.tolist()
    width_u = 10**floor.uw
    u = p.u.astype(np.int64)
    ordered = sorted(uniq.tolist())
    prefix_free = len(set(names)) == len(names) and not any(b.startswith(a) for a, b in zip(ordered, ordered[1:]))
    if prefix_free and (len(u) == 0 or (u.min() >= 0 and u.max() < width_u)) and all(min(x, default="!") > " " for x in ifaces):
        irank = np.empty(len(ifaces), np.int64)
        irank[sorted(range(len(ifaces)), key=ifaces.__getitem__)] = np.arange(len(ifaces))
        ends = [(rrank[r] * width_u + u[d]) * len(ifaces) + irank[v.interface_codes(d, port)] for r, d, port in ((ra, L.a_dev, L.a_port), (rz, L.z_dev, L.z_port))]
        order = np.lexsort((ends[1], ends[0], lay.length_m, sheet))
    else:
        labels = np.asarray([x for sl in v.chunks(fabric.cables) for x in floor.labels(sl)], dtype=str)
        order = np.lexsort((np.unique(labels, return_inverse=True)[1].reshape(-1), lay.length_m, sheet))
    return order, sheet, sheet_names


def sheet_text(fabric: Fabric, floor: FloorView, rows: np.ndarray, sheet: np.ndarray, sheet_names: np.ndarray, legs=None) -> str:
    """The CSV lines of cable rows ``rows`` (:data:`COLUMNS`); ``sheet_names`` as CSV fields."""
    L = floor.cables
    v = floor.names
    a, z = L.a_dev[rows], L.z_dev[rows]
    cols = [
        sheet_names[sheet[rows]],
        floor.csv_labels(rows),
        map(str, (rows + 1).tolist()),
        number_texts(floor.lay.length_m[rows]),
        floor.media_sku(rows),  # media,cable_sku
        floor.rack_u(a),  # a_rack,a_u
        v.csv_device[a],
        v.interfaces(a, L.a_port[rows]),
        floor.rack_u(z),  # z_rack,z_u
        v.csv_device[z],
        v.interfaces(z, L.z_port[rows]),
    ]
    if legs is not None:
        cols.append(legs(rows))
    return csv_lines(cols, len(rows))


def write_sheets(fabric: Fabric, floor: FloorView, path: Path, rows: np.ndarray, sheet: np.ndarray, sheet_names: np.ndarray, legs=None) -> None:
    with open_output(path, newline="") as fh:
        fh.write(csv_header(COLUMNS + ((BREAKOUT_COLUMN,) if legs is not None else ())))
        for start in range(0, len(rows), CHUNK):
            fh.write(sheet_text(fabric, floor, rows[start : start + CHUNK], sheet, sheet_names, legs))


def export(ctx, dest: Path) -> list[Path]:
    paths = []
    for arch, fabric in ctx.fabrics.items():
        lay = (getattr(ctx, "layouts", None) or {}).get(arch)
        if lay is None:
            continue
        bom = (getattr(ctx, "boms", None) or {}).get(arch)
        floor = FloorView(fabric, lay, bom)
        legs = breakout_names(fabric, bom)
        order, sheet, names = sheet_order(fabric, lay, floor)
        cells = csv_table(names.tolist())
        d = arch_dir(dest, arch)
        p = d / "pull-sheets.csv"
        write_sheets(fabric, floor, p, order, sheet, cells, legs)
        paths.append(p)
        sheets = names
        if len(sheets) <= MAX_SHEET_FILES:
            sub = arch_dir(dest, arch, "pull-sheets")
            cuts = np.flatnonzero(np.diff(sheet[order])) + 1
            for s, rows in zip(sheets.tolist(), np.split(order, cuts)):
                q = sub / f"{s}.csv"
                write_sheets(fabric, floor, q, rows, sheet, cells, legs)
                paths.append(q)
        else:
            ctx.messages.append(f"{arch}: {len(sheets):,} rack pairs: pull sheets are in one file, {arch}/pull-sheets.csv, grouped by its 'sheet' column (one CSV per pair only up to {MAX_SHEET_FILES} pairs)")
    return paths + network_pullsheets.export(ctx, dest, MAX_SHEET_FILES)
