"""Generators: explicit port-level wiring of the two architectures.

``rail_optimized(spec)`` and ``rail_only(spec)`` are pure functions, spec in,
:class:`~topogen.fabric.model.Fabric` out, deterministic to the byte. Device and port
naming is documented in :mod:`topogen.fabric.naming`; the design rules (tier count,
leaf layout, balanced stripe width) live in :mod:`topogen.spec.counts`, whose
closed-form counts the generated wiring must equal:

* links per tier: tier 1 = N·planes GPU links; tier j = the uplinks of tier j-1;
* fully populated with P endpoints per Clos: ``(2t-1)·P/k`` switches, ``t·P`` links.

Node attributes (networkx export): ``role`` (gpu, leaf, spine, core, tier4..),
``tier`` (0 for GPUs), ``plane``, ``rails`` (switches), ``rail`` and
``hb_domain`` (GPUs), ``radix``. Edge attributes: ``tier``, ``plane``,
``a_port``, ``z_port``, ``speed`` (Gb/s).
"""

from __future__ import annotations

from math import ceil

import numpy as np

from topogen.fabric.leafpair import leaf_pair
from topogen.fabric.model import Fabric, LinkTable, Switch
from topogen.fabric.naming import site_switch_names, units_note, width
from topogen.spec import counts
from topogen.spec.counts import tier_role
from topogen.util.figures import count, plural

# A switch before naming: (tier, rails, group, block, pos, down_ports, scope, home)
# scope is the rail prefix in rail-only ("" in rail-optimized); home is a dual-homed
# leaf's side (0 for the a-leaf, 1 for its b-partner; 0 everywhere else).


class _Links:
    """Accumulates link columns (local switch ids) as numpy chunks."""

    def __init__(self) -> None:
        self.parts: list[tuple[np.ndarray, ...]] = []

    def add(self, a, a_port, z, z_port, tier) -> None:
        a = np.asarray(a, np.int64)
        n = len(a)

        def col(x, dt):
            return np.broadcast_to(np.asarray(x, dt), (n,)).copy()

        self.parts.append((a, col(a_port, np.int32), col(z, np.int64), col(z_port, np.int32), col(tier, np.int8)))

    def columns(self) -> tuple[np.ndarray, ...]:
        if not self.parts:
            return tuple(np.zeros(0, t) for t in (np.int64, np.int32, np.int64, np.int32, np.int8))
        return tuple(np.concatenate([p[i] for p in self.parts]) for i in range(5))


def _stack(
    leaf_used: list[int], tiers: int, shape: counts.Shape, full: bool, links: _Links, notes: list[str] | None = None, widths: tuple | None = None, sized_for: str = "", minimal: bool = False
) -> list[tuple[int, int, int]]:
    """Build tiers 2..t above leaves ``0 .. L-1`` (local ids), striping balanced (or ``minimal`` at the top).

    Returns ``(tier, block, pos)`` of each new switch, in id order (ids L, L+1...).
    Links are appended to ``links`` with local switch ids on both ends. When a
    tier gets more switches than its ports alone need, ``notes`` says why.
    ``widths`` fixes the switches of each top stripe (a top tier sized for more
    scalable units than are present, :func:`counts.top_widths`); ``sized_for`` says for what.
    With ``minimal`` (``striping: minimal``) the top tier joins stripes into the groups of
    :func:`counts.minimal_groups` and spreads each lower switch's uplinks over its group.
    """
    used = list(leaf_used)
    next_id = len(leaf_used)
    made: list[tuple[int, int, int]] = []
    level: list[list[int]] = [[i] for i in range(len(leaf_used))]
    for j in range(2, tiers + 1):
        top = j == tiers
        down = shape.down_at(j, tiers)
        cap, up = shape.split(j - 1)  # ports of the switches below
        chunks = [level] if top else [level[i : i + down] for i in range(0, len(level), down)]
        if top and len(level) > down:
            raise AssertionError(f"{len(level)} pods exceed radix {down}")
        why = counts.TierExtra(j, up, cap, down, top, full, minimal)
        new_level: list[list[int]] = []
        if top and minimal:
            ids = _minimal_top(level, used, up, down, full, cap, widths, j, links, why, notes)
            made.extend((j, 0, q) for q in range(len(ids)))
            next_id += len(ids)
            level = [ids]
            chunks = []
        for b, chunk in enumerate(chunks):
            block_ids: list[int] = []
            for p in range(max(len(sb) for sb in chunk)):
                members = [sb[p] for sb in chunk if len(sb) > p]
                lower = tuple(used[m] for m in members)
                if top and widths is not None:
                    s, ups = widths[p], counts.stripe_ups(lower, up, widths[p], full, cap)
                else:
                    s, ups = counts.stripe_width(lower, up, down, full, top, cap)
                why.add(lower, s, ups)
                first = next_id
                next_id += s
                per_upper = sum(u // s for u in ups)
                for q in range(s):
                    made.append((j, 0 if top else b, len(block_ids) + q))
                    used.append(per_upper)
                _emit_stripe(members, ups, s, first, cap, j, links)
                block_ids.extend(range(first, first + s))
            new_level.append(block_ids)
        level = new_level or level
        if top and widths is not None:
            ports = why.switches * down
            why.sized = (
                f"{tier_role(j)}: {count(why.switches)} switches sized for {sized_for}: {count(why.built)} of their {count(ports)} down ports cabled, "
                f"{count(ports - why.built)} reserved for growth"
            )
        if notes is not None:
            notes.extend(why.notes())
    return made


def _minimal_top(level: list[list[int]], used: list[int], up: int, down: int, full: bool, cap: int, widths: tuple | None, tier: int, links: _Links, why: counts.TierExtra, notes: list[str] | None) -> list[int]:
    """The top tier of ``striping: minimal``: each group of stripes shares the fewest upper switches its ports need.

    Lower switches of a group, position-major, spread their uplinks over the
    group's ``s`` upper switches (:func:`counts.spread`: ``u // s`` links to each,
    one more to ``u % s`` of them in turn). Appends each new switch's used down
    ports to ``used`` and returns the new switches' ids.
    """
    stripes_ids = [[sb[p] for sb in level if len(sb) > p] for p in range(max(len(sb) for sb in level))]
    stripes = tuple(tuple(used[m] for m in ids) for ids in stripes_ids)
    groups = counts.top_plan(stripes, up, down, full, cap, widths)
    first = len(used)
    out: list[int] = []
    all_ups = []
    for g in groups:
        members = [m for p in range(g.first, g.first + g.count) for m in stripes_ids[p]]
        ups = counts.group_ups(stripes, g, up, full, cap)
        why.add(tuple(used[m] for m in members), g.s, ups)
        start = first + len(out)
        used.extend(_emit_spread(members, ups, g.s, start, cap, tier, links))
        out.extend(range(start, start + g.s))
        all_ups.append(ups)
    spread = counts.spread_of(tier, groups, all_ups)
    if notes is not None and spread.uneven:
        notes.append(spread.note())
    return out


def _emit_spread(members: list[int], ups: tuple[int, ...], s: int, first: int, h: int, tier: int, links: _Links) -> list[int]:
    """Cable each member's uplinks over the ``s`` upper switches ``first ..`` as :func:`counts.spread` says.

    Member uplink ports ``h+1 ..`` go to upper 0 first, consecutive ports per upper;
    each upper takes the members in order on its down ports ``1 ..``. Returns each
    upper switch's cabled down ports.
    """
    per = counts.spread_matrix(ups, s)  # links of each member to each upper switch
    runs = per.ravel()
    total = int(runs.sum())
    before = np.cumsum(per, axis=0) - per  # links the upper switch took from earlier members
    within = np.arange(total) - np.repeat(np.cumsum(runs) - runs, runs)  # index of a link within its (member, upper) run
    u = np.asarray(ups, np.int64)
    a = np.repeat(np.asarray(members, np.int64), u)
    a_port = h + 1 + np.arange(total) - np.repeat(np.cumsum(u) - u, u)
    z = first + np.repeat(np.tile(np.arange(s), len(members)), runs)
    links.add(a, a_port, z, 1 + np.repeat(before.ravel(), runs) + within, tier)
    return per.sum(axis=0).tolist()


def _emit_stripe(members: list[int], ups: tuple[int, ...], s: int, first: int, h: int, tier: int, links: _Links) -> None:
    """Cable each member's uplinks to the stripe's ``s`` upper switches.

    ``h`` is the members' downlink port count. Member uplink ports ``h+1 ..`` go to upper 0 first (``c`` parallel links per
    upper, consecutive ports); each upper takes the members in order on its
    down ports ``1 ..``.
    """
    m = len(members)
    cs = [u // s for u in ups]
    if len(set(cs)) == 1:
        c = cs[0]
        mem = np.asarray(members, np.int64)
        a = np.repeat(mem, s * c)
        a_port = h + 1 + np.tile(np.arange(s * c), m)
        z = first + np.tile(np.repeat(np.arange(s), c), m)
        z_port = 1 + np.repeat(np.arange(m) * c, s * c) + np.tile(np.tile(np.arange(c), s), m)
        links.add(a, a_port, z, z_port, tier)
        return
    base = 0
    for mem, c in zip(members, cs):
        a = np.full(s * c, mem)
        a_port = h + 1 + np.arange(s * c)
        z = first + np.repeat(np.arange(s), c)
        z_port = 1 + base + np.tile(np.arange(c), s)
        links.add(a, a_port, z, z_port, tier)
        base += c


def rail_optimized(spec) -> Fabric:
    """Rail-optimized any-to-any Clos: rail-aligned leaves joined by one full-bisection Clos.

    Leaf (group g, rail r) serves rank r of each HB domain of group g, a group
    being h = radix/2 consecutive domains (the last may be smaller; with
    ``leaf_packing: shared`` a small group packs several whole rails on a leaf;
    by default every group gets one leaf per rail, partly filled or not).
    Leaves are ordered group-major and joined h at a time into pods.
    Closed form when fully populated: ``(2t-1)·N/k`` switches and ``t·N`` links.
    """
    n, hb, k = spec.gpus, spec.hb_domain, spec.radix
    sh = spec.shape
    shared = spec.packs_rails("rail-optimized")
    full = spec.provision == "full"
    minimal = spec.striping == "minimal"
    domains = n // hb
    homes = spec.homes
    u = spec.units
    t = counts.rail_optimized_tiers(n, hb, sh, shared, homes=homes, units=u)
    links = _Links()
    gpu = np.arange(n, dtype=np.int64)
    dom, rank = np.divmod(gpu, hb)
    raw: list[tuple] = []
    notes: list[str] = []
    reserved: list[int] = []  # raw indices of the switches that keep reserved_leaf_ports free
    if t == 1:
        reserved.append(0)
        raw.append((1, tuple(range(hb)), 0, 0, 0, k, "", 0))
        links.add(gpu, 0, np.zeros(n, np.int64), rank * domains + dom + 1, 1)
        if hb > 1:
            notes.append(f"all {plural(n, 'GPU')} fit one {k}-port switch: its {hb} rails share it, isolated logically (VLAN/partition per rail)")
    else:
        ld = sh.split(1)[0]  # leaf downlinks
        size = u.domains or ld  # HB domains per group (an SU with scalable units)
        groups = counts.rail_optimized_groups(domains, hb, sh, shared, units=u)
        leaf_used: list[int] = []
        leaf_base = np.zeros(len(groups), np.int64)
        rho = np.zeros(len(groups), np.int64)
        gsize = np.zeros(len(groups), np.int64)
        for g, (d, rh, nleaves) in enumerate(groups):
            leaf_base[g] = len(leaf_used)
            rho[g], gsize[g] = rh, d
            for i in range(nleaves):
                rails = tuple(range(i * rh, min(hb, (i + 1) * rh)))
                if u.every or g == len(groups) - 1:
                    reserved.append(len(raw))
                raw.append((1, rails, 0, g, 0, ld, "", 0))
                leaf_used.append(d * len(rails))
            if rh > 1:
                notes.append(f"leaf_packing shared: group {g} holds {d} HB domain(s), so {rh} rails share each of its leaves, isolated logically (VLAN/partition per rail)")
        g = dom // size
        leaf = leaf_base[g] + rank // rho[g]
        port = (rank % rho[g]) * gsize[g] + dom % size + 1
        nl = len(leaf_used)
        for h in range(homes):  # NIC port h of each plane on the home-h leaf of its rail; leaves home-major
            links.add(gpu, h, leaf + h * nl, port, 1)
        if homes > 1:
            raw.extend((*x[:7], 1) for x in raw[:nl])
            reserved += [i + nl for i in reserved]  # both leaves of a pair
            leaf_used = leaf_used * homes
            notes.append(_pair_note(nl, "the"))
        widths, sized_for = None, ""
        if u.max:
            widths = counts.top_widths(counts.homed(counts.rail_optimized_leaves(u.sized_domains(domains), hb, sh, shared, units=u), homes), t, sh, full, minimal)
            sized_for = _sized_for(spec, len(groups), u.max * hb * homes)
        for tier, block, pos in _stack(leaf_used, t, sh, full, links, notes, widths, sized_for, minimal):
            raw.append((tier, (), 0, block, pos, sh.down_at(tier, t), "", 0))
    return _finish(spec, "rail-optimized", t, raw, links, notes, reserved)


def _sized_for(spec, present: int, leaves: int) -> str:
    """What a top tier sized for more scalable units is bought for, in a build note."""
    u = spec.units
    return f"max_scalable_units {u.max} ({leaves} leaves of {spec.scalable_unit}-node SUs; {present} SU(s) present)"


def rail_only(spec) -> Fabric:
    """Rail-only: K independent Clos networks, one per rail, no spine between rails.

    Rail r joins rank r of every HB domain (N/K endpoints). A rail that fits one
    switch is one switch; with ``rail_packing: shared`` as many whole rails as
    fit share a switch (logical isolation). Larger rails are each a separate
    multi-tier Clos with the fewest tiers that fit N/K endpoints (dedicated
    switches; rails never share a multi-tier Clos).
    Closed form when fully populated: ``K·(2t-1)·(N/K)/k`` switches, ``t·N`` links.
    """
    n, hb, k = spec.gpus, spec.hb_domain, spec.radix
    sh = spec.shape
    shared = spec.rail_packing == "shared"
    full = spec.provision == "full"
    minimal = spec.striping == "minimal"
    domains = n // hb
    homes = spec.homes
    u = spec.units
    t = counts.rail_only_tiers(n, hb, sh, homes=homes, units=u)
    links = _Links()
    gpu = np.arange(n, dtype=np.int64)
    dom, rank = np.divmod(gpu, hb)
    raw: list[tuple] = []
    notes: list[str] = []
    reserved: list[int] = []  # raw indices of the switches that keep reserved_leaf_ports free
    if t == 1:
        rho = counts.rails_per_switch(n, hb, k, shared)
        for i in range(ceil(hb / rho)):
            rails = tuple(range(i * rho, min(hb, (i + 1) * rho)))
            reserved.append(len(raw))
            raw.append((1, rails, rails[0], 0, 0, k, "", 0))
        links.add(gpu, 0, rank // rho, (rank % rho) * domains + dom + 1, 1)
        if rho > 1:
            notes.append(f"each rail has {plural(domains, 'GPU')}: {rho} whole rails share each {k}-port switch, isolated logically (VLAN/partition per rail)")
        elif shared:
            notes.append(f"each rail has {plural(domains, 'GPU')}: no two rails fit one {k}-port switch, so each rail has its own switch")
    else:
        ld = sh.split(1)[0]  # leaf downlinks
        size = u.domains or ld  # HB domains per leaf group (an SU with scalable units)
        leaf_used = [min(size, domains - i * size) for i in range(ceil(domains / size))]
        one = _Links()
        ed = np.arange(domains, dtype=np.int64)
        for h in range(homes):  # NIC port h on the home-h leaf (leaves home-major)
            one.add(ed, h, ed // size + h * len(leaf_used), ed % size + 1, 1)
        per_home = len(leaf_used)
        side = [h for h in range(homes) for _ in leaf_used]
        leaf_used = leaf_used * homes
        if homes > 1:
            notes.append(_pair_note(len(leaf_used) // homes, "each rail's"))
        extra: list[str] = []
        widths, sized_for = None, ""
        if u.max:
            widths = counts.top_widths(counts.homed(counts.rail_only_leaves(u.sized_domains(domains), sh, units=u), homes), t, sh, full, minimal)
            sized_for = _sized_for(spec, per_home, u.max * homes)
        uppers = _stack(leaf_used, t, sh, full, one, extra, widths, sized_for, minimal)
        notes.extend(f"in each rail's Clos, {x}" for x in extra)
        a, ap, z, zp, tr = one.columns()
        per_rail = len(leaf_used) + len(uppers)
        gpu_link = tr == 1
        for r in range(hb):
            for i in range(len(leaf_used)):
                if u.every or i % per_home == per_home - 1:
                    reserved.append(len(raw))
                raw.append((1, (r,), r, 0, i % (len(leaf_used) // homes), ld, f"rail{r}", side[i]))
            for tier, block, pos in uppers:
                raw.append((tier, (r,), r, block, pos, sh.down_at(tier, t), f"rail{r}", 0))
        # replicate the one-rail template for every rail, rail-major
        r_ids = np.arange(hb, dtype=np.int64)[:, None]
        a_all = np.where(gpu_link, a * hb + r_ids, a + r_ids * per_rail)
        z_all = z + r_ids * per_rail
        links.add(a_all.ravel(), np.tile(ap, hb), z_all.ravel(), np.tile(zp, hb), np.tile(tr, hb))
        if shared:
            notes.append(f"each rail has {plural(domains, 'GPU')}, more than one {k}-port switch holds: every rail is its own {t}-tier Clos on dedicated switches")
    return _finish(spec, "rail-only", t, raw, links, notes, reserved)


def _pair_note(pairs: int, whose: str) -> str:
    return (
        f"homing: dual: each GPU's two NIC ports per plane go to a leaf pair of its rail ({plural(pairs, 'pair')} in {whose} fabric, names ending -a and -b) "
        "with no link between the two leaves; the pair shares the tiers above, so a GPU survives one leaf down at half bandwidth"
    )


def _finish(spec, arch: str, t: int, raw: list[tuple], links: _Links, notes: list[str], reserved: list[int] = ()) -> Fabric:  # type: ignore[assignment]
    """Name the plane-0 switches, replicate planes, and assemble the Fabric.

    ``reserved``: raw indices of the switches whose last ``reserved_leaf_ports`` down ports stay free.
    """
    n = spec.gpus
    for j, text in enumerate(spec.tier_oversubscription, start=1):
        if j >= t and text != "1:1":
            notes.append(f"oversubscription {text} of the {tier_role(j)} tier is not used: this {t}-tier fabric's top tier uses every port down")
    a, ap, z, zp, tr = links.columns()
    is_gpu = tr == 1
    planes = spec.planes
    names = _switch_names(raw, arch, t, spec.hb_domain, spec.homes)
    per_plane = len(raw)
    full = [(f"pl{p}-" if planes > 1 else "") + name for p in range(planes) for name in names]
    entries = [(tier_role(r[0]), p, r[3], r[4], r[1][0] if r[1] else 0, r[7]) for p in range(planes) for r in raw]
    full = site_switch_names(spec.naming, entries, full, arch)
    switches: list[Switch] = []
    for p in range(planes):
        for (tier, rails, group, block, pos, down, _scope, _home), name in zip(raw, full[p * per_plane : (p + 1) * per_plane]):
            switches.append(Switch(name, tier, p, rails, group, block, spec.radix_at(tier), down))
    cols = []
    for p in range(planes):
        off = n + p * per_plane
        cols.append(
            (
                np.where(is_gpu, a, a + off),
                np.where(is_gpu, p * spec.homes + ap, ap),
                z + off,
                zp,
                tr,
                np.full(len(a), p, np.int8),
            )
        )
    by_tier = np.asarray([spec.speed_at(j) for j in range(t + 1)], np.int32)  # each link tier its own speed
    speed = np.tile(by_tier[tr], planes)
    table = LinkTable.from_columns(
        a_dev=np.concatenate([c[0] for c in cols]),
        a_port=np.concatenate([c[1] for c in cols]),
        z_dev=np.concatenate([c[2] for c in cols]),
        z_port=np.concatenate([c[3] for c in cols]),
        tier=np.concatenate([c[4] for c in cols]),
        plane=np.concatenate([c[5] for c in cols]),
        a_speed=speed,
        z_speed=speed,
    )
    res = spec.reserved_leaf_ports or 0
    kept = tuple((p * per_plane + i, raw[i][5] - res + 1, raw[i][5]) for p in range(planes) for i in reserved) if res else ()
    if kept:
        notes.append(units_note(spec, [switches[i].name for i, _a, _b in kept], kept[0][1], kept[0][2]))
    return Fabric(spec, arch, t, switches, table, notes, kept)


def _switch_names(raw: list[tuple], arch: str, t: int, hb: int, homes: int = 1) -> list[str]:
    """Deterministic names (see :mod:`topogen.fabric.naming`), zero-padded per field; a dual-homed leaf pair ends in ``-a`` and ``-b``."""
    rw = width(hb)
    groups = max((r[3] for r in raw if r[0] == 1), default=0) + 1
    gw = width(groups)
    bw = {j: width(max((r[3] for r in raw if r[0] == j), default=0) + 1) for j in range(1, t + 1)}
    pw = {j: width(max((r[4] for r in raw if r[0] == j), default=0) + 1) for j in range(1, t + 1)}
    names = []
    for tier, rails, group, block, pos, _down, scope, home in raw:
        role = tier_role(tier)
        if arch == "rail-optimized":
            if tier == 1:
                rpart = f"r{rails[0]:0{rw}d}" if len(rails) == 1 else f"r{rails[0]:0{rw}d}-{rails[-1]:0{rw}d}"
                names.append(f"leaf-g{block:0{gw}d}-{rpart}")
            elif tier == t:
                names.append(f"{role}-{pos:0{pw[tier]}d}")
            else:
                names.append(f"{role}-b{block:0{bw[tier]}d}-{pos:0{pw[tier]}d}")
        else:
            if t == 1:
                rpart = f"rail{rails[0]:0{rw}d}" if len(rails) == 1 else f"rail{rails[0]:0{rw}d}-{rails[-1]:0{rw}d}"
                names.append(f"{rpart}-leaf")
            elif tier == 1:
                names.append(f"rail{rails[0]:0{rw}d}-leaf-{pos:0{pw[1]}d}")
            elif tier == t:
                names.append(f"rail{rails[0]:0{rw}d}-{role}-{pos:0{pw[tier]}d}")
            else:
                names.append(f"rail{rails[0]:0{rw}d}-{role}-b{block:0{bw[tier]}d}-{pos:0{pw[tier]}d}")
        if homes > 1 and tier == 1:
            names[-1] += "-b" if home else "-a"
    return names


GENERATORS = {"rail-optimized": rail_optimized, "rail-only": rail_only}


def generate(spec, arch: str) -> Fabric:
    """Explicit wiring of ``arch`` for ``spec`` (a Clos, or the single-tier leaf pair of ``design: leaf-pair``)."""
    if spec.design == "leaf-pair":
        return leaf_pair(spec, arch)
    return GENERATORS[arch](spec)
