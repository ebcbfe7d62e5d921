"""Switch ports as the switch model's own operating system names them, one table per fabric.

topogen numbers a switch's ports ``1 .. n`` (its down ports, then its uplinks;
:meth:`topogen.fabric.model.Fabric.switch_ports`). On the floor and in every
config a port has its model's name, chosen by the switch's catalog entry
(the SKU of its tier, :meth:`topogen.spec.catalog.Catalog.switch_at`):

* ``sonic`` (the SKU's first ``nos``): ``Ethernet<lane>``, the cage's first
  SerDes lane (8 lanes a cage, OSFP / QSFP-DD); leg ``j`` of a cage split ``k``
  ways starts at lane ``8c + j·8/k``;
* ``cumulus``: ``swp<cage>``, a leg of a split cage ``swp<cage>s<j>``;
* ``eos``: ``Ethernet<cage>/<lane>``, lane ``1`` for an unsplit cage and
  ``1 + j·8/k`` for a leg (``Ethernet1/1``, ``Ethernet1/5``);
* ``mlnx-os`` (InfiniBand, NVIDIA Quantum): ``<cage>/<port>`` as MLNX-OS and the
  front panel label them (``1/1``, ``1/2`` for the two ports of cage 1 of a
  QM9700), a split port ``<cage>/<port>/<split>``; ibnetdiscover numbers the
  same ports ``1 .. n`` (topogen's index, kept in its files);
* a SKU that states no ``nos`` (the ``paper`` catalog's generic switch; an
  Arista one is ``eos``), a
  modular chassis (more than :data:`MAX_FIXED_CAGES` cages) and a fabric
  without a catalog keep topogen's ``p<n>``.

Cages: the down ports fill cages ``1 ..`` at the port mode's ``per_cage`` for
the tier's down speed; the uplinks fill the next cages at the per-cage count
of the same box run at the uplink speed. Every exporter reads the names
through :func:`topogen.fabric.view.view`, so a port is the same string in
every file; :meth:`SwitchPorts.index` reads any of them (and ``p<n>``) back.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from topogen.spec.catalog import Catalog, load_catalog
from topogen.fabric.model import Fabric
from topogen.util.errors import InputError

LANES = 8  # electrical lanes of a cage (OSFP / QSFP-DD)
MAX_FIXED_CAGES = 64  # the most cages of a fixed switch (64 OSFP); more is a modular chassis
SCHEMES = ("p", "sonic", "cumulus", "eos", "mlnx-os")
GENERIC = "p"
INDEX_RE = re.compile(r"p([1-9][0-9]{0,8})", re.ASCII)


def names(scheme: str, cage: np.ndarray, leg: np.ndarray, legs: np.ndarray, phys: int = 1) -> np.ndarray:
    """Port names of ``scheme`` for 0-based ``cage`` and ``leg`` of cages split ``legs`` ways (object array).

    ``phys``: physical ports of an InfiniBand cage (2 on a QM9700's twin-port
    OSFP), so a cage split 4 ways is two ports split two ways each.
    """
    cage = np.asarray(cage, np.int64)
    leg = np.asarray(leg, np.int64)
    legs = np.asarray(legs, np.int64)
    c1 = (cage + 1).astype(str).astype(object)
    if scheme == "sonic":
        return "Ethernet" + (LANES * cage + leg * (LANES // legs)).astype(str).astype(object)
    if scheme == "cumulus":
        return np.where(legs > 1, "swp" + c1 + "s" + leg.astype(str).astype(object), "swp" + c1)
    if scheme == "eos":
        return "Ethernet" + c1 + "/" + (leg * (LANES // legs) + 1).astype(str).astype(object)
    if scheme == "mlnx-os":
        per = np.maximum(legs // max(1, phys), 1)  # splits of one physical port
        port = (leg // per + 1).astype(str).astype(object)
        split = (leg % per + 1).astype(str).astype(object)
        return np.where(per > 1, c1 + "/" + port + "/" + split, c1 + "/" + port)
    raise ValueError(f"unknown port naming scheme {scheme!r}")


def scheme_of(sku) -> str:
    """The naming scheme of a catalog switch SKU: InfiniBand's, else its first stated Ethernet NOS, else ``p``."""
    if sku is None:
        return GENERIC
    if sku.infiniband:
        return "mlnx-os"
    if sku.nos is not None:
        return next((x for x in sku.nos if x in SCHEMES), GENERIC)
    return "eos" if sku.manufacturer.lower() == "arista" else GENERIC  # as the AVD inputs take an unstated Arista box


@dataclass(frozen=True)
class SwitchPorts:
    """Every switch port's name: ``table[base[switch] + port]`` (``port`` 1-based; entry 0 of a block unused).

    Switches of one tier share one block of names (a *class*); ``cage``,
    ``leg`` and ``legs`` are 0-based cage, leg, and legs of the cage per entry
    of ``table``, for the renderings that need lanes (SONiC ``lanes``,
    ``BREAKOUT_CFG``). ``scheme`` per class.
    """

    table: np.ndarray
    base: np.ndarray  # per switch: offset of its class's block in table
    klass: np.ndarray  # per switch: its class
    scheme: tuple[str, ...]  # per class
    cage: np.ndarray
    leg: np.ndarray
    legs: np.ndarray
    speed: np.ndarray  # per entry: Gb/s
    size: tuple[int, ...] = ()  # per class: its ports (entries 1 .. size of its block)

    @property
    def native(self) -> bool:
        """Some switch has a model's own names (not ``p<n>``)."""
        return any(s != GENERIC for s in self.scheme)

    def of(self, switch: np.ndarray, port: np.ndarray) -> np.ndarray:
        """Names of ports ``port`` of switches ``switch`` (0-based switch indexes)."""
        return self.table[self.base[switch] + port]

    def codes(self, switch: np.ndarray, port: np.ndarray) -> np.ndarray:
        """Indexes into ``table`` (and ``cage``, ``leg``...) of ports of switches."""
        return self.base[switch] + port

    @functools.cached_property
    def aliases(self) -> list[dict[str, int]]:
        """Per class: every text that names a port (its name, ``p<n>``; a generic switch's ``swp<n>``, ``Eth1/<n>``) -> the port."""
        out = []
        starts = sorted(set(self.base.tolist())) + [len(self.table)]
        for k in range(len(self.scheme)):
            b = starts[k]
            block = self.table[b : starts[k + 1]].tolist()
            d = {f"p{i}": i for i in range(1, len(block))}
            if self.scheme[k] == GENERIC:  # the short forms LLDP shows of a generic switch's ports
                for i in range(1, len(block)):
                    d.setdefault(f"swp{i}", i)
                    d.setdefault(f"Eth1/{i}", i)
                    d.setdefault(f"Ethernet1/{i}", i)
            d.update({name: i for i, name in enumerate(block) if i})
            out.append(d)
        return out

    def index(self, switch: int, text: str) -> int | None:
        """The 1-based port of switch ``switch`` named ``text`` (its native name or ``p<n>``); None if it has none."""
        if not 0 <= switch < len(self.klass):
            return None
        return self.aliases[int(self.klass[switch])].get(text)

    def at(self, switch: int, port: int) -> str:
        """The name of port ``port`` of switch ``switch`` (one end, for messages); ``p<port>`` past the switch's ports."""
        if 0 <= switch < len(self.klass) and 0 < port <= self.size[int(self.klass[switch])]:
            return str(self.table[int(self.base[switch]) + port])
        return f"p{port}"

    def example(self, switch: int) -> str:
        """The first port names of ``switch``, for messages: ``Ethernet0, Ethernet4...`` (``p1, p2...`` for a generic switch)."""
        if not 0 <= switch < len(self.klass):
            return "p1, p2..."
        b = int(self.base[switch])
        return ", ".join(str(x) for x in self.table[b + 1 : b + 3].tolist()) + "..."

    def name(self, switch: int, text: str) -> str | None:
        """The name this table gives the port of ``switch`` read as ``text`` (native, ``p<n>``...); None if no such port."""
        i = self.index(switch, text)
        return None if i is None else str(self.table[self.base[switch] + i])


def catalog_of(spec) -> Catalog | None:
    """The catalog ``spec`` names (loaded once per process), None when it names none loadable."""
    ref = getattr(spec, "catalog_ref", None)
    if not ref:
        return None
    try:
        return _load(ref)
    except InputError:  # the build checked it; a fabric read from elsewhere may name none loadable
        return None


_LOADED: dict[str, Catalog] = {}  # catalog ref -> the catalog the pipeline loaded (or this module did), once per process


def use_catalog(ref: str, hw: Catalog) -> None:
    """Remember the catalog a build loaded for ``ref``, so naming its ports never parses the file again (workers fork with it)."""
    if len(_LOADED) >= 8:
        _LOADED.clear()
    _LOADED[ref] = hw


def _load(ref: str) -> Catalog:
    hw = _LOADED.get(ref)
    if hw is None:
        hw = load_catalog(ref)
        use_catalog(ref, hw)
    return hw


def generic(spec) -> bool:
    """Every compute switch of ``spec``'s catalog keeps topogen's ``p<n>`` (no catalog: so too)."""
    hw = catalog_of(spec)
    return hw is None or all(scheme_of(s) == GENERIC for s in hw.switches if s.compute)


def switch_ports(fabric: Fabric, hw: Catalog | None = None) -> SwitchPorts:
    """The port names of every switch of ``fabric`` (see the module docstring), from its catalog."""
    hw = hw if hw is not None else catalog_of(fabric.spec)
    sw = fabric.switches
    n = len(sw)
    tier = np.fromiter((s.tier for s in sw), np.int64, n)
    down = np.fromiter((s.down_ports for s in sw), np.int64, n)
    ports = fabric.switch_ports() if n else np.zeros(0, np.int64)
    radix = np.fromiter((s.radix for s in sw), np.int64, n)
    top = int(tier.max()) if n else 0
    spec = fabric.spec
    speed_at = getattr(spec, "speed_at", lambda t: spec.link_speed)
    key = np.stack([tier, down, np.maximum(ports, radix)], axis=1) if n else np.zeros((0, 3), np.int64)
    uniq, klass = np.unique(key, axis=0, return_inverse=True) if n else (np.zeros((0, 3), np.int64), np.zeros(0, np.int64))
    klass = klass.reshape(-1)
    tables, cages, legs_l, leg_l, speeds, schemes, bases = [], [], [], [], [], [], []
    at = 0
    for t, d, size in uniq.tolist():
        hit = hw.switch_at(spec, t, top) if hw is not None else None
        sku, mode = hit if hit is not None else (None, None)
        scheme = scheme_of(sku)
        down_speed, up_speed = speed_at(t), speed_at(t + 1)
        dl = max(1, int(mode.per_cage)) if mode is not None else 1
        cages_n = (mode.radix // dl) if mode is not None and mode.radix is not None else None
        if cages_n is not None and cages_n > MAX_FIXED_CAGES:
            scheme = GENERIC  # a modular chassis: card/port names topogen does not model
        um = sku.cage_mode(up_speed, cages_n) if sku is not None and t < top else None
        ul = max(1, int(um.per_cage)) if um is not None else dl
        p0 = np.arange(size, dtype=np.int64)  # port p0 + 1
        above = p0 >= d
        lg = np.where(above, ul, dl)
        first_up = -(-d // dl)
        cage = np.where(above, first_up + (p0 - d) // ul, p0 // dl)
        leg = np.where(above, (p0 - d) % ul, p0 % dl)
        phys = min((m.per_cage for m in sku.ports), default=1) if sku is not None else 1
        text = names(scheme, cage, leg, lg, phys) if scheme != GENERIC else np.array([f"p{i}" for i in range(1, size + 1)], dtype=object)
        tables.append(np.concatenate([np.array(["p0"], dtype=object), text]))
        cages.append(np.concatenate([[0], cage]))
        leg_l.append(np.concatenate([[0], leg]))
        legs_l.append(np.concatenate([[1], lg]))
        speeds.append(np.concatenate([[down_speed], np.where(above, up_speed, down_speed)]))
        schemes.append(scheme)
        bases.append(at)
        at += size + 1
    if not tables:
        empty = np.zeros(0, np.int64)
        return SwitchPorts(np.array(["p0"], dtype=object), empty, empty, (), empty, empty, empty, empty, ())
    base = np.asarray(bases, np.int64)[klass]
    return SwitchPorts(np.concatenate(tables), base, klass.astype(np.int64), tuple(schemes), np.concatenate(cages).astype(np.int64), np.concatenate(leg_l).astype(np.int64), np.concatenate(legs_l).astype(np.int64), np.concatenate(speeds).astype(np.int64), tuple(int(x) for x in uniq[:, 2].tolist()))
