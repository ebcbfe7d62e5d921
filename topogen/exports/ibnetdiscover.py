"""``<arch>/ibnetdiscover/<subnet>.topo``: the plan in InfiniBand ``ibnetdiscover`` topology format.

One file per subnet, i.e. per set of switches that cables join: the whole
fabric (``fabric.topo``; ``plane<p>.topo`` with several planes) for
rail-optimized, one file per rail (``rail<r>.topo``; ``rail<a>-<b>.topo`` for
rails sharing a switch; ``pl<p>-`` in front with several planes) for
rail-only, whose rails are separate subnets each with its own subnet manager.

The format is what ``ibnetdiscover`` prints and what Debian's ``ibsim`` loads
(``ibsim -s FILE``): a record per node, a header line
(``Switch <ports> "S-<guid>" # "<name>" ...`` or ``Ca <ports> "H-<guid>" #
"<name>"``), then one line per connected port (``[<port>] "<peer id>"[<peer
port>] # "<peer name>" lid <lid> 4xNDR``). Node descriptions are topogen's
device names; switch port ``p<n>`` is port ``[n]``, GPU NIC port
``nic<plane>`` is port ``[plane + 1]`` of the GPU's channel adapter. GUIDs
are derived from device ids (``GUID_BASE + (device id << 4)``; a CA's port
GUID adds the port number), so the same spec gives the same file.

ibsim's default tables hold 256 switches, 2,048 nodes and 13,312 ports; a
file that needs more says so in its header with the ``ibsim`` options that
raise the limits (:func:`ibsim_options`), and the build prints a note. The
file is valid ibnetdiscover output at any size, for comparing with what the
real fabric reports (``topogen diff``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from ..model import Fabric
from ..naming import GpuNames, device_names, width
from .files import arch_dir, open_output

GUID_BASE = 0x0002C90000000000  # Mellanox/NVIDIA OUI 00:02:c9 in the top bytes, device id below
IBSIM_SWITCHES = 256  # ibsim 0.10 defaults (``ibsim`` prints them at start-up)
IBSIM_NODES = 2048
IBSIM_PORTS = 13312
SPEED_NAMES = {2: "SDR", 5: "DDR", 10: "QDR", 14: "FDR", 25: "EDR", 50: "HDR", 100: "NDR", 200: "XDR"}  # per lane, Gb/s


@dataclass(frozen=True, slots=True)
class Subnet:
    """One isolated fabric: its file name stem, its switches (device ids) and its links (rows)."""

    name: str
    switch_ids: np.ndarray
    links: np.ndarray

    @property
    def switches(self) -> int:
        return int(len(self.switch_ids))


def guid(dev: int) -> int:
    """Node GUID of device ``dev``."""
    return GUID_BASE + (int(dev) << 4)


def speed_name(gbps: int) -> str:
    """``4xNDR`` for 400 Gb/s: the width x lane-rate token ibnetdiscover prints (4 lanes assumed)."""
    lane = gbps // 4
    return f"4x{SPEED_NAMES[lane]}" if gbps % 4 == 0 and lane in SPEED_NAMES else f"{gbps}G"


def subnets(fabric: Fabric) -> list[Subnet]:
    """The fabric's isolated subnets, in plane then rail order (see the module docstring)."""
    n = fabric.gpus
    sw = fabric.switches
    planes = np.fromiter((s.plane for s in sw), np.int64, len(sw))
    groups = np.fromiter((s.group for s in sw), np.int64, len(sw))
    key = planes * (fabric.hb_domain + 1) + groups
    link_key = key[fabric.links.z_dev - n]
    multi_plane = fabric.spec.planes > 1
    rw = width(fabric.hb_domain)
    out = []
    for k in np.unique(key).tolist():
        ids = np.flatnonzero(key == k) + n
        plane, group = divmod(k, fabric.hb_domain + 1)
        if fabric.arch == "rail-only":
            rails = sorted({r for i in ids.tolist() for r in sw[i - n].rails} or {group})
            stem = f"rail{rails[0]:0{rw}d}" + (f"-{rails[-1]:0{rw}d}" if len(rails) > 1 else "")
            name = f"pl{plane}-{stem}" if multi_plane else stem
        else:
            name = f"plane{plane}" if multi_plane else "fabric"
        out.append(Subnet(name, ids, np.flatnonzero(link_key == k)))
    return out


def ibsim_options(switches: int, nodes: int, ports: int) -> list[str]:
    """ibsim options that raise its table sizes to hold a fabric (empty when the defaults do)."""
    opts = []
    for flag, need, default in (("-S", switches, IBSIM_SWITCHES), ("-N", nodes, IBSIM_NODES), ("-P", ports, IBSIM_PORTS)):
        if need > default:
            opts += [flag, str(need)]
    return opts


def _ends(fabric: Fabric, rows: np.ndarray) -> tuple[np.ndarray, ...]:
    """Both ends of each link of ``rows`` as (dev, port, peer, peer port, speed), in file order.

    File order: switches (in switch order) then GPUs, each device's ports ascending.
    Ports are the file's numbers: switch ``p<n>`` is ``n``, GPU ``nic<plane>`` is ``plane + 1``.
    """
    L = fabric.links
    n = fabric.gpus
    a, z = L.a_dev[rows], L.z_dev[rows]
    ap = L.a_port[rows].astype(np.int64) + (a < n)
    zp = L.z_port[rows].astype(np.int64)
    sp = L.a_speed[rows].astype(np.int64)
    dev = np.concatenate([a, z])
    port = np.concatenate([ap, zp])
    peer = np.concatenate([z, a])
    peer_port = np.concatenate([zp, ap])
    speed = np.concatenate([sp, sp])
    rank = np.where(dev >= n, dev - n, dev + len(fabric.switches))  # switches first
    order = np.lexsort((port, rank))
    return dev[order], port[order], peer[order], peer_port[order], speed[order], rank[order]


def generate_lines(fabric: Fabric, sub: Subnet) -> Iterator[str]:
    """The lines of one subnet's file (without the header comment)."""
    n = fabric.gpus
    dev, port, peer, peer_port, speed, rank = _ends(fabric, sub.links)
    order_devs, first = np.unique(rank, return_index=True)
    devs = dev[first]
    lid_rank = order_devs  # sorted: lid = position + 1
    peer_rank = np.where(peer >= n, peer - n, peer + len(fabric.switches))
    peer_lid = np.searchsorted(lid_rank, peer_rank) + 1
    sw_names = np.array([s.name for s in fabric.switches], dtype=object)
    gn = GpuNames(n, fabric.hb_domain)
    names = dict(zip(devs.tolist(), device_names(fabric, devs, sw_names, gn).tolist()))
    ids = {d: (f'"S-{guid(d):016x}"' if d >= n else f'"H-{guid(d):016x}"') for d in devs.tolist()}
    lids = dict(zip(devs.tolist(), range(1, len(devs) + 1)))
    ca_ports = fabric.spec.nic_ports
    speeds = {s: speed_name(s) for s in np.unique(speed).tolist()}
    current = -1
    for d, p, q, qp, s, ql in zip(dev.tolist(), port.tolist(), peer.tolist(), peer_port.tolist(), speed.tolist(), peer_lid.tolist()):
        if d != current:
            if current != -1:
                yield ""
            current = d
            if d >= n:
                yield f'Switch\t{fabric.switches[d - n].radix} {ids[d]}\t\t# "{names[d]}" enhanced port 0 lid {lids[d]} lmc 0'
            else:
                yield f'Ca\t{ca_ports} {ids[d]}\t\t# "{names[d]}"'
        if d >= n:
            pg = f"({guid(q) + qp:x}) " if q < n else ""
            yield f'[{p}]\t{ids[q]}[{qp}]{pg}\t\t# "{names[q]}" lid {ql} {speeds[s]}'
        else:
            yield f'[{p}]({guid(d) + p:x}) \t{ids[q]}[{qp}]\t\t# lid {lids[d]} lmc 0 "{names[q]}" lid {ql} {speeds[s]}'


def sim_needs(fabric: Fabric, sub: Subnet) -> tuple[int, int, int]:
    """(switches, nodes, ports) ibsim must hold to load the subnet (a node's ports count port 0)."""
    n = fabric.gpus
    L = fabric.links
    gpus = np.unique(L.a_dev[sub.links][L.a_dev[sub.links] < n])
    radix = sum(fabric.switches[i - n].radix + 1 for i in sub.switch_ids.tolist())
    nodes = sub.switches + len(gpus)
    return sub.switches, nodes, radix + len(gpus) * (fabric.spec.nic_ports + 1)


def header(fabric: Fabric, sub: Subnet) -> list[str]:
    need = sim_needs(fabric, sub)
    opts = ibsim_options(*need)
    lines = [
        f"# generated by {fabric.spec.provenance()}; arch {fabric.arch}; subnet {sub.name}",
        f"# {need[0]} switches, {need[1] - need[0]} channel adapters (GPUs), {len(sub.links)} cables",
    ]
    if opts:
        lines.append(f"# exceeds ibsim's default tables (256 switches, 2048 nodes, 13312 ports): simulate with ibsim {' '.join(opts)} -s FILE")
    else:
        lines.append("# simulate with: ibsim -s FILE")
    return lines + [""]


def write_subnet(fabric: Fabric, sub: Subnet, path: Path) -> None:
    with open_output(path, newline="\n") as fh:
        fh.write("\n".join(header(fabric, sub)) + "\n")
        buf: list[str] = []
        for line in generate_lines(fabric, sub):
            buf.append(line)
            if len(buf) >= 65536:
                fh.write("\n".join(buf) + "\n")
                buf.clear()
        if buf:
            fh.write("\n".join(buf) + "\n")


def export(ctx, dest: Path) -> list[Path]:
    paths = []
    for arch, fabric in ctx.fabrics.items():
        d = arch_dir(dest, arch, "ibnetdiscover")
        over = []
        for sub in subnets(fabric):
            p = d / f"{sub.name}.topo"
            write_subnet(fabric, sub, p)
            paths.append(p)
            if ibsim_options(*sim_needs(fabric, sub)):
                over.append(sub.name)
        if over:
            shown = ", ".join(over[:4]) + (f" and {len(over) - 4} more" if len(over) > 4 else "")
            ctx.messages.append(f"{arch}: ibnetdiscover subnet(s) {shown} exceed ibsim's default tables (256 switches per fabric); the file's header gives the ibsim -S/-N/-P options to simulate it; it is valid ibnetdiscover output for topogen diff at any size")
    return paths
