"""``<arch>/networks-pull-sheets.csv`` (and ``<arch>/networks-pull-sheets/<rack>_<rack>.csv``): the other networks' cables to pull, by rack pair.

The storage, in-band and OOB cables (spec ``networks:``) organised as the compute
fabric's pull sheets (:mod:`.pullsheets`) are: every cable once, under the pair of
racks it joins (``A01_K01``; inside one rack ``A01_A01``), pairs in name order, then by
length and label. A cable whose other end stands outside the plan (the storage targets,
the NFS appliance, the data-centre core: where they stand is not known) is under
``<rack>_external`` and has no length. Columns: ``sheet, network, label, cable, role,
length_m, a_rack, a_u, a_device, a_port, z_rack, z_u, z_device, z_port``; ``cable`` is
the cable's id in ``networks-cabling.csv`` and ``label`` the label printed there. With at
most :data:`.pullsheets.MAX_SHEET_FILES` rack pairs each also gets its own CSV. Every
field goes through the one CSV rule (:func:`topogen.util.text.csv_field`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from topogen.exports.files import arch_dir, write_csv
from topogen.exports.network_view import NetworkView
from topogen.fabric import networks as nw
from topogen.layout.networks import NetworkLayout, floor_rows

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


def export(ctx, dest: Path, max_files: int) -> list[Path]:
    """The other networks' pull sheets of every architecture with networks and a floor plan; notes in ``ctx.messages``."""
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
        groups = list(sheets(rows))
        if len(groups) <= max_files:
            sub = arch_dir(dest, arch, "networks-pull-sheets")
            for name, part in groups:
                q = sub / f"{name}.csv"
                write_csv(q, COLUMNS, part)
                paths.append(q)
        else:
            ctx.messages.append(f"{arch}: {len(groups):,} rack pairs of the other networks: their pull sheets are in one file, {arch}/networks-pull-sheets.csv, grouped by its 'sheet' column (one CSV per pair only up to {max_files} pairs)")
    return paths
