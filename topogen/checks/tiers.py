"""Check 2, tier structure: cables join adjacent tiers, every switch is reachable, tier count.

Ids: ``tiers.adjacent`` (links join adjacent tiers only), ``tiers.unreachable``
(a switch with no cable or no GPU behind it), ``tiers.count`` (tier count
against the minimum for the spec).
"""

from __future__ import annotations

import numpy as np

from topogen.checks.graphs import components
from topogen.checks.planes import PlaneGraph
from topogen.checks.wire import Wire
from topogen.spec import counts
from topogen.spec.counts import tier_role


def check(w: Wire, graph: PlaneGraph | None = None) -> None:
    spec = w.spec

    leaf_pair = spec.design == "leaf-pair"
    pair_rule = ""
    if leaf_pair:
        pair_rule = "; an inter-switch link joins the two leaves of one pair (leaf-a and leaf-b of a plane)" if not w.rail_only else "; a rail-only leaf pair has no inter-switch link"

    def skips(j: int):
        i, lo, hi, pl, ph = w.oriented(j)
        return (
            (w.name(lo), w.name(hi)),
            (pl, ph),
            f"{w.cable(i)} joins {pl} ({w.role(lo)}, tier {int(w.lo_t[j])}) to {ph} ({w.role(hi)}, tier {int(w.hi_t[j])}): links join adjacent tiers only (gpu-leaf, leaf-spine, spine-core...){pair_rule}",
            f"cable {pl} to a {tier_role(int(w.lo_t[j]) + 1)} of its group",
            (i,),
        )

    w.add_many("tiers.adjacent", "error", np.flatnonzero(~w.adj), skips)
    # every switch holds cables and has GPUs behind it
    ends = w.sw_cables
    w.add_many(
        "tiers.unreachable",
        "error",
        np.flatnonzero(ends == 0),
        lambda s: (
            (w.sw_names[s],),
            (),
            f"{w.sw_names[s]} ({tier_role(int(w.sw_tier[s]))}) has no cables: nothing can reach it",
            "cable the switch into its group, or remove it from the design",
            (),
        ),
    )
    w.add_many(
        "tiers.unreachable",
        "error",
        np.flatnonzero(~_gpu_behind(w, graph) & (ends > 0)),
        lambda s: (
            (w.sw_names[s],),
            (),
            f"{w.sw_names[s]} ({tier_role(int(w.sw_tier[s]))}) is cabled, but no GPU can reach it (its part of the network holds no GPU)",
            "cable the switch to the lower tier of its group",
            (),
        ),
    )
    # tier count
    used = int(w.sw_tier[ends > 0].max(initial=0))
    k, K = spec.radix, spec.hb_domain
    if leaf_pair:
        minimum = 1  # the Enterprise RA's pair is one tier (the spec parser refuses a pair past its ports)
    elif w.rail_only:
        minimum = counts.rail_only_tiers(spec.gpus, K, spec.shape, homes=spec.homes, units=spec.units)
    else:
        minimum = counts.rail_optimized_tiers(spec.gpus, K, spec.shape, spec.packs_rails("rail-optimized"), homes=spec.homes, units=spec.units)
    w.report.figures["tiers"] = used
    w.report.figures["min_tiers"] = minimum
    if used != minimum:
        w.add(
            "tiers.count",
            "warning",
            (),
            (),
            f"the wiring uses {used} tier(s); the minimum for {spec.gpus} GPUs, HB domain {K}, radix {'/'.join(map(str, spec.tier_radix)) if spec.tier_radix else k} ({w.fabric.arch}) is {minimum}",
            "a Clos with the fewest tiers that fit costs the fewest switches and hops" if used > minimum else "fewer tiers than the minimum cannot be full bisection",
        )
    skipping = w.counts.get("tiers.adjacent", 0)
    adjacent = "every cable joins adjacent tiers" if not skipping else f"{skipping} cable(s) skip or stay within a tier (see findings)"
    isls = int(w.isl.sum())
    if leaf_pair and not w.rail_only:
        adjacent = f"a leaf pair per plane is one tier; {adjacent}" + (f", but for the {isls} inter-switch link(s), each joining the two leaves of one pair" if isls else "; no inter-switch link joins a pair")
    unreachable = w.counts.get("tiers.unreachable", 0)
    reach = f"{int((ends > 0).sum())}/{w.S} switches cabled" + (" and reachable from GPUs" if not unreachable else f", {unreachable} unreachable from GPUs or without a cable (see findings)")
    w.report.checks["tiers"] = f"{used} tier(s) ({'the minimum' if used == minimum else f'minimum {minimum}'}); {adjacent}; {reach}"


def _gpu_behind(w: Wire, graph: PlaneGraph | None) -> np.ndarray:
    """Per switch: some GPU is in its part of the network.

    With the plane graph: a switch's shortest path to a GPU runs over switches
    and ends on one GPU cable, which the plane graph holds too; so its part there
    holds a GPU-plane node exactly when its part of the device graph holds a GPU.
    """
    n = w.n
    if graph is None:
        lab = components(w.ndev, w.lo, w.hi)
        has_gpu = np.zeros(w.ndev, bool)
        has_gpu[lab[:n]] = True
        return has_gpu[lab[n:]]
    has_gpu = np.zeros(graph.C, bool)
    has_gpu[graph.clabel[graph.att_sw]] = True
    has_gpu[graph.clabel[w.S :]] = True  # the core GPU-port nodes (compact ids S..)
    return has_gpu[graph.clabel[: w.S]]
