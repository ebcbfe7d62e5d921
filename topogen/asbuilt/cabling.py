"""Cables of a plan or a cabling CSV as :class:`Found`: from a generated fabric or a ``cabling.csv``.

A CSV is read by :mod:`topogen.asbuilt.wiring` (the same reader ``topogen validate``
uses), so any file it accepts works here: topogen's own ``cabling.csv``, with
or without the floor columns, edited by hand or filled in on the floor.
"""

from __future__ import annotations

from pathlib import Path

from topogen.asbuilt import Cable, End, Found, wiring
from topogen.fabric.graph import edge_columns
from topogen.fabric.model import Fabric


def from_fabric(fabric: Fabric, source: str = "plan") -> Found:
    """Every cable of a generated fabric, named as in cabling.csv (``where``: ``cable <id>``)."""
    found = Found("plan", [source])
    for c in edge_columns(fabric):
        found.cables.extend(
            Cable(End(s, ap), End(t, zp), f"cable {k}")
            for k, s, t, ap, zp in zip(c["key"], c["source"], c["target"], c["a_port"], c["z_port"])
        )
    return found


def read(path: Path) -> Found:
    """A cabling CSV (InputError naming the line when malformed)."""
    raw = wiring.read(Path(path))
    found = Found("cabling", [str(path)])
    fmt = raw.loc_fmt
    found.cables.extend(
        Cable(End(a, ap), End(z, zp), f"{Path(path).name} {fmt.format(loc)} (cable {cid})")
        for a, ap, z, zp, loc, cid in zip(raw.a_dev, raw.a_port, raw.z_dev, raw.z_port, raw.loc, raw.cable)
    )
    return found
