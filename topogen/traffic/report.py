"""Rows and text of a traffic study: one row per architecture x pattern x routing x failure case.

Row keys (``--json``): ``arch``, ``pattern``, ``routing``, ``failed`` ("none"
for the intact fabric), ``pairs``, ``flows``, ``aggregation`` (what a flow stands for:
``gpu-pair``; an ``alltoall`` beyond 1,024 GPUs ``leaf-pair``, or
``leaf-group-pair`` where leaf pairs are too many), ``unroutable_pairs``,
``min_rate_fraction`` and ``mean_rate_fraction`` (of the sender's NIC line
rate, over the pairs that cross the network; for ``alltoall``, per GPU: a
pair's rate times the N-K pairs each GPU sends across the network), ``max_link_load`` (offered load
over capacity on the busiest link, every flow offering what its own NIC port
would give it, before any sharing), ``completion_s`` (when ``--size`` is
given: every pair moving that many bytes at its max-min rate),
``bus_bandwidth_GBps`` (ring-allreduce: the slowest ring hop, what the DP
all-reduce sees as bus bandwidth), ``busiest_links``, ``tiers`` (per link
tier: mean and max utilisation at the max-min rates), ``notes``, and on a
failure row ``change``: each figure minus the intact fabric's.
"""

from __future__ import annotations

from typing import Any

from topogen.util.figures import count, pct
from topogen.traffic.simulate import Result

CHANGED = ("min_rate_fraction", "mean_rate_fraction", "max_link_load", "completion_s", "bus_bandwidth_GBps")


def row(res: Result, size_bytes: float | None, intact: dict[str, Any] | None = None) -> dict[str, Any]:
    """One JSON row of a result; with ``intact``, the change against the intact fabric's row."""
    out: dict[str, Any] = {
        "arch": res.arch,
        "pattern": res.pattern,
        "routing": res.routing,
        "failed": res.failed,
        "pairs": res.pairs,
        "flows": res.flows,
        "aggregation": res.aggregation,
        "unroutable_pairs": res.unroutable,
        "min_rate_fraction": round(res.min_rate_fraction, 6),
        "mean_rate_fraction": round(res.mean_rate_fraction, 6),
        "max_link_load": round(res.max_link_load, 6),
    }
    if size_bytes is not None:
        c = res.completion_s(size_bytes)
        out["size_bytes"] = size_bytes
        out["completion_s"] = None if c is None or c == float("inf") else round(c, 9)
    out["bus_bandwidth_GBps"] = None if res.bus_GBps is None else round(res.bus_GBps, 6)
    out["busiest_links"] = [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in b.items()} for b in res.busiest]
    out["tiers"] = [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in t.items()} for t in res.tiers]
    out["notes"] = list(res.notes)
    if intact is not None:
        out["change"] = {k: (None if out.get(k) is None or intact.get(k) is None else round(out[k] - intact[k], 9)) for k in CHANGED if k in out}
    return out


def render(rows: list[dict[str, Any]], notes: list[str]) -> str:
    """The study as text: a side-by-side table of the figures, then per row its busiest links and tiers."""
    heads = [f"{r['arch']}" + (f" [{r['failed']}]" if r["failed"] != "none" else "") for r in rows]
    groups: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r["pattern"], r["routing"]), []).append(i)
    lines: list[str] = []
    for (pattern, routing), idx in groups.items():
        lines.append(f"{pattern}, {routing} routing")
        cols = [heads[i] for i in idx]
        table = [
            ("pairs / flows", [f"{count(rows[i]['pairs'])} / {count(rows[i]['flows'])}" for i in idx]),
            ("slowest pair (of NIC line rate)", [pct(rows[i]["min_rate_fraction"]) for i in idx]),
            ("mean pair (of NIC line rate)", [pct(rows[i]["mean_rate_fraction"]) for i in idx]),
            ("busiest link: offered / capacity", [f"{rows[i]['max_link_load']:.2f}" for i in idx]),
        ]
        if any(rows[i]["unroutable_pairs"] for i in idx):
            table.append(("pairs without a path", [count(rows[i]["unroutable_pairs"]) for i in idx]))
        if "completion_s" in rows[idx[0]]:
            table.append((f"completion, {_bytes(rows[idx[0]]['size_bytes'])} per pair", [_seconds(rows[i]["completion_s"]) for i in idx]))
        if any(rows[i]["bus_bandwidth_GBps"] is not None for i in idx):
            table.append(("DP all-reduce bus bandwidth", [f"{rows[i]['bus_bandwidth_GBps']:.1f} GB/s" if rows[i]["bus_bandwidth_GBps"] is not None else "-" for i in idx]))
        if any("change" in rows[i] for i in idx):
            table.append(("slowest pair vs intact", [_delta(rows[i]) for i in idx]))
        w0 = max(len(t[0]) for t in table)
        widths = [max(len(c), *(len(t[1][j]) for t in table)) for j, c in enumerate(cols)]
        lines.append("  " + " " * w0 + "  " + "  ".join(c.rjust(w) for c, w in zip(cols, widths)))
        for label, vals in table:
            lines.append(f"  {label:<{w0}s}  " + "  ".join(v.rjust(w) for v, w in zip(vals, widths)))
        for i in idx:
            r = rows[i]
            lines.append(f"  {heads[i]}: utilisation per link tier " + ", ".join(f"{t['tier']} mean {pct(t['mean_utilisation'])} max {pct(t['max_utilisation'])}" for t in r["tiers"]))
            for b in r["busiest_links"]:
                lines.append(f"    {b['link']} ({b['tier']}, {b['direction']}): offered {b['offered_over_capacity']:.2f} x capacity, carries {pct(b['utilisation'])}")
            for note in r["notes"]:
                lines.append(f"    note: {note}")
        lines.append("")
    lines += [f"note: {n}" for n in notes]
    return "\n".join(lines).rstrip()


def _delta(r: dict[str, Any]) -> str:
    if "change" not in r or r["change"].get("min_rate_fraction") is None:
        return "-"
    return f"{100 * r['change']['min_rate_fraction']:+.1f} pts"


def _seconds(s: float | None) -> str:
    if s is None:
        return "never (a pair has no path)"
    return f"{s * 1e3:.3f} ms" if s < 1 else f"{s:.3f} s"


def _bytes(b: float) -> str:
    for unit, v in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= v:
            return f"{b / v:g} {unit}"
    return f"{b:g} B"
