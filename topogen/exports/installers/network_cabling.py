"""``<arch>/networks-cabling.csv``: every cable of the storage, in-band and OOB networks (spec ``networks:``).

Columns: ``cable`` (1-based), ``network`` (storage, inband, oob), ``role`` (node,
leaf-spine, target, isl, core-uplink, management-port, oob-uplink...), then both ends
as in ``cabling.csv``: ``a_device``, ``a_role``, ``a_port``, ``a_speed_gbps``,
``z_device``, ``z_role``, ``z_port``, ``z_speed_gbps``. The ``a`` end is the node or
managed device (or the lower switch), the ``z`` end the switch it lands on. Nodes are
named as in ``cabling.csv``; node ports are ``stor<i>``, ``inb<i>`` and ``bmc`` (``bmc0``, ``bmc1``... with several), a
managed switch's port ``mgmt0``. ``topogen diff --format cabling`` reads the file like
``cabling.csv`` (it has the same end columns). The compute fabric stays in ``cabling.csv``,
unchanged, so ``topogen validate`` and older builds read it as before. A build adds the
floor columns of :data:`topogen.layout.networks.FLOOR_COLUMNS` (``a_rack``, ``a_u``,
``z_rack``, ``z_u``, ``length_m``, ``label``), as ``cabling.csv`` has them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from topogen.exports.files import write_csv
from topogen.exports.network_view import NetworkView
from topogen.fabric import networks as nw
from topogen.layout.networks import FLOOR_COLUMNS, NetworkLayout, floor_rows

COLUMNS = ("cable", "network", "role", "a_device", "a_role", "a_port", "a_speed_gbps", "z_device", "z_role", "z_port", "z_speed_gbps")


def generate_rows(n: nw.Networks, compute, nlay: NetworkLayout | None = None) -> Iterator[tuple]:
    """The rows (no header), in cable order; ``compute`` is the architecture's compute fabric (its switch names and roles); with ``nlay``, the floor columns."""
    c = n.cables
    v = NetworkView(n, compute)
    (ad, ar, ap), (zd, zr, zp) = v.a, v.z
    floor = floor_rows(n, nlay, ad, ap, zd, zp) if nlay is not None else [()] * len(c)
    for i in range(len(c)):
        net, role = int(c.net[i]), int(c.role[i])
        yield (
            i + 1, nw.NETWORK_NAMES[net], nw.ROLE_NAMES[role],
            ad[i], ar[i], ap[i], int(c.speed[i]),
            zd[i], zr[i], zp[i], int(c.speed[i]),
            *floor[i],
        )


def write(n: nw.Networks, compute, path: Path, nlay: NetworkLayout | None = None) -> None:
    write_csv(path, COLUMNS + (FLOOR_COLUMNS if nlay is not None else ()), generate_rows(n, compute, nlay))
