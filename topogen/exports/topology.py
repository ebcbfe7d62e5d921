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
in-memory graph. Nodes and edges go through string templates, byte-identical
to ``json.JSONEncoder(separators=(",", ":"))`` because every name pasted is
plain text (:func:`topogen.fabric.naming.plain_switch_text`); a fabric with other
names is encoded by the JSON encoder record by record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from topogen.exports import network_topology
from topogen.exports.files import open_output, per_arch
from topogen.fabric.graph import edge_columns, gpu_columns, graph_attrs, switch_attrs
from topogen.fabric.model import Fabric
from topogen.fabric.naming import plain_switch_text

_dump = json.JSONEncoder(separators=(",", ":"), sort_keys=False).encode


def generate_chunks(fabric: Fabric, plain: bool | None = None) -> Iterator[str]:
    """The document in pieces; ``plain`` picks the template (default: when the names allow it)."""
    if plain is None:
        plain = plain_switch_text(fabric)
    yield '{"directed":false,"multigraph":true,"graph":' + _dump(graph_attrs(fabric)) + ',"nodes":[\n'
    sep = ""
    for names, rails, doms in gpu_columns(fabric):
        if plain:
            lines = [f'{{"id":"{nm}","role":"gpu","tier":0,"rail":{r},"hb_domain":{d}}}' for nm, r, d in zip(names, rails, doms)]
        else:
            lines = [_dump({"id": nm, "role": "gpu", "tier": 0, "rail": r, "hb_domain": d}) for nm, r, d in zip(names, rails, doms)]
        yield sep + ",\n".join(lines)
        sep = ",\n"
    if plain:
        lines = [
            f'{{"id":"{s.name}","role":"{s.role}","tier":{s.tier},"plane":{s.plane},"rails":[{",".join(map(str, s.rails))}],"radix":{s.radix}}}'
            for s in fabric.switches
        ]
    else:
        lines = [_dump({"id": s.name, **switch_attrs(s)}) for s in fabric.switches]
    if lines:
        yield sep + ",\n".join(lines)
    yield '\n],"edges":[\n'
    sep = ""
    for c in edge_columns(fabric):
        cols = (c["source"], c["target"], c["key"], c["tier"], c["plane"], c["a_port"], c["z_port"], c["speed"])
        if plain:
            lines = [
                f'{{"source":"{s_}","target":"{t_}","key":{k},"tier":{ti},"plane":{pl},"a_port":"{ap}","z_port":"{zp}","speed":{sp}}}'
                for s_, t_, k, ti, pl, ap, zp, sp in zip(*cols)
            ]
        else:
            lines = [
                _dump({"source": s_, "target": t_, "key": k, "tier": ti, "plane": pl, "a_port": ap, "z_port": zp, "speed": sp})
                for s_, t_, k, ti, pl, ap, zp, sp in zip(*cols)
            ]
        yield sep + ",\n".join(lines)
        sep = ",\n"
    yield "\n]}\n"


def write_topology(fabric: Fabric, path: Path) -> None:
    with open_output(path) as fh:
        for piece in generate_chunks(fabric):
            fh.write(piece)


def export(ctx, dest: Path) -> list[Path]:
    paths = per_arch(ctx.fabrics, dest, "topology.json", write_topology)
    for arch, n in (getattr(ctx, "networks", None) or {}).items():  # the other networks (spec networks:), beside the compute fabric's
        path = Path(dest) / arch / "networks-topology.json"
        network_topology.write(n, ctx.fabrics[arch], path, ctx.spec.provenance())
        paths.append(path)
    return paths
