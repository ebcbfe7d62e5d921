"""NetBox bulk-import files: prerequisites once per build, then devices, interfaces and cables per architecture.

Several clusters and both architectures live side by side in one NetBox:

* **A site per cluster and architecture**, named ``<spec name>-<arch>``
  (``demo-rail-only``); cables name it in ``side_a_site``/``side_b_site``.
* **Device names are unique across sites**: ``<site>.<host>``
  (``demo-rail-only.hb03``, ``demo-rail-only.rail3-leaf-2``), because
  NetBox's interface import looks devices up by name alone (it has no site
  column). The part after the first ``.`` is the host name used in Slurm.
* **Cable labels are unique**: ``<site>/<cable id>`` (the cabling.csv id).

Files (import in this order; Import under each object list, or the REST API):

``netbox/`` (once per build): ``sites.csv`` (``name, slug, status,
description``; the description carries the provenance, once), and
``shared/<n>-<kind>-<slug>.csv``, one object per file (:func:`shared_rows`):
manufacturers (``name, slug``), device roles and rack roles (``name, slug,
color, description``), device types (``manufacturer, model, slug,
part_number, u_height, description``; **no interface templates**:
interfaces.csv creates every port, and templates would make them twice).
A second cluster's shared file that NetBox refuses as existing is skipped.

``<arch>/netbox/racks.csv`` (``site, name, role, status, width, u_height,
description``): the layout's racks.

``<arch>/netbox/``: ``devices.csv`` (``name, role, device_type,
manufacturer, site, rack, position, face, status, comments``), ``interfaces.csv`` (``device, name,
type, enabled, speed, description``: ``speed`` in kb/s, ``type`` from the
catalog's ``interface_type`` of the switch, also at the NIC end of a
GPU–leaf link, else from the NIC's, else by speed (``400gbase-x-osfp``),
``other`` for a NIC whose cage the catalog does not give), ``cables.csv``
(``side_a_site, side_a_device, side_a_type, side_a_name, side_b_site,
side_b_device, side_b_type, side_b_name, type, status, length, length_unit,
label, comments``; ``a`` = lower end as in cabling.csv; ``type`` and
``length`` from the BOM's media, empty where the catalog does not say; the
inter-switch links of a leaf pair (``design: leaf-pair``) follow the links,
``a`` = leaf-a, comment ``leaf-leaf plane <p>``, and their switch ports'
descriptions read ``leaf-leaf to <other leaf> p<n>``).
A file that would exceed :data:`MAX_PART_BYTES` (NetBox refuses pasted text
over 2.5 MiB, ``DATA_UPLOAD_MAX_MEMORY_SIZE``) or :data:`MAX_PART_ROWS` (NetBox
imports ~19 rows/s and stops a job after 300 s) is split into
``interfaces-001.csv``, ``interfaces-002.csv``... each with the header.

Modelling rule (shared with the Slurm files through
:class:`topogen.fabric.naming.NodeNames`): **one device per compute node** of
``gpus_per_node`` GPUs, with one interface per NIC port of its GPUs,
``gpu<rank>-nic<plane>`` (rank in the HB domain); every switch is a device
with all its ports ``p1 .. p<radix>`` (with faster uplinks its down ports, then one
per uplink at the uplink speed: :meth:`~topogen.fabric.model.Fabric.switch_ports`), ports without a cable disabled. Switch
device types are the catalog SKU the BOM chose, made by the catalog's
``manufacturer`` (``generic`` when it names none); GPU nodes get a generic
type named by NIC ports, speed and height (``gpu-node-8x400g-8u``). Every status is
``planned``. Every field is written by the CSV rule
(:func:`topogen.util.text.csv_field`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from topogen.exports.files import arch_dir, write_csv, write_csv_parts
from topogen.fabric.model import CHUNK, Fabric
from topogen.fabric.naming import ISL_LINK, GpuNames, NodeNames
from topogen.fabric.view import column_rows, csv_header, csv_records, text_table, view
from topogen.layout import resolve
from topogen.spec.systems import node_u
from topogen.spec.counts import link_tier_name, tier_role
from topogen.util.errors import InputError, Problem
from topogen.util.text import csv_line

SITE_COLUMNS = ("name", "slug", "status", "description")
MANUFACTURER_COLUMNS = ("name", "slug")
ROLE_COLUMNS = ("name", "slug", "color", "description")
RACK_ROLE_COLUMNS = ("name", "slug", "color", "description")
DEVICE_TYPE_COLUMNS = ("manufacturer", "model", "slug", "part_number", "u_height", "description")
RACK_COLUMNS = ("site", "name", "role", "status", "width", "u_height", "description")
DEVICE_COLUMNS = ("name", "role", "device_type", "manufacturer", "site", "rack", "position", "face", "status", "comments")
INTERFACE_COLUMNS = ("device", "name", "type", "enabled", "speed", "description")
CABLE_COLUMNS = (
    "side_a_site",
    "side_a_device",
    "side_a_type",
    "side_a_name",
    "side_b_site",
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
SITE_STATUS = "planned"
GENERIC = "generic"
TERMINATION = "dcim.interface"
MAX_NAME = 64  # NetBox device names hold at most 64 characters
MAX_PART_BYTES = 2_500_000  # below NetBox's 2.5 MiB (2,621,440 B) limit on pasted import text
JOB_BUDGET_S = 150  # half NetBox's default 300 s background-job timeout (RQ_DEFAULT_TIMEOUT): room for a loaded machine
# seconds NetBox takes to save one row of each file on a 2-core machine: cables 0.09 s (NetBox
# 4.6.8, idle core: each cable traces its paths); the others are estimates below that, to be
# re-measured with `bench/netbox_push.py --files BUILD_DIR` against NetBox 4.7
ROW_S = {"sites": 0.05, "racks": 0.05, "devices": 0.05, "interfaces": 0.02, "cables": 0.09, "vrfs": 0.02, "interfaces-virtual": 0.02, "prefixes": 0.02, "ip-addresses": 0.03, "rirs": 0.02, "asns": 0.02}
MAX_PART_ROWS = 4_000  # at most, whatever the object


def part_rows(stem: str) -> int:
    """Rows of a part of ``stem`` (``cables``, ``networks-cables``, ``ip-addresses-001``...) that NetBox saves within :data:`JOB_BUDGET_S`."""
    kind = re.sub(r"-\d{3}$", "", stem).removeprefix("networks-")
    return min(MAX_PART_ROWS, int(JOB_BUDGET_S / ROW_S[kind]) // 100 * 100)


def write_parts(d: Path, stem: str, columns: tuple[str, ...], rows) -> list[Path]:
    """``<stem>.csv`` or its parts (:func:`part_rows` rows, below :data:`MAX_PART_BYTES`)."""
    return write_csv_parts(d, stem, csv_header(columns), records(rows), MAX_PART_BYTES, part_rows(stem))


def records(rows) -> Iterator[list[str]]:
    """Rows as chunks of CSV records (lines without their end), for :func:`write_csv_parts`."""
    chunk: list[str] = []
    for r in rows:
        chunk.append(csv_line(r).rstrip("\n"))
        if len(chunk) == 4096:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
RACK_STATUS = "planned"
RACK_WIDTH = 19  # inches
FACE = "front"
RACK_ROLE_COLORS = {"compute": "4caf50", "leaf": "2196f3"}  # upper tiers: the device role's colour
# NetBox interface type slugs for switch ports, by link speed in Gb/s
PORT_TYPES = {100: "100gbase-x-qsfp28", 200: "200gbase-x-qsfp56", 400: "400gbase-x-osfp", 800: "800gbase-x-osfp"}
NIC_TYPE = "other"
# NetBox cable types of the catalog's copper cable kinds (optical ones follow the fiber)
COPPER_TYPES = {"dac": "dac-passive", "acc": "dac-active", "aec": "dac-active", "cat6": "cat6"}
# device role colours (NetBox wants 6 hex digits), by tier; GPU nodes green
ROLE_COLORS = ("4caf50", "2196f3", "9c27b0", "ff9800", "f44336", "795548", "607d8b")


def site_name(spec, arch: str) -> str:
    """The NetBox site of one architecture of one cluster: ``<spec name>-<arch>``."""
    return f"{spec.name}-{arch}"


def slug(name: str) -> str:
    """A NetBox slug (letters, digits, ``-``, ``_``): other characters become ``-``, lower-case.

    No ``-`` at either end: a slug never starts like a spreadsheet formula (``-2-3``).
    """
    return re.sub(r"[^a-z0-9_-]", "-", name.lower()).strip("-") or "unnamed"


@dataclass(frozen=True, slots=True)
class DeviceTypes:
    """NetBox manufacturers and device-type (model) names used for one fabric, and its port types."""

    manufacturer: str  # of the switches
    node: str
    switch: str
    node_manufacturer: str = GENERIC
    switch_port_type: str = ""  # "" = by speed
    nic_type: str = NIC_TYPE
    tiers: tuple[tuple[str, str, str], ...] = ()  # (model, manufacturer, description) of each switch tier, leaf first

    def switch_at(self, tier: int) -> tuple[str, str, str]:
        """Model, manufacturer and description of the switches of ``tier`` (a 288-port spine is its chassis)."""
        if 1 <= tier <= len(self.tiers):
            return self.tiers[tier - 1]
        return self.switch, self.manufacturer, f"switch ({self.switch})"


def device_types(ctx, fabric: Fabric) -> DeviceTypes:
    """Model names, manufacturers and interface types for the devices of ``fabric`` (see :func:`arch_types`)."""
    bom = getattr(ctx, "boms", {}).get(fabric.arch)
    if bom is None:
        return arch_types(ctx, fabric.spec, None)
    return arch_types(ctx, fabric.spec, bom.switch_sku, bom.switch_skus)


def arch_types(ctx, spec, switch_sku: str | None, switch_skus: list[str] | None = None) -> DeviceTypes:
    """Model names, manufacturers and interface types of one architecture.

    Switches take the SKU the BOM chose from the catalog and its
    ``manufacturer``; without a BOM, and for GPU nodes (catalogs list no
    servers), generic names that say what matters for a NetBox device type:
    ports and speed (``gpu-node-8x400g``, ``switch-64p-400g``). Interface
    types come from the catalog: the switch's ``interface_type`` (both ends of
    a link speak it), else the NIC's, else by speed for switch ports and
    ``other`` for NICs.
    """
    hw = getattr(ctx, "catalog", None) if switch_sku is not None else None
    sku = next((s for s in hw.switches if s.sku == switch_sku), None) if hw is not None else None
    nic = hw.nic_for(spec.link_speed) if hw is not None else None
    switch_type = sku.interface_type if sku is not None else ""
    nic_type = switch_type or (nic.interface_type if nic is not None else "") or NIC_TYPE
    tiers = []
    for model in switch_skus or ():
        x = next((q for q in hw.switches if q.sku == model), None) if hw is not None else None
        tiers.append((model, (x.manufacturer if x is not None else "") or GENERIC, x.description if x is not None and x.description else f"switch ({model})"))
    return DeviceTypes(
        manufacturer=(sku.manufacturer if sku is not None else "") or GENERIC,
        node=node_model(spec, _heights(spec)[0]),
        switch=switch_sku if switch_sku is not None else f"switch-{spec.radix}p-{spec.link_speed}g",
        switch_port_type=switch_type or (nic.interface_type if nic is not None else ""),
        nic_type=nic_type,
        tiers=tuple(tiers),
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


def isl_cable_types(ctx, fabric: Fabric) -> np.ndarray | None:
    """NetBox cable type of each ISL of a leaf pair, from the BOM's media of every cable; None when the BOM does not cover them."""
    lm = getattr(getattr(ctx, "boms", {}).get(fabric.arch), "link_media", None)
    if lm is None or not len(fabric.isls) or len(lm.index) != fabric.cables:
        return None
    return text_table(netbox_cable_type(m) for m in lm.media)[lm.index[len(fabric.links) :]]


def _lengths(ctx, arch: str):
    """The layout's sold length of every cable (None without a layout)."""
    lay = (getattr(ctx, "layouts", None) or {}).get(arch)
    return None if lay is None else lay.length_m


def port_type(speed: int, catalog_type: str = "") -> str:
    return catalog_type or PORT_TYPES.get(int(speed), "other")


def _rails_text(rails: tuple[int, ...]) -> str:
    if not rails:
        return "all rails"
    if len(rails) == 1:
        return f"rail {rails[0]}"
    return f"rails {rails[0]}-{rails[-1]}"


def node_names(fabric: Fabric) -> NodeNames:
    return NodeNames.of(fabric.spec)


def _gpu_span(nn: NodeNames, node: int) -> tuple[str, str]:
    """Names of the first and last GPU of a node (for the device comment)."""
    gn = GpuNames(nn.domains * nn.hb, nn.hb, nn.naming, nn.per_node, nn.su_domains)
    lo = node * nn.per_node
    return gn.name(lo), gn.name(lo + nn.per_node - 1)


def node_height_u(lay, gpus_per_node: int) -> int:
    """U of one compute node in a layout (``lay`` resolved): whole trays; 0 when nodes share a tray.

    NetBox gives one rack position to one device: nodes smaller than a tray
    (several per tray) are 0 U devices in their rack, without a position.
    """
    tray = lay.gpus_per_tray
    return gpus_per_node // tray * lay.tray_u if gpus_per_node % tray == 0 else 0


def _positions(fabric: Fabric, layout) -> tuple[list[str], list[str]]:
    """Rack name and NetBox position of every device of :func:`device_rows` (nodes, then switches); "" where none."""
    nn = node_names(fabric)
    p = layout.placement
    names = layout.racks.name
    first = np.arange(nn.nodes) * nn.per_node
    last = first + nn.per_node - 1
    hu = node_height_u(layout.spec, nn.per_node)
    contiguous = (p.u[last].astype(np.int64) + layout.spec.tray_u - p.u[first] == hu) & (p.rack[first] == p.rack[last])
    node_pos = np.where(contiguous & (hu > 0), p.u[first], 0)
    sw = np.arange(fabric.gpus, fabric.gpus + len(fabric.switches))
    racks = [names[i] for i in np.concatenate([p.rack[first], p.rack[sw]]).tolist()]
    pos = [str(u) if u else "" for u in np.concatenate([node_pos, p.u[sw]]).tolist()]
    return racks, pos


def device_rows(fabric: Fabric, types: DeviceTypes, layout=None) -> Iterator[tuple]:
    """One row per compute node (node order), then one per switch (device id order).

    With a ``layout`` (:class:`topogen.layout.Layout`) each device names its rack,
    its lowest U (``position``) and face ``front``; a node without a position
    (nodes sharing a tray, or split around the HB switch trays) keeps its rack only.
    """
    spec = fabric.spec
    nn = node_names(fabric)
    racks, pos = _positions(fabric, layout) if layout is not None else (None, None)

    def where(i: int) -> tuple[str, str, str]:
        if racks is None:
            return "", "", ""
        return racks[i], pos[i], FACE if pos[i] else ""

    site = site_name(spec, fabric.arch)
    pre = site + "."
    node_maker, node_type = types.node_manufacturer, types.node
    by_tier = {t: tuple(types.switch_at(t)[:2]) for t in range(1, fabric.tiers + 1)}
    g, per = nn.per_node, nn.per_domain
    nics = "one NIC port each" if spec.nic_ports == 1 else f"{spec.nic_ports} NIC ports each" + (" (dual-homed pairs)" if spec.homes > 1 else "")
    for i, name in enumerate(nn.names()):
        first, last = _gpu_span(nn, i)
        d, j = divmod(i, per)
        if per == 1:
            note = f"host {name}: HB domain {d}, {g} GPUs {first}..{last}, {nics}"
        else:
            gpus = f"GPU {first}" if g == 1 else f"{g} GPUs {first}..{last}"
            note = f"host {name}: HB domain {d} node {j} (of {per}), {gpus}, {nics}"
        yield (pre + name, NODE_ROLE, node_type, node_maker, site, *where(i), STATUS, note)
    su = bool(spec.scalable_unit)
    nodes = nn.nodes
    for j, s in enumerate(fabric.switches):
        note = f"switch {s.name}: tier {s.tier} {s.role}, plane {s.plane}, {_rails_text(s.rails)}"
        if su and s.tier == 1:
            note += f", scalable unit {s.block}"
        model, maker = by_tier[s.tier]
        yield (pre + s.name, s.role, model, maker, site, *where(nodes + j), STATUS, note)


class _Ends:
    """Names of cable ends by device id: NetBox device names (with the site prefix) and plain host/switch names."""

    def __init__(self, fabric: Fabric):
        self.fabric = fabric
        self.view = view(fabric)
        self.nn = node_names(fabric)
        pre = site_name(fabric.spec, fabric.arch) + "."
        hosts = self.nn.names()
        switches = [s.name for s in fabric.switches]
        node_of_gpu = np.arange(fabric.gpus) // self.nn.per_node
        self.node_names = text_table([pre + x for x in hosts])
        self.sw_names = text_table([pre + x for x in switches])
        self.netbox = np.concatenate([self.node_names[node_of_gpu], self.sw_names])  # by device id
        self.hosts = np.concatenate([text_table(hosts)[node_of_gpu], text_table(switches)])  # by device id, no site


def _port_peers(fabric: Fabric) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For every switch port (offset + port - 1): peer device, peer port, uplink flag.

    Returns ``(offsets, peer_dev, peer_port, kind)``; ``peer_dev`` is -1 on a
    port without a cable; ``kind`` 0 a downlink (or idle), 1 an uplink, 2 an
    inter-switch link of a leaf pair (each end's peer the other leaf).
    """
    n = fabric.gpus
    offsets = np.concatenate([[0], np.cumsum(fabric.switch_ports())])
    total = int(offsets[-1])
    peer_dev = np.full(total, -1, np.int64)
    peer_port = np.zeros(total, np.int32)
    kind = np.zeros(total, np.int8)
    L = fabric.links
    zi = offsets[L.z_dev - n] + L.z_port - 1
    peer_dev[zi], peer_port[zi] = L.a_dev, L.a_port
    up = L.a_dev >= n
    ai = offsets[L.a_dev[up] - n] + L.a_port[up] - 1
    peer_dev[ai], peer_port[ai], kind[ai] = L.z_dev[up], L.z_port[up], 1
    I = fabric.isls
    for this, this_port, other, other_port in ((I.a_dev, I.a_port, I.z_dev, I.z_port), (I.z_dev, I.z_port, I.a_dev, I.a_port)):
        i = offsets[this - n] + this_port - 1
        peer_dev[i], peer_port[i], kind[i] = other, other_port, 2
    return offsets, peer_dev, peer_port, kind


_ENABLED = text_table(["false", "true"])


def interface_columns(fabric: Fabric, types: DeviceTypes | None = None) -> Iterator[list]:
    """The rows of :func:`interface_rows`, a chunk at a time, column by column.

    A column is a list (or object array) of strings, or one value for every
    row of the chunk.
    """
    spec = fabric.spec
    types = types or DeviceTypes(GENERIC, "", "")
    ends = _Ends(fabric)
    v = ends.view
    n, k, planes = fabric.gpus, fabric.hb_domain, spec.nic_ports  # NIC ports: one per plane, or a dual-homed pair per plane
    L = fabric.links
    gl = L.tier == 1
    nic_idx = L.a_dev[gl] * planes + L.a_port[gl]
    leaf = np.full(n * planes, -1, np.int64)
    leaf_port = np.zeros(n * planes, np.int32)
    leaf[nic_idx], leaf_port[nic_idx] = L.z_dev[gl], L.z_port[gl]
    speed_kbps = spec.link_speed * 1_000_000
    nic_type = types.nic_type
    rail_plane = text_table(f"rail {r} plane {p // spec.homes} " for r in range(k) for p in range(planes))  # by GPU rank * NIC ports + port
    for sl in v.chunks(n * planes):
        idx = np.arange(sl.start, sl.stop)
        gpu, plane = np.divmod(idx, planes)
        peers = leaf[sl]
        cabled = peers >= 0
        peer_names = ends.hosts[np.where(cabled, peers, 0)].tolist()
        peer_ports = v.switch_ports(np.maximum(leaf[sl] - fabric.gpus, 0), leaf_port[sl]).tolist()
        descs = [f"{rp}to {pn} {pp}" if c else f"{rp}unused" for rp, pn, pp, c in zip(rail_plane[(gpu % k) * planes + plane].tolist(), peer_names, peer_ports, cabled.tolist())]
        yield [ends.netbox[gpu], v.interfaces(gpu, plane), nic_type, _ENABLED[cabled.view(np.int8)], speed_kbps, descs]
    offsets, peer_dev, peer_port, kind = _port_peers(fabric)
    ptype = port_type(spec.link_speed, types.switch_port_type)
    switch_of = np.repeat(np.arange(len(fabric.switches)), np.diff(offsets))
    heads = text_table(["downlink to ", "uplink to ", f"{ISL_LINK} to "])
    kept = np.zeros(int(offsets[-1]), bool)  # ports kept free for management / UFM (reserved_leaf_ports)
    for i, a, b in fabric.reserved:
        kept[offsets[i] + a - 1 : offsets[i] + b] = True
    free = text_table(["unused", "reserved for management / UFM (reserved_leaf_ports)"])
    mixed = bool(getattr(spec, "tier_speed", ()))  # ports down at the tier's speed, up at the next tier's
    if mixed:
        tiers = np.fromiter((s.tier for s in fabric.switches), np.int64, len(fabric.switches))
        down = np.fromiter((s.down_ports for s in fabric.switches), np.int64, len(fabric.switches))
        gbps = np.asarray([spec.speed_at(t) for t in range(int(tiers.max(initial=0)) + 2)], np.int64)
        kinds = {g: port_type(g, types.switch_port_type) for g in gbps.tolist()}
    for sl in v.chunks(int(offsets[-1])):
        sw = switch_of[sl]
        pd, pp = peer_dev[sl], peer_port[sl]
        cabled = pd >= 0
        pd0 = np.where(cabled, pd, 0)
        idle = free[kept[sl].view(np.int8)].tolist()
        descs = [f"{h}{dn} {pn}" if c else f for h, dn, pn, c, f in zip(heads[kind[sl]].tolist(), ends.hosts[pd0].tolist(), v.interfaces(pd0, pp).tolist(), cabled.tolist(), idle)]
        number = np.arange(sl.start, sl.stop) - offsets[sw] + 1
        ports = v.switch_ports(sw, number)
        if mixed:
            g = gbps[tiers[sw] + (number > down[sw])].tolist()
            yield [ends.sw_names[sw], ports, [kinds[x] for x in g], _ENABLED[cabled.view(np.int8)], [x * 1_000_000 for x in g], descs]
        else:
            yield [ends.sw_names[sw], ports, ptype, _ENABLED[cabled.view(np.int8)], speed_kbps, descs]


def interface_rows(fabric: Fabric, types: DeviceTypes | None = None) -> Iterator[tuple]:
    """NIC interfaces of every node (GPU-id order, so node by node; plane-minor), then every switch port.

    Row count: ``gpus * planes + sum(switch ports)`` (``Fabric.switch_ports``: the radix at one speed). Descriptions name the
    peer by its host/switch name (the NetBox name without the site prefix).
    """
    for cols in interface_columns(fabric, types):
        yield from column_rows(cols)


def cable_columns(fabric: Fabric, media: dict[int, tuple[str, str, str]] | None = None, lengths=None, breakouts=None, isl_types: np.ndarray | None = None) -> Iterator[list]:
    """The rows of :func:`cable_rows`, a chunk at a time, column by column (see :func:`interface_columns`)."""
    site = site_name(fabric.spec, fabric.arch)
    ends = _Ends(fabric)
    yield from _link_columns(fabric, ends, site, media or {}, lengths, breakouts)
    yield from _isl_columns(fabric, ends, site, lengths, isl_types)  # after the links; none without ISLs


def _isl_columns(fabric: Fabric, ends: _Ends, site: str, lengths, isl_types: np.ndarray | None = None) -> Iterator[list]:
    """The cable rows of a leaf pair's inter-switch links, after the links (ids continuing, as cabling.csv).

    ``a`` is leaf-a, ``b`` leaf-b; the comment is ``leaf-leaf plane <p>``. The
    length comes from the layout when its lengths cover the ISLs (one per cable),
    the type from ``isl_types`` (:func:`isl_cable_types`: the BOM's media of each
    ISL); else they are left empty: tier 1's media is the GPU–leaf cable's, not
    that of a link between two switches.
    """
    I, v, first = fabric.isls, ends.view, len(fabric.links)
    notes = text_table(f"{ISL_LINK} plane {p}" for p in range(fabric.spec.planes))
    known = lengths is not None and len(lengths) == first + len(I)
    for sl in v.chunks(len(I)):
        yield [
            site,
            ends.netbox[I.a_dev[sl]],
            TERMINATION,
            v.interfaces(I.a_dev[sl], I.a_port[sl]),
            site,
            ends.netbox[I.z_dev[sl]],
            TERMINATION,
            v.interfaces(I.z_dev[sl], I.z_port[sl]),
            isl_types[sl] if isl_types is not None else "",
            STATUS,
            length_texts(lengths[first + sl.start : first + sl.stop]) if known else "",
            "m" if known else "",
            [f"{site}/{c}" for c in range(first + sl.start + 1, first + sl.stop + 1)],
            notes[I.plane[sl]],
        ]


def _link_columns(fabric: Fabric, ends: _Ends, site: str, media, lengths, breakouts) -> Iterator[list]:
    """The cable rows of the links (tier by tier as in cabling.csv)."""
    v = ends.view
    L = fabric.links
    top = int(L.tier.max()) + 1 if len(L) else 1
    planes = int(L.plane.max()) + 1 if len(L) else 1
    kinds = [media.get(t, ("", "", "")) for t in range(top)]
    ctype, length, unit = (text_table(x) for x in zip(*kinds))
    notes = text_table(f"{link_tier_name(t)} plane {p}" for t in range(top) for p in range(planes))
    leg_notes = None  # each breakout cable's note once; group -1 (no breakout) is the last, ""
    if breakouts is not None and len(breakouts):
        leg_notes = text_table([f"; leg of breakout cable {b}" for b in breakouts.names(fabric, np.arange(len(breakouts)))] + [""])
    for sl in v.chunks():
        a, z, tier = L.a_dev[sl], L.z_dev[sl], L.tier[sl]
        if lengths is not None:
            lens, units = length_texts(lengths[sl]), "m"
        else:
            lens, units = length[tier], unit[tier]
        comments = notes[tier.astype(np.int64) * planes + L.plane[sl]]
        if leg_notes is not None:
            comments = comments + leg_notes[breakouts.group[sl]]
        yield [
            site,
            ends.netbox[a],
            TERMINATION,
            v.interfaces(a, L.a_port[sl]),
            site,
            ends.netbox[z],
            TERMINATION,
            v.interfaces(z, L.z_port[sl]),
            ctype[tier],
            STATUS,
            lens,
            units,
            [f"{site}/{c}" for c in range(sl.start + 1, sl.stop + 1)],
            comments,
        ]


def length_texts(lengths: np.ndarray) -> np.ndarray:
    """Cable lengths as NetBox takes them (``%g``: ``3``, ``2.5``)."""
    uniq, inv = np.unique(np.asarray(lengths, np.float64), return_inverse=True)
    return text_table(f"{x:g}" for x in uniq.tolist())[inv.reshape(-1)]


def cable_rows(fabric: Fabric, media: dict[int, tuple[str, str, str]] | None = None, lengths=None, breakouts=None) -> Iterator[tuple]:
    """One row per cable, in cabling.csv order (``label`` = ``<site>/<cable id>``).

    ``media`` gives each link tier's cable type, length and unit (see
    :func:`cable_media`); tiers without it leave those cells empty.
    ``lengths`` (the layout's sold length of every cable) overrides the length.
    A leg of a breakout cable (``breakouts``, :mod:`topogen.fabric.breakout`) stays a NetBox
    cable of its own (a NetBox cable's terminations on one side share one device, and
    the legs reach two hosts); its comment names the breakout cable, as cabling.csv does.
    """
    for cols in cable_columns(fabric, media, lengths, breakouts):
        yield from column_rows(cols)


# --- prerequisites, once per build ------------------------------------------------------


def _heights(spec) -> tuple[int, int]:
    """U of a compute node and of a switch in the spec's layout (the same for both architectures)."""
    lay = resolve(getattr(spec, "layout", None), spec.hb_domain, spec.gpus_per_node, node_u(spec))
    return node_height_u(lay, spec.gpus_per_node), lay.switch_u


def node_model(spec, height_u: int) -> str:
    """The generic device type of a compute node: ports, speed and height (``gpu-node-8x400g-8u``).

    The height is in the name so that one name is one definition in every cluster
    (NetBox keeps the first device type of a name: see :func:`shared_rows`).
    """
    return f"gpu-node-{spec.gpus_per_node * spec.nic_ports}x{spec.link_speed}g-{height_u}u"


def prerequisite_rows(ctx) -> dict[str, tuple[tuple[str, ...], list[tuple]]]:
    """``{file name under netbox/: (columns, rows)}``: this cluster's ``sites.csv`` and :func:`shared_rows`.

    Read from the spec, the catalog and ``summary.json``'s sections (tiers,
    switch SKU), which hold every architecture even where an exporter worker
    sees only one fabric.
    """
    spec = ctx.spec
    sites = []
    for arch in ctx.summary["architectures"]:
        name = site_name(spec, arch)
        sites.append((name, slug(name), SITE_STATUS, f"{spec.gpus:,} GPUs, {arch}; generated by {spec.provenance()}"))
    return {"sites.csv": (SITE_COLUMNS, sites), **shared_rows(ctx)}


SHARED_KINDS = (("manufacturer", MANUFACTURER_COLUMNS), ("device-role", ROLE_COLUMNS), ("rack-role", RACK_ROLE_COLUMNS), ("device-type", DEVICE_TYPE_COLUMNS))


def shared_rows(ctx) -> dict[str, tuple[tuple[str, ...], list[tuple]]]:
    """Objects several clusters share (manufacturers, device and rack roles, device types): one file each.

    ``shared/<n>-<kind>-<slug>.csv``, numbered in import order (a device type
    names its manufacturer). NetBox refuses a whole file when one row's name
    exists, so each object is a file of its own, and the same object is written
    byte for byte the same by every build: importing a second cluster, a file
    NetBox refuses as existing is skipped, with nothing to edit.
    """
    spec = ctx.spec
    node_u, switch_u = _heights(spec)
    makers, roles, rack_roles, dtypes = {}, {}, {}, {}
    for sec in ctx.summary["architectures"].values():
        types = arch_types(ctx, spec, sec.get("switch_sku"), sec.get("switch_skus"))
        switch_types = [types.switch_at(t) for t in range(1, sec["tiers"] + 1)]
        for maker in (types.node_manufacturer, *(m for _, m, _ in switch_types)):
            makers.setdefault(maker, (maker, slug(maker)))
        roles.setdefault(NODE_ROLE, (NODE_ROLE, NODE_ROLE, ROLE_COLORS[0], "compute node (GPU host)"))
        rack_roles.setdefault("compute", ("compute-rack", "compute-rack", RACK_ROLE_COLORS["compute"], "compute racks (GPU nodes)"))
        for tier in range(1, sec["tiers"] + 1):
            role = tier_role(tier)
            color = ROLE_COLORS[min(tier, len(ROLE_COLORS) - 1)]
            roles.setdefault(role, (role, slug(role), color, f"tier-{tier} switch"))
            rack_roles.setdefault(role, (f"{role}-rack", slug(f"{role}-rack"), RACK_ROLE_COLORS.get(role, color), f"network racks of tier-{tier} ({role}) switches"))
        node_desc = f"compute node with {spec.gpus_per_node * spec.nic_ports} NIC ports at {spec.link_speed}G"
        for maker, model, desc, u in ((types.node_manufacturer, node_model(spec, node_u), node_desc, node_u), *((m, model, d, switch_u) for model, m, d in switch_types)):
            part = model if maker != GENERIC else ""
            dtypes.setdefault((maker, model), (maker, model, slug(model), part, u, desc))
    out: dict[str, tuple[tuple[str, ...], list[tuple]]] = {}
    for n, ((kind, cols), objects) in enumerate(zip(SHARED_KINDS, (makers, roles, rack_roles, dtypes))):
        order = (1, 2, 2, 3)[n]  # manufacturers, then roles of both kinds, then device types (they name a manufacturer)
        for key, row in objects.items():
            tag = slug(f"{key[0]}-{key[1]}") if isinstance(key, tuple) else slug(row[1])
            out[f"shared/{order}-{kind}-{tag}.csv"] = (cols, [row])
    return out


def rack_rows(fabric: Fabric, layout) -> list[tuple]:
    """One row per rack of the layout (``A01``...), in the layout's order, at this architecture's site."""
    site = site_name(fabric.spec, fabric.arch)
    r = layout.racks
    u = layout.spec.rack_u
    return [(site, name, f"{kind}-rack", RACK_STATUS, RACK_WIDTH, u, f"{kind} rack, row {row + 1}, position {col + 1}") for name, kind, row, col in zip(r.name, r.kind, r.row.tolist(), r.col.tolist())]


def check_names(ctx) -> None:
    """NetBox holds device names of at most 64 characters: refuse a spec name that would exceed it."""
    problems = []
    for arch, fabric in ctx.fabrics.items():
        pre = len(site_name(ctx.spec, arch)) + 1
        nn = node_names(fabric)
        longest = max([len(x) for x in (nn.names() if nn.template is not None else nn.names()[-1:])] + [len(s.name) for s in fabric.switches])
        if pre + longest > MAX_NAME:
            problems.append(Problem("name", f"NetBox device names <site>.<host> of {arch} would be {pre + longest} characters ({site_name(ctx.spec, arch)}.…); NetBox allows {MAX_NAME}", f"shorten the spec name to at most {MAX_NAME - longest - len(arch) - 2} characters, or leave out --formats netbox"))
    if problems:
        raise InputError(problems)


PARTS = ("devices", "interfaces", "cables")  # the files of one architecture; a worker task may write one (exports.workers)


def part_records(ctx, fabric: Fabric, part: str) -> tuple[str, Iterator[list[str]]]:
    """The header and the record chunks of one architecture's ``<part>.csv``."""
    if part == "devices":  # catalog text: quoted as CarefulCsvWriter quotes (also ``;``, tab, CR)
        rows = device_rows(fabric, device_types(ctx, fabric), (getattr(ctx, "layouts", None) or {}).get(fabric.arch))
        chunks = (list(zip(*itertools.islice(rows, CHUNK))) for _ in itertools.count())
        return csv_line(DEVICE_COLUMNS), (csv_records(cols) for cols in itertools.takewhile(bool, chunks))
    if part == "interfaces":
        return csv_header(INTERFACE_COLUMNS), map(csv_records, interface_columns(fabric, device_types(ctx, fabric)))
    breakouts = getattr(getattr(ctx, "boms", {}).get(fabric.arch), "breakouts", None)
    return csv_header(CABLE_COLUMNS), map(csv_records, cable_columns(fabric, cable_media(ctx, fabric), _lengths(ctx, fabric.arch), breakouts, isl_cable_types(ctx, fabric)))


def export(ctx, dest: Path, part: str | None = None) -> list[Path]:
    """Every NetBox file, or (``part``) the prerequisites with ``devices``, or one of the other :data:`PARTS`."""
    check_names(ctx)
    paths = []
    if part in (None, PARTS[0]) and ctx.spec.arches[0] in ctx.fabrics:  # once per build, also when a worker exports one architecture
        pre = arch_dir(dest, "netbox")
        arch_dir(pre, "shared")
        for fname, (cols, rows) in prerequisite_rows(ctx).items():
            p = pre / fname
            write_csv(p, cols, rows)
            paths.append(p)
    for arch, fabric in ctx.fabrics.items():
        d = arch_dir(dest, arch, "netbox")
        lay = (getattr(ctx, "layouts", None) or {}).get(arch)
        if lay is not None and part in (None, PARTS[0]):
            paths.extend(write_parts(d, "racks", RACK_COLUMNS, rack_rows(fabric, lay)))
        for stem in PARTS if part is None else (part,):
            header, records = part_records(ctx, fabric, stem)
            paths.extend(write_csv_parts(d, stem, header, records, MAX_PART_BYTES, part_rows(stem)))
    return paths
