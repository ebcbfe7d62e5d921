"""``summary.json``: the key figures of a build, one section per architecture.

Each phase adds its own fields here, read from the :class:`BuildContext`: the
generator (switch and link counts), the validator (``validation``), the BOM
(``transceivers``, ``cost``, ``power_w``). Keys are stable; new phases add keys
rather than change them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from topogen import __version__
from topogen.analysis import decision
from topogen.bom import bill as bom
from topogen.fabric import networks as nw
from topogen.spec import counts, units
from topogen.spec.addressing import DEFAULT as ADDRESSING_DEFAULT
from topogen.util.figures import count, kw, plural, plural_noun, usd


def arch_section(fabric, closed) -> dict[str, Any]:
    """Counts of one fabric, read off the explicit wiring, with the closed form alongside."""
    spt = fabric.switches_per_tier()
    lpt = fabric.links_per_tier()
    out = {
        "tiers": fabric.tiers,
        "switches": sum(spt),
        "switches_per_tier": spt,
        "links": fabric.cables,  # the links of every tier, and a leaf pair's ISLs (Counts.links)
        "links_per_tier": lpt,
        "switch_ports": sum(s.radix for s in fabric.switches),
        "unused_switch_ports": fabric.unused_switch_ports(),
        "closed_form_agrees": (tuple(spt), tuple(lpt), fabric.unused_switch_ports(), len(fabric.isls))
        == (closed.switches_per_tier, closed.links_per_tier, closed.unused_switch_ports, closed.isls),
        "notes": list(fabric.notes),
    }
    if len(fabric.isls):  # design: leaf-pair: the inter-switch links (link leaf-leaf), in "links" but in no tier of links_per_tier
        out["isls"] = len(fabric.isls)
    if fabric.spec.striping == "minimal":
        out["striping"] = striping_section(fabric.spec, fabric.arch, closed)
    budget = units.port_budget(fabric)
    if budget is not None:  # scalable units: SUs present and sized for, reserved and growth ports
        out["port_budget"] = budget
    return out


def striping_section(spec, arch: str, closed) -> dict[str, Any]:
    """``striping: minimal`` against balanced striping (closed form): switches per tier, saved, and the top tier's spread."""
    bal = counts.arch_counts(replace(spec, striping="balanced"), arch)
    out: dict[str, Any] = {
        "mode": "minimal",
        "switches": closed.switches,
        "balanced_switches": bal.switches,
        "switches_saved": bal.switches - closed.switches,
        "switches_saved_per_tier": [b - m for b, m in zip(bal.switches_per_tier, closed.switches_per_tier)],
    }
    spread = counts.top_spread(spec, arch)
    if spread is not None:
        out.update(spread.to_dict())
    return out


def striping_text(st: dict[str, Any], tiers: int) -> str:
    """The ``striping: minimal`` line of a build (console and workbook): switches against balanced striping, and the boxes' price and power saved."""
    nouns = [f"{r} switch" if r.startswith("tier") else r for r in (counts.tier_role(j) for j in range(1, tiers + 1))]
    fewer = ", ".join(f"{count(n)} fewer {noun if n == 1 else plural_noun(noun)}" for n, noun in zip(st["switches_saved_per_tier"], nouns) if n)
    text = f"striping: minimal: {plural(st['switches'], 'switch')} where balanced striping needs {count(st['balanced_switches'])}"
    if not st["switches_saved"]:
        return text + " (no saving at this size)"
    text += f" ({fewer})"
    if "switch_cost_saved" in st:
        text += f", saving {usd(st['switch_cost_saved'])} of switches" + (f" and {kw(st['switch_power_saved_w'])}" if st["switch_power_saved_w"] else "")
    return text


def make_summary(ctx) -> dict[str, Any]:
    spec = ctx.spec
    out: dict[str, Any] = {
        "generator": f"topogen {__version__}",
        "spec_sha256": spec.digest(),
        "spec": spec.to_dict(),
        "architectures": {},
    }
    for arch, fabric in ctx.fabrics.items():
        out["architectures"][arch] = arch_section(fabric, ctx.counts[arch])
    for arch, report in (getattr(ctx, "reports", None) or {}).items():  # the validator's key figures
        out["architectures"][arch]["validation"] = report.key_figures()
    for arch, lay in (getattr(ctx, "layouts", None) or {}).items():  # the layout: racks and cable lengths
        out["architectures"][arch]["layout"] = lay.summary(ctx.fabrics[arch])
    boms = getattr(ctx, "boms", None) or {}
    if boms:  # the BOM phase: transceivers, cost, power_w per architecture; savings of rail-only
        out["catalog"] = ctx.catalog.name
        out["catalog_sha256"] = ctx.catalog.sha256
        for arch, b in boms.items():
            out["architectures"][arch].update(bom.summary_fields(b))
            if spec.spares is not None:  # the spares the policy adds, priced apart from the fabric's capex
                out["architectures"][arch]["spares"] = bom.spares_totals(b.spares(spec.spares))
            out["architectures"][arch]["notes"] += list(b.notes)  # lengths the catalog does not cover
            if "striping" in out["architectures"][arch]:
                out["architectures"][arch]["striping"].update(bom.switch_saving(b, out["architectures"][arch]["striping"]["switches_saved_per_tier"]))
        if (cmp := bom.comparison(boms)) is not None:
            out["comparison"] = cmp
    if getattr(ctx, "analysis", None) is not None:  # the workload's analyses (topogen.analysis)
        out["analysis"] = ctx.analysis
    if getattr(ctx, "networks", None):  # the other networks (spec networks:): counts, findings, BOM, totals
        out["networks"] = networks_section(ctx)
    if boms:  # the decision: which architecture to buy, and the figures it rests on (topogen.analysis.decision)
        out["decision"] = decision.decide(out, spec, getattr(ctx, "traffic", None), getattr(ctx, "catalog", None))
    return out


def networks_section(ctx) -> dict[str, Any]:
    """summary.json's ``networks``: per architecture, each network's switches and cables by role, its BOM lines, findings, and totals."""
    out: dict[str, Any] = {"storage_required": ctx.storage_required, "architectures": {}}
    for arch, n in ctx.networks.items():
        boms = ctx.network_boms.get(arch, [])
        out_arch = {"racks": {"compute": n.racks[0], "management": n.racks[1]}, "pdus": n.endpoints["pdu"], "networks": n.counts(), "bom": [b.to_dict() for b in boms]}
        out_arch["findings"] = [f.to_dict() for f in ctx.network_findings.get(arch, [])]
        if arch in getattr(ctx, "network_layouts", {}):
            out_arch["layout"] = ctx.network_layouts[arch].summary()
        fab = ctx.fabrics[arch]
        costs = [b.switch_cost for b in boms]
        other_cost, other_power = bom.money(sum(b.cost for b in boms)), bom.money(sum(b.power_w for b in boms))
        compute = ctx.boms.get(arch) if getattr(ctx, "boms", None) else None
        out_arch["totals"] = {
            "compute_switches": len(fab.switches),
            "compute_cables": fab.cables,
            "other_switches": sum(b.switch_count for b in boms),
            "other_cables": sum(b.cable_count for b in boms),
            "all_switches": len(fab.switches) + sum(b.switch_count for b in boms),
            "all_cables": fab.cables + sum(b.cable_count for b in boms),
            "other_switch_cost_usd": float(sum(costs)) if costs and None not in costs else None,
            "other_cost_usd": other_cost,
            "other_power_w": other_power,
            "compute_cost_usd": compute.cost if compute is not None else None,
            "compute_power_w": compute.power_w if compute is not None else None,
            "cluster_cost_usd": bom.money(compute.cost + other_cost) if compute is not None else None,
            "cluster_power_w": bom.money(compute.power_w + other_power) if compute is not None else None,
        }
        out_arch["assumptions"] = list(n.assumptions)  # where the spec or catalog is silent (also printed by build)
        out_arch["notes"] = list(n.assumptions) + [t for b in boms for t in b.notes()]
        plan = (getattr(ctx, "network_addresses", None) or {}).get(arch)
        if plan is not None:
            out_arch["addresses"] = address_fields(plan, ctx.spec.addressing or ADDRESSING_DEFAULT)
        out["architectures"][arch] = out_arch
    return out


def address_fields(plan, spec) -> dict[str, Any]:
    """summary.json's ``addresses`` of one architecture: per network (``inband``, ``oob``) its pool, subnets, their prefix length, devices and free addresses."""
    out = {}
    for net, name in ((nw.INBAND, "inband"), (nw.OOB, "oob")):
        s = plan.subnets[net]
        out[name] = {"pool": str(spec.pool(name)), "subnets": len(s), "prefix_len": s.plen, "vlan": s.vlan, "devices": int(s.hosts.sum()), "free": int(s.free().sum())}
    return out


def network_lines(section: dict[str, Any], arch: str) -> list[str]:
    """The build's lines for the other networks of ``arch`` (``section``: summary.json's ``networks``)."""
    a = section["architectures"][arch]
    lines = []
    for b in a["bom"]:
        roles = a["networks"][b["network"]]
        sw = " + ".join(f"{q:,} {r}" for r, q in roles["switches"].items())
        cables = ", ".join(f"{q:,} {r}" for r, q in roles["cables"].items())
        skus = ", ".join(sorted({x["sku"] for x in b["switch_lines"]})) or "the compute fabric's boxes"  # a collapsed core's leaves
        cost = f", {usd(b['cost_usd'])} (switches {usd(b['switch_cost_usd'])}, optics {usd(b['transceiver_cost_usd'])}, cables {usd(b['cable_cost_usd'])}), {kw(b['power_w'])}"
        lines.append(f"{b['network']}: {plural(b['switches'], 'switch')} ({sw}; {skus}), {plural(b['cables'], 'cable')} ({cables}){cost}")
    t = a["totals"]
    errors = sum(1 for f in a["findings"] if f["severity"] == "error")
    lines.append(f"networks: {'valid' if not errors else f'{errors} error(s)'}; racks {a['racks']['compute']:,} compute + {a['racks']['management']:,} management, {a['pdus']:,} PDUs; the other networks add {plural(t['other_switches'], 'switch')} and {plural(t['other_cables'], 'cable')} to the compute fabric's")
    if "addresses" in a:
        ib, oob = a["addresses"]["inband"], a["addresses"]["oob"]
        lines.append(f"addresses: in-band {ib['subnets']:,} x /{ib['prefix_len']} of {ib['pool']} ({ib['devices']:,} devices, {ib['free']:,} free), OOB {oob['subnets']:,} x /{oob['prefix_len']} of {oob['pool']} ({oob['devices']:,} devices, {oob['free']:,} free)")
    if t["cluster_cost_usd"] is not None:
        lines.append(f"cluster: {usd(t['cluster_cost_usd'])}, {kw(t['cluster_power_w'])} (compute fabric {usd(t['compute_cost_usd'])}, other networks {usd(t['other_cost_usd'])})")
    for f in a["findings"][:10]:
        lines.append(f"{f['severity']} {f['check']}: {f['message']}" + (f" ({f['hint']})" if f["hint"] else ""))
    lines += [f"note: {t}" for t in a.get("assumptions", [])]
    return lines