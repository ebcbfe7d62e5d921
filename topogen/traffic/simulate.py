"""One simulation run: a pattern, routed on one fabric, filled to max-min fair rates, summed up.

:func:`run` returns a :class:`Result` of plain numbers; :mod:`.report` turns
results into rows and text. Rates are Gb/s; fractions are of the sender's
NIC line rate (every NIC port of the GPU).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError, Problem
from ..model import Fabric
from . import alltoall as a2a
from . import flows, network, patterns, rates
from .failures import Failure, apply

TOP_LINKS = 5


@dataclass
class Result:
    """What one run delivers (see :func:`run`)."""

    arch: str
    pattern: str
    routing: str
    failed: str
    pairs: int
    flows: int
    unroutable: int
    pair_rate: np.ndarray  # Gb/s per pair
    pair_fraction: np.ndarray  # of the sender's NIC line rate
    network: np.ndarray  # pairs that cross the scale-out network
    max_link_load: float
    busiest: list[dict] = field(default_factory=list)
    tiers: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    size: np.ndarray | None = None  # relative bytes per pair
    bus_GBps: float | None = None

    @property
    def measured(self) -> np.ndarray:
        """Fractions of the pairs that cross the network (all pairs when none does: an HB-only pattern)."""
        return self.pair_fraction[self.network] if self.network.any() else self.pair_fraction

    @property
    def min_rate_fraction(self) -> float:
        return float(self.measured.min()) if len(self.measured) else 0.0

    @property
    def mean_rate_fraction(self) -> float:
        return float(self.measured.mean()) if len(self.measured) else 0.0

    def completion_s(self, size_bytes: float) -> float | None:
        """Seconds until every pair has moved ``size_bytes`` (times its relative size) at its rate."""
        if not len(self.pair_rate):
            return None
        rel = self.size if self.size is not None else np.ones(len(self.pair_rate))
        if (self.pair_rate <= 0).any():
            return float("inf")
        return float(np.max(rel * size_bytes * 8 / (self.pair_rate * 1e9)))


def run(fabric: Fabric, pattern: patterns.Pattern, routing: str, hb_gbps: float | None, flows_per_pair: int = 1, key: int = 0, failure: Failure | None = None, matrix: patterns.Pairs | None = None, top: int = TOP_LINKS, skip: tuple[str, ...] = ()) -> Result:
    """Route ``pattern`` on ``fabric`` (less ``failure``) with ``routing`` and fill it max-min fairly."""
    failed = "none"
    if failure:
        failure = Failure(tuple(x for x in failure.names if x not in skip), failure.random_pct)
        failed = failure.label
        fabric = apply(fabric, failure, key)
    net = network.build(fabric, hb_gbps if hb_gbps is not None else np.inf)
    notes: list[str] = []
    if pattern.kind == "alltoall":
        prs, note = a2a.pairs(fabric)
        notes.append(note)
    elif pattern.kind == "matrix":
        prs = matrix
    else:
        prs = patterns.pairs(pattern, fabric.gpus, fabric.hb_domain, key)
    t = flows.build(net, prs, routing, flows_per_pair, key)
    if hb_gbps is None and t.direct[:, 2 * net.cables :].nnz:
        raise InputError([Problem("hb_bandwidth", f"{pattern.label} on {fabric.arch} crosses the HB domain, whose bandwidth is not known", "give --hb-bandwidth (Gb/s per GPU: 7200 for NVLink 4, 14400 for NVLink 5), or set hb_bandwidth_gbps in the spec")])
    rate = rates.max_min(t.direct, net.capacity, t.weight, t.cls, t.middle, t.alive)
    npairs = len(prs.src)
    low = np.full(npairs, np.inf)
    np.minimum.at(low, t.pair, np.where(t.alive, rate, 0.0))
    pair_rate = np.where(np.isfinite(low), low * t.subflows, 0.0)
    frac = pair_rate / np.maximum(t.line_gbps, 1e-12)
    carried = rates.link_load(t.direct, rate, net.links, t.cls, t.middle)
    offered = rates.link_load(t.direct, t.offered, net.links, t.cls, t.middle)
    cap = net.capacity
    ratio = np.divide(offered, cap, out=np.zeros_like(offered), where=cap > 0)
    util = np.divide(carried, cap, out=np.zeros_like(carried), where=cap > 0)
    used = np.flatnonzero(offered > 0)
    order = used[np.lexsort((used, -util[used], -ratio[used]))][:top]
    names = net.link_names(order)
    tier_names = net.tier_names()
    dirs = net.direction(order)
    busiest = [
        {"link": nm, "tier": tier_names[int(net.tier[x])], "direction": str(dr), "capacity_gbps": float(cap[x]), "offered_over_capacity": float(ratio[x]), "utilisation": float(util[x])}
        for x, nm, dr in zip(order.tolist(), names, dirs)
    ]
    tiers = []
    for tr in sorted(set(net.tier.tolist()), key=lambda v: (v == 0, v)):
        sel = net.tier == tr
        if tr == 0 and not offered[sel].any():
            continue
        tiers.append({"tier": tier_names[tr], "links": int(sel.sum()), "mean_utilisation": float(carried[sel].sum() / cap[sel].sum()) if cap[sel].sum() else 0.0, "max_utilisation": float(util[sel].max()) if sel.any() else 0.0, "max_offered_over_capacity": float(ratio[sel].max()) if sel.any() else 0.0})
    dead = int(npairs - np.count_nonzero(pair_rate > 0))
    bus = float(pair_rate[t.network].min() / 8) if pattern.kind == "ring-allreduce" and t.network.any() else None
    return Result(fabric.arch, pattern.label, routing, failed, npairs, t.flows, dead, pair_rate, frac, t.network, float(ratio.max()) if len(ratio) else 0.0, busiest, tiers, notes, prs.size, bus)
