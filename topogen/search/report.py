"""What a search shows and writes: the front table, the families, and the output directory.

The output directory (the contract of :mod:`topogen.outdir`: replaced atomically,
only when it holds topogen's own output) holds:

``search.json``   the ``--json`` object: rows, front, chosen, families, skipped, errors
``front.csv``     the front, one design a line, in the order chosen
``designs.csv``   every design screened, with closed-form or explicit figures
``chosen.yaml``   the chosen design's spec: ``topogen build chosen.yaml`` builds it as it is
``pareto.png`` / ``pareto.svg``  cost per GPU against relative iteration time, by architecture
``manifest.json`` every file with its hash, and the provenance of the choice
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import yaml

from topogen import __version__
from topogen.exports.files import digest, open_output, write_output_text
from topogen.exports.drawings.plots import FORMATS, METADATA, STYLE
from topogen.util.text import CsvWriter
from topogen.util.figures import count, kw, plural, usd, usd_cents
from topogen.util.outdir import atomic_dir
from topogen.search.run import Result, label
from topogen.search.space import OBJECTIVES

COLUMNS = ("design", "arch", "catalog", "hb_domain", "gpus", "radix", "link_speed", "planes", "oversubscription", "figures", "tiers", "switches", "links", "cost_usd", "cost_per_gpu", "power_w", "transceivers", "cables", "cables_optics", "blast_radius_gpus", "switch_hops", "racks", "iteration_s", "on_front")
ARCH_COLORS = {"rail-optimized": "#4C72B0", "rail-only": "#DD8452"}


def relative_iteration(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Iteration time of each design over the fastest design of the search (1.0 = the fastest)."""
    its = [r["iteration_s"] for r in rows if r.get("iteration_s")]
    best = min(its) if its else None
    return {r["design"]: r["iteration_s"] / best for r in rows if best and r.get("iteration_s")}


def render_table(res: Result) -> str:
    """The front as a fixed-width table, the chosen design first, then why each family lost."""
    rel = relative_iteration([r for r in res.rows if "skipped" not in r])
    head = ("design", "architecture", "catalog", "K", "N", "radix", "Gb/s", "over", "tiers", "switches", "capex USD", "USD/GPU", "power kW", "cables+optics", "blast GPUs", "hops", "racks", "iter s", "rel")
    lines = []
    body = []
    for r in res.front:
        body.append((
            r["design"] + (" *" if r["design"] == res.chosen.get("design") else ""), r["arch"], r["catalog"], str(r["hb_domain"]), count(r["gpus"]), str(r["radix"]), str(r["link_speed"]), r["oversubscription"],
            str(r["tiers"]) + (" pair" if r.get("fabric_design") == "leaf-pair" else ""), count(r["switches"]), usd(r["cost_usd"]), usd_cents(r["cost_per_gpu"]), kw(r["power_w"]).removesuffix(" kW"), count(r["cables_optics"]),
            count(r["blast_radius_gpus"]), str(r["switch_hops"]), count(r["racks"]) if r.get("racks") is not None else "-",
            f"{r['iteration_s']:.4f}" if r.get("iteration_s") is not None else "-", f"{rel[r['design']]:.3f}" if r["design"] in rel else "-",
        ))
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)] if body else [len(h) for h in head]
    st = res.stats
    objs = ", ".join(res.search["objectives"])
    unbuilt = f", {count(len(res.skipped))} not, listed in search.json" if res.skipped else ""
    lines.append(f"search {res.search['name']}: {count(st['designs'])} designs screened by the closed form ({count(st['buildable'])} buildable{unbuilt}), {count(st.get('near_front', 0))} near the front built explicitly ({count(st['built'])} built on {st['executor']}, {count(st['reused'])} from the results file)")
    lines.append(f"Pareto front of {objs} ({plural(len(res.front), 'design')}; figures from the explicit builds; * chosen by least {res.search['choose']}; rel = iteration time over the fastest design's)")
    lines.append("  ".join(h.ljust(w) if i < 3 or h == "over" else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths))))
    lines.append("-" * len(lines[-1]))
    for b in body:
        lines.append("  ".join(c.ljust(w) if i < 3 or i == 7 else c.rjust(w) for i, (c, w) in enumerate(zip(b, widths))))
    if res.chosen:
        c = res.chosen
        lines.append("")
        lines.append(f"chosen: {c['design']} ({label(c)}): {usd(c['cost_usd'])} ({usd_cents(c['cost_per_gpu'])} per GPU), {kw(c['power_w'])}, {c['tiers']} tiers, iteration {c['iteration_s']:.4f} s" if c.get("iteration_s") is not None else f"chosen: {c['design']} ({label(c)}): {usd(c['cost_usd'])}, {kw(c['power_w'])}")
    sim = [k for k in ("bus_bandwidth_GBps", "alltoall_GBps") if res.chosen and k in res.chosen]
    if sim:
        c = res.chosen
        said = {"bus_bandwidth_GBps": "DP ring bus bandwidth", "alltoall_GBps": f"{c.get('alltoall_pattern', 'alltoall')} per GPU"}
        lines.append("simulated on its wiring: " + ", ".join(f"{said[k]} {c[k]:,.2f} GB/s" if c[k] is not None else f"{said[k]} not simulated" for k in sim))
    if res.chosen and res.search["constraints"]:
        b = res.chosen.get("binding")
        lines.append(b["text"] if b else "no constraint binds: the chosen design is the least " + res.search["choose"] + " of the whole space")
    if res.families:
        lines.append("")
        lines.append("families (architecture / catalog / K):")
        for f in res.families:
            lines.append(f"  {f['family']}: {f['why']}")
    if "iteration" in res.search["objectives"] and any(r["oversubscription"] != "1:1" for r in res.front):
        lines.append("")
        lines.append("note: Eq. 1's B_S is line rate over the oversubscription of the tiers a byte climbs (every GPU's bytes leaving its leaf); topogen analyze iteration --bandwidth simulated gives the ring on the wiring")
    return "\n".join(lines)


def _csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    with open_output(path, newline="") as fh:
        w = CsvWriter(fh)
        cols = COLUMNS + (("fabric_design",) if any(r.get("fabric_design") for r in rows) else ())  # a leaf pair searched: say which rows are
        cols += tuple(k for k in ("bus_bandwidth_GBps", "alltoall_GBps") if any(k in r for r in rows))  # simulated: a search with min_bus_bandwidth_GBps or min_alltoall_GBps
        w.writerow(cols)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])


def chosen_yaml(res: Result) -> str:
    """The chosen design's spec as YAML, in the order of the spec's fields."""
    spec = res.chosen["spec"]
    head = f"# topogen search {res.search['name']}: the chosen design {res.chosen['design']}; manifest.json records how it was chosen\n"
    return head + yaml.safe_dump(spec, sort_keys=False, default_flow_style=False, allow_unicode=False)


def plot(res: Result, base: Path) -> list[Path]:
    """Cost per GPU against relative iteration time: every design built, coloured by architecture, the front marked."""
    import matplotlib  # start-up: matplotlib loads only when a plot is drawn

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    rows = [r for r in res.rows if r.get("figures") == "explicit" and r.get("iteration_s") is not None]
    rel = relative_iteration([r for r in res.rows if "skipped" not in r])
    paths = []
    with matplotlib.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(11.0, 6.2))
        fig.suptitle(f"{res.search['name']}: cost per GPU against iteration time", fontsize=STYLE["axes.titlesize"], fontweight="bold", x=0.01, ha="left")
        ax.set_title(f"designs built explicitly ({len(rows)}); ringed: the Pareto front of {', '.join(res.search['objectives'])}", fontsize=12, loc="left", color="#555555")
        for arch, color in ARCH_COLORS.items():
            pts = [r for r in rows if r["arch"] == arch]
            if pts:
                ax.scatter([rel[r["design"]] for r in pts], [r["cost_per_gpu"] for r in pts], s=60, color=color, label=arch, zorder=3)
        fr = [r for r in res.front if r.get("iteration_s") is not None]
        ax.scatter([rel[r["design"]] for r in fr], [r["cost_per_gpu"] for r in fr], s=220, facecolors="none", edgecolors="black", linewidths=1.6, label="Pareto front", zorder=4)
        if res.chosen and res.chosen["design"] in rel:
            c = res.chosen
            ax.annotate(f"chosen: {c['design']}\n{label(c)}", (rel[c["design"]], c["cost_per_gpu"]), textcoords="offset points", xytext=(12, 12), fontsize=10)
        ax.set_xlabel("iteration time relative to the fastest design")
        ax.set_ylabel("fabric cost per GPU (USD)")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"${v:,.0f}"))
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        try:
            for fmt in FORMATS:
                p = base.with_suffix(f".{fmt}")
                with open_output(p, "wb") as fh:
                    fig.savefig(fh, format=fmt, metadata=METADATA[fmt], bbox_inches="tight", pad_inches=0.25)
                paths.append(p)
        finally:
            plt.close(fig)
    return paths


def write(res: Result, out_dir: Path, force: bool = False, notes: list[str] | None = None) -> list[Path]:
    """Write the search's files into ``out_dir`` atomically (see the module doc); the paths written."""
    with atomic_dir(out_dir, force=force, notes=notes) as tmp:
        written: list[Path] = []
        p = tmp / "search.json"
        write_output_text(p, json.dumps(res.as_json(), indent=2) + "\n")
        written.append(p)
        _csv(tmp / "front.csv", res.front)
        _csv(tmp / "designs.csv", [r for r in res.rows if "skipped" not in r])
        written += [tmp / "front.csv", tmp / "designs.csv"]
        if res.chosen:
            write_output_text(tmp / "chosen.yaml", chosen_yaml(res))
            written.append(tmp / "chosen.yaml")
            if res.chosen.get("iteration_s") is not None:
                written += plot(res, tmp / "pareto")
            elif notes is not None:
                notes.append("pareto.png not drawn: the search has no workload, so no iteration time to plot cost against")
        entries = []
        for q in sorted(written, key=lambda q: q.name):
            size, sha = digest(q)
            entries.append({"path": q.relative_to(tmp).as_posix(), "bytes": size, "sha256": sha})
        manifest = {
            "generator": f"topogen {__version__}",
            "search": res.search,
            "chosen": {"design": res.chosen.get("design"), "spec_sha256": res.chosen.get("spec_sha256"), "label": label(res.chosen) if res.chosen else None,
                       "chosen_by": f"least {res.search['choose']} on the Pareto front of {', '.join(res.search['objectives'])}",
                       "figures": {o: res.chosen.get(OBJECTIVES[o].key) for o in OBJECTIVES} if res.chosen else {}},
            "stats": res.stats,
            "files": entries,
        }
        write_output_text(tmp / "manifest.json", json.dumps(manifest, indent=2) + "\n")
        rel = [q.relative_to(tmp) for q in written]
    return [Path(out_dir) / r for r in rel] + [Path(out_dir) / "manifest.json"]
