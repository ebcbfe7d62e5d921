"""As-built wiring: what a fabric reports about itself, read into one shape and compared with the plan.

Readers, one module per source format, each returning a :class:`Found`:

* :mod:`.ibnetdiscover`: InfiniBand ``ibnetdiscover`` output (or the plan's
  ``.topo`` files, which use the same format);
* :mod:`.lldp`: ``lldpctl -f json`` neighbour output, one file per device;
* :mod:`.cabling`: a cabling CSV (topogen's ``cabling.csv``, edited or recorded on the floor).

:mod:`.diff` compares a plan with what was found. Device names are as read
(node descriptions, LLDP system names, CSV device columns); ports are
topogen's port names (``p<n>`` on switches, ``nic<plane>`` on GPUs) where the
reader can tell. :mod:`.identity` then matches what was read to the plan's
devices (GUIDs, LLDP chassis IDs, a ``--names`` map, the wiring itself).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple


class End(NamedTuple):
    """One end of a cable: device name and port name (``p3``, ``nic0``); a tuple, so hashing is C-fast."""

    device: str
    port: str

    def __str__(self) -> str:
        return f"{self.device}:{self.port}"


class Cable(NamedTuple):
    """A cable as a reader saw it: two ends, where it was read (``file line 12``) and its speeds.

    ``speeds`` are the Gb/s of the a and z ports as read (a cabling CSV's
    ``a_speed_gbps``/``z_speed_gbps``, ibnetdiscover's link rate at both ends);
    0 where the source does not say. Cables are compared by :meth:`key` (their
    ends), never as whole tuples.
    """

    a: End
    z: End
    where: str
    speeds: tuple[int, int] = (0, 0)

    def key(self) -> tuple[End, End]:
        """The cable without orientation: its ends in sorted order."""
        return (self.a, self.z) if self.a <= self.z else (self.z, self.a)


@dataclass
class Found:
    """Every cable read from one or more files of one format."""

    kind: str  # "ibnetdiscover", "lldp" or "cabling"
    sources: list[str]
    cables: list[Cable] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)  # device as read -> what identifies it ("guid 0x...", "chassis mac ...")
    port_ids: dict[End, str] = field(default_factory=dict)  # end as read -> its port GUID ("guid 0x...")
    duplicates: list[tuple[Cable, Cable]] = field(default_factory=list)  # (first record, its repeat) within one file
    duplicate_count: int = 0  # every repeated record (duplicates keeps the first few)
    local: set[str] | None = None  # devices whose every cable the source lists (LLDP: the files' own devices)
    hosts: dict[End, End] = field(default_factory=dict)  # LLDP: a GPU end read as host + interface -> that end as read (a plan's naming: reads it again)
