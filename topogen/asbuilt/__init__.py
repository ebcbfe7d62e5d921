"""As-built wiring: what a fabric reports about itself, read into one shape and compared with the plan.

Readers, one module per source format, each returning a :class:`Found`:

* :mod:`.ibnetdiscover`: InfiniBand ``ibnetdiscover`` output (or the plan's
  ``.topo`` files, which use the same format);
* :mod:`.lldp`: ``lldpctl -f json`` neighbour output, one file per device;
* :mod:`.cabling`: a cabling CSV (topogen's ``cabling.csv``, edited or recorded on the floor).

:mod:`.diff` compares a plan with what was found. Device names are topogen's
(node descriptions, LLDP system names, CSV device columns); ports are
topogen's port names (``p<n>`` on switches, ``nic<plane>`` on GPUs).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class End:
    """One end of a cable: device name and port name (``p3``, ``nic0``)."""

    device: str
    port: str

    def __str__(self) -> str:
        return f"{self.device}:{self.port}"


@dataclass(frozen=True, slots=True)
class Cable:
    """A cable as a reader saw it: two ends and where it was read (``file line 12``)."""

    a: End
    z: End
    where: str

    def key(self) -> tuple[End, End]:
        """The cable without orientation: its ends in sorted order."""
        return (self.a, self.z) if (self.a.device, self.a.port) <= (self.z.device, self.z.port) else (self.z, self.a)


@dataclass
class Found:
    """Every cable read from one or more files of one format."""

    kind: str  # "ibnetdiscover", "lldp" or "cabling"
    sources: list[str]
    cables: list[Cable] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
