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

from ..graph import edge_columns, gpu_columns, graph_attrs, switch_attrs
from .files import open_output, per_arch

_dump = json.JSONEncoder(separators=(",", ":"), sort_keys=False).encode


def write_topology(fabric, path: Path) -> None:
    with open_output(path) as fh:
        fh.write('{"directed":false,"multigraph":true,"graph":' + _dump(graph_attrs(fabric)) + ',"nodes":[\n')
        first = True
        for names, rails, doms in gpu_columns(fabric):
            lines = [_dump({"id": nm, "role": "gpu", "tier": 0, "rail": r, "hb_domain": d}) for nm, r, d in zip(names, rails, doms)]
            fh.write(("" if first else ",\n") + ",\n".join(lines))
            first = False
        for s in fabric.switches:
            fh.write(("" if first else ",\n") + _dump({"id": s.name, **switch_attrs(s)}))
            first = False
        fh.write('\n],"edges":[\n')
        first = True
        for c in edge_columns(fabric):
            lines = [
                _dump({"source": s_, "target": t_, "key": k, "tier": ti, "plane": pl, "a_port": ap, "z_port": zp, "speed": sp})
                for s_, t_, k, ti, pl, ap, zp, sp in zip(c["source"], c["target"], c["key"], c["tier"], c["plane"], c["a_port"], c["z_port"], c["speed"])
            ]
            fh.write(("" if first else ",\n") + ",\n".join(lines))
            first = False
        fh.write("\n]}\n")


def export(ctx, dest: Path) -> list[Path]:
    return per_arch(ctx.fabrics, dest, "topology.json", write_topology)
