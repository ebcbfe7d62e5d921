"""``<arch>/networks-cabling.csv``: every cable of the storage, in-band and OOB networks (spec ``networks:``).

Columns: ``cable`` (1-based), ``network`` (storage, inband, oob), ``role`` (node,
leaf-spine, target, isl, core-uplink, management-port, oob-uplink...), then both ends
as in ``cabling.csv``: ``a_device``, ``a_role``, ``a_port``, ``a_speed_gbps``,
``z_device``, ``z_role``, ``z_port``, ``z_speed_gbps``; then ``a_rack``, ``z_rack`` and
``length_m`` (the sold length, :mod:`topogen.layout.networks`; empty for the ends outside
the plan: storage targets, NFS, the data-centre core). The ``a`` end is the node or
managed device (or the lower switch), the ``z`` end the switch it lands on. Nodes are
named as in ``cabling.csv``; node ports are ``stor<i>``, ``inb<i>`` and ``bmc``, a
managed switch's port ``mgmt0``. The end columns are ``cabling.csv``'s, so the as-built
cabling reader (:mod:`topogen.asbuilt.cabling`) reads the file; ``topogen diff`` does not
compare the other networks yet. The compute fabric stays in ``cabling.csv``,
unchanged, so ``topogen validate`` and older builds read it as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from topogen.exports.files import write_csv
from topogen.fabric import networks as nw

COLUMNS = ("cable", "network", "role", "a_device", "a_role", "a_port", "a_speed_gbps", "z_device", "z_role", "z_port", "z_speed_gbps")


def generate_rows(n: nw.Networks, compute) -> Iterator[tuple]:
    """The rows (no header), in cable order; ``compute`` is the architecture's compute fabric (its switch names and roles)."""
    c = n.cables
    cnames = [s.name for s in compute.switches]
    croles = [s.role for s in compute.switches]
    names = {k: np.asarray(n.names(k, cnames), dtype=object) for k in range(len(nw.KIND_NAMES))}
    sroles = np.asarray([f"{nw.NETWORK_NAMES[s.network]}-{s.role}" for s in n.switches], dtype=object)
    roles = {k: np.full(max(len(names[k]), 1), nw.KIND_NAMES[k], dtype=object) for k in range(len(nw.KIND_NAMES))}
    roles[nw.SWITCH] = sroles if len(sroles) else roles[nw.SWITCH]
    roles[nw.FABRIC] = np.asarray(croles, dtype=object) if croles else roles[nw.FABRIC]

    def ends(kind, idx):
        dev, role = np.empty(len(kind), dtype=object), np.empty(len(kind), dtype=object)
        for k in np.unique(kind):
            m = kind == k
            dev[m], role[m] = names[int(k)][idx[m]], roles[int(k)][idx[m]]
        return dev, role

    ad, ar = ends(c.a_kind, c.a_idx)
    zd, zr = ends(c.z_kind, c.z_idx)
    for i in range(len(c)):
        net, role = int(c.net[i]), int(c.role[i])
        yield (
            i + 1, nw.NETWORK_NAMES[net], nw.ROLE_NAMES[role],
            ad[i], ar[i], n.port_name(int(c.a_kind[i]), int(c.a_port[i]), net, role), int(c.speed[i]),
            zd[i], zr[i], n.port_name(int(c.z_kind[i]), int(c.z_port[i]), net, role), int(c.speed[i]),
        )


FLOOR = ("a_rack", "z_rack", "length_m")


def write(n: nw.Networks, compute, path: Path, lay=None) -> None:
    """The file; with a :class:`~topogen.layout.networks.NetworkLayout`, each end's rack and the sold length follow (empty outside the plan)."""
    if lay is None:
        write_csv(path, COLUMNS, generate_rows(n, compute))
        return
    lengths = ["" if x != x else (str(int(x)) if float(x).is_integer() else str(x)) for x in lay.length_m.tolist()]
    rows = (r + (a, z, m) for r, a, z, m in zip(generate_rows(n, compute), lay.a_rack.tolist(), lay.z_rack.tolist(), lengths))
    write_csv(path, COLUMNS + FLOOR, rows)
