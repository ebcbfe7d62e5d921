"""The fabric as a graph: one attribute schema for networkx, topology.json and GraphML.

Node ids are device names. Node attributes: ``role`` (gpu, leaf, spine, core,
tier4...), ``tier`` (0 for GPUs); GPUs ``rail`` and ``hb_domain``; switches
``plane``, ``rails`` (the rails carried; empty for rail-optimized spines and
cores, which carry all) and ``radix``. Edges (one per cable, so parallel cables
are parallel edges of a multigraph): ``key`` (the cable id of cabling.csv),
``tier`` (1 = GPU–leaf), ``plane``, ``a_port``, ``z_port``, ``speed`` (Gb/s);
the edge's first end is the lower device. The inter-switch links of a leaf pair
(``design: leaf-pair``) follow the links, keys continuing (cabling.csv's cable
ids): ``tier`` 1, first end leaf-a, second leaf-b, and one more attribute,
``link`` = ``"leaf-leaf"`` (:data:`~topogen.fabric.naming.ISL_LINK`), the way
to tell an ISL; no other edge has ``link``, so a Clos graph is as before.

Counts: ``gpus + switches`` nodes and ``links + isls`` edges. The record generators
work in chunks of numpy-formatted columns, so exporters can stream 10^6-GPU
fabrics; :func:`to_networkx` is for fabrics that fit a Python graph.
"""

from __future__ import annotations

from typing import Any, Iterator

import networkx as nx
import numpy as np

from topogen.fabric.model import CHUNK, Fabric, LinkTable, Switch
from topogen.fabric.naming import ISL_LINK
from topogen.fabric.view import view


def switch_attrs(s: Switch) -> dict[str, Any]:
    return {"role": s.role, "tier": s.tier, "plane": s.plane, "rails": list(s.rails), "radix": s.radix}


def gpu_columns(fabric: Fabric) -> Iterator[tuple[list[str], list[int], list[int]]]:
    """Chunks of (GPU names, rails, HB domains)."""
    names = view(fabric).device
    for start in range(0, fabric.gpus, CHUNK):
        ids = np.arange(start, min(start + CHUNK, fabric.gpus))
        dom, rail = np.divmod(ids, fabric.hb_domain)
        yield names[start : start + len(ids)].tolist(), rail.tolist(), dom.tolist()


def edge_columns(fabric: Fabric) -> Iterator[dict[str, list]]:
    """Chunks of edge columns: key, source, target, tier, plane, a_port, z_port, speed.

    The links' chunks, then the ISLs' (keys continuing), whose chunks also carry
    ``link`` (``"leaf-leaf"`` on every row); a link chunk has no ``link`` column.
    """
    v = view(fabric)
    yield from _edge_chunks(v, fabric.links, 0, v.chunks())
    isls = fabric.isls
    if len(isls):
        for cols in _edge_chunks(v, isls, len(fabric.links), v.chunks(len(isls))):
            cols["link"] = [ISL_LINK] * len(cols["key"])
            yield cols


def _edge_chunks(v, L: LinkTable, first: int, slices: Iterator[slice]) -> Iterator[dict[str, list]]:
    """Edge columns of the rows of ``L`` in ``slices``; keys start after ``first`` cables."""
    for sl in slices:
        a, z = L.a_dev[sl], L.z_dev[sl]
        yield {
            "key": list(range(first + sl.start + 1, first + sl.stop + 1)),
            "source": v.device[a].tolist(),
            "target": v.device[z].tolist(),
            "tier": L.tier[sl].tolist(),
            "plane": L.plane[sl].tolist(),
            "a_port": v.ports(a, L.a_port[sl]).tolist(),
            "z_port": v.ports(z, L.z_port[sl]).tolist(),
            "speed": L.a_speed[sl].tolist(),
        }


def graph_attrs(fabric: Fabric) -> dict[str, Any]:
    spec = fabric.spec
    return {"arch": fabric.arch, "tiers": fabric.tiers, "spec": spec.to_dict(), "generator": spec.provenance()}


def to_networkx(fabric: Fabric) -> nx.MultiGraph:
    """The fabric as a networkx MultiGraph with the attributes documented above.

    Equal to ``networkx.node_link_graph`` of the build's topology.json. Holds one
    Python object per GPU and per cable: fine for tens of thousands of GPUs; for
    larger fabrics work on :class:`~topogen.fabric.model.LinkTable` columns instead.
    """
    g = nx.MultiGraph(**graph_attrs(fabric))
    for names, rails, doms in gpu_columns(fabric):
        g.add_nodes_from((n, {"role": "gpu", "tier": 0, "rail": r, "hb_domain": d}) for n, r, d in zip(names, rails, doms))
    g.add_nodes_from((s.name, switch_attrs(s)) for s in fabric.switches)
    for cols in edge_columns(fabric):
        attrs = ("tier", "plane", "a_port", "z_port", "speed") + (("link",) if "link" in cols else ())
        g.add_edges_from(
            (s, t, k, dict(zip(attrs, vals)))
            for s, t, k, *vals in zip(cols["source"], cols["target"], cols["key"], *(cols[a] for a in attrs))
        )
    return g
