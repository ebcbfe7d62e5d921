"""Bill of materials of one fabric, counted from its explicit wiring.

Counting conventions (those of published cost models, such as the rail-only paper's, arXiv 2307.12169):

* every switch of the fabric is one box of the catalog's switch for the spec's
  link speed and radix (the first that fits, in catalog order);
* a cable's media comes from the catalog's rules for its link tier and the
  length class of its routed length (:mod:`topogen.bom.media`, :mod:`topogen.layout`);
  cables are counted per SKU, i.e. per sold length;
* an optical link has a transceiver at each end (the GPU/NIC end included); a
  copper link has a cable and no transceiver;
* a module with ``p`` ports serves ``p`` links of one device: its count on a
  device is ``ceil(ports / p)``, rounded up per device and per link tier (the
  ports of one tier are contiguous on a switch). For a switch the device is the
  switch; for the GPU end the device is the HB domain's system (a DGX H100
  leaves the node through twin-port cages shared by two NICs);
* a cable carrying ``links_per_cable`` links (a breakout cable or splitter) is
  counted once per cage of the upper switch it leaves (:mod:`topogen.fabric.breakout`:
  its legs share that cage's ports), with the SKU of its longest leg; fiber and
  ordinary cables count one per link;
* NICs (when the catalog lists them) are counted per GPU: ``ceil(nic_ports / ports)`` (nic_ports = planes, x 2 dual-homed).

Per-device counts come from ``numpy.bincount`` over the link table, so the BOM
of a 131,072-GPU fabric takes milliseconds. Lines carry a tier: the switches of
tier j, and the transceivers and cables of link tier j (the links that go up
into tier j; NICs count in tier 1), so the per-tier costs add up to the total.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from topogen import layout
from topogen.spec import catalog as cat
from topogen.bom import media as link_media_mod
from topogen.spec.catalog import Catalog, Media
from topogen.fabric import breakout
from topogen.fabric.model import Fabric
from topogen.fabric.naming import ISL_LINK
from topogen.spec.counts import link_tier_name, tier_role
from topogen.spec.units import port_budget
from topogen.util.errors import InputError

CATEGORIES = ("switch", "nic", "transceiver", "cable")


class _Extended:
    """Extended price and total power of a line with quantity, unit price and unit power."""

    __slots__ = ()
    quantity: int
    unit_price: float
    unit_power_w: float

    @property
    def extended_price(self) -> float:
        return money(self.quantity * self.unit_price)

    @property
    def total_power_w(self) -> float:
        return money(self.quantity * self.unit_power_w)


@dataclass(frozen=True, slots=True)
class BomLine(_Extended):
    """A quantity of one SKU in one tier (``where``: switch role or link tier; ``end``: transceiver end)."""

    category: str
    sku: str
    description: str
    tier: int
    where: str
    end: str
    quantity: int
    unit_price: float
    unit_power_w: float
    price_source: str
    power_source: str


@dataclass(frozen=True, slots=True)
class SkuLine(_Extended):
    """One SKU over the whole fabric; ``used_in`` lists the tiers/ends it serves."""

    category: str
    sku: str
    description: str
    used_in: str
    quantity: int
    unit_price: float
    unit_power_w: float
    price_source: str
    power_source: str


@dataclass(frozen=True, slots=True)
class Bom:
    """The bill of materials of one architecture: tier lines, SKU lines and totals."""

    arch: str
    catalog: str
    catalog_sha256: str
    gpus: int
    tiers: int
    switch_sku: str
    media: dict[int, Media]  # per link tier, the media most of its cables use
    lines: tuple[BomLine, ...]
    link_media: Any = None  # topogen.bom.media.LinkMedia: media and cable SKU of every cable
    notes: tuple[str, ...] = ()  # lengths no catalog media or cable covers
    breakouts: Any = None  # topogen.fabric.breakout.Breakouts: the breakout cables and their legs
    port_budget: dict[str, Any] | None = None  # scalable units: cabled, reserved and growth ports (topogen.spec.units)
    isls: int = 0  # a leaf pair's ISLs: the last rows of link_media (fabric.cable_table())

    def quantity(self, category: str) -> int:
        return sum(x.quantity for x in self.lines if x.category == category)

    @property
    def switch_skus(self) -> list[str]:
        """The switch SKU of each tier, leaf first: a per-tier radix puts chassis above fixed boxes."""
        by_tier = {x.tier: x.sku for x in self.lines if x.category == "switch"}
        return [by_tier.get(t, self.switch_sku) for t in range(1, self.tiers + 1)]

    @property
    def switches(self) -> int:
        return self.quantity("switch")

    @property
    def transceivers(self) -> int:
        """Transceiver modules (a twin-port module counts once)."""
        return self.quantity("transceiver")

    @property
    def cables(self) -> int:
        return self.quantity("cable")

    @property
    def cost(self) -> float:
        return money(sum(x.quantity * x.unit_price for x in self.lines))

    @property
    def power_w(self) -> float:
        return money(sum(x.quantity * x.unit_power_w for x in self.lines))

    def cost_per_tier(self) -> list[float]:
        return [money(sum(x.quantity * x.unit_price for x in self.lines if x.tier == t)) for t in range(1, self.tiers + 1)]

    def power_per_tier(self) -> list[float]:
        return [money(sum(x.quantity * x.unit_power_w for x in self.lines if x.tier == t)) for t in range(1, self.tiers + 1)]

    def sku_lines(self) -> list[SkuLine]:
        """Lines aggregated per SKU, in first-use order (tier, then category): :func:`sku_lines`."""
        return sku_lines(self.lines)

    def totals(self) -> dict[str, Any]:
        return {
            "switches": self.switches,
            "transceivers": self.transceivers,
            "cables": self.cables,
            "nics": self.quantity("nic"),
            "cost": self.cost,
            "power_w": self.power_w,
            "cost_per_gpu": money(self.cost / self.gpus),
            "power_per_gpu_w": money(self.power_w / self.gpus, 3),
            "cost_per_tier": self.cost_per_tier(),
            "power_per_tier_w": self.power_per_tier(),
        }

    def length_rows(self) -> list[tuple[int, str, float, str, str, int]]:
        """The length histogram: ``(tier, link, length_m, media, cable SKU, cables)`` per sold length and media.

        Cables, not links: a breakout harness is one cable (its legs share its length, media and SKU).
        """
        lm = self.link_media
        if lm is None:
            return []
        tiers = np.asarray([m.tier for m in lm.media], dtype=np.int64)[lm.index] * 2  # 2t: link tier t; 3: a leaf pair's ISL (tier 1, after gpu-leaf)
        tiers[len(tiers) - self.isls :] = 3
        one = self.breakouts.cables_mask() if self.breakouts is not None else slice(None)  # a harness counts once, as in bom.csv
        # one integer key per (tier, length, media, cable SKU), ordered as those tuples (np.unique over
        # rows of a float matrix sorts structured rows: 1.5 s at 131,072 GPUs)
        lengths, lcode = np.unique(lm.length_m.astype(np.float64), return_inverse=True)
        cable = lm.cable.astype(np.int64) + 1  # -1 (no SKU) first
        dims = (len(lengths), len(lm.media), len(lm.cables) + 1)
        key = ((tiers * dims[0] + lcode.reshape(-1)) * dims[1] + lm.index.astype(np.int64)) * dims[2] + cable
        keys, counts = np.unique(key[one], return_counts=True)
        rest, ci = np.divmod(keys, dims[2])
        rest, mi = np.divmod(rest, dims[1])
        ti, li = np.divmod(rest, dims[0])
        out = []
        for t, length, mi, ci, c in zip(ti.tolist(), lengths[li].tolist(), mi.tolist(), (ci - 1).tolist(), counts.tolist()):
            sku = lm.cables[int(ci)].sku if ci >= 0 else ""
            out.append((int(t) // 2, ISL_LINK if t == 3 else link_tier_name(int(t) // 2), money(length, 1), lm.media[int(mi)].name, sku, int(c)))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "arch": self.arch,
            "catalog": self.catalog,
            "catalog_sha256": self.catalog_sha256,
            "currency": "USD",
            "switch_sku": self.switch_sku,
            "switch_skus": self.switch_skus,
            "media": [self.media[t].to_dict() for t in sorted(self.media)],
            "lines": [_line_dict(x) for x in self.sku_lines()],
            "lines_by_tier": [_line_dict(x) for x in self.lines],
            "totals": self.totals(),
            "cables_by_length": [dict(zip(("tier", "link", "length_m", "media", "cable_sku", "cables"), r)) for r in self.length_rows()],
            "notes": list(self.notes),
            **({"port_budget": self.port_budget} if self.port_budget else {}),
        }

    def spares(self, policy) -> list[SkuLine]:
        """:func:`spare_lines` of this BOM's SKU lines."""
        return spare_lines(self.sku_lines(), policy)


def _line_dict(x) -> dict[str, Any]:
    d = {f: getattr(x, f) for f in x.__slots__}
    d["extended_price"] = x.extended_price
    d["total_power_w"] = x.total_power_w
    return d


def money(x: float, digits: int = 2) -> float:
    """Cents, with whole amounts as int so JSON shows ``47872`` and not ``47872.0``."""
    x = round(float(x), digits)
    return int(x) if x.is_integer() else x


def _per_device(devs: np.ndarray, per_unit: int) -> int:
    """Units needed when each device rounds its ports up to whole units of ``per_unit``."""
    if per_unit == 1 or len(devs) == 0:
        return int(len(devs))
    c = np.bincount(devs)
    return int(((c + per_unit - 1) // per_unit).sum())


def link_media(fabric: Fabric, catalog: Catalog) -> dict[int, Media]:
    """Media of every link tier of ``fabric`` (``{tier: Media}``), for the BOM and cabling exports.

    Raises InputError when the catalog cannot supply the switch or a tier's media.
    """
    spec = fabric.spec
    cat.check_spec(catalog, spec, {fabric.arch: fabric.tiers})
    out: dict[int, Media] = {}
    for tier in range(1, fabric.tiers + 1):
        sw, mode = catalog.switch_at(spec, tier, fabric.tiers)  # type: ignore[misc]  # the link tier's upper switch
        m, problems = cat.resolve_media(catalog, tier, spec.domains, sw, mode, spec.speed_at(tier), spec.gpus_per_node)
        if problems:  # pragma: no cover - check_spec raised already
            raise InputError(problems)
        out[tier] = m
    return out


def sku_lines(lines) -> list[SkuLine]:
    """:class:`BomLine` s aggregated per SKU, in first-use order; ``used_in`` names each role (and transceiver end) once."""
    order: list[str] = []
    agg: dict[str, list] = {}
    for x in lines:
        where = f"{x.where} ({x.end} end)" if x.end else x.where
        if x.sku not in agg:
            order.append(x.sku)
            agg[x.sku] = [x, 0, []]
        agg[x.sku][1] += x.quantity
        if where not in agg[x.sku][2]:
            agg[x.sku][2].append(where)
    return [SkuLine(x.category, sku, x.description, ", ".join(used), q, x.unit_price, x.unit_power_w, x.price_source, x.power_source) for sku in order for x, q, used in [agg[sku]]]


def compile_bom(fabric: Fabric, catalog: Catalog, lay=None) -> Bom:
    """Count the BOM of ``fabric`` from its wiring, priced with ``catalog``.

    Media are chosen per cable by its length (:mod:`topogen.bom.media`), the
    lengths coming from ``lay`` (a :class:`topogen.layout.Layout`; planned
    here when not given). Transceivers are counted per device and SKU, cables
    per SKU (each SKU one length), so the counts follow the real lengths.
    """
    spec = fabric.spec
    lay = lay if lay is not None else layout.plan(fabric)
    lm = link_media_mod.assign(fabric, catalog, lay.length_m)
    bo = breakout.of(fabric, lm)
    bo.unify(lm)  # a harness is one SKU of one length and one media: its longest leg's, in every file
    leaf_sw = catalog.switch_at(spec, 1, fabric.tiers)[0]  # type: ignore[index]
    L = fabric.links
    n = fabric.gpus
    lines: list[BomLine] = []
    per_tier = fabric.switches_per_tier()
    nic = catalog.nic_for(spec.link_speed)
    for tier in range(1, fabric.tiers + 1):
        if per_tier[tier - 1]:
            r = spec.radix_at(tier)
            sw = catalog.switch_at(spec, tier, fabric.tiers)[0]  # type: ignore[index]  # each tier its own switch (a 288-port spine is a chassis)
            lines.append(BomLine("switch", sw.sku, sw.description, tier, tier_role(tier), "", per_tier[tier - 1], sw.unit_price(r), sw.power_w, sw.price_source, sw.power_source))
        if tier == 1 and nic is not None:
            qty = n * -(-spec.nic_ports // nic.ports)
            lines.append(BomLine("nic", nic.sku, nic.description, 1, "gpu", "", qty, nic.price_usd, nic.power_w, nic.price_source, nic.power_source))
        sel = L.tier == tier
        if not sel.any():
            continue
        link = link_tier_name(tier)
        z = L.z_dev[sel]
        a = L.a_dev[sel]
        idx = lm.index[: len(L)][sel]  # the links' rows (a leaf pair's ISLs follow, see _isl_lines)
        used = [lm.media[i] for i in np.unique(idx).tolist()]
        for attr, end in (("transceiver", "switch"), ("gpu_transceiver", "gpu")):
            if end == "gpu" and tier != 1:
                continue
            for t in _distinct(getattr(m, attr) for m in used):
                on = np.isin(idx, [i for i, m in enumerate(lm.media) if getattr(m, attr) == t])
                if end == "gpu":
                    qty = _per_device(a[on] // spec.gpus_per_node, t.ports_per_module)  # a module sits in one host
                elif tier == 1:
                    qty = _per_device(z[on] - n, t.ports_per_module)
                else:
                    qty = _per_device(np.concatenate([a[on], z[on]]) - n, t.ports_per_module)
                lines.append(_tx_line(t, tier, link, end, qty))
        cab = lm.cable[: len(L)][sel]
        of_tier = bo.cable[_harness_tier(bo, L) == tier]
        for ci in sorted(set(np.unique(cab[cab >= 0]).tolist()) | set(np.unique(of_tier).tolist()), key=lambda i: (lm.cables[i].length_m, lm.cables[i].sku)):
            c = lm.cables[ci]
            # a breakout cable carries several legs of one cage: count cables (each its longest leg's SKU), not links
            qty = int((of_tier == ci).sum()) if c.links_per_cable > 1 else int((cab == ci).sum())
            if qty:
                lines.append(BomLine("cable", c.sku, c.description, tier, link, "", qty, c.price_usd, c.power_w, c.price_source, c.power_source))
        if tier == 1 and len(fabric.isls):
            lines += _isl_lines(fabric, lm, bo)

    return Bom(fabric.arch, catalog.name, catalog.sha256, n, fabric.tiers, leaf_sw.sku, lm.per_tier(L.tier), tuple(lines), lm, tuple(lm.notes), bo, port_budget(fabric), len(fabric.isls))


def _harness_tier(bo, L) -> np.ndarray:
    """Link tier of each breakout harness (its legs share one); 0 for a harness of a leaf pair's ISLs (rows past the links)."""
    if not len(bo):
        return np.zeros(0, np.int64)
    rows = bo.first_link
    is_link = rows < len(L)
    return np.where(is_link, L.tier[np.where(is_link, rows, 0)], 0)


def _isl_lines(fabric: Fabric, lm, bo) -> list[BomLine]:
    """A leaf pair's ISLs (link ``leaf-leaf``, tier 1): a transceiver at both leaf ends and one cable each, per SKU.

    Priced as any switch-to-switch link (:func:`topogen.bom.media.assign`); the ISL
    ports of a leaf are contiguous (after its GPU ports), so its modules round up per leaf.
    ISLs slower than the switch's cages (200G ports of an 800G leaf) run on breakout
    cables: a harness counts once, as for the links (``bo``, the fabric's breakouts).
    """
    I = fabric.isls
    rows = np.arange(len(fabric.links), fabric.cables)
    idx, cab = lm.index[rows], lm.cable[rows]
    ends = np.concatenate([I.a_dev, I.z_dev]) - fabric.gpus
    lines = []
    for t in _distinct(lm.media[i].transceiver for i in np.unique(idx).tolist()):
        on = np.isin(idx, [i for i, m in enumerate(lm.media) if m.transceiver == t])
        lines.append(_tx_line(t, 1, ISL_LINK, "switch", _per_device(ends[np.concatenate([on, on])], t.ports_per_module)))
    of_isl = bo.cable[_harness_tier(bo, fabric.links) == 0]
    for ci in sorted(np.unique(cab[cab >= 0]).tolist(), key=lambda i: (lm.cables[i].length_m, lm.cables[i].sku)):
        c = lm.cables[ci]
        qty = int((of_isl == ci).sum()) if c.links_per_cable > 1 else int((cab == ci).sum())
        lines.append(BomLine("cable", c.sku, c.description, 1, ISL_LINK, "", qty, c.price_usd, c.power_w, c.price_source, c.power_source))
    return lines


def _distinct(items) -> list:
    out: list = []
    for x in items:
        if x is not None and x not in out:
            out.append(x)
    return out


def _tx_line(t, tier: int, link: str, end: str, qty: int) -> BomLine:
    return BomLine("transceiver", t.sku, t.description, tier, link, end, qty, t.price_usd, t.power_w, t.price_source, t.power_source)


def summary_fields(bom: Bom) -> dict[str, Any]:
    """The BOM figures ``summary.json`` adds to an architecture's section."""
    tot = bom.totals()
    return {
        "switch_sku": bom.switch_sku,
        "switch_skus": bom.switch_skus,
        "transceivers": tot["transceivers"],
        "cables": tot["cables"],
        "cost": tot["cost"],
        "power_w": tot["power_w"],
        "cost_per_gpu": tot["cost_per_gpu"],
        "power_per_gpu_w": tot["power_per_gpu_w"],
        "cost_per_tier": tot["cost_per_tier"],
        "power_per_tier_w": tot["power_per_tier_w"],
        "media": [bom.media[t].to_dict() for t in sorted(bom.media)],
    }


def switch_saving(bom: Bom, more: list[int]) -> dict[str, Any]:
    """Price and power of ``more[t-1]`` extra switches per tier at this BOM's switch prices (what ``striping: minimal`` saves).

    The switches that balanced striping adds carry no extra cable (the links are the
    same), so the saving is their boxes: quantity x unit price and unit power of each tier's switch line.
    """
    by_tier = {x.tier: x for x in bom.lines if x.category == "switch"}
    cost = power = 0.0
    for tier, n in enumerate(more, start=1):
        if n and tier in by_tier:
            cost += n * by_tier[tier].unit_price
            power += n * by_tier[tier].unit_power_w
    return {"switch_cost_saved": money(cost), "switch_power_saved_w": money(power)}


def reduction(before: float, after: float) -> float | None:
    """Fractional saving of ``after`` over ``before`` (None when ``before`` is 0: undefined)."""
    if not before:
        return None
    return round(1 - after / before, 6)


def comparison(boms: dict[str, Bom]) -> dict[str, Any] | None:
    """Savings of rail-only over rail-optimized, when both were built."""
    if "rail-optimized" not in boms or "rail-only" not in boms:
        return None
    opt, ro = boms["rail-optimized"], boms["rail-only"]
    return {
        "baseline": "rail-optimized",
        "candidate": "rail-only",
        "cost_reduction": reduction(opt.cost, ro.cost),
        "power_reduction": reduction(opt.power_w, ro.power_w),
        "switch_reduction": reduction(opt.switches, ro.switches),
        "transceiver_reduction": reduction(opt.transceivers, ro.transceivers),
    }


def spare_lines(lines: list[SkuLine], policy) -> list[SkuLine]:
    """The spares of every SKU under the spec's ``spares:`` policy (:class:`topogen.spec.spares.SparesSpec`), one line each.

    A spare is bought, not powered: its power is 0. None without a policy, and no
    line for a SKU whose rule gives no spare.
    """
    if policy is None:
        return []
    out = []
    for x in lines:
        rule = policy.rule(x.category)
        q = rule.spares(x.quantity)
        if q:
            why = f"spares: {rule.percent:g} % of {x.quantity:,}" + (f", at least {rule.minimum:,}" if rule.minimum else "")
            out.append(SkuLine(x.category, x.sku, x.description, why, q, x.unit_price, 0.0, x.price_source, "spares are not powered"))
    return out


def spares_totals(lines: list[SkuLine]) -> dict[str, Any]:
    """Units and cost of the spares lines."""
    return {"units": sum(x.quantity for x in lines), "cost": money(sum(x.extended_price for x in lines))}
