"""NetBox IPAM rows of the addressing plan: RIR, ASNs, VRFs, virtual interfaces, prefixes, IP addresses.

They import after the DCIM files of the ``netbox`` export (devices
``<site>.<host>``, interfaces ``p<n>`` and ``gpu<rank>-nic<q>``,
:mod:`topogen.exports.netbox.dcim`), in this order, each through NetBox 4.x's
bulk import (IPAM ``RIRImportForm``, ``ASNImportForm``, ``VRFImportForm``,
DCIM ``InterfaceImportForm``, ``PrefixImportForm``, ``IPAddressImportForm``).
Once per build (``netbox/ipam/``, :data:`BUILD_FILES`), as the DCIM
prerequisites:

1. ``rirs.csv``: the RIR of the ASN pool (``RFC 6996 private`` when the pool
   is private, with ``is_private``).
2. ``asns.csv``: every ASN the plans of the build's architectures give, once,
   with the switches holding it in each site. Both architectures number
   their switches from the same ``asn_pool`` (each is its own BGP domain),
   and NetBox holds an ASN once (``ASN.asn`` is unique): one file for the
   build lets both import into one NetBox. A second cluster whose pool
   overlaps gives rows NetBox already has: drop them (or give the clusters
   their own ``asn_pool``); likewise the RIR row.

Then per architecture (``<arch>/netbox/ipam/``, :data:`ARCH_FILES`):

3. ``vrfs.csv``: ``<site>`` (every address of the site: both architectures
   of a build reuse the same pools, so each site is its own VRF) and
   ``<site>.rail<r>`` for each rail with its own routing domain on a shared
   switch.
4. ``interfaces-virtual.csv``: each switch's ``lo`` and, with ``gpu_subnet:
   rail``, its ``vlan<id>`` gateways (type ``virtual``), which the DCIM file
   does not create.
5. ``prefixes.csv``: the three pools (status ``container``), then every link
   subnet (a /31, or a rail subnet of a leaf) as ``reserved``.
6. ``ip-addresses.csv``: every address on its device and interface
   (``reserved``: planned, not yet live), in the rail's VRF where it has one.

Rows are made column-wise (numpy text columns zipped into ``csv.writer``'s
``writerows``): 131,072 GPUs in seconds.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from topogen.config.addressing import ip_text, plan
from topogen.config.scalars import int_text
from topogen.exports.netbox.dcim import node_names, site_name
from topogen.fabric.model import CHUNK
from topogen.fabric.view import column_rows, view
from topogen.util.text import cell_safe

STATUS = "reserved"
PRIVATE_ASNS = ((64512, 65534), (4200000000, 4294967294))
BUILD_FILES = {
    "rirs.csv": ("name", "slug", "is_private", "description"),
    "asns.csv": ("asn", "rir", "description"),
}
ARCH_FILES = {
    "vrfs.csv": ("name", "enforce_unique", "description"),
    "interfaces-virtual.csv": ("device", "name", "type", "enabled", "description"),
    "prefixes.csv": ("prefix", "vrf", "status", "description"),
    "ip-addresses.csv": ("address", "vrf", "status", "device", "interface", "description"),
}
FILES = {**BUILD_FILES, **ARCH_FILES}  # every file, in import order
SHOWN = 4  # switches named per site in an ASN's description


def rir(fabric) -> tuple[str, str, bool]:
    first, last = plan(fabric).spec.asn_range
    private = any(lo <= first and last <= hi for lo, hi in PRIVATE_ASNS)
    return ("RFC 6996 private", "rfc-6996-private", True) if private else ("topogen ASN pool", "topogen-asn-pool", False)


def build_rows(fabrics) -> dict[str, list[tuple]]:
    """Rows of :data:`BUILD_FILES` for the architectures ``fabrics`` (a dict) of one build: each RIR and each ASN once."""
    rirs: dict[str, tuple] = {}
    holders: dict[int, dict[str, list[str]]] = {}
    rir_of: dict[int, str] = {}
    for arch, fabric in fabrics.items():
        name, slug, private = rir(fabric)
        rirs.setdefault(name, (name, slug, "true" if private else "false", "ASN pool of the fabric"))
        site = site_name(fabric.spec, arch)
        for s, a in enumerate(plan(fabric).asn.tolist()):
            holders.setdefault(a, {}).setdefault(site, []).append(fabric.switches[s].name)
            rir_of.setdefault(a, name)
    asns = []
    for a in sorted(holders):
        parts = [f"{site}: " + ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "") for site, names in holders[a].items()]
        asns.append((a, rir_of[a], cell_safe("; ".join(parts))))
    return {"rirs.csv": list(rirs.values()), "asns.csv": asns}


def _cidr(addr: np.ndarray, plen: np.ndarray) -> np.ndarray:
    plen_t = np.array([str(i) for i in range(33)], dtype=object)
    return ip_text(addr) + "/" + plen_t[np.asarray(plen, np.int64)] if len(addr) else np.empty(0, dtype=object)


Columns = list  # one file's columns for a run of rows: each a sequence of strings, or one string for every row


def columns(fabric) -> dict[str, Iterator[Columns]]:
    """Every :data:`ARCH_FILES` file (see the module docstring) as runs of rows given column by column, by file name."""
    ad = plan(fabric)
    e = ad.ends
    n = fabric.gpus
    v = view(fabric)
    site = site_name(fabric.spec, fabric.arch)
    pre = cell_safe(site + ".")
    sw_names = np.array([pre + s.name for s in fabric.switches], dtype=object)
    nn = node_names(fabric)
    node_dev = pre + np.asarray(nn.names(), dtype=object)
    rail_mode = ad.spec.gpu_subnet == "rail"
    vrf_names = np.array([f"{site}.rail{r}" for r in range(fabric.hb_domain)] + [site], dtype=object)  # index -1: the site's own VRF (both architectures reuse the pools)
    vrf_rails = [-1] + sorted({r for s in range(len(fabric.switches)) for r in ad.vrfs(s)})
    gw_first = np.zeros(0, np.int64)
    if rail_mode:
        g = np.flatnonzero(e.peer < n)
        key = e.switch[g] * (fabric.hb_domain + 1) + e.rail[g]
        _, first = np.unique(key, return_index=True)
        gw_first = g[first]  # one gateway per (switch, rail)
    vlan_if = "vlan" + int_text(ad.spec.vlan_base + e.rail[gw_first].astype(np.int64))
    gw_sw = sw_names[e.switch[gw_first]]
    L = fabric.links

    def vrfs():
        yield [[str(vrf_names[r]) for r in vrf_rails], "true", [f"rail {r}: its own routing domain on shared switches" if r >= 0 else "the fabric's addresses" for r in vrf_rails]]

    def virtual():
        yield [sw_names, "lo", "virtual", "true", "loopback"]
        yield [gw_sw, vlan_if, "virtual", "true", "rail " + int_text(e.rail[gw_first]) + " GPU gateway"]

    def prefixes():
        pools = [p for p in ("loopbacks", "fabric", "gpus") if p != "fabric" or ad.numbered]
        yield [[str(ad.spec.pool(p)) for p in pools], site, "container", [f"{site}: {p} pool" for p in pools]]
        numbered = np.flatnonzero(ad.prefix_len > 0)
        plen = ad.prefix_len[numbered].astype(np.int64)
        net = ad.z_addr[numbered] & (np.uint32(0xFFFFFFFF) << (32 - plen).astype(np.uint32)).astype(np.uint32)
        vr = ad.vrf_rail[numbered].astype(np.int64) + 1
        k = fabric.hb_domain + 1
        key = np.unique((net.astype(np.int64) << 6 | plen) * k + vr)  # sorted by network, length, VRF
        for i in range(0, len(key), CHUNK):
            part = key[i : i + CHUNK]
            yield [_cidr((part // k >> 6).astype(np.uint32), part // k & 63), vrf_names[part % k - 1], STATUS, ""]

    def addresses():
        yield [_cidr(ad.loopback, np.full(len(sw_names), 32)), site, STATUS, sw_names, "lo", "loopback"]
        yield [_cidr(e.addr[gw_first], e.plen[gw_first]), vrf_names[e.vrf[gw_first]], STATUS, gw_sw, vlan_if, "gateway"]
        sw_rows = np.flatnonzero(e.plen > 0)
        if rail_mode:
            sw_rows = sw_rows[e.peer[sw_rows] >= n]  # bridged GPU ports hold no address
        for i in range(0, len(sw_rows), CHUNK):
            r = sw_rows[i : i + CHUNK]
            yield [_cidr(e.addr[r], e.plen[r]), vrf_names[e.vrf[r]], STATUS, sw_names[e.switch[r]], v.switch_ports(e.switch[r], e.port[r]), ""]
        g = np.flatnonzero(L.a_dev < n)
        g = g[np.lexsort((L.a_port[g], L.a_dev[g]))]
        for i in range(0, len(g), CHUNK):
            r = g[i : i + CHUNK]
            yield [_cidr(ad.a_addr[r], ad.prefix_len[r]), vrf_names[ad.vrf_rail[r]], STATUS, node_dev[L.a_dev[r] // nn.per_node], v.interfaces(L.a_dev[r], L.a_port[r]), ""]

    return {"vrfs.csv": vrfs(), "interfaces-virtual.csv": virtual(), "prefixes.csv": prefixes(), "ip-addresses.csv": addresses()}


def rows(fabric) -> dict[str, Iterator[tuple]]:
    """Rows (tuples of text) of every :data:`ARCH_FILES` file, by file name (:func:`columns`, row-wise)."""
    return {name: (row for cols in runs if _rows(cols) for row in column_rows(cols)) for name, runs in columns(fabric).items()}


def _rows(cols: Columns) -> int:
    return next(len(c) for c in cols if not isinstance(c, str))
