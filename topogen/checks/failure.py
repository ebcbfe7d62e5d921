"""Check 6, failure impact (info): what one switch or one cable down costs.

Ids: ``failure.switch`` / ``failure.link``: for the busiest switch of each
tier and one cable of each tier, GPUs cut off and capacity lost.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model import link_tier_name, tier_role
from .planes import PlaneGraph
from .wire import Wire


def check(w: Wire, graph: PlaneGraph) -> None:
    """Fail the busiest switch of each tier, then one cable of each tier; count GPUs cut off.

    "Cut off" = no longer in the main part of its plane (its rail in
    rail-only); the figures are the increase over the intact wiring, per plane
    of the failed element. Capacity lost is per link tier, as a fraction of
    that tier's Gb/s. In both architectures a GPU that loses its NIC path can
    still reach others by forwarding through its HB domain.
    """
    n, S = w.n, w.S
    base = graph.cut_off(graph.label, graph.linked())
    top = int(w.hi_t.max(initial=0))
    tier_cap = np.bincount(w.hi_t[w.adj], weights=w.speed[w.adj], minlength=top + 1)
    ends = w.sw_cables

    def impact(remove: np.ndarray, plane: int) -> tuple[int, dict[str, float]]:
        after = graph.cut_off(*graph.without(remove), plane)
        sl = slice(plane * n, (plane + 1) * n)
        lost_gpus = int(after[sl].sum() - base[sl].sum())
        lost = np.bincount(w.hi_t[remove & w.adj], weights=w.speed[remove & w.adj], minlength=top + 1)
        frac = {link_tier_name(t): round(float(lost[t] / tier_cap[t]), 6) for t in range(1, top + 1) if lost[t] > 0 and tier_cap[t] > 0}
        return max(lost_gpus, 0), frac

    out: dict[str, Any] = {"switch": {}, "link": {}}
    arch = "rail-only" if w.rail_only else "rail-optimized"
    hb_note = " (they can still forward through their HB domain)" if w.K > 1 else ""
    for t in range(1, int(w.sw_tier.max(initial=0)) + 1):
        cand = np.flatnonzero((w.sw_tier == t) & (ends > 0))
        if not len(cand):
            continue
        s = int(cand[np.argmax(ends[cand])])
        d = n + s
        gpus, frac = impact((w.lo == d) | (w.hi == d), int(w.sw_plane[s]))
        role = tier_role(t)
        out["switch"][role] = {"device": w.sw_names[s], "cables": int(ends[s]), "gpus_cut_off": gpus, "capacity_lost": frac}
        lost = ", ".join(f"{k} {v:.2%}" for k, v in frac.items())
        w.add(
            "failure.switch",
            "info",
            (w.sw_names[s],),
            (),
            f"{arch}: if {w.sw_names[s]} ({role}, {int(ends[s])} cables) fails, {gpus} GPU(s) lose their network path{hb_note if gpus else ''}; capacity lost: {lost or 'none'}",
        )
    for t in range(1, top + 1):
        cand = np.flatnonzero(w.adj & (w.hi_t == t))
        if not len(cand):
            continue
        if t == 1:
            j = int(cand[0])
        else:
            nup = np.bincount(w.lo[cand] - n, minlength=S)
            j = int(cand[np.argmin(nup[w.lo[cand] - n])])
        remove = np.zeros(len(w.lo), bool)
        remove[j] = True
        gpus, frac = impact(remove, int(w.plane[j]))
        i = int(w.gi[j])
        name = link_tier_name(t)
        (da, dz), (pa, pz) = w.ends(i)
        out["link"][name] = {"cable": int(w.labels.cable[i]), "ends": [pa, pz], "gpus_cut_off": gpus, "capacity_lost": frac}
        lost = ", ".join(f"{k} {v:.2%}" for k, v in frac.items())
        w.add(
            "failure.link",
            "info",
            (da, dz),
            (pa, pz),
            f"{arch}: if {w.cable(i)} ({name}, {pa} to {pz}) fails, {gpus} GPU(s) lose their network path; capacity lost: {lost or 'none'}",
            cables=(i,),
        )
    w.report.figures["failure_impact"] = out
    sw = "; ".join(f"{r}: {v['gpus_cut_off']} GPU(s)" for r, v in out["switch"].items())
    lk = "; ".join(f"{r}: {v['gpus_cut_off']} GPU(s)" for r, v in out["link"].items())
    w.report.checks["failure"] = f"one switch down: {sw or '-'}; one cable down: {lk or '-'}"
