"""``analysis/*.png``, ``analysis/*.svg``: the workload's analyses as slide-ready plots (matplotlib, Agg).

Written only when the spec has a ``workload:``; each plot renders rows that
:func:`topogen.analysis.fabric.build_section` already computed (``ctx.analysis``):

``iteration_vs_k``      iteration time against HB-domain size K at N/4, N/2 and the spec's N,
                        each with its ideal any-to-any line (the rail-only paper's Fig. 7);
``relative_vs_batch``   relative performance (ideal / iteration) against batch for K, 2K, 4K (Fig. 8);
``time_breakdown``      the terms of Eq. 1 stacked, per K, at the spec's N;
``dp_rail_bytes``       bytes per NIC (one rail) per step of each DP scheme, with its rail time.

With ``build --traffic`` (``ctx.traffic``, :mod:`topogen.traffic.overview`), with or without a workload:

``link_utilisation_<pattern>``  per link tier, the share of its links at each utilisation (5 % bins) under
                                the DP ring, the all-to-all and the permutation, the architectures side by side.

Deterministic: fixed metadata (no date, no software string), a fixed SVG hash
salt, and matplotlib's bundled DejaVu fonts; the same spec gives the same bytes.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from topogen.exports.files import open_output
from topogen.spec.params import _fmt

FORMATS = ("png", "svg")
SIZE_IN = (11.0, 6.2)  # 16:9-ish, fills a slide
DPI = 150
STYLE = {
    "font.size": 15,
    "axes.titlesize": 17,
    "axes.labelsize": 15,
    "legend.fontsize": 13,
    "xtick.labelsize": 13,
    "ytick.labelsize": 13,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.alpha": 0.3,
    "svg.hashsalt": "topogen",
    "svg.fonttype": "path",
    "figure.dpi": DPI,
}
METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None}}
COLORS = {"compute": "#4C72B0", "dp_network": "#DD8452", "dp_hb": "#55A868", "mp_hb": "#8172B3", "ideal": "#444444", "line": "#C44E52"}


def _gb(x: float) -> str:
    return f"{x / 1e9:,.1f} GB"


def _subtitle(sec: dict[str, Any]) -> str:
    p = {q["name"].split(",")[0].split(" (")[0]: q for q in sec["parameters"]}
    parts = []
    for key, label, scale, unit in (("B_S", "B_S", 1, " Gb/s"), ("B_F", "B_F", 1, " Gb/s"), ("C", "C", 1e-12, " TFLOP/s")):
        if key in p:
            parts.append(f"{label} {p[key]['value'] * scale:,.4g}{unit} [{p[key]['status']}]")
    rows = sec["rows"]
    if rows and "n_m_rule" in rows[0]:
        if len({r["batch_tokens"] for r in rows}) == 1:
            parts.append(f"batch {rows[0]['batch_tokens'] / 1e6:,.3g}M tokens")
        parts.append(f"N_M rule: {rows[0]['n_m_rule']}")
    return ", ".join(parts)


def _spread(ys: list[float], gap: float) -> list[float]:
    """Label positions for sorted ``ys``, moved up just enough to be ``gap`` apart."""
    out: list[float] = []
    for y in ys:
        out.append(max(y, out[-1] + gap) if out else y)
    return out


def _save(fig, base: Path) -> list[Path]:
    paths = []
    for fmt in FORMATS:
        p = base.with_suffix(f".{fmt}")
        with open_output(p, "wb") as fh:
            fig.savefig(fh, format=fmt, metadata=METADATA[fmt], bbox_inches="tight", pad_inches=0.25)
        paths.append(p)
    return paths


def _figure(plt, title: str, subtitle: str, sec: dict[str, Any] | None = None, note: str = "", width_in: float = SIZE_IN[0]):
    fig, ax = plt.subplots(figsize=(width_in, SIZE_IN[1]))
    fig.suptitle(title, fontsize=STYLE["axes.titlesize"], fontweight="bold", x=0.01, ha="left")
    ax.set_title(subtitle, fontsize=12, loc="left", color="#555555")
    if sec is not None:
        fig.text(0.01, -0.01, (note + "\n" if note else "") + _footer(sec), fontsize=9.5, color="#666666", ha="left", va="top", linespacing=1.5)
    return fig, ax


def _footer(sec: dict[str, Any]) -> str:
    """Every parameter the plot used, with its status: the plot names its inputs as the tables do."""
    parts = []
    for p in sec["parameters"]:
        name = p["name"]
        short = name.split(",")[0] if "," in name else name.split(" (")[0]
        unit = f" {p['unit']}" if p["unit"] and len(p["unit"]) <= 8 and p["value"] != "swept" else ""
        parts.append(f"{short} = {_fmt(p['value'])}{unit} [{p['status']}]")
    lines, line = [], ""
    for part in parts:
        if line and len(line) + len(part) > 160:
            lines.append(line)
            line = ""
        line = f"{line};  {part}" if line else part
    legend = "[paper] printed in a source, [derived] our algebra, [fit] reproduces published figures, [spec] the cluster spec; sources in summary.json"
    return "\n".join([*lines, line, legend])


def plot_iteration_vs_k(plt, spec, sec: dict[str, Any]):
    rows = sec["rows"]
    model = rows[0]["model"]
    ns = sorted({r["gpus"] for r in rows})
    fig, ax = _figure(plt, f"{model}: iteration time vs HB-domain size (N = {', '.join(f'{n:,}' for n in ns)})", _subtitle(sec), sec, width_in=8.6)
    palette = ["#4C72B0", "#55A868", "#8172B3"]
    for n in ns:
        rn = [r for r in rows if r["gpus"] == n]
        mine = n == spec.gpus
        color = COLORS["line"] if mine else palette[ns.index(n) % len(palette)]
        ks = [r["hb_domain"] for r in rn]
        ax.plot(ks, [r["iteration_s"] for r in rn], marker="o", lw=2.8 if mine else 1.8, ms=7 if mine else 5, color=color, label=f"N = {n:,}" + (" (this spec)" if mine else ""))
        ax.axhline(rn[0]["ideal_s"], ls="--", lw=1.6, color=color, alpha=0.8)
    ax.plot([], [], ls="--", color="#444444", label="ideal any-to-any at B_F\n(Eq. 3), same colour")
    ks_all = sorted({r["hb_domain"] for r in rows})
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks_all, [f"{k:,}" for k in ks_all])
    ax.minorticks_off()
    ax.set_xlabel("HB-domain size K (GPUs)")
    ax.set_ylabel("iteration time (s)")
    ax.set_ylim(0, max(r["iteration_s"] for r in rows) * 1.1)
    here = next(r for r in rows if r["hb_domain"] == spec.hb_domain and r["gpus"] == spec.gpus)
    ax.plot([spec.hb_domain], [here["iteration_s"]], ls="none", marker="o", ms=17, mfc="none", mec="black", mew=2,
            label=f"this spec: K = {spec.hb_domain:,}, {here['iteration_s']:.2f} s,\n{100 * here['relative']:.0f}% of its ideal")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def plot_relative_vs_batch(plt, spec, sec: dict[str, Any]):
    rows = sec["rows"]
    model = rows[0]["model"]
    fig, ax = _figure(plt, f"{model} on {spec.gpus:,} GPUs: relative performance vs batch", _subtitle(sec), sec)
    ks = list(dict.fromkeys(r["hb_domain"] for r in rows))
    seq = spec.workload.model.seq_len
    by_seq = seq is not None and all((r["batch_tokens"] / seq).is_integer() for r in rows)
    ends = []
    for i, k in enumerate(ks):
        color = ("#C44E52", "#4C72B0", "#55A868", "#8172B3")[i % 4]
        rk = [r for r in rows if r["hb_domain"] == k]
        xs = [r["batch_tokens"] / seq if by_seq else r["batch_tokens"] / 1e6 for r in rk]
        ys = [100 * r["relative"] for r in rk]
        ax.plot(xs, ys, marker="o", lw=2.5, ms=7, label=f"K = {k:,}" + (" (this spec)" if k == spec.hb_domain else ""), color=color)
        ends.append((xs[0], ys[0], xs[-1], ys[-1], color))
    for side in (0, 1):  # end labels, spread apart so that close lines stay readable
        pts = sorted(((e[2 * side], e[2 * side + 1], e[4]) for e in ends), key=lambda t: t[1])
        for (x, y, color), ly in zip(pts, _spread([p[1] for p in pts], 4.5)):
            ax.annotate(f"{y:.0f}%", (x, y), xytext=(x * (1.07 if side else 1 / 1.07), ly), textcoords="data", ha="left" if side else "right", va="center", fontsize=12, color=color)
    ax.set_xscale("log", base=2)
    xs_all = sorted({(r["batch_tokens"] / seq if by_seq else r["batch_tokens"] / 1e6) for r in rows})
    ax.set_xticks(xs_all, [f"{x:,.4g}" for x in xs_all])
    ax.minorticks_off()
    ax.set_xlim(xs_all[0] / 1.4, xs_all[-1] * 1.4)
    ax.set_xlabel(f"batch (sequences of {seq:,} tokens)" if by_seq else "batch (million tokens)")
    ax.set_ylabel("relative performance (ideal / iteration, %)")
    ax.set_ylim(0, 105)
    ax.legend(loc="lower right", frameon=False)
    return fig


def plot_time_breakdown(plt, spec, sec: dict[str, Any]):
    rows = [r for r in sec["rows"] if r["gpus"] == spec.gpus]
    model = rows[0]["model"]
    fig, ax = _figure(plt, f"{model} on {spec.gpus:,} GPUs: where the iteration time goes", _subtitle(sec), sec)
    labels = [f"{r['hb_domain']:,}" for r in rows]
    x = list(range(len(rows)))
    bottom = [0.0] * len(rows)
    for key, name in (("compute_s", "compute"), ("dp_network_s", "DP over the rails (B_S)"), ("dp_hb_s", "DP inside the HB domain (B_F)"), ("mp_hb_s", "MP inside the HB domain (B_F)")):
        vals = [r[key] for r in rows]
        ax.bar(x, vals, bottom=bottom, width=0.7, label=name, color=COLORS[key[:-2]], edgecolor="white", linewidth=0.8)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.axhline(rows[0]["ideal_s"], ls="--", lw=2, color=COLORS["ideal"], label="ideal any-to-any (Eq. 3)")
    ax.set_xticks(x, labels)
    ax.set_xlabel("HB-domain size K (GPUs)")
    ax.set_ylabel("iteration time (s)")
    ax.set_ylim(0, max(bottom) * 1.3)
    ax.grid(axis="x", visible=False)
    here = next(i for i, r in enumerate(rows) if r["hb_domain"] == spec.hb_domain)
    ax.get_xticklabels()[here].set_fontweight("bold")
    ax.legend(loc="upper right", frameon=False, ncol=2)
    return fig


def plot_dp_rail_bytes(plt, spec, sec: dict[str, Any]):
    rows = sec["rows"]
    model = rows[0]["model"]
    bs = next(p["value"] for p in sec["parameters"] if p["name"].startswith("B_S"))
    fig, ax = _figure(plt, f"{model} on {spec.gpus:,} GPUs (K = {spec.hb_domain}): bytes per rail NIC per step", f"rail-aligned hierarchical collectives; cross-rail bytes: 0 for every scheme; rail time at B_S = {bs:,.0f} Gb/s", sec,
                      "* the workload's scheme;  grey, hatched: its model states do not fit the GPU's memory (activations not counted)")
    y = list(range(len(rows)))[::-1]
    vals = [r["bytes_per_nic"] / 1e9 for r in rows]
    for yi, r, v in zip(y, rows, vals):
        fits = r["memory_fits"]
        ax.barh(yi, v, height=0.6, color="#4C72B0" if fits is not False else "#BBBBBB", hatch=None if fits is not False else "//", edgecolor="white")
        note = f"{v:,.2f} GB, {r['rail_time_s']:.2f} s on the rail" + ("" if fits is not False else f"  (states {r['memory_bytes_per_gpu'] / 1e9:,.0f} GB/GPU: do not fit)")
        ax.text(v + max(vals) * 0.01, yi, note, va="center", fontsize=12)
    ax.set_yticks(y, [r["label"] + (" *" if r["chosen"] else "") for r in rows])
    ax.set_xlabel("GB per NIC per step (one rail)")
    ax.set_xlim(0, max(vals) * 1.75)
    ax.grid(axis="y", visible=False)
    return fig


TIER_COLORS = ("#4C72B0", "#DD8452", "#55A868", "#8172B3", "#937860", "#C44E52")


def plot_link_utilisation(plt, spec, sec: dict[str, Any], pattern: str):
    """Small multiples: a row per link tier, a column per architecture; bars = share of the tier's links per utilisation bin."""
    hists = [h for h in sec["histograms"] if h["pattern"] == pattern and h["failed"] == "none"]
    rows = {r["arch"]: r for r in sec["rows"] if r["pattern"].partition(":")[0] == pattern and r["failed"] == "none"}
    archs = [h["arch"] for h in hists]
    tiers: list[str] = []
    for h in hists:
        tiers += [t["tier"] for t in h["tiers"] if t["tier"] not in tiers and t["tier"] != "hb-domain"]
    if any(t["tier"] == "hb-domain" for h in hists for t in h["tiers"]):
        tiers.append("hb-domain")
    edges = sec["bins"]
    width = edges[1] - edges[0]
    mids = [100 * (a + b) / 2 for a, b in zip(edges, edges[1:])]
    fig = plt.figure(figsize=(SIZE_IN[0], 1.4 + 1.6 * len(tiers)), layout="constrained")
    fig.suptitle(f"{spec.name} ({spec.gpus:,} GPUs): {pattern}, link utilisation per tier ({sec['routing']})", fontsize=STYLE["axes.titlesize"], fontweight="bold", x=0.01, ha="left")
    cols = fig.subfigures(1, len(archs), squeeze=False)[0]
    axes = []
    for j, h in enumerate(hists):
        by = {t["tier"]: t for t in h["tiers"]}
        r = rows[h["arch"]]
        mean = {t["tier"]: t["mean_utilisation"] for t in r["tiers"]}
        cols[j].suptitle(f"{h['arch']}: slowest pair at {100 * r['min_rate_fraction']:.1f}% of line rate", fontsize=12.5, x=0.02, ha="left")
        col = cols[j].subplots(len(tiers), 1, sharex=True, squeeze=False)[:, 0]
        axes.append(col)
        for i, tier in enumerate(tiers):
            ax = col[i]
            t = by.get(tier)
            if t is None or not t["links"]:
                ax.text(0.5, 0.5, "no such links", transform=ax.transAxes, ha="center", va="center", color="#888888", fontsize=11)
            else:
                share = [100 * c / t["links"] for c in t["counts"]]
                ax.bar(mids, share, width=100 * width * 0.9, color=TIER_COLORS[i % len(TIER_COLORS)])
                ax.set_title(f"{t['links']:,} links, mean {100 * mean.get(tier, 0.0):.1f}%", fontsize=10.5, loc="right", color="#444444")
            if j == 0:
                ax.set_ylabel(f"{tier}\n% of links", fontsize=11)
            ax.set_ylim(0, 105)
            ax.set_yticks([0, 50, 100])
            ax.set_xlim(0, 100)
            ax.tick_params(labelsize=10)
    for col in axes:
        col[-1].set_xlabel("utilisation (% of link capacity)", fontsize=12)
    notes = list(dict.fromkeys(n for a in archs for n in rows[a]["notes"]))
    if notes:
        fig.text(0.01, -0.01, "\n".join(_wrap(n, 170) for n in notes[:2]), fontsize=9, color="#666666", ha="left", va="top")
    return fig


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width))


PLOTS = (
    ("iteration_vs_k", "iteration_vs_k", plot_iteration_vs_k),
    ("relative_vs_batch", "iteration_vs_batch", plot_relative_vs_batch),
    ("time_breakdown", "iteration_vs_k", plot_time_breakdown),
    ("dp_rail_bytes", "dp-traffic", plot_dp_rail_bytes),
)


def export(ctx, dest: Path) -> list[Path]:
    """Write every plot whose analysis ran; nothing when the spec has no workload."""
    sections = getattr(ctx, "analysis", None) or {}
    traffic = getattr(ctx, "traffic", None)
    if not sections and not traffic:
        return []
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    out = Path(dest) / "analysis"
    paths: list[Path] = []
    with matplotlib.rc_context(STYLE):
        for name, key, draw in PLOTS if sections else ():
            sec = sections.get(key) or {}
            if not sec.get("rows"):
                ctx.messages.append(f"analysis/{name} not drawn: {sec.get('skipped', 'no rows')}")
                continue
            out.mkdir(parents=True, exist_ok=True)
            fig = draw(plt, ctx.spec, sec)
            try:
                paths += _save(fig, out / name)
            finally:
                plt.close(fig)
        for pattern in dict.fromkeys(h["pattern"] for h in (traffic or {}).get("histograms", ())):
            out.mkdir(parents=True, exist_ok=True)
            fig = plot_link_utilisation(plt, ctx.spec, traffic, pattern)
            try:
                paths += _save(fig, out / f"link_utilisation_{pattern}")
            finally:
                plt.close(fig)
    return paths
