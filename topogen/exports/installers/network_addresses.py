"""``<arch>/networks-addresses.csv``: every in-band and OOB address of the plan (:mod:`topogen.config.netaddr`).

Columns: ``device`` (named as in ``networks-cabling.csv``), ``device_role``,
``interface`` (``bond0`` of a node or management server, ``bmc``, ``mgmt0``,
``vlan<id>`` of a switch's SVI), ``network`` (``inband``, ``oob``), ``address``
(``a.b.c.d/len``), ``gateway`` (the subnet's; empty on the gateway itself), ``vlan``
(the subnet's VLAN), ``subnet`` (its prefix) and ``role`` (``gateway``: a leaf pair's
virtual gateway, on each of the two leaves; ``svi``: a switch's own address;
``host``). Rows: the in-band subnets in order, then the OOB ones, each by address.
Every cell goes through the one CSV rule (:func:`topogen.util.text.csv_field`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from topogen.config import netaddr
from topogen.config.addressing import ip_text
from topogen.exports.files import write_csv
from topogen.exports.network_view import NetworkView
from topogen.fabric import networks as nw

COLUMNS = ("device", "device_role", "interface", "network", "address", "gateway", "vlan", "subnet", "role")


def device_texts(a: netaddr.Addresses, v: NetworkView, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Names and roles of the devices of address ``rows``."""
    dev, role = np.empty(len(rows), dtype=object), np.empty(len(rows), dtype=object)
    kind, idx = a.kind[rows], a.idx[rows]
    for k in np.unique(kind).tolist():
        m = kind == k
        dev[m], role[m] = v.names[k][idx[m]], v.roles[k][idx[m]]
    return dev, role


def subnet_texts(a: netaddr.Addresses, net: int) -> tuple[np.ndarray, np.ndarray]:
    """``a.b.c.d/len`` of each subnet of ``net`` and its gateway's dotted quad."""
    s = a.subnets[net]
    return ip_text(s.base) + f"/{s.plen}" if len(s) else np.zeros(0, dtype=object), ip_text(s.gateway)


def generate_rows(a: netaddr.Addresses, v: NetworkView) -> Iterator[tuple]:
    """The rows (no header), in plan order."""
    for net in (nw.INBAND, nw.OOB):
        rows = a.of(net)
        if not len(rows):
            continue
        s = a.subnets[net]
        prefix, gw = subnet_texts(a, net)
        dev, role = device_texts(a, v, rows)
        addr = ip_text(a.addr[rows])
        sub = a.subnet[rows].tolist()
        roles = a.role[rows].tolist()
        name = nw.NETWORK_NAMES[net]
        for i in range(len(rows)):
            yield (dev[i], role[i], a.iface[rows[i]], name, f"{addr[i]}/{s.plen}", gw[sub[i]] if roles[i] == netaddr.HOST else "", s.vlan, prefix[sub[i]], netaddr.ROLES[roles[i]])


def write(a: netaddr.Addresses, n: nw.Networks, compute, path: Path) -> None:
    write_csv(path, COLUMNS, generate_rows(a, NetworkView(n, compute)))
