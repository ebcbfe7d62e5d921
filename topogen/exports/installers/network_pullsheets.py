"""``<arch>/networks-pull-sheets.csv`` (and ``<arch>/networks-pull-sheets/<row>/<rack>_<rack>.csv``, ``index.csv``): the other networks' cables to pull, by rack pair.

The storage, in-band and OOB cables (spec ``networks:``) organised as the compute
fabric's pull sheets (:mod:`.pullsheets`) are: every cable once, under the pair of
racks it joins (``A01_K01``; inside one rack ``A01_A01``), pairs in name order, then by
length and label. A cable whose other end stands outside the plan (the storage targets,
the NFS appliance, the data-centre core: where they stand is not known) is under
``<rack>_external`` and has no length. Columns: ``sheet, network, label, cable, role,
length_m, a_rack, a_u, a_device, a_port, z_rack, z_u, z_device, z_port``; ``cable`` is
the cable's id in ``networks-cabling.csv`` and ``label`` the label printed there. Every
rack pair also gets its own CSV, at any size, in the folder of its first rack's row, with
an ``index.csv`` (as :mod:`.pullsheets`). Every field goes through the one CSV rule
(:func:`topogen.util.text.csv_field`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from topogen.exports.files import arch_dir, write_csv
from topogen.exports.network_view import NetworkView
from topogen.fabric import networks as nw
from topogen.layout.networks import NetworkLayout, floor_rows
from topogen.layout.floor import row_folder

COLUMNS = ("sheet", "network", "label", "cable", "role", "length_m", "a_rack", "a_u", "a_device", "a_port", "z_rack", "z_u", "z_device", "z_port")
EXTERNAL = "external"  # the sheet-name part of an end outside the plan


def sheet_rows(n: nw.Networks, compute, nlay: NetworkLayout) -> list[tuple]:
    """Every cable's row (:data:`COLUMNS`), in sheet order: sheet name, then length (none last), then label."""
    c = n.cables
    v = NetworkView(n, compute)
    (ad, _, ap), (zd, _, zp) = v.a, v.z
    floor = floor_rows(n, nlay, ad, ap, zd, zp)
    rows = []
    for i, (ar, au, zr, zu, length, label) in enumerate(floor):
        lo, hi = sorted((ar or EXTERNAL, zr or EXTERNAL), key=lambda r: (r == EXTERNAL, r))
        rows.append((f"{lo}_{hi}", nw.NETWORK_NAMES[int(c.net[i])], label, i + 1, nw.ROLE_NAMES[int(c.role[i])], length, ar, au, ad[i], ap[i], zr, zu, zd[i], zp[i]))
    rows.sort(key=lambda r: (r[0], r[5] == "", r[5] if r[5] != "" else 0, r[2]))
    return rows


def sheets(rows: list[tuple]) -> Iterator[tuple[str, list[tuple]]]:
    """``(sheet name, rows)`` of each rack pair, in order (``rows`` from :func:`sheet_rows`)."""
    start = 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or rows[i][0] != rows[start][0]:
            yield rows[start][0], rows[start:i]
            start = i


INDEX_COLUMNS = ("sheet", "file", "row", "a_rack", "z_rack", "cables", "length_m")


def export(ctx, dest: Path) -> list[Path]:
    """The other networks' pull sheets of every architecture with networks and a floor plan."""

    paths: list[Path] = []
    nets = getattr(ctx, "networks", None) or {}
    for arch in ctx.fabrics:
        n, nlay = nets.get(arch), (getattr(ctx, "network_layouts", None) or {}).get(arch)
        if n is None or nlay is None or not len(n.cables):
            continue
        rows = sheet_rows(n, ctx.fabrics[arch], nlay)
        d = arch_dir(dest, arch)
        p = d / "networks-pull-sheets.csv"
        write_csv(p, COLUMNS, rows)
        paths.append(p)
        racks = nlay.floor
        row_of = dict(zip(list(racks.name), np.asarray(racks.row).tolist()))
        nrows = int(np.asarray(racks.row).max()) + 1 if len(racks.name) else 1
        sub = arch_dir(dest, arch, "networks-pull-sheets")
        index = []
        written = []
        for name, part in sheets(rows):
            a, z = name.split("_", 1)
            folder = row_folder(row_of.get(a, 0), nrows)
            (sub / folder).mkdir(parents=True, exist_ok=True)
            q = sub / folder / f"{name}.csv"
            write_csv(q, COLUMNS, part)
            written.append(q)
            metres = round(sum(r[5] for r in part if r[5] != ""), 1)
            index.append((name, f"{folder}/{name}.csv", folder, a, z, len(part), int(metres) if float(metres).is_integer() else metres))
        q = sub / "index.csv"
        write_csv(q, INDEX_COLUMNS, index)
        paths.extend([q, *written])
    return paths
