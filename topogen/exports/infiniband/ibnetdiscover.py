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
GUID adds the port number), so the same spec gives the same file. As the real
tool does, a ``switchguid=<node guid>(<port 0 guid>)`` or ``caguid=<node
guid>`` line precedes each record: ``ibsim`` takes the node's GUIDs from it
(without it, ibsim numbers nodes itself), so files keyed by these GUIDs
(OpenSM's partitions and ftree root/CN lists, :mod:`topogen.exports.infiniband.opensm_files`)
apply to the simulated fabric as they would to the real one.

InfiniBand port numbers are 8 bits (1..254), so a switch of more ports
(``Fabric.switch_ports()`` above 254: a 288- or 576-port modular chassis) is
written as a real director shows itself: its switch ASICs, a non-blocking
2-tier Clos inside the chassis (:mod:`topogen.fabric.director`). Leaf ASICs of 32
external + 32 internal ports carry the chassis ports (``p<n>`` is port
``(n-1) % 32 + 1`` of leaf ``(n-1) // 32 + 1``), spine ASICs join every leaf
equally; node descriptions ``<chassis>/L<nn>/U1`` and ``<chassis>/S<nn>/U1``,
each record after a ``sysimgguid=`` line holding the chassis' own GUID. ASIC
``a`` (from 0) of device ``d`` has GUID ``GUID_BASE + ((a + 1) << 32) +
(d << 4)``: device GUIDs leave bits 32-39 zero, so none collide. The header
and the ibsim options count ASICs as switches and the internal links; the
reader (:mod:`topogen.asbuilt.ibnetdiscover`) folds a director back into one
device. A file of a fabric without such switches is as it always was.

ibsim's default tables hold 256 switches, 2,048 nodes and 13,312 ports; a
file that needs more says so in its header with the ``ibsim`` options that
raise the limits (:func:`ibsim_options`), and the build prints a note. The
file is valid ibnetdiscover output at any size, for comparing with what the
real fabric reports (``topogen diff``).

A leaf pair (``design: leaf-pair``) is one subnet per plane: its inter-switch
links are switch-to-switch records (``[<port>] "S-<leaf-b guid>"[<port>]`` in
leaf-a's record and back), after the links in cable order.

An InfiniBand storage fabric (spec ``networks:``) gets ``storage.topo`` beside
these (:func:`topogen.exports.infiniband.storage.export`, the registered exporter).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from topogen.exports.files import arch_dir, open_output
from topogen.fabric import director
from topogen.fabric.model import CHUNK, Fabric
from topogen.fabric.naming import width
from topogen.fabric.view import text_table, view

GUID_BASE = 0x0002C90000000000  # Mellanox/NVIDIA OUI 00:02:c9 in the top bytes, device id below
IBSIM_SWITCHES = 256  # ibsim 0.10 defaults (``ibsim`` prints them at start-up)
IBSIM_NODES = 2048
IBSIM_PORTS = 13312
SPEED_NAMES = {2: "SDR", 5: "DDR", 10: "QDR", 14: "FDR", 25: "EDR", 50: "HDR", 100: "NDR", 200: "XDR"}  # per lane, Gb/s
FIND = object()  # a ``dirs`` argument not given: the function finds the directors itself (:func:`directors`)


@dataclass(frozen=True, slots=True)
class Subnet:
    """One isolated fabric: its file name stem, its switches (device ids) and its cables (rows of ``fabric.cable_table()``: the links, then a leaf pair's ISLs)."""

    name: str
    switch_ids: np.ndarray
    links: np.ndarray

    @property
    def switches(self) -> int:
        return int(len(self.switch_ids))


def guid(dev: int) -> int:
    """Node GUID of device ``dev``."""
    return GUID_BASE + (int(dev) << 4)


def asic_guid(dev: int, asic: int) -> int:
    """Node GUID of ASIC ``asic`` (numbered in the chassis, from 0) of director ``dev``.

    The ASIC number + 1 goes in bits 32-39, which device GUIDs leave zero (a
    device id stays below 2**28), so no two nodes share a GUID.
    """
    return guid(dev) + ((int(asic) + 1) << 32)


@dataclass(frozen=True, slots=True)
class Directors:
    """A subnet's directors (switches of more than 254 ports with a cable in it), as switch ASICs.

    File nodes: device ids for every other device, then each director's ASICs
    (:mod:`topogen.fabric.director`) from ``base[i]`` on. Internal ends: ``2·links``
    of them, end ``t < links`` the leaf side of internal link ``t``, end
    ``links + t`` its spine side; ``end_dev`` and ``end_key`` (``ASIC << 8 |
    port``) place them in file order, ``end_node`` and ``end_port`` are what
    the file prints.
    """

    dev: np.ndarray  # director device ids, ascending
    row: np.ndarray  # per switch (dev - gpus): the director's row here, -1 for other switches
    base: np.ndarray  # file node of each director's first ASIC
    shapes: list[director.Shape]
    speed: np.ndarray  # each director's internal link speed: its fastest cable's
    end_dev: np.ndarray
    end_key: np.ndarray
    end_node: np.ndarray
    end_port: np.ndarray
    end_speed: np.ndarray

    @property
    def asics(self) -> int:
        return sum(s.asics for s in self.shapes)

    @property
    def links(self) -> int:
        return len(self.end_dev) // 2

    def tables(self, names: np.ndarray, guids: np.ndarray, radix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-node tables: device names and GUIDs (by node), switch ports (by node - gpus), extended by the ASICs."""
        chassis = names[self.dev].tolist()
        asic_names = text_table(x for s, c in zip(self.shapes, chassis) for x in s.names(c))
        asic_guids = np.fromiter((asic_guid(d, a) for d, s in zip(self.dev.tolist(), self.shapes) for a in range(s.asics)), np.int64, self.asics)
        ports = np.concatenate([s.asic_ports() for s in self.shapes])
        return np.concatenate([names, asic_names]), np.r_[guids, asic_guids], np.r_[radix, ports]

    def image_guids(self, nodes: np.ndarray) -> np.ndarray:
        """System image GUID of ASIC ``nodes``: their chassis' device GUID."""
        return GUID_BASE + (self.dev[np.searchsorted(self.base, nodes, side="right") - 1] << 4)

    def which(self, dev: np.ndarray, gpus: int) -> np.ndarray:
        """Each device's director row, -1 for any other device."""
        k = np.full(len(dev), -1, np.int64)
        sw = np.flatnonzero(dev >= gpus)
        k[sw] = self.row[dev[sw] - gpus]
        return k

    def keyed(self, dev: np.ndarray, port: np.ndarray, gpus: int) -> tuple[np.ndarray, np.ndarray]:
        """Cable ends with director ports as sort keys (``ASIC << 8 | ASIC port``), the internal ends appended."""
        at = self.which(dev, gpus) >= 0
        leaf, j = director.external(port[at])
        port[at] = (leaf << 8) | j
        return np.concatenate([dev, self.end_dev]), np.concatenate([port, self.end_key])

    def nodes(self, dev: np.ndarray, key: np.ndarray, gpus: int) -> np.ndarray:
        """File node of each end, from its device and (for a director) sort key."""
        k = self.which(dev, gpus)
        at = np.flatnonzero(k >= 0)
        node = dev.copy()
        node[at] = self.base[k[at]] + (key[at] >> 8)
        return node

    def resolve(self, e: np.ndarray, cables: int, d: np.ndarray, port: np.ndarray, q: np.ndarray, peer_port: np.ndarray, spd: np.ndarray, speed_text: np.ndarray, speeds: np.ndarray, gpus: int) -> None:
        """Ports and peers of ends ``e`` (of nodes ``d``) as the file prints them, in place.

        ``port``, ``q``, ``peer_port`` and ``spd`` come as the subnet's ``cables``
        give them (meaningless for internal ends): a cable end at a director
        moves to its leaf ASIC's port; internal ends take their link's.
        """
        ext = e < 2 * cables
        own = np.flatnonzero(ext & (d >= self.base[0]))
        port[own] = (port[own] - 1) % director.H + 1
        k = self.which(q, gpus)
        peer = np.flatnonzero(ext & (k >= 0))
        leaf, j = director.external(peer_port[peer])
        q[peer] = self.base[k[peer]] + leaf
        peer_port[peer] = j
        inner = np.flatnonzero(~ext)
        if len(inner):
            t = e[inner] - 2 * cables
            u = (t + self.links) % (2 * self.links)
            port[inner] = self.end_port[t]
            q[inner] = self.end_node[u]
            peer_port[inner] = self.end_port[u]
            spd[inner] = speed_text[np.searchsorted(speeds, self.end_speed[t])]


def directors(fabric: Fabric, sub: Subnet, radix: np.ndarray | None = None) -> Directors | None:
    """The subnet's directors as ASICs (:class:`Directors`); None when it has none (most fabrics: the file is as before)."""
    n = fabric.gpus
    radix = fabric.switch_ports() if radix is None else radix
    big = sub.switch_ids[radix[sub.switch_ids - n] > director.MAX_PORTS]
    if not len(big):
        return None
    L = fabric.cable_table()
    nsw = len(fabric.switches)
    row = np.full(nsw, -1, np.int64)
    row[big - n] = np.arange(len(big))
    speed = np.zeros(len(big), np.int64)
    spd = L.a_speed[sub.links].astype(np.int64)
    for side in (L.a_dev[sub.links], L.z_dev[sub.links]):
        sw = np.flatnonzero(side >= n)
        k = row[side[sw] - n]
        hit = k >= 0
        np.maximum.at(speed, k[hit], spd[sw[hit]])
    del spd
    linked = speed > 0  # a director without a cable here is left out, as any other device
    big, speed = big[linked], speed[linked]
    if not len(big):
        return None
    row[:] = -1
    row[big - n] = np.arange(len(big))
    shapes = [director.shape(int(x)) for x in radix[big - n].tolist()]
    base = n + nsw + np.cumsum([0] + [s.asics for s in shapes[:-1]], dtype=np.int64)
    sides = [s.internal() for s in shapes]  # (leaf, port, spine, port) per director
    who = np.repeat(np.arange(len(shapes)), [s.internal_links for s in shapes])
    who = np.r_[who, who]  # internal ends: every leaf side, then every spine side (end t's peer: t ± links)
    asic = np.concatenate([x[0] for x in sides] + [x[2] for x in sides])
    port = np.concatenate([x[1] for x in sides] + [x[3] for x in sides])
    return Directors(big, row, base, shapes, speed, big[who], (asic << 8) | port, base[who] + asic, port, speed[who])


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
    link_key = key[fabric.cable_table().z_dev - n]  # a leaf pair's ISLs (after the links) in their leaves' subnet
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


def _file_order(fabric: Fabric, rows: np.ndarray, dirs: Directors | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The cable ends of links ``rows`` in file order, and each one's node.

    End ``e < len(rows)`` is the ``a`` end of link ``rows[e]``, ``e < 2·len(rows)``
    the ``z`` end of ``rows[e - len(rows)]``, and beyond those come the internal
    ends of directors (``dirs``). File order: switches (in switch order; a
    director's ASICs at its place, leaves then spines) then GPUs, each node's
    ports ascending (see :func:`_end_ports`). A node is a device, or an ASIC of
    a director.
    """
    L = fabric.cable_table()
    n = fabric.gpus
    dev = np.concatenate([L.a_dev[rows], L.z_dev[rows]])
    port = _end_ports(fabric, dev, np.concatenate([L.a_port[rows], L.z_port[rows]]))
    if dirs is not None:
        dev, port = dirs.keyed(dev, port, n)
    key = np.where(dev >= n, dev - n, dev + len(fabric.switches))  # switches first
    span = int(port.max(initial=0)) + 1
    key *= span
    key += port
    del port
    order = np.argsort(key, kind="stable")
    if dirs is not None:
        return order, dirs.nodes(dev[order], key[order] % span, n)
    return order, dev[order]


def _end_ports(fabric: Fabric, dev: np.ndarray, port: np.ndarray) -> np.ndarray:
    """The file's port numbers: switch ``p<n>`` is ``n``, GPU ``nic<plane>`` is ``plane + 1``."""
    return port.astype(np.int64) + (dev < fabric.gpus)


def generate_text(fabric: Fabric, sub: Subnet, size: int = CHUNK, radix: np.ndarray | None = None, dirs: "Directors | None | object" = FIND) -> Iterator[str]:
    """One subnet's file without the header comment, in pieces of about ``size`` lines.

    Streamed: each piece's lines are built from per-device tables (names from
    :func:`topogen.fabric.view.view`, GUID texts, LIDs) gathered for its rows only.
    ``radix`` (:meth:`Fabric.switch_ports`) and ``dirs`` (:func:`directors`) are
    found here when the caller has not.
    """
    n = fabric.gpus
    L = fabric.cable_table()
    m = len(sub.links)
    if radix is None:
        radix = fabric.switch_ports()  # ports as the switch presents them: a faster uplink is one port
    if dirs is FIND:
        dirs = directors(fabric, sub, radix)
    order, dev = _file_order(fabric, sub.links, dirs)  # dev: each end's node (its device but at a director)
    starts = np.flatnonzero(np.r_[True, dev[1:] != dev[:-1]]) if len(dev) else np.zeros(0, np.int64)
    devs = dev[starts]  # file order: switches, then GPUs
    names = view(fabric).device
    guids = GUID_BASE + (np.arange(n + len(fabric.switches), dtype=np.int64) << 4)
    if dirs is not None:  # nodes past the devices: the directors' ASICs
        names, guids, radix = dirs.tables(names, guids, radix)
    lid = np.zeros(len(guids), np.int64)
    lid[devs] = np.arange(1, len(devs) + 1)
    tag = np.where(np.arange(len(lid)) >= n, "S", "H")
    ids = text_table(f'"{t}-{g:016x}"' for t, g in zip(tag[devs].tolist(), guids[devs].tolist()))
    id_of = np.empty(len(lid), dtype=object)
    id_of[devs] = ids
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
        if dirs is not None:
            dirs.resolve(e, m, d, port_, q, peer_port_, spd, speed_text, speeds, n)
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
        heads[sw] = [f'switchguid=0x{g:x}({g:x})\nSwitch\t{x} {i}\t\t# "{nm}" enhanced port 0 lid {li} lmc 0' for g, x, i, nm, li in zip(guids[xs[sw]].tolist(), radix[xs[sw] - n].tolist(), id_of[xs[sw]].tolist(), names[xs[sw]].tolist(), lid[xs[sw]].tolist())]
        if dirs is not None:  # every ASIC of a chassis has the chassis' system image GUID, as ibnetdiscover prints it
            chip = np.flatnonzero(xs >= n + len(fabric.switches))
            heads[chip] = [f"sysimgguid=0x{g:016x}\n{h}" for g, h in zip(dirs.image_guids(xs[chip]).tolist(), heads[chip].tolist())]
        ca = np.flatnonzero(xs < n)
        heads[ca] = [f'caguid=0x{g:x}\nCa\t{ca_ports} {i}\t\t# "{nm}"' for g, i, nm in zip(guids[xs[ca]].tolist(), id_of[xs[ca]].tolist(), names[xs[ca]].tolist())]
        out[at - lo] = [("\n" if i else "") + h + "\n" + line for i, h, line in zip(at.tolist(), heads.tolist(), out[at - lo].tolist())]
        yield "\n".join(out.tolist()) + "\n"


def sim_needs(fabric: Fabric, sub: Subnet, dirs: "Directors | None | object" = FIND) -> tuple[int, int, int]:
    """(switches, nodes, ports) ibsim must hold to load the subnet (a node's ports count port 0)."""
    n = fabric.gpus
    L = fabric.cable_table()
    a = L.a_dev[sub.links]
    seen = np.zeros(n, bool)
    seen[a[a < n]] = True
    gpus = np.flatnonzero(seen)  # (np.unique of a million ids hashes them: slower than this mark)
    ports = fabric.switch_ports()
    radix = int((ports[sub.switch_ids - n] + 1).sum())
    switches = sub.switches
    if dirs is FIND:
        dirs = directors(fabric, sub, ports)
    if dirs is not None:  # a director is its ASICs
        switches += dirs.asics - len(dirs.dev)
        radix += sum(int((s.asic_ports() + 1).sum()) for s in dirs.shapes) - int((ports[dirs.dev - n] + 1).sum())
    nodes = switches + len(gpus)
    return switches, nodes, radix + len(gpus) * (fabric.spec.nic_ports + 1)


def header(fabric: Fabric, sub: Subnet, dirs: "Directors | None | object" = FIND) -> list[str]:
    if dirs is FIND:
        dirs = directors(fabric, sub)
    need = sim_needs(fabric, sub, dirs)
    opts = ibsim_options(*need)
    if dirs is None:
        counts = f"# {need[0]} switches, {need[1] - need[0]} channel adapters (GPUs), {len(sub.links)} cables"
    else:
        chassis = f"{len(dirs.dev)} director{'s' if len(dirs.dev) > 1 else ''} of more than {director.MAX_PORTS} ports as {dirs.asics} ASICs"
        counts = f"# {need[0]} switches ({chassis}), {need[1] - need[0]} channel adapters (GPUs), {len(sub.links)} cables and {dirs.links} internal links"
    lines = [f"# generated by {fabric.spec.provenance()}; arch {fabric.arch}; subnet {sub.name}", counts]
    if opts:
        lines.append(f"# exceeds ibsim's default tables (256 switches, 2048 nodes, 13312 ports): simulate with ibsim {' '.join(opts)} -s FILE")
    else:
        lines.append("# simulate with: ibsim -s FILE")
    return lines + [""]


def write_subnet(fabric: Fabric, sub: Subnet, path: Path) -> tuple[int, int, int]:
    """Write one subnet's file; return what ibsim needs to load it (:func:`sim_needs`)."""
    radix = fabric.switch_ports()
    dirs = directors(fabric, sub, radix)  # once per subnet, for the header and the text
    with open_output(path, newline="\n") as fh:
        fh.write("\n".join(header(fabric, sub, dirs)) + "\n")
        for text in generate_text(fabric, sub, radix=radix, dirs=dirs):
            fh.write(text)
    return sim_needs(fabric, sub, dirs)


def export(ctx, dest: Path) -> list[Path]:
    paths = []
    for arch, fabric in ctx.fabrics.items():
        d = arch_dir(dest, arch, "ibnetdiscover")
        over = []
        for sub in subnets(fabric):
            p = d / f"{sub.name}.topo"
            need = write_subnet(fabric, sub, p)
            paths.append(p)
            if ibsim_options(*need):
                over.append(sub.name)
        if over:
            shown = ", ".join(over[:4]) + (f" and {len(over) - 4} more" if len(over) > 4 else "")
            ctx.messages.append(f"{arch}: ibnetdiscover subnet(s) {shown} exceed ibsim's default tables (256 switches per fabric); the file's header gives the ibsim -S/-N/-P options to simulate it; it is valid ibnetdiscover output for topogen diff at any size")
    return paths
