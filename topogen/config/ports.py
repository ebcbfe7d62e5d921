"""A switch's cabled ports as network operating systems name them: speed, breakout cage and leg.

Shared by the SONiC and Cumulus NVUE renderers. A port ``p<n>`` of topogen is
one link; when the BOM groups links into breakout cables
(:mod:`topogen.breakout`: a 400G cage fanned out to 2 x 200G NICs), ports
``c·k+1 .. c·k+k`` are the legs of cage ``c``. Names:

* SONiC: cage ``c`` (from 0) starts at ``Ethernet<8c>`` (8 lanes a cage,
  OSFP/QSFP-DD); leg ``j`` of a cage split ``k`` ways is ``Ethernet<8c +
  j·8/k>`` with ``8/k`` lanes, the cage's ``BREAKOUT_CFG`` mode
  ``<k>x<speed>G``. Without breakout every port is its own cage.
* Cumulus: ``swp<c+1>``, a leg ``swp<c+1>s<j>``, the cage's
  ``link.breakout`` ``<k>x``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from topogen.config.addressing import Addressing, ip_text, plan
from topogen.fabric.ports import LANES, names
from topogen.fabric.view import view


@dataclass(frozen=True, slots=True)
class PortNames:
    """Per switch-side end of :class:`~topogen.config.addressing.Ends`: cage, leg, legs per cage, speed (Gb/s)."""

    cage: np.ndarray
    leg: np.ndarray
    legs: np.ndarray
    speed: np.ndarray
    cable_m: np.ndarray | None = None  # the sold length (m) of each end's cable, from the BOM; None without one

    def _first_lane(self, rows) -> np.ndarray:
        return LANES * self.cage[rows] + self.leg[rows] * (LANES // self.legs[rows])

    def sonic(self, rows) -> np.ndarray:
        """``Ethernet<first lane>`` of each end (object array)."""
        return names("sonic", self.cage[rows], self.leg[rows], self.legs[rows])

    def sonic_lanes(self, rows) -> np.ndarray:
        """The comma-separated lanes of each end (object array), from a table of the distinct (first lane, lanes) pairs."""
        key = self._first_lane(rows) * (LANES + 1) + LANES // self.legs[rows]
        if not len(key):
            return np.empty(0, dtype=object)
        uniq, inv = np.unique(key, return_inverse=True)
        text = np.array([",".join(str(x) for x in range(f, f + m)) for f, m in zip((uniq // (LANES + 1)).tolist(), (uniq % (LANES + 1)).tolist())], dtype=object)
        return text[inv.reshape(-1)]

    def cumulus(self, rows) -> np.ndarray:
        """``swp<cage + 1>``, or ``swp<cage + 1>s<leg>`` for a breakout leg (object array)."""
        return names("cumulus", self.cage[rows], self.leg[rows], self.legs[rows])


def port_names(ctx, fabric, ad) -> PortNames:
    """Cage, leg and speed of every switch-side end of the plan ``ad`` (breakouts from the build's BOM)."""
    e = ad.ends
    L = fabric.cable_table()  # e.link: the links, then a leaf pair's ISLs
    legs = np.ones(len(e.switch), np.int64)
    bom = getattr(ctx, "boms", {}).get(fabric.arch) if ctx is not None else None
    br = getattr(bom, "breakouts", None)
    if br is not None and len(br):
        g = np.full(len(e.link), -1, np.int64)  # breakouts group links; an ISL past them is a cable of its own
        on = e.link < len(br.group)
        g[on] = br.group[e.link[on]]
        at = (g >= 0) & ~e.up  # a breakout cable leaves the upper switch's cage: its down ends
        legs[at] = br.legs[g[at]]
    speed = np.where(e.up, L.a_speed[e.link], L.z_speed[e.link]).astype(np.int64)
    media = getattr(bom, "link_media", None)
    cable_m = None
    if media is not None and len(media.length_m) >= (int(e.link.max()) + 1 if len(e.link) else 0):
        cable_m = np.ceil(np.asarray(media.length_m, dtype=np.float64)[e.link] - 1e-9).astype(np.int64)
    sp = view(fabric).native
    if sp.native:  # the switches' own names (topogen.fabric.ports): the cages every other file names
        code = sp.codes(e.switch, e.port.astype(np.int64))
        return PortNames(sp.cage[code], sp.leg[code], sp.legs[code], speed, cable_m)
    legs = np.maximum(legs, _cage_ports(ctx, fabric, bom, e.switch, speed))
    port0 = e.port.astype(np.int64) - 1
    cage = port0 // legs
    leg = port0 % legs
    # ports past a switch's down ports (its uplinks) fill the cages after the down ports' cages: a
    # 200G leaf with 128 down ports two to a cage has its 400G uplinks p129.. in cages 64..
    down = np.fromiter((sw.down_ports for sw in fabric.switches), np.int64, len(fabric.switches))[e.switch] if len(e.switch) else np.zeros(0, np.int64)
    above = port0 >= down
    if above.any():
        down_legs = np.ones(len(fabric.switches), np.int64)
        np.maximum.at(down_legs, e.switch[~above], legs[~above])
        first = -(-down[above] // down_legs[e.switch[above]])
        cage[above] = first + (port0[above] - down[above]) // legs[above]
        leg[above] = (port0[above] - down[above]) % legs[above]
    return PortNames(cage, leg, legs, speed, cable_m)


def _cage_ports(ctx, fabric, bom, switch: np.ndarray, speed: np.ndarray) -> np.ndarray:
    """Ports per cage of each end: the catalog port mode's ``per_cage`` of its switch's SKU (its tier's) at the end's speed; 1 where the catalog does not say.

    A 64-cage SN5600 run as 128 x 400G has two ports in each cage (``Ethernet0``,
    ``Ethernet4``; ``swp1s0``, ``swp1s1``), whether or not a breakout cable
    leaves it.
    """
    out = np.ones(len(switch), np.int64)
    hw = getattr(ctx, "catalog", None) if ctx is not None else None
    if hw is None or bom is None or not len(switch):
        return out
    by_sku = {x.sku: x for x in hw.switches}
    skus = bom.switch_skus
    tier = np.fromiter((sw.tier for sw in fabric.switches), np.int64, len(fabric.switches))
    radix = np.fromiter((sw.radix for sw in fabric.switches), np.int64, len(fabric.switches))
    key = (tier[switch] * (1 << 20) + radix[switch]) * (1 << 20) + speed
    uniq, inv = np.unique(key, return_inverse=True)
    per = np.ones(len(uniq), np.int64)
    for i, k in enumerate(uniq.tolist()):
        t, r, v = k >> 40, (k >> 20) & ((1 << 20) - 1), k & ((1 << 20) - 1)
        sku = by_sku.get(skus[min(t, len(skus)) - 1]) if skus else None
        mode = sku.cage_mode(v, None) if sku is not None and sku.mode(v, r) is None else (sku.mode(v, r) if sku is not None else None)
        per[i] = mode.per_cage if mode is not None else 1
    return per[inv.reshape(-1)]


class EndTexts(NamedTuple):
    """What a per-switch reference rendering (SONiC, NVUE) reads of every switch port end, formatted once."""

    ad: Addressing
    e: Any  # ad.ends
    n: int  # GPUs: peers below are GPU NICs
    pn: PortNames
    addr: np.ndarray  # the end's address text
    peer_addr: np.ndarray
    peer_desc: np.ndarray  # "<peer device>:<peer port>"
    lo: np.ndarray  # loopback text per switch
    rail_mode: bool  # gpu_subnet rail: GPU ports sit in a VLAN per rail


def end_texts(ctx, fabric) -> EndTexts:
    """The addressing plan's switch ends with their texts, for the reference renderings of :mod:`.sonic` and :mod:`.nvue`."""
    ad = plan(fabric)
    e = ad.ends
    v = view(fabric)
    return EndTexts(ad, e, fabric.gpus, port_names(ctx, fabric, ad), ip_text(e.addr), ip_text(e.peer_addr), v.device[e.peer] + ":" + v.ports(e.peer, e.peer_port), ip_text(ad.loopback), ad.spec.gpu_subnet == "rail")
