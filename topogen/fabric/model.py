"""The fabric model: devices and cables of one architecture, stored column-wise.

A :class:`Fabric` is what the generators (:mod:`topogen.fabric.clos`) produce and what
every later phase (validation, BOM, exports) reads. It is designed for clusters
of a million GPUs, so nothing here holds one Python object per GPU or per cable:

* **Device ids.** GPUs are ``0 .. N-1`` (``gpu = domain * K + rank``). Switches
  follow, ``N .. N + S - 1``; ``fabric.switches[i]`` describes device ``N + i``.
* **Links** live in a :class:`LinkTable`, one numpy column per field, one row
  per cable. The ``a`` end is always the lower device (GPU or lower-tier
  switch), the ``z`` end the upper switch. ``tier`` numbers *links*: 1 for
  GPU–leaf, 2 for leaf–spine, 3 for spine–core, and so on.
* **Ports.** A GPU's NIC port number is its plane (``nic0``, ``nic1``...).
  Switch ports are 1-based (``p1 .. p<radix>``; with uplinks faster than the
  downlinks, the down ports then one per uplink, :meth:`Fabric.switch_ports`). Below the top tier a switch
  uses ports ``1 .. radix/2`` for downlinks and ``radix/2 + 1 .. radix`` for
  uplinks; top-tier switches use every port for downlinks.

Names are deterministic and documented in :mod:`topogen.fabric.naming`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from topogen.spec.counts import tier_role

ARCHES = ("rail-optimized", "rail-only")
CHUNK = 65536  # rows per streamed chunk when exporters format names and lines

@dataclass(frozen=True, slots=True)
class Switch:
    """One switch of a fabric.

    Attributes:
        name: unique device name (see :mod:`topogen.fabric.naming`).
        tier: 1 for leaves (rail switches), 2 for spines, 3 for cores...
        plane: network plane (0-based); planes are independent copies.
        rails: the rails whose traffic this switch carries. A rail-only switch
            carries one rail (or several whole rails when ``rail_packing`` is
            ``shared``); a rail-optimized leaf carries its rail(s); rail-optimized
            spines and cores carry every rail and list them all as ``()``.
        group: index of the Clos this switch belongs to: the rail (or first rail
            of a shared switch) in rail-only, 0 in rail-optimized.
        block: index of the switch's block within its tier (its pod); leaves of
            a rail-optimized fabric use the HB-domain group here.
        radix: ports on the switch.
        down_ports: ports reserved for downlinks (radix/2 below the top tier,
            radix at the top tier).
    """

    name: str
    tier: int
    plane: int
    rails: tuple[int, ...]
    group: int
    block: int
    radix: int
    down_ports: int

    @property
    def role(self) -> str:
        return tier_role(self.tier)


LINK_COLUMNS = ("a_dev", "a_port", "z_dev", "z_port", "tier", "plane", "a_speed", "z_speed")
_DTYPES = {
    "a_dev": np.int64,
    "a_port": np.int32,
    "z_dev": np.int64,
    "z_port": np.int32,
    "tier": np.int8,
    "plane": np.int8,
    "a_speed": np.int32,
    "z_speed": np.int32,
}


@dataclass(slots=True)
class LinkTable:
    """Every cable of a fabric, one numpy column per field (same length each).

    Columns: ``a_dev``/``z_dev`` device ids (lower end, upper end), ``a_port``/
    ``z_port`` port numbers (GPU NIC index or 1-based switch port), ``tier``
    (link tier, 1 = GPU–leaf), ``plane``, ``a_speed``/``z_speed`` in Gb/s at
    each end (equal in a generated fabric; a hand-edited cabling file may
    disagree, which the validator reports).
    """

    a_dev: np.ndarray
    a_port: np.ndarray
    z_dev: np.ndarray
    z_port: np.ndarray
    tier: np.ndarray
    plane: np.ndarray
    a_speed: np.ndarray
    z_speed: np.ndarray

    def __len__(self) -> int:
        return int(self.a_dev.shape[0])

    @classmethod
    def from_columns(cls, **cols) -> "LinkTable":
        """Build a table from array-likes, casting each column to its dtype."""
        missing = [c for c in LINK_COLUMNS if c not in cols]
        if missing:
            raise ValueError(f"missing link columns: {missing}")
        arrays = {c: np.ascontiguousarray(cols[c], dtype=_DTYPES[c]) for c in LINK_COLUMNS}
        n = {a.shape[0] for a in arrays.values()}
        if len(n) > 1:
            raise ValueError(f"link columns differ in length: {sorted(n)}")
        return cls(**arrays)

    @classmethod
    def concat(cls, tables: list["LinkTable"]) -> "LinkTable":
        if not tables:
            return cls.from_columns(**{c: () for c in LINK_COLUMNS})
        return cls(**{c: np.concatenate([getattr(t, c) for t in tables]) for c in LINK_COLUMNS})

    def take(self, index: np.ndarray) -> "LinkTable":
        """Rows selected by an index or boolean mask, as a new table."""
        return LinkTable(**{c: getattr(self, c)[index] for c in LINK_COLUMNS})


@dataclass(slots=True)
class Fabric:
    """One architecture's explicit wiring for a spec.

    Attributes:
        spec: the resolved :class:`topogen.spec.Spec`.
        arch: ``"rail-optimized"`` or ``"rail-only"``.
        tiers: number of switch tiers (the largest over all rails).
        switches: switch ``i`` is device ``gpus + i``.
        links: every cable (see :class:`LinkTable`).
        notes: plain-language statements about choices made (rail packing...).
        reserved: ``(switch index, first port, last port)`` of the leaf ports kept
            free for management or fabric-manager links (``reserved_leaf_ports``).
        isls: the inter-switch links of a leaf pair (``design: leaf-pair``,
            :mod:`topogen.fabric.leafpair`): cables between two leaves of one tier,
            ``a`` the A leaf, ``z`` its B partner, ``tier`` 1. Empty in a Clos. They are
            not in ``links``, whose every row joins a lower device to an upper one.
    """

    spec: object
    arch: str
    tiers: int
    switches: list[Switch]
    links: LinkTable
    notes: list[str] = field(default_factory=list)
    reserved: tuple[tuple[int, int, int], ...] = ()
    isls: LinkTable = field(default_factory=lambda: LinkTable.concat([]))

    @property
    def gpus(self) -> int:
        return self.spec.gpus

    @property
    def hb_domain(self) -> int:
        return self.spec.hb_domain

    @property
    def num_devices(self) -> int:
        return self.gpus + len(self.switches)

    def switch(self, dev: int) -> Switch:
        return self.switches[dev - self.gpus]

    def is_gpu(self, dev: int) -> bool:
        return 0 <= dev < self.gpus

    def switch_tiers(self) -> np.ndarray:
        """Tier of every switch, as an array indexed by ``dev - gpus``."""
        return np.fromiter((s.tier for s in self.switches), dtype=np.int8, count=len(self.switches))

    def switches_per_tier(self) -> list[int]:
        counts = np.bincount(self.switch_tiers(), minlength=self.tiers + 1)
        return [int(c) for c in counts[1 : self.tiers + 1]]

    def links_per_tier(self) -> list[int]:
        counts = np.bincount(self.links.tier, minlength=self.tiers + 1)
        return [int(c) for c in counts[1 : self.tiers + 1]]

    @property
    def cables(self) -> int:
        """Every cable of the fabric: the links and the inter-switch links."""
        return len(self.links) + len(self.isls)

    def cable_table(self) -> LinkTable:
        """Every cable as one table: the links (cable ids ``1 .. len(links)``), then the ISLs.

        Exporters that list every cable (cabling.csv, NetBox, topology.json...) read
        this; a row at or past ``len(links)`` is an ISL (link name
        :data:`topogen.fabric.naming.ISL_LINK`, tier 1). Without ISLs it is ``links`` itself.
        """
        return self.links if not len(self.isls) else LinkTable.concat([self.links, self.isls])

    def ports_used(self) -> np.ndarray:
        """Ports in use on each switch, indexed by ``dev - gpus``.

        Ports count at the switch's downlink speed: an uplink ``f`` times faster
        takes ``f`` of them (``spec.shape.factor``; 1 at one speed throughout).
        """
        n = len(self.switches)
        used = np.bincount(self.links.z_dev - self.gpus, minlength=n)
        up = np.bincount(self.links.a_dev[self.links.a_dev >= self.gpus] - self.gpus, minlength=n)
        shape = getattr(self.spec, "shape", None)
        if shape is not None and shape.speeds:
            f = np.asarray([shape.factor(j) for j in range(self.tiers + 2)], np.int64)
            up = up * f[self.switch_tiers()]
        used[: n] += up
        if len(self.isls):
            used += np.bincount(self.isls.a_dev - self.gpus, minlength=n) + np.bincount(self.isls.z_dev - self.gpus, minlength=n)
        return used

    def switch_ports(self) -> np.ndarray:
        """Interfaces of each switch (indexed by ``dev - gpus``): its down ports, then one per uplink.

        At one speed that is the radix. An uplink ``f`` times faster than the downlinks
        takes ``f`` of the radix's ports (``spec.shape.factor``): a 128-port leaf at 200G
        with 64 down has 32 x 400G uplinks, so 96 interfaces, ``p1-p64`` and ``p65-p96``.
        """
        sw = self.switches
        radix = np.fromiter((s.radix for s in sw), np.int64, len(sw))
        shape = getattr(self.spec, "shape", None)
        if shape is None or not shape.speeds or not len(sw):
            return radix
        down = np.fromiter((s.down_ports for s in sw), np.int64, len(sw))
        f = np.asarray([shape.factor(j) for j in range(self.tiers + 2)], np.int64)
        return down + (radix - down) // f[self.switch_tiers()]

    def unused_switch_ports(self) -> int:
        total = sum(s.radix for s in self.switches)
        return int(total - self.ports_used().sum())
