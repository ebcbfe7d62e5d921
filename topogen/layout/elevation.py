"""Rack elevations: one diagram per rack type (compute, leaf, spine, core...), as Graphviz DOT, and every rack.

Each diagram draws the fullest rack of its kind (:func:`elevation`; any rack:
:func:`rack_elevation`), top U first: every device
(tray or switch) as a cell as tall as its U span, a tray named by its compute node(s)
(``hb00-n03``: the host names of NetBox and Slurm), empty units blank, and a
rack-scale domain's NVLink switch trays as one block. The diagrams exporter
draws them (with its title and provenance), writes and renders them (``<arch>/racks/<kind>.dot``, ``.svg``, ``.png``).

With the spec's other networks (``networks:``; their placement
:class:`topogen.layout.networks.NetworkLayout`), the racks hold their devices too: a
compute rack's OOB access switches above the trays, and the management racks (kind
``management``: the storage and in-band switches, and OOB switches placed there;
``management-servers``: the management servers and fabric managers), each
switch coloured by its network. Zero-U PDUs, mounted at the side, are listed under the rack.
"""

from __future__ import annotations

from html import escape

import numpy as np

from topogen.fabric import networks as nw
from topogen.fabric.model import Fabric
from topogen.fabric.naming import NodeNames
from topogen.layout import Layout

FILL = {"compute": "#dbe8f6", "leaf": "#fde2c8", "spine": "#dff0d8", "core": "#eadcf2", "storage": "#fde4c2", "inband": "#d3f0ef", "oob": "#e4e4e4", "server": "#e3f1d4"}


class NetworkRacks:
    """The other networks' devices by rack: what :func:`rack_cells` adds to the compute layout's.

    ``networks`` is the architecture's :class:`topogen.fabric.networks.Networks`, ``nlay`` its
    placement; ``compute_names`` the compute fabric's switch names (not drawn here: they are
    in the compute layout already).
    """

    def __init__(self, networks: nw.Networks, nlay) -> None:
        self.n, self.nlay = networks, nlay
        self.kinds = list(nlay.floor.kind)
        racked = {k: nlay.where[k][0] for k in (nw.SWITCH, nw.MGMT, nw.UFM)}
        for r in range(nlay.first_management, len(self.kinds)):
            if not (racked[nw.SWITCH] == r).any():
                self.kinds[r] = "management-servers"

    def counts(self, racks: int) -> np.ndarray:
        """Chassis of the other networks in each rack."""
        out = np.zeros(racks, np.int64)
        for k in (nw.SWITCH, nw.MGMT, nw.UFM):
            r = self.nlay.where[k][0]
            np.add.at(out, r[(r >= 0) & (r < racks)], 1)
        return out

    def cells(self, rack: int) -> list[tuple[int, int, str, str]]:
        """``(lowest U, height U, text, fill kind)`` of the networks' chassis in ``rack``."""
        out = []
        for k in (nw.SWITCH, nw.MGMT, nw.UFM):
            r, u, h = self.nlay.where[k]
            for i in np.flatnonzero(r == rack).tolist():
                name = self.n.device_name(k, i)
                if k == nw.SWITCH:
                    sw = self.n.switches[i]
                    net = nw.NETWORK_NAMES[sw.network]
                    out.append((int(u[i]), int(h[i]), f"{name} ({net} {sw.role}, {sw.radix} ports)", net))
                else:
                    what = "management server" if k == nw.MGMT else "fabric manager"
                    out.append((int(u[i]), int(h[i]), f"{name} ({what})", "server"))
        return out

    def pdus(self, rack: int) -> list[str]:
        """Names of the zero-U PDUs at the side of ``rack``."""
        return [self.n.device_name(nw.PDU, i) for i in np.flatnonzero(self.nlay.where[nw.PDU][0] == rack).tolist()]


def _rack_to_draw(lay: Layout, kind: str, nets: NetworkRacks | None = None) -> int:
    kinds = nets.kinds if nets is not None else list(lay.racks.kind)
    counts = np.bincount(lay.placement.rack, minlength=len(kinds))
    if nets is not None:
        counts = counts + nets.counts(len(kinds))
    ids = [i for i, k in enumerate(kinds) if k == kind]
    return max(ids, key=lambda i: (counts[i], -i))


def rack_cells(fabric: Fabric, lay: Layout, rack: int, nets: NetworkRacks | None = None) -> list[tuple[int, int, str, str]]:
    """``(lowest U, height U, text, kind)`` of every chassis in ``rack`` (the other networks' too, with ``nets``), bottom up."""
    n = fabric.gpus
    p, s = lay.placement, lay.spec
    devs = np.flatnonzero(p.rack == rack)
    cells: dict[tuple[int, int], list[int]] = {}
    for d in devs.tolist():
        cells.setdefault((int(p.u[d]), int(p.height_u[d])), []).append(d)
    nn = NodeNames.of(fabric.spec)
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
    if nets is not None:
        out += nets.cells(rack)
    if rack < len(lay.racks) and lay.racks.kind[rack] == "compute" and s.hb_switch_u:
        trays = s.gpus_per_rack // s.gpus_per_tray
        u = s.first_u + -(-trays // 2) * s.tray_u
        out.append((u, s.hb_switch_u, f"HB-domain switch trays ({s.hb_switch_u} U)", "hb"))
    return sorted(out)


def elevation(fabric: Fabric, lay: Layout, kind: str, nets: NetworkRacks | None = None) -> tuple[str, str]:
    """``(title, HTML-like table label)`` of the fullest rack of ``kind`` (the diagrams exporter draws it)."""
    return rack_elevation(fabric, lay, _rack_to_draw(lay, kind, nets), nets)


def rack_kinds(lay: Layout, nets: NetworkRacks | None = None) -> list[str]:
    """The kind of every rack (the management racks' too, with ``nets``)."""
    return list(nets.kinds) if nets is not None else list(lay.racks.kind)


def rack_elevation(fabric: Fabric, lay: Layout, rack: int, nets: NetworkRacks | None = None) -> tuple[str, str]:
    """``(title, HTML-like table label)`` of rack ``rack``: every U, top first (also valid HTML once the outer ``<>`` go)."""
    kind = rack_kinds(lay, nets)[rack]
    s = lay.spec
    cells = rack_cells(fabric, lay, rack, nets)
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
    racks = nets.nlay.floor if nets is not None else lay.racks
    name = racks.name[rack]
    chassis = sum(c[3] != "hb" for c in cells)
    title = f"{fabric.arch}: {kind} rack {name} (row {racks.row[rack] + 1}), {s.rack_u} U, {chassis} chassis"
    pdus = nets.pdus(rack) if nets is not None else []
    if pdus:
        title += f", {len(pdus)} PDU{'s' if len(pdus) > 1 else ''}"
        rows.append(f'<TR><TD COLSPAN="2" BGCOLOR="{FILL["oob"]}">{escape("zero-U, at the side: " + ", ".join(pdus))}</TD></TR>')
    return title, f'<<TABLE BORDER="1" CELLBORDER="1" CELLSPACING="0" CELLPADDING="2">{"".join(rows)}</TABLE>>'


def elevations(fabric: Fabric, lay: Layout, networks: nw.Networks | None = None, nlay=None) -> list[tuple[str, str, str]]:
    """``(kind, title, table label)`` for every rack kind of the layout, in order of first appearance.

    With the spec's other networks (``networks`` and their placement ``nlay``), their devices
    are drawn too and the management racks get elevations of their own.
    """
    nets = NetworkRacks(networks, nlay) if networks is not None and nlay is not None else None
    kinds: list[str] = []
    for k in nets.kinds if nets is not None else lay.racks.kind:
        if k not in kinds:
            kinds.append(k)
    return [(k, *elevation(fabric, lay, k, nets)) for k in kinds]
