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

from ..model import CHUNK, Fabric
from ..naming import width
from ..view import text_table, view
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


def _file_order(fabric: Fabric, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The cable ends of links ``rows`` in file order, and each one's device.

    End ``e < len(rows)`` is the ``a`` end of link ``rows[e]``, else the ``z`` end
    of ``rows[e - len(rows)]``. File order: switches (in switch order) then GPUs,
    each device's ports ascending (see :func:`_end_ports`).
    """
    L = fabric.links
    n = fabric.gpus
    dev = np.concatenate([L.a_dev[rows], L.z_dev[rows]])
    port = _end_ports(fabric, dev, np.concatenate([L.a_port[rows], L.z_port[rows]]))
    key = np.where(dev >= n, dev - n, dev + len(fabric.switches))  # switches first
    key *= int(port.max(initial=0)) + 1
    key += port
    del port
    order = np.argsort(key, kind="stable")
    return order, dev[order]


def _end_ports(fabric: Fabric, dev: np.ndarray, port: np.ndarray) -> np.ndarray:
    """The file's port numbers: switch ``p<n>`` is ``n``, GPU ``nic<plane>`` is ``plane + 1``."""
    return port.astype(np.int64) + (dev < fabric.gpus)


def generate_text(fabric: Fabric, sub: Subnet, size: int = CHUNK) -> Iterator[str]:
    """One subnet's file without the header comment, in pieces of about ``size`` lines.

    Streamed: each piece's lines are built from per-device tables (names from
    :func:`topogen.view.view`, GUID texts, LIDs) gathered for its rows only.
    """
    n = fabric.gpus
    L = fabric.links
    m = len(sub.links)
    order, dev = _file_order(fabric, sub.links)
    starts = np.flatnonzero(np.r_[True, dev[1:] != dev[:-1]]) if len(dev) else np.zeros(0, np.int64)
    devs = dev[starts]  # file order: switches, then GPUs
    lid = np.zeros(n + len(fabric.switches), np.int64)
    lid[devs] = np.arange(1, len(devs) + 1)
    names = view(fabric).device
    guids = GUID_BASE + (np.arange(n + len(fabric.switches), dtype=np.int64) << 4)
    tag = np.where(np.arange(len(lid)) >= n, "S", "H")
    ids = text_table(f'"{t}-{g:016x}"' for t, g in zip(tag[devs].tolist(), guids[devs].tolist()))
    id_of = np.empty(len(lid), dtype=object)
    id_of[devs] = ids
    radix = fabric.switch_ports()  # ports as the switch presents them: a faster uplink is one port
    speeds = np.unique(L.a_speed[sub.links])
    speed_text = text_table(speed_name(x) for x in speeds.tolist())
    ca_ports = fabric.spec.nic_ports
    for lo in range(0, len(dev), size):
        hi = min(lo + size, len(dev))
        e = order[lo:hi]
        r = sub.links[e % m] if m else e
        a_side = e < m
        d = dev[lo:hi]
        q = np.where(a_side, L.z_dev[r], L.a_dev[r])
        port_ = _end_ports(fabric, d, np.where(a_side, L.a_port[r], L.z_port[r]))
        peer_port_ = _end_ports(fabric, q, np.where(a_side, L.z_port[r], L.a_port[r]))
        spd = speed_text[np.searchsorted(speeds, L.a_speed[r])]
        out = np.empty(hi - lo, dtype=object)
        rows = np.flatnonzero(d >= n)  # switch ports: peer, its port (and port GUID at a GPU), name, LID
        if len(rows):
            qs, qps = q[rows], peer_port_[rows]
            pg = np.full(len(rows), "", dtype=object)
            at_gpu = np.flatnonzero(qs < n)
            pg[at_gpu] = [f"({g:x}) " for g in (guids[qs[at_gpu]] + qps[at_gpu]).tolist()]
            cols = (port_[rows].tolist(), id_of[qs].tolist(), qps.tolist(), pg.tolist(), names[qs].tolist(), lid[qs].tolist(), spd[rows].tolist())
            out[rows] = [f'[{a}]\t{b}[{c}]{g}\t\t# "{e}" lid {f} {h}' for a, b, c, g, e, f, h in zip(*cols)]
        rows = np.flatnonzero(d < n)  # CA ports: own port GUID and LID, then the peer
        if len(rows):
            qs, ds = q[rows], d[rows]
            cols = (port_[rows].tolist(), (guids[ds] + port_[rows]).tolist(), id_of[qs].tolist(), peer_port_[rows].tolist(), lid[ds].tolist(), names[qs].tolist(), lid[qs].tolist(), spd[rows].tolist())
            out[rows] = [f'[{a}]({g:x}) \t{b}[{c}]\t\t# lid {own} lmc 0 "{e}" lid {f} {h}' for a, g, b, c, own, e, f, h in zip(*cols)]
        at = starts[np.searchsorted(starts, lo) : np.searchsorted(starts, hi)]  # rows of this piece that start a device
        xs = dev[at]
        heads = np.empty(len(at), dtype=object)
        sw = np.flatnonzero(xs >= n)
        heads[sw] = [f'Switch\t{x} {i}\t\t# "{nm}" enhanced port 0 lid {li} lmc 0' for x, i, nm, li in zip(radix[xs[sw] - n].tolist(), id_of[xs[sw]].tolist(), names[xs[sw]].tolist(), lid[xs[sw]].tolist())]
        ca = np.flatnonzero(xs < n)
        heads[ca] = [f'Ca\t{ca_ports} {i}\t\t# "{nm}"' for i, nm in zip(id_of[xs[ca]].tolist(), names[xs[ca]].tolist())]
        out[at - lo] = [("\n" if i else "") + h + "\n" + line for i, h, line in zip(at.tolist(), heads.tolist(), out[at - lo].tolist())]
        yield "\n".join(out.tolist()) + "\n"


def sim_needs(fabric: Fabric, sub: Subnet) -> tuple[int, int, int]:
    """(switches, nodes, ports) ibsim must hold to load the subnet (a node's ports count port 0)."""
    n = fabric.gpus
    L = fabric.links
    a = L.a_dev[sub.links]
    seen = np.zeros(n, bool)
    seen[a[a < n]] = True
    gpus = np.flatnonzero(seen)  # (np.unique of a million ids hashes them: slower than this mark)
    radix = int((fabric.switch_ports()[sub.switch_ids - n] + 1).sum())
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
        for text in generate_text(fabric, sub):
            fh.write(text)


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
