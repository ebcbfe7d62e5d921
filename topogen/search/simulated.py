"""Simulated performance of one design: its DP ring's bus bandwidth and its all-to-all rate per GPU, on its wiring.

The search's ``min_bus_bandwidth_GBps`` and ``min_alltoall_GBps`` are figures of the
traffic simulator (:mod:`topogen.traffic`), not of the closed form: screening cannot
know them, so they are checked only on designs built explicitly, and only on those
that already meet every other constraint by their explicit figures (a simulation
costs far more than a closed form; the cheap constraints go first).

The figures are the ones ``topogen build --traffic`` shows for the same spec (one
job, one figure): the same patterns (:data:`topogen.traffic.overview.PATTERNS`'s
``ring-allreduce`` and the all-to-all of :func:`~topogen.traffic.overview.alltoall_pattern`,
over the workload's EP group when it has one) under the same routing
(:data:`~topogen.traffic.overview.ROUTING`), on the intact wiring:

* ``bus_bandwidth_GBps``: the ring all-reduce's slowest ring hop, GB/s (the row's
  ``bus_bandwidth_GBps``);
* ``alltoall_GBps``: what the slowest GPU sends across the network in the
  all-to-all, GB/s: the row's ``min_rate_fraction`` (per GPU, of its NIC line rate)
  x the line rate (``link_speed`` x NIC ports) / 8.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from topogen.util.errors import InputError
from topogen.analysis import fabric as analysis
from topogen.fabric import clos
from topogen.spec.cluster import build_spec
from topogen.traffic import overview
from topogen.traffic.patterns import Pattern
from topogen.traffic.simulate import run

KEYS = {"min_bus_bandwidth_GBps": "bus_bandwidth_GBps", "min_alltoall_GBps": "alltoall_GBps"}  # constraint -> row key


def simulate_design(spec_data: Mapping[str, Any], wanted: tuple[str, ...]) -> dict[str, Any]:
    """The simulated figures ``wanted`` (keys of :data:`KEYS`' values) of the design ``spec_data`` (one architecture).

    A pattern the wiring cannot run (one HB domain: no ring crosses the network)
    gives ``None`` for its figure and a note, never a number that could pass a target.
    """

    spec = build_spec(dict(spec_data), default_name=str(spec_data.get("name", "design")))
    fabric = clos.generate(spec, spec.arch)
    hb = analysis.hb_gbps_or_none(spec)
    out: dict[str, Any] = {}
    notes: list[str] = []
    if "bus_bandwidth_GBps" in wanted:
        try:
            res = run(fabric, Pattern("ring-allreduce"), overview.ROUTING, hb)
            out["bus_bandwidth_GBps"] = None if res.bus_GBps is None else round(res.bus_GBps, 6)
        except InputError as exc:
            out["bus_bandwidth_GBps"] = None
            notes.append(f"ring-allreduce not run: {exc.problems[0].message}")
    if "alltoall_GBps" in wanted:
        job = replace(spec, gpus=spec.active_gpus, backup_nodes=0) if spec.backup_nodes else spec
        wl = spec.workload
        ep = analysis.alltoall_group(job, wl) if wl is not None and wl.model.is_moe else None
        pattern = overview.alltoall_pattern(fabric, ep, notes)
        if hb is None:
            out["alltoall_GBps"] = None
            notes.append("alltoall not run: the HB-domain bandwidth is not known (set hb_bandwidth_gbps, or a workload gpu)")
        else:
            res = run(fabric, pattern, overview.ROUTING, hb)
            out["alltoall_GBps"] = round(res.min_rate_fraction * spec.link_speed * spec.nic_ports / 8, 6)
            out["alltoall_pattern"] = pattern.label
    if notes:
        out["simulation_notes"] = notes
    return out
