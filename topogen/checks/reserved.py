"""Reserved leaf ports (spec ``reserved_leaf_ports``): no cable may use a port kept for management.

Id: ``hygiene.reserved-port`` (a cable on a leaf port the design keeps free for
management or fabric-manager (UFM) links). The reserved ports come from the spec's
own wiring (``expected``), so a cabling file read back is checked against them.
"""

from __future__ import annotations

import numpy as np

from topogen.checks.wire import Wire
from topogen.fabric.model import Fabric


def check(w: Wire, expected: Fabric | None) -> None:
    kept = expected.reserved if expected is not None else ()
    if not kept:
        return
    n = w.n
    dev = np.asarray([n + i for i, _a, _b in kept if i < w.S and w.sw_names[i] == expected.switches[i].name], np.int64)
    if not len(dev):
        return
    lo_port = kept[0][1]  # every reserved range is the same ports of its leaf: the last down ports
    hi_port = kept[0][2]
    hits = []
    for ends, ports in ((w.a, w.ap), (w.z, w.zp)):
        on = np.isin(ends, dev) & (ports >= lo_port) & (ports <= hi_port)
        hits += [(int(i), int(ends[i]), int(ports[i])) for i in np.flatnonzero(on & w.valid)]
    hits.sort()

    scope = "every SU's" if w.spec.units.every else "the last group's"

    def msg(k: int):
        i, d, p = hits[k]
        name = w.name(d)
        return (
            (name,),
            (w.port(d, p),),
            f"{w.cable(i)} uses {w.port(d, p)}, a leaf port reserved for management / fabric-manager (UFM) links (reserved_leaf_ports {w.spec.reserved_leaf_ports}: p{lo_port}-p{hi_port} of {scope} leaves)",
            "move the cable to a free GPU port of its leaf, or lower reserved_leaf_ports",
            (i,),
        )

    w.add_many("hygiene.reserved-port", "error", np.arange(len(hits)), msg)
