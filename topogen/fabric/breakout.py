"""Breakout cables: one cable from a switch cage fanned out to several slower links (its legs).

A catalog cable with ``links_per_cable: k`` (a 400G QSFP-DD to 2 x 200G DAC, an MPO-16 to
2 x MPO-8 fibre) leaves one cage of the upper switch of its link tier and carries ``k``
links: the legs on ports ``c·k+1 .. c·k+k`` of that switch are one cable. This module
groups the links of a fabric into those cables, once, for the BOM (which counts cables,
not legs), the cabling files (each leg names its cable, ``leaf-g00-r0:p1-p2``) and NetBox.

A group takes the cable SKU of its longest leg (the legs of one harness are cut to the
farthest NIC). Everything is numpy columns over links.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from topogen.fabric.view import view


@dataclass
class Breakouts:
    """The breakout cables of one fabric.

    ``group[i]`` is the breakout cable of link ``i`` (-1: the link is a cable of its own);
    per breakout cable: ``switch`` (device id of the cage end), ``first`` (its first port),
    ``legs`` (ports per cable, ``k``), ``used`` (legs cabled), ``cable`` (index into the
    link media's cable SKUs, the longest leg's) and ``first_link`` (one of its links).
    """

    group: np.ndarray
    switch: np.ndarray
    first: np.ndarray
    legs: np.ndarray
    used: np.ndarray
    cable: np.ndarray
    first_link: np.ndarray

    def __len__(self) -> int:
        return len(self.switch)

    def unify(self, link_media) -> None:
        """Give every leg its harness's SKU, length and media: those of its longest leg (``first_link``).

        A harness is bought as one SKU of one length, cut to the farthest NIC, so
        its legs must not be priced, routed or listed at two lengths. Changes
        ``link_media`` in place, and with it the layout's lengths (the same array).
        """
        legs = np.flatnonzero(self.group >= 0)
        if not len(legs):
            return
        rep = self.first_link[self.group[legs]]
        link_media.cable[legs] = self.cable[self.group[legs]]
        link_media.length_m[legs] = link_media.length_m[rep]
        link_media.index[legs] = link_media.index[rep]

    def cables_mask(self) -> np.ndarray:
        """True for one link per cable: every link that is no leg, and one leg of each harness."""
        mask = self.group < 0  # a new array
        mask[self.first_link] = True
        return mask

    def names(self, fabric, groups: np.ndarray) -> list[str]:
        """``<switch>:<first>-<last>`` of each breakout cable in ``groups``: the cage ports its legs use, as the switch names them (``p1-p2``, ``Ethernet0-Ethernet4``)."""
        n = fabric.gpus
        sw = fabric.switches
        s = self.switch[groups].astype(np.int64) - n
        first = self.first[groups].astype(np.int64)
        names = view(fabric).switch_ports
        lo, hi = names(s, first).tolist(), names(s, first + self.legs[groups] - 1).tolist()
        return [f"{sw[d].name}:{a}-{b}" for d, a, b in zip(s.tolist(), lo, hi)]


def of(fabric, link_media) -> Breakouts:
    """Group the cables of ``fabric`` (``cable_table()``: links, then ISLs) whose cable SKU carries several links (``links_per_cable > 1``)."""
    L = fabric.cable_table()
    lm = link_media
    per_cable = np.asarray([c.links_per_cable for c in lm.cables] or [1], np.int64)
    lengths = np.asarray([c.length_m for c in lm.cables] or [0.0], np.float64)
    k = np.where(lm.cable >= 0, per_cable[np.maximum(lm.cable, 0)], 1)
    leg = np.flatnonzero(k > 1)
    group = np.full(len(L), -1, np.int64)
    if not len(leg):
        z = np.zeros(0, np.int64)
        return Breakouts(group, z, z, z, z, z, z)
    kz = k[leg]
    cage = (L.z_port[leg].astype(np.int64) - 1) // kz
    # one integer per (switch, cage, legs), in that order: the rows of np.unique(axis=0), ten times faster
    C, K = int(cage.max()) + 1, int(kz.max()) + 1
    key = (L.z_dev[leg].astype(np.int64) * C + cage) * K + kz
    uk, inv = np.unique(key, return_inverse=True)
    inv = inv.ravel()
    group[leg] = inv
    used = np.bincount(inv, minlength=len(uk))
    uk = np.stack([uk // (C * K), uk // K % C, uk % K], axis=1)  # switch, cage, legs
    # the longest leg's SKU (ties: the lower SKU index, deterministic)
    order = np.lexsort((lm.cable[leg], -lengths[lm.cable[leg]], inv))
    firsts = np.r_[0, np.flatnonzero(np.diff(inv[order])) + 1]
    cable = lm.cable[leg][order][firsts].astype(np.int64)
    return Breakouts(group, uk[:, 0], uk[:, 1] * uk[:, 2] + 1, uk[:, 2], used, cable, leg[order][firsts])
