"""``<arch>/addressing.csv``: every interface's address and peer, from :mod:`topogen.config.addressing`.

Columns: ``device``, ``role``, ``interface`` (``lo``, ``p<n>``, ``vlan<id>``
for a rail's gateway with ``gpu_subnet: rail``, ``nic<plane>`` at a GPU),
``vrf`` (``rail<r>`` on a switch carrying several rails, else empty),
``vlan`` (the access VLAN of a port in a rail subnet or VRF, else empty),
``address`` (``a.b.c.d/len``; empty on an unnumbered or bridged port),
``asn`` (switches), ``peer_device``, ``peer_interface``, ``peer_address``,
``peer_asn``, ``cable`` (the cabling.csv id), ``route`` (at a GPU NIC: the
prefix it reaches through ``peer_address``, its gateway).

Rows: every switch in device order (its loopback, its rail gateways, then its
ports in port order), then every GPU NIC in GPU and port order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

from topogen.config.addressing import Addressing, cidr_text, plan
from topogen.config.technology import writes
from topogen.exports.files import open_output, per_arch
from topogen.fabric.model import Fabric
from topogen.fabric.view import csv_header, csv_lines, int_texts, text_table, view

COLUMNS = ("device", "role", "interface", "vrf", "vlan", "address", "asn", "peer_device", "peer_interface", "peer_address", "peer_asn", "cable", "route")


def _cidr(addr: np.ndarray, plen: np.ndarray) -> np.ndarray:
    return cidr_text(addr, plen)


def _join(cols: list) -> np.ndarray:
    """Records (object array, no line end) of CSV fields given column by column."""
    lists = [c.tolist() if isinstance(c, np.ndarray) else c for c in cols]
    out = np.empty(len(lists[0]), dtype=object)
    out[:] = list(map(",".join, zip(*lists)))
    return out


def _blank(texts: np.ndarray, keep: np.ndarray) -> np.ndarray:
    out = texts.copy()
    out[~keep] = ""
    return out


SWITCH_CHUNK = 4096  # switches whose rows are formatted at once


def switch_rows(fabric: Fabric, ad: Addressing) -> Iterator[str]:
    """CSV text of the switch rows, a chunk of switches at a time: formatted column-wise, put in switch order."""
    v = view(fabric)
    n = fabric.gpus
    nsw = len(fabric.switches)
    rail_mode = ad.spec.gpu_subnet == "rail"
    k = fabric.hb_domain
    vrf_names = text_table([""] + [ad.vrf_name(r) for r in range(k)])
    vlan_texts = text_table([""] + [str(ad.vlan_id(r)) for r in range(k)])
    for s0 in range(0, nsw, SWITCH_CHUNK):
        s1 = min(s0 + SWITCH_CHUNK, nsw)
        e = ad.ends.switches(s0, s1)
        m = s1 - s0
        name_role = v.csv_device_role[n + s0 : n + s1]  # by switch - s0
        asn = int_texts(ad.asn[s0:s1])
        gpu_end = e.peer < n
        local = e.switch - s0
        keys = [np.arange(m, dtype=np.int64) * 3]
        lines = [_join([name_role, np.full(m, "lo,,", dtype=object), cidr_text(ad.loopback[s0:s1], np.full(m, 32)), asn, np.full(m, ",,,,,", dtype=object)])]
        if rail_mode and gpu_end.any():  # one gateway row per (switch, rail) with GPU ports
            g = np.flatnonzero(gpu_end)
            _, first = np.unique(local[g] * (k + 1) + e.rail[g], return_index=True)
            gi = g[first]
            sw, rail = local[gi], e.rail[gi].astype(np.int64)
            vrf = np.where(ad.shared[sw + s0], rail, -1)
            vlan = vlan_texts[rail + 1]
            lines.append(_join([name_role[sw], "vlan" + vlan, vrf_names[vrf + 1], vlan, cidr_text(e.addr[gi], e.plen[gi]), asn[sw], np.full(len(gi), ",,,,,", dtype=object)]))
            keys.append(sw * 3 + 1)
        rows = len(e.switch)
        if rows:
            vlan_on = (e.vrf >= 0) | (gpu_end & rail_mode)
            bridged = gpu_end & rail_mode
            peer = e.peer
            cols = [
                name_role[local],
                v.switch_ports(e.switch, e.port),
                vrf_names[e.vrf + 1],
                _blank(vlan_texts[e.rail + 1], vlan_on),
                _cidr(e.addr, np.where(bridged, 0, e.plen)),
                asn[local],
                v.csv_device[peer],
                v.ports(peer, e.peer_port),
                _cidr(e.peer_addr, e.plen),
                _blank(int_texts(np.where(peer >= n, e.peer_asn, 0)), peer >= n),
                int_texts(e.link + 1),
                np.full(rows, "", dtype=object),  # route: empty at a switch
            ]
            keys.append(local * 3 + 2)
            lines.append(_join(cols))
        text = np.concatenate(lines)[np.argsort(np.concatenate(keys), kind="stable")]  # per switch: loopback, gateways, ports in port order
        yield "\n".join(text.tolist()) + "\n"


def gpu_rows(fabric: Fabric, ad: Addressing) -> Iterator[str]:
    """CSV text of the GPU NIC rows (GPU-leaf links sorted by GPU, then NIC port), in chunks."""
    v = view(fabric)
    L = fabric.links
    g = np.flatnonzero(L.a_dev < fabric.gpus)
    g = g[np.lexsort((L.a_port[g], L.a_dev[g]))]
    for start in range(0, len(g), 65536):
        rows = g[start : start + 65536]
        a, z = L.a_dev[rows], L.z_dev[rows]
        cols = [
            v.csv_device[a],
            np.full(len(rows), "gpu", dtype=object),
            v.ports(a, L.a_port[rows]),
            np.full(len(rows), "", dtype=object),
            np.full(len(rows), "", dtype=object),
            _cidr(ad.a_addr[rows], ad.prefix_len[rows]),
            np.full(len(rows), "", dtype=object),
            v.csv_device[z],
            v.ports(z, L.z_port[rows]),
            _cidr(ad.z_addr[rows], ad.prefix_len[rows]),
            int_texts(ad.asn[z - fabric.gpus]),
            int_texts(rows + 1),
            _cidr(ad.gpu_route[rows], ad.gpu_route_len[rows]),
        ]
        yield csv_lines(cols, len(rows))


def write_addressing(fabric: Fabric, path: Path) -> None:
    ad = plan(fabric)
    with open_output(path, newline="") as fh:
        fh.write(csv_header(COLUMNS))
        for text in switch_rows(fabric, ad):
            fh.write(text)
        for text in gpu_rows(fabric, ad):
            fh.write(text)


def export(ctx, dest: Path) -> list[Path]:
    return per_arch({a: f for a, f in ctx.fabrics.items() if writes(ctx, a, "addressing")}, dest, "addressing.csv", write_addressing)
