"""Scalable units (SU): a fabric built, and grown, SU by SU.

NVIDIA builds its SuperPODs in SUs of 32 DGX nodes: one leaf per rail per SU, the
spines sized for the SU count (or for the SUs the design will grow to), and a node
slot kept for the fabric manager's (UFM) links. Three optional spec fields say so:

* ``scalable_unit``: nodes per SU. Leaves are built per SU: one leaf per rail per SU
  in rail-optimized fabrics, each rail's leaves per SU in rail-only ones. An SU is a
  whole number of HB domains and fits one leaf's downlinks.
* ``max_scalable_units``: the SUs the top tier is sized for. The top-tier switches
  (and their ports) are those of the full design; the leaves, and the tiers between,
  those of the SUs present. The unused top-tier ports wait for the SUs to come.
* ``reserved_leaf_ports``: downlink ports kept free on each leaf of the last SU (the
  last group of leaves), for management or fabric-manager links; no GPU uses them.
  ``reserved_leaf_ports_per: su`` keeps them on each leaf of every SU instead
  (``design``, the default: one set per design, in the last SU, as NVIDIA's 127-node
  SuperPOD count).

Unset, every field leaves the fabric (and the spec's hash) as it was.
"""

from __future__ import annotations

from typing import Any, Mapping

from topogen.spec import counts
from topogen.spec.fields import LIMITS, as_int, homes_of, spec_arches, values_shape
from topogen.util.errors import InputError, Problem, show

LIMIT = 1 << 24  # no SU count, node count or port count above this is a real input


def parse_units(merged: Mapping[str, Any], values: dict[str, Any], problems: list[Problem]) -> None:
    """Check the three fields; store them, and ``values["units"]`` (a :class:`counts.Units`)."""
    got: dict[str, int] = {}
    for key, least, hint in (
        ("scalable_unit", 1, "nodes per scalable unit, e.g. 32 (NVIDIA DGX SuperPOD)"),
        ("max_scalable_units", 1, "the number of SUs the spine layer is sized for, e.g. 4"),
        ("reserved_leaf_ports", 0, "leaf ports kept free on each leaf of the last SU for management or UFM links, e.g. 1"),
    ):
        raw = merged.get(key)
        if raw is None:
            continue
        n = as_int(raw)
        if n is None or n < least or n > LIMIT:
            what = "a positive whole number" if least else "a whole number, 0 or more"
            problems.append(Problem(key, f"{key} must be {what} (at most {LIMIT:,}), got {show(raw)}", hint))
            continue
        got[key] = n
        values[key] = n
    per = merged.get("reserved_leaf_ports_per")
    if per is not None:
        if per not in ("design", "su"):
            problems.append(Problem("reserved_leaf_ports_per", f"reserved_leaf_ports_per must be design or su, got {show(per)}", "design: on the last SU's leaves only (the default); su: on each leaf of every SU"))
        elif per == "su" and merged.get("scalable_unit") is None:
            problems.append(Problem("reserved_leaf_ports_per", "reserved_leaf_ports_per: su needs scalable_unit (the nodes of one SU)", "set scalable_unit: nodes per SU, e.g. 32, or use reserved_leaf_ports_per: design"))
        elif per == "su" and merged.get("reserved_leaf_ports") is None:
            problems.append(Problem("reserved_leaf_ports_per", "reserved_leaf_ports_per: su says where reserved leaf ports go, but reserved_leaf_ports is not set (no port is kept free)", "set reserved_leaf_ports: ports kept free on each leaf, e.g. 1, or leave reserved_leaf_ports_per out"))
        else:
            values["reserved_leaf_ports_per"] = per if per == "su" else None  # design: the default, hashed as unset
    every = values.get("reserved_leaf_ports_per") == "su"
    if "max_scalable_units" in got and "scalable_unit" not in got and merged.get("scalable_unit") is None:
        problems.append(Problem("max_scalable_units", "max_scalable_units needs scalable_unit (the nodes of one SU)", "set scalable_unit: nodes per SU, e.g. 32"))
        return
    if not all(k in values for k in ("gpus", "hb_domain", "gpus_per_node", "radix")) or not got:
        return
    n, k, g = values["gpus"], values["hb_domain"], values["gpus_per_node"]
    su = got.get("scalable_unit")
    if su is None:
        units = counts.Units(0, 0, got.get("reserved_leaf_ports", 0), every)
    else:
        if (su * g) % k:
            per = k // g  # nodes of one HB domain
            near = sorted({max(per, su // per * per), (su // per + 1) * per})
            problems.append(
                Problem(
                    "scalable_unit",
                    f"scalable_unit {su} nodes of {g} GPUs is not a whole number of HB domains of {k}",
                    f"use a multiple of {per} nodes (one HB domain), e.g. {' or '.join(map(str, near))}",
                )
            )
            return
        units = counts.Units(su * g // k, got.get("max_scalable_units", 0), got.get("reserved_leaf_ports", 0), every)

        sized = units.max * su * g  # GPUs of the design the top tier is sized for: checked before any counting
        if sized > LIMITS["gpus"]:
            problems.append(
                Problem(
                    "max_scalable_units",
                    f"max_scalable_units {units.max:,} SUs of {su} nodes ({su * g} GPUs each) size the design for {sized:,} GPUs, more than {LIMITS['gpus']:,}",
                    f"at most {LIMITS['gpus'] // (su * g):,} SUs of {su} nodes",
                )
            )
            return

    if values.get("design") == "leaf-pair":  # one tier: no leaf groups; the pair's port budget is checked with its ISLs
        values["units"] = units
        return
    shape = values_shape(values)
    leaf_down = shape.split(1)[0]
    domains = n // k
    if units.domains:
        if units.domains > leaf_down:
            problems.append(
                Problem(
                    "scalable_unit",
                    f"scalable_unit {su} nodes ({units.domains} HB domain(s)) needs {units.domains} down ports on each leaf, but a leaf has {leaf_down}",
                    f"at most {leaf_down * k // g} nodes per SU for this radix and oversubscription",
                )
            )
            return
        if units.max and values.get("leaf_packing") == "shared" and "rail-optimized" in spec_arches(values):
            problems.append(Problem("max_scalable_units", "max_scalable_units sizes the top tier for full SUs, one leaf per rail each; leaf_packing: shared packs rails of a partly filled SU onto fewer leaves", "use leaf_packing: aligned (the default) with scalable units"))
            return
        present = -(-domains // units.domains)
        if units.max and units.max < present:
            problems.append(Problem("max_scalable_units", f"max_scalable_units {units.max} is below the {present} SUs of {su} nodes that {n:,} GPUs fill", f"use at least {present}, or fewer GPUs"))
            return
    if units.reserved:
        shared = {"rail-optimized": values.get("leaf_packing") == "shared", "rail-only": values.get("rail_packing", "shared") == "shared"}
        homes = homes_of(values.get("homing"))
        for arch in spec_arches(values):
            if min(shape.radix) < 2:
                break
            if arch == "rail-optimized" and counts.rail_optimized_tiers(n, k, shape, shared[arch], homes=homes, units=units) > counts.MAX_TIERS:
                continue  # too deep: reported by the tier check
            if arch == "rail-only" and counts.rail_only_tiers(n, k, shape, homes=homes, units=units) > counts.MAX_TIERS:
                continue
            used, down = counts.last_leaf_use(arch, n, k, shape, shared[arch], units, homes)
            if used + units.reserved > down:
                where = "every SU's leaves" if units.every else "the last SU's leaves" if units.domains else "the last leaf group's leaves"
                free = "in every SU (a smaller scalable_unit)" if units.every else f"in the last {'SU' if units.domains else 'group'} (fewer GPUs)"
                problems.append(
                    Problem(
                        "reserved_leaf_ports",
                        f"reserved_leaf_ports {units.reserved} does not fit: {where} ({arch}) use {used} of their {down} down ports for GPUs",
                        f"leave {units.reserved} node slot(s) free {free}" + (f", or reserve at most {down - used}" if down > used else ""),
                    )
                )
                break
    values["units"] = units


def port_budget(fabric) -> dict[str, Any] | None:
    """Where a fabric's switch ports go, with scalable units or reserved leaf ports (None without).

    ``switch_ports`` = ``cabled`` + ``reserved_leaf_ports`` (kept free for management /
    UFM) + ``growth_ports`` (top-tier ports of a tier sized for ``max_scalable_units``,
    waiting for the SUs to come) + ``unused`` (every other free port).
    """
    spec = fabric.spec
    if not (spec.scalable_unit or spec.reserved_leaf_ports):
        return None
    import numpy as np

    u = spec.units
    total = sum(s.radix for s in fabric.switches)
    used = fabric.ports_used()
    cabled = int(used.sum())
    reserved = sum(b - a + 1 for _i, a, b in fabric.reserved)
    growth = 0
    if u.max:
        top = np.flatnonzero(fabric.switch_tiers() == fabric.tiers)
        growth = int(sum(fabric.switches[i].down_ports for i in top.tolist()) - used[top].sum())
    out: dict[str, Any] = {}
    if u.domains:
        present = -(-spec.domains // u.domains)
        out.update(
            {
                "nodes_per_su": spec.scalable_unit,
                "sus_present": present,
                "sus_sized_for": u.max or present,
                "nodes_in_last_su": (spec.nodes - (present - 1) * spec.scalable_unit),
            }
        )
    out.update(
        {
            "switch_ports": total,
            "cabled_ports": cabled,
            "reserved_leaf_ports": reserved,
            "growth_ports": growth,
            "unused_ports": total - cabled - reserved - growth,
            "reserved_ports": [f"{fabric.switches[i].name}:p{a}" + (f"-p{b}" if b > a else "") for i, a, b in fabric.reserved],
        }
    )
    return out


def gpus_for_units(spec, units: Any, flag: str = "--scalable-units") -> int:
    """GPUs of ``units`` scalable units of ``spec``'s design (``topogen build --scalable-units``).

    The SU is the spec's ``scalable_unit`` (nodes), else its ``networks.scalable_unit``.
    The last SU keeps the node slots the spec leaves free in its own last SU (NVIDIA's
    DGX H100 SuperPOD: 127 nodes in 4 SUs of 32, one slot for the fabric manager; so
    31, 63 and 95 nodes in 1, 2 and 3 SUs, as its RA tabulates). InputError naming
    ``flag`` when ``units`` is no whole number from 1, or the spec has no SU.
    """
    n = as_int(units)
    if n is None or n < 1 or n > LIMIT:
        raise InputError([Problem(flag, f"{flag} must be a whole number of scalable units, 1 or more (at most {LIMIT:,}), got {show(units)}", "e.g. --scalable-units 2")])
    net = getattr(spec, "networks", None)
    su = spec.scalable_unit or (net.scalable_unit if net is not None else None)
    if not su:
        raise InputError([Problem(flag, f"spec {spec.name} has no scalable unit (neither scalable_unit nor networks.scalable_unit), so {n} SU(s) is no size", "give --gpus, or --scalable-unit (nodes per SU) with it")])
    free = -spec.nodes % su  # node slots the spec leaves free in its last SU
    nodes = n * su - free
    if nodes < 1:
        raise InputError([Problem(flag, f"{n} SU(s) of {su} nodes less the {free} slot(s) the spec keeps free leave no node", "more scalable units")])
    gpus = nodes * spec.gpus_per_node
    if gpus > LIMITS["gpus"]:
        raise InputError([Problem(flag, f"{n:,} SU(s) of {su} nodes x {spec.gpus_per_node} GPUs are {gpus:,} GPUs, past the {LIMITS['gpus']:,} topogen reads", f"at most {(LIMITS['gpus'] // spec.gpus_per_node + free) // su:,} SUs")])
    return gpus
