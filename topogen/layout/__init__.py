"""The physical layout: racks on the floor, a rack and U for every device, a length for every cable.

:func:`plan` is the pipeline's layout phase: from a fabric and the spec's
optional ``layout:`` section (:mod:`.params`, defaults after NVIDIA DGX
SuperPOD practice) it places every device (:mod:`.floor`) and routes every
cable (:mod:`.cables`). Everything is numpy columns over device ids and link
rows, so 131,072 GPUs take well under a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from topogen.fabric.model import Fabric
from topogen.fabric.naming import ISL_LINK
from topogen.layout.cables import routed_m, sold_m
from topogen.layout.floor import Placement, Racks, place
from topogen.spec.layout import LayoutSpec, parse_layout, resolve
from topogen.spec.systems import node_u

__all__ = ["Layout", "LayoutSpec", "Racks", "parse_layout", "plan", "resolve"]


@dataclass
class Layout:
    """One architecture's layout: the resolved spec, racks, device positions and cable lengths."""

    spec: LayoutSpec
    placement: Placement
    routed_m: np.ndarray  # per cable (fabric.cable_table(): the links, then any ISLs), metres
    length_m: np.ndarray  # per cable, the sold length (metres)
    gpus: int

    @property
    def racks(self) -> Racks:
        return self.placement.racks

    def rack_name(self, dev: int) -> str:
        return self.racks.name[int(self.placement.rack[dev])]

    def where(self, dev: int) -> str:
        """``A01 U12``: the rack and lowest U of device ``dev``."""
        return f"{self.rack_name(dev)} U{int(self.placement.u[dev])}"

    def histogram(self, tiers: np.ndarray | None = None) -> dict[float, int]:
        """Cables per sold length (all cables, or those where ``tiers`` mask is true)."""
        sel = self.length_m if tiers is None else self.length_m[tiers]
        vals, counts = np.unique(sel, return_counts=True)
        return {_num(v): int(c) for v, c in zip(vals.tolist(), counts.tolist())}

    def summary(self, fabric: Fabric) -> dict[str, Any]:
        """The figures summary.json carries: racks by kind, length per link tier, the histogram."""
        kinds: dict[str, int] = {}
        for k in self.racks.kind:
            kinds[k] = kinds.get(k, 0) + 1
        tiers = fabric.links.tier
        links_m = self.length_m[: len(tiers)]
        per_tier = {}
        for t in range(1, fabric.tiers + 1):
            sel = tiers == t
            if sel.any():
                per_tier[str(t)] = {"cables": int(sel.sum()), "max_m": _num(float(links_m[sel].max())), "total_m": _num(round(float(links_m[sel].sum()), 1))}
        isl_m = self.length_m[len(tiers) :]
        if len(isl_m):  # a leaf pair's ISLs: tier 1, apart from the GPU cables
            per_tier[ISL_LINK] = {"cables": len(isl_m), "max_m": _num(float(isl_m.max())), "total_m": _num(round(float(isl_m.sum()), 1))}
        return {
            "racks": len(self.racks),
            "racks_by_kind": kinds,
            "rows": int(self.racks.row.max()) + 1 if len(self.racks) else 0,
            "gpus_per_rack": self.spec.gpus_per_rack,
            "cable_m_total": _num(round(float(self.length_m.sum()), 1)),
            "length_per_tier": per_tier,
            "length_histogram_m": {str(k): v for k, v in self.histogram().items()},
            "custom_lengths": int((self.length_m > max(self.spec.lengths_m)).sum()),
        }


def _num(x: float):
    return int(x) if float(x).is_integer() else x


def plan(fabric: Fabric) -> Layout:
    """Place every device of ``fabric`` and give every cable a routed and a sold length."""
    spec = fabric.spec
    lay = resolve(getattr(spec, "layout", None), spec.hb_domain, spec.gpus_per_node, node_u(spec))
    p = place(fabric, lay)
    r = routed_m(fabric, lay, p)
    return Layout(lay, p, r, sold_m(r, lay.lengths_m), fabric.gpus)
