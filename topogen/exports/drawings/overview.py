"""Aggregated views of a fabric for diagrams: tiers, groups, pods and rails as counted boxes.

A diagram of a 65,536-GPU fabric cannot draw every cable, so the overview draws
*boxes* (a group of HB domains, a leaf group, a spine pod, a rail's tier...) and
*bundles* (every cable between two boxes, with its count and the links per
device at each end). This module computes that as plain data, a :class:`View`;
:mod:`topogen.exports.drawings.diagrams` only renders it. Everything is derived from the
explicit wiring with numpy (one pass of sorts over the link columns), never from
a Python loop over links, and never from the closed-form counts, so a diagram
shows what was really built.

Rows are numbered by tier: 0 for GPUs, ``j`` for switch tier ``j`` (-1 for the
HB-domain row of the rail-only view). A row or a set of rail columns with more
than :data:`ROW_MAX` members keeps the first :data:`HEAD` and the last
:data:`TAIL` and folds the rest into one "…" box, so every picture stays within
a slide's width whatever the cluster size. Views cover plane 0: the planes of a
multi-plane fabric are identical copies and the title says how many there are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from topogen.fabric.model import Fabric
from topogen.fabric.naming import ISL_LINK, GpuNames
from topogen.spec import leafpair
from topogen.spec.counts import tier_role
from topogen.spec.units import port_budget

ROW_MAX = 8
HEAD = 2
TAIL = 1
RAIL_GPU_MAX = 16  # a rail view draws its GPUs one by one up to this many, else per leaf
MORE = "…"
ARCH_TITLES = {"rail-optimized": "rail-optimized any-to-any Clos", "rail-only": "rail-only"}


@dataclass(frozen=True, slots=True)
class Box:
    """One box of a view: a device, or a counted aggregate of devices.

    Attributes:
        id: DOT node id, unique in the view, deterministic.
        row: 0 for GPUs, ``j`` for switch tier ``j``, -1 for HB domains.
        kind: ``gpu``, ``hb``, a switch role (``leaf``, ``spine``...) or ``more``
            for a box that stands for the members a row leaves out.
        title: first (bold) line.
        lines: further lines.
        devices: devices (GPUs or switches) the box stands for.
        cluster: id of the :attr:`View.clusters` entry drawn around it, or "".
    """

    id: str
    row: int
    kind: str
    title: str
    lines: tuple[str, ...]
    devices: int
    cluster: str = ""


@dataclass(frozen=True, slots=True)
class Bundle:
    """All cables between two boxes (lower box first), or an NVLink membership (tier 0)."""

    lower: str
    upper: str
    tier: int
    links: int
    lines: tuple[str, ...]
    link: str = ""  # the link name when not a tier's up-link: ISL_LINK for a leaf pair's ISLs (drawn across, between the two leaves)


@dataclass(slots=True)
class View:
    """A picture as data: boxes in row order (left to right), bundles, row and cluster labels."""

    title: str
    subtitle: tuple[str, ...]
    boxes: list[Box] = field(default_factory=list)
    bundles: list[Bundle] = field(default_factory=list)
    rows: dict[int, tuple[str, ...]] = field(default_factory=dict)
    clusters: dict[str, tuple[str, ...]] = field(default_factory=dict)


# --- numbers and words ---------------------------------------------------------------


def num(n: int) -> str:
    return f"{int(n):,}"


def plural(role: str, n: int) -> str:
    """``1 leaf``, ``8 leaves``, ``32 spines``, ``4 GPUs``, ``2 tier4 switches``."""
    word = {"leaf": ("leaf", "leaves"), "gpu": ("GPU", "GPUs"), "hb": ("HB domain", "HB domains")}.get(role)
    if word is None:
        word = (role, role + "s") if not role.startswith("tier") else (f"{role} switch", f"{role} switches")
    return f"{num(n)} {word[0] if n == 1 else word[1]}"


def span(lo: int, hi: int, width: int = 0) -> str:
    """``3`` or ``0–31`` (en dash), zero-padded to ``width``."""
    return f"{lo:0{width}d}" if lo == hi else f"{lo:0{width}d}–{hi:0{width}d}"


def spread(lo: int, hi: int) -> str:
    return num(lo) if lo == hi else f"{num(lo)}–{num(hi)}"


def fold(n: int, max_shown: int = ROW_MAX) -> np.ndarray:
    """Display slot of each of ``n`` ordered members: all of them, or HEAD, one "…" slot, TAIL.

    With folding, slot ``HEAD`` is the "…" box.
    """
    idx = np.arange(n, dtype=np.int64)
    if n <= max_shown:
        return idx
    return np.where(idx < HEAD, idx, np.where(idx >= n - TAIL, idx - (n - TAIL) + HEAD + 1, HEAD))


def folded(n: int, max_shown: int = ROW_MAX) -> bool:
    return n > max_shown


# --- bundles ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairStats:
    """Cables between two boxes: how many, and how they spread over the devices at each end."""

    lower: int
    upper: int
    tier: int
    links: int
    lower_devices: int
    upper_devices: int
    per_lower: tuple[int, int]
    per_upper: tuple[int, int]
    parallel: tuple[int, int]


def _spread_by(pair: np.ndarray, member: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair (in sorted pair order): distinct members, min and max rows per member.

    ``member`` values lie in ``0 .. size-1``; one sort of ``pair * size + member``.
    """
    if (int(pair.max()) + 1) * size >= 2**62:  # keys would overflow int64: renumber members first
        _, member = np.unique(member, return_inverse=True)
        size = int(member.max()) + 1
    keys, cnt = np.unique(pair * size + member, return_counts=True)
    p = keys // size
    starts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
    return np.diff(np.r_[starts, len(p)]), np.minimum.reduceat(cnt, starts), np.maximum.reduceat(cnt, starts)


def bundle_stats(fabric: Fabric, box_of: np.ndarray) -> list[PairStats]:
    """Aggregate every cable whose two ends both belong to a box (``box_of[dev] >= 0``).

    ``box_of`` maps each device id to a box index (-1: not drawn). A few sorts of
    the link columns, so a 10^6-GPU fabric takes seconds, not minutes.
    """
    L = fabric.links
    ba, bz = box_of[L.a_dev], box_of[L.z_dev]
    keep = (ba >= 0) & (bz >= 0)
    if not keep.any():
        return []
    a, z, ba, bz, tier = L.a_dev[keep], L.z_dev[keep], ba[keep], bz[keep], L.tier[keep]
    nb = int(box_of.max()) + 1
    D = fabric.num_devices
    pair = ba * nb + bz
    links = np.bincount(pair, minlength=nb * nb)
    upair = np.flatnonzero(links)
    pair_tier = np.zeros(nb * nb, np.int64)
    pair_tier[pair] = tier  # every cable between two boxes has the same tier
    n_lo, lo_min, lo_max = _spread_by(pair, a, D)
    n_hi, hi_min, hi_max = _spread_by(pair, z, D)
    _, par_min, par_max = _spread_by(pair, a * D + z, D * D)
    out = []
    for i, p in enumerate(upair.tolist()):
        out.append(
            PairStats(
                lower=p // nb,
                upper=p % nb,
                tier=int(pair_tier[p]),
                links=int(links[p]),
                lower_devices=int(n_lo[i]),
                upper_devices=int(n_hi[i]),
                per_lower=(int(lo_min[i]), int(lo_max[i])),
                per_upper=(int(hi_min[i]), int(hi_max[i])),
                parallel=(int(par_min[i]), int(par_max[i])),
            )
        )
    return out


def bundle_lines(st: PairStats, speed: int, lower_role: str, upper_role: str, per: int = 1) -> tuple[str, ...]:
    """Edge label: cable count, links per device at each end, parallel links per device pair.

    ``per`` > 1 divides the count to show it "per rail" for a box standing for ``per`` rails.
    """
    head = f"{num(st.links // per)} × {speed}G" + (" per rail" if per > 1 else "")
    lo = "GPU" if lower_role == "gpu" else lower_role
    lines = [head, f"{spread(*st.per_lower)} per {lo} · {spread(*st.per_upper)} per {upper_role}"]
    if st.parallel[1] > 1:
        lines.append(f"{spread(*st.parallel)} parallel per {lo}–{upper_role} pair")
    return tuple(lines)


# --- helpers over device columns -----------------------------------------------------------


def _switch_columns(fabric: Fabric) -> dict[str, np.ndarray]:
    sw = fabric.switches
    n = len(sw)
    return {
        "tier": np.fromiter((s.tier for s in sw), np.int64, n),
        "plane": np.fromiter((s.plane for s in sw), np.int64, n),
        "block": np.fromiter((s.block for s in sw), np.int64, n),
        "rail_lo": np.fromiter((s.rails[0] if s.rails else -1 for s in sw), np.int64, n),
        "rail_hi": np.fromiter((s.rails[-1] if s.rails else -1 for s in sw), np.int64, n),
    }


def _minmax(box: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    lo = np.full(n, np.iinfo(np.int64).max, np.int64)
    hi = np.full(n, np.iinfo(np.int64).min, np.int64)
    np.minimum.at(lo, box, values)
    np.maximum.at(hi, box, values)
    return lo, hi


def _gpu_leaf(fabric: Fabric) -> np.ndarray:
    """The plane-0 leaf (switch index) of every GPU (the lower of a dual-homed pair)."""
    L = fabric.links
    sel = (L.tier == 1) & (L.plane == 0)
    leaf = np.full(fabric.gpus, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(leaf, L.a_dev[sel], L.z_dev[sel] - fabric.gpus)  # dual-homed: the pair's first leaf
    return leaf


def _title(fabric: Fabric, what: str, all_planes: bool = False) -> tuple[str, tuple[str, ...]]:
    """Title and subtitle lines (cluster figures, provenance) of a view of ``fabric``."""
    spec = fabric.spec
    planes = ""
    if spec.planes > 1:
        planes = f" · {spec.planes} planes" if all_planes else f" · plane 0 of {spec.planes} identical planes"
    if spec.homes > 1:
        planes += " · dual-homed (2 NIC ports per plane, on a leaf pair)"
    head = f"{spec.name}: {what}"
    sub = (
        f"{num(spec.gpus)} GPUs in {num(spec.domains)} HB domains of {spec.hb_domain} · radix {spec.radix_text()} · {spec.speeds_text()}G · {fabric.tiers} tier(s){planes}",
        f"generated by {spec.provenance()}",
    )
    return head, sub


def _row_label(role: str, tier: int, devices: int, radix: int, extra: str = "") -> tuple[str, ...]:
    lines = (f"{role} · tier {tier}", f"{plural(role, devices)} × {radix}-port")
    return lines + ((extra,) if extra else ())


# --- rail-optimized ---------------------------------------------------------------------------


def rail_optimized_overview(fabric: Fabric) -> View:
    """Rows GPU → leaf → spine → core: HB-domain groups, leaf groups, pods, the top tier.

    GPUs and leaves are boxed per group of HB domains (the leaves of a group serve
    its rails); tiers between leaf and top per block (pod); the top tier is one
    box. Bundles between boxes carry every cable between them.
    """
    spec = fabric.spec
    N, K = fabric.gpus, fabric.hb_domain
    col = _switch_columns(fabric)
    plane0 = col["plane"] == 0
    title, sub = _title(fabric, f"{ARCH_TITLES[fabric.arch]}, overview")
    view = View(title, sub)
    box_of = np.full(fabric.num_devices, -1, np.int64)
    slot_box: dict[tuple[int, int], int] = {}  # (row, slot) -> box index
    meta: list[tuple[int, int, bool, int]] = []  # per box: row, slot, is_more, hidden members

    def add_row(row: int, members: np.ndarray, dev_ids: np.ndarray) -> None:
        """``members[i]`` is the ordered member of device ``dev_ids[i]``; fold and assign boxes."""
        uniq, inv = np.unique(members, return_inverse=True)
        slots = fold(len(uniq))
        for s in np.unique(slots).tolist():
            slot_box[(row, s)] = len(meta)
            hidden = int((slots == s).sum())
            meta.append((row, s, folded(len(uniq)) and s == HEAD, hidden))
        box_of[dev_ids] = np.array([slot_box[(row, s)] for s in slots.tolist()], np.int64)[inv]

    sw_idx = np.flatnonzero(plane0)
    for j in range(1, fabric.tiers + 1):
        ids = sw_idx[col["tier"][sw_idx] == j]
        add_row(j, col["block"][ids], ids + N)
    leaf = _gpu_leaf(fabric)
    add_row(0, col["block"][leaf], np.arange(N, dtype=np.int64))

    nbox = len(meta)
    dev_count = np.bincount(box_of[box_of >= 0], minlength=nbox)
    gpu_lo, gpu_hi = _minmax(box_of[:N], np.arange(N, dtype=np.int64), nbox)
    swb = box_of[N:][plane0]
    r_lo, _ = _minmax(swb, col["rail_lo"][plane0], nbox)
    _, r_hi = _minmax(swb, col["rail_hi"][plane0], nbox)
    width = col["rail_hi"][plane0] - col["rail_lo"][plane0] + 1
    w_lo, w_hi = _minmax(swb, width, nbox)
    blk_lo, _ = _minmax(swb, col["block"][plane0], nbox)

    dw = len(str(max(spec.domains - 1, 0)))
    t = fabric.tiers
    # the leaves under each pod: their groups and rails
    L = fabric.links
    up = (L.tier == 2) & (L.plane == 0)
    pod_box = box_of[L.z_dev[up]]
    leaf_sw = L.a_dev[up] - N
    pg_lo, pg_hi = _minmax(pod_box, col["block"][leaf_sw], nbox)
    pr_lo, _ = _minmax(pod_box, col["rail_lo"][leaf_sw], nbox)
    _, pr_hi = _minmax(pod_box, col["rail_hi"][leaf_sw], nbox)

    unit = "SU" if spec.scalable_unit else "group"  # with scalable units a leaf group is one SU

    def pod_leaves(b: int) -> str:
        groups = f"{unit} {pg_lo[b]}" if pg_lo[b] == pg_hi[b] else f"{unit}s {pg_lo[b]}–{pg_hi[b]}"
        rails = "" if (pr_lo[b], pr_hi[b]) == (0, K - 1) else f", rails {span(int(pr_lo[b]), int(pr_hi[b]))}"
        return f"leaves of {groups}{rails}"

    for b, (row, s, more, hidden) in enumerate(meta):
        n = int(dev_count[b])
        bid = f"t{row}_{s}" if not more else f"t{row}_more"
        if row == 0:
            d_lo, d_hi = int(gpu_lo[b]) // K, int(gpu_hi[b]) // K
            if more:
                box = Box(bid, 0, "more", f"{MORE} {hidden} more {unit}s", (f"{plural('hb', n // K)} · {plural('gpu', n)}",), n)
            else:
                box = Box(bid, 0, "gpu", f"HB domains {span(d_lo, d_hi, dw)}", (f"{plural('gpu', n)} ({n // K} × {K})",), n)
        else:
            role = tier_role(row)
            what = unit if row == 1 else "pod" if row == 2 else "block"
            if more:
                box = Box(bid, row, "more", f"{MORE} {hidden} more {what}s", (plural(role, n),), n)
            elif row == t:
                box = Box(bid, row, role, f"{role} tier", (plural(role, n),) + _growth(fabric), n)
            elif row == 1:
                rails = f"rails {span(int(r_lo[b]), int(r_hi[b]))}"
                each = "1 rail each" if w_hi[b] == 1 else f"{spread(int(w_lo[b]), int(w_hi[b]))} rails each"
                pairs = f" · {n // 2} pairs" if fabric.spec.homes > 1 else ""  # dual-homed: -a and -b leaves serve the same GPUs
                box = Box(bid, row, role, f"leaf {unit} {int(blk_lo[b])}", (f"{plural(role, n)}{pairs} · {each}", rails), n)
            elif row == 2:
                box = Box(bid, row, role, f"{role} {what} {int(blk_lo[b])}", (plural(role, n), pod_leaves(b)), n)
            else:
                box = Box(bid, row, role, f"{role} {what} {int(blk_lo[b])}", (plural(role, n),), n)
        view.boxes.append(box)

    ids = [bx.id for bx in view.boxes]
    for st in bundle_stats(fabric, box_of):
        lo, hi = meta[st.lower][0], meta[st.upper][0]
        lrole = "gpu" if lo == 0 else tier_role(lo)
        view.bundles.append(Bundle(ids[st.lower], ids[st.upper], st.tier, st.links, bundle_lines(st, spec.speed_at(st.tier), lrole, tier_role(hi))))

    per_row = np.bincount([m[0] for m in meta], weights=dev_count, minlength=t + 1)
    view.rows[0] = ("GPUs", f"{num(N)} · {num(spec.domains)} HB domains × {K}")
    groups = len(np.unique(col["block"][sw_idx[col["tier"][sw_idx] == 1]]))
    for j in range(1, t + 1):
        nblk = len(np.unique(col["block"][sw_idx[col["tier"][sw_idx] == j]]))
        extra = f"in {plural(unit, groups)}" if j == 1 else (f"in {plural('pod' if j == 2 else 'block', nblk)}" if j < t else "")
        view.rows[j] = _row_label(tier_role(j), j, int(per_row[j]), spec.radix_at(j), extra)
    return view


def _growth(fabric: Fabric) -> tuple[str, ...]:
    """The top tier's line when it is sized for more scalable units than are built."""
    u = fabric.spec.units
    if not u.max:
        return ()
    b = port_budget(fabric)
    return (f"sized for {u.max} SUs: {num(b['growth_ports'])} ports for growth",)


# --- rail-only ----------------------------------------------------------------------------------


def _rail_columns(col: dict[str, np.ndarray], sw_idx: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Columns of the rail-only view: one per set of rails sharing switches, ordered by rail.

    Returns (column of each switch in ``sw_idx``, first rail and last rail of each column).
    """
    keys = col["rail_lo"][sw_idx] * (K + 1) + col["rail_hi"][sw_idx]
    uniq, inv = np.unique(keys, return_inverse=True)
    return inv, uniq // (K + 1), uniq % (K + 1)


def rail_only_overview(fabric: Fabric) -> View:
    """Rails as columns, each its own tier stack, standing on the row of HB domains.

    One column per rail (or per set of rails sharing a switch); more than
    :data:`ROW_MAX` columns keep the first two, a "…" column and the last. In a
    column each tier is one box; below, the rail's GPUs (rank r of every HB domain);
    at the bottom the HB domains, through which all cross-rail traffic goes.
    """
    spec = fabric.spec
    N, K, D = fabric.gpus, fabric.hb_domain, spec.domains
    t = fabric.tiers
    col = _switch_columns(fabric)
    sw_idx = np.flatnonzero(col["plane"] == 0)
    title, sub = _title(fabric, "rail-only, overview")
    view = View(title, sub)
    sw_col, c_lo, c_hi = _rail_columns(col, sw_idx, K)
    ncol = len(c_lo)
    slots = fold(ncol)
    nslot = int(slots.max()) + 1
    more_slot = HEAD if folded(ncol) else -1
    rw = len(str(K - 1))

    # box index: slot * (t + 1) + row  (row 0 = GPUs)
    box_of = np.full(fabric.num_devices, -1, np.int64)
    tiers = col["tier"][sw_idx]
    box_of[sw_idx + N] = slots[sw_col] * (t + 1) + tiers
    rank_col = np.empty(K, np.int64)
    for c in range(ncol):
        rank_col[c_lo[c] : c_hi[c] + 1] = c
    gpu = np.arange(N, dtype=np.int64)
    box_of[:N] = slots[rank_col[gpu % K]] * (t + 1)
    nbox = nslot * (t + 1)
    dev_count = np.bincount(box_of[box_of >= 0], minlength=nbox)
    first_sw, _ = _minmax(box_of[sw_idx + N], sw_idx, nbox)  # names a box that holds one switch
    rails_in_slot = np.bincount(slots, weights=c_hi - c_lo + 1, minlength=nslot).astype(np.int64)
    cols_in_slot = np.bincount(slots, minlength=nslot)
    blocks = {}
    for j in range(1, t + 1):
        sel = sw_idx[tiers == j]
        first_col = sel[sw_col[tiers == j] == 0]
        blocks[j] = len(np.unique(col["block"][first_col]))

    ids = {}
    for s in range(nslot):
        c = int(np.flatnonzero(slots == s)[0])
        more = s == more_slot
        cid = f"rail_{s}" if not more else "rail_more"
        nr = int(rails_in_slot[s])
        if more:
            view.clusters[cid] = (f"{MORE} {num(nr)} more rails", f"rails {span(int(c_lo[c]), int(c_hi[c + cols_in_slot[s] - 1]), rw)}")
        elif c_lo[c] == c_hi[c]:
            view.clusters[cid] = (f"rail {int(c_lo[c]):0{rw}d}",)
        else:
            view.clusters[cid] = (f"rails {span(int(c_lo[c]), int(c_hi[c]), rw)}", "sharing switches (VLAN/partition per rail)")
        for row in range(t, -1, -1):
            b = s * (t + 1) + row
            n = int(dev_count[b])
            bid = f"c{s}_t{row}" if not more else f"cmore_t{row}"
            ids[b] = bid
            if row == 0:
                if more:
                    lines = (f"{plural('gpu', n // nr)} per rail", f"{num(n)} in all")
                else:
                    ranks = f"rank {int(c_lo[c])}" if nr == 1 else f"ranks {span(int(c_lo[c]), int(c_hi[c]))}"
                    lines = (plural("gpu", n), f"{ranks} of each HB domain")
                view.boxes.append(Box(bid, 0, "more" if more else "gpu", "GPUs", lines, n, cid))
                continue
            role = tier_role(row)
            ncols = int(cols_in_slot[s])
            per_col = n // ncols
            each = "" if not more else " per rail" if nr == ncols else f" per {nr // ncols} rails"
            lines = [plural(role, per_col) + each if n > 1 or more else fabric.switches[int(first_sw[b])].name]
            if blocks[row] > 1:
                lines.append(f"in {plural('pod' if row == 2 else 'block', blocks[row])}")
            if more:
                lines.append(f"{num(n)} in all")
            view.boxes.append(Box(bid, row, "more" if more else role, role, tuple(lines), n, cid))

    for st in bundle_stats(fabric, box_of):
        s, lo = divmod(st.lower, t + 1)
        hi = st.upper % (t + 1)
        per = int(cols_in_slot[s]) if s == more_slot else 1
        lines = bundle_lines(st, spec.speed_at(st.tier), "gpu" if lo == 0 else tier_role(lo), tier_role(hi), per)
        view.bundles.append(Bundle(ids[st.lower], ids[st.upper], st.tier, st.links, lines))

    # HB domains: a row of aggregated domains under the rails
    dslots = fold(D)
    dw = len(str(max(D - 1, 0)))
    hb_ids = []
    view.clusters["hb"] = (
        "HB domains (NVLink / NVSwitch)",
        "cross-rail traffic: GPU → NVLink → GPU of the destination rail in the same domain → that rail",
    )
    for s in range(int(dslots.max()) + 1):
        members = np.flatnonzero(dslots == s)
        more = folded(D) and s == HEAD
        bid = "hb_more" if more else f"hb_{s}"
        hb_ids.append(bid)
        if more:
            view.boxes.append(Box(bid, -1, "more", f"{MORE} {num(len(members))} more domains", (plural("gpu", len(members) * K),), len(members) * K, "hb"))
        else:
            d = int(members[0])
            view.boxes.append(Box(bid, -1, "hb", f"HB domain {d:0{dw}d}", (f"{plural('gpu', K)}, ranks {span(0, K - 1)}",), K, "hb"))
    mid = hb_ids[len(hb_ids) // 2]
    for s in range(nslot):
        nr = int(rails_in_slot[s])
        what = "1 GPU" if nr == 1 or s == more_slot else f"{nr} GPUs"
        view.bundles.append(Bundle(mid, ids[s * (t + 1)], 0, int(dev_count[s * (t + 1)]), (f"{what} of each domain",)))

    per_row = np.bincount(np.arange(nbox) % (t + 1), weights=dev_count, minlength=t + 1)
    view.rows[-1] = ("HB domains", f"{num(D)} × {K} GPUs")
    view.rows[0] = ("GPUs", f"{num(N)} in {K} rails of {num(N // K)}")
    for j in range(1, t + 1):
        n = int(per_row[j])
        view.rows[j] = _row_label(tier_role(j), j, n, spec.radix_at(j))
    return view


# --- one rail ----------------------------------------------------------------------------------


def rail_view(fabric: Fabric, rail: int = 0) -> View:
    """One rail of a rail-only fabric: its switches one by one and its GPUs.

    GPUs are drawn one by one up to :data:`RAIL_GPU_MAX`, else one box per leaf;
    rows longer than :data:`ROW_MAX` fold their middle into a "…" box. A switch
    shared with other rails says so; only this rail's GPUs are drawn.
    """
    spec = fabric.spec
    N, K = fabric.gpus, fabric.hb_domain
    t = fabric.tiers
    col = _switch_columns(fabric)
    mine = np.flatnonzero((col["plane"] == 0) & (col["rail_lo"] <= rail) & (col["rail_hi"] >= rail))
    gpus = np.arange(rail, N, K, dtype=np.int64)
    title, sub = _title(fabric, f"rail-only, rail {rail}")
    view = View(title, sub)
    box_of = np.full(fabric.num_devices, -1, np.int64)
    meta: list[tuple[int, str]] = []  # per box: row, id
    dw = len(str(max(spec.domains - 1, 0)))

    def new_box(box: Box) -> int:
        view.boxes.append(box)
        meta.append((box.row, box.id))
        return len(meta) - 1

    leaf_slot = np.zeros(0, np.int64)
    for j in range(t, 0, -1):
        ids = mine[col["tier"][mine] == j]
        role = tier_role(j)
        one_by_one = j == 1 or len(ids) <= ROW_MAX
        if one_by_one:
            # leaves always (their GPUs hang below them), folding a long row
            uniq, inv = ids, np.arange(len(ids))
        else:
            # too many to draw one by one: one box per block (pod), like the overview
            uniq, inv = np.unique(col["block"][ids], return_inverse=True)
        slots = fold(len(uniq))
        boxes = []
        for s in range(int(slots.max()) + 1):
            members = ids[slots[inv] == s]
            n = len(members)
            if folded(len(uniq)) and s == HEAD:
                what = "" if one_by_one else (" pods" if j == 2 else " blocks")
                b = new_box(Box(f"t{j}_more", j, "more", f"{MORE} {int((slots == s).sum())} more{what}", (plural(role, n),), n))
            elif not one_by_one:
                blk = int(col["block"][members[0]])
                name = f"{role} tier" if j == t else f"{role} {'pod' if j == 2 else 'block'} {blk}"
                b = new_box(Box(f"t{j}_{s}", j, role, name, (plural(role, n),), n))
            else:
                sw = fabric.switches[int(members[0])]
                lines = [f"{sw.radix}-port"]
                if len(sw.rails) > 1:
                    contiguous = sw.rails[-1] - sw.rails[0] + 1 == len(sw.rails)  # a leaf pair's leaf holds rails A-B-B-A: 0,3,4,7
                    shown = span(sw.rails[0], sw.rails[-1]) if contiguous else ",".join(map(str, sw.rails))
                    lines.append(f"shared by rails {shown} (VLAN/partition)")
                b = new_box(Box(f"t{j}_{s}", j, role, sw.name, tuple(lines), 1))
            boxes.append(b)
        box_of[ids + N] = np.array(boxes, np.int64)[slots[inv]]
        if j == 1:
            leaf_slot = slots

    leaf = _gpu_leaf(fabric)[gpus]
    if len(gpus) <= RAIL_GPU_MAX:
        names = GpuNames.of(fabric.spec)
        for d, g in enumerate(gpus.tolist()):
            box_of[g] = new_box(Box(f"gpu_{d}", 0, "gpu", names.name(g), (f"HB domain {d}, rank {rail}",), 1))
    else:
        leaves = mine[col["tier"][mine] == 1]
        pos = np.searchsorted(leaves, leaf)
        slot = leaf_slot[pos]
        for s in range(int(slot.max()) + 1):
            dom = np.flatnonzero(slot == s)
            n = len(dom)
            if not n:  # a dual-homed pair's second leaf: its GPUs are drawn under the first
                continue
            if folded(len(leaves)) and s == HEAD:
                box = Box("gpu_more", 0, "more", f"{MORE} GPUs of {int(np.unique(pos[dom]).size)} more leaves", (plural("gpu", n),), n)
            else:
                box = Box(f"gpu_{s}", 0, "gpu", plural("gpu", n), (f"HB domains {span(int(dom[0]), int(dom[-1]), dw)}", f"rank {rail}"), n)
            box_of[gpus[dom]] = new_box(box)

    stats = bundle_stats(fabric, box_of)
    single = [st for st in stats if st.lower_devices == 1 and st.upper_devices == 1]
    # a tier whose device-to-device lines all carry the same number of cables says it once, in its row label
    uniform = {}
    for j in {st.tier for st in single}:
        sizes = {st.links for st in stats if st.tier == j}
        if len(sizes) == 1 and all(st.lower_devices == 1 and st.upper_devices == 1 for st in stats if st.tier == j):
            uniform[j] = sizes.pop()
    for st in stats:
        lo, hi = meta[st.lower][0], meta[st.upper][0]
        lrole = "gpu" if lo == 0 else tier_role(lo)
        if st.tier in uniform:
            lines: tuple[str, ...] = ()
        elif st.lower_devices == 1 and st.upper_devices == 1:
            lines = (f"{num(st.links)} × {spec.speed_at(st.tier)}G",)
        else:
            lines = bundle_lines(st, spec.speed_at(st.tier), lrole, tier_role(hi))
        view.bundles.append(Bundle(meta[st.lower][1], meta[st.upper][1], st.tier, st.links, lines))

    tiers_of = col["tier"][mine]

    def each_line(j: int) -> str:
        return f"each line below: {plural('cable', uniform[j])} of {spec.speed_at(j)}G" if j in uniform else ""

    view.rows[0] = ("GPUs", f"{num(len(gpus))} · rank {rail} of each HB domain")
    for j in range(1, t + 1):
        view.rows[j] = _row_label(tier_role(j), j, int((tiers_of == j).sum()), spec.radix_at(j), each_line(j))
    return view


def arch_title(fabric: Fabric) -> str:
    """What a picture calls ``fabric``'s architecture: :data:`ARCH_TITLES`, or the leaf pair's."""
    if fabric.spec.design == "leaf-pair":
        return f"{fabric.arch} leaf pair"
    return ARCH_TITLES[fabric.arch]


def leaf_pair_overview(fabric: Fabric) -> View:
    """``design: leaf-pair``: the two leaves of plane 0, the GPUs on each (by rank), and the ISL bundle between them.

    Both architectures: the GPUs are boxed by leaf (the ranks whose NICs land on
    it, A-B-B-A), inside a frame of every HB domain; rail-optimized adds the
    ISLs as one bundle drawn across, rail-only says that no link joins the pair.
    """
    spec = fabric.spec
    N, K = fabric.gpus, fabric.hb_domain
    col = _switch_columns(fabric)
    leaves = np.flatnonzero((col["plane"] == 0) & (col["tier"] == 1))
    title, sub = _title(fabric, f"{arch_title(fabric)}, overview")
    view = View(title, sub)
    box_of = np.full(fabric.num_devices, -1, np.int64)
    side = leafpair.node_sides(spec.gpus_per_node)[np.arange(N) % spec.gpus_per_node]
    ranks = leafpair.rail_sides(K, spec.gpus_per_node)
    dw = len(str(max(spec.domains - 1, 0)))
    view.clusters["hb"] = (f"HB domains {span(0, spec.domains - 1, dw)}", f"each node's {spec.gpus_per_node} NICs alternate A-B-B-A over the pair")
    for s, sw in enumerate(leaves.tolist()):
        on = ",".join(str(r) for r in np.flatnonzero(ranks == s).tolist())
        n = int((side == s).sum())
        view.boxes.append(Box(f"t0_{s}", 0, "gpu", f"GPUs on {fabric.switches[sw].name}", (plural("gpu", n), f"ranks {on} of each HB domain"), n, "hb"))
        box_of[np.flatnonzero(side == s)] = s
    for s, sw in enumerate(leaves.tolist()):
        view.boxes.append(Box(f"t1_{s}", 1, "leaf", fabric.switches[sw].name, (f"{fabric.switches[sw].radix}-port",), 1))
        box_of[N + sw] = 2 + s
    ids = [b.id for b in view.boxes]
    for st in bundle_stats(fabric, box_of):
        view.bundles.append(Bundle(ids[st.lower], ids[st.upper], st.tier, st.links, bundle_lines(st, spec.speed_at(1), "gpu", "leaf")))
    I = fabric.isls
    isl = np.flatnonzero(I.plane == 0)
    if len(isl):
        lo, hi = int(I.a_port[isl].min()), int(I.a_port[isl].max())
        lines = (f"{num(len(isl))} × {spec.speed_at(1)}G ISLs", f"p{lo}–p{hi} on both · GPU:ISL ports {spec.oversubscription}")
        view.bundles.append(Bundle(ids[2], ids[3], 1, len(isl), lines, ISL_LINK))
    elif len(leaves) == 2:
        view.subtitle = (*view.subtitle, "no link joins the two leaves: traffic between their rails crosses the HB domain (NVLink) first")
    view.rows[0] = ("GPUs", f"{num(N)} · {num(spec.domains)} HB domains × {K}")
    pair = f"one pair, {num(len(isl))} ISLs" if len(isl) else "one pair, no ISL"
    view.rows[1] = _row_label("leaf", 1, len(leaves), spec.radix_at(1), pair)
    return view


VIEWS = {"rail-optimized": rail_optimized_overview, "rail-only": rail_only_overview}


def overview(fabric: Fabric) -> View:
    """The overview of ``fabric``'s architecture (a leaf pair's own view with ``design: leaf-pair``)."""
    if fabric.spec.design == "leaf-pair":
        return leaf_pair_overview(fabric)
    return VIEWS[fabric.arch](fabric)
