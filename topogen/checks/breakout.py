"""Breakout cables read back from a cabling file: the legs of one cable leave one cage of one switch.

Id ``hygiene.breakout-split``. A breakout cable (``breakout_cable`` in cabling.csv, shared
by its legs) is one physical harness: its unsplit end sits in one cage of one switch, the
upper-tier end of every leg. Legs of one cable on two switches, or on ports of two cages,
cannot be built. The cage of a port is its block of ``k`` consecutive ports, ``k`` being the
most legs any breakout cable of the file has (2 for 400G to 2 x 200G).
"""

from __future__ import annotations

import numpy as np

from topogen.checks.graphs import run_starts
from topogen.checks.text import port_ranges
from topogen.checks.wire import Wire


def check(w: Wire) -> None:
    ids = w.labels.breakout
    if ids is None:
        return
    legs = np.flatnonzero(w.good & (ids != ""))
    if not len(legs):
        return
    names, inv = np.unique(ids[legs].astype(str), return_inverse=True)
    inv = inv.ravel()
    a, z = w.a[legs], w.z[legs]
    up = w.dev_tier[z] >= w.dev_tier[a]
    dev = np.where(up, z, a)  # the cage end: the upper-tier end of each leg
    port = np.where(up, w.zp[legs], w.ap[legs])
    k = int(np.bincount(inv).max())
    block = (port - 1) // max(k, 1)
    order = np.lexsort((port, dev, inv))
    starts = run_starts(inv[order])
    key = dev[order] * (int(block.max(initial=0)) + 1) + block[order]
    split = np.minimum.reduceat(key, starts) != np.maximum.reduceat(key, starts)
    ends = np.r_[starts[1:], len(order)]

    def msg(g: int):
        run = order[starts[g] : ends[g]]
        name = str(names[inv[run[0]]])
        by_dev: dict[int, list[int]] = {}
        for j in run.tolist():
            by_dev.setdefault(int(dev[j]), []).append(j)
        parts = [f"{w.name(d)} {port_ranges(sorted(int(port[j]) for j in js))} ({', '.join(w.cable(int(legs[j])) for j in js)})" for d, js in by_dev.items()]
        where = f"{len(by_dev)} switches" if len(by_dev) > 1 else f"ports of {len(set(block[run].tolist()))} cages"
        main = max(by_dev, key=lambda d: (name.startswith(w.name(d) + ":"), len(by_dev[d]), -d))  # topogen names a cable by its cage's switch
        return (
            tuple(w.name(d) for d in by_dev),
            tuple(w.port(int(dev[j]), int(port[j])) for j in run.tolist()),
            f"breakout cable {name} has its {len(run)} legs on {where}: " + "; ".join(parts) + f"; the legs of one breakout cable leave one cage of one switch ({k} ports per cage)",
            f"cable every leg of {name} to the cage its cable is plugged into (on {w.name(main)}), or give the moved link a cable of its own",
            tuple(int(legs[j]) for j in run.tolist()),
        )

    w.add_many("hygiene.breakout-split", "error", np.flatnonzero(split), msg)
