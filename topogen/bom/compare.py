"""Rail-only against rail-optimized: side-by-side figures for one spec or a sweep.

Every row is computed from the explicit wiring of both architectures and its
bill of materials (:func:`topogen.bom.bill.compile_bom`), not from a formula, so the
numbers are exactly those ``topogen build`` would report. Generating and
counting both fabrics is fast (the rail-only paper's eight configurations, up
to 65,536 GPUs and 262,144 links each, take well under a second in all).

A sweep is the cartesian product of comma-separated values of ``gpus``,
``hb_domain``, ``radix``, ``link_speed`` and ``oversubscription`` (in that nesting order, values in
the order given; ``--gpus 1,024`` is refused, not read as 1 and 24). A per-tier value is written with ``/`` (``--link-speed 200/400,400``:
two values, the first per tier). Rows are plain dicts (the JSON shape of ``topogen compare
--json``): ``gpus``, ``hb_domain``, ``radix``, ``link_speed`` (the leaf's), ``radix_per_tier``, ``link_speed_per_tier`` (text: ``64``, ``32/288``), ``oversubscription`` (``1:1``, ``3:1/1:1`` per tier), ``planes``,
``catalog``, one section per architecture (``tiers``, ``switches``,
``switches_per_tier``, ``links``, ``transceivers``, ``cables``, ``cost``,
``power_w``, ``cost_per_gpu``, ``closed_form_agrees``), and ``cost_reduction``
/ ``power_reduction``: fractions saved by rail-only (``null`` when the
rail-optimized figure is 0, e.g. power in the paper's catalog).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product
from typing import Any, Mapping

from topogen.bom import bill as bom
from topogen.spec import catalog
from topogen.fabric import clos
from topogen.fabric.model import ARCHES
from topogen.spec import counts
from topogen.spec.cluster import Spec, load_spec, plain_number
from topogen.util.errors import InputError, Problem
from topogen.util.figures import count, pct

SWEEP_KEYS = ("gpus", "hb_domain", "radix", "link_speed", "oversubscription")
WHOLE_KEYS = ("gpus", "hb_domain", "radix", "link_speed")  # a part written with a leading 0 is a thousands separator gone wrong
MAX_SWEEP = 1000  # combinations compared in one run (each is a closed form and a BOM)


def _split(key: str, raw: Any) -> list[Any]:
    """``"32768,65536"`` -> ``["32768", "65536"]``; other values pass through as one item."""
    if isinstance(raw, str) and "," in raw:
        return [v.strip() for v in raw.split(",")]
    return [raw]


def _check_separators(overrides: Mapping[str, Any]) -> None:
    """``--gpus 1,024`` is 1,024 GPUs to its writer but two values, 1 and 024, to a sweep: refuse it.

    A swept whole number never starts with 0, so a part such as ``024`` can only
    be the tail of a thousands separator.
    """
    problems = []
    for key in WHOLE_KEYS:
        raw = overrides.get(key)
        if not isinstance(raw, str) or "," not in raw:
            continue
        parts = [p.strip() for p in raw.split(",")]
        if any(len(p) > 1 and p[0] == "0" and p.replace("/", "").isdigit() for p in parts):
            flag = "--" + key.replace("_", "-")
            problems.append(Problem(key, f"{key} {raw!r} has a value starting with 0: ',' separates the values to sweep, so it reads as {' and '.join(parts)}", f"write numbers without thousands separators, e.g. {flag} {''.join(parts)}"))
    if problems:
        raise InputError(problems)


def _combinations(overrides: Mapping[str, Any]) -> tuple[dict[str, list[Any]], list[dict[str, Any]]]:
    """The values of each sweep key and every combination of them, at most :data:`MAX_SWEEP`."""
    _check_separators(overrides)
    values = {k: list(dict.fromkeys(_split(k, overrides.get(k)))) for k in SWEEP_KEYS}
    total = math.prod(max(1, len(v)) for v in values.values())
    if total > MAX_SWEEP:
        sizes = " x ".join(f"{len(values[k])} {k}" for k in SWEEP_KEYS if len(values[k]) > 1)
        raise InputError([Problem("sweep", f"the sweep has {total:,} combinations ({sizes}); at most {MAX_SWEEP:,} are compared", "sweep fewer values at once")])
    return values, [dict(zip(SWEEP_KEYS, c)) for c in product(*(values[k] for k in SWEEP_KEYS))]


def sweep_specs(spec_ref: str | None, overrides: Mapping[str, Any]) -> list[Spec]:
    """Resolve every combination of the comma-separated sweep values into a spec (both architectures).

    Raises one InputError with every problem of every combination; a problem
    that only some combinations have names them.
    """
    values, combos = _combinations(overrides)
    specs: list[Spec] = []
    failed: dict[tuple[str, str, str], list[str]] = {}
    for combo in combos:
        o = {**overrides, **combo, "arch": "both"}
        if spec_ref is None and o.get("name") is None and all(plain_number(o.get(k)) for k in ("gpus", "hb_domain", "radix")):
            o["name"] = f"n{o['gpus']}-k{o['hb_domain']}-r{o['radix']}"
        try:
            specs.append(load_spec(spec_ref, o))
        except InputError as exc:
            label = ", ".join(f"{k}={v}" for k, v in combo.items() if len(values[k]) > 1)
            for p in exc.problems:
                failed.setdefault((p.path, p.message, p.hint), []).append(label)
    if failed:
        problems = []
        for (path, message, hint), labels in failed.items():
            if len(combos) > 1 and len(labels) < len(combos):
                shown = "; ".join(labels[:3]) + ("; ..." if len(labels) > 3 else "")
                message = f"{message} (for {shown})"
            problems.append(Problem(path, message, hint))
        raise InputError(problems)
    return specs


@dataclass(frozen=True, slots=True)
class Skipped:
    """A sweep combination that cannot be built, and why."""

    combo: str  # "gpus=1000, radix=32"
    problems: tuple[Problem, ...]

    def render(self) -> str:
        return f"{self.combo}: " + "; ".join(f"{p.path}: {p.message}" + (f" ({p.hint})" if p.hint else "") for p in self.problems)


def buildable_specs(spec_ref: str | None, overrides: Mapping[str, Any]) -> tuple[list[tuple[str, Spec]], list[Skipped]]:
    """Every combination of a sweep that resolves into a spec (with its label), and those skipped.

    A single combination is not a sweep: its problems raise at once. InputError
    also when no combination resolves, with every problem of every combination.
    """
    values, combos = _combinations(overrides)
    if len(combos) == 1:
        return [("", s) for s in sweep_specs(spec_ref, overrides)], []
    specs: list[tuple[str, Spec]] = []
    skipped: list[Skipped] = []
    for combo, label in zip(combos, _labels(overrides)):
        try:
            (spec,) = sweep_specs(spec_ref, {**overrides, **combo})
            specs.append((label, spec))
        except InputError as exc:
            skipped.append(Skipped(label, tuple(exc.problems)))
    if not specs:
        sweep_specs(spec_ref, overrides)  # every problem of every combination, at once
    return specs, skipped


def sweep(spec_ref: str | None, overrides: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[Skipped]]:
    """Rows for every buildable combination of a sweep, and the combinations skipped.

    A combination whose spec or catalog check fails is skipped (and reported)
    instead of failing the whole sweep; InputError only when none can be built
    (or the sweep is a single spec), with every problem as :func:`sweep_specs` gives it.
    """
    specs, skipped = buildable_specs(spec_ref, overrides)
    if not skipped and len(specs) == 1 and not specs[0][0]:
        return compare([specs[0][1]]), []
    rows: list[dict[str, Any]] = []
    loaded: dict[str, catalog.Catalog] = {}
    for label, spec in specs:
        try:
            if spec.catalog not in loaded:
                loaded[spec.catalog] = catalog.load_catalog(spec.catalog_ref)
            rows.append(compare_spec(spec, loaded[spec.catalog]))
        except InputError as exc:
            skipped.append(Skipped(label, tuple(exc.problems)))
    order = {label: i for i, label in enumerate(_labels(overrides))}
    skipped.sort(key=lambda x: order[x.combo])  # in sweep order, whichever check skipped it
    if not rows:
        raise InputError([p for x in skipped for p in x.problems])
    return rows, skipped


def _labels(overrides: Mapping[str, Any]) -> list[str]:
    values, combos = _combinations(overrides)
    return [", ".join(f"{k}={v}" for k, v in combo.items() if len(values[k]) > 1) for combo in combos]


def compare_spec(spec: Spec, hw: catalog.Catalog) -> dict[str, Any]:
    """One row: both architectures of ``spec`` built explicitly and priced with ``hw``."""
    closed = {arch: counts.arch_counts(spec, arch) for arch in ARCHES}
    catalog.check_spec(hw, spec, {arch: c.tiers for arch, c in closed.items()})
    row: dict[str, Any] = {
        "gpus": spec.gpus,
        "hb_domain": spec.hb_domain,
        "radix": spec.radix,  # the leaf's
        "link_speed": spec.link_speed,  # the GPU-leaf tier's
        "radix_per_tier": spec.radix_text(),  # "64", or "32/288" leaf first: rows of one sweep may differ only there
        "link_speed_per_tier": spec.speeds_text(),
        "oversubscription": "/".join(spec.tier_oversubscription or (spec.oversubscription,)),  # leaf first, per tier below the top
        "planes": spec.planes,
        "catalog": hw.name,
    }
    boms = {}
    for arch in ARCHES:
        fabric = clos.generate(spec, arch)
        b = bom.compile_bom(fabric, hw)
        boms[arch] = b
        spt, lpt = fabric.switches_per_tier(), fabric.links_per_tier()
        row[arch] = {
            "tiers": fabric.tiers,
            "switches": b.switches,
            "switches_per_tier": spt,
            "links": sum(lpt),
            "transceivers": b.transceivers,
            "cables": b.cables,
            "cost": b.cost,
            "power_w": b.power_w,
            "cost_per_gpu": b.totals()["cost_per_gpu"],
            "closed_form_agrees": (tuple(spt), tuple(lpt)) == (closed[arch].switches_per_tier, closed[arch].links_per_tier),
        }
    cmp = bom.comparison(boms)
    row["cost_reduction"] = cmp["cost_reduction"]
    row["power_reduction"] = cmp["power_reduction"]
    return row


def compare(specs: list[Spec]) -> list[dict[str, Any]]:
    """Rows for every spec, in order; each catalog is loaded once."""
    loaded: dict[str, catalog.Catalog] = {}
    rows = []
    for spec in specs:
        if spec.catalog not in loaded:
            loaded[spec.catalog] = catalog.load_catalog(spec.catalog_ref)
        rows.append(compare_spec(spec, loaded[spec.catalog]))
    return rows


def render_table(rows: list[dict[str, Any]]) -> str:
    """A fixed-width text table of the rows (the CLI prints it)."""
    cats = ", ".join(dict.fromkeys(r["catalog"] for r in rows))
    head = ("gpus", "K", "radix", "Gb/s", "d:u")
    per = ("tiers", "switches", "transceivers", "cost USD", "power kW")
    widths_head = (8, 5, 6, 5, max([3] + [len(r["oversubscription"]) for r in rows]))
    widths_per = (5, 9, 12, 15, 9)
    sep = " | "
    arch_w = sum(widths_per) + len(widths_per) - 1
    lines = [
        f"catalog {cats}; counts from the explicit wiring; reduction = saving of rail-only over rail-optimized",
        " " * (sum(widths_head) + len(widths_head) - 1) + sep + sep.join(f"{a:<{arch_w}}" for a in ARCHES) + sep + "reduction",
        " ".join(f"{h:>{w}}" for h, w in zip(head, widths_head)) + sep + sep.join(" ".join(f"{h:>{w}}" for h, w in zip(per, widths_per)) for _ in ARCHES) + sep + f"{'cost':>6} {'power':>6}",
    ]
    lines.append("-" * len(lines[-1]))
    for r in rows:
        cells = [" ".join(f"{v:>{w}}" for v, w in zip((count(r["gpus"]), r["hb_domain"], r["radix_per_tier"], r["link_speed_per_tier"], r["oversubscription"]), widths_head))]
        for a in ARCHES:
            s = r[a]
            vals = (s["tiers"], count(s["switches"]), count(s["transceivers"]), count(s["cost"]), f"{s['power_w'] / 1000:,.1f}")
            cells.append(" ".join(f"{v:>{w}}" for v, w in zip(vals, widths_per)))
        cells.append(f"{pct(r['cost_reduction']):>6} {pct(r['power_reduction']):>6}")
        lines.append(sep.join(cells))
    return "\n".join(lines)
