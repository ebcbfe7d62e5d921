"""An NVIDIA Air topology (JSON) of the fabric: every switch a Cumulus VX, every compute node a server, every cable a link.

The JSON topology format Air imports (``{"format": "JSON", "title": ...,
"content": {"nodes": {...}, "links": [[end, end], ...]}}``): switch ports
are named as in the NVUE files (``swp<n>``, ``swp<n>s<j>`` for a breakout
leg, :mod:`topogen.config.ports`), so each switch boots its generated
``startup.yaml``; a node's NIC port ``i`` is ``eth<i+1>`` (``eth0`` is Air's
management port), in the order of the node's netplan file. Links: switch
links then GPU links, in cable order; a leaf pair's inter-switch links
(``design: leaf-pair``) are switch links, after the others (leaf-a first).
"""

from __future__ import annotations

import json
from typing import Iterator

import numpy as np

from topogen.config.addressing import plan
from topogen.config.hosts import node_links, nodes
from topogen.config.ports import port_names
from topogen.config.scalars import int_text, json_inner

CHUNK = 65536  # nodes or links per piece of text

SWITCH_OS = "cumulus-vx-5.9.1"
SERVER_OS = "generic/ubuntu2204"


def _interface_names(ctx, fabric) -> tuple[np.ndarray, np.ndarray]:
    """The interface at each end of every link (object arrays): switch ports as Cumulus names them, node NICs ``eth<n>``."""
    ad = plan(fabric)
    e = ad.ends
    L = fabric.cable_table()  # the links, then a leaf pair's ISLs
    names = np.asarray(port_names(ctx, fabric, ad).cumulus(np.arange(len(e.switch))), dtype=object)
    z_name = np.empty(len(L), dtype=object)
    a_name = np.empty(len(L), dtype=object)
    z_name[e.link[~e.up]] = names[~e.up]
    a_name[e.link[e.up]] = names[e.up]
    rows, starts = node_links(fabric)
    node_of = np.repeat(np.arange(nodes(fabric).nodes), np.diff(starts))
    a_name[rows] = "eth" + int_text(np.arange(len(rows)) - starts[node_of] + 1)
    return a_name, z_name


def topology(ctx, fabric) -> dict:
    """The Air topology of one fabric, as a dict."""
    L = fabric.cable_table()
    n = fabric.gpus
    a_name, z_name = _interface_names(ctx, fabric)
    nn = nodes(fabric)
    node_names = [nn.name(i) for i in range(nn.nodes)]
    sw = fabric.switches
    a_dev = L.a_dev.tolist()
    z_dev = L.z_dev.tolist()
    per_gpu = nn.per_node
    links = []
    order = np.r_[np.flatnonzero(L.a_dev >= n), np.flatnonzero(L.a_dev < n)]
    for i in order.tolist():
        a = a_dev[i]
        a_node = sw[a - n].name if a >= n else node_names[a // per_gpu]
        links.append([{"node": a_node, "interface": a_name[i]}, {"node": sw[z_dev[i] - n].name, "interface": z_name[i]}])
    content_nodes = {s.name: {"os": SWITCH_OS, "cpu": 2, "memory": 2048} for s in sw}
    content_nodes.update({x: {"os": SERVER_OS, "cpu": 2, "memory": 2048} for x in node_names})
    return {"format": "JSON", "title": f"{fabric.spec.name} {fabric.arch}", "content": {"nodes": content_nodes, "links": links}}


def reference_text(ctx, fabric) -> str:
    """``json.dumps(indent=1)`` of :func:`topology`: the definition :func:`chunks` must equal (slow; for tests)."""
    return json.dumps(topology(ctx, fabric), indent=1) + "\n"


def _link_ends(ctx, fabric) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """JSON-escaped (node, interface) of both ends of every link, in :func:`topology`'s link order."""
    L = fabric.cable_table()
    n = fabric.gpus
    a_name, z_name = _interface_names(ctx, fabric)
    nn = nodes(fabric)
    sw_names = json_inner([s.name for s in fabric.switches])
    node_names = json_inner([nn.name(i) for i in range(nn.nodes)])
    order = np.r_[np.flatnonzero(L.a_dev >= n), np.flatnonzero(L.a_dev < n)]
    a = L.a_dev[order]
    a_node = np.empty(len(order), dtype=object)
    up = a >= n
    a_node[up] = sw_names[a[up] - n]
    a_node[~up] = node_names[a[~up] // nn.per_node]
    return a_node, json_inner(a_name[order]), sw_names[L.z_dev[order] - n], json_inner(z_name[order])


def chunks(ctx, fabric) -> Iterator[str]:
    """The Air topology's JSON text (``json.dumps(indent=1)`` of :func:`topology`) in pieces of at most ``CHUNK`` nodes or links, written from columns."""
    nn = nodes(fabric)
    title = json.dumps(f"{fabric.spec.name} {fabric.arch}")
    yield f'{{\n "format": "JSON",\n "title": {title},\n "content": {{\n  "nodes": '
    entries = [(json_inner([s.name for s in fabric.switches]), SWITCH_OS), (json_inner([nn.name(i) for i in range(nn.nodes)]), SERVER_OS)]
    if not any(len(names) for names, _ in entries):
        yield "{},\n"
    else:
        first = True
        for names, os_name in entries:
            template = f'   "{{}}": {{{{\n    "os": {json.dumps(os_name)},\n    "cpu": 2,\n    "memory": 2048\n   }}}}'
            for i in range(0, len(names), CHUNK):
                text = ",\n".join(map(template.format, names[i : i + CHUNK].tolist()))
                yield ("{\n" if first else ",\n") + text
                first = False
        yield "\n  },\n"
    yield '  "links": '
    a_node, a_if, z_node, z_if = _link_ends(ctx, fabric)
    if not len(a_node):
        yield "[]\n }\n}\n"
        return
    template = '   [\n    {{\n     "node": "{}",\n     "interface": "{}"\n    }},\n    {{\n     "node": "{}",\n     "interface": "{}"\n    }}\n   ]'
    for i in range(0, len(a_node), CHUNK):
        cut = slice(i, i + CHUNK)
        yield ("[\n" if i == 0 else ",\n") + ",\n".join(map(template.format, a_node[cut].tolist(), a_if[cut].tolist(), z_node[cut].tolist(), z_if[cut].tolist()))
    yield "\n  ]\n }\n}\n"
