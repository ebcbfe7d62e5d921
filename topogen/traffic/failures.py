"""Failures: devices and cables taken out of a fabric before the traffic is routed.

``--fail`` names devices (a switch or a GPU: every cable it has goes) and
cable ends (``DEVICE:PORT``, the cable on that port goes), comma-separated.
``--fail-random P%`` takes out that share of the switch-to-switch cables,
drawn at random (GPU cables stay: a dead NIC cable removes its GPU from the
job, which is a device failure, not a link one). The failed fabric keeps the
device numbering of the intact one, so the two runs compare pair by pair.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from topogen.util.errors import InputError, Problem, show
from topogen.fabric.model import Fabric
from topogen.fabric.naming import GpuNames, parse_port

PERCENT_RE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*%?\s*", re.ASCII)
MAX_NAMES = 100_000


@dataclass(frozen=True)
class Failure:
    """What fails: named devices and cable ends, and a random share of switch-to-switch cables."""

    names: tuple[str, ...] = ()
    random_pct: float = 0.0

    @property
    def label(self) -> str:
        parts = list(self.names[:4]) + ([f"... ({len(self.names)} items)"] if len(self.names) > 4 else [])
        if self.random_pct:
            parts.append(f"random {self.random_pct:g}% of switch cables")
        return ", ".join(parts) or "none"

    def __bool__(self) -> bool:
        return bool(self.names) or self.random_pct > 0


def parse(fail: str | None, fail_random: str | None) -> Failure:
    """``--fail`` and ``--fail-random`` to a Failure; InputError naming the field when malformed."""
    problems = []
    names: tuple[str, ...] = ()
    if fail is not None:
        names = tuple(x.strip() for x in fail.split(",") if x.strip())
        if not names:
            problems.append(Problem("fail", "--fail names no device or cable", "e.g. --fail spine-3 or --fail leaf-g0-r0:p33"))
        elif len(names) > MAX_NAMES:
            problems.append(Problem("fail", f"--fail names {len(names):,} items, more than {MAX_NAMES:,}", "use --fail-random for a large share"))
    pct = 0.0
    if fail_random is not None:
        m = PERCENT_RE.fullmatch(fail_random) if len(fail_random) < 40 else None
        pct = float(m.group(1)) if m else -1.0
        if not 0 <= pct <= 100:
            problems.append(Problem("fail_random", f"--fail-random must be a percentage from 0 to 100, got {show(fail_random)}", "e.g. --fail-random 1%"))
    if problems:
        raise InputError(problems)
    return Failure(names, pct)


def unknown(fabric: Fabric, failure: Failure) -> list[str]:
    """The named items that are not devices or cabled ports of ``fabric``."""
    missing = []
    for item in failure.names:
        try:
            apply(fabric, Failure((item,)))
        except InputError:
            missing.append(item)
    return missing


def check(fabrics: list[Fabric], failure: Failure) -> dict[str, list[str]]:
    """Per architecture, the items it lacks; InputError for items no fabric has (or malformed in every one)."""
    lacking = {f.arch: unknown(f, failure) for f in fabrics}
    nowhere = [x for x in failure.names if all(x in v for v in lacking.values())]
    if nowhere:
        problems = []
        for x in nowhere:
            for f in fabrics:
                try:
                    apply(f, Failure((x,)))
                except InputError as exc:
                    problems.append(exc.problems[0])
                    break
        raise InputError(problems)
    return lacking


def apply(fabric: Fabric, failure: Failure, key: int = 0, skip: tuple[str, ...] = ()) -> Fabric:
    """The fabric without the failed cables (InputError naming every unknown device or port not in ``skip``).

    A leaf pair's ISLs are cables like the others (:meth:`Fabric.cable_table`):
    a leaf taken out takes its ISLs, ``leaf-a:p65`` names one, and
    ``--fail-random`` draws from them with the switch-to-switch cables.
    """
    L = fabric.cable_table()
    C0 = len(fabric.links)
    n = fabric.gpus
    keep = np.ones(len(L), bool)
    ids = {s.name: n + i for i, s in enumerate(fabric.switches)}
    gn = GpuNames.of(fabric.spec)
    problems = []
    for item in failure.names:
        if item in skip:
            continue
        dev_name, sep, port_name = item.rpartition(":") if ":" in item else (item, "", "")
        dev = ids.get(dev_name)
        if dev is None:
            dev = gn.parse(dev_name)
        if dev is None:
            problems.append(Problem("fail", f"{show(item)}: no device {show(dev_name)} in the {fabric.arch} fabric", f"name a switch or GPU as in cabling.csv ({fabric.switches[0].name}, {gn.name(0)}), optionally :port ({fabric.switches[0].name}:p1)" if fabric.spec.naming is not None else "name a switch or GPU as in cabling.csv (leaf-g0-r0, spine-3, hb00-gpu0), optionally :port (leaf-g0-r0:p33)"))
            continue
        hit = (L.a_dev == dev) | (L.z_dev == dev)
        if sep:
            p = parse_port(port_name)
            if p is None or (p[0] == "nic") != (dev < n):
                problems.append(Problem("fail", f"{show(item)}: {show(port_name)} is not a port name of {dev_name}", "GPU ports are nic0, nic1...; switch ports p1, p2..."))
                continue
            hit = ((L.a_dev == dev) & (L.a_port == p[1])) | ((L.z_dev == dev) & (L.z_port == p[1]))
            if not hit.any():
                problems.append(Problem("fail", f"{show(item)}: no cable on {dev_name} port {port_name}", "name a cabled port (see cabling.csv)"))
                continue
        keep &= ~hit
    if problems:
        raise InputError(problems)
    if failure.random_pct:
        inter = np.flatnonzero(L.a_dev >= n)
        take = int(round(len(inter) * failure.random_pct / 100))
        gone = np.random.default_rng(key).choice(inter, size=take, replace=False) if take else np.zeros(0, np.int64)
        keep[gone] = False
    return replace(fabric, links=fabric.links.take(keep[:C0]), isls=fabric.isls.take(keep[C0:]))
