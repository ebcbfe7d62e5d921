"""Media per cable: chosen by each cable's length and the catalog's rules, not per link tier.

The layout gives every cable a sold length (:mod:`topogen.layout`). A cable's
length class is the shortest class that holds it (``in-rack`` <= 3 m,
``in-row`` <= 15 m, ``cross-row`` <= 30 m, ``cross-hall`` <= 50 m,
``building`` above: typical reaches of copper DAC, of multimode optics, and
single-mode beyond), and its media is the catalog's first rule for its link
tier and class whose transceivers reach both the class and the cable's own
length and that has a cable at least that long: copper (DAC) within reach in
a rack, multimode optics or AOC across a row, single-mode beyond, as the
catalog says. Its cable SKU is the shortest cable of that rule at least as
long as the cable.

A run that no rule reaches (a 140 m run where the longest single-mode trunk
is 100 m, or a 60 m GPU-leaf run in a catalog with 50 m multimode only) is an
input error naming one such run, its length, and the longest reach the
catalog has for its links: pricing it as a shorter SKU would buy a cable
that does not reach.

Everything is per (link tier, sold length) group and numpy columns over links.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from topogen.spec import catalog as cat
from topogen.spec.catalog import LENGTH_CLASSES, Cable, Catalog, Media
from topogen.fabric.model import Fabric
from topogen.fabric.naming import GpuNames, nic_port, switch_port
from topogen.spec.counts import link_tier_name
from topogen.util.errors import InputError, Problem

CLASS_NAMES = tuple(LENGTH_CLASSES)
CLASS_MAX = np.asarray([LENGTH_CLASSES[c] for c in CLASS_NAMES], dtype=np.float64)


@dataclass
class LinkMedia:
    """Media and cable SKU of every cable: indexes into :attr:`media` and :attr:`cables` (-1: no cable SKU).

    Rows are ``fabric.cable_table()``'s: the links, then a leaf pair's ISLs.
    """

    media: list[Media]
    index: np.ndarray
    cables: list[Cable]
    cable: np.ndarray
    length_m: np.ndarray
    notes: list[str] = field(default_factory=list)

    def per_tier(self, tiers: np.ndarray) -> dict[int, Media]:
        """The media most cables of each link tier use (the workbook and NetBox name one per tier)."""
        out: dict[int, Media] = {}
        index = self.index[: len(tiers)]  # the links' rows (any ISLs follow them)
        for t in np.unique(tiers).tolist():
            idx = index[tiers == t]
            out[int(t)] = self.media[int(np.bincount(idx).argmax())]
        return out


def length_classes(length_m: np.ndarray) -> np.ndarray:
    """Index into :data:`CLASS_NAMES` of each length (the last class holds everything longer)."""
    return np.minimum(np.searchsorted(CLASS_MAX, length_m - 1e-9, side="left"), len(CLASS_NAMES) - 1)


def assign(fabric: Fabric, catalog: Catalog, length_m: np.ndarray) -> LinkMedia:
    """Media and cable SKU for every cable of ``fabric`` (``cable_table()``) with sold lengths ``length_m``.

    A leaf pair's ISLs (the rows after the links) join two leaves: they take the
    catalog's switch-to-switch media (a rule for link tier leaf-spine or for every
    tier, one port to one port where the catalog has it) at the leaves' speed.
    """
    spec = fabric.spec
    cat.check_spec(catalog, spec, {fabric.arch: fabric.tiers})
    tiers = fabric.cable_table().tier.astype(np.int64)
    tiers[len(fabric.links) :] = 0  # 0: an ISL
    runs, run_of = np.unique(length_m, return_inverse=True)  # a few sold lengths
    run_of = run_of.reshape(-1)
    key = tiers * len(runs) + run_of
    media: list[Media] = []
    index = np.zeros(len(tiers), dtype=np.int32)
    problems: list[Problem] = []
    for k in np.unique(key).tolist():
        tier, r = divmod(k, len(runs))
        run_m = float(runs[r])
        sel = key == k
        if tier == 0:  # ISLs: leaf to leaf, priced as a switch-to-switch link (media of link tier 2) on the leaves' switch
            sw, mode = catalog.switch_at(spec, 1, fabric.tiers)  # type: ignore[misc]
            speed = spec.speed_at(1)
            cls = CLASS_NAMES[int(length_classes(np.asarray([run_m]))[0])]
            m, unfit = cat.resolve_media(catalog, 2, spec.domains, sw, mode, speed, None, length=cls, skip_unfit=True, run_m=run_m, breakouts=False)
            if m is None:
                m, unfit = cat.resolve_media(catalog, 2, spec.domains, sw, mode, speed, None, length=cls, skip_unfit=True, run_m=run_m)
            if m is None:
                problems += [x for x in unfit if x not in problems]
                continue
            index[sel] = add_unique(media, m)
            continue
        sw, mode = catalog.switch_at(spec, tier, fabric.tiers)  # type: ignore[misc]  # the link tier's upper switch
        speed = spec.speed_at(tier)
        cls = CLASS_NAMES[int(length_classes(np.asarray([run_m]))[0])]
        m, unfit = cat.resolve_media(catalog, tier, spec.domains, sw, mode, speed, spec.gpus_per_node, length=cls, skip_unfit=True, run_m=run_m)
        if unfit:
            problems.append(_unreachable(fabric, catalog, tier, sw, speed, run_m, np.flatnonzero(sel)))
            continue
        index[sel] = add_unique(media, m)
    if problems:
        raise InputError(problems)
    cables: list[Cable] = []
    cable = np.full(len(tiers), -1, dtype=np.int32)
    for i, m in enumerate(media):
        rule = catalog.rules[m.rule]
        if not rule.cables:
            continue
        sel = np.flatnonzero(index == i)
        skus = [catalog.cables[s] for s in rule.cables]
        lens = np.asarray([c.length_m for c in skus], dtype=np.float64)
        pick = np.searchsorted(lens, length_m[sel] - 1e-9, side="left")  # every run is reached (checked above)
        ids = np.asarray([add_unique(cables, c) for c in skus], dtype=np.int32)
        cable[sel] = ids[pick]
    return LinkMedia(media, index, cables, cable, length_m, [])


def _unreachable(fabric: Fabric, catalog: Catalog, tier: int, sw, speed: int, run_m: float, links: np.ndarray) -> Problem:
    """The problem of ``links`` (runs of ``run_m`` on link tier ``tier``) that no media rule reaches: one named, and the longest reach."""
    L = fabric.links
    i = int(links[0])
    gpu = GpuNames(fabric.gpus, fabric.hb_domain)

    def end(dev: int, port: int) -> str:
        if dev < fabric.gpus:
            return f"{gpu.name(dev)}:{nic_port(int(L.plane[i]))}"
        return f"{fabric.switch(dev).name}:{switch_port(port)}"

    reach, rule = cat.longest_reach(catalog, tier, sw, speed, fabric.spec.gpus_per_node)
    link = link_tier_name(tier)
    has = f"the longest reach it has for {link} links at {speed}G is {metres(reach)} m ({rule})" if reach else f"it has no media for {link} links at {speed}G"
    return Problem(
        f"catalog {catalog.label}: media",
        f"{len(links):,} {link} cable run(s) of {metres(run_m)} m (e.g. {end(int(L.a_dev[i]), int(L.a_port[i]))} to {end(int(L.z_dev[i]), int(L.z_port[i]))}) "
        f"are longer than any media of catalog {catalog.label} reaches: {has}",
        f"add media for these runs to the catalog (single-mode transceivers whose reach_m is at least {metres(run_m)} and a cable at least that long), or shorten the runs (layout: racks_per_row, row_pitch_m)",
    )


def add_unique(items: list, x) -> int:
    """Index of ``x`` in ``items``, appended when absent (items are few: a linear scan)."""
    for i, y in enumerate(items):
        if y == x:
            return i
    items.append(x)
    return len(items) - 1


def metres(x: float):
    """A length for messages: whole metres as an int, else one decimal."""
    return int(x) if float(x).is_integer() else round(x, 1)
