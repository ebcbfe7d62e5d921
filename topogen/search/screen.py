"""Screening: every design of the space by the closed form, in microseconds a design.

The switch and link counts per tier are :func:`topogen.counts.arch_counts`, the
ones the explicit wiring must reproduce. Cost, power and the optics come from
those counts and the catalog's media of each link tier at its usual length class
(:func:`topogen.catalog.resolve_media`); the explicit BOM picks media per cable by
its routed length and rounds twin-port modules per device, so these figures are
*estimates* (``figures: "closed form"``), replaced by the build's own once a design
is built. The iteration time is :func:`topogen.analysis.fabric.iteration_report`
itself: the same figure ``topogen build`` reports.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import fields, replace
from functools import lru_cache
from typing import Any, Mapping

from topogen.spec import catalog as cat
from topogen.spec import counts
from topogen.analysis.fabric import iteration_report, scale_out_at
from topogen.spec.workload import parse_workload
from topogen.util.errors import InputError, Problem
from topogen.spec.cluster import Spec, build_spec
from topogen.search.space import Search


class Screener:
    """Screens designs of one search; caches catalogs, workloads and iteration times across designs."""

    def __init__(self, search: Search, catalogs: Mapping[str, cat.Catalog]):
        self.search = search
        self.catalogs = catalogs
        self._workloads: dict[tuple[int, int], Any] = {}
        self._iteration: dict[tuple, float] = {}
        self._workload_dicts: dict[int, dict[str, Any]] = {}
        self._media: dict[tuple, Any] = {}

    def spec(self, name: str, overrides: Mapping[str, Any]) -> Spec:
        """The design's spec: the base with ``overrides``; the workload parsed once per (N, K)."""
        s = self.search
        data = {k: v for k, v in s.base.items() if k != "workload"}
        spec = build_spec(data, {**overrides, "name": name}, default_name=name, base_dir=s.base_dir)
        raw = s.base.get("workload")
        if raw is None:
            return spec
        key = (spec.gpus, spec.hb_domain)
        if key not in self._workloads:
            problems: list[Problem] = []
            wl = parse_workload(raw, spec.gpus, spec.hb_domain, problems)
            self._workloads[key] = InputError(problems) if problems else wl
        wl = self._workloads[key]
        if isinstance(wl, InputError):
            raise wl
        return replace(spec, workload=wl)

    def materialize(self, row: dict[str, Any]) -> None:
        """Give a screened row its spec as plain data and the spec's hash (a build needs them; screening does not)."""
        if "spec" not in row:
            row["spec"] = self.spec_dict(row["_spec"])  # build_spec reads it back to this very spec (same digest)
            row["spec_sha256"] = digest_of(row["spec"])

    def spec_dict(self, spec: Spec) -> dict[str, Any]:
        """``spec.to_dict()``, with the workload's dict made once per workload (dataclasses.asdict of it dominates otherwise)."""
        if spec.workload is None:
            return spec.to_dict()
        wid = id(spec.workload)
        if wid not in self._workload_dicts:
            self._workload_dicts[wid] = spec.workload.to_dict()
        bare = replace(spec, workload=None).to_dict()
        out: dict[str, Any] = {}
        for key, value in bare.items():
            if "workload" not in out and _FIELD_AT.get(key, len(_FIELD_AT)) > _FIELD_AT["workload"]:
                out["workload"] = self._workload_dicts[wid]
            out[key] = value
        out.setdefault("workload", self._workload_dicts[wid])
        return out

    def iteration_s(self, spec: Spec) -> float | None:
        """Iteration time of the workload, as ``topogen build`` computes it (backup hosts left out of the job)."""
        if spec.workload is None:
            return None
        job = replace(spec, gpus=spec.active_gpus, backup_nodes=0) if spec.backup_nodes else spec
        key = (job.gpus, job.hb_domain, scale_out_at(job, job.arch).value, job.hb_bandwidth_gbps)
        if key not in self._iteration:
            rows = iteration_report([job]).rows
            self._iteration[key] = next((r for r in rows if r.get("arch", job.arch) == job.arch), rows[0])["iteration_s"]
        return self._iteration[key]

    def screen(self, index: int, overrides: Mapping[str, Any]) -> dict[str, Any]:
        """One row: the design's closed-form figures, or why it cannot be built (``skipped``)."""
        name = f"{self.search.name}-{index:05d}"
        row: dict[str, Any] = {"design": name, **{k: overrides[k] for k in ("arch", "catalog", "hb_domain", "gpus", "radix", "link_speed")}}
        row["planes"] = overrides.get("planes", self.search.base.get("planes", 1))
        row["oversubscription"] = overrides.get("oversubscription", self.search.base.get("oversubscription", "1:1"))
        if overrides.get("striping", self.search.base.get("striping")) == "minimal":  # a key only when set: balanced rows as before
            row["striping"] = "minimal"
        if overrides.get("design", self.search.base.get("design")) == "leaf-pair":  # likewise: Clos rows as before ("design" is the row's name)
            row["fabric_design"] = "leaf-pair"
        try:
            spec = self.spec(name, overrides)
            arch = spec.arch
            closed = counts.arch_counts(spec, arch)
            hw = self.catalogs[overrides["catalog"]]
            cat.check_spec(hw, spec, {arch: closed.tiers})
        except InputError as exc:
            row["skipped"] = "; ".join(p.render() for p in exc.problems)
            return row
        row["_spec"] = spec  # made plain (spec dict and hash) by materialize(), for the designs that are built
        row.update(estimate(spec, closed, hw, self._media))
        row["iteration_s"] = self.iteration_s(spec)
        row["figures"] = "closed form"
        return row


_FIELD_AT = {f.name: i for i, f in enumerate(fields(Spec))}


def digest_of(spec_dict: Mapping[str, Any]) -> str:
    """What :meth:`Spec.digest` gives for the spec whose ``to_dict()`` is ``spec_dict``."""
    blob = json.dumps(spec_dict, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


def estimate(spec: Spec, closed: counts.Counts, hw: cat.Catalog, media_cache: dict[tuple, Any] | None = None) -> dict[str, Any]:
    """Cost, power, optics, blast radius and hops of a design from its closed-form counts and the catalog.

    A leaf pair's ISLs (``closed.isls``) are priced as tier-1 cables between
    switches: the leaves' media, a switch transceiver at each end.

    ``media_cache`` keeps each link tier's media across designs (the catalog's
    rules depend on the tier, its length class, the switch, speed and node size).
    """
    media_cache = {} if media_cache is None else media_cache
    t = closed.tiers
    cost = power = 0.0
    transceivers = cables = 0.0
    for tier in range(1, t + 1):
        sw, mode = hw.switch_at(spec, tier, t)  # type: ignore[misc]
        n_sw = closed.switches_per_tier[tier - 1]
        cost += n_sw * sw.unit_price(spec.radix_at(tier))
        power += n_sw * sw.power_w
        links = closed.links_per_tier[tier - 1]
        if not links:
            continue
        key = (hw.name, hw.sha256, tier, cat.length_class(tier, spec.domains), sw.sku, mode, spec.speed_at(tier), spec.gpus_per_node)
        if key not in media_cache:
            media_cache[key] = cat.resolve_media(hw, tier, spec.domains, sw, mode, spec.speed_at(tier), spec.gpus_per_node)[0]
        media = media_cache[key]
        if media is None:
            continue
        ends = [(media.transceiver, 1 if tier == 1 else 2)]
        if tier == 1:
            ends.append((media.gpu_transceiver, 1))
        for tx, per_link in ends:
            if tx is not None:
                q = math.ceil(links * per_link / tx.ports_per_module)
                transceivers += q
                cost += q * tx.price_usd
                power += q * tx.power_w
        if media.cable is not None:
            q = math.ceil(links / media.cable.links_per_cable)
            cables += q
            cost += q * media.cable.price_usd
            power += q * media.cable.power_w
    if closed.isls:  # a leaf pair's ISLs: switch to switch at the leaves' media, a transceiver at each end
        sw, mode = hw.switch_at(spec, 1, t)  # type: ignore[misc]
        key = (hw.name, hw.sha256, 1, cat.length_class(1, spec.domains), sw.sku, mode, spec.speed_at(1), spec.gpus_per_node)
        if key not in media_cache:
            media_cache[key] = cat.resolve_media(hw, 1, spec.domains, sw, mode, spec.speed_at(1), spec.gpus_per_node)[0]
        media = media_cache[key]
        if media is not None and media.transceiver is not None:
            q = math.ceil(closed.isls * 2 / media.transceiver.ports_per_module)
            transceivers += q
            cost += q * media.transceiver.price_usd
            power += q * media.transceiver.power_w
        if media is not None and media.cable is not None:
            q = math.ceil(closed.isls / media.cable.links_per_cable)
            cables += q
            cost += q * media.cable.price_usd
            power += q * media.cable.power_w
    nic = hw.nic_for(spec.link_speed)
    if nic is not None:
        q = spec.gpus * -(-spec.nic_ports // nic.ports)
        cost += q * nic.price_usd
        power += q * nic.power_w
    return {
        "tiers": t,
        "switches_per_tier": list(closed.switches_per_tier),
        "links_per_tier": list(closed.links_per_tier),
        "switches": sum(closed.switches_per_tier),
        "links": closed.links,  # ISLs included (none in a Clos)
        "cost_usd": round(cost, 2),
        "cost_per_gpu": round(cost / spec.gpus, 2),
        "power_w": round(power, 2),
        "transceivers": int(transceivers),
        "cables": int(cables),
        "cables_optics": int(transceivers + cables),
        "blast_radius_gpus": busiest_leaf_gpus(spec),
        "switch_hops": 2 if closed.isls else 2 * t - 1,  # a leaf pair: leaf-a > ISL > leaf-b
        "racks": None,  # the floor layout's: known after the explicit build
    }


def busiest_leaf_gpus(spec: Spec) -> int:
    """GPUs on the busiest leaf: those that lose bandwidth when it fails (the estimate of the blast radius)."""
    if spec.design == "leaf-pair":  # each leaf of a pair carries half the GPUs (A-B-B-A)
        return spec.gpus // 2
    return _busiest(spec.arch, spec.gpus, spec.domains, spec.hb_domain, spec.radix, bool(spec.tier_radix), spec.shape, spec.packs_rails(spec.arch), spec.units)


@lru_cache(maxsize=65536)
def _busiest(arch: str, gpus: int, domains: int, hb: int, radix: int, per_tier: bool, shape: counts.Shape, shared: bool, units: counts.Units) -> int:
    if arch == "rail-optimized":
        runs = counts.rail_optimized_leaves(domains, hb, shape, shared, units=units)
    else:
        runs = counts.rail_only_leaves(domains, shape, units=units)
        if shared:
            per = counts.rails_per_switch(gpus, hb, radix, True) if not per_tier else 1
            return max((min(shape.split(1)[0], r.used * per) for r in runs), default=0)
    return max((r.used for r in runs), default=0)
