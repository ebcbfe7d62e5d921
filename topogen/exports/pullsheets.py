"""``<arch>/pull-sheets.csv`` (and ``<arch>/pull-sheets/<rack>_<rack>.csv``): the cables to pull, by rack pair.

Installers pull cables rack pair by rack pair. Every cable is listed once,
under the pair of racks it joins (``A01_A09``; a cable inside one rack under
``A01_A01``), pairs in rack-name order, then by length and label. Columns:
``sheet, label, cable, length_m, media, cable_sku, a_rack, a_u, a_device,
a_port, z_rack, z_u, z_device, z_port``. With at most
:data:`MAX_SHEET_FILES` rack pairs each also gets its own CSV; above that the
one grouped file is written (a note says so).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..layout.labels import FloorView
from ..model import Fabric
from ..naming import GpuNames, device_names
from .files import arch_dir, write_csv

COLUMNS = ("sheet", "label", "cable", "length_m", "media", "cable_sku", "a_rack", "a_u", "a_device", "a_port", "z_rack", "z_u", "z_device", "z_port")
MAX_SHEET_FILES = 256


def sheet_rows(fabric: Fabric, lay, bom=None) -> tuple[list[str], list[list[tuple]]]:
    """Pull-sheet names and their rows (:data:`COLUMNS`), in sheet order."""
    view = FloorView(fabric, lay, bom)
    floor = [r for chunk in view.rows() for r in chunk]
    L = fabric.links
    p = lay.placement
    names = np.asarray(lay.racks.name, dtype=object)
    ra, rz = p.rack[L.a_dev].astype(np.int64), p.rack[L.z_dev].astype(np.int64)
    ka = names[ra]
    kz = names[rz]
    lo = np.where(ka <= kz, ka, kz)
    hi = np.where(ka <= kz, kz, ka)
    sheet = np.char.add(np.char.add(lo.astype(str), "_"), hi.astype(str))
    labels = np.asarray([r[-1] for r in floor], dtype=object)
    order = np.lexsort((labels.astype(str), lay.length_m, sheet))
    sw = np.array([s.name for s in fabric.switches], dtype=object)
    gn = GpuNames(fabric.gpus, fabric.hb_domain)
    an = device_names(fabric, L.a_dev, sw, gn)
    zn = device_names(fabric, L.z_dev, sw, gn)
    ap = view.port_names(L.a_dev, L.a_port)
    zp = view.port_names(L.z_dev, L.z_port)
    sheets: list[str] = []
    groups: list[list[tuple]] = []
    for i in order.tolist():
        a_rack, a_u, z_rack, z_u, length, media, sku, _atx, _ztx, label = floor[i]
        s = str(sheet[i])
        if not sheets or sheets[-1] != s:
            sheets.append(s)
            groups.append([])
        groups[-1].append((s, label, i + 1, length, media, sku, a_rack, a_u, an[i], ap[i], z_rack, z_u, zn[i], zp[i]))
    return sheets, groups


def export(ctx, dest: Path) -> list[Path]:
    paths = []
    for arch, fabric in ctx.fabrics.items():
        lay = (getattr(ctx, "layouts", None) or {}).get(arch)
        if lay is None:
            continue
        sheets, groups = sheet_rows(fabric, lay, (getattr(ctx, "boms", None) or {}).get(arch))
        d = arch_dir(dest, arch)
        p = d / "pull-sheets.csv"
        write_csv(p, COLUMNS, (r for g in groups for r in g))
        paths.append(p)
        if len(sheets) <= MAX_SHEET_FILES:
            sub = arch_dir(dest, arch, "pull-sheets")
            for s, rows in zip(sheets, groups):
                q = sub / f"{s}.csv"
                write_csv(q, COLUMNS, rows)
                paths.append(q)
        else:
            ctx.messages.append(f"{arch}: {len(sheets):,} rack pairs: pull sheets are in one file, {arch}/pull-sheets.csv, grouped by its 'sheet' column (one CSV per pair only up to {MAX_SHEET_FILES} pairs)")
    return paths
