"""Compare what was found on the floor with the plan: every cable that differs, and the move that fixes it.

Cables are compared as unordered pairs of ends (device, port). Cables found
exactly as planned are identical; the rest fall into connected groups (ends
joined by planned or found cables), each group one :class:`Deviation`:

* ``missing``: a planned cable with neither end cabled (install it);
* ``unexpected``: a found cable between ports the plan leaves free (remove it);
* ``wrong-port``: one end on the right device but another port (move the plug);
* ``wrong-device``: one end on another device (a GPU on the wrong leaf, an
  uplink on the wrong spine: move the plug);
* ``swapped``: two cables that traded ends (swap the two plugs);
* ``miswired``: anything longer (a chain of moves): every cable involved, as
  planned and as found, and the cables to pull and to install.

Cables found where planned are checked further:

* ``wrong-speed``: a port runs at another speed than planned (a cabling CSV's
  speed columns, ibnetdiscover's link rate);
* ``duplicate``: one cable recorded twice in one file.

Devices matched by their wiring alone (:mod:`.identity`) are one ``rename``
each. Only the part of the plan the as-built reading covers is compared (a
rail pair's own subnet, the devices whose LLDP files were given); the rest is
named in a note, not listed as missing.

The validator's design checks then run on the as-built wiring: a deviation
whose ports, cables or devices an error names breaks the design (severity
``error``); one that keeps it valid is a plan deviation (``warning``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from topogen.asbuilt import Cable, End, Found

KINDS = ("rename", "missing", "unexpected", "wrong-port", "wrong-device", "swapped", "miswired", "wrong-speed", "duplicate")
MAX_BECAUSE = 5  # validator errors kept per deviation


@dataclass(frozen=True)
class Deviation:
    """One difference between plan and floor: the cables as planned and as found, and the fix."""

    kind: str
    severity: str
    planned: tuple[Cable, ...]
    found: tuple[Cable, ...]
    fix: str
    because: tuple[str, ...] = ()  # validator errors this deviation causes

    def ends(self) -> set[End]:
        return {e for c in (*self.planned, *self.found) for e in (c.a, c.z)}

    def to_dict(self, locate: Callable[[str], str] | None = None) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "planned": [_cable_dict(c, locate) for c in self.planned],
            "found": [_cable_dict(c, locate) for c in self.found],
            "fix": self.fix,
            "because": list(self.because),
        }


@dataclass
class Comparison:
    """The result of :func:`compare`: counts, deviations (sorted) and the as-built design check."""

    plan: Found
    found: Found
    identical: int
    deviations: list[Deviation]
    report: Any = None  # topogen.checks.validate.Report of the as-built wiring, when the spec is known
    notes: list[str] = field(default_factory=list)
    renames: list = field(default_factory=list)  # identity.Rename: devices matched by their wiring
    choices: list = field(default_factory=list)  # assign.Choice: devices the wiring cannot tell apart (named in a fixed order)
    matched: Any = None  # identity.Matched: how every device read was named (for the names maps)
    partial: bool = False  # the as-built reading covers only part of the plan
    compared: int = 0  # planned cables in the part compared

    @property
    def clean(self) -> bool:
        return not self.deviations and not self.renames

    def counts(self) -> dict[str, int]:
        n = {k: 0 for k in KINDS}
        for d in self.deviations:
            n[d.kind] += 1
        n["rename"] = len(self.renames)
        return n


def _cable_dict(c: Cable, locate) -> dict[str, Any]:
    out = {"a": str(c.a), "z": str(c.z), "where": c.where}
    if locate is not None:
        out["a_location"] = locate(c.a.device)
        out["z_location"] = locate(c.z.device)
    return out


class _Sets:
    """Union-find over ends."""

    def __init__(self, key: Callable = None) -> None:
        self.up: dict = {}
        self.key = key or _end_key

    def find(self, x: End) -> End:
        up = self.up
        up.setdefault(x, x)
        root = x
        while up[root] != root:
            root = up[root]
        while up[x] != root:
            up[x], x = root, up[x]
        return root

    def join(self, a: End, b: End) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.up[max(ra, rb, key=self.key)] = min(ra, rb, key=self.key)


def _end_key(e: End) -> tuple:
    return (e.device, len(e.port), e.port)


def compare(plan: Found, found: Found, covered: set[str] | None = None) -> Comparison:
    """Every cable of ``found`` that differs from ``plan``, grouped and classified (severity ``warning``).

    ``covered``: the plan devices whose every cable ``found`` lists (LLDP files),
    else None: the parts of the plan (separate fabrics: a rail pair's subnet)
    that ``found`` touches are compared.
    """
    planned = {c.key(): c for c in plan.cables}
    seen = {c.key(): c for c in found.cables}
    same = planned.keys() & seen.keys()
    up = [c for k, c in planned.items() if k not in same]
    uf = [c for k, c in seen.items() if k not in same]
    notes: list[str] = []
    partial = False
    compared = len(planned)
    if up:
        up, notes, skipped = _scope(plan, found, up, covered)
        partial, compared = skipped > 0, len(planned) - skipped
    sets = _Sets()
    for c in (*up, *uf):
        sets.join(c.a, c.z)
    groups: dict[End, tuple[list[Cable], list[Cable]]] = {}
    for c in up:
        groups.setdefault(sets.find(c.a), ([], []))[0].append(c)
    for c in uf:
        groups.setdefault(sets.find(c.a), ([], []))[1].append(c)
    deviations = [_classify(p, f) for p, f in groups.values()]
    speed = [d for d in (_speed(planned[k], seen[k], found.kind) for k in same) if d is not None]
    if found.kind == "ibnetdiscover":  # link rates: a note, not deviations
        if speed:
            notes.append(f"{len(speed):,} link(s) report another rate than planned ({speed[0].fix}); link rates are not compared: a simulator (ibsim) brings every link up at 4xSDR, and a real link's rate is for iblinkinfo to confirm")
        speed = []
    deviations.extend(speed)
    deviations.extend(
        Deviation("duplicate", "warning", (), (first, again), f"delete the repeated record ({again.where}): the cable from {first.a} to {first.z} is recorded twice")
        for first, again in found.duplicates
    )
    if found.duplicate_count > len(found.duplicates):
        notes.append(f"{found.duplicate_count:,} repeated record(s) in all; the first {len(found.duplicates)} are listed")
    deviations.sort(key=lambda d: (_end_key(min(d.ends(), key=_end_key)), KINDS.index(d.kind)))
    return Comparison(plan, found, len(same) - len(speed), deviations, notes=notes, partial=partial, compared=compared)


def _speed(pc: Cable, fc: Cable, kind: str) -> Deviation | None:
    """A ``wrong-speed`` deviation when a port of the found cable runs at another speed than planned."""
    if not any(fc.speeds):
        return None
    want = dict(zip((pc.a, pc.z), pc.speeds))
    if kind == "ibnetdiscover":  # one link rate for both ends: the slower port's
        planned = [x for x in pc.speeds if x]
        got, rate = fc.speeds[0], min(planned) if planned else 0
        if got and rate and got != rate:
            return Deviation("wrong-speed", "warning", (pc,), (fc,), f"the link between {pc.a} and {pc.z} runs at {got:,} Gb/s, planned {rate:,} Gb/s: check the cable, its transceivers and the port speeds")
        return None
    bad = [(e, s, want.get(e, 0)) for e, s in zip((fc.a, fc.z), fc.speeds) if s and want.get(e, 0) and s != want.get(e)]
    if not bad:
        return None
    what = "; ".join(f"{e} at {s:,} Gb/s, planned {w:,}" for e, s, w in bad)
    return Deviation("wrong-speed", "warning", (pc,), (fc,), f"set the port speed ({what}), or use the planned cable and transceivers")


def _scope(plan: Found, found: Found, up: list[Cable], covered: set[str] | None) -> tuple[list[Cable], list[str], int]:
    """The planned-but-not-found cables of the part of the plan ``found`` covers, a note on the rest, and how many cables the rest holds."""
    if covered is not None:
        keep = [c for c in up if c.a.device in covered or c.z.device in covered]
        skipped = len(up) - len(keep)
        if not skipped:
            return up, [], 0
        devices = {e.device for c in plan.cables for e in (c.a, c.z)}
        left = sorted(devices - covered, key=lambda x: (len(x), x))
        shown = ", ".join(left[:6]) + (f" and {len(left) - 6:,} more" if len(left) > 6 else "")
        return keep, [f"not covered by the as-built input: {len(left):,} of the plan's {len(devices):,} devices gave no LLDP file ({shown}); their {skipped:,} planned cable(s) to devices also without a file were not compared"], skipped
    sets = _Sets(key=lambda x: x)
    node = _node
    for c in plan.cables:
        sets.join(node(c.a), node(c.z))
    touched = {sets.find(node(e)) for c in found.cables for e in (c.a, c.z) if node(e) in sets.up}
    if not touched:
        return up, [], 0  # nothing of the plan was found: every planned cable is missing
    parts: dict = {}
    for c in plan.cables:
        root = sets.find(node(c.a))
        if root not in touched:
            part = parts.setdefault(root, [0, set()])
            part[0] += 1
            part[1].update(e.device for e in (c.a, c.z) if not e.port.startswith("nic"))
    if not parts:
        return up, [], 0
    keep = [c for c in up if sets.find(node(c.a)) in touched]
    skipped = sum(p[0] for p in parts.values())
    names = sorted((min(p[1], key=lambda x: (len(x), x)) if p[1] else "GPUs only", len(p[1]), p[0]) for p in parts.values())
    shown = "; ".join(f"{first}" + (f" and {k - 1} more switch(es)" if k > 1 else "") + f" ({n:,} cables)" for first, k, n in names[:6])
    more = f"; and {len(names) - 6:,} more" if len(names) > 6 else ""
    total = len(touched) + len(parts)
    return keep, [f"not covered by the as-built input: {len(parts):,} of the plan's {total:,} separate fabrics (subnets), {skipped:,} of {len(plan.cables):,} planned cables, were not compared: {shown}{more}; give their discovery output to compare them"], skipped


def _node(e: End) -> tuple[str, ...]:
    """A vertex of the plan's graph of separate fabrics: a switch, or one GPU port (each NIC is its own subnet's)."""
    return (e.device, e.port) if e.port.startswith("nic") else (e.device,)


def _classify(p: list[Cable], f: list[Cable]) -> Deviation:
    if len(p) == 1 and not f:
        c = p[0]
        return Deviation("missing", "warning", (c,), (), f"install a cable from {c.a} to {c.z}")
    if len(f) == 1 and not p:
        c = f[0]
        return Deviation("unexpected", "warning", (), (c,), f"remove the cable between {c.a} and {c.z}")
    if len(p) == 1 and len(f) == 1:
        (pc,), (fc,) = p, f
        kept = ({pc.a, pc.z} & {fc.a, fc.z}).pop()
        want = pc.z if pc.a == kept else pc.a
        got = fc.z if fc.a == kept else fc.a
        kind = "wrong-port" if want.device == got.device else "wrong-device"
        return Deviation(kind, "warning", (pc,), (fc,), f"move the plug of the cable from {kept} out of {got} into {want}")
    if len(p) == 2 and len(f) == 2:
        swap = _swap(p, f)
        if swap is not None:
            x, y = swap
            return Deviation("swapped", "warning", tuple(p), tuple(f), f"swap the plugs in {x} and {y}")
    pulls = "; ".join(f"{c.a} to {c.z}" for c in f)
    installs = "; ".join(f"{c.a} to {c.z}" for c in p)
    fix = (f"pull the cable(s) {pulls}" if f else "") + (" and " if f and p else "") + (f"install {installs}" if p else "")
    return Deviation("miswired", "warning", tuple(p), tuple(f), fix)


def _swap(p: list[Cable], f: list[Cable]) -> tuple[End, End] | None:
    """The two ports whose plugs to swap when two planned cables traded ends, else None.

    Planned (a1, b1), (a2, b2) found as (a1, b2), (a2, b1): swapping the plugs
    in b1 and b2 (or in a1 and a2) restores the plan. The pair on one device is
    preferred (two ports of one switch), else the pair on switches.
    """
    (a1, b1), (a2, b2) = (p[0].a, p[0].z), (p[1].a, p[1].z)
    want = {frozenset((x, y)) for x, y in ((a1, b2), (a2, b1))}
    alt = {frozenset((x, y)) for x, y in ((a1, a2), (b1, b2))}
    got = {frozenset((c.a, c.z)) for c in f}
    if got == want:
        options = [(b1, b2), (a1, a2)]
    elif got == alt:
        options = [(b1, a2), (a1, b2)]
    else:
        return None
    options.sort(key=lambda xy: (xy[0].device != xy[1].device, xy[0].port.startswith("nic"), _end_key(xy[0])))
    x, y = options[0]
    return (x, y) if _end_key(x) <= _end_key(y) else (y, x)


def attribute(cmp: Comparison, report, cable_ids: dict[tuple[End, End], int]) -> None:
    """Set each deviation's severity from the validator's ``report`` on the as-built wiring.

    A deviation is an ``error`` when an error finding names one of its found
    cables (``cable_ids``: found cable key -> id given to the validator) or one
    of its ports, or, for findings about whole devices (no cable named), one of
    its devices; otherwise it keeps the design valid and stays a ``warning``.
    """
    cmp.report = report
    by_cable: dict[int, list[int]] = {}
    by_port: dict[str, list[int]] = {}
    by_device: dict[str, list[int]] = {}
    errors = [x for x in report.findings if x.severity == "error"]
    for j, x in enumerate(errors):
        for cid in x.cables:
            by_cable.setdefault(cid, []).append(j)
        for port in x.ports:
            by_port.setdefault(port, []).append(j)
        if not x.cables and not x.ports:
            for dev in x.devices:
                by_device.setdefault(dev, []).append(j)
    for i, d in enumerate(cmp.deviations):
        hits: set[int] = set()
        for c in d.found:
            hits.update(by_cable.get(cable_ids.get(c.key(), -1), ()))
        for e in d.ends():
            hits.update(by_port.get(str(e), ()))
            hits.update(by_device.get(e.device, ()))
        if hits:
            because = tuple(f"{errors[j].check}: {errors[j].message}" for j in sorted(hits)[:MAX_BECAUSE])
            cmp.deviations[i] = Deviation(d.kind, "error", d.planned, d.found, d.fix, because)
