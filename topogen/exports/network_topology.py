"""``<arch>/networks-topology.json``: the storage, in-band and OOB networks as a networkx node-link multigraph.

Written beside ``topology.json`` (the compute fabric, unchanged) when the spec has a
``networks:`` section. Load it with ``networkx.node_link_graph(json.load(f), edges="edges")``.
Node ids are device names, as in ``networks-cabling.csv``. Node attributes: ``kind`` (node,
switch, mgmt, ufm, targets, nfs, pdu, dc-core, compute-switch), ``role`` (``storage-leaf``,
``inband-spine``, ``oob-access``... for the networks' switches; the compute role for a
compute switch managed over OOB; the kind otherwise) and, for the networks' switches,
``network`` and ``radix``. Edge attributes: ``key`` (the cable id of networks-cabling.csv),
``network``, ``role``, ``a_port``, ``z_port``, ``speed`` (Gb/s); ``source`` is the ``a`` end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from topogen.exports.files import open_output
from topogen.exports.network_cabling import generate_rows
from topogen.fabric import networks as nw

_dump = json.JSONEncoder(separators=(",", ":"), sort_keys=False).encode


def generate_chunks(n: nw.Networks, compute, provenance: str) -> Iterator[str]:
    """The document in pieces: every device that ends a cable once (first seen first), then every cable."""
    yield '{"directed":false,"multigraph":true,"graph":' + _dump({"networks": list(nw.NETWORK_NAMES), "provenance": provenance}) + ',"nodes":[\n'
    by_name = {s.name: s for s in n.switches}
    seen: set[str] = set()
    rows = list(generate_rows(n, compute))
    sep = ""
    c = n.cables
    for i, r in enumerate(rows):
        for name, role, kind in ((r[3], r[4], int(c.a_kind[i])), (r[7], r[8], int(c.z_kind[i]))):
            if name in seen:
                continue
            seen.add(name)
            node = {"id": name, "kind": nw.KIND_NAMES[kind], "role": role}
            if kind == nw.SWITCH:
                s = by_name[name]
                node.update(network=nw.NETWORK_NAMES[s.network], radix=s.radix)
            yield sep + _dump(node)
            sep = ",\n"
    yield '\n],"edges":[\n'
    sep = ""
    for r in rows:
        yield sep + _dump({"source": r[3], "target": r[7], "key": r[0], "network": r[1], "role": r[2], "a_port": r[5], "z_port": r[9], "speed": r[6]})
        sep = ",\n"
    yield "\n]}\n"


def write(n: nw.Networks, compute, path: Path, provenance: str) -> None:
    with open_output(path) as fh:
        for piece in generate_chunks(n, compute, provenance):
            fh.write(piece)
