"""The grown floor: every installed rack and device stays where it stands, new ones take free places.

A fresh layout of the new spec (:func:`topogen.layout.plan`) is a new floor: its rows
and rack names follow the new size (racks per row, network rows in the middle), so it
would place most installed devices elsewhere. :func:`keep_positions` starts from the
installed phase's floor instead (its racks with their names, rows and columns, every
installed device in its rack and U, matched by identity: GPU index, switch name without
zero padding) and places each new device:

1. in the rack where the fresh layout's installed neighbours stand (the installed
   devices the fresh layout puts in the same rack as it), at the U the fresh layout
   gives it when that is free there, else the lowest free U that fits it;
2. otherwise (a rack of new devices only, or no room left) in a new rack: at the fresh
   layout's rack name, row and column when no installed rack holds them, else at the
   next free column of that row; the rack's devices keep the U the fresh layout gives them.

Cable lengths are routed again on this floor (:mod:`topogen.layout.cables`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterator

import numpy as np

from topogen.growth.phase import bad_row, expansion_rows
from topogen.growth.rewire import identity
from topogen.layout import Layout
from topogen.layout.cables import routed_m, sold_m
from topogen.layout.floor import Placement, Racks, row_name
from topogen.util.errors import InputError, Problem, show


_RACK = re.compile(r"([A-Z]+)([0-9]+)")


def _row_index(letters: str) -> int:
    """The 0-based row of ``A``, ``B``, ..., ``AA`` (:func:`topogen.layout.floor.row_name` inverted)."""
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n - 1


def _match(old, fab) -> np.ndarray:
    """Per device of ``fab``: the installed device id it is (by identity), -1 for a new one."""
    n0, n1 = old.gpus, fab.gpus
    src = np.full(n1 + len(fab.switches), -1, np.int64)
    g = min(n0, n1)
    src[:g] = np.arange(g)
    was = {identity(s.name): n0 + i for i, s in enumerate(old.switches)}
    for j, s in enumerate(fab.switches):
        src[n1 + j] = was.get(identity(s.name), -1)
    return src


def keep_positions(old, old_lay: Layout, fab, lay: Layout, reserved: set[str] = frozenset()) -> tuple[Layout, dict[str, int]]:
    """``fab`` laid out on the installed floor (see the module): the layout and its figures.

    ``old``/``old_lay``: the installed phase's fabric and layout; ``fab``/``lay``: the new
    wiring and its fresh layout; ``reserved``: rack names on the floor that hold other
    networks' devices (their racks are not in the compute layout), never given to a new
    rack. Figures: ``relocated`` (installed devices not at their
    installed rack and U: 0), ``new_racks``, ``new_in_installed_racks`` (new devices
    placed in an installed rack).
    """
    src = _match(old, fab)
    op, np_ = old_lay.placement, lay.placement
    spec = lay.spec
    names, kinds = list(op.racks.name), list(op.racks.kind)
    rows, cols = [int(x) for x in op.racks.row.tolist()], [int(x) for x in op.racks.col.tolist()]
    cw = max([2] + [len(str(c + 1)) for c in cols])
    taken = set(zip(rows, cols))
    by_name = {x: i for i, x in enumerate(names)}
    for x in sorted(reserved):
        m = _RACK.fullmatch(x)
        if m:
            taken.add((_row_index(m.group(1)), int(m.group(2)) - 1))
    held = set(by_name) | set(reserved)
    total = len(src)
    rack = np.full(total, -1, np.int64)
    u = np.zeros(total, np.int64)
    height = np_.height_u.astype(np.int64).copy()
    inst = src >= 0
    rack[inst] = op.rack[src[inst]]
    u[inst] = op.u[src[inst]]
    occ: dict[int, set[int]] = defaultdict(set)  # rack -> U taken
    for r, uu, h in zip(rack[inst].tolist(), u[inst].tolist(), height[inst].tolist()):
        occ[r].update(range(uu, uu + h))
    new_racks = 0
    in_installed = 0

    def fresh_rack(r_new: int) -> int:
        nonlocal new_racks
        name, row, col = np_.racks.name[r_new], int(np_.racks.row[r_new]), int(np_.racks.col[r_new])
        if name in held or (row, col) in taken:
            col = max([c for rr, c in taken if rr == row], default=-1) + 1
            name = f"{row_name(row)}{col + 1:0{cw}d}"
            while name in held:  # pragma: no cover - a name is its row and column
                col += 1
                name = f"{row_name(row)}{col + 1:0{cw}d}"
        names.append(name)
        kinds.append(np_.racks.kind[r_new])
        rows.append(row)
        cols.append(col)
        taken.add((row, col))
        by_name[name] = len(names) - 1
        held.add(name)
        new_racks += 1
        return len(names) - 1

    def fits(r: int, at: int, h: int) -> bool:
        return at >= spec.first_u and at + h - 1 <= spec.rack_u and not (set(range(at, at + h)) & occ[r])

    new = np.flatnonzero(~inst)
    new_rack_of = np_.rack[new]
    for r_new in np.unique(new_rack_of).tolist():
        devs = new[new_rack_of == r_new]
        mates = rack[inst & (np_.rack == r_new)]
        target = Counter(mates.tolist()).most_common(1)[0][0] if len(mates) else -1
        left = []
        trays: dict[int, int] = {}  # the fresh layout's U -> the U given (GPUs of one tray stay together)
        for d in devs.tolist():
            h, want = int(height[d]), int(np_.u[d])
            if target >= 0:
                at = trays.get(want)
                if at is None:
                    at = want if fits(target, want, h) else next((x for x in range(spec.first_u, spec.rack_u - h + 2) if fits(target, x, h)), None)
                    if at is not None:
                        trays[want] = at
                        occ[target].update(range(at, at + h))
                if at is not None:
                    rack[d], u[d] = target, at
                    in_installed += 1
                    continue
            left.append(d)
        if left:
            r = fresh_rack(r_new)
            for d in left:
                rack[d], u[d] = r, int(np_.u[d])
                occ[r].update(range(u[d], u[d] + int(height[d])))
    placement = Placement(Racks(names, kinds, np.asarray(rows, np.int64), np.asarray(cols, np.int64)), rack.astype(np.int32), u.astype(np.int16), height.astype(np.int16))
    routed = routed_m(fab, spec, placement)
    out = Layout(spec, placement, routed, sold_m(routed, spec.lengths_m), fab.gpus)
    moved = int(((rack[inst] != op.rack[src[inst]]) | (u[inst] != op.u[src[inst]])).sum())
    return out, {"relocated": moved, "new_racks": new_racks, "new_in_installed_racks": in_installed}


def rack_map(fresh: Layout, grown: Layout) -> dict[str, str]:
    """Each rack of the fresh layout -> the grown floor's rack where most of its devices stand (for the devices other networks put in it)."""
    votes: dict[int, Counter] = defaultdict(Counter)
    for f, g in zip(fresh.placement.rack.tolist(), grown.placement.rack.tolist()):
        votes[f][g] += 1
    return {fresh.racks.name[f]: grown.racks.name[c.most_common(1)[0][0]] for f, c in sorted(votes.items())}


FLOOR_FILE = "floor.csv"
FLOOR_COLUMNS = ("rack", "kind", "row", "position", "device", "u", "height_u")


def floor_rows(fab, lay: Layout, gpu_name) -> Iterator[tuple]:
    """``floor.csv`` of an expansion: every rack of the grown floor (``device`` empty), then every device's rack, U and height.

    ``row`` and ``position`` are 1-based as the racks' descriptions give them; GPUs by
    name (``gpu_name(index)``), switches by name. The next expansion reads it back as
    its installed floor (:func:`read_floor`).
    """
    r = lay.racks
    for name, kind, row, col in zip(r.name, r.kind, r.row.tolist(), r.col.tolist()):
        yield (name, kind, row + 1, col + 1, "", "", "")
    p = lay.placement
    names = [gpu_name(g) for g in range(fab.gpus)] + [s.name for s in fab.switches]
    for d, (rk, u, h) in enumerate(zip(p.rack.tolist(), p.u.tolist(), p.height_u.tolist())):
        yield (r.name[rk], "", "", "", names[d], u, h)


def read_floor(path: Path, old, base: Layout, gpu_index) -> Layout:
    """The installed floor an earlier expansion wrote (``floor.csv``) as the layout of ``old`` (the installed phase's fabric).

    ``base``: the fresh layout of ``old`` (its spec); ``gpu_index(name)``: a GPU's index
    or None. GPUs are matched by index, switches by identity. InputError naming the
    file and line when a row is malformed or a device of ``old`` is not placed.
    """
    names, kinds, rows, cols = [], [], [], []
    by_name: dict[str, int] = {}
    n = old.gpus
    sw = {identity(s.name): n + i for i, s in enumerate(old.switches)}
    total = n + len(old.switches)
    rack = np.full(total, -1, np.int64)
    u = np.zeros(total, np.int64)
    h = np.zeros(total, np.int64)
    for no, r in expansion_rows(path, FLOOR_COLUMNS, FLOOR_FILE):
        try:
            if not r["device"]:
                by_name[r["rack"]] = len(names)
                names.append(r["rack"])
                kinds.append(r["kind"])
                rows.append(int(r["row"]) - 1)
                cols.append(int(r["position"]) - 1)
                continue
            g = gpu_index(r["device"])
            d = g if g is not None and g < n else sw.get(identity(r["device"]), -1) if g is None else -1
            if d >= 0:
                rack[d], u[d], h[d] = by_name[r["rack"]], int(r["u"]), int(r["height_u"])
        except (KeyError, ValueError, TypeError):
            raise bad_row(path, no, r, f"give the {FLOOR_FILE} topogen expand wrote: racks first, then every device in one of them") from None
    missing = np.flatnonzero(rack < 0)
    if len(missing):
        d = int(missing[0])
        what = f"GPU {d}" if d < n else old.switches[d - n].name
        raise InputError([Problem("BUILD_DIR", f"{show(str(path))} places no {what} ({len(missing):,} device(s) of the installed phase missing)", "give the floor.csv of the same expansion as its cabling.csv")])
    placement = Placement(Racks(names, kinds, np.asarray(rows, np.int64), np.asarray(cols, np.int64)), rack.astype(np.int32), u.astype(np.int16), h.astype(np.int16))
    routed = routed_m(old, base.spec, placement)
    return Layout(base.spec, placement, routed, sold_m(routed, base.spec.lengths_m), n)
