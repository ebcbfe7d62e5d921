"""Racks on the floor and devices in racks: every device gets a rack and a U position.

The plan (all numpy, one array per field over device ids: GPUs ``0..N-1``,
then switches):

* **Compute racks** hold ``gpus_per_rack`` consecutive GPUs (whole HB domains
  or whole nodes), ``racks_per_row`` to a row (default: a square hall), in HB-domain order. Trays of
  ``gpus_per_tray`` GPUs stack from ``first_u`` up, ``tray_u`` each; a
  rack-scale domain keeps ``hb_switch_u`` in the middle for its NVLink switch
  trays.
* **Top of rack**: a leaf whose GPUs all stand in one compute rack sits in
  that rack above its trays when there is room (a one-rack cluster; copper
  within reach).
* **Leaf racks** stand in the compute rows (``leaf_racks``: ``middle`` or
  ``end`` of the row): a leaf goes to the row where the GPUs it serves stand
  (the mean row of its GPU cables), so GPU–leaf cables stay in the row, as in
  a DGX SuperPOD scalable unit. Every row keeps the same number of leaf-rack
  slots, so columns line up across rows.
* **Spines, cores and above** fill network racks in their own rows, tier by
  tier, placed in the ``middle`` of the hall (between the compute rows) or at
  its ``end``.
* Racks are named TIA-606 style by row letter and position: ``A01``,
  ``B12``, ``AA03``; a switch takes ``switch_u`` rack units from ``first_u``
  up, ``switches_per_rack`` to a rack.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from topogen.fabric.model import Fabric
from topogen.spec.layout import LayoutSpec, racks_per_row
from topogen.spec.naming import check_limits, duplicate_problem
from topogen.util.errors import InputError, Problem

U_M = 0.04445  # one rack unit in metres


@dataclass
class Racks:
    """Every rack: its name, kind (``compute``, ``leaf``, ``spine``...), row and column (0-based)."""

    name: list[str]
    kind: list[str]
    row: np.ndarray
    col: np.ndarray

    def __len__(self) -> int:
        return len(self.name)


@dataclass
class Placement:
    """Where every device stands: rack index, lowest U, height in U (arrays over device ids)."""

    racks: Racks
    rack: np.ndarray
    u: np.ndarray
    height_u: np.ndarray


def row_name(row: int) -> str:
    """``A``..``Z``, then ``AA``, ``AB``... (spreadsheet style)."""
    s = ""
    row += 1
    while row:
        row, r = divmod(row - 1, 26)
        s = chr(65 + r) + s
    return s


def rack_names(rows: np.ndarray, cols: np.ndarray, cw: int, naming=None, first: int = 0) -> list[str]:
    """Names of racks at ``rows``, ``cols`` (0-based): ``<row letter><position>`` (``A01``), or the spec's ``naming.rack``.

    ``first``: the index of the first of them among all racks (``{index}``). A template
    giving two racks one name, or a name NetBox cannot hold, raises :class:`InputError`.
    """
    t = naming.other("rack") if naming is not None else None
    if t is None:
        return [f"{row_name(r)}{c + 1:0{cw}d}" for r, c in zip(rows.tolist(), cols.tolist())]
    rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
    names = t.many({"row": rows, "col": cols, "index": first + np.arange(len(rows))}, len(rows))
    problems: list[Problem] = []
    check_limits(t, names, "gpu", problems)
    dup = duplicate_problem(t, names, lambda i: f"the rack in row {int(rows[i])}, position {int(cols[i])}")
    if dup is not None and not problems:
        problems.append(dup)
    if problems:
        raise InputError(problems)
    return names.tolist()


def place(fabric: Fabric, lay: LayoutSpec) -> Placement:
    """Racks and U positions for every device of ``fabric`` (``lay`` resolved, see :func:`params.resolve`)."""
    n = fabric.gpus
    sw = fabric.switches
    S = len(sw)
    tiers = fabric.switch_tiers().astype(np.int64)
    spr = lay.switches_per_rack

    # compute racks
    per_rack, tray = lay.gpus_per_rack, lay.gpus_per_tray
    gpu = np.arange(n, dtype=np.int64)
    crack = gpu // per_rack
    ncompute = int(-(-n // per_rack))
    rpr = racks_per_row(lay, ncompute)
    trays = per_rack // tray
    t = (gpu % per_rack) // tray
    gpu_u = lay.first_u + t * lay.tray_u + np.where(t >= -(-trays // 2), lay.hb_switch_u, 0)
    crow = np.arange(ncompute) // rpr
    cpos = np.arange(ncompute) % rpr
    compute_rows = int(crow.max()) + 1 if ncompute else 0

    # leaves: the row of the GPUs they serve
    L = fabric.links
    leaf_ids = np.flatnonzero(tiers == 1)
    g1 = L.tier == 1
    z1 = L.z_dev[g1] - n
    rows_sum = np.bincount(z1, weights=crow[crack[L.a_dev[g1]]], minlength=S)
    rows_cnt = np.bincount(z1, minlength=S)
    home = np.zeros(S, dtype=np.int64)
    served = rows_cnt > 0
    home[served] = np.floor(rows_sum[served] / rows_cnt[served] + 0.5).astype(np.int64)
    home = np.minimum(home, max(compute_rows - 1, 0))
    # top of rack: a leaf whose GPUs all stand in one compute rack goes into that rack when it has room
    lo = np.full(S, ncompute, dtype=np.int64)
    hi = np.full(S, -1, dtype=np.int64)
    np.minimum.at(lo, z1, crack[L.a_dev[g1]])
    np.maximum.at(hi, z1, crack[L.a_dev[g1]])
    top = int(gpu_u.max()) + lay.tray_u if n else lay.first_u  # first free U above the trays
    room = max(0, (lay.rack_u - top + 1) // lay.switch_u)
    tor_cand = leaf_ids[(lo[leaf_ids] == hi[leaf_ids])]
    tor_rack = lo[tor_cand]
    o = np.lexsort((tor_cand, tor_rack))
    tor_cand, tor_rack = tor_cand[o], tor_rack[o]
    slot = np.arange(len(tor_cand)) - np.searchsorted(tor_rack, tor_rack, side="left")
    fits = slot < room
    tor_ids, tor_rack, tor_slot = tor_cand[fits], tor_rack[fits], slot[fits]
    leaf_ids = np.setdiff1d(leaf_ids, tor_ids)
    lrow = home[leaf_ids]
    order = np.lexsort((leaf_ids, lrow))  # by row, then switch order
    leaf_sorted = leaf_ids[order]
    row_sorted = lrow[order]
    first_in_row = np.searchsorted(row_sorted, row_sorted, side="left")
    idx_in_row = np.arange(len(leaf_sorted)) - first_in_row
    per_row = np.bincount(row_sorted, minlength=max(compute_rows, 1))
    slots = int(-(-per_row.max() // spr)) if len(leaf_sorted) else 0  # leaf racks per row
    in_row = np.bincount(crow, minlength=max(compute_rows, 1))  # compute racks per row (the last may be short)
    mids = in_row // 2 if lay.leaf_racks == "middle" else in_row
    mid_of = mids[crow]
    ccol = np.where(cpos < mid_of, cpos, cpos + slots)

    # network rows for tier >= 2
    upper = np.flatnonzero(tiers >= 2)
    upper = upper[np.lexsort((upper, tiers[upper]))]
    nracks_up = int(-(-len(upper) // spr))
    width = rpr + slots
    net_rows = int(-(-nracks_up // width)) if nracks_up else 0
    split = compute_rows // 2 if lay.network_rows == "middle" else compute_rows

    def floor_row(r):
        return np.where(r < split, r, r + net_rows)

    names: list[str] = []
    kinds: list[str] = []
    rrow: list[np.ndarray] = []
    rcol: list[np.ndarray] = []
    # compute racks: 0 .. ncompute-1
    rrow.append(floor_row(crow))
    rcol.append(ccol)
    kinds += ["compute"] * ncompute
    # leaf racks: per compute row, `slots` racks (only those used)
    leaf_rack_of = np.zeros(len(leaf_sorted), dtype=np.int64)
    base = ncompute
    lr_rows, lr_cols = [], []
    for r in range(compute_rows):
        used = int(-(-per_row[r] // spr)) if r < len(per_row) else 0
        sel = row_sorted == r
        leaf_rack_of[sel] = base + idx_in_row[sel] // spr
        lr_rows += [r] * used
        lr_cols += [int(mids[r]) + j for j in range(used)]
        base += used
    rrow.append(floor_row(np.asarray(lr_rows, dtype=np.int64)))
    rcol.append(np.asarray(lr_cols, dtype=np.int64))
    kinds += ["leaf"] * len(lr_rows)
    # network racks of the upper tiers
    up_rack = base + np.arange(len(upper)) // spr
    nr = np.arange(nracks_up)
    rrow.append(split + nr // width)
    rcol.append(nr % width)
    first_sw = upper[np.arange(nracks_up) * spr] if nracks_up else upper[:0]
    kinds += [sw[i].role for i in first_sw.tolist()]
    rows = np.concatenate(rrow).astype(np.int64)
    cols = np.concatenate(rcol).astype(np.int64)
    cw = len(str(int(cols.max()) + 1)) if len(cols) else 2
    cw = max(cw, 2)
    names = rack_names(rows, cols, cw, fabric.spec.naming)

    rack = np.empty(n + S, dtype=np.int32)
    u = np.empty(n + S, dtype=np.int16)
    height = np.empty(n + S, dtype=np.int16)
    rack[:n] = crack
    u[:n] = gpu_u
    height[:n] = lay.tray_u
    rack[n + leaf_sorted] = leaf_rack_of
    u[n + leaf_sorted] = lay.first_u + (idx_in_row % spr) * lay.switch_u
    rack[n + tor_ids] = tor_rack
    u[n + tor_ids] = top + tor_slot * lay.switch_u
    rack[n + upper] = up_rack
    u[n + upper] = lay.first_u + (np.arange(len(upper)) % spr) * lay.switch_u
    height[n:] = lay.switch_u
    return Placement(Racks(names, kinds, rows, cols), rack, u, height)


def row_folder(row: int, rows: int) -> str:
    """The folder of a row's sheets: ``row-01`` (1-based, padded to the row count's width)."""
    return f"row-{row + 1:0{max(2, len(str(rows)))}d}"
