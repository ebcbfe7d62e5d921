"""The other networks against the catalog: their switch SKUs resolved, and their bill of materials.

:func:`plan_for` turns the spec's ``networks:`` section into a
:class:`~topogen.fabric.networks.NetworkPlan` (switch radixes from the catalog's SKUs at the
port speeds); :func:`network_bom` counts and prices what the generated networks hold.
Switches are priced from the catalog; cables, ports and transceivers are counted by network
and speed (the catalogs price no media for these networks yet, and the BOM says so).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import Any

import numpy as np

from topogen.bom.catalog import Catalog, SwitchSku
from topogen.fabric import networks as nw
from topogen.util.errors import InputError, Problem


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
    raise InputError([Problem(field, f"no switch of catalog {hw.label} carries {speed}G ports, the {what} port speed", f"the catalog offers {hw.supply()}; add a switch or name one with {field}")])


def plan_for(spec, hw: Catalog, compute_switches: int, nodes_per_rack: int, switches_per_rack: int, aggregate_GBps: float | None, compute_switch_racks: int = -1) -> nw.NetworkPlan:
    """The generators' inputs for ``spec`` (with a ``networks:`` section) and one compute fabric."""
    n = spec.networks
    st = n.storage
    skus: list[str] = ["", "", ""]
    radix = [0, 0, 0]
    if st.design == "separate":
        sw, radix[0], _ = _sku(hw, st.switch, n.storage_ports.speed, "networks.storage.switch", "node storage")
        skus[0] = sw.sku
    sw, radix[1], _ = _sku(hw, n.inband.switch, n.inband_ports.speed, "networks.inband.switch", "node in-band")
    skus[1] = sw.sku
    sw, radix[2], _ = _sku(hw, n.oob.switch, n.bmc_ports.speed, "networks.oob.switch", "BMC")
    skus[2] = sw.sku
    tspeed = st.target_speed or n.storage_ports.speed
    targets = st.target_ports
    if targets is None and st.design != "none":
        targets = ceil(aggregate_GBps * 8 / tspeed) if aggregate_GBps else 0
    su = n.scalable_unit or spec.scalable_unit or 0
    return nw.NetworkPlan(spec.nodes, spec.gpus, spec.hb_domain, spec.gpus_per_node, su, nodes_per_rack, switches_per_rack, compute_switches, n, radix[0], radix[1], radix[2], targets or 0, tuple(skus), compute_switch_racks)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class NetworkBom:
    """One network's switches (priced), cables and transceivers (counted)."""

    network: str
    switches: tuple[tuple[str, str, int, float | None], ...]  # (sku, role, quantity, unit price)
    cables: tuple[tuple[str, int, int], ...]  # (role, Gb/s, quantity)
    transceivers: int  # modules at the switch ends of cables at 100G and faster: a twin-port cage's two ports take one
    device_transceivers: int  # modules at the other ends (nodes, targets, servers): one per port
    ports: int  # switch ports in use (a management port not counted)

    @property
    def switch_count(self) -> int:
        return sum(q for _, _, q, _ in self.switches)

    @property
    def cable_count(self) -> int:
        return sum(q for _, _, q in self.cables)

    @property
    def switch_cost(self) -> float | None:
        prices = [q * u for _, _, q, u in self.switches if u is not None]
        return float(sum(prices)) if len(prices) == len(self.switches) else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "network": self.network,
            "switches": self.switch_count,
            "switch_lines": [{"sku": s, "role": r, "quantity": q, "unit_price_usd": u} for s, r, q, u in self.switches],
            "cables": self.cable_count,
            "cable_lines": [{"role": r, "speed_gbps": sp, "quantity": q} for r, sp, q in self.cables],
            "switch_ports_used": self.ports,
            "switch_transceivers": self.transceivers,
            "device_transceivers": self.device_transceivers,
            "switch_cost_usd": self.switch_cost,
            "media_priced": False,
        }


def _per_cage(sku: SwitchSku | None, speed: int) -> int:
    """Ports per cage of ``sku`` at ``speed`` (1 when the catalog does not say)."""
    mode = next((m for m in sku.ports if m.speed == speed), None) if sku is not None else None
    return mode.per_cage if mode is not None else 1


def network_bom(n: nw.Networks, hw: Catalog) -> list[NetworkBom]:
    """A :class:`NetworkBom` per network that has switches, in :data:`~topogen.fabric.networks.NETWORK_NAMES` order."""
    by_sku = {s.sku: s for s in hw.switches}
    out = []
    for k, name in enumerate(nw.NETWORK_NAMES):
        sws = n.switches_of(k)
        if not sws:
            continue
        lines: dict[tuple[str, str], int] = {}
        for s in sws:
            lines[(s.sku, s.role)] = lines.get((s.sku, s.role), 0) + 1
        switches = tuple((sku, role, q, by_sku[sku].unit_price(sws[0].radix) if sku in by_sku and by_sku[sku].price_usd is not None else None) for (sku, role), q in lines.items())
        c = n.cables_of(k)
        keys, qty = np.unique(np.stack([c.role.astype(np.int64), c.speed.astype(np.int64)]), axis=1, return_counts=True) if len(c) else (np.zeros((2, 0), np.int64), np.zeros(0, np.int64))
        cables = tuple((nw.ROLE_NAMES[int(r)], int(sp), int(q)) for (r, sp), q in zip(keys.T, qty))
        data = (c.a_kind == nw.SWITCH) & (c.role != nw.R_MPORT)
        fast = c.speed >= 100  # taken as optical: a module at each end (a DAC would take none: not told apart yet)
        sw = np.concatenate([c.a_idx[data & fast], c.z_idx[(c.z_kind == nw.SWITCH) & fast]])
        per_switch = np.bincount(sw, minlength=len(n.switches))
        cage = np.asarray([_per_cage(by_sku.get(s.sku), s.speed) for s in n.switches], np.int64)
        modules = int((-(-per_switch // np.maximum(cage, 1))).sum())
        device = int((fast & (c.a_kind != nw.SWITCH)).sum() + (fast & (c.z_kind != nw.SWITCH)).sum())
        ends = int(data.sum() + (c.z_kind == nw.SWITCH).sum())
        out.append(NetworkBom(name, switches, cables, modules, device, ends))
    return out
