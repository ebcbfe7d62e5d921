"""Arista AVD ``eos_designs`` inputs of an Ethernet fabric built of EOS switches, rendered from the IP/ASN plan.

AVD (Arista Validated Designs; ``pyavd`` on PyPI, the ``arista.avd`` Ansible
collection) turns a fabric's *design inputs* into each switch's EOS
configuration, its documentation and its ANTA test catalog. This module
writes those inputs for a topogen fabric so that AVD renders exactly the plan
of :mod:`topogen.config.addressing` (the same loopbacks, link addresses and
ASNs as ``addressing.csv``, FRR, SONiC and NVUE), on the ports EOS names:

* **Node types**: leaves (tier 1) ``l3leaf`` (``vtep: false``: a routed GPU
  fabric, no VXLAN), the tier above ``spine``, a third tier ``super_spine``
  (hosts of ``type: super-spine``).
  Each switch is a node with ``id`` = its index + 1 (so AVD's loopback,
  ``loopback_ipv4_pool`` + ``id``, is topogen's: pool address ``i + 1``),
  its ``bgp_as`` from the plan, and its ``platform``.
* **Links**: every switch-to-switch cable (a leaf pair's ISLs included) is an
  ``l3_edge.p2p_links`` entry with both ends' EOS interfaces, the plan's /31s
  and ASNs, ``include_in_underlay_protocol: true``: AVD makes the eBGP
  neighbours. Every GPU link is a p2p link to the host (not an AVD device, so
  only the switch side is configured) with the leaf's address, outside BGP.
* **Routing policy**: ``redistribute connected`` through route-map
  ``RM-TOPOGEN-LOCAL`` (prefix list: loopbacks and GPU subnets only), as the
  FRR files' ``LOCAL`` route-map, through ``structured_config``;
  ``bgp_maximum_paths``/``bgp_ecmp`` the widest ECMP any switch needs.
* **Interface names** (EOS): ``Ethernet<cage>/<lane>`` with lane ``1`` for an
  unsplit cage and ``1 + leg * 8 / legs`` for leg ``leg`` of a cage split
  ``legs`` ways (8-lane OSFP: ``Ethernet1/1`` and ``Ethernet1/5`` for 2 x 400G),
  the cage split of the switch's port mode at the link speed (catalog
  ``per_cage``).

What AVD cannot be given from this plan is refused by :func:`unsupported`
(returning the reason): rails sharing a switch (a VRF per rail), rail
subnets (``gpu_subnet: rail``: a VLAN and SVI per rail), unnumbered links,
modular chassis (``Ethernet<card>/<port>/<lane>``) and fabrics of more than
three switch tiers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from topogen.config.addressing import Addressing, cidr_text, plan
from topogen.fabric.view import view

EOS_MANUFACTURER = "arista"  # catalog manufacturer whose switches run EOS when the SKU states no ``nos``
MAX_FIXED_CAGES = 64  # the most cages of a fixed EOS switch (7060X6-64PE: 64 OSFP); more is a modular chassis
NODE_TYPES = {1: "l3leaf", 2: "spine", 3: "super_spine"}  # switch tier -> AVD node type key (the inputs' top-level key)
TYPE_NAMES = {"l3leaf": "l3leaf", "spine": "spine", "super_spine": "super-spine"}  # node type key -> a host's ``type``
GROUP_SUFFIX = {"l3leaf": "L3LEAVES", "spine": "SPINES", "super_spine": "SUPER_SPINES"}
ROUTE_MAP = "RM-TOPOGEN-LOCAL"
PREFIX_LIST = "PL-TOPOGEN-LOCAL"


@dataclass(frozen=True, slots=True)
class Tier:
    """What AVD needs of one switch tier: its node type, platform (catalog SKU) and cage split."""

    node_type: str
    platform: str
    legs: int  # ports per cage at the tier's link speed


def runs_eos(sku) -> bool:
    """The SKU runs Arista EOS: its catalog ``nos`` lists ``eos``, or, unstated, its manufacturer is Arista."""
    if sku.nos is not None:
        return "eos" in sku.nos
    return sku.manufacturer.lower() == EOS_MANUFACTURER


def fabric_name(spec_name: str, arch: str) -> str:
    """The AVD fabric (and inventory group) name: ``<SPEC>_<ARCH>`` in Ansible's group-name alphabet."""
    return re.sub(r"[^A-Z0-9_]", "_", f"{spec_name}_{arch}".upper())


def tiers(ctx, fabric) -> dict[int, Tier] | str:
    """Each switch tier's AVD view, or the reason the fabric is not an EOS fabric AVD can take."""
    top = max((s.tier for s in fabric.switches), default=0)
    out: dict[int, Tier] = {}
    for t in range(1, top + 1):
        hit = ctx.catalog.switch_at(fabric.spec, t, top) if ctx.catalog is not None else None
        if hit is None:
            return f"no catalog switch for tier {t}"
        sku, mode = hit
        if not runs_eos(sku):
            return f"tier {t} is {sku.sku} ({sku.manufacturer or 'no manufacturer'}, nos {list(sku.nos) if sku.nos is not None else 'not stated'}), not an Arista EOS switch"
        if (mode.radix or 0) // max(1, int(mode.per_cage)) > MAX_FIXED_CAGES:
            return f"tier {t} is {sku.sku}, a modular chassis ({mode.radix} ports): EOS names its ports Ethernet<card>/<port>/<lane>, which these inputs do not write"
        if t not in NODE_TYPES:
            return f"{top} switch tiers: AVD's l3ls design has at most 3 (l3leaf, spine, super_spine)"
        out[t] = Tier(NODE_TYPES[t], sku.sku, max(1, int(mode.per_cage)))
    return out


def unsupported(ctx, fabric) -> str:
    """Why AVD inputs cannot carry this fabric's plan ("" when they can)."""
    t = tiers(ctx, fabric)
    if isinstance(t, str):
        return t
    ad = plan(fabric)
    if not ad.numbered:
        return "unnumbered links (addressing p2p: unnumbered): write them numbered for AVD"
    if ad.spec.gpu_subnet == "rail":
        return "rail subnets (addressing gpu_subnet: rail) need a VLAN and gateway per rail, which these inputs do not write"
    if bool(ad.shared.any()):
        return "switches carrying several rails (a VRF per rail): AVD's l3ls design routes one default VRF"
    return ""


@dataclass(frozen=True, slots=True)
class Links:
    """Every cable as a p2p link, one object array per field: the switch end first (``a``), then its peer.

    A switch-to-switch cable (a leaf pair's ISLs included) lists its lower end first with both
    ASNs (``bgp`` True); a GPU link lists the leaf, then the GPU (``hb<d>-gpu<r>``, port
    ``nic<q>``) with no ASN (``bgp`` False: not in the underlay).
    """

    a_node: np.ndarray
    z_node: np.ndarray
    a_if: np.ndarray
    z_if: np.ndarray
    a_ip: np.ndarray
    z_ip: np.ndarray
    a_as: np.ndarray
    z_as: np.ndarray
    bgp: np.ndarray


def links(ctx, fabric) -> Links:
    """The fabric's cables as AVD p2p links, column-wise (a million cables in a few seconds)."""
    tv = tiers(ctx, fabric)
    assert isinstance(tv, dict), tv
    ad: Addressing = plan(fabric)
    v = view(fabric)
    n = fabric.gpus
    L = fabric.cable_table()
    a, z = L.a_dev.astype(np.int64), L.z_dev.astype(np.int64)
    bgp = a >= n
    a_if = v.ports(a, L.a_port).astype(object)  # EOS names (topogen.fabric.ports), as every other file names the port
    z_if = v.ports(z, L.z_port).astype(object)
    a_ip = cidr_text(ad.a_addr, ad.prefix_len)
    z_ip = cidr_text(ad.z_addr, ad.prefix_len)
    asn = ad.asn.astype(str).astype(object)
    a_as = np.full(len(a), "", dtype=object)
    a_as[bgp] = asn[a[bgp] - n]
    z_as = asn[z - n]
    gpu = ~bgp  # the leaf (z) first, then the GPU
    sw_first = lambda x, y: np.where(gpu, y, x)  # noqa: E731
    return Links(sw_first(v.device[a], v.device[z]), sw_first(v.device[z], v.device[a]), sw_first(a_if, z_if), sw_first(z_if, a_if), sw_first(a_ip, z_ip), sw_first(z_ip, a_ip), sw_first(a_as, z_as), sw_first(z_as, a_as), bgp)


def design(ctx, fabric, spec_name: str) -> dict:
    """The fabric's ``eos_designs`` group variables but the links (:func:`links`): fabric, node types, nodes, policy."""
    tv = tiers(ctx, fabric)
    assert isinstance(tv, dict), tv
    ad: Addressing = plan(fabric)
    n = fabric.gpus
    nodes: dict[str, list] = {t.node_type: [] for t in tv.values()}
    for s, sw in enumerate(fabric.switches):
        nodes[tv[sw.tier].node_type].append({"name": sw.name, "id": s + 1, "bgp_as": str(int(ad.asn[s]))})
    paths = _max_paths(fabric, fabric.cable_table(), n)
    policy = {
        "prefix_lists": [{"name": PREFIX_LIST, "sequence_numbers": [
            {"sequence": 10, "action": f"permit {ad.spec.loopbacks} eq 32"},
            {"sequence": 20, "action": f"permit {ad.spec.gpus} le 32"},
        ]}],
        "route_maps": [{"name": ROUTE_MAP, "sequence_numbers": [{"sequence": 10, "type": "permit", "match": [f"ip address prefix-list {PREFIX_LIST}"]}]}],
        "router_bgp": {"redistribute": {"connected": {"enabled": True, "route_map": ROUTE_MAP}}},
    }
    out: dict = {
        "fabric_name": fabric_name(spec_name, fabric.arch),
        "underlay_routing_protocol": "ebgp",
        "overlay_routing_protocol": "none",
        "bgp_maximum_paths": paths,
        "bgp_ecmp": paths,
    }
    for t in sorted(tv):
        nt = tv[t].node_type
        out[nt] = {"defaults": {"platform": tv[t].platform, "loopback_ipv4_pool": ad.spec.loopbacks, "structured_config": policy, **({"vtep": False} if nt == "l3leaf" else {})}, "nodes": nodes[nt]}
    return out


def _max_paths(fabric, L, n: int) -> int:
    """The widest ECMP a switch needs: its most switch-facing links in one direction (at least 2)."""
    a, z = L.a_dev.astype(np.int64), L.z_dev.astype(np.int64)
    sw = a >= n
    up = np.bincount(a[sw] - n, minlength=len(fabric.switches)) if sw.any() else np.zeros(len(fabric.switches), np.int64)
    down = np.bincount(z[sw] - n, minlength=len(fabric.switches)) if sw.any() else np.zeros(len(fabric.switches), np.int64)
    return int(max(2, up.max(initial=0), down.max(initial=0)))


def groups(fabric, spec_name: str) -> dict[str, list[str]]:
    """Inventory groups under the fabric group: ``<FABRIC>_<NODE TYPES>`` -> host names (switch order)."""
    name = fabric_name(spec_name, fabric.arch)
    out: dict[str, list[str]] = {}
    for sw in fabric.switches:
        nt = NODE_TYPES.get(sw.tier)
        out.setdefault(f"{name}_{GROUP_SUFFIX[nt]}", []).append(sw.name)
    return out


def node_type_of(group: str) -> str:
    """The ``type`` an inventory group's hosts take (``super-spine`` for the key ``super_spine``)."""
    key = max((nt for nt, suffix in GROUP_SUFFIX.items() if group.endswith("_" + suffix)), key=lambda nt: len(GROUP_SUFFIX[nt]))
    return TYPE_NAMES[key]
