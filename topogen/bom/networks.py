"""The other networks against the catalog: their switch SKUs resolved, and their bill of materials.

:func:`plan_for` turns the spec's ``networks:`` section into a
:class:`~topogen.fabric.networks.NetworkPlan` (switch radixes from the catalog's SKUs at the
port speeds); :func:`network_bom` prices what the generated networks hold: switches, and
the media of every cable chosen as the compute fabric's are (:mod:`topogen.bom.media`).

Media per cable, the rules:

* the link tier a cable matches in the catalog's media rules: an **access** cable (a
  node's, a storage target's, a server's, a PDU's or a managed switch's port to its leaf
  or OOB switch, the fabric managers' back-to-back link) is ``gpu-leaf``-like (tier 1:
  ``gpu_transceiver`` at the device end); a **trunk** between switches (leaf-spine,
  spine-super, ISL, OOB uplink, core uplink) is ``leaf-spine``-like (tier 2);
* the switch: the cable's upper end (``z``) when its SKU runs ports at the cable's speed,
  else the other end's, else the network's switch (the OOB switches' 100G uplinks are not a
  port mode of their own, so an OOB uplink takes the in-band leaf's SKU);
* the length: the layout's sold length, its length class as for the compute fabric; a
  cable to a device outside the plan (storage targets, NFS storage, data-centre core) has
  none and is priced at the spec's ``layout.outside_run_m`` (default 30 m, the longest
  ``cross-row`` run), a stated assumption in the BOM's notes;
* the first rule that matches and reaches the run wins, one-to-one cables first (a
  splitter DAC in a rack is the compute fabric's, not a management port's); a splitter rule
  only where no other fits (the xdr-800g catalog's 200G media on the SN5600: its legs from
  one switch, ``links_per_cable`` to a splitter, each splitter the SKU of its longest leg);
  the cable SKU is the rule's shortest cable at least as long as the run; a run no rule
  reaches is an input error naming it, as for the compute fabric;
* transceivers: the media's module at each optical end, counted per device as ``ceil(ports /
  ports_per_module)`` per SKU and cable role (a twin-port module serves two ports of one
  switch); the modules at devices outside the plan are counted too (the BOM buys both ends
  of its cables).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import Any

import numpy as np

from topogen.spec import catalog as cat
from topogen.bom.bill import BomLine, SkuLine, money, sku_lines
from topogen.spec.catalog import Cable, Catalog, Media, PortMode, SwitchSku
from topogen.bom.media import CLASS_NAMES, add_unique, length_classes, metres
from topogen.fabric import networks as nw
from topogen.spec.counts import link_tier_name
from topogen.spec.layout import OUTSIDE_RUN_M
from topogen.util.errors import InputError, Problem
from topogen.util.figures import plural


def _sku(hw: Catalog, ref: str | None, speed: int, field: str, what: str) -> tuple[SwitchSku, int, int]:
    """The switch of ``field``: the named SKU at ``speed`` (or the catalog's first at it): (sku, radix, ports per cage)."""
    if ref is not None:
        sw = next((s for s in hw.switches if s.sku == ref), None)
        if sw is None:
            raise InputError([Problem(field, f"catalog {hw.label} has no switch {ref!r}", f"its switches: {', '.join(s.sku for s in hw.switches)}")])
        mode = next((m for m in sw.ports if m.speed == speed and m.radix), None)
        if mode is None:
            raise InputError([Problem(field, f"switch {ref} runs no ports at {speed}G, the {what} port speed", f"its port modes: {', '.join(f'{m.radix} x {m.speed}G' for m in sw.ports)}; or change the port speed")])
        return sw, int(mode.radix), mode.per_cage
    for sw in hw.switches:
        mode = next((m for m in sw.ports if m.speed == speed and m.radix), None)
        if mode is not None:
            return sw, int(mode.radix), mode.per_cage
    raise InputError([Problem(field, f"no switch of catalog {hw.label} carries {speed}G ports, the {what} port speed", f"the catalog offers {hw.supply(management=True)}; add a switch or name one with {field}")])


def plan_for(spec, hw: Catalog, compute_switches: int, nodes_per_rack: int, switches_per_rack: int, aggregate_GBps: float | None, compute_switch_racks: int = -1, per_node_GBps: float | None = None, compute=None) -> nw.NetworkPlan:
    """The generators' inputs for ``spec`` (with a ``networks:`` section) and one compute fabric.

    Target ports not given are sized from the required bandwidth: the aggregate at the
    target speed, or, with ``per_node_GBps`` alone, every node at that rate at once.
    With ``inband.collapsed_core`` and ``compute`` (the architecture's compute fabric, a
    leaf pair) the in-band leaves are the compute pair when the ports fit (:func:`_collapse`).
    """
    n = spec.networks
    st = n.storage
    skus: list[str] = ["", "", ""]
    radix = [0, 0, 0]
    if st.design == "separate":
        sw, radix[0], _ = _sku(hw, st.switch, n.storage_ports.speed, "networks.storage.switch", "node storage")
        skus[0] = sw.sku
    sw, radix[1], _ = _sku(hw, n.inband.switch, n.inband_ports.speed, "networks.inband.switch", "node in-band")
    skus[1] = sw.sku
    mgmt: dict[str, Any] = {}
    if n.inband.management_switch is not None and n.management_servers and n.inband.management_ports:
        msw, mradix, _ = _sku(hw, n.inband.management_switch, n.inband.management_speed or n.inband_ports.speed, "networks.inband.management_switch", "management servers' in-band")
        if msw.uplink_ports and n.inband.management_uplinks > msw.uplink_ports:
            raise InputError([Problem("networks.inband.management_uplinks", f"{n.inband.management_uplinks} uplinks per management leaf, but the {msw.sku} has {msw.uplink_ports} uplink ports beside its {mradix} access ports (catalog {hw.label})", f"management_uplinks: at most {msw.uplink_ports}")])
        mgmt = {"mgmt_radix": mradix, "mgmt_sku": msw.sku}
    sw, radix[2], _ = _sku(hw, n.oob.switch, n.bmc_ports.speed, "networks.oob.switch", "BMC")
    skus[2] = sw.sku
    if sw.uplink_ports and n.oob.uplinks > sw.uplink_ports:
        raise InputError([Problem("networks.oob.uplinks", f"{n.oob.uplinks} uplinks per OOB switch, but the {sw.sku} has {sw.uplink_ports} uplink ports beside its {radix[2]} access ports (catalog {hw.label})", f"oob.uplinks: at most {sw.uplink_ports}, or an OOB switch with more uplink ports (networks.oob.switch)")])
    tspeed = st.target_speed or n.storage_ports.speed
    targets = st.target_ports
    sized = ""
    su = n.scalable_unit or spec.scalable_unit or 0
    if st.target_ports_per_su is not None and st.design != "none":
        if not su:
            raise InputError([Problem("networks.storage.target_ports_per_su", "target ports per scalable unit, but the spec has no scalable unit", "give networks.scalable_unit (nodes per SU, e.g. 32), or target_ports")])
        sus = ceil(spec.nodes / su)
        targets, sized = st.target_ports_per_su * sus, f"storage: {st.target_ports_per_su * sus:,} target ports, {st.target_ports_per_su} for each of {plural(sus, 'scalable unit')} (networks.storage.target_ports_per_su)"
    if targets is None and st.design != "none":
        if aggregate_GBps:
            targets, sized = ceil(aggregate_GBps * 8 / tspeed), f"{aggregate_GBps:,.0f} GB/s required in all"
        elif per_node_GBps:
            targets, sized = ceil(per_node_GBps * spec.nodes * 8 / tspeed), f"{per_node_GBps:g} GB/s per node x {spec.nodes:,} nodes at once"
        else:
            targets = 0
        if sized:
            sized = f"storage: {targets:,} target ports of {tspeed}G sized from {sized} (networks.storage.target_ports not given)"
    plan = nw.NetworkPlan(spec.nodes, spec.gpus, spec.hb_domain, spec.gpus_per_node, su, nodes_per_rack, switches_per_rack, compute_switches, n, radix[0], radix[1], radix[2], targets or 0, tuple(skus), compute_switch_racks, oob_uplink_ports=sw.uplink_ports, target_ports_from=sized, naming=spec.naming, **mgmt)  # type: ignore[arg-type]
    if n.inband.collapsed_core:
        plan = _collapse(plan, spec, hw, compute)
    return plan


def names_of(compute) -> str:
    """``leaf-a/leaf-b``: the compute leaf pair a collapsed core would be."""
    return "/".join(s.name for s in compute.switches[:2])


def _collapse(plan: nw.NetworkPlan, spec, hw: Catalog, compute) -> nw.NetworkPlan:
    """The Enterprise RA's collapsed core: the in-band leaves on the compute leaf pair's free cages, when everything fits.

    Port arithmetic on the one switch model: the compute pair's leaf uses ``ceil(top port /
    ports per cage)`` cages at the GPU speed (its GPU, inter-switch and reserved ports);
    the in-band units, the customer uplinks and the OOB uplinks then need one
    port per unit at the in-band speed, ``ports per cage`` of them to a cage, on the rest.
    Fits: the pair is the in-band leaf pair. Does not: the plan keeps a converged pair of
    its own (the RA's CSL beside its GSL), and the build says why in an assumption.
    """
    from dataclasses import replace

    field = "networks.inband.collapsed_core"
    if compute is None or spec.design != "leaf-pair" or len(compute.switches) < 2:
        raise InputError([Problem(field, f"a collapsed core puts the converged ports on the compute fabric's leaf pair, but the compute fabric is design: {spec.design}", "design: leaf-pair (the Enterprise RA single tier), or collapsed_core: false")])
    leaf_sku, mode = hw.switch_at(spec, 1, compute.tiers)  # type: ignore[misc]
    if leaf_sku.sku != plan.skus[1]:
        raise InputError([Problem(field, f"a collapsed core is one switch model, but the compute leaves are {leaf_sku.sku} and the in-band switch {plan.skus[1]}", f"networks.inband.switch: {leaf_sku.sku}, or collapsed_core: false")])
    _, ib_radix, ib_per_cage = _sku(hw, plan.skus[1], plan.net.inband_ports.speed, "networks.inband.switch", "node in-band")
    cages = int(mode.radix) // mode.per_cage
    top = 0
    for t in (compute.links, compute.isls):
        for dev, port in ((t.z_dev, t.z_port), (t.a_dev, t.a_port)):
            on = (dev == compute.gpus) | (dev == compute.gpus + 1)
            if on.any():
                top = max(top, int(port[on].max()))
    for sw_i, _first, last in compute.reserved:
        if sw_i in (0, 1):
            top = max(top, last)
    used = -(-top // mode.per_cage)
    if used >= cages or ib_radix // ib_per_cage != cages:  # no cage left (or the modes disagree on the cages): a pair of its own
        return replace(plan, collapsed_note=f"inband: the compute ports take {used} of {names_of(compute)}'s {cages} cages: a converged leaf pair of its own (the collapsed core splits)")
    names = tuple(s.name for s in compute.switches[:2])
    trial = replace(plan, collapsed=(0, 1), collapsed_names=names, inband_reserved=used * ib_per_cage, inband_per_cage=ib_per_cage)
    try:
        nw.solve(trial)
    except InputError:
        note = f"inband: the converged ports do not fit beside the compute ports on {names_of(compute)} ({used} of {cages} cages taken at {spec.speed_at(1)}G): a converged leaf pair of its own (the collapsed core splits)"
        return replace(plan, collapsed_note=note)
    return trial


ACCESS, TRUNK = 1, 2  # the media rules' link tiers the networks' cables match (gpu-leaf-like, leaf-spine-like)
TRUNK_ROLES = (nw.R_UP, nw.R_SUPER, nw.R_ISL, nw.R_OOBUP, nw.R_CORE)
OUTSIDE_NAMES = {nw.TARGETS: "the storage targets", nw.NFS: "the NFS storage", nw.CORE: "the data-centre core"}  # devices the plan does not place


@dataclass(frozen=True, slots=True)
class NetworkBom:
    """One network's bill of materials: switches, transceivers and cables, priced lines.

    ``lines`` are :class:`~topogen.bom.bill.BomLine`: ``tier`` the media rules' link tier
    (0 for switches), ``where`` the switch role or cable role, ``end`` ``switch`` or
    ``device`` for a transceiver. ``cables`` counts cables by (role, Gb/s).
    """

    network: str
    lines: tuple[BomLine, ...]
    cables: tuple[tuple[str, int, int], ...]  # (role, Gb/s, quantity)
    ports: int  # switch ports in use (a management port not counted)
    assumed: int  # cables priced at assumed_m (an end outside the plan)
    media: tuple[tuple[str, str, int, int], ...] = ()  # (cable role, media name, Gb/s, cables)
    cable_skus: tuple[Cable, ...] = ()  # the catalog cables the lines use
    cables_priced: int = 0  # cables given a cable SKU (a splitter's legs each count: its line counts splitters)
    assumed_m: float = OUTSIDE_RUN_M  # the length they are priced at (spec layout.outside_run_m)
    outside: tuple[str, ...] = ()  # what those cables lead to (OUTSIDE_NAMES); empty when priced without a layout

    def quantity(self, category: str) -> int:
        return sum(x.quantity for x in self.lines if x.category == category)

    @property
    def switches(self) -> tuple[BomLine, ...]:
        return tuple(x for x in self.lines if x.category == "switch")

    @property
    def switch_count(self) -> int:
        return self.quantity("switch")

    @property
    def cable_count(self) -> int:
        return sum(q for _, _, q in self.cables)

    def cost_of(self, category: str | None = None) -> float:
        return money(sum(x.quantity * x.unit_price for x in self.lines if category in (None, x.category)))

    def power_of(self, category: str | None = None) -> float:
        return money(sum(x.quantity * x.unit_power_w for x in self.lines if category in (None, x.category)))

    @property
    def cost(self) -> float:
        return self.cost_of()

    @property
    def power_w(self) -> float:
        return self.power_of()

    @property
    def switch_cost(self) -> float:
        return self.cost_of("switch")

    def cable_length(self, sku: str) -> float | str:
        """The length of cable ``sku`` (its lines carry it; "" for an unknown SKU)."""
        return next((x.length_m for x in self.cable_skus if x.sku == sku), "")

    def notes(self) -> list[str]:
        """What the reader must know to trust the lines: the assumed runs."""
        if not self.assumed:
            return []
        what = f"to {' and '.join(self.outside)}, which the plan does not place," if self.outside else "without a layout"
        return [f"{self.network}: {self.assumed:,} cable(s) {what} have no length; priced at {money(self.assumed_m)} m each (an assumption, layout.outside_run_m: by default the longest cross-row run)"]

    def sku_lines(self) -> list[SkuLine]:
        """Lines aggregated per SKU, in first-use order, ``used_in`` naming the roles (and transceiver ends): :func:`topogen.bom.bill.sku_lines`."""
        return sku_lines(self.lines)

    def totals(self) -> dict[str, Any]:
        return {
            "switches": self.switch_count,
            "transceivers": self.quantity("transceiver"),
            "cables": self.cable_count,
            "cost": self.cost,
            "power_w": self.power_w,
            "switch_cost": self.cost_of("switch"),
            "transceiver_cost": self.cost_of("transceiver"),
            "cable_cost": self.cost_of("cable"),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "network": self.network,
            "switches": self.switch_count,
            "switch_lines": [{"sku": x.sku, "role": x.where, "quantity": x.quantity, "unit_price_usd": x.unit_price, "unit_power_w": x.unit_power_w} for x in self.switches],
            "cables": self.cable_count,
            "cable_lines": [{"role": r, "speed_gbps": sp, "quantity": q} for r, sp, q in self.cables],
            "media": [{"role": r, "media": m, "speed_gbps": sp, "cables": q} for r, m, sp, q in self.media],
            "lines": [_line_dict(x) for x in self.lines],
            "switch_ports_used": self.ports,
            "switch_transceivers": sum(x.quantity for x in self.lines if x.category == "transceiver" and x.end == "switch"),
            "device_transceivers": sum(x.quantity for x in self.lines if x.category == "transceiver" and x.end == "device"),
            "switch_cost_usd": self.cost_of("switch"),
            "transceiver_cost_usd": self.cost_of("transceiver"),
            "cable_cost_usd": self.cost_of("cable"),
            "cost_usd": self.cost,
            "power_w": self.power_w,
            "cables_at_assumed_length": self.assumed,
            "assumed_length_m": self.assumed_m,
            "cables_priced": self.cables_priced,
            "media_priced": True,
        }


def _line_dict(x: BomLine) -> dict[str, Any]:
    d = {f: getattr(x, f) for f in x.__slots__}
    d["extended_price"] = x.extended_price
    d["total_power_w"] = x.total_power_w
    return d


def network_bom(n: nw.Networks, hw: Catalog, length_m: np.ndarray | None = None, assumed_m: float = OUTSIDE_RUN_M) -> list[NetworkBom]:
    """A :class:`NetworkBom` per network that has switches, in :data:`~topogen.fabric.networks.NETWORK_NAMES` order.

    ``length_m``: each cable's sold length (:class:`~topogen.layout.networks.NetworkLayout`;
    NaN for an end outside the plan, priced at ``assumed_m``, the spec's
    ``layout.outside_run_m``); ``None`` prices every cable at ``assumed_m``.
    Raises :class:`~topogen.util.errors.InputError` naming a run no media rule reaches.
    """
    by_sku = {s.sku: s for s in hw.switches}
    length = np.full(len(n.cables), np.nan) if length_m is None else np.asarray(length_m, dtype=np.float64)
    out, problems = [], []
    for k, name in enumerate(nw.NETWORK_NAMES):
        sws = n.switches_of(k)
        if not sws:
            continue
        sel = np.flatnonzero(n.cables.net == k)
        c = n.cables.take(n.cables.net == k)
        lines: list[BomLine] = []
        counted: dict[tuple[str, str], int] = {}
        for s in sws:
            if s.compute < 0:  # a collapsed core's leaf is the compute fabric's box, in its BOM
                counted[(s.sku, s.role)] = counted.get((s.sku, s.role), 0) + 1
        for (sku, role), q in counted.items():
            sw = by_sku[sku]
            radix = next(s.radix for s in sws if s.sku == sku)
            lines.append(BomLine("switch", sku, sw.description, 0, role, "", q, sw.unit_price(radix), sw.power_w, sw.price_source, sw.power_source))
        keys, qty = np.unique(np.stack([c.role.astype(np.int64), c.speed.astype(np.int64)]), axis=1, return_counts=True) if len(c) else (np.zeros((2, 0), np.int64), np.zeros(0, np.int64))
        cables = tuple((nw.ROLE_NAMES[int(r)], int(sp), int(q)) for (r, sp), q in zip(keys.T, qty))
        run = length[sel]
        assumed = np.isnan(run)
        run = np.where(assumed, assumed_m, run)
        priced, media, problems_k, legs = _price(n, hw, k, c, run, sws, by_sku, assumed)
        problems += problems_k
        lines += priced
        data = (c.a_kind == nw.SWITCH) & (c.role != nw.R_MPORT)
        ends = int(data.sum() + (c.z_kind == nw.SWITCH).sum())
        used = tuple(hw.cables[x.sku] for x in priced if x.category == "cable")
        ext = np.isin(c.a_kind, list(OUTSIDE_NAMES)) | np.isin(c.z_kind, list(OUTSIDE_NAMES))
        far = set(c.a_kind[assumed].tolist()) | set(c.z_kind[assumed].tolist()) if not (assumed & ~ext).any() else set()  # no layout: every cable assumed
        out.append(NetworkBom(name, tuple(lines), cables, ends, int(assumed.sum()), media, tuple(dict.fromkeys(used)), legs, float(assumed_m), tuple(v for kind, v in OUTSIDE_NAMES.items() if kind in far)))
    if problems:
        raise InputError(problems)
    return out


def _price(n: nw.Networks, hw: Catalog, k: int, c: nw.CableTable, run: np.ndarray, sws: list, by_sku: dict[str, SwitchSku], assumed: np.ndarray) -> tuple[list[BomLine], tuple, list[Problem], int]:
    """Transceiver and cable lines of network ``k``'s cables ``c`` (runs ``run`` metres, ``assumed`` where an end is outside the plan), the media used, the runs no rule reaches, and the cables given a cable SKU."""
    skus = sorted(by_sku)
    sku_id = np.asarray([skus.index(s.sku) for s in n.switches] or [0], dtype=np.int64)
    z_sku = np.where(c.z_kind == nw.SWITCH, sku_id[np.where(c.z_kind == nw.SWITCH, c.z_idx, 0)], -1)
    a_sku = np.where(c.a_kind == nw.SWITCH, sku_id[np.where(c.a_kind == nw.SWITCH, c.a_idx, 0)], -1)
    tier = np.where(np.isin(c.role, TRUNK_ROLES), TRUNK, ACCESS).astype(np.int64)
    runs, run_of = np.unique(run, return_inverse=True)
    run_of = run_of.reshape(-1)
    # one group per (tier, z SKU, a SKU, speed, run, role): a few dozen, resolved one by one (a rule may name the roles it takes)
    group_keys = np.stack([tier, z_sku, a_sku, c.speed.astype(np.int64), run_of.astype(np.int64), c.role.astype(np.int64)])
    groups, group_of = np.unique(group_keys, axis=1, return_inverse=True) if len(c) else (np.zeros((6, 0), np.int64), np.zeros(0, np.int64))
    group_of = group_of.reshape(-1)
    media: list[Media] = []
    index = np.zeros(len(c), dtype=np.int64)
    cable_sku = np.full(len(c), "", dtype=object)
    holder = np.full(len(c), -1, dtype=np.int64)
    problems: list[Problem] = []
    for g, (t, zs, as_, speed, r, rl) in enumerate(groups.T.tolist()):
        role = nw.ROLE_NAMES[rl]
        sw, mode = _switch_for(hw, [skus[i] for i in (zs, as_) if i >= 0], sws[0].sku, int(speed), by_sku)
        run_m = float(runs[r])
        cls = CLASS_NAMES[int(length_classes(np.asarray([run_m]))[0])]
        m, unfit = cat.resolve_media(hw, int(t), 1, sw, mode, int(speed), None, length=cls, skip_unfit=True, run_m=run_m, breakouts=False, role=role)
        if m is None:  # no one-to-one cable: a splitter from one cage (the xdr-800g catalog's 200G media)
            m, unfit = cat.resolve_media(hw, int(t), 1, sw, mode, int(speed), None, length=cls, skip_unfit=True, run_m=run_m, role=role)
        on = group_of == g
        if m is None:
            if cat.longest_reach(hw, int(t), sw, int(speed), role=role)[0] < run_m:
                problems.append(_unreachable(n, hw, k, c, np.flatnonzero(on), int(t), sw, int(speed), run_m, bool(assumed[on].all())))
            else:  # a rule reaches but cannot build these cables (speed, cage): the catalog's own problems
                problems += [x for x in unfit if x not in problems]
            continue
        # the switch whose cage a splitter leaves: the end whose SKU gave the media
        holder[on] = np.where(z_sku[on] == skus.index(sw.sku), c.z_idx[on], np.where(a_sku[on] == skus.index(sw.sku), c.a_idx[on], -1))
        index[on] = add_unique(media, m)
        rule = hw.rules[m.rule]
        fit = next((hw.cables[s] for s in rule.cables if hw.cables[s].length_m >= run_m - 1e-9), None)
        if fit is not None:
            cable_sku[on] = fit.sku
    if problems:
        return [], (), problems, 0
    lines: list[BomLine] = []
    roles = c.role.astype(np.int64)
    mod_of = {attr: np.asarray([getattr(m, attr).sku if getattr(m, attr) is not None else "" for m in media] + [""], dtype=object) for attr in ("transceiver", "gpu_transceiver")}
    ends = []  # (module SKU, end label, device key, role) of every cable end, all roles: a module serves ports of one device
    for side, kinds, idxs in (("a", c.a_kind, c.a_idx), ("z", c.z_kind, c.z_idx)):
        mods = mod_of["transceiver"][index] if side == "z" else np.where(tier == ACCESS, mod_of["gpu_transceiver"][index], mod_of["transceiver"][index])
        ends.append((mods, np.where(kinds == nw.SWITCH, "switch", "device"), kinds.astype(np.int64) * (1 << 40) + idxs.astype(np.int64), roles))
    mods, label, dev, end_role = (np.concatenate(x) for x in zip(*ends))
    for sku in sorted(set(mods.tolist()) - {""}):
        tx = hw.transceivers[sku]
        for end in ("switch", "device"):
            on = (mods == sku) & (label == end)
            if not on.any():
                continue
            _, per = np.unique(dev[on], return_counts=True)
            qty = int((-(-per // tx.ports_per_module)).sum())
            used = ", ".join(nw.ROLE_NAMES[r] for r in np.unique(end_role[on]).tolist())
            lines.append(BomLine("transceiver", sku, tx.description, int(tier[np.flatnonzero(on) % len(c)].min()), used, end, qty, tx.price_usd, tx.power_w, tx.price_source, tx.power_source))
    for role in np.unique(roles).tolist():
        of = roles == role
        rname = nw.ROLE_NAMES[role]
        t = int(tier[of][0])
        cs = cable_sku[of]
        harness = _harnesses(hw, cs, run[of], holder[of])
        for sku in sorted(set(cs.tolist()) - {""}, key=lambda s: (hw.cables[s].length_m, s)):
            cb = hw.cables[sku]
            qty = harness.get(sku, 0) if cb.links_per_cable > 1 else int((cs == sku).sum())
            if qty:
                lines.append(BomLine("cable", sku, cb.description, t, rname, "", qty, cb.price_usd, cb.power_w, cb.price_source, cb.power_source))
    lines = _merge(lines)
    used: dict[tuple[str, str, int], int] = {}  # a rule's Media differ by length class: one entry per rule name
    keys = np.stack([roles, index, c.speed.astype(np.int64)])
    uk, uq = np.unique(keys, axis=1, return_counts=True)
    for (role, i, sp), q in zip(uk.T.tolist(), uq.tolist()):
        key = (nw.ROLE_NAMES[role], media[i].name, int(sp))
        used[key] = used.get(key, 0) + int(q)
    return lines, tuple((*key, q) for key, q in used.items()), [], int((cable_sku != "").sum())


def _harnesses(hw: Catalog, cable_sku: np.ndarray, run: np.ndarray, holder: np.ndarray) -> dict[str, int]:
    """Splitter cables by SKU: the legs of one cable role on one switch, shortest first, ``links_per_cable`` to a cable.

    A splitter's legs leave one cage, so they share a switch; each cable takes the SKU of
    its longest leg (the compute BOM's rule for breakout cables). ``cable_sku`` is updated
    to that SKU for every leg.
    """
    lpc = np.asarray([hw.cables[x].links_per_cable if x else 1 for x in cable_sku.tolist()], dtype=np.int64)
    split = np.flatnonzero(lpc > 1)
    out: dict[str, int] = {}
    if not len(split):
        return out
    order = split[np.lexsort((run[split], holder[split]))]
    h = holder[order]
    start = np.r_[0, np.flatnonzero(np.diff(h)) + 1]
    pos = np.arange(len(order)) - np.repeat(start, np.diff(np.r_[start, len(order)]))
    per = lpc[order]
    chunk = np.cumsum(np.r_[True, (np.diff(h) != 0) | (pos[1:] // per[1:] != pos[:-1] // per[:-1])]) - 1
    last = np.r_[np.flatnonzero(np.diff(chunk)), len(order) - 1]  # each cable's longest leg (sorted by run)
    per_chunk = cable_sku[order[last]]
    cable_sku[order] = per_chunk[chunk]
    skus, counts = np.unique(per_chunk.astype(str), return_counts=True)
    return {str(k): int(q) for k, q in zip(skus.tolist(), counts.tolist())}


def _merge(lines: list[BomLine]) -> list[BomLine]:
    """One line per (category, SKU, role, end): the a and z ends of a trunk add up."""
    out: dict[tuple, BomLine] = {}
    for x in lines:
        key = (x.category, x.sku, x.where, x.end)
        if key in out:
            y = out[key]
            out[key] = BomLine(y.category, y.sku, y.description, y.tier, y.where, y.end, y.quantity + x.quantity, y.unit_price, y.unit_power_w, y.price_source, y.power_source)
        else:
            out[key] = x
    order = {"transceiver": 0, "cable": 1}
    return sorted(out.values(), key=lambda x: order[x.category])


def _switch_for(hw: Catalog, ends: list[str], own: str, speed: int, by_sku: dict[str, SwitchSku]) -> tuple[SwitchSku, PortMode]:
    """The switch SKU whose media rules a cable at ``speed`` follows, and its port mode there.

    The first of the cable's switch ends (upper end first) that runs ports at ``speed``,
    else the network's own switch ``own``; an end at a speed that is no port mode of its
    SKU (an OOB switch's uplink) is one port per cage.
    """
    for sku in ends + [own]:
        mode = next((m for m in by_sku[sku].ports if m.speed == speed), None)
        if mode is not None:
            return by_sku[sku], mode
    return by_sku[(ends + [own])[0]], PortMode(speed, None, 1)


def _unreachable(n: nw.Networks, hw: Catalog, k: int, c: nw.CableTable, cables: np.ndarray, tier: int, sw: SwitchSku, speed: int, run_m: float, assumed: bool = False) -> Problem:
    """The problem of ``cables`` (runs of ``run_m``; ``assumed``: all to devices outside the plan, at layout.outside_run_m) that no media rule reaches: one named, and the longest reach."""
    i = int(cables[0])
    role = int(c.role[i])

    def end(kind, idx, port) -> str:
        return f"{n.device_name(int(kind), int(idx))}:{n.port_name(int(kind), int(port), k, role, int(idx) if kind == nw.SWITCH else -1)}"

    reach, rule = cat.longest_reach(hw, tier, sw, speed, role=nw.ROLE_NAMES[role])
    what = f"{nw.NETWORK_NAMES[k]} {nw.ROLE_NAMES[role]}"
    example = f"e.g. {end(c.a_kind[i], c.a_idx[i], c.a_port[i])} to {end(c.z_kind[i], c.z_idx[i], c.z_port[i])}"
    if not reach:
        return Problem(
            f"catalog {hw.label}: media",
            f"no media rule of catalog {hw.label} matches the {len(cables):,} {what} cable(s) at {speed}G ({example}; {link_tier_name(tier)}-like links on {sw.sku})",
            f"add a media rule with speed: {speed} (and transceivers and cables at that speed), or change the port speed in the spec's networks section",
        )
    has = f"the longest reach it has for {what} links at {speed}G is {metres(reach)} m ({rule})"
    if assumed:
        return Problem(
            "layout.outside_run_m",
            f"{len(cables):,} {what} cable(s) to a device outside the plan ({example}) are priced at the assumed {metres(run_m)} m, longer than any media of catalog {hw.label} reaches: {has}",
            f"give layout.outside_run_m a length the catalog's media reach (at most {metres(reach)} m), or add media for these runs to the catalog",
        )
    return Problem(
        f"catalog {hw.label}: media",
        f"{len(cables):,} {what} cable run(s) of {metres(run_m)} m ({example}) "
        f"are longer than any media of catalog {hw.label} reaches: {has}",
        f"add media for these runs to the catalog (transceivers whose reach_m is at least {metres(run_m)} and a cable at least that long), or shorten the runs (layout: racks_per_row, row_pitch_m); "
        "the spines, servers and (in a hall whose node runs fit) the leaves stand in a management row at the end of the hall, so runs to it grow with the hall; in a larger hall the leaves and OOB switches stand near what they serve",
    )

