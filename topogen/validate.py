"""Validation: prove a wiring right, or say exactly which cable, port or switch is wrong.

:func:`validate` takes a :class:`~topogen.model.Fabric` (generated, or read back
from a file by :mod:`topogen.wiring`) and runs six checks. Every problem is a
:class:`Finding` (data: check id, severity, devices, ports, cables, message,
hint); the key figures go in :attr:`Report.figures`. :func:`render` turns a
report into text; nothing here prints.

Checks and their finding ids (stable; ``validation.json`` and tests use them):

1. ``hygiene``: ``hygiene.dangling`` (an end on no device), ``hygiene.unknown-device``
   (a name the spec's switch table lacks; found by the reader), ``hygiene.self-link``,
   ``hygiene.bad-port`` (not a port of that device), ``hygiene.port-reuse``,
   ``hygiene.port-budget`` (more cables than radix), ``hygiene.gpu-no-link``,
   ``hygiene.gpu-extra-link`` (per NIC port = plane), ``hygiene.speed-mismatch``
   (two ends disagree), ``hygiene.link-speed`` (both ends off the spec's speed),
   ``hygiene.plane-mismatch`` (a cable joins two planes).
2. ``tiers``: ``tiers.adjacent`` (links join adjacent tiers only),
   ``tiers.unreachable`` (a switch with no cable or no GPU behind it),
   ``tiers.count`` (tier count against the minimum for the spec).
3. ``rails``: ``rails.cross-rail`` (rail-only: a cable joins two rails' networks),
   ``rails.leaf-alignment`` (rail-optimized: a GPU on another rail's leaf),
   ``rails.shared-switch`` (several rails on one switch: info, error when the
   spec asks for dedicated rails).
4. ``reach``: ``reach.unlinked`` (GPUs with no cable in a plane),
   ``reach.partition`` (a plane, or a rail in rail-only, split in parts).
   Proved with connected components; the worst-case path is an exact
   breadth-first search over the switches that hold GPUs.
5. ``capacity``: ``capacity.oversubscription`` (downlink against uplink capacity
   per switch), ``capacity.striping`` (same number of parallel links to each upper
   switch), ``capacity.provisioning`` (``provision: full`` builds every uplink port
   below the top tier), ``capacity.bisection`` (networkx max-flow across a cut,
   small clusters).
6. ``failure``: ``failure.switch`` / ``failure.link`` (info): for the busiest
   switch of each tier and one cable of each tier, GPUs cut off and capacity lost.

The file reader (:mod:`topogen.wiring`) adds ``input.spec-mismatch`` (the file
names another spec) and ``input.foreign-switch`` (switch names of the other
rail packing), both warnings.

Figures come from numpy columns, never one Python object per cable, so a
65,536-GPU fabric validates in well under a second per check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import gcd
from typing import Any

import numpy as np

from . import __version__, counts
from .model import Fabric, link_tier_name, tier_role
from .naming import GpuNames

SEVERITIES = ("error", "warning", "info")
GROUPS = {
    "hygiene": (1, "port budget and cabling hygiene"),
    "tiers": (2, "tier structure"),
    "rails": (3, "rail isolation"),
    "reach": (4, "reachability"),
    "capacity": (5, "non-blocking and balanced"),
    "failure": (6, "failure impact"),
}
CHECK_IDS = (
    "hygiene.dangling",
    "hygiene.unknown-device",
    "hygiene.self-link",
    "hygiene.bad-port",
    "hygiene.port-reuse",
    "hygiene.port-budget",
    "hygiene.gpu-no-link",
    "hygiene.gpu-extra-link",
    "hygiene.speed-mismatch",
    "hygiene.link-speed",
    "hygiene.plane-mismatch",
    "tiers.adjacent",
    "tiers.unreachable",
    "tiers.count",
    "rails.cross-rail",
    "rails.leaf-alignment",
    "rails.shared-switch",
    "reach.unlinked",
    "reach.partition",
    "capacity.oversubscription",
    "capacity.striping",
    "capacity.provisioning",
    "capacity.bisection",
    "failure.switch",
    "failure.link",
    "input.spec-mismatch",
    "input.foreign-switch",
)
MAX_PER_CHECK = 100  # findings kept per check id; the rest are counted, not listed
MAXFLOW_LINKS = 16384  # max-flow bisection only when the fabric has at most this many cables
_LIST = 8  # devices named in one message before "..."


@dataclass(frozen=True, slots=True)
class Finding:
    """One result of a check: what is wrong (or notable), where, and what to do.

    ``devices`` are device names, ``ports`` ``"<device>:<port>"`` strings,
    ``cables`` the 1-based cable ids of ``cabling.csv`` (or of the file read).
    """

    check: str
    severity: str
    devices: tuple[str, ...]
    ports: tuple[str, ...]
    message: str
    hint: str = ""
    cables: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity,
            "devices": list(self.devices),
            "ports": list(self.ports),
            "cables": list(self.cables),
            "message": self.message,
            "hint": self.hint,
        }


@dataclass
class Report:
    """Findings and key figures of one architecture's wiring."""

    arch: str
    spec: Any
    findings: list[Finding] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    checks: dict[str, str] = field(default_factory=dict)  # group -> what was proved / found
    suppressed: dict[str, tuple[str, int]] = field(default_factory=dict)  # check -> (severity, count not listed)
    source: str = ""

    def count(self, severity: str) -> int:
        listed = sum(1 for f in self.findings if f.severity == severity)
        return listed + sum(n for sev, n in self.suppressed.values() if sev == severity)

    @property
    def errors(self) -> int:
        return self.count("error")

    @property
    def warnings(self) -> int:
        return self.count("warning")

    @property
    def valid(self) -> bool:
        return self.errors == 0

    def by_check(self, check: str) -> list[Finding]:
        return [f for f in self.findings if f.check == check]

    def group_status(self, group: str) -> str:
        sev = {f.severity for f in self.findings if f.check.split(".")[0] == group}
        sev |= {s for c, (s, _n) in self.suppressed.items() if c.split(".")[0] == group}
        return "error" if "error" in sev else "warning" if "warning" in sev else "pass"

    def key_figures(self) -> dict[str, Any]:
        """The figures ``summary.json`` carries under each architecture."""
        f = self.figures
        return {
            "valid": self.valid,
            "errors": self.errors,
            "warnings": self.warnings,
            "worst_case_hops": f.get("worst_case_hops"),
            "oversubscription_per_tier": f.get("oversubscription_per_tier"),
            "bisection": f.get("bisection"),
            "failure_impact": f.get("failure_impact"),
        }

    def to_dict(self) -> dict[str, Any]:
        """The content of ``<arch>/validation.json``."""
        spec = self.spec
        return {
            "generator": f"topogen {__version__}",
            "spec_sha256": spec.digest(),
            "spec": spec.name,
            "arch": self.arch,
            "source": self.source,
            "valid": self.valid,
            "errors": self.errors,
            "warnings": self.warnings,
            "infos": self.count("info"),
            "checks": [
                {"group": g, "number": num, "title": title, "status": self.group_status(g), "detail": self.checks.get(g, "")}
                for g, (num, title) in GROUPS.items()
            ],
            "figures": self.figures,
            "not_listed": {c: {"severity": s, "count": n} for c, (s, n) in sorted(self.suppressed.items())},
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass(frozen=True, slots=True)
class Labels:
    """How to name cables in messages: their id and where they sit in the input file.

    ``cable[i]`` is the id of link ``i``; ``loc[i]`` its line (``loc_fmt``
    ``"line {}"``) or edge index (``"edges[{}]"``) in the file read.
    """

    cable: np.ndarray
    loc: np.ndarray | None = None
    loc_fmt: str = "line {}"


# --- the fabric prepared for checking --------------------------------------------------


class _Wire:
    """Columns derived once from a fabric, plus the finding sink with per-check caps.

    After the hygiene check, :func:`_lohi` adds the oriented view of the good
    cables (``gi``, ``lo``, ``hi``, ``lo_port``, ``hi_port``, ``lo_t``, ``hi_t``,
    ``speed``, ``adj``, ``plane``) that the later checks share.
    """

    def __init__(self, fabric: Fabric, labels: Labels | None, report: Report):
        self.fabric = fabric
        self.spec = spec = fabric.spec
        self.report = report
        self.n = n = fabric.gpus
        self.K = spec.hb_domain
        self.planes = spec.planes
        self.S = S = len(fabric.switches)
        self.ndev = n + S
        sw = fabric.switches
        self.sw_names = [s.name for s in sw]
        self.sw_tier = np.fromiter((s.tier for s in sw), np.int64, S)
        self.sw_plane = np.fromiter((s.plane for s in sw), np.int64, S)
        self.sw_radix = np.fromiter((s.radix for s in sw), np.int64, S)
        self.sw_down = np.fromiter((s.down_ports for s in sw), np.int64, S)
        self.sw_nrails = np.fromiter((len(s.rails) for s in sw), np.int64, S)
        lo = [s.rails[0] if s.rails else 0 for s in sw]
        hi = [s.rails[-1] if s.rails else self.K - 1 for s in sw]
        self.sw_rail_lo = np.asarray(lo, np.int64)
        self.sw_rail_hi = np.asarray(hi, np.int64)
        self.sw_rail_contig = np.fromiter((not s.rails or tuple(s.rails) == tuple(range(s.rails[0], s.rails[-1] + 1)) for s in sw), bool, S)
        self.dev_tier = np.concatenate([np.zeros(n, np.int64), self.sw_tier])
        self.gpu_names = GpuNames(n, self.K)
        L = fabric.links
        self.L = L
        m = len(L)
        self.a = L.a_dev.astype(np.int64)
        self.z = L.z_dev.astype(np.int64)
        self.ap = L.a_port.astype(np.int64)
        self.zp = L.z_port.astype(np.int64)
        self.a_speed = L.a_speed.astype(np.int64)
        self.z_speed = L.z_speed.astype(np.int64)
        self.labels = labels or Labels(np.arange(1, m + 1, dtype=np.int64))
        self.valid = (self.a >= 0) & (self.a < self.ndev) & (self.z >= 0) & (self.z < self.ndev)
        self.good = self.valid & (self.a != self.z)
        self.counts: dict[str, int] = {}

    # names ----------------------------------------------------------------------------

    def name(self, dev: int) -> str:
        dev = int(dev)
        if 0 <= dev < self.n:
            return self.gpu_names.name(dev)
        if self.n <= dev < self.ndev:
            return self.sw_names[dev - self.n]
        return f"<device {dev}>"

    def port(self, dev: int, port: int) -> str:
        p = f"nic{int(port)}" if 0 <= int(dev) < self.n else f"p{int(port)}"
        return f"{self.name(dev)}:{p}"

    def role(self, dev: int) -> str:
        return "gpu" if int(dev) < self.n else tier_role(int(self.dev_tier[int(dev)]))

    def cable(self, i: int) -> str:
        lb = self.labels
        text = f"cable {int(lb.cable[i])}"
        if lb.loc is not None:
            text += f" ({lb.loc_fmt.format(int(lb.loc[i]))})"
        return text

    def ends(self, i: int) -> tuple[tuple[str, str], tuple[str, ...]]:
        """Device names and port names of both ends of link ``i``."""
        a, z = int(self.a[i]), int(self.z[i])
        return (self.name(a), self.name(z)), (self.port(a, self.ap[i]), self.port(z, self.zp[i]))

    # findings -------------------------------------------------------------------------

    def add(self, check: str, severity: str, devices, ports, message: str, hint: str = "", cables=()) -> None:
        n = self.counts.get(check, 0) + 1
        self.counts[check] = n
        if n > MAX_PER_CHECK:
            _sev, k = self.report.suppressed.get(check, (severity, 0))
            self.report.suppressed[check] = (severity, k + 1)
            return
        cab = tuple(int(self.labels.cable[i]) for i in cables)
        self.report.findings.append(Finding(check, severity, tuple(devices), tuple(ports), message, hint, cab))

    def add_finding(self, f: Finding) -> None:
        """Take a finding made elsewhere (the file reader), under the same caps."""
        n = self.counts.get(f.check, 0) + 1
        self.counts[f.check] = n
        if n > MAX_PER_CHECK:
            _sev, k = self.report.suppressed.get(f.check, (f.severity, 0))
            self.report.suppressed[f.check] = (f.severity, k + 1)
        else:
            self.report.findings.append(f)

    def want(self, check: str) -> bool:
        """False once a check has listed its maximum: callers skip building messages."""
        return self.counts.get(check, 0) < MAX_PER_CHECK

    def add_many(self, check: str, severity: str, idx: np.ndarray, make) -> None:
        """Call ``make(i)`` -> (devices, ports, message, hint, cables) for the first rows; count the rest."""
        for j, i in enumerate(idx):
            if not self.want(check):
                rest = len(idx) - j
                _s, k = self.report.suppressed.get(check, (severity, 0))
                self.report.suppressed[check] = (severity, k + rest)
                self.counts[check] = self.counts.get(check, 0) + rest
                return
            d, p, msg, hint, cab = make(int(i))
            self.add(check, severity, d, p, msg, hint, cab)


# --- public API ---------------------------------------------------------------------------


def validate(fabric: Fabric, labels: Labels | None = None, pre: list[Finding] | tuple = (), source: str = "", maxflow_links: int = MAXFLOW_LINKS) -> Report:
    """Run the six checks on ``fabric`` against its spec and return the :class:`Report`.

    ``labels`` names cables after the file they came from; ``pre`` holds the
    findings the file reader made (unknown devices, dropped rows). Max-flow
    bisection runs only when the fabric has at most ``maxflow_links`` cables.
    """
    report = Report(fabric.arch, fabric.spec, source=source)
    w = _Wire(fabric, labels, report)
    for f in pre:
        w.add_finding(f)
    report.figures["gpus"] = w.n
    report.figures["switches"] = w.S
    report.figures["cables"] = len(w.L)
    _check_hygiene(w)
    _check_tiers(w)
    _check_rails(w)
    comp = _Components(w)
    _check_reach(w, comp)
    _check_capacity(w, comp, maxflow_links)
    _check_failures(w, comp)
    return report


# --- shared helpers -----------------------------------------------------------------------


def components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Connected-component label of each of ``n`` nodes joined by edges ``a[i]–b[i]``.

    Hook-to-smaller-root plus pointer jumping (Shiloach–Vishkin style): a few
    vectorised rounds even for millions of edges. Labels are node ids of a
    representative; equal labels mean the same component.
    """
    label = np.arange(n, dtype=np.int64)
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    while len(a):
        la, lb = label[a], label[b]
        diff = la != lb
        if not diff.any():
            break
        a, b, la, lb = a[diff], b[diff], la[diff], lb[diff]
        np.minimum.at(label, np.maximum(la, lb), np.minimum(la, lb))
        while True:
            nxt = label[label]
            if np.array_equal(nxt, label):
                break
            label = nxt
    return label


def unique(x: np.ndarray, counts: bool = False):
    """Sorted distinct values of an integer array (and how often each occurs).

    Sort-based: numpy's hash-based ``np.unique`` is several times slower on
    the millions of int64 keys of a large fabric.
    """
    x = np.sort(np.asarray(x).ravel(), kind="stable")
    first = np.flatnonzero(np.r_[True, x[1:] != x[:-1]]) if len(x) else np.zeros(0, np.int64)
    if counts:
        return x[first], np.diff(np.r_[first, len(x)])
    return x[first]


def _ranges(ports: list[int], prefix: str = "p") -> str:
    """``p1-p8, p17`` for a sorted list of port numbers."""
    out = []
    ports = sorted(set(int(p) for p in ports))
    i = 0
    while i < len(ports):
        j = i
        while j + 1 < len(ports) and ports[j + 1] == ports[j] + 1:
            j += 1
        out.append(f"{prefix}{ports[i]}" if i == j else f"{prefix}{ports[i]}-{prefix}{ports[j]}")
        i = j + 1
    return ", ".join(out)


def _some(names: list[str], total: int | None = None) -> str:
    total = len(names) if total is None else total
    shown = ", ".join(names[:_LIST])
    return shown + (f" ... ({total} in all)" if total > _LIST else "")


def _ratio(down: int, up: int) -> str:
    if up == 0:
        return f"{down}:0"
    g = gcd(int(down), int(up)) or 1
    return f"{int(down) // g}:{int(up) // g}"


# --- 1. hygiene ---------------------------------------------------------------------------


def _check_hygiene(w: _Wire) -> None:
    n, L = w.n, w.L
    spec = w.spec

    def dangling(i: int):
        ends = [(d, p) for d, p in ((w.a[i], w.ap[i]), (w.z[i], w.zp[i])) if 0 <= d < w.ndev]
        return (
            [w.name(d) for d, _ in ends],
            [w.port(d, p) for d, p in ends],
            f"{w.cable(i)} has an end on no device of the fabric (device ids {int(w.a[i])}, {int(w.z[i])}; the fabric has {w.ndev})",
            "every cable needs a known device and port at both ends",
            (i,),
        )

    w.add_many("hygiene.dangling", "error", np.flatnonzero(~w.valid), dangling)
    sl = np.flatnonzero(w.valid & (w.a == w.z))
    w.add_many(
        "hygiene.self-link",
        "error",
        sl,
        lambda i: (
            (w.name(w.a[i]),),
            (w.port(w.a[i], w.ap[i]), w.port(w.z[i], w.zp[i])),
            f"{w.cable(i)} joins {w.name(w.a[i])} to itself ({w.port(w.a[i], w.ap[i])} to {w.port(w.z[i], w.zp[i])})",
            "cable the port to the device of the adjacent tier it belongs to",
            (i,),
        ),
    )
    # every end of every cable with known devices
    vi = np.flatnonzero(w.valid)
    e_dev = np.concatenate([w.a[vi], w.z[vi]])
    e_port = np.concatenate([w.ap[vi], w.zp[vi]])
    e_link = np.concatenate([vi, vi])
    e_far = np.concatenate([w.z[vi], w.a[vi]])
    e_farp = np.concatenate([w.zp[vi], w.ap[vi]])
    is_gpu = e_dev < n
    swi = np.where(is_gpu, 0, e_dev - n)
    radix = w.sw_radix[swi] if w.S else np.zeros(len(e_dev), np.int64)
    bad = np.where(is_gpu, (e_port < 0) | (e_port >= w.planes), (e_port < 1) | (e_port > radix))

    def bad_port(e: int):
        d, p, i = int(e_dev[e]), int(e_port[e]), int(e_link[e])
        if d < n:
            valid_ports = _ranges(list(range(w.planes)), "nic")
            msg = f"{w.cable(i)} uses {w.port(d, p)}, but each GPU has {w.planes} NIC port(s) ({valid_ports}), one per plane"
        else:
            msg = f"{w.cable(i)} uses {w.port(d, p)}, but {w.name(d)} has ports p1-p{int(w.sw_radix[d - n])}"
        return (w.name(d),), (w.port(d, p),), msg, "use a port that exists on the device", (i,)

    w.add_many("hygiene.bad-port", "error", np.flatnonzero(bad), bad_port)
    # port reuse
    key = e_dev * (int(max(e_port.max(initial=0), w.sw_radix.max(initial=0))) + 2) + (e_port + 1)
    order = np.argsort(key, kind="stable")
    ks = key[order]
    starts = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]]) if len(ks) else np.zeros(0, np.int64)
    sizes = np.diff(np.r_[starts, len(ks)])

    def reuse(j: int):
        run = order[starts[j] : starts[j] + sizes[j]]
        run = run[np.argsort(e_link[run], kind="stable")]  # in cable order
        d, p = int(e_dev[run[0]]), int(e_port[run[0]])
        links = [int(e_link[e]) for e in run]
        fars = [w.port(int(e_far[e]), int(e_farp[e])) for e in run]
        return (
            [w.name(d)] + [f.split(":")[0] for f in fars],
            [w.port(d, p)] + fars,
            f"port {w.port(d, p)} is used by {len(run)} cables: " + "; ".join(f"{w.cable(i)} to {f}" for i, f in zip(links, fars)),
            "a port takes one cable: move all but one of these cables to free ports",
            links,
        )

    w.add_many("hygiene.port-reuse", "error", np.flatnonzero(sizes > 1), reuse)
    # port budget
    if w.S:
        sw_end = ~is_gpu
        used = np.bincount(e_dev[sw_end] - n, minlength=w.S)

        def over_budget(s: int):
            d = n + s
            mine = np.flatnonzero(e_dev == d)
            ports = e_port[mine]
            _u, first = np.unique(ports, return_index=True)
            extra = np.ones(len(mine), bool)
            extra[first] = False  # the second and later cables on a port, and ports past the radix
            excess = mine[extra | (ports < 1) | (ports > w.sw_radix[s])]
            ex_ports = sorted({int(e_port[e]) for e in excess})
            return (
                (w.name(d),),
                tuple(w.port(d, p) for p in ex_ports),
                f"{w.name(d)} has {int(used[s])} cables on a {int(w.sw_radix[s])}-port switch; over budget on {_ranges(ex_ports)}",
                "remove or move the extra cables: a switch takes at most radix cables",
                tuple(int(e_link[e]) for e in excess[:_LIST]),
            )

        w.add_many("hygiene.port-budget", "error", np.flatnonzero(used > w.sw_radix), over_budget)
    # GPUs: exactly one cable per NIC port (plane)
    gpu_ok = is_gpu & ~bad
    gk = e_dev[gpu_ok] * w.planes + e_port[gpu_ok]
    per = np.bincount(gk, minlength=n * w.planes)
    none = np.flatnonzero(per == 0)
    w.add_many(
        "hygiene.gpu-no-link",
        "error",
        none,
        lambda k: (
            (w.gpu_names.name(k // w.planes),),
            (w.port(k // w.planes, k % w.planes),),
            f"{w.gpu_names.name(k // w.planes)} has no cable on nic{k % w.planes} (plane {k % w.planes})",
            f"cable {w.port(k // w.planes, k % w.planes)} to its rail leaf of plane {k % w.planes}",
            (),
        ),
    )
    many = np.flatnonzero(per > 1)
    if len(many):
        gk_all = np.full(len(e_dev), -1, np.int64)
        gk_all[gpu_ok] = gk

        def extra(k: int):
            es = np.flatnonzero(gk_all == k)
            g, p = k // w.planes, k % w.planes
            fars = [w.port(int(e_far[e]), int(e_farp[e])) for e in es]
            return (
                [w.gpu_names.name(g)] + [f.split(":")[0] for f in fars],
                [w.port(g, p)] + fars,
                f"{w.gpu_names.name(g)} has {len(es)} cables on plane {p}: " + "; ".join(f"{w.cable(int(e_link[e]))} to {f}" for e, f in zip(es, fars)),
                "a GPU has exactly one cable per plane: remove all but the one to its rail leaf",
                [int(e_link[e]) for e in es],
            )

        w.add_many("hygiene.gpu-extra-link", "error", many, extra)
    # speeds
    mism = np.flatnonzero(w.valid & (w.a_speed != w.z_speed))
    w.add_many(
        "hygiene.speed-mismatch",
        "error",
        mism,
        lambda i: (
            w.ends(i)[0],
            w.ends(i)[1],
            f"{w.cable(i)}: {w.ends(i)[1][0]} runs at {int(w.a_speed[i])} Gb/s but {w.ends(i)[1][1]} at {int(w.z_speed[i])} Gb/s",
            f"both ends of a cable run at one speed; the spec's links are {spec.link_speed} Gb/s",
            (i,),
        ),
    )
    off = np.flatnonzero(w.valid & (w.a_speed == w.z_speed) & (w.a_speed != spec.link_speed))
    w.add_many(
        "hygiene.link-speed",
        "error",
        off,
        lambda i: (
            w.ends(i)[0],
            w.ends(i)[1],
            f"{w.cable(i)} ({w.ends(i)[1][0]} to {w.ends(i)[1][1]}) runs at {int(w.a_speed[i])} Gb/s; the spec's links are {spec.link_speed} Gb/s",
            "radix and capacity are counted at the spec's link speed: use that speed or change link_speed in the spec",
            (i,),
        ),
    )
    # planes: both ends of a cable in one plane (a GPU end: its NIC index)

    def plane_of(dev: np.ndarray, port: np.ndarray) -> np.ndarray:
        out = np.where(dev < n, port, 0)
        s = dev >= n
        out[s] = w.sw_plane[dev[s] - n]
        return out

    pa = plane_of(np.where(w.good, w.a, 0), w.ap)
    pz = plane_of(np.where(w.good, w.z, 0), w.zp)
    gpu_bad = ((w.a < n) & ((w.ap < 0) | (w.ap >= w.planes))) | ((w.z < n) & ((w.zp < 0) | (w.zp >= w.planes)))
    w.add_many(
        "hygiene.plane-mismatch",
        "error",
        np.flatnonzero(w.good & ~gpu_bad & (pa != pz)),
        lambda i: (
            w.ends(i)[0],
            w.ends(i)[1],
            f"{w.cable(i)} joins {w.ends(i)[1][0]} (plane {int(pa[i])}) to {w.ends(i)[1][1]} (plane {int(pz[i])})",
            "planes are independent copies of the fabric: cable a device only to devices of its own plane (a GPU's nic<p> to plane p)",
            (i,),
        ),
    )
    rep = w.report
    rep.checks["hygiene"] = (
        f"{len(L)} cables; ports within radix, none used twice; every GPU one cable per plane; {spec.link_speed} Gb/s at both ends"
        if rep.group_status("hygiene") == "pass"
        else f"{sum(v for c, v in w.counts.items() if c.startswith('hygiene.'))} problem(s) with ports, ends, speeds or planes"
    )


# --- 2. tiers -----------------------------------------------------------------------------


def _lohi(w: _Wire) -> None:
    """Orient every good cable by tier: ``lo`` = lower-tier end (GPU tier 0)."""
    i = np.flatnonzero(w.good)
    ta, tz = w.dev_tier[w.a[i]], w.dev_tier[w.z[i]]
    swap = ta > tz
    w.gi = i
    w.lo = np.where(swap, w.z[i], w.a[i])
    w.hi = np.where(swap, w.a[i], w.z[i])
    w.lo_port = np.where(swap, w.zp[i], w.ap[i])
    w.hi_port = np.where(swap, w.ap[i], w.zp[i])
    w.lo_t = np.minimum(ta, tz)
    w.hi_t = np.maximum(ta, tz)
    w.speed = np.minimum(w.a_speed[i], w.z_speed[i])
    w.adj = w.hi_t == w.lo_t + 1
    # the plane of a cable: the switch end's plane (a GPU-GPU cable: the NIC index)
    w.plane = np.where(w.hi >= w.n, w.sw_plane[np.maximum(w.hi - w.n, 0)] if w.S else 0, w.lo_port)


def _check_tiers(w: _Wire) -> None:
    _lohi(w)
    n, spec = w.n, w.spec
    bad = np.flatnonzero(~w.adj)

    def msg(j: int):
        i = int(w.gi[j])
        lo, hi = int(w.lo[j]), int(w.hi[j])
        pl, ph = w.port(lo, w.lo_port[j]), w.port(hi, w.hi_port[j])
        return (
            (w.name(lo), w.name(hi)),
            (pl, ph),
            f"{w.cable(i)} joins {pl} ({w.role(lo)}, tier {int(w.lo_t[j])}) to {ph} ({w.role(hi)}, tier {int(w.hi_t[j])}): links join adjacent tiers only (gpu-leaf, leaf-spine, spine-core...)",
            f"cable {pl} to a {tier_role(int(w.lo_t[j]) + 1)} of its group",
            (i,),
        )

    w.add_many("tiers.adjacent", "error", bad, msg)
    # every switch holds cables and has GPUs behind it
    ends = np.bincount(np.concatenate([w.lo[w.lo >= n], w.hi[w.hi >= n]]) - n, minlength=w.S)
    idle = np.flatnonzero(ends == 0)
    w.add_many(
        "tiers.unreachable",
        "error",
        idle,
        lambda s: (
            (w.sw_names[s],),
            (),
            f"{w.sw_names[s]} ({tier_role(int(w.sw_tier[s]))}) has no cables: nothing can reach it",
            "cable the switch into its group, or remove it from the design",
            (),
        ),
    )
    lab = components(w.ndev, w.lo, w.hi)
    has_gpu = np.zeros(w.ndev, bool)
    has_gpu[lab[:n]] = True
    lonely = np.flatnonzero(~has_gpu[lab[n:]] & (ends > 0))
    w.add_many(
        "tiers.unreachable",
        "error",
        lonely,
        lambda s: (
            (w.sw_names[s],),
            (),
            f"{w.sw_names[s]} ({tier_role(int(w.sw_tier[s]))}) is cabled, but no GPU can reach it (its part of the network holds no GPU)",
            "cable the switch to the lower tier of its group",
            (),
        ),
    )
    # tier count
    used = int(w.sw_tier[ends > 0].max(initial=0))
    k, K = spec.radix, spec.hb_domain
    if w.fabric.arch == "rail-only":
        minimum = counts.rail_only_tiers(spec.gpus, K, k)
    else:
        minimum = counts.rail_optimized_tiers(spec.gpus, K, k, spec.rail_packing == "shared")
    w.report.figures["tiers"] = used
    w.report.figures["min_tiers"] = minimum
    if used != minimum:
        w.add(
            "tiers.count",
            "warning",
            (),
            (),
            f"the wiring uses {used} tier(s); the minimum for {spec.gpus} GPUs, HB domain {K}, radix {k} ({w.fabric.arch}) is {minimum}",
            "a Clos with the fewest tiers that fit costs the fewest switches and hops" if used > minimum else "fewer tiers than the minimum cannot be full bisection",
        )
    w.report.checks["tiers"] = (
        f"{used} tier(s) ({'the minimum' if used == minimum else f'minimum {minimum}'}); every cable joins adjacent tiers; "
        f"{int((ends > 0).sum())}/{w.S} switches cabled and reachable from GPUs"
    )


# --- 3. rails -----------------------------------------------------------------------------


def _in_rails(w: _Wire, sw: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Whether rail ``rank[i]`` is among the rails of switch ``sw[i]`` (switch index)."""
    ok = (w.sw_rail_lo[sw] <= rank) & (rank <= w.sw_rail_hi[sw])
    odd = np.flatnonzero(~w.sw_rail_contig[sw])
    for j in odd:
        rails = w.fabric.switches[int(sw[j])].rails
        ok[j] = not rails or int(rank[j]) in rails
    return ok


def _check_rails(w: _Wire) -> None:
    n, K, spec = w.n, w.K, w.spec
    rail_only = w.fabric.arch == "rail-only"
    gl = np.flatnonzero((w.lo < n) & (w.hi >= n) & w.adj)
    rank = w.lo[gl] % K
    sw = w.hi[gl] - n
    wrong = gl[~_in_rails(w, sw, rank)]
    check = "rails.cross-rail" if rail_only else "rails.leaf-alignment"

    def gpu_msg(j: int):
        i = int(w.gi[j])
        g, s = int(w.lo[j]), int(w.hi[j]) - n
        rails = w.fabric.switches[s].rails
        pg, ps = w.port(g, w.lo_port[j]), w.port(n + s, w.hi_port[j])
        rtext = f"rail {rails[0]}" if len(rails) == 1 else f"rails {rails[0]}-{rails[-1]}"
        if rail_only:
            text = f"{w.cable(i)} puts {pg} (rail {g % K}) on {ps}, a switch of {rtext}: a network path now joins two rails"
            hint = f"rail-only rails are separate networks: cable {pg} to a switch of rail {g % K}"
        else:
            text = f"{w.cable(i)} puts {pg} (rail {g % K}) on {ps}, the leaf of {rtext}: leaves must be rail-aligned"
            hint = f"cable {pg} to the rail-{g % K} leaf of its group"
        return (w.name(g), w.sw_names[s]), (pg, ps), text, hint, (i,)

    w.add_many(check, "error", wrong, gpu_msg)
    if rail_only:
        ss = np.flatnonzero((w.lo >= n) & w.adj)
        a, b = w.lo[ss] - n, w.hi[ss] - n
        same = (w.sw_rail_lo[a] == w.sw_rail_lo[b]) & (w.sw_rail_hi[a] == w.sw_rail_hi[b]) & (w.sw_nrails[a] == w.sw_nrails[b])
        odd = np.flatnonzero(same & ~(w.sw_rail_contig[a] & w.sw_rail_contig[b]))
        for j in odd:
            same[j] = w.fabric.switches[int(a[j])].rails == w.fabric.switches[int(b[j])].rails

        def sw_msg(j: int):
            i = int(w.gi[j])
            lo, hi = int(w.lo[j]), int(w.hi[j])
            pl, ph = w.port(lo, w.lo_port[j]), w.port(hi, w.hi_port[j])
            rl, rh = w.fabric.switches[lo - n].rails, w.fabric.switches[hi - n].rails
            return (
                (w.name(lo), w.name(hi)),
                (pl, ph),
                f"{w.cable(i)} joins {pl} (rails {list(rl)}) to {ph} (rails {list(rh)}): a network path now joins different rails",
                "rail-only rails are separate networks: cable each switch only to switches of its own rail",
                (i,),
            )

        w.add_many("rails.cross-rail", "error", ss[~same], sw_msg)
    # switches that carry several rails: which rails, on how many ports each
    multi = np.flatnonzero((w.sw_nrails > 1) & (w.sw_tier == 1))
    shared_count = 0
    if len(multi):
        is_multi = np.zeros(w.S, bool)
        is_multi[multi] = True
        sel = gl[is_multi[w.hi[gl] - n]]
        key = (w.hi[sel] - n) * K + w.lo[sel] % K
        order = np.lexsort((w.hi_port[sel], key))
        sk, sp = key[order], w.hi_port[sel][order]
        starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]]) if len(sk) else np.zeros(0, np.int64)
        groups: dict[int, list[tuple[int, list[int]]]] = {}
        for s0, s1 in zip(starts, np.r_[starts[1:], len(sk)]):
            s, r = divmod(int(sk[s0]), K)
            groups.setdefault(s, []).append((r, sp[s0:s1].tolist()))
        sev = "info" if spec.rail_packing == "shared" else "error"
        for s in sorted(groups):
            rails = groups[s]
            if len(rails) < 2:
                continue
            shared_count += 1
            name = w.sw_names[s]
            parts = "; ".join(f"rail {r} on {len(p)} port(s) ({_ranges(p)})" for r, p in rails)
            if sev == "info":
                text = f"{name} carries {len(rails)} rails, isolated logically (VLAN/partition per rail), not physically: {parts}"
                hint = "set rail_packing: dedicated to give every rail its own switches"
            else:
                text = f"{name} carries {len(rails)} rails on one switch, but the spec asks for dedicated rails (rail_packing: dedicated): {parts}"
                hint = "give each rail its own switch (the generator does with rail_packing: dedicated), or accept logical isolation with rail_packing: shared"
            ports = [f"{name}:p{p[0]}" for _r, p in rails]
            w.add("rails.shared-switch", sev, (name,), ports, text, hint)
    w.report.figures["shared_switches"] = shared_count
    status = w.report.group_status("rails")
    if rail_only:
        detail = "every network path stays within one rail"
    else:
        detail = "every leaf is rail-aligned"
    if shared_count:
        detail += f"; {shared_count} switch(es) carry several rails (logical isolation)"
    w.report.checks["rails"] = detail if status != "error" else "cables join different rails, or rails share switches against the spec"


# --- 4. reachability ------------------------------------------------------------------------


class _Components:
    """Plane-expanded graph: GPU ``g`` in plane ``p`` is node ``p*N + g``, switch ``s`` is ``planes*N + s``.

    GPUs are separate nodes per plane because a GPU does not forward between
    its NICs; a plane's graph is then a separate part of one components run.
    """

    def __init__(self, w: _Wire):
        n, P = w.n, w.planes
        self.w = w
        self.size = P * n + w.S
        self.u = self.node(w.lo, w.plane)
        self.v = self.node(w.hi, w.plane)
        self.label = components(self.size, self.u, self.v)

    def node(self, dev: np.ndarray, plane: np.ndarray) -> np.ndarray:
        n = self.w.n
        p = np.clip(plane, 0, self.w.planes - 1)
        return np.where(dev < n, p * n + dev, self.w.planes * n + (dev - n))

    def linked(self) -> np.ndarray:
        """GPU-plane nodes holding at least one cable (bool over ``planes*N``)."""
        n, P = self.w.n, self.w.planes
        out = np.zeros(P * n, bool)
        for x in (self.u, self.v):
            out[x[x < P * n]] = True
        return out

    def cut_off(self, label: np.ndarray, linked: np.ndarray, plane: int | None = None) -> np.ndarray:
        """GPU-plane nodes outside the main part of their group (the plane; the rail in rail-only).

        The main part is the component holding most of the group's GPUs; GPUs
        with no cable count as cut off.
        """
        w = self.w
        n, P, K = w.n, w.planes, w.K
        planes = range(P) if plane is None else [plane]
        out = np.zeros(P * n, bool)
        rail_only = w.fabric.arch == "rail-only"
        for p in planes:
            sl = slice(p * n, (p + 1) * n)
            lab = label[sl]
            lk = linked[sl]
            grp = (np.arange(n) % K) if rail_only else np.zeros(n, np.int64)
            key = grp[lk] * (self.size + 1) + lab[lk]
            if len(key) == 0:
                out[sl] = True
                continue
            uk, cnt = unique(key, counts=True)
            g_of = uk // (self.size + 1)
            # main component per group: the largest (first on ties)
            order = np.lexsort((-cnt, g_of))
            first = np.r_[True, g_of[order][1:] != g_of[order][:-1]]
            main_key = uk[order][first]
            main = np.full(int(grp.max(initial=0)) + 1, -1, np.int64)
            main[main_key // (self.size + 1)] = main_key % (self.size + 1)
            out[sl] = ~lk | (lab != main[grp])
        return out


def _check_reach(w: _Wire, comp: _Components) -> None:
    n, P, K = w.n, w.planes, w.K
    rail_only = w.fabric.arch == "rail-only"
    linked = comp.linked()
    label = comp.label
    for p in range(P):
        sl = slice(p * n, (p + 1) * n)
        unl = np.flatnonzero(~linked[sl])
        if len(unl):
            names = w.gpu_names.many(unl[:_LIST]).tolist()
            how = "reachable only through two HB-domain hops (no NIC path of their own)" if rail_only and K > 1 else "unreachable through the network"
            w.add(
                "reach.unlinked",
                "error",
                names,
                [f"{x}:nic{p}" for x in names],
                f"plane {p}: {len(unl)} GPU(s) have no cable, {how}: {_some(names, len(unl))}",
                "see hygiene.gpu-no-link; cable every GPU's NIC port of each plane",
            )
        lab = label[sl]
        groups = [(None, np.flatnonzero(linked[sl]))]
        if rail_only:
            # vectorised split test: number of distinct labels per rail
            lk = np.flatnonzero(linked[sl])
            key = unique((lk % K) * (comp.size + 1) + lab[lk])
            per_rail = np.bincount(key // (comp.size + 1), minlength=K)
            groups = [(r, np.flatnonzero(linked[sl] & (np.arange(n) % K == r))) for r in np.flatnonzero(per_rail > 1)]
        for r, members in groups:
            if len(members) == 0:
                continue
            labs, cnt = unique(lab[members], counts=True)
            if len(labs) < 2:
                continue
            main = labs[np.argmax(cnt)]
            others = members[lab[members] != main]
            names = w.gpu_names.many(others[:_LIST]).tolist()
            sw_nodes = np.flatnonzero(np.isin(label[P * n :], labs[labs != main]))
            sw_names = [w.sw_names[s] for s in sw_nodes[:_LIST]]
            where = f"plane {p}" + (f", rail {r}" if r is not None else "")
            w.add(
                "reach.partition",
                "error",
                names + sw_names,
                [f"{x}:nic{p}" for x in names],
                f"{where} is split into {len(labs)} parts: {len(others)} of its {len(members)} GPUs cannot reach the rest through the network: {_some(names, len(others))}"
                + (f" (behind {_some(sw_names, len(sw_nodes))})" if sw_names else ""),
                "restore the missing uplinks so every leaf reaches the upper tiers of its " + ("rail" if rail_only else "fabric"),
            )
    hops = _worst_path(w, comp)
    w.report.figures["worst_case_hops"] = hops
    if w.report.group_status("reach") == "pass":
        if rail_only:
            proof = f"each rail of each plane is one connected network and the {w.spec.domains} HB domains are complete ({K} GPUs each), so every pair communicates with at most one HB hop"
        else:
            proof = "each plane is one connected network holding all GPUs"
    else:
        proof = "some GPUs cannot reach others (see findings)"
    w.report.checks["reach"] = f"{proof}; worst case {hops['switch_hops']} switch(es) and {hops['hb_hops']} HB hop(s) ({hops['path']})"


def _mix(x: np.ndarray, seed: int) -> np.ndarray:
    """splitmix64 of ``x + seed``: hash of a neighbour id, summed per leaf."""
    with np.errstate(over="ignore"):
        z = (x.astype(np.uint64) + np.uint64(seed)) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def leaf_distance(V: int, leaves: np.ndarray, ea: np.ndarray, eb: np.ndarray) -> int:
    """Largest switch-graph distance between two of ``leaves`` that are connected.

    ``V`` nodes, undirected edges ``ea–eb``. Leaves with the same set of
    neighbours are at equal distance from every other node, so one
    representative per class is the source of a breadth-first search run on
    bitsets (64 sources per machine word). A Clos pod is one class, so a
    65,536-GPU fabric needs a few hundred sources, not thousands.
    """
    leaves = unique(leaves)
    if len(leaves) < 2:
        return 0
    key = unique(np.concatenate([ea * V + eb, eb * V + ea]))
    src, dst = np.divmod(key, V)  # sorted by src, deduplicated
    is_leaf = np.zeros(V, bool)
    is_leaf[leaves] = True
    lp = is_leaf[src]
    pl, pn = src[lp], dst[lp]
    deg = np.bincount(pl, minlength=V)
    starts = np.flatnonzero(np.r_[True, pl[1:] != pl[:-1]]) if len(pl) else np.zeros(0, np.int64)
    h1 = np.zeros(V, np.uint64)
    h2 = np.zeros(V, np.uint64)
    if len(pl):
        h1[pl[starts]] = np.add.reduceat(_mix(pn, 1), starts)
        h2[pl[starts]] = np.add.reduceat(_mix(pn, 7), starts)
    connected = leaves[deg[leaves] > 0]
    reps = leaves[deg[leaves] == 0]  # isolated leaves: their own class (distance to others infinite)
    if len(connected):
        cls_key = np.stack([deg[connected].astype(np.uint64), h1[connected], h2[connected]], axis=1)
        _u, first, inv = np.unique(cls_key, axis=0, return_index=True, return_inverse=True)
        inv = inv.ravel()
        rep_of = connected[first][inv]
        # prove the hash classes exact: each member's neighbour list equals its representative's
        off = np.zeros(V + 1, np.int64)  # pn is in CSR order: leaf rows sorted, then neighbours
        np.cumsum(deg, out=off[1:])
        member = np.repeat(connected, deg[connected])
        rep = np.repeat(rep_of, deg[connected])
        k = np.arange(len(member)) - np.repeat(off[connected], deg[connected])
        exact = np.array_equal(pn[off[member] + k], pn[off[rep] + k])
        reps = np.concatenate([reps, connected[first] if exact else connected])
    if len(src) == 0:
        return 0
    # bitset BFS from the representatives over the whole switch graph
    order = np.argsort(dst, kind="stable")
    s_sorted, d_sorted = src[order], dst[order]
    gstart = np.flatnonzero(np.r_[True, d_sorted[1:] != d_sorted[:-1]])
    udst = d_sorted[gstart]
    worst = 0
    chunk = 512
    for c0 in range(0, len(reps), chunk):
        rs = reps[c0 : c0 + chunk]
        W = (len(rs) + 63) // 64
        R = np.zeros((V, W), np.uint64)
        j = np.arange(len(rs))
        R[rs, j // 64] = np.left_shift(np.uint64(1), (j % 64).astype(np.uint64))
        d = 0
        while True:
            d += 1
            agg = _or_gather(R, s_sorted, gstart)
            new = R.copy()
            new[udst] |= agg
            if np.array_equal(new, R):
                break
            if not np.array_equal(new[leaves], R[leaves]):
                worst = max(worst, d)
            R = new
    return worst


def _or_gather(R: np.ndarray, src: np.ndarray, gstart: np.ndarray, budget: int = 1 << 22) -> np.ndarray:
    """OR of ``R[src]`` over each run starting at ``gstart``, in memory-bounded slices."""
    W = R.shape[1]
    step = max(1, budget // max(W, 1))
    if len(src) <= step:
        return np.bitwise_or.reduceat(R[src], gstart, axis=0)
    out = np.zeros((len(gstart), W), np.uint64)
    bounds = np.r_[gstart, len(src)]
    g0 = 0
    while g0 < len(gstart):
        g1 = int(np.searchsorted(bounds, bounds[g0] + step, side="right")) - 1
        g1 = max(g1, g0 + 1)
        lo, hi = bounds[g0], bounds[g1]
        out[g0:g1] = np.bitwise_or.reduceat(R[src[lo:hi]], gstart[g0:g1] - lo, axis=0)
        g0 = g1
    return out


def _worst_path(w: _Wire, comp: _Components) -> dict[str, Any]:
    """Worst-case GPU-to-GPU path: switches traversed and HB-domain hops."""
    n = w.n
    worst = 0
    any_pair = False
    for p in range(w.planes):
        inp = w.plane == p
        ss = inp & (w.lo >= n) & w.adj
        gpu_sw = unique(w.hi[inp & (w.lo < n) & (w.hi >= n)] - n)
        if len(gpu_sw):
            any_pair = True
            dist = leaf_distance(w.S, gpu_sw, w.lo[ss] - n, w.hi[ss] - n)
            worst = max(worst, dist + 1)
    rail_only = w.fabric.arch == "rail-only"
    hb = 1 if rail_only and w.K > 1 else 0
    switch_hops = worst if any_pair and n > 1 else 0
    path = "GPU"
    if switch_hops % 2 == 1:
        m = (switch_hops + 1) // 2
        roles = [tier_role(t) for t in range(1, m + 1)]
        path = " > ".join(["GPU"] + roles + roles[-2::-1] + ["GPU"])
    elif switch_hops:
        path = f"GPU > {switch_hops} switches > GPU"
    if hb:
        path = "GPU > HB domain > " + path
    return {"switch_hops": int(switch_hops), "hb_hops": hb, "path": path}


# --- 5. capacity ------------------------------------------------------------------------------


def _check_capacity(w: _Wire, comp: _Components, maxflow_links: int) -> None:
    n, S, spec = w.n, w.S, w.spec
    allowed = float(getattr(spec, "oversubscription", 1) or 1)
    adj = w.adj
    up = np.zeros(S, np.int64)
    down = np.zeros(S, np.int64)
    nup = np.zeros(S, np.int64)
    ndown = np.zeros(S, np.int64)
    lo_sw = adj & (w.lo >= n)
    np.add.at(up, w.lo[lo_sw] - n, w.speed[lo_sw])
    np.add.at(nup, w.lo[lo_sw] - n, 1)
    hs = adj & (w.hi >= n)
    np.add.at(down, w.hi[hs] - n, w.speed[hs])
    np.add.at(ndown, w.hi[hs] - n, 1)
    top = w.fabric.tiers
    below = (w.sw_tier < top) & (down > 0)
    ratio = np.full(S, np.nan)
    ratio[below] = np.where(up[below] > 0, down[below] / np.maximum(up[below], 1), np.inf)
    over = np.flatnonzero(below & (ratio > allowed * (1 + 1e-9)))

    def over_msg(s: int):
        name = w.sw_names[s]
        free = _free_uplink_ports(w, s)
        req = "1:1" if allowed == 1 else f"at most {allowed:g}:1"
        text = (
            f"{name} has {int(ndown[s])} downlink(s) ({int(down[s])} Gb/s) but {int(nup[s])} uplink(s) ({int(up[s])} Gb/s): "
            f"{_ratio(down[s], up[s])} oversubscribed, {req} required"
        )
        if free:
            text += f"; uplink port(s) without a cable: {_ranges(free)}"
        return (name,), tuple(f"{name}:p{p}" for p in free[:_LIST]), text, "cable the missing uplinks (as many Gb/s up as down)", ()

    w.add_many("capacity.oversubscription", "error", over, over_msg)
    if spec.provision == "full":
        short = np.flatnonzero(below & (nup < w.sw_radix - w.sw_down) & ~np.isin(np.arange(S), over))

        def short_msg(s: int):
            name = w.sw_names[s]
            free = _free_uplink_ports(w, s)
            return (
                (name,),
                tuple(f"{name}:p{p}" for p in free[:_LIST]),
                f"{name} has {int(nup[s])} of its {int(w.sw_radix[s] - w.sw_down[s])} uplinks cabled; provision: full builds them all"
                + (f"; uplink port(s) without a cable: {_ranges(free)}" if free else ""),
                "cable the missing uplinks to the upper switches of the switch's stripe (or set provision: minimal)",
                (),
            )

        w.add_many("capacity.provisioning", "error", short, short_msg)
    per_tier: dict[str, float | None] = {}
    for t in range(1, top):
        sel = below & (w.sw_tier == t)
        if sel.any():
            r = float(np.max(ratio[sel]))
            per_tier[tier_role(t)] = None if np.isinf(r) else round(r, 4)
    w.report.figures["oversubscription_per_tier"] = per_tier
    # balanced striping: same number of parallel links to each upper switch, and to
    # every upper switch of the stripe (the lower switches and upper switches joined
    # by one tier of cables form complete bipartite stripes in a Clos)
    ss = np.flatnonzero(adj & (w.lo >= n))
    key = (w.lo[ss] - n) * S + (w.hi[ss] - n)
    uk, cnt = unique(key, counts=True)
    low = uk // S
    upp = uk % S
    starts = np.flatnonzero(np.r_[True, low[1:] != low[:-1]]) if len(low) else np.zeros(0, np.int64)
    if len(starts):
        mn = np.minimum.reduceat(cnt, starts)
        mx = np.maximum.reduceat(cnt, starts)
        deg = np.diff(np.r_[starts, len(low)])
        # stripes: components of the (lower, upper) pairs, uppers as nodes of their own
        lab = components(2 * S, low, S + upp)
        stripe_uppers = np.bincount(unique(lab[S + upp] * 2 * S + upp) // (2 * S), minlength=2 * S)
        width = stripe_uppers[lab[low[starts]]]
        bad = np.flatnonzero((mn != mx) | (deg < width))
        ends = np.r_[starts[1:], len(low)]

        def stripe_msg(b: int):
            s = int(low[starts[b]])
            name = w.sw_names[s]
            parts = []
            ports = []
            text = []
            sel_ss = ss[w.lo[ss] - n == s]
            for k in range(starts[b], ends[b]):
                u = int(uk[k] % S)
                ps = sorted(w.lo_port[sel_ss[w.hi[sel_ss] - n == u]].tolist())
                parts.append(f"{int(cnt[k])} to {w.sw_names[u]} ({_ranges(ps)})")
                ports.extend(f"{name}:p{p}" for p in ps)
            cab = tuple(int(w.gi[j]) for j in sel_ss[:_LIST])
            free = _free_uplink_ports(w, s)
            ports.extend(f"{name}:p{p}" for p in free[:_LIST])
            if mn[b] != mx[b]:
                text.append(f"{name} stripes its uplinks unevenly: " + ", ".join(parts))
            if deg[b] < width[b]:
                mine = set(upp[starts[b] : ends[b]].tolist())
                stripe = np.unique(upp[lab[S + upp] == lab[low[starts[b]]]])
                missing = [w.sw_names[u] for u in stripe.tolist() if u not in mine]
                text.append(f"{name} reaches {int(deg[b])} of the {int(width[b])} upper switches of its stripe (none to {_some(missing)})" + ("" if text else ": " + ", ".join(parts)))
            return (
                (name,) + tuple(w.sw_names[int(uk[k] % S)] for k in range(starts[b], ends[b])),
                ports,
                "; ".join(text) + (f"; uplink port(s) without a cable: {_ranges(free)}" if free else ""),
                "give the switch the same number of parallel links to each upper switch of its group (ECMP balance)",
                cab,
            )

        w.add_many("capacity.striping", "error", bad, stripe_msg)
    bis = _bisection(w, comp, maxflow_links)
    w.report.figures["bisection"] = bis
    tiers_txt = ", ".join(f"{r} {_fmt_ratio(v)}" for r, v in per_tier.items()) or "single tier"
    detail = f"oversubscription {tiers_txt}; striping {'balanced' if not w.counts.get('capacity.striping') else 'UNBALANCED'}"
    if bis.get("checked"):
        detail += f"; max-flow {'confirms' if bis['full'] else 'REFUTES'} full bisection across {bis['cut']}"
    else:
        detail += f"; max-flow bisection skipped ({bis.get('reason')})"
    w.report.checks["capacity"] = detail


def _free_uplink_ports(w: _Wire, s: int) -> list[int]:
    """Uplink ports (above the switch's down ports) of switch index ``s`` that hold no cable."""
    d = w.n + s
    used = set(w.lo_port[w.lo == d].tolist()) | set(w.hi_port[w.hi == d].tolist())
    return [p for p in range(int(w.sw_down[s]) + 1, int(w.sw_radix[s]) + 1) if p not in used]


def _fmt_ratio(v: float | None) -> str:
    if v is None:
        return "no uplinks"
    if abs(v - round(v)) < 1e-9:
        return f"{int(round(v))}:1"
    if v < 1:
        return f"{v:.2f}:1 (under-subscribed)"
    return f"{v:.2f}:1"


def _bisection(w: _Wire, comp: _Components, limit: int) -> dict[str, Any]:
    """Max-flow between the two halves of the cluster (or of each rail) in every plane.

    The cut: HB domains ``0 .. D/2-1`` against the rest (the first half of the
    groups and pods of a Clos, so traffic has to cross its top tier). With one
    domain the GPUs are cut by rank. Full bisection: the flow equals the smaller
    half's injection bandwidth (its GPUs x the spec's link speed), so a GPU
    without its cable also shows as a shortfall.
    """
    n, K, spec = w.n, w.K, w.spec
    D = spec.domains
    if len(w.L) > limit:
        return {"checked": False, "reason": f"{len(w.L)} cables > {limit}; per-switch 1:1 and balanced striping above stand in for it"}
    import networkx as nx  # only small fabrics pay for it
    rail_only = w.fabric.arch == "rail-only"
    gpu = np.arange(n)
    dom, rank = gpu // K, gpu % K
    cuts = []
    if rail_only:
        if D < 2:
            return {"checked": False, "reason": "each rail has a single GPU"}
        for p in range(w.planes):
            for r in range(K):
                cuts.append((p, r, (rank == r) & (dom < D // 2), (rank == r) & (dom >= D // 2)))
        desc = f"HB domains 0-{D // 2 - 1} | {D // 2}-{D - 1} within each rail ({K} rail(s) x {w.planes} plane(s))"
    else:
        if n < 2:
            return {"checked": False, "reason": "a single GPU"}
        if D >= 2:
            a = dom < D // 2
            desc = f"HB domains 0-{D // 2 - 1} | {D // 2}-{D - 1} ({w.planes} plane(s))"
        else:
            a = rank < K // 2
            desc = f"ranks 0-{K // 2 - 1} | {K // 2}-{K - 1} of the one HB domain ({w.planes} plane(s))"
        for p in range(w.planes):
            cuts.append((p, None, a, ~a))
    worst = None
    edge_label = comp.label[comp.u]
    inj = int(spec.link_speed)  # what a GPU's NIC injects into one plane
    for p, r, A, B in cuts:
        # only the parts of the network that hold the cut's GPUs (one rail's Clos in rail-only)
        inp = np.isin(edge_label, comp.label[p * n + np.flatnonzero(A | B)])
        lo, hi, sp = w.lo[inp], w.hi[inp], w.speed[inp]
        side = np.zeros(n, np.int8)
        side[A], side[B] = 1, 2
        gl = (lo < n) & (hi >= n)
        glinks = np.bincount(lo[gl], minlength=n)
        # a GPU with one cable is contracted into its switch: S -> switch (or switch -> T)
        one = gl & (glinks[np.minimum(lo, n - 1)] == 1) & (side[np.minimum(lo, n - 1)] > 0)
        G = nx.DiGraph()
        for s_ in (1, 2):
            sel = one & (side[np.minimum(lo, n - 1)] == s_)
            caps = np.bincount(hi[sel], weights=np.minimum(sp[sel], inj), minlength=w.ndev)
            for d in np.flatnonzero(caps).tolist():
                if s_ == 1:
                    G.add_edge("S", d, capacity=int(caps[d]))
                else:
                    G.add_edge(d, "T", capacity=int(caps[d]))
        rest = ~one & (hi >= n) & ((lo >= n) | (side[np.minimum(lo, n - 1)] > 0))
        key = lo[rest] * w.ndev + hi[rest]
        uk, inv = np.unique(key, return_inverse=True)
        cap = np.bincount(inv.ravel(), weights=sp[rest], minlength=len(uk)).astype(np.int64)
        ul, uh = np.divmod(uk, w.ndev)
        for u, v, c in zip(ul.tolist(), uh.tolist(), cap.tolist()):
            G.add_edge(u, v, capacity=c)
            G.add_edge(v, u, capacity=c)
        multi = np.unique(lo[rest & (lo < n)]) if rest.any() else np.zeros(0, np.int64)
        for g in multi.tolist():  # GPUs with several cables stay nodes of their own
            G.add_edge("S", g, capacity=inj) if side[g] == 1 else G.add_edge(g, "T", capacity=inj)
        demand = inj * int(min(A.sum(), B.sum()))
        flow = int(nx.maximum_flow_value(G, "S", "T")) if "S" in G and "T" in G else 0
        res = (flow - demand, p, r, flow, demand)
        if worst is None or res < worst:
            worst = res
        if flow < demand:
            where = f"plane {p}" + (f", rail {r}" if r is not None else "")
            w.add(
                "capacity.bisection",
                "error",
                (),
                (),
                f"{where}: max-flow across {desc.split(' (')[0]} is {flow} Gb/s, below the {demand} Gb/s one half injects: not full bisection",
                "look for missing uplinks or oversubscribed switches (capacity.oversubscription, capacity.striping)",
            )
    _gap, p, r, flow, demand = worst
    return {
        "checked": True,
        "cut": desc,
        "cuts": len(cuts),
        "full": not w.counts.get("capacity.bisection"),
        "worst_flow_gbps": flow,
        "demand_gbps": demand,
        "worst_cut": f"plane {p}" + (f", rail {r}" if r is not None else ""),
    }


# --- 6. failure impact ------------------------------------------------------------------------------


def _check_failures(w: _Wire, comp: _Components) -> None:
    """Fail the busiest switch of each tier, then one cable of each tier; count GPUs cut off.

    "Cut off" = no longer in the main part of its plane (its rail in
    rail-only); the figures are the increase over the intact wiring, per plane
    of the failed element. Capacity lost is per link tier, as a fraction of
    that tier's Gb/s. In both architectures a GPU that loses its NIC path can
    still reach others by forwarding through its HB domain.
    """
    n, S = w.n, w.S
    linked = comp.linked()
    base = comp.cut_off(comp.label, linked)
    top = int(w.hi_t.max(initial=0))
    tier_cap = np.bincount(w.hi_t[w.adj], weights=w.speed[w.adj], minlength=top + 1)
    ends = np.zeros(S, np.int64)
    np.add.at(ends, w.lo[w.lo >= n] - n, 1)
    np.add.at(ends, w.hi[w.hi >= n] - n, 1)

    def impact(remove: np.ndarray, plane: int) -> tuple[int, dict[str, float]]:
        keep = ~remove
        lab = components(comp.size, comp.u[keep], comp.v[keep])
        lk = np.zeros(w.planes * n, bool)
        for x in (comp.u[keep], comp.v[keep]):
            lk[x[x < w.planes * n]] = True
        after = comp.cut_off(lab, lk, plane)
        sl = slice(plane * n, (plane + 1) * n)
        lost_gpus = int(after[sl].sum() - base[sl].sum())
        lost = np.bincount(w.hi_t[remove & w.adj], weights=w.speed[remove & w.adj], minlength=top + 1)
        frac = {link_tier_name(t): round(float(lost[t] / tier_cap[t]), 6) for t in range(1, top + 1) if lost[t] > 0 and tier_cap[t] > 0}
        return max(lost_gpus, 0), frac

    out: dict[str, Any] = {"switch": {}, "link": {}}
    rail_only = w.fabric.arch == "rail-only"
    hb_note = " (they can still forward through their HB domain)" if w.K > 1 else ""
    for t in range(1, int(w.sw_tier.max(initial=0)) + 1):
        cand = np.flatnonzero((w.sw_tier == t) & (ends > 0))
        if not len(cand):
            continue
        s = int(cand[np.argmax(ends[cand])])
        d = n + s
        remove = (w.lo == d) | (w.hi == d)
        gpus, frac = impact(remove, int(w.sw_plane[s]))
        role = tier_role(t)
        out["switch"][role] = {"device": w.sw_names[s], "cables": int(ends[s]), "gpus_cut_off": gpus, "capacity_lost": frac}
        lost = ", ".join(f"{k} {v:.2%}" for k, v in frac.items())
        w.add(
            "failure.switch",
            "info",
            (w.sw_names[s],),
            (),
            f"{'rail-only' if rail_only else 'rail-optimized'}: if {w.sw_names[s]} ({role}, {int(ends[s])} cables) fails, {gpus} GPU(s) lose their network path{hb_note if gpus else ''}; capacity lost: {lost or 'none'}",
        )
    for t in range(1, top + 1):
        cand = np.flatnonzero(w.adj & (w.hi_t == t))
        if not len(cand):
            continue
        if t == 1:
            j = int(cand[0])
        else:
            nup = np.bincount(w.lo[cand] - n, minlength=S)
            j = int(cand[np.argmin(nup[w.lo[cand] - n])])
        remove = np.zeros(len(w.lo), bool)
        remove[j] = True
        gpus, frac = impact(remove, int(w.plane[j]))
        i = int(w.gi[j])
        name = link_tier_name(t)
        (da, dz), (pa, pz) = w.ends(i)
        out["link"][name] = {"cable": int(w.labels.cable[i]), "ends": [pa, pz], "gpus_cut_off": gpus, "capacity_lost": frac}
        lost = ", ".join(f"{k} {v:.2%}" for k, v in frac.items())
        w.add(
            "failure.link",
            "info",
            (da, dz),
            (pa, pz),
            f"{'rail-only' if rail_only else 'rail-optimized'}: if {w.cable(i)} ({name}, {pa} to {pz}) fails, {gpus} GPU(s) lose their network path; capacity lost: {lost or 'none'}",
            cables=(i,),
        )
    w.report.figures["failure_impact"] = out
    sw = "; ".join(f"{r}: {v['gpus_cut_off']} GPU(s)" for r, v in out["switch"].items())
    lk = "; ".join(f"{r}: {v['gpus_cut_off']} GPU(s)" for r, v in out["link"].items())
    w.report.checks["failure"] = f"one switch down: {sw or '-'}; one cable down: {lk or '-'}"


# --- presentation ------------------------------------------------------------------------------------


def render(report: Report, limit: int = 30) -> str:
    """The readable report: a verdict, one line per check, then the findings (errors first)."""
    spec = report.spec
    f = report.figures
    verdict = "VALID" if report.valid else "INVALID"
    head = (
        f"{spec.name} / {report.arch}: {verdict} ({report.errors} error(s), {report.warnings} warning(s)); "
        f"{f.get('gpus')} GPUs, {f.get('switches')} switches, {f.get('cables')} cables"
    )
    if report.source:
        head += f"; read from {report.source}"
    lines = [head]
    for g, (num, title) in GROUPS.items():
        st = report.group_status(g)
        mark = {"pass": "ok  ", "warning": "WARN", "error": "FAIL"}[st]
        lines.append(f"  [{mark}] {num} {title}: {report.checks.get(g, '')}")
    order = {s: i for i, s in enumerate(SEVERITIES)}
    shown = sorted(report.findings, key=lambda x: order[x.severity])
    problems = [x for x in shown if x.severity != "info"]
    infos = [x for x in shown if x.severity == "info"]
    for x in (problems + infos)[:limit]:
        lines.append(f"  {x.severity:7s} {x.check}: {x.message}")
        if x.hint and x.severity != "info":
            lines.append(f"          hint: {x.hint}")
    rest = len(problems) + len(infos) - limit
    more = sum(k for _s, k in report.suppressed.values())
    if rest > 0 or more:
        lines.append(f"  ... {max(rest, 0) + more} more finding(s) not shown (validation.json lists up to {MAX_PER_CHECK} per check id and counts the rest)")
    return "\n".join(lines)


def summary_line(fig: dict[str, Any]) -> str:
    """One line from :meth:`Report.key_figures` for the build summary."""
    verdict = "valid" if fig["valid"] else "INVALID"
    hops = fig.get("worst_case_hops") or {}
    over = ", ".join(f"{k} {_fmt_ratio(v)}" for k, v in (fig.get("oversubscription_per_tier") or {}).items()) or "single tier"
    leaf = ((fig.get("failure_impact") or {}).get("switch") or {}).get("leaf")
    text = (
        f"validation: {verdict} ({fig['errors']} error(s), {fig['warnings']} warning(s)); worst case {hops.get('switch_hops')} switch hop(s)"
        f" + {hops.get('hb_hops')} HB hop(s); oversubscription {over}"
    )
    if leaf:
        text += f"; one leaf down cuts off {leaf['gpus_cut_off']} GPU(s)"
    return text
