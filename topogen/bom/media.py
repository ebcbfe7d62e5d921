"""Media per cable: chosen by each cable's length and the catalog's rules, not per link tier.

The layout gives every cable a sold length (:mod:`topogen.layout`). A cable's
length class is the shortest class that holds it (``in-rack`` <= 3 m,
``in-row`` <= 15 m, ``cross-row`` <= 30 m, ``cross-hall`` <= 50 m,
``building`` <= 100 m and beyond), and the catalog's first media rule for
its link tier and class whose transceivers reach it and whose cables are
long enough is its media: copper (DAC) within reach in a rack, multimode
optics or AOC across a row, single-mode beyond, as the catalog says. Its cable
SKU is the shortest cable of that rule at least as long as the cable; a
cable longer than every SKU of its rule is counted as the longest and the
build notes it (order custom lengths). A class no rule can build falls back
to the tier's default media, with a note.

Everything is per (link tier, class) group and numpy columns over links.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from topogen.bom import catalog as cat
from topogen.bom.catalog import LENGTH_CLASSES, Cable, Catalog, Media
from topogen.fabric.model import Fabric
from topogen.spec.counts import link_tier_name
from topogen.util.errors import InputError

CLASS_NAMES = tuple(LENGTH_CLASSES)
CLASS_MAX = np.asarray([LENGTH_CLASSES[c] for c in CLASS_NAMES], dtype=np.float64)


@dataclass
class LinkMedia:
    """Media and cable SKU of every link: indexes into :attr:`media` and :attr:`cables` (-1: no cable SKU)."""

    media: list[Media]
    index: np.ndarray
    cables: list[Cable]
    cable: np.ndarray
    length_m: np.ndarray
    notes: list[str] = field(default_factory=list)

    def per_tier(self, tiers: np.ndarray) -> dict[int, Media]:
        """The media most cables of each link tier use (the workbook and NetBox name one per tier)."""
        out: dict[int, Media] = {}
        for t in np.unique(tiers).tolist():
            idx = self.index[tiers == t]
            out[int(t)] = self.media[int(np.bincount(idx).argmax())]
        return out


def length_classes(length_m: np.ndarray) -> np.ndarray:
    """Index into :data:`CLASS_NAMES` of each length (the last class holds everything longer)."""
    return np.minimum(np.searchsorted(CLASS_MAX, length_m - 1e-9, side="left"), len(CLASS_NAMES) - 1)


def assign(fabric: Fabric, catalog: Catalog, length_m: np.ndarray) -> LinkMedia:
    """Media and cable SKU for every link of ``fabric`` with sold lengths ``length_m``."""
    spec = fabric.spec
    cat.check_spec(catalog, spec, {fabric.arch: fabric.tiers})
    tiers = fabric.links.tier.astype(np.int64)
    cls = length_classes(length_m)
    key = tiers * len(CLASS_NAMES) + cls
    media: list[Media] = []
    index = np.zeros(len(tiers), dtype=np.int32)
    notes: list[str] = []
    for k in np.unique(key).tolist():
        tier, c = divmod(k, len(CLASS_NAMES))
        sel = key == k
        sw, mode = catalog.switch_at(spec, tier, fabric.tiers)  # type: ignore[misc]  # the link tier's upper switch
        speed = spec.speed_at(tier)
        m, problems = cat.resolve_media(catalog, tier, spec.domains, sw, mode, speed, spec.gpus_per_node, length=CLASS_NAMES[c], skip_unfit=True)
        if problems:
            m, fallback = cat.resolve_media(catalog, tier, spec.domains, sw, mode, speed, spec.gpus_per_node)
            if fallback:  # pragma: no cover - check_spec raised already
                raise InputError(fallback)
            notes.append(
                f"{int(sel.sum())} {link_tier_name(tier)} cable(s) of {CLASS_NAMES[c]} length (up to {_m(float(length_m[sel].max()))} m): "
                f"catalog {catalog.label} has no media for them ({problems[0].message}); counted as {m.name}"
            )
        index[sel] = _add(media, m)
    cables: list[Cable] = []
    cable = np.full(len(tiers), -1, dtype=np.int32)
    for i, m in enumerate(media):
        rule = catalog.rules[m.rule]
        if not rule.cables:
            continue
        sel = np.flatnonzero(index == i)
        skus = [catalog.cables[s] for s in rule.cables]
        lens = np.asarray([c.length_m for c in skus], dtype=np.float64)
        pick = np.searchsorted(lens, length_m[sel] - 1e-9, side="left")
        over = pick >= len(skus)
        if over.any():
            notes.append(
                f"{int(over.sum())} {link_tier_name(m.tier)} cable(s) of up to {_m(float(length_m[sel][over].max()))} m are longer than "
                f"{skus[-1].sku} ({_m(skus[-1].length_m)} m), the longest of media {m.name!r}: counted as it; order custom lengths"
            )
        pick = np.minimum(pick, len(skus) - 1)
        ids = np.asarray([_add(cables, c) for c in skus], dtype=np.int32)
        cable[sel] = ids[pick]
    return LinkMedia(media, index, cables, cable, length_m, notes)


def _add(items: list, x) -> int:
    for i, y in enumerate(items):
        if y == x:
            return i
    items.append(x)
    return len(items) - 1


def _m(x: float):
    return int(x) if float(x).is_integer() else round(x, 1)
