"""The IP and ASN plan of a fabric: loopbacks, link addresses, ASNs, per-rail VRFs and VLANs.

:func:`plan` computes an :class:`Addressing` for a :class:`~topogen.fabric.Fabric`
from the spec's ``addressing:`` section (:mod:`topogen.spec.addressing`), column-wise
with numpy (131,072 GPUs in well under a second), deterministic: the same spec
gives the same plan, byte for byte, in every file rendered from it. Every
configuration exporter (FRR, SONiC, NVUE, netplan, NetBox IPAM...) renders this
plan and never re-derives an address.

Rules (the defaults follow RFC 7938 and Spectrum-X-style RoCE fabrics):

* **Loopbacks**: switch ``i`` (device ``gpus + i``) gets ``loopbacks`` pool
  address ``i + 1`` as a /32 (the pool's network address is never used).
* **Switch-to-switch links** (``p2p: numbered``): link ``j`` of the
  switch-to-switch links, in cable order, gets the /31 ``fabric + 2j``: the
  upper switch (``z`` end) the even address, the lower one the odd. The
  inter-switch links (ISLs) of a leaf pair (``design: leaf-pair``) are
  switch-to-switch links after every link (cable order: ``Fabric.cable_table``),
  leaf-b (their ``z`` end) the even address, leaf-a the odd; the two leaves
  peer over each (eBGP, one ASN each), ECMP across all of them.
  ``p2p: unnumbered``: no IPv4 address; BGP runs over the IPv6 link-local
  address of the port (RFC 5549), and the address columns are 0.
* **GPU NIC links**: the ``gpus`` pool is split into one block per (plane,
  rail), each block into one *slot* per leaf of that plane and rail (in switch
  order), each slot sized alike (a power of two) so that a rail and a leaf's
  share of it are aggregatable prefixes. ``gpu_subnet: link``: the k-th GPU
  port of the slot (in port order) takes the /31 at ``slot + 2k``, the leaf the
  even address (the GPU's gateway), the GPU the odd one. ``gpu_subnet: rail``:
  the slot is one subnet; the leaf takes its first host address (the gateway,
  on the rail's VLAN), the GPUs the next ones in port order.
* **ASNs** (``asn_scheme``): ``rfc7938``: every leaf its own ASN; the switches
  of one tier above the leaves share an ASN per pod (block), plane and rail
  group, so a path can never go down and up again through one pod (RFC 7938
  section 5.2). ``per-switch``: every switch its own. Numbered from the first
  ASN of ``asn_pool`` in switch order (first appearance).
* **Rails on shared switches**: a rail-only switch carrying several rails
  (``rail_packing: shared``) keeps each rail in its own routing domain: VRF
  ``rail<r>`` (kernel table ``vrf_table_base + r``), VLAN ``vlan_base + r``.
  Every other switch uses the default VRF (a rail-optimized leaf packing
  several rails, ``leaf_packing: shared``, routes them all: its rails meet at
  the spines anyway).

Pools are checked against the fabric (:func:`check_pools`): a pool too small
raises :class:`~topogen.errors.InputError` naming the pool, the size it has and
the size needed (exit 2).

API for renderers (every array is numpy; switch arrays are indexed by
``dev - gpus``; link arrays by cable row, see below):

Link arrays cover every cable, the links and then a leaf pair's ISLs (the rows of
``fabric.cable_table()``; an ISL's row is ``len(fabric.links) + j``, its cable id
one more), so a Clos's arrays are those of ``fabric.links``.

``Addressing.loopback[s]``          uint32 IPv4 of switch ``s``'s loopback (/32)
``Addressing.asn[s]``               int64 ASN of switch ``s``
``Addressing.a_addr[l]``,           uint32 IPv4 of the lower / upper end of link
``Addressing.z_addr[l]``            ``l`` (0 where unnumbered)
``Addressing.prefix_len[l]``        int8 prefix length of both ends (31, the rail
                                    subnet's, or 0 unnumbered)
``Addressing.rail[l]``              int16 rail of link ``l`` (-1: carries every rail)
``Addressing.vrf_rail[l]``          int16 rail whose VRF the switch ends of link
                                    ``l`` sit in; -1: the default VRF
``Addressing.ends``                 :class:`Ends`: every switch-side port with an
                                    address and a peer, grouped by switch
                                    (``ends.switches(a, b)``: a chunk of switches)
``Addressing.gpu_route[l]``         uint32 prefix the GPU end of a GPU link routes
                                    through its gateway (its rail's block in
                                    rail-only, the whole pool in rail-optimized),
                                    with ``gpu_route_len[l]``
``vrf_name(r)``, ``vlan_id(r)``,
``vrf_table(r)``                    names and ids of rail ``r``'s routing domain
``ip_text(a)``, ``cidr_text(a, l)``  dotted quads (and ``/len``) of a uint32 array (object array)
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import numpy as np

from topogen.spec.addressing import DEFAULT, POOLS, AddressingSpec
from topogen.util.errors import InputError, Problem

KEEP = 4
_CACHE: dict[int, tuple[object, "Addressing"]] = {}


def spec_of(fabric) -> AddressingSpec:
    """The fabric spec's addressing section, or the defaults."""
    return getattr(fabric.spec, "addressing", None) or DEFAULT


def pow2ceil(x: np.ndarray | int) -> np.ndarray | int:
    """Smallest power of two >= x (1 for x <= 1)."""
    if isinstance(x, (int, np.integer)):
        return 1 << max(int(x) - 1, 0).bit_length()
    x = np.maximum(np.asarray(x, np.int64), 1)
    return (1 << np.ceil(np.log2(x)).astype(np.int64)).astype(np.int64)


@dataclass(frozen=True, slots=True)
class Ends:
    """Every switch-side link end, sorted by switch then port; ``offsets[s]:offsets[s+1]`` are switch ``s``'s.

    Columns: ``switch`` (index ``dev - gpus``), ``port`` (1-based), ``addr`` /
    ``plen`` (this end's IPv4 and prefix length; 0 unnumbered), ``peer`` (device
    id: a GPU below ``gpus``), ``peer_port``, ``peer_addr``, ``peer_asn`` (0 for a
    GPU), ``vrf`` (rail whose VRF the port is in, -1 default), ``rail`` (the
    link's rail, -1 all), ``link`` (row in ``fabric.cable_table()``), ``up`` (True:
    this end is the cable's lower ``a`` end, its peer above; on a leaf pair's ISL,
    leaf-a's end, whose peer leaf-b is of the same tier).
    """

    switch: np.ndarray
    port: np.ndarray
    addr: np.ndarray
    plen: np.ndarray
    peer: np.ndarray
    peer_port: np.ndarray
    peer_addr: np.ndarray
    peer_asn: np.ndarray
    vrf: np.ndarray
    rail: np.ndarray
    link: np.ndarray
    up: np.ndarray
    offsets: np.ndarray

    def of(self, s: int) -> slice:
        """Rows of switch ``s``."""
        return slice(int(self.offsets[s]), int(self.offsets[s + 1]))

    def switches(self, first: int, stop: int) -> "Ends":
        """The ends of switches ``first .. stop-1`` (a chunk, for renderers that stream); ``offsets`` relative to it."""
        a, b = int(self.offsets[first]), int(self.offsets[stop])
        cols = {f: getattr(self, f)[a:b] for f in ("switch", "port", "addr", "plen", "peer", "peer_port", "peer_addr", "peer_asn", "vrf", "rail", "link", "up")}
        return Ends(**cols, offsets=self.offsets[first : stop + 1] - a)


@dataclass(frozen=True, slots=True)
class Addressing:
    """The address and ASN plan of one fabric (see the module docstring for every column)."""

    spec: AddressingSpec
    gpus: int
    hb_domain: int
    loopback: np.ndarray
    asn: np.ndarray
    a_addr: np.ndarray
    z_addr: np.ndarray
    prefix_len: np.ndarray
    rail: np.ndarray
    vrf_rail: np.ndarray
    gpu_route: np.ndarray
    gpu_route_len: np.ndarray
    switch_rails: tuple[tuple[int, ...], ...]  # rails each switch carries (() = every rail)
    shared: np.ndarray  # bool per switch: several rails, one VRF each
    ends: Ends

    @property
    def numbered(self) -> bool:
        return self.spec.p2p == "numbered"

    def vrf_name(self, rail: int) -> str:
        return f"rail{int(rail)}"

    def vlan_id(self, rail: int) -> int:
        return self.spec.vlan_base + int(rail)

    def vrf_table(self, rail: int) -> int:
        return self.spec.vrf_table_base + int(rail)

    def vrfs(self, s: int) -> tuple[int, ...]:
        """Rails with their own VRF on switch ``s`` (empty: everything in the default VRF)."""
        return self.switch_rails[s] if self.shared[s] else ()


_HALVES: np.ndarray | None = None


def _halves() -> np.ndarray:
    """``"a.b"`` of every 16-bit value (built once): an address is two lookups and one format."""
    global _HALVES
    if _HALVES is None:
        t = [str(i) for i in range(256)]
        _HALVES = np.array([f"{t[i >> 8]}.{t[i & 255]}" for i in range(65536)], dtype=object)
    return _HALVES


def ip_text(addrs: np.ndarray) -> np.ndarray:
    """Dotted quads of a uint32 array, as an object array (two table lookups per address)."""
    a = np.asarray(addrs, dtype=np.uint32)
    out = np.empty(len(a), dtype=object)
    if len(a):
        h = _halves()
        out[:] = list(map("{}.{}".format, h[a >> 16].tolist(), h[a & 0xFFFF].tolist()))
    return out


def cidr_text(addrs: np.ndarray, plen: np.ndarray) -> np.ndarray:
    """``a.b.c.d/len`` of each address, ``""`` where ``plen`` is 0 (unnumbered or bridged)."""
    a = np.asarray(addrs, dtype=np.uint32)
    out = np.empty(len(a), dtype=object)
    if len(a):
        h = _halves()
        lens = np.array([str(i) for i in range(33)], dtype=object)
        out[:] = list(map("{}.{}/{}".format, h[a >> 16].tolist(), h[a & 0xFFFF].tolist(), lens[np.asarray(plen, np.int64)].tolist()))
        out[np.asarray(plen) == 0] = ""
    return out


def needs(fabric) -> dict[str, tuple[int, str]]:
    """Addresses each pool needs for ``fabric``: ``{pool: (addresses, what for)}``."""
    spec = spec_of(fabric)
    L = fabric.cable_table()
    nsw = len(fabric.switches)
    sw_links = int((L.a_dev >= fabric.gpus).sum())
    out = {"loopbacks": (nsw + 1, f"{nsw:,} switch loopbacks and the unused network address")}
    if spec.p2p == "numbered":
        out["fabric"] = (2 * sw_links, f"a /31 for each of {sw_links:,} switch-to-switch links")
    slot, blocks, rail_block = _gpu_layout(fabric, spec)
    out["gpus"] = (blocks * rail_block, f"{blocks:,} plane-rail blocks of {rail_block:,} addresses ({rail_block // slot:,} leaf slots of {slot:,})")
    return out


def check_pools(fabric) -> list[Problem]:
    """Pools too small for ``fabric`` (and ASN or VLAN ranges too short), as problems naming the size needed."""
    spec = spec_of(fabric)
    problems = []
    for pool, (need, why) in needs(fabric).items():
        net = spec.pool(pool)
        if need > net.num_addresses:
            plen = 32 - (int(pow2ceil(need)) - 1).bit_length()
            problems.append(Problem(f"addressing.{pool}", f"pool {pool} {net} holds {net.num_addresses:,} addresses; the {fabric.arch} fabric needs {need:,} ({why})", f"give a /{plen} or larger"))
    first, last = spec.asn_range
    n_asn = int(_asn_keys(fabric, spec)[1])
    if n_asn > last - first + 1:
        problems.append(Problem("addressing.asn_pool", f"asn_pool {spec.asn_pool} holds {last - first + 1:,} ASNs; the {fabric.arch} fabric needs {n_asn:,} ({spec.asn_scheme} scheme)", "widen the range, e.g. 4200000000-4294967294"))
    k = fabric.hb_domain
    if spec.vlan_base + k - 1 > 4094:
        problems.append(Problem("addressing.vlan_base", f"vlan_base {spec.vlan_base} + {k} rails passes VLAN 4094", f"use vlan_base <= {4095 - k}"))
    return problems


def check(fabrics) -> None:
    """Raise :class:`InputError` listing every pool too small for any of ``fabrics`` (dict or list)."""
    items = fabrics.values() if isinstance(fabrics, dict) else fabrics
    problems = [p for f in items for p in check_pools(f)]
    if problems:
        raise InputError(problems)


def _switch_rails(fabric) -> tuple[tuple[tuple[int, ...], ...], np.ndarray]:
    rails = tuple(tuple(s.rails) for s in fabric.switches)
    apart = fabric.arch == "rail-only"  # rail-optimized rails meet at the spines: one routing domain
    shared = np.fromiter((apart and len(r) > 1 for r in rails), bool, len(rails))
    return rails, shared


def _gpu_links(fabric) -> np.ndarray:
    return np.flatnonzero(fabric.links.a_dev < fabric.gpus)


def _gpu_layout(fabric, spec: AddressingSpec) -> tuple[int, int, int]:
    """``(slot size, plane-rail blocks, block size)`` of the GPU pool (addresses)."""
    g = _gpu_links(fabric)
    L = fabric.links
    k = fabric.hb_domain
    planes = int(L.plane.max()) + 1 if len(L) else 1
    if not len(g):
        return 1, 0, 0
    rail = L.a_dev[g] % k
    key = (L.plane[g].astype(np.int64) * k + rail) * (len(fabric.switches) + 1) + (L.z_dev[g] - fabric.gpus)
    uniq, per = np.unique(key, return_counts=True)
    biggest = int(per.max())
    slot = int(pow2ceil(2 * biggest)) if spec.gpu_subnet == "link" else max(4, int(pow2ceil(biggest + 3)))
    leaves_per_block = np.bincount(uniq // (len(fabric.switches) + 1), minlength=planes * k)
    rail_block = int(pow2ceil(int(leaves_per_block.max()) * slot))
    return slot, planes * k, rail_block


def _asn_keys(fabric, spec: AddressingSpec) -> tuple[np.ndarray, int]:
    """ASN ordinal of every switch (0-based, by first appearance) and how many there are."""
    n = len(fabric.switches)
    if not n:
        return np.zeros(0, np.int64), 0
    if spec.asn_scheme == "per-switch":
        return np.arange(n, dtype=np.int64), n
    sw = fabric.switches
    tier = np.fromiter((s.tier for s in sw), np.int64, n)
    plane = np.fromiter((s.plane for s in sw), np.int64, n)
    group = np.fromiter((s.group for s in sw), np.int64, n)
    block = np.fromiter((s.block for s in sw), np.int64, n)
    idx = np.arange(n, dtype=np.int64)
    # leaves: one key each; above: (tier, plane, group, block), offset past every leaf key
    mix = ((tier * (int(plane.max()) + 1) + plane) * (int(group.max()) + 1) + group) * (int(block.max()) + 1) + block
    key = np.where(tier == 1, idx, n + mix)
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inv.reshape(-1)].astype(np.int64), len(order)


def plan(fabric) -> Addressing:
    """The fabric's :class:`Addressing`, computed once per process and fabric (pools checked: InputError when short)."""
    got = _CACHE.get(id(fabric))
    if got is not None and got[0] is fabric:
        return got[1]
    check([fabric])
    result = _plan(fabric, spec_of(fabric))
    while len(_CACHE) >= KEEP:
        del _CACHE[next(iter(_CACHE))]
    _CACHE[id(fabric)] = (fabric, result)
    return result


def pin(fabric, base: Addressing, **columns: np.ndarray) -> Addressing:
    """``base`` (the fabric's plan) with some columns replaced (``loopback``, ``asn``, ``a_addr``, ``z_addr``, ``prefix_len``, ``gpu_route``, ``gpu_route_len``), its ends recomputed; it becomes what :func:`plan` returns for ``fabric``.

    For a plan that keeps another phase's addresses (:mod:`topogen.growth.addresses`); a fresh build never calls it.
    """
    import dataclasses

    ad = dataclasses.replace(base, **columns)
    ends = _ends(fabric, ad.a_addr, ad.z_addr, ad.prefix_len, ad.asn, ad.vrf_rail, ad.rail)
    ad = dataclasses.replace(ad, ends=ends)
    while len(_CACHE) >= KEEP:
        del _CACHE[next(iter(_CACHE))]
    _CACHE[id(fabric)] = (fabric, ad)
    return ad


def gpu_layout(fabric) -> tuple[int, int, int]:
    """``(slot size, plane-rail blocks, block size)`` of the fabric's GPU pool (addresses)."""
    return _gpu_layout(fabric, spec_of(fabric))


def _plan(fabric, spec: AddressingSpec) -> Addressing:
    L = fabric.cable_table()  # the links, then a leaf pair's ISLs (switch-to-switch: a /31 each)
    n, k = fabric.gpus, fabric.hb_domain
    nsw = len(fabric.switches)
    rails, shared = _switch_rails(fabric)
    lo = np.uint32(int(spec.pool("loopbacks").network_address))
    loopback = (lo + np.arange(1, nsw + 1, dtype=np.uint32)).astype(np.uint32)
    ordinal, _ = _asn_keys(fabric, spec)
    asn = spec.asn_range[0] + ordinal

    rows = len(L)
    a_addr = np.zeros(rows, np.uint32)
    z_addr = np.zeros(rows, np.uint32)
    plen = np.zeros(rows, np.int8)
    rail = np.full(rows, -1, np.int16)
    gpu_route = np.zeros(rows, np.uint32)
    gpu_route_len = np.zeros(rows, np.int8)

    # switch-to-switch links
    s = np.flatnonzero(L.a_dev >= n)
    if spec.p2p == "numbered" and len(s):
        base = np.uint32(int(spec.pool("fabric").network_address))
        z_addr[s] = base + 2 * np.arange(len(s), dtype=np.uint32)
        a_addr[s] = z_addr[s] + 1
        plen[s] = 31
    # a switch link's rail: the single rail of its upper end, else of its lower end
    single = np.fromiter((r[0] if len(r) == 1 else -1 for r in rails), np.int16, nsw) if nsw else np.zeros(0, np.int16)
    if len(s):
        up, low = single[L.z_dev[s] - n], single[L.a_dev[s] - n]
        rail[s] = np.where(up >= 0, up, low)

    # GPU links
    g = _gpu_links(fabric)
    if len(g):
        slot, _, rail_block = _gpu_layout(fabric, spec)
        pool = spec.pool("gpus")
        base = np.int64(int(pool.network_address))
        r = (L.a_dev[g] % k).astype(np.int64)
        rail[g] = r
        leaf = L.z_dev[g] - n
        blk = L.plane[g].astype(np.int64) * k + r
        # slot index of each (block, leaf): leaves numbered within their block in switch order
        key = blk * (nsw + 1) + leaf
        uniq, inv = np.unique(key, return_inverse=True)
        inv = inv.reshape(-1)
        ub = uniq // (nsw + 1)
        starts = np.searchsorted(ub, ub, side="left")
        slot_idx = (np.arange(len(uniq)) - starts)[inv]
        slot_base = base + blk * rail_block + slot_idx * slot
        # position of each link within its slot, in port order
        order = np.lexsort((L.z_port[g], key))
        pos = np.empty(len(g), np.int64)
        sorted_key = key[order]
        first = np.searchsorted(sorted_key, sorted_key, side="left")
        pos[order] = np.arange(len(g)) - first
        if spec.gpu_subnet == "link":
            z_addr[g] = (slot_base + 2 * pos).astype(np.uint32)
            a_addr[g] = z_addr[g] + np.uint32(1)
            plen[g] = 31
        else:
            z_addr[g] = (slot_base + 1).astype(np.uint32)
            a_addr[g] = (slot_base + 2 + pos).astype(np.uint32)
            plen[g] = 32 - (slot - 1).bit_length()
        if fabric.arch == "rail-only":
            gpu_route[g] = (base + blk * rail_block).astype(np.uint32)
            gpu_route_len[g] = 32 - (rail_block - 1).bit_length()
        else:
            gpu_route[g] = np.uint32(int(pool.network_address))
            gpu_route_len[g] = pool.prefixlen

    # VRF of the switch ends: the link's rail on shared switches (a link of a shared switch carries one rail)
    vrf_rail = np.full(rows, -1, np.int16)
    if nsw and rows:
        on_shared = shared[L.z_dev - n] | np.where(L.a_dev >= n, shared[np.maximum(L.a_dev - n, 0)], False)
        vrf_rail = np.where(on_shared, rail, -1).astype(np.int16)
    ends = _ends(fabric, a_addr, z_addr, plen, asn, vrf_rail, rail)
    return Addressing(spec, n, k, loopback, asn, a_addr, z_addr, plen, rail, vrf_rail, gpu_route, gpu_route_len, rails, shared, ends)


def _ends(fabric, a_addr, z_addr, plen, asn, vrf_rail, rail) -> Ends:
    """Both switch ends of every switch link (ISLs too) and the switch end of every GPU link, sorted by (switch, port)."""
    L = fabric.cable_table()
    n = fabric.gpus
    nsw = len(fabric.switches)
    rows = np.arange(len(L), dtype=np.int64)
    s = L.a_dev >= n
    # upper ends (every link), lower ends (switch links only)
    sw = np.concatenate([L.z_dev - n, L.a_dev[s] - n])
    port = np.concatenate([L.z_port, L.a_port[s]]).astype(np.int32)
    addr = np.concatenate([z_addr, a_addr[s]])
    peer = np.concatenate([L.a_dev, L.z_dev[s]])
    peer_port = np.concatenate([L.a_port, L.z_port[s]]).astype(np.int32)
    peer_addr = np.concatenate([a_addr, z_addr[s]])
    link = np.concatenate([rows, rows[s]])
    up = np.concatenate([np.zeros(len(L), bool), np.ones(int(s.sum()), bool)])
    order = np.lexsort((port, sw))
    sw, port, addr, peer, peer_port, peer_addr, link, up = (c[order] for c in (sw, port, addr, peer, peer_port, peer_addr, link, up))
    peer_asn = np.where(peer >= n, asn[np.maximum(peer - n, 0)] if nsw else 0, 0).astype(np.int64)
    offsets = np.searchsorted(sw, np.arange(nsw + 1), side="left").astype(np.int64)
    return Ends(sw.astype(np.int64), port, addr, plen[link], peer, peer_port, peer_addr, peer_asn, vrf_rail[link], rail[link], link, up, offsets)


def network_text(addr: int, plen: int) -> str:
    """``a.b.c.d/len`` of the network holding ``addr``."""
    return str(ipaddress.IPv4Network((int(addr), int(plen)), strict=False))


__all__ = ["Addressing", "Ends", "plan", "pin", "gpu_layout", "check", "check_pools", "needs", "ip_text", "cidr_text", "network_text", "POOLS"]
