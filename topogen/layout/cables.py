"""Cable lengths: a routed path per cable, rounded up to a length that is sold.

A cable between two racks runs up from its port to the overhead tray
(``tray_height_m`` less the port's height), along the tray as the Manhattan
distance between the two rack positions, and down again; inside one rack it
runs vertically between the two U positions. Every cable gets ``slack_m`` for
its service loop. The routed length is rounded up to the next length in
``lengths_m``; beyond the longest it is rounded up to whole tens of metres
(a custom length, which the build notes).
"""

from __future__ import annotations

import numpy as np

from topogen.fabric.model import Fabric
from topogen.layout.floor import U_M, Placement
from topogen.spec.layout import LayoutSpec


def routed_m(fabric: Fabric, lay: LayoutSpec, p: Placement) -> np.ndarray:
    """Routed length in metres of every cable (float64, one per row of ``fabric.cable_table()``: the links, then a leaf pair's ISLs)."""
    L = fabric.cable_table()
    ra, rz = p.rack[L.a_dev], p.rack[L.z_dev]
    ha = (p.u[L.a_dev].astype(np.float64) - 0.5 + p.height_u[L.a_dev] / 2) * U_M  # port at mid-height of the device
    hz = (p.u[L.z_dev].astype(np.float64) - 0.5 + p.height_u[L.z_dev] / 2) * U_M
    return route_m(lay, p.racks.row, p.racks.col, ra, rz, ha, hz)


def route_m(lay: LayoutSpec, row: np.ndarray, col: np.ndarray, ra: np.ndarray, rz: np.ndarray, ha: np.ndarray, hz: np.ndarray) -> np.ndarray:
    """Routed metres between racks ``ra`` and ``rz`` (indexes into ``row``/``col``) from port heights ``ha``, ``hz`` (metres)."""
    x = (col.astype(np.float64) + 0.5) * lay.rack_width_m
    y = row.astype(np.float64) * lay.row_pitch_m
    same = ra == rz
    flat = np.abs(x[ra] - x[rz]) + np.abs(y[ra] - y[rz])
    up = (lay.tray_height_m - ha) + (lay.tray_height_m - hz)
    return np.where(same, np.abs(ha - hz), flat + up) + lay.slack_m


def sold_m(routed: np.ndarray, lengths: tuple[float, ...]) -> np.ndarray:
    """Each routed length rounded up to the next sold length (whole tens of metres beyond the longest)."""
    sizes = np.asarray(lengths, dtype=np.float64)
    idx = np.searchsorted(sizes, routed - 1e-9, side="left")
    beyond = idx >= len(sizes)
    out = sizes[np.minimum(idx, len(sizes) - 1)]
    return np.where(beyond, np.ceil(routed / 10.0) * 10.0, out)
