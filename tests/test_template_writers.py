"""topology.json and GraphML through string templates: the same bytes as the escaping encoders.

The templates paste names unescaped, which is safe only for plain text
(:func:`topogen.fabric.naming.plain_switch_text`). Every name topogen generates is
plain, over a grid of shapes; a fabric with other names (read from elsewhere)
takes the escaping path and still reads back exactly.
"""

from __future__ import annotations

import dataclasses
import json

import networkx as nx
import pytest

from topogen.exports.graphs import graphml, topology
from topogen.fabric import clos
from topogen.fabric.naming import plain_switch_text
from topogen.spec.cluster import build_spec, load_spec

SHAPES = [
    {"gpus": 64, "hb_domain": 8, "radix": 8},
    {"gpus": 1024, "hb_domain": 8, "radix": 16, "planes": 2},
    {"gpus": 4608, "hb_domain": 72, "radix": 32, "rail_packing": "dedicated"},
    {"gpus": 4096, "hb_domain": 256, "radix": 64},
    {"gpus": 8 * 37, "hb_domain": 8, "radix": 8, "provision": "minimal"},
    {"gpus": 2048, "hb_domain": 8, "radix": 16, "oversubscription": "3:1"},
]


def fabrics(shape):
    spec = build_spec({"name": "t", **shape})
    return [clos.generate(spec, arch) for arch in spec.arches]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "-".join(f"{v}" for v in s.values()))
def test_generated_names_are_plain_and_templates_match_the_encoders(shape):
    for f in fabrics(shape):
        assert plain_switch_text(f), f.arch
        fast = "".join(topology.generate_chunks(f, plain=True))
        assert fast == "".join(topology.generate_chunks(f, plain=False))
        json.loads(fast)
        assert "".join(graphml.generate_graphml(f, plain=True)) == "".join(graphml.generate_graphml(f, plain=False))


def odd_fabric():
    f = clos.generate(load_spec("demo", {}), "rail-optimized")
    sw = list(f.switches)
    sw[0] = dataclasses.replace(sw[0], name='leaf "A" <&> é\\\t1')
    return dataclasses.replace(f, switches=sw), sw[0].name


def test_other_names_are_escaped_in_topology_json(tmp_path):
    f, odd = odd_fabric()
    assert not plain_switch_text(f)
    p = tmp_path / "topology.json"
    topology.write_topology(f, p)
    g = nx.node_link_graph(json.loads(p.read_text(encoding="utf-8")), edges="edges")
    assert odd in g and g.degree(odd) == sum(1 for _ in g.edges(odd, keys=True)) > 0


def test_other_names_are_escaped_in_graphml(tmp_path):
    f, odd = odd_fabric()
    p = tmp_path / "topology.graphml"
    graphml.write_graphml(f, p)
    g = nx.read_graphml(p, force_multigraph=True)
    assert odd in g and g.degree(odd) > 0 and g.nodes[odd]["role"] == "leaf"
