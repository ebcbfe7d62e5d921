"""Terminal text of an expansion's figures (the same numbers as expand.json)."""

from __future__ import annotations

from typing import Any

from topogen.util.figures import count


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def render(figures: dict[str, Any]) -> list[str]:
    """Lines for one architecture's expansion."""
    f = figures
    c = f["cables"]
    out = [
        f"  {f['arch']}: {count(f['from']['gpus'])} -> {count(f['to']['gpus'])} GPUs; {count(f['from']['cables'])} cables installed -> {count(f['to']['cables'])}",
        f"    cables: {count(c['kept'])} kept, {count(c['moved'])} moved, {count(c['added'])} added, {count(c['removed'])} removed; "
        f"{_pct(f['changed_share'])} of the installed connections changed (fewest possible {_pct(f['fewest_possible_share'])}; a plain rebuild changes {_pct(f['rebuild']['changed_share'])}, {count(f['rebuild']['changed'])} cables)",
        f"    switches: {count(f['switches']['new'])} new, {count(f['switches']['spare'])} spare; names relabelled (zero padding only): {count(f['switches']['relabelled'])} switches, {count(f['gpus_relabelled'])} GPUs"
        + (f"; {count(f['switches']['renumbered'])} top-tier switches take the number of their place in the wider stripes" if f["switches"]["renumbered"] else ""),
        f"    stages: {f['stages']} ({f['moving_stages']} re-cabling), each keeping at least {_pct(f['keep_bandwidth'])} of the running GPUs' bandwidth: worst stage {_pct(f['worst_stage_share'])} "
        f"(DP ring and half shift, spray); every stage valid: {'yes' if f['stages_valid'] else 'NO'}; final wiring valid: {'yes' if f['final_valid'] else 'NO'}",
    ]
    for s in f["stage_detail"]:
        share = ", ".join(f"{k} {_pct(v)}" for k, v in s["share"].items())
        bad = f"; INVALID: {', '.join(s['errors'])}" if not s["valid"] else ""
        out.append(f"      stage {s['stage']}: unplug {count(s['unplug'])}, plug {count(s['plug'])}; bandwidth kept: {share}{bad}")
    fl = f.get("floor")
    if fl is not None:
        out.append(f"    floor: {count(f['relocated_devices'])} installed devices relocated (a fresh layout of the new spec would move {count(fl['fresh_layout_relocates'])}); "
                   f"{count(fl['new_in_installed_racks'])} new devices in installed racks, {count(fl['new_racks'])} new racks")
    a = f.get("addresses")
    if a is not None:
        conf = f"; switch configurations (FRR): {count(a['configs_changed'])} change, {count(a['configs_same'])} stay" if "configs_changed" in a else ""
        out.append(f"    addresses: {count(a['links_kept_same'])} kept cables keep theirs, {count(a['links_kept_renumbered'])} renumbered ({count(a['gpu_nics_renumbered'])} GPU NICs); "
                   f"{count(a['loopbacks_changed'])} loopbacks and {count(a['asns_changed'])} ASNs change{conf}")
    out.extend(f"    note: {n}" for n in f["notes"])
    out.extend(_networks(f.get("networks")))
    return out


def _networks(n: dict[str, Any] | None) -> list[str]:
    """The storage, in-band and OOB networks' lines."""
    if n is None:
        return []
    c = n["cables"]
    per = "; ".join(f"{net} {count(v['kept'])}/{count(v['moved'])}/{count(v['added'])}/{count(v['removed'])}" for net, v in n["per_network"].items())
    out = [
        f"    networks (storage, in-band, OOB): {count(n['installed'])} cables installed -> {count(n['final'])}",
        f"      cables: {count(c['kept'])} kept, {count(c['moved'])} moved, {count(c['added'])} added, {count(c['removed'])} removed ({per} kept/moved/added/removed); "
        f"{_pct(n['changed_share'])} of the installed connections changed (fewest possible {_pct(n['fewest_possible_share'])}; a plain rebuild changes {_pct(n['rebuild']['changed_share'])}, {count(n['rebuild']['changed'])} cables)",
        f"      switches: {count(n['switches']['new'])} new, {count(n['switches']['spare'])} spare; stages: {n['stages']} (new cables on free ports first, then the moves); every stage valid: {'yes' if n['stages_valid'] else 'NO'}; final wiring valid: {'yes' if n['final_valid'] else 'NO'}",
    ]
    out.extend(f"      INVALID: {e}" for e in n["errors"][:10])
    return out
