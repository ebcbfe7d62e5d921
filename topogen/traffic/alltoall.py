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
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from topogen.fabric.model import Fabric
from topogen.traffic.flows import Traffic
from topogen.traffic.network import Network
from topogen.traffic.patterns import Pairs
from topogen.traffic import rates, spray

EXACT_GPUS = 1024


def pairs(fabric: Fabric) -> tuple[Pairs, str]:
    """Every ordered GPU pair (no GPU to itself), and a note saying how the all-to-all is modelled."""
    n = fabric.gpus
    g = np.arange(n, dtype=np.int64)
    src = np.repeat(g, n - 1)
    off = np.tile(np.arange(1, n, dtype=np.int64), n)
    dst = (src + off) % n
    return Pairs(src, dst, np.ones(len(src))), f"all-to-all: every ordered pair of the {n:,} GPUs is a flow"


def aggregate(net: Network) -> tuple[Traffic, np.ndarray, np.ndarray, list[str], str]:
    """The all-to-all aggregated by leaf pair (see the module), routed by spray.

    Returns the traffic (one flow per leaf pair and port, then one per domain
    group for the HB-only pairs), the capacity of every link with the bundles
    appended, each flow's GPU pairs, the bundles' names, and the note.
    """
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
    sig = np.asarray([hash(gx.indices[gx.indptr[i] : gx.indptr[i + 1]].tobytes()) for i in range(leaf_count)], dtype=object)
    _, group_of_leaf = np.unique(sig.astype(str), return_inverse=True)
    # every domain belongs to the group of the leaves it is under (port 0's leaf decides)
    first = np.full(n // k, -1, np.int64)
    first[dom[g_idx[::-1]]] = group_of_leaf[leaf_of[::-1]]
    groups = int(group_of_leaf.max()) + 1 if leaf_count else 0
    group_domains = np.bincount(first[first >= 0], minlength=groups)
    hb_out = base + 2 * leaf_count + np.arange(groups)
    hb_in = hb_out + groups
    cap = np.concatenate([net.capacity, np.zeros(2 * leaf_count + 2 * groups)])
    rows_d, cols_d, vals_d, weights, counts, src_leaf, dst_leaf, aggr_port = [], [], [], [], [], [], [], []
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
        weights.append(w / ports)
        counts.append(w)
        src_leaf.append(ls)
        dst_leaf.append(ld)
        aggr_port.append(np.full(len(ls), p))
        nflow += len(ls)
    ls, ld = np.concatenate(src_leaf), np.concatenate(dst_leaf)
    leaf_sw = np.flatnonzero(net.leaf_of_switch >= 0)
    levels, dead = spray.levels(net, leaf_sw[ls], ld)
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
    alive = np.concatenate([~dead, intra > 0])
    network = np.concatenate([np.ones(nflow, bool), np.zeros(groups, bool)])
    line = float(np.median(np.where(gl >= 0, speed[np.maximum(gl, 0)], 0.0).sum(axis=1)))
    # offered: what each pair would get with only its sender's bundle to share
    nic_share = np.bincount(ls, weights=np.concatenate(counts), minlength=leaf_count)
    offered = np.concatenate([np.concatenate(counts) * cap[base + ls] / np.maximum(nic_share[ls], 1), cap[hb_out] * (intra > 0)])
    t = Traffic(direct, factors, weight, offered, np.arange(total), np.where(network, ports, 1), np.full(total, line), alive, network)
    names = [f"leaf bundle {i} NIC up" for i in range(leaf_count)] + [f"leaf bundle {i} NIC down" for i in range(leaf_count)] + [f"domain group {i} HB out" for i in range(groups)] + [f"domain group {i} HB in" for i in range(groups)]
    note = (
        f"all-to-all aggregated by leaf pair: {nflow:,} flows (a leaf pair per NIC port) stand for {int(count[:nflow].sum()):,} GPU pairs across the network"
        f" and {groups:,} for the {int(intra.sum()):,} pairs inside HB domains; a leaf's NIC ports and its domains' HB links share as bundles; routed by spray"
    )
    return t, cap, count, names, note
