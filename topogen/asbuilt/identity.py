"""Match the devices of an as-built reading to the plan's: by what discovery reports, not by names alone.

A floor's names are rarely the plan's: a switch keeps its vendor name, an HCA
is described the OFED way (``hb00 mlx5_7``), an LLDP neighbour sends only its
chassis ID. Each device (or adapter port) read is matched, the first rule
that applies winning:

1. the ``--names`` map (a CSV: as-built name or chassis ID/GUID -> plan name);
2. its node GUID or port GUID, when the plan's ibnetdiscover export lists it;
3. its name, when the plan has a device of that name (or the first word of its
   name: ``hb03-gpu5 mlx5_5``);
4. an adapter of a host the plan knows (``hb00 mlx5_7``, or LLDP system name
   ``hb00`` with interface ``enp12s0np0``) is the GPU port of that host that the
   plan cables to the switch port it is plugged into; the last one of a host
   left over is the host's last GPU port left over;
5. a switch left over whose cables land, for more than half of them (and at
   least two), where one planned switch's cables should, is that switch: one
   ``rename`` finding instead of a move for each of its cables. Repeated, so
   a chain of unnamed switches resolves from the named ones inward.

Rules 1 to 4 are identity (no finding); rule 5 is an inference, reported.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from topogen.asbuilt import Cable, End, Found
from topogen.util.errors import InputError, Problem, show
from topogen.util.inputs import CONTROL_RE, open_input

MAX_NAMES_BYTES = 16 << 20  # one line per device whose name differs: 16 MiB holds several hundred thousand
MAX_NAMES_ROWS = 200_000
HOST_RE = re.compile(r"^(hb[0-9]{1,9})(?:-n[0-9]{1,9})?$", re.ASCII)
GPU_RE = re.compile(r"^(hb[0-9]{1,9})-gpu[0-9]{1,9}$", re.ASCII)


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


def _host(name: str) -> str | None:
    m = HOST_RE.match(name.split()[0]) if name.strip() else None
    return m.group(1) if m else None


def match(plan: Found, found: Found, names: Names | None = None, plan_ids: dict[str, str] | None = None, plan_port_ids: dict[str, End] | None = None) -> Matched:
    """``found`` in the plan's device and port names (see the module's rules), with the renames inferred."""
    devices: set[str] = set()
    peer: dict[End, End] = {}
    host_ends: dict[str, list[End]] = {}
    for c in plan.cables:
        peer[c.a], peer[c.z] = c.z, c.a
        for e in (c.a, c.z):
            if e.device not in devices:
                devices.add(e.device)
            m = GPU_RE.match(e.device)
            if m:
                host_ends.setdefault(m.group(1), []).append(e)
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

    hosts = {d: _host(d) for d in raw_devices if d not in dmap}
    hosts = {d: h for d, h in hosts.items() if h is not None and h in host_ends}

    def host_pass() -> bool:
        progress = False
        for d, h in hosts.items():
            for mine, other in raw_devices[d]:
                if mine in emap:
                    continue
                o = resolved(other)
                q = peer.get(o) if o is not None else None
                if q is not None and q not in claimed and GPU_RE.match(q.device) and GPU_RE.match(q.device).group(1) == h:
                    emap[mine] = q
                    claimed.add(q)
                    used.add(q.device)
                    progress = True
        return progress

    def switch_pass() -> bool:
        claims: dict[str, list[tuple[int, str, int]]] = {}
        for d, ends in raw_devices.items():
            if d in dmap or d in hosts:
                continue
            votes: dict[str, int] = {}
            for _mine, other in ends:
                o = resolved(other)
                q = peer.get(o) if o is not None else None
                if q is not None and q.device not in used and not GPU_RE.match(q.device):
                    votes[q.device] = votes.get(q.device, 0) + 1
            if not votes:
                continue
            top = max(votes.values())
            winners = [p for p, v in votes.items() if v == top]
            if len(winners) == 1 and top >= 2 and 2 * top > len(ends):
                claims.setdefault(winners[0], []).append((top, d, len(ends)))
        progress = False
        for p in sorted(claims):
            ranked = sorted(claims[p], reverse=True)
            if len(ranked) > 1 and ranked[0][0] == ranked[1][0]:
                continue  # two devices with equal claims to one planned switch: neither
            top, d, total = ranked[0]
            dmap[d] = p
            used.add(p)
            out.renames.append(Rename(d, p, top, total, found.ids.get(d, "")))
            progress = True
        return progress

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
    matched_hca = sum(1 for e in emap if e.device in hosts)
    if matched_hca:
        out.notes.append(f"{matched_hca:,} adapter port(s) named by host (as 'hb00 mlx5_7') matched to the plan's GPU ports by host and wiring")
    by_guid = sum(1 for d, p in dmap.items() if found.ids.get(d) in plan_ids and d != p)
    if by_guid:
        out.notes.append(f"{by_guid:,} device(s) matched to the plan by node GUID")
    if names is not None:
        out.notes.append(f"{sum(1 for d in dmap if _named(names, d, found.ids.get(d)) is not None):,} device(s) named by --names {Path(names.path).name}")
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
            elif _host(d) in host_ends:
                covered.update(e.device for e in host_ends[_host(d)])
        out.covered = covered
    return out
