"""``<arch>/topology.json``: the fabric as a networkx node-link multigraph.

Load it with ``networkx.node_link_graph(json.load(f), edges="edges")``.
Node ids are device names. Node attributes: ``role`` (gpu, leaf, spine, core,
tier4...), ``tier`` (0 for GPUs), ``plane`` (switches), ``rails`` (switches:
the rails carried, ``[]`` for rail-optimized spines/cores which carry all),
``rail`` and ``hb_domain`` (GPUs), ``radix`` (switches). Edge attributes:
``key`` (the cable id of cabling.csv), ``tier``, ``plane``, ``a_port``,
``z_port``, ``speed`` (Gb/s); ``source`` is the lower end. The ``graph``
attributes carry the architecture, the spec and the provenance.

Written as a stream (one node or edge per line) so 10^6-GPU fabrics need no
in-memory graph.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..naming import GpuNames
from .cabling import device_names
from .files import CHUNK, per_arch

_dump = json.JSONEncoder(separators=(",", ":"), sort_keys=False).encode


def write_topology(fabric, path: Path) -> None:
    spec = fabric.spec
    gn = GpuNames(fabric.gpus, fabric.hb_domain)
    sw_names = np.array([s.name for s in fabric.switches], dtype=object)
    graph = {"arch": fabric.arch, "tiers": fabric.tiers, "spec": spec.to_dict(), "generator": spec.provenance()}
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('{"directed":false,"multigraph":true,"graph":' + _dump(graph) + ',"nodes":[\n')
        first = True
        hb = fabric.hb_domain
        for start in range(0, fabric.gpus, CHUNK):
            ids = np.arange(start, min(start + CHUNK, fabric.gpus))
            names = gn.many(ids).tolist()
            lines = [
                _dump({"id": nm, "role": "gpu", "tier": 0, "rail": g % hb, "hb_domain": g // hb})
                for nm, g in zip(names, ids.tolist())
            ]
            fh.write(("" if first else ",\n") + ",\n".join(lines))
            first = False
        for s in fabric.switches:
            fh.write(("" if first else ",\n") + _dump({"id": s.name, "role": s.role, "tier": s.tier, "plane": s.plane, "rails": list(s.rails), "radix": s.radix}))
            first = False
        fh.write('\n],"edges":[\n')
        L = fabric.links
        first = True
        for start in range(0, len(L), CHUNK):
            sl = slice(start, min(start + CHUNK, len(L)))
            a, z = L.a_dev[sl], L.z_dev[sl]
            an = device_names(fabric, a, sw_names, gn).tolist()
            zn = device_names(fabric, z, sw_names, gn).tolist()
            agpu = (a < fabric.gpus).tolist()
            lines = [
                _dump({"source": s_, "target": t_, "key": k, "tier": ti, "plane": pl, "a_port": (f"nic{ap}" if g else f"p{ap}"), "z_port": f"p{zp}", "speed": sp})
                for s_, t_, k, ti, pl, ap, g, zp, sp in zip(
                    an, zn, range(start + 1, sl.stop + 1), L.tier[sl].tolist(), L.plane[sl].tolist(), L.a_port[sl].tolist(), agpu, L.z_port[sl].tolist(), L.a_speed[sl].tolist()
                )
            ]
            fh.write(("" if first else ",\n") + ",\n".join(lines))
            first = False
        fh.write("\n]}\n")


def export(ctx, dest: Path) -> list[Path]:
    return per_arch(ctx.fabrics, dest, "topology.json", write_topology)
