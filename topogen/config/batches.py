"""Switches in batches of about :data:`~topogen.model.CHUNK` switch-side ends, so column-wise renderers hold one batch at a time.

A renderer that formats every port of every switch at once holds the whole
fabric's text in memory (1.7 GB for the SONiC files of 131,072 GPUs); one
batch at a time it stays vectorised and its memory bounded.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator

import numpy as np

from topogen.config.addressing import Ends
from topogen.config.ports import PortNames
from topogen.fabric.model import CHUNK

ROWS = CHUNK  # switch-side ends per batch (about)


@dataclass(frozen=True, slots=True)
class Batch:
    """Switches ``first .. stop - 1``: their ends (``switch`` and ``offsets`` counted from ``first``), port names, and their rows in the whole :class:`Ends`."""

    first: int
    stop: int
    ends: Ends
    ports: PortNames
    rows: slice


def batches(e: Ends, pn: PortNames, rows: int | None = None) -> Iterator[Batch]:
    """Consecutive switches whose ends add up to about ``rows`` (:data:`ROWS`; at least one switch a batch)."""
    rows = rows or ROWS
    nsw = len(e.offsets) - 1
    first = 0
    while first < nsw:
        stop = int(np.searchsorted(e.offsets, e.offsets[first] + rows, side="right")) - 1
        stop = min(max(stop, first + 1), nsw)
        a, b = int(e.offsets[first]), int(e.offsets[stop])
        cut = {f: getattr(e, f)[a:b] for f in ("port", "addr", "plen", "peer", "peer_port", "peer_addr", "peer_asn", "vrf", "rail", "link", "up")}
        ends = replace(e, switch=e.switch[a:b] - first, offsets=e.offsets[first : stop + 1] - a, **cut)
        yield Batch(first, stop, ends, PortNames(pn.cage[a:b], pn.leg[a:b], pn.legs[a:b], pn.speed[a:b], None if pn.cable_m is None else pn.cable_m[a:b]), slice(a, b))
        first = stop
