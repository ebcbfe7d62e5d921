"""The all-to-all of an MoE dispatch: every GPU sends the same bytes to every other GPU.

Up to :data:`EXACT_GPUS` GPUs every ordered GPU pair is a flow (:func:`pairs`).
Beyond, a flow per pair is too many (1.7e10 at 131,072 GPUs), and the
all-to-all is **aggregated by leaf pair** (:func:`aggregate`): for each NIC
port, one flow per ordered pair of leaves carries every GPU pair between them,
with weight the number of those pairs; the NIC ports under a leaf act as one
bundle (their summed capacity, up and down), and the HB links of the domains
under a leaf as one bundle per direction. Routed by spray, this is exact for a
uniform all-to-all on a fabric where every GPU under a leaf is cabled alike,
because every GPU pair between two leaves then gets the same rate; what it
cannot show is a single GPU's hot spot (one dead NIC cable is spread over its
leaf's bundle).

On rail-only a pair on different ranks goes through the HB domain first, to
the GPU of the destination's rank (PXN): the leaf pair's flow then carries
K GPU pairs per pair of domains, (K-1)/K of them through the HB bundles.

Where leaf pairs are still too many (more than :data:`LEAF_PAIRS` per NIC
port; 16.8 M at 131,072 GPUs on radix 64, rail-optimized), the all-to-all is
**aggregated by leaf group**: leaves cabled alike (the same parent switches,
as many links to each, the same GPUs per NIC port) act as one. The fabric is
contracted (each group's GPU cables and uplinks move onto one leaf), so a
group pair's flow sprays evenly over every uplink of its source leaves and
every downlink into its destination leaves: the average of its leaf pairs'
paths, which is each of them on such a fabric. Pairs between two leaves of
one group turn at their common parents: one flow per group and port, evenly
on the group's uplinks and back down. Link numbers stay the fabric's own, so
the busiest links are named as cabled. Flows grow with groups squared (128
groups at 131,072 GPUs), memory with the cables.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from dataclasses import replace

from topogen.fabric.model import Fabric
from topogen.traffic.flows import Traffic
from topogen.traffic import network as network_mod
from topogen.traffic.network import Network
from topogen.traffic.patterns import Pairs
from topogen.traffic import rates, spray
from topogen.util.errors import InputError, Problem

EXACT_GPUS = 1024
LEAF_PAIRS = 1 << 14  # leaf pairs per NIC port beyond which leaves are grouped (16,384: 4,096 GPUs on radix 64 stay by leaf pair).
# Not higher: with a failure, the leaf pairs whose paths cross the failed switch's neighbours are sprayed one by one;
# by leaf pair, 16,384 GPUs (262,144 pairs) with a spine down took 12 GB; by leaf group, 100 MB and the same figures.
AGGREGATIONS = ("gpu-pair", "leaf-pair", "leaf-group-pair")


MAX_GROUP_PAIRS = EXACT_GPUS * (EXACT_GPUS - 1)  # an EP all-to-all is routed pair by pair up to as many pairs as the exact global one


def check_group(group: int, gpus: int, hb_domain: int) -> None:
    """An EP group tiles the GPUs: it divides N, and is whole HB domains or divides one; and its pairs can be routed one by one."""
    if gpus % group or (group >= hb_domain and group % hb_domain) or (group < hb_domain and hb_domain % group):
        raise InputError([Problem("pattern", f"an all-to-all group of {group:,} GPUs does not tile {gpus:,} GPUs in HB domains of {hb_domain}", f"use a divisor of {hb_domain} or a multiple of it dividing {gpus:,}")])
    if gpus * (group - 1) > MAX_GROUP_PAIRS:
        raise InputError([Problem("pattern", f"alltoall:{group} on {gpus:,} GPUs is {gpus * (group - 1):,} GPU pairs, more than the {MAX_GROUP_PAIRS:,} routed one by one", "simulate a smaller cluster with the same leaves (the groups are alike), or the global alltoall (aggregated at scale)")])


def group_pairs(fabric: Fabric, group: int) -> tuple[Pairs, str]:
    """Every ordered pair inside each group of ``group`` consecutive GPUs, and the note."""
    n = fabric.gpus
    check_group(group, n, fabric.hb_domain)
    g = np.arange(n, dtype=np.int64)
    src = np.repeat(g, group - 1)
    off = np.tile(np.arange(1, group, dtype=np.int64), n)
    base = (src // group) * group
    dst = base + (src - base + off) % group
    return Pairs(src, dst, np.ones(len(src))), f"all-to-all in EP groups of {group:,} consecutive GPUs ({n // group:,} groups): every ordered pair of a group is a flow"


def pairs(fabric: Fabric) -> tuple[Pairs, str]:
    """Every ordered GPU pair (no GPU to itself), and a note saying how the all-to-all is modelled."""
    n = fabric.gpus
    g = np.arange(n, dtype=np.int64)
    src = np.repeat(g, n - 1)
    off = np.tile(np.arange(1, n, dtype=np.int64), n)
    dst = (src + off) % n
    return Pairs(src, dst, np.ones(len(src))), f"all-to-all: every ordered pair of the {n:,} GPUs is a flow"


def leaf_pairs(net: Network) -> int:
    """Leaf pairs with traffic per NIC port, summed over ports (rail-only: only leaves that serve one rank talk)."""
    f = net.fabric
    n, k = f.gpus, f.hb_domain
    gl = net.nic_link
    total = 0
    for p in range(gl.shape[1]):
        gp = np.flatnonzero(gl[:, p] >= 0)
        lp = net.leaf_of_switch[f.links.z_dev[gl[gp, p]] - n]
        if f.arch == "rail-only":
            y = sp.csr_matrix((np.ones(len(gp)), (lp, gp % k)), shape=(max(len(net.leaf_of_switch), 1), k))
            y.data[:] = 1
            total += int((np.asarray(y.sum(axis=0)).ravel() ** 2).sum())
        else:
            total += len(np.unique(lp)) ** 2
    return total


def leaf_groups(net: Network) -> np.ndarray:
    """Group of every leaf (by leaf index): leaves with the same parents (and links to each) and GPUs per NIC port.

    A leaf without uplinks is a group of its own (two of them have no path between them).
    """
    f = net.fabric
    n = f.gpus
    leaf_sw = np.flatnonzero(net.leaf_of_switch >= 0)
    parents = net.link_head[net.up_link] - n
    deg = np.diff(net.up_ptr)
    gl = net.nic_link
    has = gl >= 0
    g_idx, p_idx = np.nonzero(has)
    per_port = np.zeros((len(leaf_sw), gl.shape[1]), np.int64)
    np.add.at(per_port, (net.leaf_of_switch[f.links.z_dev[gl[g_idx, p_idx]] - n], p_idx), 1)
    keys = []
    for i, s in enumerate(leaf_sw.tolist()):
        ps = np.sort(parents[net.up_ptr[s] : net.up_ptr[s + 1]])
        keys.append((ps.tobytes(), per_port[i].tobytes()) if deg[s] else (b"", i))
    group = _number(keys)
    # the HB bundles need groups whose domains are the same or apart, and every leaf of a group must see the
    # same pairs: split groups by the kinds of domain under them (a kind: how many GPUs it has under each group)
    leaf_of_gpu = net.leaf_of_switch[f.links.z_dev[gl[g_idx, p_idx]] - n]
    dom = g_idx // f.hb_domain
    while True:
        by_dom = sp.csr_matrix((np.ones(len(dom)), (dom, group[leaf_of_gpu])), shape=(n // f.hb_domain, int(group.max()) + 1))
        by_dom.sum_duplicates()
        kind = _number([_row(by_dom, d) for d in range(by_dom.shape[0])])
        by_leaf = sp.csr_matrix((np.ones(len(dom)), (leaf_of_gpu, kind[dom])), shape=(len(leaf_sw), int(kind.max()) + 1))
        by_leaf.sum_duplicates()
        finer = _number([(int(group[i]), _row(by_leaf, i)) for i in range(len(leaf_sw))])
        if finer.max() == group.max():
            return group
        group = finer


def _row(m: sp.csr_matrix, i: int) -> tuple[bytes, bytes]:
    """Row ``i`` of a CSR matrix with sorted indices, as a hashable key: its columns and their counts."""
    a, b = m.indptr[i], m.indptr[i + 1]
    return m.indices[a:b].tobytes(), m.data[a:b].tobytes()


def _number(keys: list) -> np.ndarray:
    """Ids of keys in order of first appearance (equal keys, equal ids)."""
    seen: dict = {}
    return np.asarray([seen.setdefault(x, len(seen)) for x in keys], np.int64)


def _contract(net: Network, group: np.ndarray) -> Network:
    """The network with each leaf group's GPU cables and uplinks moved onto its first leaf (cable numbers kept)."""
    f = net.fabric
    n = f.gpus
    L = f.links
    leaf_sw = np.flatnonzero(net.leaf_of_switch >= 0)
    first = np.full(int(group.max()) + 1, -1, np.int64)
    first[group[::-1]] = leaf_sw[::-1]
    to = np.arange(len(f.switches), dtype=np.int64)
    to[leaf_sw] = first[group]
    z = np.where(L.a_dev < n, n + to[np.maximum(L.z_dev - n, 0)], L.z_dev)
    a = np.where(L.a_dev >= n, n + to[np.maximum(L.a_dev - n, 0)], L.a_dev)
    links = replace(L, a_dev=a.astype(L.a_dev.dtype), z_dev=z.astype(L.z_dev.dtype))
    return network_mod.build(replace(f, links=links), net.hb_gbps)


def _same_leaf_pairs(x: sp.csr_matrix, rail_only: bool, k: int, n: int) -> np.ndarray:
    """Per leaf, the GPU pairs of the all-to-all with both ends under it (on one port), from GPU x leaf incidence ``x``."""
    if rail_only:  # (a, j) -> (b, j), a != b, K pairs each: K * (sum_j y_j^2 - c)
        y = (x.T @ sp.csr_matrix((np.ones(n), (np.arange(n), np.arange(n) % k)), shape=(n, k))).tocsr()
    else:  # c^2 minus the pairs of one domain
        y = (x.T @ sp.csr_matrix((np.ones(n), (np.arange(n), np.arange(n) // k)), shape=(n, n // k))).tocsr()
    sq = np.asarray(y.multiply(y).sum(axis=1)).ravel()
    c = np.asarray(x.sum(axis=0)).ravel()
    return k * (sq - c) if rail_only else c * c - sq


def aggregate(net: Network, max_leaf_pairs: int = LEAF_PAIRS) -> tuple[Traffic, np.ndarray, np.ndarray, list[str], str, str]:
    """The all-to-all aggregated by leaf pair, or by leaf group beyond ``max_leaf_pairs`` (see the module), routed by spray.

    Returns the traffic (one flow per leaf (group) pair and port, then one per
    leaf group and port for the pairs between its leaves, then one per domain
    group for the HB-only pairs), the capacity of every link with the bundles
    appended, each flow's GPU pairs, the bundles' names, the note, and the
    aggregation (``leaf-pair`` or ``leaf-group-pair``).
    """
    if leaf_pairs(net) <= max_leaf_pairs:
        return (*_aggregate(net), "leaf-pair")
    group = leaf_groups(net)
    return (*_aggregate(_contract(net, group), net, group), "leaf-group-pair")


def _across_group(net: Network, across: list[np.ndarray], leaf: list[np.ndarray], nflow: int, rows_d: list, cols_d: list, vals_d: list, weights: list, counts: list, src_leaf: list, dst_leaf: list, ports: int, base: int, leaf_count: int, rail_only: bool, k: int, hb_out: np.ndarray, hb_in: np.ndarray, domain_group: np.ndarray) -> int:
    """Append one flow per leaf group and port for the pairs between two of its leaves; returns the flow count.

    Such a pair goes up any uplink of its source leaf and turns at the group's
    common parents, down to its destination: over the group's pairs, evenly on
    every uplink of the group and every downlink into it (spray's split).
    """
    for w, g in zip(across, leaf):
        keep = w > 0.5
        w, g = w[keep], g[keep]
        if not len(g):
            continue
        sw = np.flatnonzero(net.leaf_of_switch >= 0)[g]
        deg = net.up_ptr[sw + 1] - net.up_ptr[sw]
        i = nflow + np.arange(len(g))
        r = np.repeat(i, deg)
        start = np.cumsum(deg) - deg
        up = net.up_link[np.repeat(net.up_ptr[sw], deg) + np.arange(len(r)) - np.repeat(start, deg)]
        share = np.repeat(1.0 / np.maximum(deg, 1), deg)
        rows_d += [i, i, r, r]
        cols_d += [base + g, base + leaf_count + g, up, up + 1]
        vals_d += [np.ones(len(g)), np.ones(len(g)), share, share]
        if rail_only:
            rows_d += [i, i]
            cols_d += [hb_out[domain_group[g]], hb_in[domain_group[g]]]
            vals_d += [np.full(len(g), (k - 1) / k), np.full(len(g), (k - 1) / k)]
        weights.append(w / ports)
        counts.append(w)
        src_leaf.append(g)
        dst_leaf.append(g)
        nflow += len(g)
    return nflow


def _aggregate(net: Network, fine: Network | None = None, group: np.ndarray | None = None) -> tuple[Traffic, np.ndarray, np.ndarray, list[str], str]:
    """:func:`aggregate` on ``net``; with ``fine`` (the uncontracted network) ``net`` is its contraction by ``group``."""
    f = net.fabric
    n, k = f.gpus, f.hb_domain
    L = f.links
    rail_only = f.arch == "rail-only"
    gl = net.nic_link
    ports = gl.shape[1]
    speed = net.capacity[0 : 2 * net.cables : 2]
    base = net.links
    leaf_count = int(net.leaf_of_switch.max()) + 1 if len(net.leaf_of_switch) else 0
    dom = np.arange(n) // k
    # domain group of each leaf: the domains under it (one group per distinct set)
    has = gl >= 0
    g_idx, p_idx = np.nonzero(has)
    leaf_of = net.leaf_of_switch[L.z_dev[gl[g_idx, p_idx]] - n]
    gx = sp.csr_matrix((np.ones(len(g_idx)), (leaf_of, dom[g_idx])), shape=(leaf_count, n // k))
    gx.data[:] = 1
    gx.sum_duplicates()
    seen: dict[bytes, int] = {}  # numbered in leaf order: the same fabric gives the same names in every run
    group_of_leaf = np.asarray([seen.setdefault(gx.indices[gx.indptr[i] : gx.indptr[i + 1]].tobytes(), len(seen)) for i in range(leaf_count)], np.int64)
    # every domain belongs to the group of the leaves it is under (port 0's leaf decides)
    first = np.full(n // k, -1, np.int64)
    first[dom[g_idx[::-1]]] = group_of_leaf[leaf_of[::-1]]
    groups = int(group_of_leaf.max()) + 1 if leaf_count else 0
    group_domains = np.bincount(first[first >= 0], minlength=groups)
    hb_out = base + 2 * leaf_count + np.arange(groups)
    hb_in = hb_out + groups
    cap = np.concatenate([net.capacity, np.zeros(2 * leaf_count + 2 * groups)])
    cap[2 * gl[has]] = cap[2 * gl[has] + 1] = 0.0  # the NIC cables and a GPU's own HB links carry nothing: their bundles do
    cap[2 * net.cables : base] = 0.0
    rows_d, cols_d, vals_d, weights, counts, src_leaf, dst_leaf, aggr_port = [], [], [], [], [], [], [], []
    intra_w: list[np.ndarray] = []
    intra_leaf: list[np.ndarray] = []
    nflow = 0
    for p in range(ports):
        gp = np.flatnonzero(gl[:, p] >= 0)
        lp = net.leaf_of_switch[L.z_dev[gl[gp, p]] - n]
        np.add.at(cap, base + lp, speed[gl[gp, p]])
        np.add.at(cap, base + leaf_count + lp, speed[gl[gp, p]])
        X = sp.csr_matrix((np.ones(len(gp)), (gp, lp)), shape=(n, leaf_count))
        if rail_only:  # (a, j) -> (b, j), a != b, each carrying K GPU pairs
            R = sp.csr_matrix((np.ones(n), (np.arange(n), np.arange(n) % k)), shape=(n, k))
            m = (X.T @ R) @ (R.T @ X) - X.T @ X
            m = m * k
        else:  # any GPU to any GPU of another domain
            D = sp.csr_matrix((np.ones(n), (np.arange(n), dom)), shape=(n, n // k))
            c = np.asarray(X.sum(axis=0)).ravel()
            m = sp.csr_matrix(np.outer(c, c)) - (X.T @ D) @ (D.T @ X)
        m = sp.coo_matrix(m)
        keep = m.data > 0.5
        ls, ld, w = m.row[keep], m.col[keep], m.data[keep]
        i = nflow + np.arange(len(ls))
        rows_d += [i, i]
        cols_d += [base + ls, base + leaf_count + ld]
        vals_d += [np.ones(len(ls)), np.ones(len(ls))]
        if rail_only:  # the relayed (K-1)/K cross the source group's HB bundles
            rel = (k - 1) / k
            grp = group_of_leaf[ls]
            rows_d += [i, i]
            cols_d += [hb_out[grp], hb_in[grp]]
            vals_d += [np.full(len(ls), rel), np.full(len(ls), rel)]
        if fine is not None:  # a group's own pair splits: pairs under one leaf stay there, the rest cross the group's parents
            gp_f = np.flatnonzero(fine.nic_link[:, p] >= 0)
            lp_f = fine.leaf_of_switch[fine.fabric.links.z_dev[fine.nic_link[gp_f, p]] - n]
            x_f = sp.csr_matrix((np.ones(len(gp_f)), (gp_f, lp_f)), shape=(n, len(group)))
            under = np.bincount(group, weights=_same_leaf_pairs(x_f, rail_only, k, n), minlength=leaf_count)
            diag = ls == ld
            across = np.where(diag, w - under[ls], 0.0)
            w = np.where(diag, under[ls], w)
            intra_w.append(across[diag])
            intra_leaf.append(ls[diag])
        weights.append(w / ports)
        counts.append(w)
        src_leaf.append(ls)
        dst_leaf.append(ld)
        aggr_port.append(np.full(len(ls), p))
        nflow += len(ls)
    ls, ld = np.concatenate(src_leaf), np.concatenate(dst_leaf)
    live = np.concatenate(counts) > 0.5
    leaf_sw = np.flatnonzero(net.leaf_of_switch >= 0)
    levels, dead = spray.levels(net, leaf_sw[ls], ld)
    if fine is not None:
        nflow = _across_group(net, intra_w, intra_leaf, nflow, rows_d, cols_d, vals_d, weights, counts, src_leaf, dst_leaf, ports, base, leaf_count, rail_only, k, hb_out, hb_in, group_of_leaf)
        extra_n = nflow - len(ls)
        ls, ld = np.concatenate(src_leaf), np.concatenate(dst_leaf)
        dead = np.concatenate([dead, np.zeros(extra_n, bool)])
        live = np.concatenate([live, np.ones(extra_n, bool)])
        for lv in levels:
            lv.group = np.concatenate([lv.group, np.full(extra_n, -1, np.int64)])
    none = np.full(groups, -1, np.int64)
    factors = [rates.factor(np.concatenate([lv.group, none]), sp.csr_matrix((lv.matrix.data, lv.matrix.indices, lv.matrix.indptr), shape=(lv.matrix.shape[0], len(cap)))) for lv in levels]
    # HB-only pairs: K(K-1) per domain, a flow per group
    hi = nflow + np.arange(groups)
    rows_d += [hi, hi]
    cols_d += [hb_out, hb_in]
    vals_d += [np.ones(groups), np.ones(groups)]
    intra = (k * (k - 1) * group_domains).astype(np.float64)
    cap[hb_out] = group_domains * k * net.hb_gbps
    cap[hb_in] = group_domains * k * net.hb_gbps
    total = nflow + groups
    direct = sp.csr_matrix((np.concatenate(vals_d), (np.concatenate(rows_d), np.concatenate(cols_d))), shape=(total, len(cap)))
    weight = np.concatenate([np.concatenate(weights), intra])
    count = np.concatenate([np.concatenate(counts), intra])
    alive = np.concatenate([~dead & live, intra > 0])
    network = np.concatenate([live, np.zeros(groups, bool)])
    line = float(np.median(np.where(gl >= 0, speed[np.maximum(gl, 0)], 0.0).sum(axis=1)))
    # offered: what each pair would get with only its sender's bundle to share
    nic_share = np.bincount(ls, weights=np.concatenate(counts), minlength=leaf_count)
    offered = np.concatenate([np.concatenate(counts) * cap[base + ls] / np.maximum(nic_share[ls], 1), cap[hb_out] * (intra > 0)])
    t = Traffic(direct, factors, weight, offered, np.arange(total), np.where(network, ports, 1), np.full(total, line), alive, network)
    if fine is None:
        names = [f"leaf bundle {i} NIC up" for i in range(leaf_count)] + [f"leaf bundle {i} NIC down" for i in range(leaf_count)]
        note = (
            f"all-to-all aggregated by leaf pair: {nflow:,} flows (a leaf pair per NIC port) stand for {int(count[:nflow].sum()):,} GPU pairs across the network"
            f" and {groups:,} for the {int(intra.sum()):,} pairs inside HB domains; a leaf's NIC ports and its domains' HB links share as bundles; routed by spray"
        )
    else:
        size = np.bincount(group, minlength=leaf_count)
        first = [f.switches[s].name for s in leaf_sw.tolist()]
        names = [f"leaf group {i} ({first[i]} +{size[i] - 1} alike) NIC {d}" for d in ("up", "down") for i in range(leaf_count)]
        note = (
            f"all-to-all aggregated by leaf group: the {len(group):,} leaves fall into {leaf_count:,} groups cabled alike (same parents, same GPUs per NIC port);"
            f" {nflow:,} flows (a group pair per NIC port, and the pairs between two leaves of one group) stand for {int(count[:nflow].sum()):,} GPU pairs across the network"
            f" and {groups:,} for the {int(intra.sum()):,} pairs inside HB domains; a group's NIC ports and its domains' HB links share as bundles; routed by spray"
        )
    names += [f"domain group {i} HB out" for i in range(groups)] + [f"domain group {i} HB in" for i in range(groups)]
    return t, cap, count, names, note
