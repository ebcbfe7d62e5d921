"""The new design laid around the installed cables: keep, move, remove, add.

Devices are matched by identity, not by spelling: a name's numbers without their
zero padding (``leaf-g0-r3`` and ``leaf-g00-r3`` are one leaf once a build has ten
groups or more, ``spine-7`` and ``spine-07`` one spine), so leaves and spines are
never renumbered; a device whose padding changes is listed as relabelled.

The new design is the new spec's own wiring (:func:`topogen.fabric.clos.generate`),
read as *how many* cables join each pair of devices (the striping) and which NIC
of a GPU goes to which leaf. Ports are then chosen around what is installed:

1. **keep**: an installed cable is kept, both plugs where they are, while its pair
   of devices still needs a cable in the new design and both its ports are of the
   right kind there (an uplink port at the lower end, a down port not kept free
   for management at the upper end). When the new spine count changes the
   striping, each leaf keeps as many of its uplinks to the spines it already
   reaches as the new striping has room for; no wiring of the new design keeps
   more (:attr:`Rewire.forced` counts the cables none can keep);
2. **add**: the design's other cables, each end on the new design's own port when
   that is free, else on a port an installed cable leaves, else the lowest free one;
3. **move**: an installed cable not kept and a new cable that share one end (the
   same device and port) are one cable re-plugged at its other end; the rest of
   the installed cables not kept are **removed**.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache
from dataclasses import dataclass, field
from typing import NamedTuple

from topogen.fabric.model import Fabric
from topogen.fabric.naming import GpuNames

_DIGITS = re.compile(r"\d+")


@lru_cache(maxsize=1 << 20)
def identity(name: str) -> str:
    """A device name without zero padding: the same device in a smaller and a larger build."""
    return _DIGITS.sub(lambda m: str(int(m.group())), name)


class Wire(NamedTuple):
    """One cable by name: lower end (device, port), upper end, link tier, plane, speeds (Gb/s), cable id."""

    a: str
    a_port: str
    z: str
    z_port: str
    tier: int
    plane: int
    a_speed: int
    z_speed: int
    cable: int = 0

    def ends(self) -> tuple[tuple[str, str], tuple[str, str]]:
        return (self.a, self.a_port), (self.z, self.z_port)


@dataclass
class Move:
    """An installed cable re-plugged: ``before`` as installed, ``after`` in the new design (one end shared)."""

    before: Wire
    after: Wire

    @property
    def unplugged(self) -> tuple[str, str]:
        """The end that is re-plugged (its place as installed)."""
        return self.before.ends()[1] if self.before.ends()[0] in self.after.ends() else self.before.ends()[0]


@dataclass
class Rewire:
    """The new wiring around the installed one, and how it differs."""

    kept: list[Wire]
    moved: list[Move]
    added: list[Wire]
    removed: list[Wire]
    installed: int  # cables installed
    forced: int  # installed cables no wiring of the new design can keep (their pair of devices has fewer cables in it, or the device is gone)
    relabelled: dict[str, str] = field(default_factory=dict)  # installed name -> new name (padding only)
    new_switches: list[str] = field(default_factory=list)
    spare_switches: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def final(self) -> list[Wire]:
        """Every cable of the new wiring (kept, moved as re-plugged, added), in cable-id order."""
        return sorted(self.kept + [m.after for m in self.moved] + self.added, key=lambda w: w.cable)

    @property
    def changed(self) -> int:
        """Installed cables not kept where they are (moved or removed)."""
        return len(self.moved) + len(self.removed)


def fabric_wires(fabric: Fabric) -> list[Wire]:
    """Every cable of a generated fabric by name, in cable order (ids 1, 2, ...)."""
    L = fabric.links
    sw = [s.name for s in fabric.switches]
    gn = GpuNames.of(fabric.spec)
    n = fabric.gpus
    out = []
    for k, (a, ap, z, zp, t, p, sa, sz) in enumerate(zip(L.a_dev.tolist(), L.a_port.tolist(), L.z_dev.tolist(), L.z_port.tolist(), L.tier.tolist(), L.plane.tolist(), L.a_speed.tolist(), L.z_speed.tolist()), 1):
        gpu = a < n
        out.append(Wire(gn.name(a) if gpu else sw[a - n], f"nic{ap}" if gpu else f"p{ap}", sw[z - n], f"p{zp}", t, p, sa, sz, k))
    return out


class Ports:
    """The new design's port rules per switch: down ports ``1..down`` (less reserved), uplinks ``down+1..interfaces``."""

    def __init__(self, fabric: Fabric):
        self.down = {s.name: s.down_ports for s in fabric.switches}
        self.top = {s.name: s.tier == fabric.tiers for s in fabric.switches}
        self.ifaces = dict(zip((s.name for s in fabric.switches), fabric.switch_ports().tolist()))
        self.tier = {s.name: s.tier for s in fabric.switches}
        self.reserved: set[tuple[str, str]] = set()
        for i, first, last in fabric.reserved:
            name = fabric.switches[i].name
            self.reserved.update((name, f"p{p}") for p in range(first, last + 1))

    def fits(self, end: tuple[str, str], upper: bool) -> bool:
        """Is ``end`` a port of the kind a cable needs there (uplink at the lower end, free down port at the upper)?"""
        dev, port = end
        if dev not in self.down:
            return port.startswith("nic")
        if not port.startswith("p") or not port[1:].isdecimal():
            return False
        p = int(port[1:])
        if upper:
            return 1 <= p <= self.down[dev] and end not in self.reserved
        return self.down[dev] < p <= self.ifaces[dev]

    def free_order(self, dev: str, upper: bool) -> range:
        """Candidate port numbers of a switch for one end, lowest first."""
        return range(1, self.down[dev] + 1) if upper else range(self.down[dev] + 1, self.ifaces[dev] + 1)


def rewire(installed: list[Wire], design: Fabric, names: dict[str, str] | None = None) -> Rewire:
    """Lay ``design`` (the new spec's generated fabric) around the ``installed`` cables (names as installed).

    ``names`` maps installed names to the design's (by :func:`identity` when not given).
    Deterministic: the same inputs give the same plan.
    """
    target = fabric_wires(design)
    rules = Ports(design)
    by_id: dict[str, str] = {}
    for w in target:
        for dev in (w.a, w.z):
            by_id.setdefault(identity(dev), dev)
    relabel: dict[str, str] = {}
    renumber = upper_match(installed, target) if names is None else {}

    def new_name(dev: str) -> str:
        if names is not None:
            return names.get(dev, dev)
        got = renumber.get(dev) or by_id.get(identity(dev), dev)
        if got != dev:
            relabel[dev] = got
        return got

    inst = [w._replace(a=new_name(w.a), z=new_name(w.z)) for w in installed]
    known = set(by_id.values())
    need: dict[tuple, int] = defaultdict(int)
    for w in target:
        need[_pair(w)] += 1
    kept: list[Wire] = []
    rest: list[Wire] = []
    used: set[tuple[str, str]] = set()
    for w in inst:
        key = _pair(w)
        if need.get(key, 0) > 0 and rules.fits((w.a, w.a_port), False) and rules.fits((w.z, w.z_port), True) and not ({w.ends()[0], w.ends()[1]} & used):
            need[key] -= 1
            kept.append(w)
            used.update(w.ends())
        else:
            rest.append(w)
    # what no wiring of the new design can keep: cables of pairs with fewer cables in it, or of devices it lacks
    have: dict[tuple, int] = defaultdict(int)
    for w in inst:
        have[_pair(w)] += 1
    full_need: dict[tuple, int] = defaultdict(int)
    for w in target:
        full_need[_pair(w)] += 1
    forced = sum(max(0, c - full_need.get(k, 0)) for k, c in have.items())
    freed: dict[tuple[str, str], tuple] = {}  # a port an installed cable leaves -> where that cable led (natural order)
    for w in rest:
        a, z = w.ends()
        freed.setdefault(a, _natural(w.z))
        freed.setdefault(z, _natural(w.a))
    for e in used:
        freed.pop(e, None)
    # the design's cables still needed, pair by pair in the design's order, each end on a port
    todo: list[Wire] = []
    for w in target:
        key = _pair(w)
        if need.get(key, 0) > 0:
            need[key] -= 1
            todo.append(w)
    placed: list[Wire | None] = [None] * len(todo)
    for i, w in enumerate(todo):  # first the cables whose own ports are both free (and left by no installed cable)
        a, z = w.ends()
        if a not in used and z not in used and a not in freed and z not in freed:
            used.update((a, z))
            placed[i] = w
    for i, w in enumerate(todo):
        if placed[i] is None:
            a, z = w.ends()
            a = a if a[1].startswith("nic") or (a not in used and a not in freed) else _port(w.a, False, rules, used, freed)  # a GPU's NIC is its own
            z = z if z not in used and z not in freed else _port(w.z, True, rules, used, freed)
            used.update((a, z))
            placed[i] = w._replace(a_port=a[1], z_port=z[1])
    added, moved, removed = _pair_moves(rest, [w for w in placed if w is not None])
    spare = sorted({d for w in inst for d in (w.a, w.z) if d not in known}, key=_natural)
    had = {d for w in inst for d in (w.a, w.z)}
    new_sw = sorted({d for w in target for d in (w.a, w.z) if d in rules.down and d not in had}, key=_natural)
    ids = [w.cable for w in installed if w.cable]
    nxt = max(ids, default=0) + 1
    numbered = []
    for w in added:
        numbered.append(w._replace(cable=nxt))
        nxt += 1
    out = Rewire(kept, moved, numbered, removed, len(installed), forced, dict(sorted(relabel.items(), key=lambda kv: _natural(kv[0]))), new_sw, spare)
    if any((w.z, w.z_port) in rules.reserved for w in inst):
        out.notes.append("some installed cables sit on leaf ports the new design keeps free for management / UFM: they move")
    return out


def upper_match(installed: list[Wire], target: list[Wire]) -> dict[str, str]:
    """Installed upper switches (spines, cores) to the design's, by the devices below them.

    Names of the top tier are positions in a flat list (``core-5``): when growth widens
    each stripe, the same position names another switch of another stripe. So an
    installed switch above other switches is matched to a design switch of the same tier
    with the same installed switches below it (the design's own identity first, else
    the lowest free one), never to one of another stripe. Those that find none keep the
    identity of their name. Returns installed name -> design name where they differ in
    more than padding.
    """
    tier_of = {w.z: w.tier for w in target if w.tier >= 2}
    below_old: dict[str, set[str]] = defaultdict(set)
    for w in installed:
        if not w.a_port.startswith("nic"):
            below_old[w.z].add(identity(w.a))
    have = {identity(d) for w in installed for d in (w.a, w.z)}
    below_new: dict[str, set[str]] = defaultdict(set)
    for w in target:
        if w.tier >= 2 and identity(w.a) in have:
            below_new[w.z].add(identity(w.a))
    groups: dict[tuple, list[str]] = defaultdict(list)
    for dev in sorted(below_new, key=_natural):
        groups[(tier_of[dev], frozenset(below_new[dev]))].append(dev)
    by_identity = {identity(d): d for d in tier_of}
    taken: set[str] = set()
    out: dict[str, str] = {}
    pending = []
    for dev in sorted(below_old, key=_natural):
        same = by_identity.get(identity(dev))
        tier = tier_of.get(same) if same else None
        cands = [c for c in groups.get((tier, frozenset(below_old[dev])), []) if c not in taken] if tier else []
        if not cands:
            key = next((k for k in groups if k[1] == frozenset(below_old[dev])), None)
            cands = [c for c in groups.get(key, []) if c not in taken] if key else []
        pick = same if same in cands else (cands[0] if cands else None)
        if pick is None:
            pending.append(dev)
            continue
        taken.add(pick)
        if identity(pick) != identity(dev):
            out[dev] = pick
    for dev in pending:  # no design switch has its devices below: its own name, if no other took it
        same = by_identity.get(identity(dev))
        if same is not None and same in taken:
            out[dev] = f"{dev} (spare)"
    return out


def _pair(w: Wire) -> tuple:
    """What the design counts cables by: the two devices (and a GPU's NIC, which fixes its plane and home)."""
    return (w.a, w.a_port if w.a_port.startswith("nic") else "", w.z)


def _port(dev: str, upper: bool, rules: Ports, used: set, freed: dict) -> tuple[str, str]:
    """A free port of ``dev`` for one end: one an installed cable leaves first (a move), else the lowest free.

    Of the ports installed cables leave, the one whose cable led to the lowest device
    (in natural order) goes first, so the design's new cables, taken in its order,
    move every leaf's cables from the same old spine to the same new one.
    """
    cands = [(dev, f"p{p}") for p in rules.free_order(dev, upper)]
    cands = [e for e in cands if e not in used and e not in rules.reserved]
    left = [e for e in cands if e in freed]
    if left:  # the port of the cable that led to the first (lowest) device: every leaf maps old to new alike
        return min(left, key=lambda e: (freed[e], int(e[1][1:])))
    if not cands:
        raise AssertionError(f"no free port on {dev} for the new design")
    return cands[0]


def _pair_moves(rest: list[Wire], new: list[Wire]) -> tuple[list[Wire], list[Move], list[Wire]]:
    """Installed cables not kept, paired with new cables sharing an end: moves; the others are removed / added."""
    at: dict[tuple[str, str], int] = {}
    for i, w in enumerate(new):
        for e in w.ends():
            at.setdefault(e, i)
    taken = [False] * len(new)
    moved, removed = [], []
    for w in rest:
        hit = None
        for e in w.ends():  # the lower end first: a leaf's uplink stays in its port, its far end moves
            i = at.get(e)
            if i is not None and not taken[i]:
                hit = i
                break
        if hit is None:
            removed.append(w)
        else:
            taken[hit] = True
            moved.append(Move(w, new[hit]._replace(cable=w.cable)))
    return [w for i, w in enumerate(new) if not taken[i]], moved, removed


def _natural(name: str) -> tuple:
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name))


def baseline(installed: list[Wire], design: Fabric) -> int:
    """Installed cables a plain rebuild of the new spec would change: those its own wiring lacks, ends by identity."""
    own = {(identity(w.a), w.a_port, identity(w.z), w.z_port) for w in fabric_wires(design)}
    return sum((identity(w.a), w.a_port, identity(w.z), w.z_port) not in own for w in installed)
