"""``<arch>/netbox/{devices,interfaces,cables}.csv``: NetBox bulk-import files.

Import them in that order (Devices, Interfaces, Cables → Import, or the REST
API). NetBox looks the referenced objects up by name, so create first: the site
(named like the spec), the manufacturer, the device roles (``gpu-node``,
``leaf``, ``spine``, ``core``...) and the device types, the latter *without*
interface templates (interfaces.csv creates every port).

Modelling rule (shared with the Slurm files through
:class:`topogen.naming.NodeNames`): **one device per compute node** of
``gpus_per_node`` GPUs (spec field; default the whole HB domain), with one
interface per NIC port of its GPUs, ``gpu<rank>-nic<plane>`` (rank in the HB
domain). One node per domain is named like the domain (``hb03``: for K = 8 the
DGX/HGX server); smaller nodes are ``hb<domain>-n<node>`` (GB200 NVL72 with
``gpus_per_node: 4``: 18 compute trays ``hb003-n00 .. hb003-n17`` per rack;
GH200 with 1: one device per superchip). Every switch is a device
with all its ports ``p1 .. p<radix>``; ports without a cable are disabled.
Switch device types are the catalog SKU the BOM chose; GPU nodes get a generic
type named by NIC ports and speed (``gpu-node-8x400g``, ``gpu-node-4x800g``);
the manufacturer is ``generic`` (catalogs name none).

Columns
    devices: ``name, role, device_type, manufacturer, site, status, comments``
    interfaces: ``device, name, type, enabled, speed, description``
        (``type`` from the link speed, e.g. ``400gbase-x-osfp``, ``other`` for
        NIC ports whose cage topogen does not know; ``speed`` in kb/s)
    cables: ``side_a_device, side_a_type, side_a_name, side_b_device,
        side_b_type, side_b_name, type, status, length, length_unit, label,
        comments`` (``a`` = lower end, as in cabling.csv; ``label`` = the
        cabling.csv cable id; ``status`` = ``planned``; ``type`` and
        ``length`` per link tier from the BOM's media choice, empty where the
        catalog does not say)

NetBox CSV has no comment lines, so the provenance (tool version, spec hash,
architecture) goes in the ``comments`` column of devices and cables and at the
end of every interface ``description``. Text cells that come from user input
pass through :func:`topogen.exports.text.cell_safe`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from ..model import Fabric, link_tier_name
from ..naming import NodeNames
from ..model import CHUNK
from .files import arch_dir, write_csv
from .text import cell_safe

DEVICE_COLUMNS = ("name", "role", "device_type", "manufacturer", "site", "status", "comments")
INTERFACE_COLUMNS = ("device", "name", "type", "enabled", "speed", "description")
CABLE_COLUMNS = (
    "side_a_device",
    "side_a_type",
    "side_a_name",
    "side_b_device",
    "side_b_type",
    "side_b_name",
    "type",
    "status",
    "length",
    "length_unit",
    "label",
    "comments",
)

NODE_ROLE = "gpu-node"
STATUS = "planned"
TERMINATION = "dcim.interface"
# NetBox interface type slugs for switch ports, by link speed in Gb/s
PORT_TYPES = {100: "100gbase-x-qsfp28", 200: "200gbase-x-qsfp56", 400: "400gbase-x-osfp", 800: "800gbase-x-osfp"}
NIC_TYPE = "other"
# NetBox cable types of the catalog's copper cable kinds (optical ones follow the fiber)
COPPER_TYPES = {"dac": "dac-passive", "acc": "dac-active", "aec": "dac-active"}


@dataclass(frozen=True, slots=True)
class DeviceTypes:
    """NetBox manufacturer and device-type (model) names used for one fabric."""

    manufacturer: str
    node: str
    switch: str


def device_types(ctx, fabric: Fabric) -> DeviceTypes:
    """Model names for the devices of ``fabric``.

    Switches take the SKU the BOM chose from the catalog (``ctx.boms``); without
    a BOM, and for GPU nodes (catalogs list no servers), generic names that say
    what matters for a NetBox device type: ports and speed (``gpu-node-8x400g``,
    ``switch-64p-400g``). Catalogs have no manufacturer, hence ``generic``.
    """
    spec = fabric.spec
    bom = getattr(ctx, "boms", {}).get(fabric.arch)
    return DeviceTypes(
        manufacturer="generic",
        node=f"gpu-node-{spec.gpus_per_node * spec.planes}x{spec.link_speed}g",
        switch=bom.switch_sku if bom is not None else f"switch-{spec.radix}p-{spec.link_speed}g",
    )


def netbox_cable_type(media) -> str:
    """NetBox cable type slug of a BOM media choice; empty when the catalog does not say."""
    if media.cable is not None and media.cable.kind in COPPER_TYPES:
        return COPPER_TYPES[media.cable.kind]
    fiber = (media.transceiver.fiber if media.transceiver is not None else "").lower()
    om = re.search(r"\bom([1-5])\b", fiber)
    if om:
        return f"mmf-om{om.group(1)}"
    if "multi" in fiber or "mmf" in fiber:
        return "mmf"
    if "single" in fiber or "smf" in fiber:
        return "smf"
    return ""


def cable_media(ctx, fabric: Fabric) -> dict[int, tuple[str, str, str]]:
    """``{link tier: (type, length, length_unit)}`` from the BOM's media; empty cells without a BOM."""
    bom = getattr(ctx, "boms", {}).get(fabric.arch)
    if bom is None:
        return {}
    out = {}
    for tier, m in bom.media.items():
        length = m.cable.length_m if m.cable is not None else m.length_m
        out[tier] = (netbox_cable_type(m), f"{length:g}", "m")
    return out


def provenance(fabric: Fabric) -> str:
    return f"generated by {fabric.spec.provenance()}; arch {fabric.arch}"


def port_type(speed: int) -> str:
    return PORT_TYPES.get(int(speed), "other")


def _rails_text(rails: tuple[int, ...]) -> str:
    if not rails:
        return "all rails"
    if len(rails) == 1:
        return f"rail {rails[0]}"
    return f"rails {rails[0]}-{rails[-1]}"


def node_names(fabric: Fabric) -> NodeNames:
    return NodeNames(fabric.gpus, fabric.hb_domain, fabric.spec.gpus_per_node)


def _gpu_span(nn: NodeNames, node: int) -> tuple[str, str]:
    """Names of the first and last GPU of a node (for the device comment)."""
    d, i = divmod(node, nn.per_domain)
    domain = f"hb{d:0{nn.dw}d}"
    lo = i * nn.per_node
    return f"{domain}-gpu{lo:0{nn.rw}d}", f"{domain}-gpu{lo + nn.per_node - 1:0{nn.rw}d}"


def device_rows(fabric: Fabric, types: DeviceTypes) -> Iterator[tuple]:
    """One row per compute node (node order), then one per switch (device id order)."""
    spec = fabric.spec
    prov = provenance(fabric)
    nn = node_names(fabric)
    site, maker = cell_safe(spec.name), cell_safe(types.manufacturer)
    node_type, switch_type = cell_safe(types.node), cell_safe(types.switch)
    g, per = nn.per_node, nn.per_domain
    for i, name in enumerate(nn.names()):
        first, last = _gpu_span(nn, i)
        d, j = divmod(i, per)
        if per == 1:
            note = f"HB domain {d}: {g} GPUs {first}..{last}, {spec.planes} NIC port(s) each; {prov}"
        else:
            gpus = f"GPU {first}" if g == 1 else f"{g} GPUs {first}..{last}"
            note = f"HB domain {d} node {j} (of {per}): {gpus}, {spec.planes} NIC port(s) each; {prov}"
        yield (name, NODE_ROLE, node_type, maker, site, STATUS, note)
    for s in fabric.switches:
        note = f"tier {s.tier} {s.role}, plane {s.plane}, {_rails_text(s.rails)}; {prov}"
        yield (s.name, s.role, switch_type, maker, site, STATUS, note)


class _Ends:
    """Names of cable ends as NetBox sees them: (device, interface) for any link end."""

    def __init__(self, fabric: Fabric):
        self.fabric = fabric
        self.nn = node_names(fabric)
        self.node_names = np.array(self.nn.names(), dtype=object)
        self.sw_names = np.array([s.name for s in fabric.switches], dtype=object)
        k = fabric.hb_domain
        self.nic_names = np.array([[self.nn.interface(r, p) for p in range(fabric.spec.planes)] for r in range(k)], dtype=object)

    def devices(self, ids: np.ndarray) -> np.ndarray:
        n = self.fabric.gpus
        out = np.empty(len(ids), dtype=object)
        g = ids < n
        out[g] = self.node_names[ids[g] // self.nn.per_node]
        out[~g] = self.sw_names[ids[~g] - n]
        return out

    def ports(self, ids: np.ndarray, ports: np.ndarray) -> np.ndarray:
        n, k = self.fabric.gpus, self.fabric.hb_domain
        out = np.empty(len(ids), dtype=object)
        g = ids < n
        out[g] = self.nic_names[ids[g] % k, ports[g]]
        out[~g] = [f"p{p}" for p in ports[~g].tolist()]
        return out


def _port_peers(fabric: Fabric) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For every switch port (offset + port - 1): peer device, peer port, uplink flag.

    Returns ``(offsets, peer_dev, peer_port, is_up)``; ``peer_dev`` is -1 on a
    port without a cable.
    """
    n = fabric.gpus
    radix = np.fromiter((s.radix for s in fabric.switches), dtype=np.int64, count=len(fabric.switches))
    offsets = np.concatenate([[0], np.cumsum(radix)])
    total = int(offsets[-1])
    peer_dev = np.full(total, -1, np.int64)
    peer_port = np.zeros(total, np.int32)
    is_up = np.zeros(total, bool)
    L = fabric.links
    zi = offsets[L.z_dev - n] + L.z_port - 1
    peer_dev[zi], peer_port[zi] = L.a_dev, L.a_port
    up = L.a_dev >= n
    ai = offsets[L.a_dev[up] - n] + L.a_port[up] - 1
    peer_dev[ai], peer_port[ai], is_up[ai] = L.z_dev[up], L.z_port[up], True
    return offsets, peer_dev, peer_port, is_up


def interface_rows(fabric: Fabric) -> Iterator[tuple]:
    """NIC interfaces of every node (GPU-id order, so node by node; plane-minor), then every switch port.

    Row count: ``gpus * planes + sum(switch radix)``.
    """
    spec = fabric.spec
    prov = provenance(fabric)
    ends = _Ends(fabric)
    n, k, planes = fabric.gpus, fabric.hb_domain, spec.planes
    L = fabric.links
    gl = L.tier == 1
    nic_idx = L.a_dev[gl] * planes + L.a_port[gl]
    leaf = np.full(n * planes, -1, np.int64)
    leaf_port = np.zeros(n * planes, np.int32)
    leaf[nic_idx], leaf_port[nic_idx] = L.z_dev[gl], L.z_port[gl]
    speed_kbps = spec.link_speed * 1_000_000
    for start in range(0, n * planes, CHUNK):
        idx = np.arange(start, min(start + CHUNK, n * planes))
        gpu, plane = np.divmod(idx, planes)
        nodes = ends.node_names[gpu // ends.nn.per_node].tolist()
        nics = ends.nic_names[gpu % k, plane].tolist()
        peers = leaf[idx]
        cabled = peers >= 0
        peer_names = np.full(len(idx), "", dtype=object)
        peer_names[cabled] = ends.devices(peers[cabled])
        descs = [
            f"rail {r} plane {p} to {pn} p{pp}; {prov}" if c else f"rail {r} plane {p} unused; {prov}"
            for r, p, pn, pp, c in zip((gpu % k).tolist(), plane.tolist(), peer_names.tolist(), leaf_port[idx].tolist(), cabled.tolist())
        ]
        yield from ((d, i, NIC_TYPE, "true" if c else "false", speed_kbps, s) for d, i, c, s in zip(nodes, nics, cabled.tolist(), descs))
    offsets, peer_dev, peer_port, is_up = _port_peers(fabric)
    for i, s in enumerate(fabric.switches):
        lo, hi = int(offsets[i]), int(offsets[i + 1])
        pd, pp, up = peer_dev[lo:hi], peer_port[lo:hi], is_up[lo:hi]
        cabled = pd >= 0
        dev = np.full(hi - lo, "", dtype=object)
        prt = np.full(hi - lo, "", dtype=object)
        dev[cabled] = ends.devices(pd[cabled])
        prt[cabled] = ends.ports(pd[cabled], pp[cabled])
        ptype = port_type(spec.link_speed)
        for port, c, u, dn, pn in zip(range(1, hi - lo + 1), cabled.tolist(), up.tolist(), dev.tolist(), prt.tolist()):
            if c:
                desc = f"{'uplink' if u else 'downlink'} to {dn} {pn}; {prov}"
            else:
                desc = f"unused; {prov}"
            yield (s.name, f"p{port}", ptype, "true" if c else "false", speed_kbps, desc)


def cable_rows(fabric: Fabric, media: dict[int, tuple[str, str, str]] | None = None) -> Iterator[tuple]:
    """One row per cable, in cabling.csv order (``label`` = its cable id).

    ``media`` gives each link tier's cable type, length and unit (see
    :func:`cable_media`); tiers without it leave those cells empty.
    """
    media = media or {}
    prov = provenance(fabric)
    ends = _Ends(fabric)
    L = fabric.links
    notes = {t: f"{link_tier_name(t)} plane {{}}; {prov}" for t in range(1, fabric.tiers + 1)}
    for start in range(0, len(L), CHUNK):
        sl = slice(start, min(start + CHUNK, len(L)))
        a, z = L.a_dev[sl], L.z_dev[sl]
        ad, ap = ends.devices(a).tolist(), ends.ports(a, L.a_port[sl]).tolist()
        zd, zp = ends.devices(z).tolist(), ends.ports(z, L.z_port[sl]).tolist()
        for cid, a_d, a_p, z_d, z_p, t, pl in zip(range(start + 1, sl.stop + 1), ad, ap, zd, zp, L.tier[sl].tolist(), L.plane[sl].tolist()):
            ctype, length, unit = media.get(t, ("", "", ""))
            yield (a_d, TERMINATION, a_p, z_d, TERMINATION, z_p, ctype, STATUS, length, unit, str(cid), notes[t].format(pl))


def export(ctx, dest: Path) -> list[Path]:
    paths = []
    for arch, fabric in ctx.fabrics.items():
        d = arch_dir(dest, arch, "netbox")
        types = device_types(ctx, fabric)
        for fname, cols, rows in (
            ("devices.csv", DEVICE_COLUMNS, device_rows(fabric, types)),
            ("interfaces.csv", INTERFACE_COLUMNS, interface_rows(fabric)),
            ("cables.csv", CABLE_COLUMNS, cable_rows(fabric, cable_media(ctx, fabric))),
        ):
            p = d / fname
            write_csv(p, cols, rows)
            paths.append(p)
    return paths
