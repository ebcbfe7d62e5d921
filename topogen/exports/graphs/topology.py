"""``<arch>/topology.json``: the fabric as a networkx node-link multigraph.

Load it with ``networkx.node_link_graph(json.load(f), edges="edges")``.
Node ids are device names. Node attributes: ``role`` (gpu, leaf, spine, core,
tier4...), ``tier`` (0 for GPUs), ``plane`` (switches), ``rails`` (switches:
the rails carried, ``[]`` for rail-optimized spines/cores which carry all),
``rail`` and ``hb_domain`` (GPUs), ``radix`` (switches). Edge attributes:
``key`` (the cable id of cabling.csv), ``tier``, ``plane``, ``a_port``,
``z_port``, ``speed`` (Gb/s); ``source`` is the lower end. The inter-switch
links of a leaf pair (``design: leaf-pair``) follow, keys continuing, ``source``
leaf-a, with one more attribute ``link: "leaf-leaf"`` (only they have it). The ``graph``
attributes carry the architecture, the spec and the provenance.

With the spec's ``networks:`` section the graph holds every network: each node and edge
has a ``network`` attribute (``compute`` on the compute fabric's), and the storage, in-band
and OOB devices (hosts ``hb000``..., the networks' switches, servers, PDUs) and cables
follow, as :meth:`topogen.exports.network_view.NetworkView.graph_nodes` and
``graph_edges`` describe them (edge keys ``<network>-<id>``, the ids of
``networks-cabling.csv``). Without it the file is as before.

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

from topogen.exports.files import open_output, per_arch
from topogen.exports.network_view import NetworkView
from topogen.fabric.graph import edge_columns, gpu_columns, graph_attrs, switch_attrs
from topogen.fabric.model import Fabric
from topogen.fabric.naming import plain_switch_text

_dump = json.JSONEncoder(separators=(",", ":"), sort_keys=False).encode


def generate_chunks(fabric: Fabric, plain: bool | None = None, view: NetworkView | None = None) -> Iterator[str]:
    """The document in pieces; ``plain`` picks the template (default: when the names allow it).

    With ``view`` (the other networks of the spec's ``networks:``) every node and edge gets a
    ``network`` attribute (``compute`` for the compute fabric's), and the networks' devices
    and cables follow the compute fabric's (:meth:`NetworkView.graph_nodes`, ``graph_edges``).
    """
    if plain is None:
        plain = plain_switch_text(fabric)
    tag = ',"network":"compute"' if view is not None else ""
    yield '{"directed":false,"multigraph":true,"graph":' + _dump(graph_attrs(fabric)) + ',"nodes":[\n'
    sep = ""
    for names, rails, doms in gpu_columns(fabric):
        if plain:
            lines = [f'{{"id":"{nm}","role":"gpu","tier":0,"rail":{r},"hb_domain":{d}{tag}}}' for nm, r, d in zip(names, rails, doms)]
        else:
            lines = [_dump({"id": nm, "role": "gpu", "tier": 0, "rail": r, "hb_domain": d, **_net(view)}) for nm, r, d in zip(names, rails, doms)]
        yield sep + ",\n".join(lines)
        sep = ",\n"
    if plain:
        lines = [
            f'{{"id":"{s.name}","role":"{s.role}","tier":{s.tier},"plane":{s.plane},"rails":[{",".join(map(str, s.rails))}],"radix":{s.radix}{tag}}}'
            for s in fabric.switches
        ]
    else:
        lines = [_dump({"id": s.name, **switch_attrs(s), **_net(view)}) for s in fabric.switches]
    if view is not None:
        lines += [_dump({"id": nid, **attrs}) for nid, attrs in view.graph_nodes()]
    if lines:
        yield sep + ",\n".join(lines)
    yield '\n],"edges":[\n'
    sep = ""
    for c in edge_columns(fabric):
        cols = (c["source"], c["target"], c["key"], c["tier"], c["plane"], c["a_port"], c["z_port"], c["speed"])
        link = {"link": c["link"][0]} if "link" in c else {}  # the ISLs' chunks: one value on every row
        ltag = f',"link":"{link["link"]}"' if link else ""
        if plain:
            lines = [
                f'{{"source":"{s_}","target":"{t_}","key":{k},"tier":{ti},"plane":{pl},"a_port":"{ap}","z_port":"{zp}","speed":{sp}{ltag}{tag}}}'
                for s_, t_, k, ti, pl, ap, zp, sp in zip(*cols)
            ]
        else:
            lines = [
                _dump({"source": s_, "target": t_, "key": k, "tier": ti, "plane": pl, "a_port": ap, "z_port": zp, "speed": sp, **link, **_net(view)})
                for s_, t_, k, ti, pl, ap, zp, sp in zip(*cols)
            ]
        yield sep + ",\n".join(lines)
        sep = ",\n"
    if view is not None:
        edges = [_dump({"source": a, "target": z, "key": k, **attrs}) for a, z, k, attrs in view.graph_edges()]
        if edges:
            yield sep + ",\n".join(edges)
    yield "\n]}\n"


def _net(view) -> dict:
    return {"network": "compute"} if view is not None else {}


def write_topology(fabric: Fabric, path: Path, view: NetworkView | None = None) -> None:
    with open_output(path) as fh:
        for piece in generate_chunks(fabric, view=view):
            fh.write(piece)


def export(ctx, dest: Path) -> list[Path]:
    nets = getattr(ctx, "networks", None) or {}
    return per_arch(ctx.fabrics, dest, "topology.json", lambda f, p: write_topology(f, p, NetworkView(nets[f.arch], f) if f.arch in nets else None))
