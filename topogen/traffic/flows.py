"""From GPU pairs to flows on the network: NIC ports, queue pairs, the HB-domain relay, and their links.

A pair of GPUs in one HB domain talks over the HB domain only (the sender's
HB egress, the receiver's HB ingress). Any other pair crosses the scale-out
network, one flow per NIC port (port ``p`` to port ``p``, as NCCL matches
rails and planes) and, under ``ecmp``, ``flows_per_pair`` queue pairs per
port, each hashed on its own. On rail-only, a pair on different ranks first
crosses the HB domain to the GPU of the destination's rank in the source's
domain (PXN), which then sends on its rail.

A pair moves its bytes split evenly over its flows, so it gets ``flows x``
its slowest flow's rate (:attr:`Traffic.pair_rate`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from topogen.traffic.network import Network
from topogen.traffic.patterns import Pairs
from topogen.traffic import lft, rates, spray
from topogen.traffic.routing import mix, route


@dataclass
class Traffic:
    """Flows of one pattern on one network, routed: the incidence and what each flow belongs to."""

    direct: sp.csr_matrix  # flows x links
    factors: list  # (group per flow, groups x links) pairs: the sprayed middle links (:mod:`.spray`)
    weight: np.ndarray  # max-min weight of each flow (its pair's relative size)
    offered: np.ndarray  # Gb/s each flow would send with only its own NIC (or HB) port to share
    pair: np.ndarray  # pair index of each flow
    subflows: np.ndarray  # flows per pair
    line_gbps: np.ndarray  # NIC line rate of each pair's sender, all ports (Gb/s)
    alive: np.ndarray  # flows with a path
    network: np.ndarray  # pairs that cross the scale-out network (not HB-only)

    @property
    def flows(self) -> int:
        return self.direct.shape[0]


def build(net: Network, pairs: Pairs, routing: str, flows_per_pair: int = 1, key: int = 0, tables: lft.Tables | None = None) -> Traffic:
    """Route ``pairs`` on ``net`` (see the module); vectorised over pairs, ports and queue pairs.

    ``tables`` (OpenSM's LFTs, :mod:`.lft`) route an ``opensm`` routing; with
    LMC > 0 its queue pairs spread over each destination's LIDs.
    """
    f = net.fabric
    n, k = f.gpus, f.hb_domain
    src, dst = pairs.src, pairs.dst
    same = src // k == dst // k
    relay = np.where((f.arch == "rail-only") & ~same & (src % k != dst % k), (src // k) * k + dst % k, -1)
    sender = np.where(relay >= 0, relay, src)
    ports = net.nic_link.shape[1]
    q = flows_per_pair if routing == "ecmp" or (tables is not None and tables.choice.lmc) else 1
    sub = ports * q

    # HB-only pairs: one flow each
    hb_pairs = np.flatnonzero(same)
    # network pairs: sub flows each (pair-major, then port, then queue pair)
    np_idx = np.flatnonzero(~same)
    fp = np.repeat(np_idx, sub)
    port = np.tile(np.repeat(np.arange(ports), q), len(np_idx))
    qp = np.tile(np.arange(q), len(np_idx) * ports)
    s_cab = net.nic_link[sender[fp], port]
    d_cab = net.nic_link[dst[fp], port]
    alive = (s_cab >= 0) & (d_cab >= 0)
    s_cab, d_cab = np.where(alive, s_cab, 0), np.where(alive, d_cab, 0)
    L = f.links
    src_sw = L.z_dev[s_cab] - n
    dst_leaf = net.leaf_of_switch[L.z_dev[d_cab] - n]
    nf = len(fp)

    rows = [np.arange(nf), np.arange(nf)]
    cols = [2 * s_cab, 2 * d_cab + 1]
    vals = [np.ones(nf), np.ones(nf)]
    rel = np.flatnonzero(relay[fp] >= 0)
    rows += [rel, rel]
    cols += [net.hb_out(src[fp[rel]]), net.hb_in(relay[fp[rel]])]
    vals += [np.ones(len(rel)), np.ones(len(rel))]
    factors = []
    h = int(same.sum())
    if routing == "spray":  # routed once per leaf pair
        nsw = max(len(net.leaf_of_switch), 1)
        uk, cls = np.unique(src_sw * nsw + dst_leaf, return_inverse=True)
        levels, dead = spray.levels(net, uk // nsw, uk % nsw)
        cls_all = np.concatenate([cls, np.full(h, -1, np.int64)])
        for lv in levels:
            factors.append(rates.factor(np.where(cls_all >= 0, lv.group[np.maximum(cls_all, 0)], -1), lv.matrix))
        alive &= ~dead[cls]
    elif tables is not None:
        seg = lft.walk(tables, sender[fp], port, dst[fp], qp, 2 * d_cab + 1)
        rows.append(seg.row)
        cols.append(seg.link)
        vals.append(seg.frac)
        alive &= ~seg.dead
    else:
        fkey = mix(mix(sender[fp].astype(np.uint64) * np.uint64(n) + dst[fp].astype(np.uint64)) ^ (port * 1024 + qp).astype(np.uint64) ^ mix(np.full(nf, key, np.uint64)))
        host = net.host_index[dst[fp], port]
        seg = route(net, src_sw, dst_leaf, routing, key=fkey, host=host)
        rows.append(seg.row)
        cols.append(seg.link)
        vals.append(seg.frac)
        alive &= ~seg.dead
    # HB-only flows come after the network flows
    hrows = nf + np.arange(h)
    rows += [hrows, hrows]
    cols += [net.hb_out(src[hb_pairs]), net.hb_in(dst[hb_pairs])]
    vals += [np.ones(h), np.ones(h)]
    total = nf + h
    direct = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(total, net.links))
    pair = np.concatenate([fp, hb_pairs])
    alive = np.concatenate([alive, np.ones(h, bool)])
    subflows = np.where(same, 1, sub)
    line = np.zeros(n)
    speed = net.capacity[0 : 2 * net.cables : 2]
    gl = net.nic_link
    line = np.where(gl >= 0, speed[np.maximum(gl, 0)], 0.0).sum(axis=1)
    weight = pairs.size[pair] / np.maximum(subflows[pair], 1)
    first = np.concatenate([2 * s_cab, net.hb_out(src[hb_pairs])])  # the port each flow leaves by (a relayed flow: the relay's NIC)
    share = np.bincount(first, weights=alive.astype(float), minlength=net.links)
    offered = np.where(alive, net.capacity[first] / np.maximum(share[first], 1), 0.0)
    sender_line = np.where(line[src] > 0, line[src], line[sender])  # a relayed pair from a GPU whose own NIC is down leaves by the relay's
    return Traffic(direct, factors, weight, offered, pair, subflows, sender_line, alive, ~same)
