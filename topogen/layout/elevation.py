"""Rack elevation diagrams: one per rack type (compute, leaf, spine, core...), as Graphviz DOT.

Each diagram draws the fullest rack of its kind, top U first: every device
(tray or switch) as a cell as tall as its U span, a tray named by its compute node(s)
(``hb00-n03``: the host names of NetBox and Slurm), empty units blank, and a
rack-scale domain's NVLink switch trays as one block. The diagrams exporter
draws them (with its title and provenance), writes and renders them (``<arch>/racks/<kind>.dot``, ``.svg``, ``.png``).
"""

from __future__ import annotations

from html import escape

import numpy as np

from topogen.fabric.model import Fabric
from topogen.fabric.naming import NodeNames
from topogen.layout import Layout

FILL = {"compute": "#dbe8f6", "leaf": "#fde2c8", "spine": "#dff0d8", "core": "#eadcf2"}


def _rack_to_draw(lay: Layout, kind: str) -> int:
    counts = np.bincount(lay.placement.rack, minlength=len(lay.racks))
    ids = [i for i, k in enumerate(lay.racks.kind) if k == kind]
    return max(ids, key=lambda i: (counts[i], -i))


def rack_cells(fabric: Fabric, lay: Layout, rack: int) -> list[tuple[int, int, str, str]]:
    """``(lowest U, height U, text, kind)`` of every chassis in ``rack``, bottom up."""
    n = fabric.gpus
    p, s = lay.placement, lay.spec
    devs = np.flatnonzero(p.rack == rack)
    cells: dict[tuple[int, int], list[int]] = {}
    for d in devs.tolist():
        cells.setdefault((int(p.u[d]), int(p.height_u[d])), []).append(d)
    nn = NodeNames(n, fabric.hb_domain, fabric.spec.gpus_per_node)
    out = []
    for (u, h), ds in sorted(cells.items()):
        if ds[0] < n:
            nodes = sorted({d // nn.per_node for d in ds})  # a tray is labelled by its hosts, as NetBox and Slurm name them
            first, last = nn.name(nodes[0]), nn.name(nodes[-1])
            text = first if len(nodes) == 1 else f"{first} .. {last.rsplit('-', 1)[-1] if '-' in last else last}"
            out.append((u, h, f"tray: {text} ({len(ds)} GPUs)", "compute"))
        else:
            sw = fabric.switches[ds[0] - n]
            out.append((u, h, f"{sw.name} ({sw.radix} ports)", sw.role))
    if lay.racks.kind[rack] == "compute" and s.hb_switch_u:
        trays = s.gpus_per_rack // s.gpus_per_tray
        u = s.first_u + -(-trays // 2) * s.tray_u
        out.append((u, s.hb_switch_u, f"HB-domain switch trays ({s.hb_switch_u} U)", "hb"))
    return sorted(out)


def elevation(fabric: Fabric, lay: Layout, kind: str) -> tuple[str, str]:
    """``(title, HTML-like table label)`` of the fullest rack of ``kind`` (the diagrams exporter draws it)."""
    rack = _rack_to_draw(lay, kind)
    s = lay.spec
    cells = rack_cells(fabric, lay, rack)
    start = {u: (h, text, k) for u, h, text, k in cells}
    covered = {u + i for u, h, _, _ in cells for i in range(h)}
    rows = []
    u = s.rack_u
    while u >= 1:
        top_of = next(((cu, h, t, k) for cu, (h, t, k) in start.items() if cu + h - 1 == u), None)
        if top_of is not None:
            cu, h, text, k = top_of
            rows.append(f'<TR><TD ALIGN="RIGHT"><FONT POINT-SIZE="8">U{u}</FONT></TD><TD ROWSPAN="{h}" WIDTH="260" BGCOLOR="{FILL.get(k, "#eeeeee")}">{escape(text)}</TD></TR>')
            for v in range(u - 1, cu - 1, -1):
                rows.append(f'<TR><TD ALIGN="RIGHT"><FONT POINT-SIZE="8">U{v}</FONT></TD></TR>')
            u = cu - 1
            continue
        if u not in covered:
            rows.append(f'<TR><TD ALIGN="RIGHT"><FONT POINT-SIZE="8">U{u}</FONT></TD><TD WIDTH="260"> </TD></TR>')
        u -= 1
    name = lay.racks.name[rack]
    chassis = sum(c[3] != "hb" for c in cells)
    title = f"{fabric.arch}: {kind} rack {name} (row {lay.racks.row[rack] + 1}), {s.rack_u} U, {chassis} chassis"
    return title, f'<<TABLE BORDER="1" CELLBORDER="1" CELLSPACING="0" CELLPADDING="2">{"".join(rows)}</TABLE>>'


def elevations(fabric: Fabric, lay: Layout) -> list[tuple[str, str, str]]:
    """``(kind, title, table label)`` for every rack kind of the layout, in order of first appearance."""
    kinds: list[str] = []
    for k in lay.racks.kind:
        if k not in kinds:
            kinds.append(k)
    return [(k, *elevation(fabric, lay, k)) for k in kinds]
