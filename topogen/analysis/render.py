"""Text tables of the analyses (what ``topogen analyze`` prints): rows, then parameters, then caveats."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from topogen.analysis.fabric import Report

Column = tuple[str, str, Callable[[Any], str]]


def _g(v: Any) -> str:
    return f"{v:,.0f}" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def _s(v: Any) -> str:
    return "n/a" if v is None else f"{v:.4f}"


def _gb(v: Any) -> str:
    return "n/a" if v is None else f"{v / 1e9:,.2f}"


def _pct(v: Any) -> str:
    return "n/a" if v is None else f"{100 * v:.2f}%"


def _f(digits: int) -> Callable[[Any], str]:
    return lambda v: "n/a" if v is None else f"{v:,.{digits}f}"


def _tokens(v: Any) -> str:
    return f"{v:,.0f}"


def _fits(v: Any) -> str:
    return "unknown" if v is None else ("yes" if v else "NO")


COLUMNS: dict[str, list[Column]] = {
    "iteration": [
        ("gpus", "gpus", _g), ("K", "hb_domain", _g), ("batch", "batch_tokens", _tokens), ("N_M", "n_m", _f(1)),
        ("iteration s", "iteration_s", _s), ("ideal s", "ideal_s", _s), ("relative", "relative", _pct),
        ("compute s", "compute_s", _s), ("DP net s", "dp_network_s", _s), ("DP HB s", "dp_hb_s", _s), ("MP HB s", "mp_hb_s", _s),
        ("vs smaller K", "change_vs_smaller_k", lambda v: "" if v is None else f"{100 * v:+.2f}%"), ("train days", "train_days", _f(1)),
    ],
    "alltoall": [
        ("gpus", "gpus", _g), ("K", "hb_domain", _g), ("group", "group_gpus", _g), ("domains", "domains", _g),
        ("MB/pair", "bytes_per_pair", lambda v: f"{v / 1e6:,.3f}"), ("NIC GB/GPU", "nic_bytes_per_gpu", _gb),
        ("NVLink GB clos", "nvlink_bytes_per_gpu_clos", _gb), ("NVLink GB rail-only", "nvlink_bytes_per_gpu_rail_only", _gb),
        ("clos s", "clos_s", _s), ("rail-only pipelined s", "rail_only_pipelined_s", _s), ("rail-only serial s", "rail_only_serial_s", _s),
        ("over pipelined", "overhead_pipelined", _pct), ("over serial", "overhead_serial", _pct),
    ],
    "checkpoint": [
        ("gpus", "gpus", _g), ("model", "model", str), ("TB", "checkpoint_TB", _f(2)), ("writers", "writers", _g), ("DP", "dp", _g),
        ("write GB/s", "write_GBps", _f(1)), ("write s", "write_s", _f(1)), ("GB/s per GPU", "write_per_gpu_GBps", _f(3)),
        ("GB/s per node", "write_per_node_GBps", _f(2)), ("overhead", "overhead", _pct),
        ("restore read GB/s (all replicas)", "restore_read_GBps", _f(0)), ("(one replica)", "restore_one_replica_read_GBps", _f(0)),
        ("broadcast s", "broadcast_s", _f(2)),
        ("NIC share", "nic_share", _pct), ("path", "path", str),
    ],
    "dp-traffic": [
        ("scheme", "label", str), ("gpus", "gpus", _g), ("K", "hb_domain", _g), ("GB/GPU flat", "bytes_per_gpu", _gb),
        ("GB/NIC", "bytes_per_nic", _gb), ("NVLink GB/GPU", "nvlink_bytes_per_gpu", _gb), ("rail s", "rail_time_s", _f(3)),
        ("cross-rail GB", "cross_rail_bytes", _gb), ("memory GB/GPU", "memory_bytes_per_gpu", _gb), ("fits", "memory_fits", _fits),
        ("", "chosen", lambda v: "<- workload" if v else ""),
    ],
}

TITLES = {
    "iteration": "Iteration time, Eq. 1 of the rail-only paper (ideal = Eq. 3, any-to-any at B_F; relative = ideal / iteration)",
    "alltoall": "One uniform all-to-all: rail-optimized Clos against rail-only (cross-rail bytes relayed through the HB domain)",
    "checkpoint": "Checkpoint write and restore (size = P x bytes per parameter)",
    "dp-traffic": "Data-parallel bytes per step: flat ring per GPU, rail-aligned hierarchical per NIC",
}


def table(columns: Sequence[Column], rows: Sequence[dict[str, Any]]) -> list[str]:
    cells = [[fmt(r.get(key)) for _h, key, fmt in columns] for r in rows]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, (h, _k, _f) in enumerate(columns)]
    lines = ["  ".join(f"{h:>{w}}" for (h, _k, _f), w in zip(columns, widths)).rstrip()]
    lines.append("-" * len(lines[0]))
    lines += ["  ".join(f"{c:>{w}}" for c, w in zip(row, widths)).rstrip() for row in cells]
    return lines


def render(report: Report) -> str:
    """The table, the parameters (value, unit, [status], source) and the caveats."""
    columns = COLUMNS[report.analysis]
    if report.analysis == "iteration" and any("arch" in r for r in report.rows):  # B_S simulated per architecture
        columns = [("arch", "arch", str), *columns[:4], ("B_S Gb/s", "scale_out_gbps", _f(1)), *columns[4:]]
    lines = [TITLES[report.analysis], *table(columns, report.rows)]
    lines += [f"note: {n}" for n in report.notes]
    lines += [f"skipped {x}" for x in report.skipped]
    lines += ["", "parameters:"]
    lines += [f"  {p.render()}" for p in report.params]
    lines += ["caveats:"] + [f"  - {c}" for c in report.caveats]
    return "\n".join(lines)


def build_lines(sections: dict[str, Any]) -> list[str]:
    """The analyses' headline figures for ``topogen build``'s summary (full tables: summary.json, workbook, plots)."""
    lines = []
    for r in sections.get("iteration", {}).get("rows") or ():
        arch = f", {r['arch']} at B_S {r['scale_out_gbps']:,.4g} Gb/s" if "arch" in r else ""
        lines.append(f"analysis ({r['model']} on {r['gpu']}{arch}): iteration {r['iteration_s']:.3f} s, {100 * r['relative']:.1f}% of the ideal any-to-any, N_M {r['n_m']:.1f} ({r['n_m_rule']}); network share {100 * r['dp_network_s'] / r['iteration_s']:.1f}%")
    ck = sections.get("checkpoint", {}).get("rows")
    if ck:
        r = ck[0]
        lines.append(f"checkpoint {r['checkpoint_TB']:,.2f} TB: {r['write_GBps']:,.1f} GB/s for {r['write_s']:,.1f} s ({r['writers']:,} writers, {r['write_per_gpu_GBps']:,.3f} GB/s per GPU), {100 * r['overhead']:.2f}% overhead")
    dp = [r for r in sections.get("dp-traffic", {}).get("rows", ()) if r["chosen"]]
    if dp:
        r = dp[0]
        lines.append(f"{r['label']}: {r['bytes_per_nic'] / 1e9:,.2f} GB per rail NIC per step ({r['rail_time_s']:.3f} s), no cross-rail bytes")
    for name, sec in sections.items():
        if "skipped" in sec:
            lines.append(f"{name} not run: {sec['skipped']}")
    return lines
