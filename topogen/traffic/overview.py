"""The build's traffic overview: the training's collectives on each architecture's wiring, healthy and with a spine down.

What ``topogen build --traffic`` adds to a build (the workbook's *Traffic*
sheet and the ``analysis/link_utilisation`` plot render it): per
architecture, under :data:`ROUTING`,

* ``ring-allreduce``: the DP all-reduce's rail-aligned ring;
* ``alltoall``: the MoE all-to-all (needs the HB-domain bandwidth; aggregated
  at scale as ``topogen simulate`` does);
* ``permutation``: one random cycle through every GPU (draw 0);

each on the intact wiring and, up to :data:`FAILURE_GPUS`, with one spine
down (the first tier-2 switch; on a leaf pair, its first ISL), as ``topogen simulate`` rows (``--json``'s
shape, the failure row with its ``change``), plus a histogram of link
utilisation per link tier. It is opt-in: at 131,072 GPUs the intact cases
add 23 % CPU to a build of every export and double its peak memory (1.2 GB).

Why the cap: a dead spine makes the fabric asymmetric, and spraying routes
the pairs whose paths meet it one by one (:mod:`.spray`): a 131,072-GPU
permutation with a spine down took 7.9 GB. ``topogen simulate --fail`` runs
any size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from topogen.fabric.model import Fabric
from topogen.traffic.failures import Failure
from topogen.traffic.patterns import Pattern
from topogen.traffic.report import row
from topogen.traffic.simulate import Result, run
from topogen.util.errors import InputError
from topogen.traffic import alltoall as a2a

PATTERNS = ("ring-allreduce", "alltoall", "permutation")
ROUTING = "spray"
BINS = 20  # utilisation histogram: 5 % wide bins from 0 to 100 %
FAILURE_GPUS = 16_384  # the spine-down case up to this many GPUs (see the module)


def spine(fabric: Fabric) -> str | None:
    """What a failure case takes out: the first tier-2 switch; on a leaf pair its first ISL (``leaf-a:p<port>``); else None.

    An ISL is a leaf pair's switch-to-switch capacity, as the spines are a
    Clos's: one of them down is the pair's counterpart of a spine down.
    """
    tiers = fabric.switch_tiers()
    idx = np.flatnonzero(tiers == 2)
    if len(idx):
        return fabric.switches[int(idx[0])].name
    if len(fabric.isls):
        return f"{fabric.switches[int(fabric.isls.a_dev[0]) - fabric.gpus].name}:p{int(fabric.isls.a_port[0])}"
    return None


def histogram(res: Result) -> list[dict[str, Any]]:
    """Per link tier (HB domain last): how many links run at each utilisation, in :data:`BINS` bins of 0..100 %."""
    out = []
    edges = np.linspace(0.0, 1.0, BINS + 1)
    for t in sorted(set(res.link_tier.tolist()), key=lambda v: (v == 0, v)):
        u = np.clip(res.link_utilisation[res.link_tier == t], 0.0, 1.0)
        counts, _ = np.histogram(u, edges)
        out.append({"tier": res.tier_names[t], "links": int(len(u)), "counts": counts.tolist()})
    return out


def alltoall_pattern(fabric: Fabric, ep_group: int | None, notes: list[str]) -> Pattern:
    """The all-to-all a build simulates on ``fabric``: over the EP group (``alltoall:G``) when it can be, else over every GPU (``notes`` says why).

    ``build --traffic`` and the search's ``min_alltoall_GBps`` both take it, so the two show one figure for one job.
    """

    if ep_group is not None and ep_group < fabric.gpus:
        try:
            a2a.check_group(ep_group, fabric.gpus, fabric.hb_domain)
            return Pattern("alltoall", ep_group)
        except InputError as exc:
            notes.append(f"alltoall over every GPU, not the EP group of {ep_group:,}: {exc.problems[0].message}")
    return Pattern("alltoall")


def build_section(fabrics: dict[str, Fabric], hb_gbps: float | None, ep_group: int | None = None) -> dict[str, Any]:
    """Rows and utilisation histograms of every architecture x pattern, intact and with a spine down (see the module).

    ``ep_group`` (the workload's expert-parallel group, when it has one) makes the
    all-to-all the EP all-to-all (``alltoall:G``), when its pairs can be routed one
    by one (:data:`.alltoall.MAX_GROUP_PAIRS`); else the global one, and a note says so.
    """
    rows: list[dict[str, Any]] = []
    hists: list[dict[str, Any]] = []
    notes: list[str] = []
    any_fabric = next(iter(fabrics.values()), None)
    a2a_pattern = Pattern("alltoall") if any_fabric is None else alltoall_pattern(any_fabric, ep_group, notes)
    for arch, fabric in fabrics.items():
        down = spine(fabric)
        if down is None:
            notes.append(f"{arch}: one switch tier, no spine (or ISL) to take out")
        elif fabric.gpus > FAILURE_GPUS:
            notes.append(f"{arch}: the spine-down case runs up to {FAILURE_GPUS:,} GPUs (its asymmetric paths are sprayed pair by pair); run topogen simulate --fail {down} for it")
            down = None
        for name in PATTERNS:
            if name == "alltoall" and hb_gbps is None:
                note = "alltoall not run: the HB-domain bandwidth is not known (set hb_bandwidth_gbps in the spec, or a workload gpu)"
                if note not in notes:
                    notes.append(note)
                continue
            try:
                pattern = a2a_pattern if name == "alltoall" else Pattern(name)
                intact = run(fabric, pattern, ROUTING, hb_gbps)
            except InputError as exc:  # a pattern this fabric cannot run (one HB domain: no ring)
                notes.append(f"{arch}: {name} not run: {exc.problems[0].message}")
                continue
            first = row(intact, None)
            rows.append(first)
            hists.append({"arch": arch, "pattern": name, "failed": "none", "tiers": histogram(intact)})
            if down is not None:
                res = run(fabric, pattern, ROUTING, hb_gbps, failure=Failure((down,), 0.0))
                rows.append(row(res, None, first))
                hists.append({"arch": arch, "pattern": name, "failed": down, "tiers": histogram(res)})
    return {"routing": ROUTING, "hb_bandwidth_gbps": hb_gbps, "bins": [round(x, 4) for x in np.linspace(0.0, 1.0, BINS + 1).tolist()], "rows": rows, "histograms": hists, "notes": notes}
