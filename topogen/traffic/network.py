"""The fabric as a flow network: directed links with capacities, and who is below whom.

Every cable ``i`` of a :class:`~topogen.fabric.model.Fabric` is two directed links,
``2i`` upward (``a`` end to ``z`` end) and ``2i + 1`` downward, each at the
cable's speed (the slower end's, Gb/s; cables are full duplex). Cables are
numbered as :meth:`~topogen.fabric.model.Fabric.cable_table` lists them: the
links, then a leaf pair's inter-switch links (ISLs, ``design: leaf-pair``),
``2i`` from leaf-a to leaf-b and ``2i + 1`` back. An ISL is a *lateral* hop:
it is an upward link of both its leaves (each reaches the other's GPUs
through it), its tier is :attr:`Network.isl_tier` (one past the fabric's
tiers, named ``leaf-leaf``) and its direction ``across``. The HB domain
adds two links per GPU after the cables: ``hb_out(g) = 2C + g`` (what GPU g
sends into its HB domain) and ``hb_in(g) = 2C + N + g`` (what it receives),
each at ``hb_gbps``.

Routing needs to know, for a switch ``u`` and a destination leaf ``d``, whether
``d`` is below ``u`` (a downward path exists) and whether ``u`` still reaches
``d`` at all (up, then down). Both relations are kept as bitsets over the
leaves, one row of ``ceil(leaves/64)`` words per switch: ``below`` is built
from the leaves upward (a switch's row is the OR of its children's rows),
``reach`` from the top downward (its own row OR its parents'). Memory is
``switches x leaves / 8`` bytes: 5 MB for 131,072 GPUs on radix 64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from topogen.fabric.model import Fabric
from topogen.spec.counts import link_tier_name
from topogen.fabric.naming import ISL_LINK, GpuNames
from topogen.fabric.ports import switch_ports


@dataclass
class Network:
    """Directed links of one fabric, the switch adjacency by direction and the leaf bitsets.

    Attributes:
        fabric: the wiring this network was built from.
        capacity: Gb/s of every directed link (cables up/down, then HB out, HB in).
        tier: link tier of every directed link (0 for HB-domain links).
        up_ptr, up_link: CSR of each switch's upward links (to switches), by switch index.
        down_ptr, down_link: CSR of each switch's downward links to switches.
        leaf_of_switch: leaf index of a switch (-1 when it has no GPU link).
        below, reach: bitsets (switches x words, uint64) over leaf indices.
        nic_link: cable index of GPU g's NIC port p, shape (N, ports); -1 when absent.
        host_index: ftree's host order of each (gpu, port): leaves in order, ports in order.
    """

    fabric: Fabric
    capacity: np.ndarray
    tier: np.ndarray
    up_ptr: np.ndarray
    up_link: np.ndarray
    down_ptr: np.ndarray
    down_link: np.ndarray
    leaf_of_switch: np.ndarray
    below: np.ndarray
    reach: np.ndarray
    nic_link: np.ndarray
    host_index: np.ndarray
    hb_gbps: float
    link_head: np.ndarray  # device each directed cable link ends at
    switch_tier: np.ndarray  # tier of each switch
    layered: bool  # every switch-to-switch cable joins adjacent tiers (what spray's factoring needs); False with ISLs
    isl_base: int  # cable number of the first ISL (= len(fabric.links)); ISLs run to ``cables``

    @property
    def gpus(self) -> int:
        return self.fabric.gpus

    @property
    def cables(self) -> int:
        return len(self.fabric.links) + len(self.fabric.isls)

    @property
    def isl_tier(self) -> int:
        """Tier number of the ISLs' directed links: one past the fabric's link tiers (0 stays the HB domain)."""
        return max(self.fabric.tiers, 1) + 1

    @property
    def links(self) -> int:
        return 2 * self.cables + 2 * self.gpus

    def hb_out(self, gpu: np.ndarray) -> np.ndarray:
        return 2 * self.cables + np.asarray(gpu, np.int64)

    def hb_in(self, gpu: np.ndarray) -> np.ndarray:
        return 2 * self.cables + self.gpus + np.asarray(gpu, np.int64)

    def head(self, link: np.ndarray) -> np.ndarray:
        """Device a directed cable link ends at (the ``z`` end going up, the ``a`` end going down)."""
        return self.link_head[link]

    def has_leaf(self, bits: np.ndarray, switch: np.ndarray, leaf: np.ndarray) -> np.ndarray:
        """Whether leaf ``leaf[i]`` is set in row ``switch[i]`` of a bitset (vectorised)."""
        leaf = np.asarray(leaf, np.int64)
        words = bits.reshape(-1)[np.asarray(switch, np.int64) * bits.shape[1] + (leaf >> 6)]
        return ((words >> (leaf & 63).astype(np.uint64)) & np.uint64(1)).astype(bool)

    def link_names(self, links: np.ndarray) -> list[str]:
        """``from:port->to:port`` of directed links, ``hb:<gpu> out`` / ``in`` for HB-domain links."""
        f = self.fabric
        L = f.cable_table()
        gn = GpuNames.of(f.spec)

        def dev(d: int) -> str:
            return gn.name(d) if d < f.gpus else f.switches[d - f.gpus].name

        native = switch_ports(f)

        def port(d: int, p: int) -> str:
            return f"nic{p}" if d < f.gpus else native.at(d - f.gpus, p)

        out = []
        for x in np.asarray(links, np.int64).tolist():
            if x >= 2 * self.cables:
                g = x - 2 * self.cables
                out.append(f"{gn.name(g % f.gpus)} HB {'in' if g >= f.gpus else 'out'}")
                continue
            c, down = divmod(x, 2)
            a, ap, z, zp = int(L.a_dev[c]), int(L.a_port[c]), int(L.z_dev[c]), int(L.z_port[c])
            ends = [f"{dev(a)}:{port(a, ap)}", f"{dev(z)}:{port(z, zp)}"]
            out.append(" -> ".join(ends[::-1] if down else ends))
        return out

    def tier_names(self) -> dict[int, str]:
        """Name of each link tier present (0: the HB domain)."""
        names = {0: "hb-domain"}
        for t in range(1, self.fabric.tiers + 1):
            names[t] = link_tier_name(t)
        if len(self.fabric.isls):
            names[self.isl_tier] = ISL_LINK
        return names

    def direction(self, links: np.ndarray) -> np.ndarray:
        """``up``, ``down``, ``across`` (an ISL) or ``hb`` of directed links."""
        x = np.asarray(links, np.int64)
        isl = (x >= 2 * self.isl_base) & (x < 2 * self.cables)
        return np.where(x >= 2 * self.cables, "hb", np.where(isl, "across", np.where(x % 2 == 1, "down", "up")))


def build(fabric: Fabric, hb_gbps: float) -> Network:
    """The flow network of ``fabric``: capacities, adjacency and bitsets (see the module)."""
    n = fabric.gpus
    S = len(fabric.switches)
    C0 = len(fabric.links)
    L = fabric.cable_table()
    C = len(L)
    speed = np.minimum(L.a_speed, L.z_speed).astype(np.float64)
    capacity = np.concatenate([np.repeat(speed, 2), np.full(2 * n, float(hb_gbps))])
    link_tier = L.tier.astype(np.int8).copy()
    link_tier[C0:] = max(fabric.tiers, 1) + 1  # Network.isl_tier
    tier = np.concatenate([np.repeat(link_tier, 2), np.zeros(2 * n, np.int8)])
    sw_tier = fabric.switch_tiers().astype(np.int64) if S else np.zeros(0, np.int64)

    inter = np.flatnonzero(fabric.links.a_dev >= n)  # switch-to-switch cables (ISLs apart)
    lower, upper = L.a_dev[inter] - n, L.z_dev[inter] - n
    isl = np.arange(C0, C)
    ia, ib = L.a_dev[isl] - n, L.z_dev[isl] - n  # an ISL is an upward link of both its leaves: A -> B is 2i, B -> A 2i + 1
    up_ptr, up_link = _csr(np.concatenate([lower, ia, ib]), np.concatenate([2 * inter, 2 * isl, 2 * isl + 1]), S)
    down_ptr, down_link = _csr(upper, 2 * inter + 1, S)

    gl = np.flatnonzero(L.a_dev < n)  # GPU NIC cables
    leaf_sw = np.unique(L.z_dev[gl] - n)
    leaf_of_switch = np.full(S, -1, np.int64)
    leaf_of_switch[leaf_sw] = np.arange(len(leaf_sw))
    words = max(1, (len(leaf_sw) + 63) // 64)
    below = np.zeros((S, words), np.uint64)
    below[leaf_sw, np.arange(len(leaf_sw)) >> 6] = np.uint64(1) << (np.arange(len(leaf_sw)) & 63).astype(np.uint64)
    top = int(sw_tier.max()) if S else 0
    for t in range(2, top + 1):  # a switch's leaves are its children's
        sel = sw_tier[upper] == t
        _or_rows(below, upper[sel], below[lower[sel]])
    reach = below.copy()
    for t in range(top - 1, 0, -1):  # a switch reaches what its parents reach
        sel = sw_tier[lower] == t
        _or_rows(reach, lower[sel], reach[upper[sel]])
    if len(isl):  # a leaf reaches its partner's GPUs across the ISLs (one lateral hop, never two)
        side = np.concatenate([ia, ib])
        _or_rows(reach, side, below[np.concatenate([ib, ia])])

    ports = int(L.a_port[gl].max()) + 1 if len(gl) else 1
    nic_link = np.full((n, ports), -1, np.int64)
    nic_link[L.a_dev[gl], L.a_port[gl]] = gl
    order = np.lexsort((L.z_port[gl], L.z_dev[gl]))  # ftree numbers hosts leaf by leaf, port by port
    host_index = np.full((n, ports), -1, np.int64)
    host_index[L.a_dev[gl][order], L.a_port[gl][order]] = np.arange(len(gl))
    link_head = np.empty(2 * C, np.int64)
    link_head[0::2], link_head[1::2] = L.z_dev, L.a_dev
    layered = (bool(np.all(sw_tier[upper] == sw_tier[lower] + 1)) if len(inter) else True) and not len(isl)
    return Network(fabric, capacity, tier, up_ptr, up_link, down_ptr, down_link, leaf_of_switch, below, reach, nic_link, host_index, float(hb_gbps), link_head, sw_tier, layered, C0)


def _csr(rows: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Values grouped by row (stable, so port order is kept), with row pointers."""
    order = np.argsort(rows, kind="stable")
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=ptr[1:])
    return ptr, values[order]


def _or_rows(bits: np.ndarray, target: np.ndarray, rows: np.ndarray) -> None:
    """``bits[target[i]] |= rows[i]`` for every i, with repeated targets OR-ed together."""
    if not len(target):
        return
    order = np.argsort(target, kind="stable")
    t = target[order]
    start = np.flatnonzero(np.r_[True, t[1:] != t[:-1]])
    merged = np.bitwise_or.reduceat(rows[order], start, axis=0)
    bits[t[start]] |= merged
