"""The fabric prepared for checking: numpy columns derived once, names for messages, the finding sink."""

from __future__ import annotations

from functools import cached_property
from typing import Callable, Iterable

import numpy as np

from topogen.checks.findings import MAX_PER_CHECK, Finding, Labels, Ordinal, Report
from topogen.fabric.model import Fabric
from topogen.fabric.naming import GpuNames
from topogen.fabric.ports import SwitchPorts, switch_ports
from topogen.spec.counts import tier_role


def _frozen(x: np.ndarray) -> np.ndarray:
    """A read-only view of ``x``: a check that wrote into it would raise, never edit the fabric."""
    v = x.view()
    v.flags.writeable = False
    return v


def pair_partners(fabric: Fabric) -> np.ndarray:
    """Each switch's leaf-pair partner (switch index; -1: none): the leaf an ISL of the design may join it to.

    Only a rail-optimized ``design: leaf-pair`` has ISLs: per plane ``leaf-a`` and
    ``leaf-b`` are switches ``2p`` and ``2p + 1`` (:mod:`topogen.fabric.leafpair`). A
    rail-only pair has none (its rails meet in the HB domain), so a cable there
    between two leaves is a cable within a tier.
    """
    S = len(fabric.switches)
    out = np.full(S, -1, np.int64)
    if fabric.spec.design == "leaf-pair" and fabric.arch != "rail-only":
        s = np.arange(S - S % 2)
        out[s] = s ^ 1
    return out


class Wire:
    """Columns derived once from a fabric, plus the finding sink with per-check caps.

    The raw link columns (``a``, ``z``, ``ap``, ``zp``, speeds) serve the
    hygiene check, which must see every cable as written. :meth:`orient` then
    adds the view of the good cables (``valid`` ends, not self-links) that the
    later checks share, lower-tier end first.
    """

    # set by orient(): one entry per good cable
    gi: np.ndarray  # index of the cable in the link table
    lo: np.ndarray  # lower-tier end (a GPU is tier 0)
    hi: np.ndarray  # upper-tier end
    lo_port: np.ndarray
    hi_port: np.ndarray
    lo_t: np.ndarray
    hi_t: np.ndarray
    speed: np.ndarray  # the slower end's speed
    adj: np.ndarray  # joins adjacent tiers, or is an ISL (the one same-tier cable a design has)
    isl: np.ndarray  # an inter-switch link: the two leaves of one pair (design: leaf-pair)
    plane: np.ndarray  # the switch end's plane (a GPU-GPU cable: the NIC index)
    sw_cables: np.ndarray  # good cables ending on each switch

    def __init__(self, fabric: Fabric, labels: Labels | None, report: Report):
        self.fabric = fabric
        self.spec = spec = fabric.spec
        self.report = report
        self.rail_only = fabric.arch == "rail-only"
        self.n = n = fabric.gpus
        self.K = spec.hb_domain
        self.planes = spec.planes
        self.homes = spec.homes  # leaves a GPU reaches per plane (2: dual-homed)
        self.nics = spec.planes * spec.homes  # NIC ports per GPU: nic<i> is in plane i // homes
        self.S = S = len(fabric.switches)
        self.ndev = n + S
        sw = fabric.switches
        self.sw_names = [s.name for s in sw]
        self.sw_tier = np.fromiter((s.tier for s in sw), np.int64, S)
        self.sw_plane = np.fromiter((s.plane for s in sw), np.int32, S)
        self.sw_radix = np.fromiter((s.radix for s in sw), np.int64, S)
        self.sw_down = np.fromiter((s.down_ports for s in sw), np.int64, S)
        self.sw_ports = fabric.switch_ports()  # interfaces: the radix, less what faster uplinks take beyond one port each
        self.sw_nrails = np.fromiter((len(s.rails) for s in sw), np.int64, S)
        lo = [s.rails[0] if s.rails else 0 for s in sw]
        hi = [s.rails[-1] if s.rails else self.K - 1 for s in sw]
        self.sw_rail_lo = np.asarray(lo, np.int64)
        self.sw_rail_hi = np.asarray(hi, np.int64)
        self.sw_rail_contig = np.fromiter((not s.rails or tuple(s.rails) == tuple(range(s.rails[0], s.rails[-1] + 1)) for s in sw), bool, S)
        self.dev_tier = np.concatenate([np.zeros(n, np.int8), self.sw_tier.astype(np.int8)])  # tiers fit a byte
        self.gpu_names = GpuNames.of(fabric.spec)
        L = fabric.cable_table()  # the links, then a leaf pair's ISLs: every cable is checked
        self.L = L
        self.partner = pair_partners(fabric)  # a leaf's pair partner (switch index; -1: none)
        # the link table's own columns, not copies (device ids int64; ports and speeds int32)
        self.a = np.asarray(L.a_dev, np.int64)
        self.z = np.asarray(L.z_dev, np.int64)
        self.ap = L.a_port
        self.zp = L.z_port
        self.a_speed = L.a_speed
        self.z_speed = L.z_speed
        self.labels = labels or Labels(Ordinal())  # a generated fabric: link i is cable i + 1
        self.valid = (self.a >= 0) & (self.a < self.ndev) & (self.z >= 0) & (self.z < self.ndev)
        self.good = self.valid & (self.a != self.z)
        self.counts: dict[str, int] = {}

    def orient(self) -> None:
        """Orient every good cable by tier: ``lo`` = lower-tier end (GPU tier 0).

        A generated fabric's cables are all good and already run from the lower
        tier up: the oriented columns are then read-only views of the link
        table's own (no copy: 28 bytes a cable less at any scale).
        """
        if self.good.all():
            ta, tz = self.dev_tier[self.a], self.dev_tier[self.z]
            if not (ta > tz).any():
                ix = np.int32 if len(self.a) < 2**31 else np.int64
                self.gi = np.arange(len(self.a), dtype=ix)
                self.lo, self.hi, self.lo_port, self.hi_port = (_frozen(x) for x in (self.a, self.z, self.ap, self.zp))
                self.lo_t, self.hi_t = ta, tz
                self.speed = _frozen(self.a_speed) if np.array_equal(self.a_speed, self.z_speed) else np.minimum(self.a_speed, self.z_speed)
                self._derived()
                return
        i = np.flatnonzero(self.good)
        ta, tz = self.dev_tier[self.a[i]], self.dev_tier[self.z[i]]
        swap = ta > tz
        self.gi = i
        self.lo = np.where(swap, self.z[i], self.a[i])
        self.hi = np.where(swap, self.a[i], self.z[i])
        self.lo_port = np.where(swap, self.zp[i], self.ap[i])
        self.hi_port = np.where(swap, self.ap[i], self.zp[i])
        self.lo_t = np.minimum(ta, tz)
        self.hi_t = np.maximum(ta, tz)
        self.speed = np.minimum(self.a_speed[i], self.z_speed[i])
        self._derived()

    def _derived(self) -> None:
        """Columns of the oriented cables: adjacent tiers, plane, cables per switch."""
        n = self.n
        if (self.partner >= 0).any():
            self.isl = (self.lo >= n) & (self.hi >= n)
            self.isl &= self.partner[np.maximum(self.lo - n, 0)] == self.hi - n
        else:  # a Clos: no cable is an ISL (no pass over the cables)
            self.isl = np.zeros(len(self.lo), bool)
        self.adj = (self.hi_t == self.lo_t + 1) | self.isl
        self.plane = np.where(self.hi >= n, self.sw_plane[np.maximum(self.hi - n, 0)] if self.S else 0, self.lo_port // self.homes).astype(np.int32)
        self.sw_cables = np.bincount(np.concatenate([self.lo[self.lo >= n], self.hi[self.hi >= n]]) - n, minlength=self.S)

    # names ----------------------------------------------------------------------------

    def name(self, dev: int) -> str:
        dev = int(dev)
        if 0 <= dev < self.n:
            return self.gpu_names.name(dev)
        if self.n <= dev < self.ndev:
            return self.sw_names[dev - self.n]
        return f"<device {dev}>"

    def port(self, dev: int, port: int) -> str:
        """``<device>:<port>``: ``nic<plane>`` at a GPU, the switch's own port name (:mod:`topogen.fabric.ports`) at a switch."""
        dev, port = int(dev), int(port)
        p = f"nic{port}" if 0 <= dev < self.n else self.native.at(dev - self.n, port)
        return f"{self.name(dev)}:{p}"

    @cached_property
    def native(self) -> SwitchPorts:
        return switch_ports(self.fabric)

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

    def oriented(self, j: int) -> tuple[int, int, int, str, str]:
        """Oriented cable ``j``: its link index, lower and upper device, and their port names."""
        lo, hi = int(self.lo[j]), int(self.hi[j])
        return int(self.gi[j]), lo, hi, self.port(lo, self.lo_port[j]), self.port(hi, self.hi_port[j])

    # findings -------------------------------------------------------------------------

    def _suppress(self, check: str, severity: str, k: int) -> None:
        """Count ``k`` more findings of ``check`` that are not listed."""
        _sev, m = self.report.suppressed.get(check, (severity, 0))
        self.report.suppressed[check] = (severity, m + k)

    def _admit(self, check: str, severity: str) -> bool:
        """Count one finding of ``check``; False (and counted as not listed) past the cap."""
        n = self.counts.get(check, 0) + 1
        self.counts[check] = n
        if n > MAX_PER_CHECK:
            self._suppress(check, severity, 1)
            return False
        return True

    def add(self, check: str, severity: str, devices, ports, message: str, hint: str = "", cables=()) -> None:
        if self._admit(check, severity):
            cab = tuple(int(self.labels.cable[i]) for i in cables)
            self.report.findings.append(Finding(check, severity, tuple(devices), tuple(ports), message, hint, cab))

    def add_findings(self, found: Iterable[Finding]) -> None:
        """Take findings made elsewhere (the file reader), under the same caps."""
        for f in found:
            if self._admit(f.check, f.severity):
                self.report.findings.append(f)

    def want(self, check: str) -> bool:
        """False once a check has listed its maximum: callers skip building messages."""
        return self.counts.get(check, 0) < MAX_PER_CHECK

    def add_many(self, check: str, severity: str, idx: np.ndarray, make: Callable) -> None:
        """Call ``make(i)`` -> (devices, ports, message, hint, cables) for the first rows; count the rest."""
        for j, i in enumerate(idx):
            if not self.want(check):
                rest = len(idx) - j
                self._suppress(check, severity, rest)
                self.counts[check] = self.counts.get(check, 0) + rest
                return
            d, p, msg, hint, cab = make(int(i))
            self.add(check, severity, d, p, msg, hint, cab)
