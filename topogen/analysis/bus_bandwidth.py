"""B_S as the wiring delivers it: the DP all-reduce's bus bandwidth, simulated on each architecture.

Eq. 1's first-stage DP term moves the gradient over the rails at ``B_S`` per
GPU. Nominally that is link speed x planes. Simulated, it is what ``topogen
simulate --pattern ring-allreduce`` reports as the DP all-reduce's bus
bandwidth on the same spec and routing: rank r of every HB domain rings with
rank r of the next domain, on the generated port-level wiring, at max-min fair
rates, and the ring runs at its slowest hop. One job, one figure: this module
calls the simulator and takes its row, so the two cannot drift apart.
"""

from __future__ import annotations

from topogen.spec.params import Param

BANDWIDTHS = ("nominal", "simulated")
DEFAULT_ROUTING = "spray"
DRAW = 0  # the draw of the ecmp hash: simulate's default --draw, so both commands give one figure

ROUTING_WORDS = {
    "spray": "spray: an even per-packet split over every shortest path, adaptive routing's upper bound",
    "ecmp": "ecmp: a hash per flow, one queue pair per GPU pair and NIC port, draw 0",
    "dmodk": "dmodk: InfiniBand ftree destination-mod-k",
}


def simulated(spec, routing: str = DEFAULT_ROUTING, hb_gbps: float | None = None) -> list[tuple[str, Param | None]]:
    """Per architecture the spec builds: B_S (Gb/s per GPU) as the simulated ring's bus bandwidth.

    ``None`` for an architecture whose ring never leaves the HB domain (one
    domain): Eq. 1's network term is zero there and B_S does not enter it.
    """
    from topogen.traffic import report as traffic_report  # keeps scipy out of start-up (every topogen command loads the analyses)
    from topogen.traffic import simulate, source  # keeps scipy out of start-up (every topogen command loads the analyses)
    from topogen.traffic.patterns import Pattern  # keeps scipy out of start-up (every topogen command loads the analyses)

    out: list[tuple[str, Param | None]] = []
    ring = Pattern("ring-allreduce")
    domains = spec.gpus // spec.hb_domain
    for fabric in source.from_spec(spec).fabrics:
        if domains < 2:
            out.append((fabric.arch, None))
            continue
        row = traffic_report.row(simulate.run(fabric, ring, routing, hb_gbps, 1, DRAW), None)
        gbps = row["bus_bandwidth_GBps"] * 8
        how = ROUTING_WORDS.get(routing, routing)
        out.append((fabric.arch, Param(f"B_S, scale-out bandwidth per GPU ({fabric.arch}, simulated)", gbps, "Gb/s", "simulated", f"topogen simulate --pattern ring-allreduce --routing {routing} on the {fabric.arch} wiring of spec {spec.name}: DP all-reduce bus bandwidth {row['bus_bandwidth_GBps']:g} GB/s ({how})")))
    return out
