"""Match the devices of an as-built reading to the plan's: by what discovery reports, not by names alone.

A floor's names are rarely the plan's: a switch keeps its vendor name, an HCA
is described the OFED way (``hb00 mlx5_7``), an LLDP neighbour sends only its
chassis ID. Each device (or adapter port) read is matched, the first rule
that applies winning:

1. the ``--names`` map (a CSV: as-built name or chassis ID/GUID -> plan name);
2. its node GUID or port GUID, when the plan's ibnetdiscover export lists it;
3. its name, when the plan has a device of that name (or the first word of its
   name: ``hb03-gpu5 mlx5_5``);
4. an adapter described ``<host> mlx5_<n>`` (the host as the plan names it:
   topogen's ``hb00`` or the spec's ``naming:`` template, :class:`Hosts`) is the GPU of that host its adapter
   order gives (:mod:`.adapters`: ``--adapters``, the order most hosts' wiring
   shows, or the numbers); an adapter named by host alone (LLDP ``hb00`` with
   interface ``enp12s0np0``) is the GPU port the plan cables to the switch port it
   is plugged into; when no known switch leads to it, a host port the OS names by
   its PCI address (``hb00 enp24s0np0``) is the GPU that address serves on most
   hosts' wiring, else the GPU of its rank among the floor's PCI addresses;
5. the devices left, jointly by their wiring (:func:`.assign.assign`): rounds of
   one assignment over every unnamed device and every planned device not yet
   taken, scored by agreeing cables, so GPUs name leaves and leaves name spines;
6. when nothing known leads further, one device by the shape of its wiring
   (:func:`.assign.seed`), the rest from it, then every device of rules 5-6 named
   again jointly until it settles; a start that the wiring cannot confirm, or that
   separate alike subnets leave open, is one :class:`~.assign.Choice`.

Rules 1 to 4 are identity (no finding); rules 5 and 6 are inferences, one
``rename`` each.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from topogen.asbuilt import Cable, End, Found, adapters
from topogen.asbuilt.assign import Choice, assign, seed
from topogen.asbuilt.diff import _Sets
from topogen.asbuilt.lldp import NIC_IF_RE
from topogen.fabric.naming import GpuNames, NodeNames
from topogen.util.errors import InputError, Problem, show
from topogen.util.inputs import CONTROL_RE, open_input

MAX_NAMES_BYTES = 16 << 20  # one line per device whose name differs: 16 MiB holds several hundred thousand
MAX_NAMES_ROWS = 200_000
HOST_RE = re.compile(r"^(hb[0-9]{1,9})(?:-n[0-9]{1,9})?$", re.ASCII)
GPU_RANK_RE = re.compile(r"^(hb[0-9]{1,9})-gpu([0-9]{1,9})$", re.ASCII)
NODE_RE = re.compile(r"^(hb[0-9]{1,9})(?:-n([0-9]{1,9}))?$", re.ASCII)
# a NIC port as the OS names it, by its PCI address (systemd's predictable names): enp24s0np0, ibp24s0, enp24s0f1np1
OS_PORT_RE = re.compile(r"^(?:enp|ibp)(?P<bus>[0-9]{1,3})s(?P<slot>[0-9]{1,2})(?:f(?P<fn>[0-9]))?(?:np(?P<np>[0-9]))?$", re.ASCII)


@dataclass(frozen=True)
class Rename:
    """A device matched by its wiring: its name as read, the plan's name, and the evidence."""

    found: str
    plan: str
    agree: int  # its cables that land where the plan's device's should
    cables: int  # all its cables
    identity: str = ""  # its chassis ID or GUID, when read

    def to_dict(self) -> dict:
        return {"kind": "rename", "found": self.found, "plan": self.plan, "agree": self.agree, "cables": self.cables, "identity": self.identity, "fix": f"name it {self.plan}"}


@dataclass
class Names:
    """A ``--names`` map: as-built name (or chassis ID / GUID) -> plan name, and the line of each."""

    path: str
    plan_of: dict[str, str] = field(default_factory=dict)
    line_of: dict[str, int] = field(default_factory=dict)


@dataclass
class Matched:
    """The as-built reading in the plan's names, and how it was matched."""

    found: Found
    renames: list[Rename] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    covered: set[str] | None = None  # plan devices whose every cable the reading lists (LLDP), else None
    choices: list[Choice] = field(default_factory=list)  # devices the wiring cannot tell apart, named in a fixed order
    names: dict[str, str] = field(default_factory=dict)  # device as read -> plan name, for every device whose name differs


def read_names(path: str) -> Names:
    """Read a ``--names`` CSV (``as_built,plan``; an optional header of those words, ``#`` comments).

    Bounded (:data:`MAX_NAMES_BYTES`, :data:`MAX_NAMES_ROWS`); every bad line is
    an InputError naming it: not two fields, an empty or control-character
    name, one as-built name given two plan names, one plan name given twice.
    """
    missing = Problem("--names", f"file {show(path)} does not exist", "give a CSV of as-built name, plan name (one device per line)")
    with open_input(path, "--names", show(path), MAX_NAMES_BYTES, missing, what="names map") as fh:
        try:
            text = fh.read().decode("utf-8-sig")
        except UnicodeDecodeError:
            raise InputError([Problem("--names", f"{show(path)} is not UTF-8 text", "save the map as CSV UTF-8")]) from None
    names = Names(str(path))
    problems: list[Problem] = []
    by_plan: dict[str, int] = {}
    where = Path(path).name
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error as exc:
        raise InputError([Problem(f"--names {where}", f"not a CSV file: {exc}", "write: as-built name,plan name")]) from None
    if len(rows) > MAX_NAMES_ROWS:
        raise InputError([Problem(f"--names {where}", f"{len(rows):,} lines; a names map holds at most {MAX_NAMES_ROWS:,}", "map only the devices whose names differ from the plan")])
    for no, row in enumerate(rows, 1):
        if not row or (len(row) == 1 and not row[0].strip()) or row[0].lstrip().startswith("#"):
            continue
        at = f"--names {where} line {no}"
        cells = [c.strip() for c in row]
        if no == 1 and [c.lower() for c in cells] in (["as_built", "plan"], ["as-built", "plan"]):
            continue
        if len(cells) != 2:
            problems.append(Problem(at, f"{len(cells)} field(s); a line is: as-built name,plan name", "one device per line, two fields"))
        elif not cells[0] or not cells[1]:
            problems.append(Problem(at, "an empty name", "give the name the device reports and its name in the plan"))
        elif CONTROL_RE.search(cells[0] + cells[1]):
            problems.append(Problem(at, "a name holds a control character", "names are printable text"))
        elif cells[0] in names.plan_of and names.plan_of[cells[0]] != cells[1]:
            problems.append(Problem(at, f"{show(cells[0])} is mapped again (line {names.line_of[cells[0]]} maps it to {show(names.plan_of[cells[0]])})", "map each as-built name once"))
        elif cells[1] in by_plan and names.plan_of.get(cells[0]) != cells[1]:
            problems.append(Problem(at, f"plan name {show(cells[1])} is given again (line {by_plan[cells[1]]})", "two devices cannot both be the plan's one device"))
        else:
            names.plan_of[cells[0]] = cells[1]
            names.line_of.setdefault(cells[0], no)
            by_plan.setdefault(cells[1], no)
        if len(problems) >= 20:
            break
    if problems:
        raise InputError(problems)
    return names


def _named(names: Names, device: str, ident: str | None) -> str | None:
    """The plan name ``names`` gives a device: by its name, its identity (``chassis mac 0c:42:...``) or the bare ID (``0c:42:...``)."""
    for key in (device, ident, ident.rsplit(" ", 1)[-1] if ident else None):
        if key and key in names.plan_of:
            return names.plan_of[key]
    return None


class Hosts:
    """How the plan names hosts, GPUs and NIC interfaces: topogen's (``hb00``, ``hb00-n3``, ``hb00-gpu5``) or its spec's ``naming:`` templates.

    A host's domain is a key shared by its GPUs and its host names (``hb00``
    by default, the HB domain's number under templates); :meth:`gpu` gives a
    GPU's (domain, rank), :meth:`host` a host name's domain, :meth:`node` its
    (domain, node in the domain), :meth:`nic` the GPU end of an LLDP host +
    interface. Without a spec, or a spec without host/GPU/interface
    templates, the default names are read exactly as before.
    """

    def __init__(self, spec=None):
        naming = getattr(spec, "naming", None) if spec is not None else None
        self.templated = naming is not None and any(t is not None for t in (naming.host, naming.gpu, naming.interface))
        if self.templated:
            self.gn, self.nn = GpuNames.of(spec), NodeNames.of(spec)
            self.hb, self.homes = spec.hb_domain, spec.homes
            self.iface = naming.interface
            self._gpus: dict[str, tuple | None] = {}  # parsed once per name: a template parses by formatting back

    @property
    def example(self) -> str:
        """The first host's name, to show what a note means (``hb00`` by default)."""
        return self.nn.name(0) if self.templated else "hb00"

    def gpu(self, name: str) -> tuple | None:
        """(domain, rank) of a GPU name of the plan, else None."""
        if not self.templated:
            m = GPU_RANK_RE.match(name)
            return (m.group(1), int(m.group(2))) if m else None
        if name not in self._gpus:
            g = self.gn.parse(name)
            self._gpus[name] = divmod(g, self.hb) if g is not None else None
        return self._gpus[name]

    def node(self, name: str) -> tuple | None:
        """(domain, node in the domain) of a host name of the plan, else None."""
        if not self.templated:
            m = NODE_RE.match(name)
            return (m.group(1), int(m.group(2) or 0)) if m else None
        i = self.nn.parse(name)
        return divmod(i, self.nn.per_domain) if i is not None else None

    def host(self, name: str) -> object | None:
        """The domain of a device named by its host (the first word: ``hb00 enp12s0np0``), else None."""
        if not self.templated:
            return _host(name)
        n = self.node(name.split()[0]) if name.strip() else None
        return n[0] if n is not None else None

    def nic(self, host: str, ifname: str) -> End | None:
        """The GPU end of interface ``ifname`` of host ``host`` (LLDP), else None (not a host, or an interface the OS names)."""
        node = self.node(host)
        if node is None:
            return None
        if self.iface is None:
            m = NIC_IF_RE.match(ifname)
            rank, port = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        else:
            v = self.iface.parse(ifname)
            if v is None:
                return None
            per = self.nn.per_node
            rank = v["rank"] if "rank" in v else node[1] * per + v["local"] if "local" in v and v["local"] < per else None
            port = v["port"] if "port" in v else v.get("plane", 0) * self.homes + v.get("home", 0)
        if rank is None or rank >= self.hb or rank // self.nn.per_node != node[1]:
            return None
        return End(self.gn.name(node[0] * self.hb + rank), f"nic{port}")

    def read(self, found: Found) -> Found:
        """``found`` with every LLDP host + interface the plan's templates name read as its GPU end (the reading itself when not templated)."""
        if not self.templated or found.kind != "lldp":
            return found
        cables: list[Cable] = []
        for c in found.cables:
            a, z = (self.nic(*raw) or raw for raw in (found.hosts.get(e) or e for e in (c.a, c.z)))
            cables.append(Cable(a, z, c.where, c.speeds) if (a, z) != (c.a, c.z) else c)
        return replace(found, cables=cables)


def _host(name: str) -> str | None:
    m = HOST_RE.match(name.split()[0]) if name.strip() else None
    return m.group(1) if m else None


def _order_key(found: Found) -> Callable[[str], tuple]:
    """Found devices in the order of their identity (GUID, chassis ID), then name: the fixed order ties are named in."""
    return lambda d: (found.ids.get(d, "~"), len(d), d)


def match(plan: Found, found: Found, names: Names | None = None, plan_ids: dict[str, str] | None = None, plan_port_ids: dict[str, End] | None = None, adapter_map: dict[int, int] | None = None, per_node: int | None = None, system: str | None = None, hosts: Hosts | None = None) -> Matched:
    """``found`` in the plan's device and port names (see the module's rules), with the renames inferred.

    ``adapter_map``: ``mlx5_<n>`` -> GPU index in its node (``--adapters``), else
    learned or read from the numbers (:mod:`.adapters`); ``per_node``: GPUs per
    node, for hosts named ``hb00-n3`` (default: the whole HB domain is one node);
    ``system``: the plan's system, whose ``mlx5_<n>`` layout the numbers are read by first;
    ``hosts``: how the plan names hosts and GPUs (:class:`Hosts` of its spec; default: topogen's names).
    """
    naming = hosts if hosts is not None else Hosts()
    found = naming.read(found)
    devices: set[str] = set()
    peer: dict[End, End] = {}
    host_ends: dict[str, list[End]] = {}
    gpus: dict[str, dict[int, str]] = {}  # domain (hb00) -> rank -> GPU device
    for c in plan.cables:
        peer[c.a], peer[c.z] = c.z, c.a
        for e in (c.a, c.z):
            if e.device in devices:
                continue
            devices.add(e.device)
            m = naming.gpu(e.device)
            if m:
                gpus.setdefault(m[0], {})[m[1]] = e.device
    for c in plan.cables:
        for e in (c.a, c.z):
            m = naming.gpu(e.device)
            if m:
                host_ends.setdefault(m[0], []).append(e)
    plan_ids = plan_ids or {}
    plan_port_ids = plan_port_ids or {}
    raw_devices: dict[str, list[tuple[End, End]]] = {}  # device as read -> (its end, the other end) per cable
    for c in found.cables:
        raw_devices.setdefault(c.a.device, []).append((c.a, c.z))
        raw_devices.setdefault(c.z.device, []).append((c.z, c.a))
    dmap: dict[str, str] = {}
    emap: dict[End, End] = {}
    problems: list[Problem] = []
    if names is not None:
        for raw, target in names.plan_of.items():
            if target not in devices:
                problems.append(Problem(f"--names {Path(names.path).name} line {names.line_of[raw]}", f"{show(target)} is no device of the plan", "give the plan's name (as in its cabling.csv)"))
        if problems:
            raise InputError(problems[:20])
    for d in raw_devices:
        ident = found.ids.get(d)
        named = _named(names, d, ident) if names is not None else None
        if named is not None:
            dmap[d] = named
        elif ident and ident in plan_ids:
            dmap[d] = plan_ids[ident]
        elif d in devices:
            dmap[d] = d
        elif " " in d.strip() and d.split()[0] in devices:
            dmap[d] = d.split()[0]
    for e, ident in found.port_ids.items():
        if e.device not in dmap and ident in plan_port_ids:
            emap[e] = plan_port_ids[ident]
    out = Matched(found)
    claimed: set[End] = set(emap.values())
    used: set[str] = set(dmap.values()) | {e.device for e in emap.values()}

    def resolved(e: End) -> End | None:
        if e in emap:
            return emap[e]
        d = dmap.get(e.device)
        return End(d, e.port) if d is not None else None

    _adapters(raw_devices, dmap, emap, used, gpus, peer, resolved, adapter_map, per_node, out, system, naming)
    hosts = {d: naming.host(d) for d in raw_devices if d not in dmap and not any(mine in emap for mine, _ in raw_devices[d])}
    hosts = {d: h for d, h in hosts.items() if h is not None and h in host_ends}
    claimed |= {End(dmap[d], mine.port) for d in raw_devices if d in dmap and naming.gpu(dmap[d]) for mine, _ in raw_devices[d]}

    def host_pass() -> bool:
        """Adapters named by host alone (LLDP interfaces ``enp12s0np0``): the GPU port the plan cables to where they are plugged."""
        progress = False
        for d, h in hosts.items():
            for mine, other in raw_devices[d]:
                if mine in emap:
                    continue
                o = resolved(other)
                q = peer.get(o) if o is not None else None
                if q is not None and q not in claimed and (g := naming.gpu(q.device)) is not None and g[0] == h:
                    emap[mine] = q
                    claimed.add(q)
                    used.add(q.device)
                    progress = True
        return progress

    order = _order_key(found)
    choices: dict[tuple[str, ...], Choice] = {}
    seeded: list[Choice] = []

    def switch_pass() -> bool:
        unknown = {d: ends for d, ends in raw_devices.items() if d not in dmap and d not in hosts and not any(mine in emap for mine, _ in ends)}
        if not unknown:
            return False
        picks, tied = assign(unknown, resolved, peer, devices - used, order)
        for u in sorted(picks, key=order):
            p = picks[u]
            dmap[u] = p.plan
            used.add(p.plan)
            out.renames.append(Rename(u, p.plan, p.agree, len(raw_devices[u]), found.ids.get(u, "")))
        for c in tied:
            choices.setdefault(c.found, c)
        return bool(picks)

    while host_pass() | switch_pass():
        pass
    if _os_port_order(hosts, raw_devices, emap, claimed, used, gpus, host_ends, per_node, out, naming):
        while host_pass() | switch_pass():
            pass
    for h in sorted(set(hosts.values())):  # the last adapter port of a host left over is its last GPU port left over
        left = [mine for d, hh in hosts.items() if hh == h for mine, _ in raw_devices[d] if mine not in emap]
        spare = [e for e in host_ends[h] if e not in claimed]
        if len(left) == 1 and len(spare) == 1:
            emap[left[0]] = spare[0]
            claimed.add(spare[0])
    while host_pass() | switch_pass():
        pass
    plan_degree: dict[str, int] = {}
    for c in plan.cables:
        for e in (c.a, c.z):
            plan_degree[e.device] = plan_degree.get(e.device, 0) + 1
    plan_shape: dict[str, list] = {}
    for c in plan.cables:
        for e, o in ((c.a, c.z), (c.z, c.a)):
            plan_shape.setdefault(e.device, []).append((e.port, plan_degree[o.device]))
    shapes = {d: tuple(sorted(v, key=lambda x: (len(x[0]), x))) for d, v in plan_shape.items()}
    while True:  # nothing known leads further: name one device by its shape, say so, and go on from it
        unknown = {d: ends for d, ends in raw_devices.items() if d not in dmap and d not in hosts and not any(mine in emap for mine, _ in ends)}
        pick = seed(unknown, lambda d: len(raw_devices.get(d, ())), shapes, devices - used, order) if unknown else None
        if pick is None:
            break
        u, q = pick.named[0]
        dmap[u] = q
        used.add(q)
        out.renames.append(Rename(u, q, 0, len(raw_devices[u]), found.ids.get(u, "")))
        seeded.append(pick)
        while host_pass() | switch_pass():
            pass
    if seeded:
        _refine(out.renames, raw_devices, dmap, used, devices, resolved, peer, order)
        part = _parts(plan)
        for c in seeded:  # a start the wiring then confirmed (all its cables agree), within one separate fabric, leaves no choice
            u = c.named[0][0]
            if len({part[q] for q in c.plan}) > 1 or not all((o := resolved(other)) is not None and (q := peer.get(o)) is not None and q.device == dmap[u] for _mine, other in raw_devices[u]):
                if not any(set(c.found) <= set(k) for k in choices):  # said once: a later start among the same devices is the same choice
                    choices.setdefault(c.found, Choice(c.found, c.plan, tuple((f, dmap[f]) for f in c.found if f in dmap), 0))
        out.notes.append(f"{len(seeded):,} device(s) named by the shape of the wiring alone (nothing read named a device the plan knows): check one chassis label against its name")
    final = []
    for r in out.renames:  # the agreement with every device named: all of its cables whose far end is known
        ends = raw_devices[r.found]
        agree = sum(1 for mine, other in ends if (o := resolved(other)) is not None and (q := peer.get(o)) is not None and q.device == r.plan)
        final.append(replace(r, agree=agree))
    out.renames = sorted(final, key=lambda r: (len(r.plan), r.plan))
    out.choices = sorted(choices.values(), key=lambda c: (len(c.plan[0]), c.plan))
    matched_hca = sum(1 for e in emap if e.device in hosts)
    if matched_hca:
        out.notes.append(f"{matched_hca:,} adapter port(s) named by host (as '{naming.example} enp12s0np0') matched to the plan's GPU ports by host and wiring")
    by_guid = sum(1 for d, p in dmap.items() if found.ids.get(d) in plan_ids and d != p)
    if by_guid:
        out.notes.append(f"{by_guid:,} device(s) matched to the plan by node GUID")
    if names is not None:
        out.notes.append(f"{sum(1 for d in dmap if _named(names, d, found.ids.get(d)) is not None):,} device(s) named by --names {Path(names.path).name}")
    out.names = {d: p for d, p in dmap.items() if d != p}
    for e, q in emap.items():
        if e.device != q.device:
            out.names.setdefault(e.device, q.device)
    cables: list[Cable] = []
    seen: set = set()
    for c in found.cables:
        a, z = resolved(c.a) or c.a, resolved(c.z) or c.z
        nc = Cable(a, z, c.where, c.speeds) if (a, z) != (c.a, c.z) else c
        k = nc.key()
        if k not in seen:
            seen.add(k)
            cables.append(nc)
    out.found = replace(found, cables=cables)
    if found.local is not None:
        covered: set[str] = set()
        for d in found.local:
            if d in dmap:
                covered.add(dmap[d])
            elif d in devices:
                covered.add(d)
            elif naming.host(d) in host_ends:
                covered.update(e.device for e in host_ends[naming.host(d)])
        out.covered = covered
    return out


def _parts(plan: Found) -> dict[str, str]:
    """Each planned device's separate fabric (subnet), as one device of it."""
    sets = _Sets(key=lambda x: (len(x), x))
    for c in plan.cables:
        sets.join(c.a.device, c.z.device)
    return {d: sets.find(d) for d in list(sets.up)}


def _refine(renames: list[Rename], raw_devices, dmap, used, devices, resolved, peer, order, rounds: int = 4) -> None:
    """Name again every device named by its wiring, jointly, now that its neighbours are named: a start taken by shape alone settles."""
    inferred = {r.found for r in renames}
    for _ in range(rounds):
        mine = {u: dmap[u] for u in inferred}
        free = (devices - used) | set(mine.values())
        picks, _tied = assign({u: raw_devices[u] for u in sorted(inferred, key=order)}, resolved, peer, free, order)
        new = {u: p.plan for u, p in picks.items()}
        keep = {u: q for u, q in mine.items() if u not in new and q not in new.values()}
        new.update(keep)
        if new == mine or len(set(new.values())) != len(new):
            return
        for u in inferred:
            used.discard(mine[u])
            dmap.pop(u, None)
        for u, q in new.items():
            dmap[u] = q
            used.add(q)
        for i, r in enumerate(renames):
            if r.found in dmap:
                renames[i] = replace(r, plan=dmap[r.found])
        renames[:] = [r for r in renames if r.found in dmap]


def _adapters(raw_devices, dmap, emap, used, gpus, peer, resolved, adapter_map, per_node, out: Matched, system: str | None = None, naming: Hosts | None = None) -> None:
    """Adapters described ``<host> mlx5_<n>``: each is the GPU its host's adapter order gives (see :mod:`.adapters`)."""
    naming = naming or Hosts()
    node_of = naming.node
    by_host: dict[str, dict[int, str]] = {}
    for d in raw_devices:
        if d in dmap or any(mine in emap for mine, _ in raw_devices[d]):
            continue
        a = adapters.adapter(d)
        if a is None:
            continue
        node = node_of(a[0])
        if node is None or node[0] not in gpus or (node[1] and not per_node):
            continue
        by_host.setdefault(a[0], {})[a[1]] = d
    if not by_host:
        return

    def base_count(host: str) -> tuple[int, int]:
        domain, node = node_of(host)
        ranks = gpus[domain]
        size = per_node or (max(ranks) + 1 if ranks else 0)
        return node * size, size

    rule = "--adapters"
    learned: dict[int, int] = {}
    if adapter_map is None:
        votes: dict[int, dict[int, int]] = {}
        for host, adapters_of in by_host.items():
            base, size = base_count(host)
            domain = node_of(host)[0]
            rank_of = {dev: r for r, dev in gpus[domain].items()}
            for n, d in adapters_of.items():
                for mine, other in raw_devices[d]:
                    o = resolved(other)
                    q = peer.get(o) if o is not None else None
                    r = rank_of.get(q.device) if q is not None else None
                    if r is not None and q.port == mine.port and base <= r < base + size:
                        votes.setdefault(n, {}).setdefault(r - base, 0)
                        votes[n][r - base] += 1
        learned = adapters.learn(votes)
    rules: dict[str, int] = {}
    count = 0
    for host in sorted(by_host):
        adapters_of = by_host[host]
        base, size = base_count(host)
        domain = node_of(host)[0]
        if adapter_map is not None:
            order, why = adapter_map, rule
        elif learned and all(n in learned for n in adapters_of):
            order, why = learned, "the order the wiring shows on most hosts"
        else:
            order, why = adapters.default_order(list(adapters_of), size, system)
        for n, d in sorted(adapters_of.items()):
            g = order.get(n)
            dev = gpus[domain].get(base + g) if g is not None and g < size else None
            if dev is None or dev in used:
                continue
            dmap[d] = dev
            used.add(dev)
            count += len(raw_devices[d])
            rules[why] = rules.get(why, 0) + 1
    if count:
        how = "; ".join(f"{k}: {v:,} adapter(s)" for k, v in sorted(rules.items()))
        out.notes.append(f"{count:,} adapter port(s) named by host (as '{naming.example} mlx5_7') matched to the plan's GPUs by their order on the host ({how})")


def _os_port_order(hosts, raw_devices, emap, claimed, used, gpus, host_ends, per_node, out: Matched, naming: Hosts | None = None) -> bool:
    """Host ports named by the OS (``hb00 enp24s0np0``) that no known switch leads to: the GPU their PCI order gives.

    The OS names a NIC port by its PCI address, the same on every node of a model,
    so which GPU a PCI device serves is one map for the floor: the one most hosts'
    wiring shows (ports already matched through known switches vote, :func:`.adapters.learn`);
    else, when the floor shows exactly as many PCI devices as a node has GPUs, the
    ``k``-th lowest address serves GPU ``k`` (a DGX numbers its compute ports so);
    else nothing (a missing device would shift the order). The port of a device
    (``np1``) is the GPU's NIC port of that number. Returns whether any port was matched.
    """
    naming = naming or Hosts()
    node_of = naming.node
    votes: dict[tuple, dict[int, int]] = {}
    pending: list[tuple[End, str, tuple, int]] = []
    seen: set[tuple] = set()
    size_of: dict[str, int] = {}
    for d, h in sorted(hosts.items()):
        node = node_of(d)
        if node is None or node[0] not in gpus or (node[1] and not per_node):
            continue
        size = per_node or max(gpus[node[0]]) + 1
        size_of[d] = size
        for mine, _other in raw_devices[d]:
            m = OS_PORT_RE.match(mine.port)
            if m is None:
                continue
            key = (int(m.group("bus")), int(m.group("slot")), int(m.group("fn") or 0))
            seen.add(key)
            q = emap.get(mine)
            r = naming.gpu(q.device) if q is not None else None
            if r is not None:
                local = r[1] - node[1] * size
                votes.setdefault(key, {}).setdefault(local, 0)
                votes[key][local] += 1
            elif q is None:
                pending.append((mine, d, key, int(m.group("np") or 0)))
    if not pending:
        return False
    order = adapters.learn(votes)
    why = "the order the wiring shows on most hosts"
    if not all(key in order for _mine, _d, key, _np in pending):
        sizes = set(size_of.values())
        if len(sizes) != 1 or len(seen) != sizes.pop():
            return False
        order = {key: k for k, key in enumerate(sorted(seen))}
        why = "PCI order: the k-th lowest address serves GPU k"
    ends_of: dict[str, list[End]] = {}
    for ends in host_ends.values():
        for e in ends:
            ends_of.setdefault(e.device, []).append(e)
    count = 0
    for mine, d, key, np_ in pending:
        domain, node = node_of(d)
        dev = gpus[domain].get(node * size_of[d] + order[key])
        ports = sorted(ends_of.get(dev, []), key=lambda e: (len(e.port), e.port))
        if dev is None or np_ >= len(ports) or ports[np_] in claimed:
            continue
        emap[mine] = ports[np_]
        claimed.add(ports[np_])
        used.add(dev)
        count += 1
    if count:
        out.notes.append(f"{count:,} host port(s) named by the OS (as '{naming.example} enp24s0np0') matched to the plan's GPUs by their PCI address ({why})")
    return bool(count)

