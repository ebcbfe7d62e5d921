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

The validator's design checks then run on the as-built wiring: a deviation
whose ports, cables or devices an error names breaks the design (severity
``error``); one that keeps it valid is a plan deviation (``warning``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from topogen.asbuilt import Cable, End, Found

KINDS = ("missing", "unexpected", "wrong-port", "wrong-device", "swapped", "miswired")


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

    @property
    def clean(self) -> bool:
        return not self.deviations

    def counts(self) -> dict[str, int]:
        return {k: sum(d.kind == k for d in self.deviations) for k in KINDS}


def _cable_dict(c: Cable, locate) -> dict[str, Any]:
    out = {"a": str(c.a), "z": str(c.z), "where": c.where}
    if locate is not None:
        out["a_location"] = locate(c.a.device)
        out["z_location"] = locate(c.z.device)
    return out


class _Sets:
    """Union-find over ends."""

    def __init__(self) -> None:
        self.up: dict[End, End] = {}

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
            self.up[max(ra, rb, key=_end_key)] = min(ra, rb, key=_end_key)


def _end_key(e: End) -> tuple:
    return (e.device, len(e.port), e.port)


def compare(plan: Found, found: Found) -> Comparison:
    """Every cable of ``found`` that differs from ``plan``, grouped and classified (severity ``warning``)."""
    planned = {c.key(): c for c in plan.cables}
    seen = {c.key(): c for c in found.cables}
    same = planned.keys() & seen.keys()
    up = [c for k, c in planned.items() if k not in same]
    uf = [c for k, c in seen.items() if k not in same]
    sets = _Sets()
    for c in (*up, *uf):
        sets.join(c.a, c.z)
    groups: dict[End, tuple[list[Cable], list[Cable]]] = {}
    for c in up:
        groups.setdefault(sets.find(c.a), ([], []))[0].append(c)
    for c in uf:
        groups.setdefault(sets.find(c.a), ([], []))[1].append(c)
    deviations = [_classify(p, f) for p, f in groups.values()]
    deviations.sort(key=lambda d: _end_key(min(d.ends(), key=_end_key)))
    return Comparison(plan, found, len(same), deviations)


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
    errors = [x for x in report.findings if x.severity == "error"]
    for i, d in enumerate(cmp.deviations):
        ids = {cable_ids[c.key()] for c in d.found if c.key() in cable_ids}
        ports = {str(e) for e in d.ends()}
        devices = {e.device for e in d.ends()}
        because = []
        for x in errors:
            if ids & set(x.cables) or ports & set(x.ports) or (not x.cables and not x.ports and devices & set(x.devices)):
                because.append(f"{x.check}: {x.message}")
        if because:
            cmp.deviations[i] = Deviation(d.kind, "error", d.planned, d.found, d.fix, tuple(because))
