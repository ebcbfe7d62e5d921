"""A director: a switch of more than 254 ports, as an InfiniBand fabric shows it.

InfiniBand port numbers are 8 bits (1..254 usable, 255 reserved), so a modular
chassis with more ports (a *director*) is not one node to the fabric:
``ibnetdiscover`` lists its switch ASICs, line-card (leaf) ASICs that carry
the front-panel ports and fabric (spine) ASICs that join them, each named
after the chassis (NVIDIA CS7500: ``MF0;<host>:CS7500/L05/U1``,
``.../S03/U1``). topogen lays out a director of ``P`` ports as a
non-blocking 2-tier Clos of 64-port ASICs (Quantum-2 class):

- ``H = 32``: ports 1..32 of a leaf ASIC are external, 33..64 internal.
- ``L = ceil(P / 32)`` leaf ASICs. Chassis port ``p`` (``p<p>``, from 1) is
  port ``(p - 1) % 32 + 1`` of leaf ``(p - 1) // 32`` (from 0). Every leaf
  has 32 internal links; the last carries ``P - 32(L - 1)`` external ports
  (32 when 32 divides P): internal >= external on every leaf, non-blocking.
- ``m``, the largest power of two with ``L·m <= 64`` (1 when ``L > 64``):
  each leaf joins every spine with ``m`` links, so there are ``S = 32 / m``
  spine ASICs of ``L·m`` ports. Leaf ``i``'s internal port ``33 + j`` goes
  to spine ``j // m``, port ``i·m + j % m + 1``.
- Counts: ``L + S`` ASICs and ``32·L`` internal links. 576 ports: 18
  leaves, 16 spines of 36 ports, 576 internal links; 288 ports: 9 leaves, 8
  spines of 36; 4,096 ports: 128 leaves, 32 spines of 128. A spine reaches
  every leaf, so the layout holds at most ``32 · 254 = 8,128`` ports (specs
  allow radix 4,096).
- Node descriptions ``<chassis>/L<nn>/U1`` and ``<chassis>/S<nn>/U1``
  (``nn`` from 01, two digits, three past 99): the chassis name is the part
  before the first ``/`` (topogen's device names hold none). A real
  director's ``MF0;<host>:<model>/L05/U1`` is not read as one: its port
  numbering is the vendor's, not this layout's.

The ASICs are numbered within a chassis: leaves ``0..L-1``, then spines
``L..L+S-1``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

MAX_PORTS = 254  # the most ports one InfiniBand node can number (port 255 is reserved)
H = 32  # external (= internal) ports of a leaf ASIC
ASIC_PORTS = 2 * H
MAX_DIRECTOR_PORTS = H * MAX_PORTS
NAME_RE = re.compile(r"^(?P<chassis>[^\s/;:]+)/(?P<kind>[LS])(?P<no>[0-9]{2,3})/U1$", re.ASCII)


@dataclass(frozen=True, slots=True)
class Shape:
    """The ASICs of a director of ``ports`` external ports (see the module docstring)."""

    ports: int
    leaves: int
    per_pair: int  # m: links between each leaf and each spine

    @property
    def spines(self) -> int:
        return H // self.per_pair

    @property
    def spine_ports(self) -> int:
        return self.leaves * self.per_pair

    @property
    def asics(self) -> int:
        return self.leaves + self.spines

    @property
    def internal_links(self) -> int:
        return H * self.leaves

    def asic_ports(self) -> np.ndarray:
        """Ports of each ASIC, leaves then spines."""
        return np.r_[np.full(self.leaves, ASIC_PORTS, np.int64), np.full(self.spines, self.spine_ports, np.int64)]

    def internal(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The internal links, leaf by leaf: (leaf, leaf port, spine ASIC, spine port); ASICs numbered in the chassis."""
        leaf, j = np.divmod(np.arange(self.internal_links, dtype=np.int64), H)
        spine, k = np.divmod(j, self.per_pair)
        return leaf, j + H + 1, self.leaves + spine, leaf * self.per_pair + k + 1

    def names(self, chassis: str) -> list[str]:
        """Node descriptions of the ASICs, leaves then spines."""
        w = max(2, len(str(max(self.leaves, self.spines))))
        return [f"{chassis}/L{i:0{w}d}/U1" for i in range(1, self.leaves + 1)] + [f"{chassis}/S{i:0{w}d}/U1" for i in range(1, self.spines + 1)]


def shape(ports: int) -> Shape:
    """The layout of a director of ``ports`` external ports (more than 254, at most 8,128)."""
    if not MAX_PORTS < ports <= MAX_DIRECTOR_PORTS:
        raise ValueError(f"a director has {MAX_PORTS + 1} to {MAX_DIRECTOR_PORTS} ports, not {ports}")
    leaves = -(-ports // H)
    m = 1
    while m < H and leaves * m * 2 <= ASIC_PORTS:
        m *= 2
    return Shape(ports, leaves, m)


def external(port: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(leaf ASIC, its port) of chassis ports ``port`` (from 1)."""
    leaf, j = np.divmod(np.asarray(port, np.int64) - 1, H)
    return leaf, j + 1


def parse(name: str) -> tuple[str, str, int] | None:
    """(chassis, ``L`` or ``S``, number from 1) of a director ASIC's node description; None for any other name."""
    m = NAME_RE.match(name)
    return (m.group("chassis"), m.group("kind"), int(m.group("no"))) if m else None


def port_name(asic: tuple[str, str, int], port: int) -> tuple[str, bool]:
    """Chassis port name of port ``port`` of ASIC ``asic`` (from :func:`parse`), and whether it is internal.

    A leaf's external port is the chassis port ``p<n>`` it maps to; a leaf's
    internal port or any spine port is ``L<nn>/p<k>`` or ``S<nn>/p<k>``
    (internal: cabled only inside the chassis).
    """
    _, kind, no = asic
    if kind == "L" and 1 <= port <= H and no >= 1:
        return f"p{(no - 1) * H + port}", False
    return f"{kind}{no:02d}/p{port}", True
