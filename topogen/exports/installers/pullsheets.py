"""``<arch>/pull-sheets.csv``, and ``<arch>/pull-sheets/<row>/<rack>_<rack>.csv`` with an index: the cables to pull, by rack pair.

Installers pull cables rack pair by rack pair. Every cable is listed once,
under the pair of racks it joins (``A01_A09``; a cable inside one rack under
``A01_A01``), pairs in rack-name order, then by length and label. Columns:
``sheet, label, cable, length_m, media, cable_sku, a_rack, a_u, a_device,
a_port, z_rack, z_u, z_device, z_port``, and on a fabric with breakout cables
``breakout_cable`` (as in cabling.csv: the legs of one harness name it).

Every rack pair also gets its own CSV, at any cluster size, in a folder per row
of the pair's first rack (``pull-sheets/row-01/A01_A09.csv``), so no folder holds
more than one row's pairs; ``pull-sheets/index.csv`` lists every sheet (``sheet,
file, row, a_rack, z_rack, cables, length_m``: its file, and the cables and metres
to pull). A spec with a ``networks:`` section also gets the storage, in-band and
OOB cables' sheets beside them, ``<arch>/networks-pull-sheets.csv``
(:mod:`.network_pullsheets`).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from topogen.exports.installers import network_pullsheets
from topogen.layout.floor import row_folder
from topogen.exports.installers.cabling import BREAKOUT_COLUMN, breakout_names
from topogen.exports.files import arch_dir, open_output, write_file_text
from topogen.fabric.model import CHUNK, Fabric
from topogen.fabric.view import csv_header, csv_lines, csv_table, number_texts, writer_field
from topogen.layout.labels import FloorView

COLUMNS = ("sheet", "label", "cable", "length_m", "media", "cable_sku", "a_rack", "a_u", "a_device", "a_port", "z_rack", "z_u", "z_device", "z_port")


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


SHEET_CHUNK = CHUNK // 4  # rows rendered at once: a chunk's columns, text and lines are this task's peak (16,384 rows: about 40 MB less than 65,536 at 131,072 GPUs)

INDEX_COLUMNS = ("sheet", "file", "row", "a_rack", "z_rack", "cables", "length_m")


def write_all(fabric: Fabric, floor: FloorView, lay, path: Path, sub: Path, order: np.ndarray, sheet: np.ndarray, names: np.ndarray, cells, legs=None) -> list[Path]:
    """The grouped file ``path``, one CSV per rack pair under ``sub/<row>/`` (the row of the pair's first rack) and ``sub/index.csv``.

    Each chunk of rows is rendered and encoded once: its bytes go to the grouped
    file and, cut at the line ends where the sheets change, to each pair's file (a
    chunk whose fields hold line breaks is rendered again sheet by sheet). Paths
    are joined as text, not through :mod:`pathlib` (13,313 files a fabric at
    131,072 GPUs).
    """
    racks = lay.racks
    row_of = dict(zip(racks.name, np.asarray(racks.row).tolist()))
    nrows = int(np.asarray(racks.row).max()) + 1 if len(racks) else 1
    header = csv_header(COLUMNS + ((BREAKOUT_COLUMN,) if legs is not None else ())).encode("utf-8")
    metres = np.bincount(sheet, weights=floor.lay.length_m, minlength=len(names)) if len(sheet) else np.zeros(len(names))
    count = np.bincount(sheet, minlength=len(names)) if len(sheet) else np.zeros(len(names), np.int64)
    paths: list[Path] = []
    index: list[list[str]] = []
    made: set[str] = set()
    base = os.path.abspath(sub)
    current: list = [None, []]  # the sheet being gathered, its pieces of bytes

    def flush() -> None:
        k, parts = current
        if k is None:
            return
        name = str(names[k])
        a, z = name.split("_", 1) if name.count("_") == 1 else (name, name)
        folder = row_folder(row_of.get(a, 0), nrows)
        if folder not in made:
            os.makedirs(os.path.join(base, folder), exist_ok=True)
            made.add(folder)
        q = f"{base}/{folder}/{name}.csv"
        write_file_text(q, header + b"".join(parts))
        paths.append(Path(q))
        index.append([k, f"{folder}/{name}.csv", folder, a, z, str(int(count[k])), round(float(metres[k]), 1)])

    with open_output(path, "wb") as fh:
        fh.write(header)
        for start in range(0, len(order), SHEET_CHUNK):
            rows = order[start : start + SHEET_CHUNK]
            data = sheet_text(fabric, floor, rows, sheet, cells, legs).encode("utf-8")
            fh.write(data)
            sh = sheet[rows]
            cuts = np.flatnonzero(np.diff(sh)) + 1
            ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10) + 1  # the byte after each line's '\n'
            whole = len(ends) == len(rows)
            at = [0, *(ends[cuts - 1].tolist() if whole else []), len(data)]
            bounds = [0, *cuts.tolist(), len(rows)]
            for i, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
                k = int(sh[lo])
                if k != current[0]:
                    flush()
                    current[:] = [k, []]
                current[1].append(data[at[i] : at[i + 1]] if whole else sheet_text(fabric, floor, rows[lo:hi], sheet, cells, legs).encode("utf-8"))
        flush()
    p = sub / "index.csv"
    lengths = number_texts(np.asarray([r[6] for r in index], dtype=np.float64)) if index else []
    with open_output(p, newline="") as fh:
        fh.write(csv_header(INDEX_COLUMNS))
        if index:
            field: dict[str, str] = {}  # rows, racks: few distinct values, each made a CSV field once

            def once(v: str) -> str:
                return field[v] if v in field else field.setdefault(v, writer_field(v))

            sheets = [cells[r[0]] for r in index]  # the sheet names, already CSV fields
            fh.write(csv_lines([sheets, csv_table([r[1] for r in index])] + [[once(r[i]) for r in index] for i in (2, 3, 4)] + [[r[5] for r in index], lengths], len(index)))
    return [path, p] + paths


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
        paths.extend(write_all(fabric, floor, lay, d / "pull-sheets.csv", arch_dir(dest, arch, "pull-sheets"), order, sheet, names, cells, legs))
    return paths + network_pullsheets.export(ctx, dest)
