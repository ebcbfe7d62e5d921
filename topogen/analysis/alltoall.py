"""Uniform all-to-all (MoE expert dispatch) on rail-optimized Clos and on rail-only [derived].

An all-to-all among ``K·M`` GPUs (M HB domains of K), ``s`` bytes per ordered
pair, per-GPU egress bandwidths B_S (scale-out NIC) and B_F (HB domain), in
bytes/s (our algebra on the rail-only paper's all-to-all, arXiv 2307.12169):

- NIC bytes per GPU are ``K·(M−1)·s`` on both architectures;
- NVLink bytes per GPU are ``(K−1)·s`` on the Clos and ``(K−1)·M·s`` on
  rail-only, which relays every cross-rail byte through the HB domain (PXN);
- Clos: ``T = max(K(M−1)·s/B_S, (K−1)·s/B_F)`` (the first term whenever M ≥ 2 and B_F ≥ B_S);
- rail-only, relay pipelined: ``T = max(K(M−1)·s/B_S, (K−1)·M·s/B_F)``: no
  overhead while ``B_F/B_S ≥ (K−1)·M / (K·(M−1))``;
- rail-only, store-and-forward (an upper bound): ``T = K(M−1)·s/B_S + (K−1)·M·s/B_F``,
  an overhead of ``(K−1)·M/(K·(M−1)) · B_S/B_F`` over the Clos.

On a leaf pair (``design: leaf-pair``, rail-optimized) the two leaves of a
plane are joined by ``I`` ISLs. Every HB domain has half its GPUs on each leaf
(the A-B-B-A split), so of the NIC bytes half cross the ISLs: with ``N`` GPUs
in groups of ``g``, ``N·(g−K)·s/4`` bytes cross each way per plane against
``I`` links, while each NIC moves ``(g−K)·s``; the Clos time's NIC term is then
multiplied by ``max(1, N/(4I))`` (:func:`isl_factor`): 1 from 2:1 GPU:ISL
ports down (``I ≥ N/4``), ``3/2`` at 3:1 (on a whole pair). Rail-only keeps
each rail on one leaf and has no ISL.

The rail-only paper's abstracts quote 4.1–5.6 % (v3/v4) and 8.2–11.2 % (v5)
overhead from a model that is not public; these bounds do not claim to
reproduce them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np


def moe_bytes_per_pair(tokens_per_gpu: float, top_k: int, d_model: int, activation_bytes: float, group_gpus: int) -> float:
    """s of one MoE dispatch: each GPU sends tokens·top_k·d_model·bytes, spread evenly over the group."""
    return tokens_per_gpu * top_k * d_model * activation_bytes / group_gpus


@dataclass(frozen=True, slots=True)
class AllToAll:
    nic_bytes_per_gpu: float
    nvlink_bytes_per_gpu_clos: float
    nvlink_bytes_per_gpu_rail_only: float
    clos_s: float
    rail_only_pipelined_s: float
    rail_only_serial_s: float
    overhead_pipelined: float | None  # fraction over clos_s; None when clos_s is 0
    overhead_serial: float | None
    hb_ratio_needed: float | None  # B_F/B_S at and above which the pipelined relay costs nothing

    def as_dict(self) -> dict[str, float | None]:
        return asdict(self)


def isl_factor(gpus: int, isls: int) -> float:
    """How much longer a leaf pair's ISLs make an all-to-all's network term: ``max(1, N/(4·I))`` (see the module).

    ``isls`` per plane; 1.0 without ISLs to limit (``isls`` 0 means no leaf pair).
    """
    return max(1.0, gpus / (4 * isls)) if isls else 1.0


def leaf_factor(fabric, group: int) -> float:
    """How much longer an oversubscribed leaf makes the all-to-all's network term, on a generated wiring.

    Groups of ``group`` consecutive GPUs (whole HB domains), every ordered pair
    of a group ``s`` bytes, split evenly over the NIC ports (planes). A leaf
    sends up (and takes down) the bytes of the pairs whose far end is under
    another leaf: on rail-optimized the GPU's own pairs, on rail-only the
    relayed ones (the same-rank GPU of the source's domain carries K pairs to
    each same-rank destination). Sprayed evenly over its uplinks, a leaf needs
    ``pairs_out x s / uplink capacity``; the NIC needs ``(G-K) x s / B_S``. The
    factor is ``max(1, the largest ratio of the two)`` over leaves and
    directions: 1 at 1:1 (uplinks at least the downlinks), and 1 with one
    tier. Only the leaf tier: a spine tier oversubscribed on top is not in it.
    """
    n, k = fabric.gpus, fabric.hb_domain
    if group <= k:
        return 1.0
    L = fabric.links
    sw_tier = fabric.switch_tiers()
    gpu_link = L.a_dev < n
    up = (~gpu_link) & (sw_tier[np.maximum(L.a_dev - n, 0)] == 1)
    up_cap = np.zeros(len(fabric.switches))
    np.add.at(up_cap, L.a_dev[up] - n, L.a_speed[up].astype(float))
    worst = 1.0
    for plane in np.unique(L.plane[gpu_link]).tolist():
        sel = gpu_link & (L.plane == plane)
        gpu, leaf, speed = L.a_dev[sel], L.z_dev[sel] - n, L.a_speed[sel].astype(float)
        leaf_of = np.full(n, -1, np.int64)
        leaf_of[gpu] = leaf
        if (leaf_of < 0).any():
            continue  # a GPU without a port in this plane (dual-homed ports share planes): no closed form here
        g = np.arange(n)
        grp, dom, rank = g // group, g // k, g % k
        # pairs leaving each leaf: count by (group, leaf) and (group, rank, leaf) incidence
        if fabric.arch == "rail-only":  # relay (d, r) -> (d', r), d' != d, same group: K pairs each
            key = (grp * k + rank) * len(fabric.switches) + leaf_of
            same = np.bincount(key, minlength=(n // group) * k * len(fabric.switches))[key]  # GPUs of my (group, rank) under my leaf, me included
            out_pairs = k * ((group // k) - same)  # same-rank GPUs of the group under other leaves (never my own domain: it is me)
        else:  # (d, r) -> any GPU of another domain of the group
            key = grp * len(fabric.switches) + leaf_of
            under = np.bincount(key, minlength=(n // group) * len(fabric.switches))[key]
            key_d = dom * len(fabric.switches) + leaf_of
            mine = np.bincount(key_d, minlength=(n // k) * len(fabric.switches))[key_d]  # GPUs of my domain under my leaf
            out_pairs = (group - k) - (under - mine)  # the group's other-domain GPUs, less those under my leaf
        per_leaf = np.zeros(len(fabric.switches))
        np.add.at(per_leaf, leaf_of, out_pairs.astype(float))
        nic_pairs = group - k
        used = np.flatnonzero(per_leaf > 0)
        if not len(used):
            continue
        if (up_cap[used] <= 0).any():
            return float("inf")
        worst = max(worst, float(np.max(per_leaf[used] * speed.min() / (nic_pairs * up_cap[used]))))
    return worst


def alltoall(hb_domain: int, domains: int, bytes_per_pair: float, scale_out_Bps: float, hb_Bps: float, clos_isl_factor: float = 1.0, rail_only_factor: float = 1.0) -> AllToAll:
    """Completion times and bytes of one uniform all-to-all over ``domains`` HB domains of ``hb_domain`` GPUs.

    ``clos_isl_factor`` (:func:`isl_factor`, or :func:`leaf_factor` of the
    rail-optimized wiring) stretches the rail-optimized network term where the
    ISLs or a leaf's uplinks carry less than the NICs offer; ``rail_only_factor``
    (:func:`leaf_factor` of the rail-only wiring) the rail-only one.
    """
    k, m, s = hb_domain, domains, bytes_per_pair
    nic = k * (m - 1) * s
    nv_clos = (k - 1) * s
    nv_ro = (k - 1) * m * s
    clos = max(nic * clos_isl_factor / scale_out_Bps, nv_clos / hb_Bps)
    piped = max(nic * rail_only_factor / scale_out_Bps, nv_ro / hb_Bps)
    serial = nic * rail_only_factor / scale_out_Bps + nv_ro / hb_Bps if m > 1 else nv_ro / hb_Bps
    over_p = piped / clos - 1 if clos > 0 else None
    over_s = serial / clos - 1 if clos > 0 else None
    need = (k - 1) * m / (k * (m - 1)) if m > 1 else None
    return AllToAll(nic, nv_clos, nv_ro, clos, piped, serial, over_p, over_s, need)
