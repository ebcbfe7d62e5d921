"""One simulation run: a pattern, routed on one fabric, filled to max-min fair rates, summed up.

:func:`run` returns a :class:`Result` of plain numbers; :mod:`.report` turns
results into rows and text. Rates are Gb/s; fractions are of the sender's
NIC line rate (every NIC port of the GPU).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from topogen.util.errors import InputError, Problem
from topogen.fabric.model import Fabric
from topogen.traffic import alltoall as a2a
from topogen.traffic import flows, lft, network, patterns, rates
from topogen.traffic.failures import Failure, apply

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
    count: np.ndarray | None = None  # GPU pairs each entry stands for (an aggregated all-to-all), else one each
    aggregation: str = "gpu-pair"  # what one entry stands for: a GPU pair, or (all-to-all at scale) a leaf pair or leaf-group pair
    link_utilisation: np.ndarray | None = None  # carried / capacity of every link with a capacity (bundles included)
    link_tier: np.ndarray | None = None  # tier number of those links (0: HB domain), names in ``tier_names``
    tier_names: dict[int, str] = field(default_factory=dict)

    @property
    def measured(self) -> np.ndarray:
        """Fractions of the pairs that cross the network (all pairs when none does: an HB-only pattern)."""
        return self.pair_fraction[self.network] if self.network.any() else self.pair_fraction

    @property
    def min_rate_fraction(self) -> float:
        return float(self.measured.min()) if len(self.measured) else 0.0

    @property
    def mean_rate_fraction(self) -> float:
        if not len(self.measured):
            return 0.0
        if self.count is None:
            return float(self.measured.mean())
        w = self.count[self.network] if self.network.any() else self.count
        return float(np.average(self.measured, weights=w))

    def completion_s(self, size_bytes: float) -> float | None:
        """Seconds until every pair has moved ``size_bytes`` (times its relative size) at its rate."""
        if not len(self.pair_rate):
            return None
        rel = self.size if self.size is not None else np.ones(len(self.pair_rate))
        if (self.pair_rate <= 0).any():
            return float("inf")
        return float(np.max(rel * size_bytes * 8 / (self.pair_rate * 1e9)))


def run(fabric: Fabric, pattern: patterns.Pattern, routing: str, hb_gbps: float | None, flows_per_pair: int = 1, key: int = 0, failure: Failure | None = None, matrix: patterns.Pairs | None = None, top: int = TOP_LINKS, skip: tuple[str, ...] = (), exact_gpus: int | None = None, leaf_pairs: int | None = None, routes: Callable[[Fabric, lft.Choice], lft.Tables] | None = None) -> Result:
    """Route ``pattern`` on ``fabric`` (less ``failure``) with ``routing`` and fill it max-min fairly.

    An ``opensm`` routing takes its forwarding tables from ``routes`` (the
    fabric, less the failure, as OpenSM routes it: :mod:`.lft`). ``exact_gpus``
    and ``leaf_pairs`` move the all-to-all's aggregation thresholds
    (:data:`.alltoall.EXACT_GPUS`, :data:`.alltoall.LEAF_PAIRS`).
    """
    failed = "none"
    if failure:
        failure = Failure(tuple(x for x in failure.names if x not in skip), failure.random_pct)
        failed = failure.label
        fabric = apply(fabric, failure, key)
    net = network.build(fabric, hb_gbps if hb_gbps is not None else np.inf)
    notes: list[str] = []
    cap, tier, extra = net.capacity, net.tier, []
    count = None
    aggregation = "gpu-pair"
    if pattern.kind == "alltoall" and pattern.arg is None and fabric.gpus > (exact_gpus if exact_gpus is not None else a2a.EXACT_GPUS):
        t, cap, count, extra, note, aggregation = a2a.aggregate(net, a2a.LEAF_PAIRS if leaf_pairs is None else leaf_pairs)
        tier = np.concatenate([net.tier, np.ones(len(cap) - len(net.tier) - (len(extra) - 2 * (len(extra) // 2)), np.int8)])
        groups = sum(1 for x in extra if x.endswith("HB out"))
        tier[len(tier) - 2 * groups :] = 0
        notes.append(note)
        if routing != "spray":
            notes.append(f"{routing} needs a flow per GPU pair: the aggregated all-to-all is routed by spray")
            routing = "spray"
        npairs = int(count.sum())
    else:
        if pattern.kind == "alltoall":
            prs, note = a2a.pairs(fabric) if pattern.arg is None else a2a.group_pairs(fabric, int(pattern.arg))
            notes.append(note)
        elif pattern.kind == "matrix":
            prs = matrix
        else:
            prs = patterns.pairs(pattern, fabric.gpus, fabric.hb_domain, key)
        tables = None
        if lft.is_opensm(routing):
            if routes is None:
                raise InputError([Problem("routing", f"{routing} needs OpenSM's forwarding tables, and this caller gives no way to compute them", "run it through topogen simulate")])
            tables = routes(fabric, lft.parse(routing))
            notes += tables.notes()
        t = flows.build(net, prs, routing, flows_per_pair, key, tables)
        npairs = len(prs.src)
    if hb_gbps is None and t.direct[:, 2 * net.cables :].nnz:
        raise InputError([Problem("hb_bandwidth", f"{pattern.label} on {fabric.arch} crosses the HB domain, whose bandwidth is not known", "give --hb-bandwidth (Gb/s per GPU: 7200 for NVLink 4, 14400 for NVLink 5), or set hb_bandwidth_gbps in the spec")])
    rate = rates.max_min(t.direct, cap, t.weight, t.factors, t.alive)
    if count is not None:  # aggregated: a flow's rate over its weight is each of its GPU pairs' rate
        pair_rate = np.where(t.alive, rate / t.weight, 0.0)
        size = np.ones(len(pair_rate))
    else:
        low = np.full(npairs, np.inf)
        np.minimum.at(low, t.pair, np.where(t.alive, rate, 0.0))
        pair_rate = np.where(np.isfinite(low), low * t.subflows, 0.0)
        size = prs.size
    frac = pair_rate / np.maximum(t.line_gbps, 1e-12)
    if pattern.kind == "alltoall":  # per GPU: its N-K (group: G-K) pairs across the network, each at this pair's rate
        frac = frac * max((fabric.gpus if pattern.arg is None else int(pattern.arg)) - fabric.hb_domain, 0)
    carried = rates.link_load(t.direct, rate, len(cap), t.factors)
    offered = rates.link_load(t.direct, t.offered, len(cap), t.factors)
    ratio = np.divide(offered, cap, out=np.zeros_like(offered), where=cap > 0)
    util = np.divide(carried, cap, out=np.zeros_like(carried), where=cap > 0)
    used = np.flatnonzero(offered > 0)
    order = used[np.lexsort((used, -util[used], -ratio[used]))][:top]
    base = net.links
    names = [extra[x - base] if x >= base else net.link_names(np.array([x]))[0] for x in order.tolist()]
    tier_names = net.tier_names()
    dirs = ["bundle" if x >= base else str(net.direction(np.array([x]))[0]) for x in order.tolist()]
    busiest = [
        {"link": nm, "tier": tier_names[int(tier[x])], "direction": dr, "capacity_gbps": float(cap[x]), "offered_over_capacity": float(ratio[x]), "utilisation": float(util[x])}
        for x, nm, dr in zip(order.tolist(), names, dirs)
    ]
    tiers = []
    for tr in sorted(set(tier.tolist()), key=lambda v: (v == 0, v)):
        sel = (tier == tr) & (cap > 0)
        if not sel.any() or (tr == 0 and not offered[sel].any()):
            continue
        tiers.append({"tier": tier_names[tr], "links": int(sel.sum()), "mean_utilisation": float(carried[sel].sum() / cap[sel].sum()), "max_utilisation": float(util[sel].max()), "max_offered_over_capacity": float(ratio[sel].max())})
    dead = int(npairs - (count[pair_rate > 0].sum() if count is not None else np.count_nonzero(pair_rate > 0)))
    bus = float(pair_rate[t.network].min() / 8) if pattern.kind == "ring-allreduce" and t.network.any() else None
    has = cap > 0
    return Result(fabric.arch, pattern.label, routing, failed, npairs, t.flows, dead, pair_rate, frac, t.network, float(ratio.max()) if len(ratio) else 0.0, busiest, tiers, notes, size, bus, count, aggregation, util[has], tier[has], tier_names)
