"""Check 6, failure impact (info): what one switch or one cable down costs.

Ids: ``failure.switch`` / ``failure.link``: for the busiest switch of each
tier and one cable of each tier (and one inter-switch link of a leaf pair, link
``leaf-leaf``): GPUs cut off (every NIC port lost), GPUs degraded
(some ports lost: another plane or a dual-homed port remains) and the bandwidth
they lose, capacity lost per tier, in the fabric and in the failed plane.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from topogen.checks.graphs import unique
from topogen.checks.planes import PlaneGraph
from topogen.checks.wire import Wire
from topogen.fabric.naming import ISL_LINK
from topogen.spec.counts import link_tier_name, tier_role


def check(w: Wire, graph: PlaneGraph) -> None:
    """Fail the busiest switch of each tier, then one cable of each tier; count what GPUs lose.

    A GPU's bandwidth is the Gb/s of its NIC cables that still reach the main
    part of their plane (its rail in rail-only). A GPU is **cut off** only when
    all of them are gone (every plane, every homed port); it is **degraded**
    when it keeps some. Figures are the change against the intact wiring.
    Capacity lost is per link tier: as a fraction of that tier's Gb/s in the
    whole fabric, and in the failed element's plane. In both architectures a
    GPU that loses its NIC path can still reach others by forwarding through
    its HB domain.
    """
    n, S = w.n, w.S
    base = graph.base_cut()
    top = int(w.hi_t.max(initial=0))
    # capacity classes: link tier t (1 .. top), and top + 1 for a leaf pair's ISLs (named ISL_LINK)
    cls = np.where(w.isl, top + 1, w.hi_t) if w.isl.any() else w.hi_t
    names = {t: link_tier_name(t) for t in range(1, top + 1)} | {top + 1: ISL_LINK}
    tier_cap = np.bincount(cls[w.adj], weights=w.speed[w.adj], minlength=top + 2)
    planes = max(w.planes, 1)
    plane_cap = np.zeros((planes, top + 2))
    for p in range(planes):
        sel = w.adj & (w.plane == p)
        plane_cap[p] = np.bincount(cls[sel], weights=w.speed[sel], minlength=top + 2)
    ends = w.sw_cables
    gcab = (w.lo < n) & (w.hi >= n)
    g_node = graph.u  # the GPU-plane node of a GPU cable

    def bandwidth(keep: np.ndarray, cut: np.ndarray) -> np.ndarray:
        sel = gcab & keep & ~cut[np.minimum(g_node, len(cut) - 1)]
        return np.bincount(w.lo[sel], weights=w.speed[sel], minlength=n)

    bw0 = bandwidth(np.ones(len(w.lo), bool), base)
    att_cable = np.full(graph.G, -1, np.int64)  # the one cable of each attached GPU-plane node
    att_cable[graph.att_node] = graph.att_idx

    def lost_cables(rm: np.ndarray, plane: int) -> np.ndarray | None:
        """GPU cables whose bandwidth the failure takes: removed, or of a GPU-plane node it cuts off (None: a tie, see PlaneGraph.parts)."""
        cut = graph.cut_after(rm, plane)
        if cut is None:
            return None
        cut = cut[~base[cut]]  # newly cut off; a node cut off before lost nothing now
        via = [rm[gcab[rm]], att_cable[cut]]
        core = cut[att_cable[cut] < 0]
        if len(core):  # a node with several cables loses all of them
            via.append(np.flatnonzero(gcab & np.isin(g_node, core)))
        c = unique(np.concatenate(via))
        c = c[c >= 0]
        return c[~base[g_node[c]]]

    def impact(rm: np.ndarray, plane: int) -> dict[str, Any]:
        lost_c = lost_cables(rm, plane)
        if lost_c is None:  # the whole plane-expanded graph, as the reference does it
            remove = np.zeros(len(w.lo), bool)
            remove[rm] = True
            after = graph.cut_off(*graph.without(remove), plane)
            after |= base  # other planes are untouched by the failure
            gn = np.minimum(g_node, len(after) - 1)
            lost_c = np.flatnonzero(gcab & ~base[gn] & (remove | after[gn]))
        gpus, inv = np.unique(w.lo[lost_c], return_inverse=True)
        b0 = bw0[gpus]
        bw = b0 - np.bincount(inv.ravel(), weights=w.speed[lost_c], minlength=len(gpus))
        had = b0 > 0
        cut = had & (bw == 0)
        degraded = had & (bw > 0) & (bw < b0)
        ra = rm[w.adj[rm]]
        lost = np.bincount(cls[ra], weights=w.speed[ra], minlength=top + 2)
        frac = {names[t]: round(float(lost[t] / tier_cap[t]), 6) for t in range(1, top + 2) if lost[t] > 0 and tier_cap[t] > 0}
        pc = plane_cap[min(plane, planes - 1)]
        in_plane = {names[t]: round(float(lost[t] / pc[t]), 6) for t in range(1, top + 2) if lost[t] > 0 and pc[t] > 0}
        share = (1 - bw[degraded] / b0[degraded]) if degraded.any() else np.zeros(0)
        return {
            "plane": int(plane),
            "gpus_cut_off": int(cut.sum()),
            "gpus_degraded": int(degraded.sum()),
            "degraded_bandwidth_lost": round(float(share.max()), 6) if len(share) else 0.0,
            "gpu_bandwidth_lost_gbps": int((b0 - bw)[had].sum()),
            "capacity_lost": frac,
            "capacity_lost_in_plane": in_plane,
        }

    def says(x: dict[str, Any]) -> str:
        text = f"{x['gpus_cut_off']} GPU(s) lose their network path{hb_note if x['gpus_cut_off'] else ''}"
        if x["gpus_degraded"]:
            text += f", {x['gpus_degraded']} GPU(s) keep a path but lose {x['degraded_bandwidth_lost']:.0%} of their bandwidth"
        if x["gpu_bandwidth_lost_gbps"]:
            text += f" ({x['gpu_bandwidth_lost_gbps']:,} Gb/s of GPU bandwidth in all)"
        lost = ", ".join(f"{k} {v:.2%}" for k, v in x["capacity_lost"].items())
        text += f"; capacity lost: {lost or 'none'}"
        if w.planes > 1 and x["capacity_lost_in_plane"]:
            text += f" (in plane {x['plane']}: " + ", ".join(f"{k} {v:.2%}" for k, v in x["capacity_lost_in_plane"].items()) + ")"
        return text

    out: dict[str, Any] = {"switch": {}, "link": {}}
    arch = "rail-only" if w.rail_only else "rail-optimized"
    hb_note = " (they can still forward through their HB domain)" if w.K > 1 else ""
    busiest = {}  # tier -> its busiest switch
    for t in range(1, int(w.sw_tier.max(initial=0)) + 1):
        cand = np.flatnonzero((w.sw_tier == t) & (ends > 0))
        if len(cand):
            busiest[t] = int(cand[np.argmax(ends[cand])])
    # the cables of every tier's busiest switch, in one pass over the cables (not one per tier)
    pick = np.zeros(w.ndev, bool)
    pick[[n + s for s in busiest.values()]] = True
    on = np.flatnonzero(pick[w.lo] | pick[w.hi])
    for t, s in busiest.items():
        d = n + s
        x = impact(on[(w.lo[on] == d) | (w.hi[on] == d)], int(w.sw_plane[s]))
        role = tier_role(t)
        out["switch"][role] = {"device": w.sw_names[s], "cables": int(ends[s]), **x}
        w.add("failure.switch", "info", (w.sw_names[s],), (), f"{arch}: if {w.sw_names[s]} ({role}, {int(ends[s])} cables) fails, {says(x)}")
    for t in range(1, top + 2):
        cand = np.flatnonzero(w.adj & (cls == t))
        if not len(cand):
            continue
        if t == 1 or t == top + 1:
            j = int(cand[0])
        else:
            nup = np.bincount(w.lo[cand] - n, minlength=S)
            j = int(cand[np.argmin(nup[w.lo[cand] - n])])
        x = impact(np.array([j]), int(w.plane[j]))
        i = int(w.gi[j])
        name = names[t]
        (da, dz), (pa, pz) = w.ends(i)
        out["link"][name] = {"cable": int(w.labels.cable[i]), "ends": [pa, pz], **x}
        w.add("failure.link", "info", (da, dz), (pa, pz), f"{arch}: if {w.cable(i)} ({name}, {pa} to {pz}) fails, {says(x)}", cables=(i,))
    w.report.figures["failure_impact"] = out

    def brief(v: dict[str, Any]) -> str:
        return f"{v['gpus_cut_off']} GPU(s) cut off" + (f", {v['gpus_degraded']} degraded" if v["gpus_degraded"] else "")

    sw = "; ".join(f"{r}: {brief(v)}" for r, v in out["switch"].items())
    lk = "; ".join(f"{r}: {brief(v)}" for r, v in out["link"].items())
    w.report.checks["failure"] = f"one switch down: {sw or '-'}; one cable down: {lk or '-'}"
