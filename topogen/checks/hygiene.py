"""Check 1, port budget and cabling hygiene: every cable as written, before any is trusted.

Ids: ``hygiene.dangling`` (an end on no device), ``hygiene.self-link``,
``hygiene.bad-port`` (not a port of that device), ``hygiene.port-reuse``,
``hygiene.port-budget`` (more cables than radix), ``hygiene.gpu-no-link``,
``hygiene.gpu-extra-link`` (per NIC port = plane), ``hygiene.speed-mismatch``
(two ends disagree), ``hygiene.link-speed`` (both ends off the spec's speed),
``hygiene.plane-mismatch`` (a cable joins two planes), ``hygiene.breakout-split``
(the legs of one breakout cable on two switches or cages, :mod:`.breakout`).
``hygiene.unknown-device`` comes from the file reader.
"""

from __future__ import annotations

import numpy as np

from topogen.checks import breakout, reserved
from topogen.checks.text import LIST, port_ranges
from topogen.checks.wire import Wire
from topogen.fabric.model import Fabric
from topogen.spec.counts import link_tier_name


def check(w: Wire, expected: Fabric | None = None) -> None:
    """Every cable as written: ends, ports, speeds, planes, breakout cages and (with ``expected``, the spec's own wiring) reserved leaf ports."""
    n, spec, P = w.n, w.spec, w.nics  # P: NIC ports per GPU (one per plane, two per plane when dual-homed)
    H = w.homes

    def dangling(i: int):
        ends = [(d, p) for d, p in ((w.a[i], w.ap[i]), (w.z[i], w.zp[i])) if 0 <= d < w.ndev]
        return (
            [w.name(d) for d, _ in ends],
            [w.port(d, p) for d, p in ends],
            f"{w.cable(i)} has an end on no device of the fabric (device ids {int(w.a[i])}, {int(w.z[i])}; the fabric has {w.ndev})",
            "every cable needs a known device and port at both ends",
            (i,),
        )

    w.add_many("hygiene.dangling", "error", np.flatnonzero(~w.valid), dangling)

    def self_link(i: int):
        (d, _d), (pa, pz) = w.ends(i)
        return (d,), (pa, pz), f"{w.cable(i)} joins {d} to itself ({pa} to {pz})", "cable the port to the device of the adjacent tier it belongs to", (i,)

    w.add_many("hygiene.self-link", "error", np.flatnonzero(w.valid & (w.a == w.z)), self_link)
    # Every end of every cable with known devices, one side at a time (a ends, then z ends:
    # findings keep that order). No sort over the ends: ports are counted in a dense table
    # of slots (GPU g's NIC p; switch s's port p), linear in cables however large.
    sides = ((w.a, w.ap, w.z, w.zp), (w.z, w.zp, w.a, w.ap))
    R = int(w.sw_radix.max(initial=0))
    nslot = n * P + w.S * (R + 1)
    bad_ends, slots = [], []
    fewest = int(w.sw_ports.min()) if w.S else 0  # the fewest interfaces of a switch: only ends past it need a look
    for dev, port, _far, _farp in sides:
        is_gpu = w.valid & (dev < n)
        is_sw = w.valid & (dev >= n)
        # past the switch's interfaces (the radix at one speed): only ends past the fewest need their own switch's
        over = np.flatnonzero(is_sw & (port > fewest))
        over = over[port[over] > w.sw_ports[dev[over] - n]]
        bad = np.flatnonzero((is_gpu & ((port < 0) | (port >= P))) | (is_sw & (port < 1)))
        bad_ends.append(np.union1d(bad, over) if len(over) else bad)
        # slot of each end; -1: no slot (invalid end, or a port outside 0..P-1 / 0..max radix: counted apart)
        # (whole columns, no index arrays: GPU g's port p is g*P + p, switch d's is d*(R+1) + p + n*P - n*(R+1))
        slot = np.multiply(dev, R + 1)
        slot += n * P - n * (R + 1)
        np.copyto(slot, np.multiply(dev, P), where=is_gpu)
        slot += port
        has = (is_gpu & (port >= 0) & (port < P)) | (is_sw & (port >= 0) & (port <= R))
        if not has.all():
            slot[~has] = -1
        slots.append(slot)

    def bad_port(side: int):
        dev, port = sides[side][0], sides[side][1]

        def make(i: int):
            d, p = int(dev[i]), int(port[i])
            if d < n:
                valid_ports = port_ranges(list(range(P)), "nic")
                per = "one per plane" if H == 1 else f"two per plane (homing: dual), {w.planes} plane(s)"
                msg = f"{w.cable(i)} uses {w.port(d, p)}, but each GPU has {P} NIC port(s) ({valid_ports}), {per}"
            else:
                msg = f"{w.cable(i)} uses {w.port(d, p)}, but {w.name(d)} has ports p1-p{int(w.sw_ports[d - n])}"
            return (w.name(d),), (w.port(d, p),), msg, "use a port that exists on the device", (i,)

        return make

    for side in (0, 1):
        w.add_many("hygiene.bad-port", "error", bad_ends[side], bad_port(side))
    slot_used, reused = _slot_use(slots, nslot)
    if reused is not None:  # None: every end on a slot of its own, no port holds two cables
        _port_reuse(w, sides, slots, reused)
    # port budget
    if w.S:
        everything = np.arange(len(w.a))
        used = np.zeros(w.S, np.int64)
        costs = [_port_cost(w, dev, everything) for dev, *_ in sides]  # ports each end takes (a faster uplink takes several)
        weighted = costs[0] is not None
        taken = np.zeros(w.S, np.float64 if weighted else np.int64)
        for (dev, *_), cost in zip(sides, costs):
            on_sw = w.valid & (dev >= n)
            if w.valid.all():  # every end on a device: count them all, keep the switches' (no copy of the ends)
                used += np.bincount(dev, minlength=w.ndev)[n:]
            else:
                used += np.bincount(dev[on_sw] - n, minlength=w.S)
            if weighted:
                taken += np.bincount(dev[on_sw] - n, weights=cost[on_sw], minlength=w.S)
        taken = taken.astype(np.int64) if weighted else used

        def over_budget(s: int):
            d = n + s
            mine = [np.flatnonzero(w.valid & (dev == d)) for dev, *_ in sides]
            ports = np.concatenate([port[m] for (_d, port, *_), m in zip(sides, mine)])
            links = np.concatenate(mine)
            _u, first = np.unique(ports, return_index=True)
            extra = np.ones(len(links), bool)
            extra[first] = False  # the second and later cables on a port, and ports past the radix
            over = extra | (ports < 1) | (ports > w.sw_radix[s])
            if weighted and not over.any():  # the cables past the budget, in port order
                cost = np.concatenate([c[m] for c, m in zip(costs, mine)])
                by_port = np.argsort(ports, kind="stable")
                over[by_port] = np.cumsum(cost[by_port]) > w.sw_radix[s]
            ex_ports = sorted({int(p) for p in ports[over]})
            if weighted:
                sp = w.spec.speed_at(int(w.sw_tier[s]))
                text = f"{w.name(d)} has {int(used[s])} cables taking {int(taken[s])} ports at {sp}G on a {int(w.sw_radix[s])}-port ({sp}G) switch; over budget on {port_ranges(ex_ports)}"
                hint = "remove or move the extra cables: a switch's radix counts ports at its downlink speed, and an uplink k times faster takes k of them"
            else:
                text = f"{w.name(d)} has {int(used[s])} cables on a {int(w.sw_radix[s])}-port switch; over budget on {port_ranges(ex_ports)}"
                hint = "remove or move the extra cables: a switch takes at most radix cables"
            return (w.name(d),), tuple(w.port(d, p) for p in ex_ports), text, hint, tuple(int(i) for i in links[over][:LIST])

        w.add_many("hygiene.port-budget", "error", np.flatnonzero(taken > w.sw_radix), over_budget)
    # GPUs: exactly one cable per NIC port (a plane, or one port of a plane's dual-homed pair); a GPU's slots are the first n*P
    no_cable = ~slot_used[: n * P]
    several = reused[: n * P] if reused is not None else np.zeros(n * P, bool)

    def no_link(k: int):
        g, p = divmod(k, P)
        gpu, nic = w.gpu_names.name(g), w.port(g, p)
        leaf = "its rail leaf" if H == 1 else f"the {'ab'[p % H]}-leaf of its rail's pair"
        return (gpu,), (nic,), f"{gpu} has no cable on nic{p} (plane {p // H})", f"cable {nic} to {leaf} of plane {p // H}", ()

    w.add_many("hygiene.gpu-no-link", "error", np.flatnonzero(no_cable), no_link)

    def extra(k: int):
        g, p = divmod(k, P)
        es = [(int(i), far, farp) for slot, (_d, _p, far, farp) in zip(slots, sides) for i in np.flatnonzero(slot == k)]
        fars = [w.port(int(far[i]), int(farp[i])) for i, far, farp in es]
        return (
            [w.gpu_names.name(g)] + [f.split(":")[0] for f in fars],
            [w.port(g, p)] + fars,
            f"{w.gpu_names.name(g)} has {len(es)} cables on {f'plane {p}' if H == 1 else f'nic{p} (plane {p // H})'}: " + "; ".join(f"{w.cable(i)} to {f}" for (i, _f, _fp), f in zip(es, fars)),
            "a GPU has exactly one cable per plane: remove all but the one to its rail leaf" if H == 1 else "a GPU has exactly one cable per NIC port: remove all but the one to its rail's leaf",
            [i for i, _f, _fp in es],
        )

    w.add_many("hygiene.gpu-extra-link", "error", np.flatnonzero(several), extra)
    _speeds(w)
    _planes(w)
    breakout.check(w)  # a breakout cable's legs on one cage (a cabling file that names them)
    reserved.check(w, expected)  # no cable on a leaf port kept for management (before the summary line below)
    rep = w.report
    per_tier = getattr(spec, "tier_speed", ())
    per_nic = "plane" if H == 1 else "NIC port"
    isls = len(w.fabric.isls)
    cables = f"{len(w.L)} cables" + (f" ({isls} of them inter-switch links, ISL ports counted on both leaves)" if isls else "")
    ok = (
        f"{cables}; ports within radix, none used twice; every GPU one cable per {per_nic}; {spec.link_speed} Gb/s at both ends"
        if not per_tier
        else f"{cables}; ports within radix (an uplink takes the ports its speed needs), none used twice; every GPU one cable per {per_nic}; both ends at their link tier's speed ({spec.speeds_text()} Gb/s)"
    )
    rep.checks["hygiene"] = (
        ok
        if rep.group_status("hygiene") == "pass"
        else f"{sum(v for c, v in w.counts.items() if c.startswith('hygiene.'))} problem(s) with ports, ends, speeds or planes"
    )


def _slot_use(slots: list[np.ndarray], nslot: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Per slot (``0 .. nslot-1``, a byte each): whether an end is on it, and whether two or more are.

    First a byte table of the slots taken: when every end has a slot and took
    one of its own (as many taken as ends: the usual wiring), no port holds
    two cables, and ``None`` says so without counting. The table is an eighth
    of a table of counts, so it stays in the processor's cache far longer
    (17 MB at 2,097,152 GPUs). Otherwise the ends are counted, one side at a
    time, so one table of counts lives at once (ends without a slot are then
    compared among themselves by :func:`_port_reuse`).
    """
    every = all(slot.min(initial=0) >= 0 for slot in slots)
    have = slots if every else [slot[slot >= 0] for slot in slots]
    used = np.zeros(nslot, bool)
    for h in have:
        used[h] = True
    if every and int(np.count_nonzero(used)) == sum(len(h) for h in have):
        return used, None
    used[:] = False
    reused = np.zeros(nslot, bool)
    for h in have:
        count = np.bincount(h, minlength=nslot)
        reused |= count > 1
        reused |= used & (count > 0)
        used |= count > 0
        del count
    return used, reused


def _port_reuse(w: Wire, sides, slots: list[np.ndarray], reused: np.ndarray) -> None:
    """Ports holding several cables, in (device, port) order; each lists its cables in cable order.

    Only the ends on a port used twice are sorted (plus the few ends on a port
    outside the slot table, compared among themselves), so the cost stays linear.
    """
    link, dev, port, side = [], [], [], []
    for k, (slot, (d, p, _f, _fp)) in enumerate(zip(slots, sides)):
        # reused: a byte per slot, so the gather stays in cache far longer than counts would
        i = np.flatnonzero(np.take(reused, slot, mode="clip") & (slot >= 0) | (w.valid & (slot < 0)))
        link.append(i)
        dev.append(d[i])
        port.append(p[i])
        side.append(np.full(len(i), k, np.int8))
    link, dev, port, side = (np.concatenate(x) for x in (link, dev, port, side))
    order = np.lexsort((side, link, port, dev))
    key_d, key_p = dev[order], port[order]
    starts = np.flatnonzero(np.r_[True, (key_d[1:] != key_d[:-1]) | (key_p[1:] != key_p[:-1])]) if len(order) else np.zeros(0, np.int64)
    sizes = np.diff(np.r_[starts, len(order)])

    def reuse(j: int):
        run = order[starts[j] : starts[j] + sizes[j]]
        d, p = int(dev[run[0]]), int(port[run[0]])
        links = [int(link[e]) for e in run]
        fars = [w.port(int(sides[side[e]][2][link[e]]), int(sides[side[e]][3][link[e]])) for e in run]
        return (
            [w.name(d)] + [f.split(":")[0] for f in fars],
            [w.port(d, p)] + fars,
            f"port {w.port(d, p)} is used by {len(run)} cables: " + "; ".join(f"{w.cable(i)} to {f}" for i, f in zip(links, fars)),
            "a port takes one cable: move all but one of these cables to free ports",
            links,
        )

    w.add_many("hygiene.port-reuse", "error", np.flatnonzero(sizes > 1), reuse)


def _port_cost(w: Wire, dev: np.ndarray, link: np.ndarray) -> np.ndarray | None:
    """Ports each cable end on a switch takes, counted at the switch tier's downlink speed; None at one speed throughout.

    A 128-port leaf at 200G (64 x 400G cages broken out) takes 2 ports for each 400G uplink.
    """
    spec = w.spec
    if not getattr(spec, "tier_speed", ()):
        return None
    base = np.asarray([spec.speed_at(max(1, j)) for j in range(int(w.sw_tier.max(initial=1)) + 1)], np.int64)
    sw = np.clip(dev - w.n, 0, max(w.S - 1, 0))
    sp = np.minimum(w.a_speed[link], w.z_speed[link])
    return np.where(dev >= w.n, np.maximum(1, -(-sp // base[w.sw_tier[sw]])), 1)


def _speeds(w: Wire) -> None:
    """Both ends of a cable at one speed, and that speed the spec's for the cable's link tier."""
    speed = w.spec.link_speed
    spec = w.spec
    per_tier = bool(getattr(spec, "tier_speed", ()))
    if per_tier:  # the link tier of a cable: the upper end's switch tier (ends on known devices)
        tier = np.maximum(w.dev_tier[np.clip(w.a, 0, w.ndev - 1)], w.dev_tier[np.clip(w.z, 0, w.ndev - 1)])
        expected = np.asarray([spec.speed_at(max(1, j)) for j in range(int(tier.max(initial=0)) + 1)], np.int64)[tier]
    else:
        expected = np.full(len(w.a), speed, np.int64)

    def want(i: int) -> str:
        if not per_tier:
            return f"the spec's links are {speed} Gb/s"

        return f"the spec's {link_tier_name(max(1, int(tier[i])))} links are {int(expected[i])} Gb/s ({spec.speeds_text()} by link tier)"

    def mismatch(i: int):
        devs, (pa, pz) = w.ends(i)
        return (
            devs,
            (pa, pz),
            f"{w.cable(i)}: {pa} runs at {int(w.a_speed[i])} Gb/s but {pz} at {int(w.z_speed[i])} Gb/s",
            f"both ends of a cable run at one speed; {want(i)}",
            (i,),
        )

    def off_spec(i: int):
        devs, (pa, pz) = w.ends(i)
        return (
            devs,
            (pa, pz),
            f"{w.cable(i)} ({pa} to {pz}) runs at {int(w.a_speed[i])} Gb/s; {want(i)}",
            "radix and capacity are counted at the spec's link speed: use that speed or change link_speed in the spec",
            (i,),
        )

    w.add_many("hygiene.speed-mismatch", "error", np.flatnonzero(w.valid & (w.a_speed != w.z_speed)), mismatch)
    w.add_many("hygiene.link-speed", "error", np.flatnonzero(w.valid & (w.a_speed == w.z_speed) & (w.a_speed != expected)), off_spec)


def _planes(w: Wire) -> None:
    """Both ends of a cable in one plane (a GPU end: its NIC index)."""
    n = w.n

    dev_plane = np.concatenate([np.full(n, -1, np.int32), w.sw_plane.astype(np.int32)])  # -1: a GPU (its plane is its NIC's)

    def plane_of(dev: np.ndarray, port: np.ndarray) -> np.ndarray:
        if not len(dev_plane):
            return np.zeros(len(dev), np.int32)
        out = np.take(dev_plane, dev, mode="clip")  # one gather, no index temporaries (ends off the fabric are not good: unused)
        g = np.flatnonzero(out < 0)
        out[g] = port[g] // w.homes
        return out

    pa = plane_of(w.a, w.ap)
    pz = plane_of(w.z, w.zp)
    gpu_bad = ((w.a < n) & ((w.ap < 0) | (w.ap >= w.nics))) | ((w.z < n) & ((w.zp < 0) | (w.zp >= w.nics)))

    def mismatch(i: int):
        devs, (qa, qz) = w.ends(i)
        return (
            devs,
            (qa, qz),
            f"{w.cable(i)} joins {qa} (plane {int(pa[i])}) to {qz} (plane {int(pz[i])})",
            "planes are independent copies of the fabric: cable a device only to devices of its own plane (a GPU's nic<p> to plane p)",
            (i,),
        )

    w.add_many("hygiene.plane-mismatch", "error", np.flatnonzero(w.good & ~gpu_bad & (pa != pz)), mismatch)
