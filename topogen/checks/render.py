"""The report as text for a terminal: a verdict, one line per check group, then the findings."""

from __future__ import annotations

from typing import Any

from topogen.checks.findings import GROUPS, MAX_PER_CHECK, SEVERITIES, Report
from topogen.checks.text import ratio_text


def _n(x: Any) -> str:
    """A count as people read it (``16,384``); anything else as it is."""
    return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else str(x)


def render(report: Report, limit: int = 30) -> str:
    """The readable report: a verdict, one line per check, then the findings (errors first)."""
    spec = report.spec
    f = report.figures
    verdict = "VALID" if report.valid else "INVALID"
    head = (
        f"{spec.name} / {report.arch}: {verdict} ({_n(report.errors)} error(s), {_n(report.warnings)} warning(s)); "
        f"{_n(f.get('gpus'))} GPUs, {_n(f.get('switches'))} switches, {_n(f.get('cables'))} cables"
    )
    if report.source:
        head += f"; read from {report.source}"
    lines = [head]
    for g, (num, title) in GROUPS.items():
        st = report.group_status(g)
        mark = {"pass": "ok  ", "warning": "WARN", "error": "FAIL"}[st]
        lines.append(f"  [{mark}] {num} {title}: {report.checks.get(g, '')}")
    order = {s: i for i, s in enumerate(SEVERITIES)}
    shown = sorted(report.findings, key=lambda x: order[x.severity])
    problems = [x for x in shown if x.severity != "info"]
    infos = [x for x in shown if x.severity == "info"]
    for x in (problems + infos)[:limit]:
        lines.append(f"  {x.severity:7s} {x.check}: {x.message}")
        if x.hint and x.severity != "info":
            lines.append(f"          hint: {x.hint}")
    rest = len(problems) + len(infos) - limit
    more = sum(k for _s, k in report.suppressed.values())
    if rest > 0 or more:
        lines.append(f"  ... {_n(max(rest, 0) + more)} more finding(s) not shown (validation.json lists up to {MAX_PER_CHECK} per check id and counts the rest)")
    return "\n".join(lines)


def summary_line(fig: dict[str, Any]) -> str:
    """One line from :meth:`Report.key_figures` for the build summary."""
    verdict = "valid" if fig["valid"] else "INVALID"
    hops = fig.get("worst_case_hops") or {}
    over = ", ".join(f"{k} {ratio_text(v)}" for k, v in (fig.get("oversubscription_per_tier") or {}).items()) or "single tier"
    if "gpu_isl_oversubscription" in fig:  # a leaf pair: its one ratio is GPU ports to ISLs
        over = f"GPU:ISL {ratio_text(fig['gpu_isl_oversubscription'])}"
    leaf = ((fig.get("failure_impact") or {}).get("switch") or {}).get("leaf")
    text = (
        f"validation: {verdict} ({_n(fig['errors'])} error(s), {_n(fig['warnings'])} warning(s)); worst case {hops.get('switch_hops')} switch hop(s)"
        f" + {hops.get('hb_hops')} HB hop(s); oversubscription {over}"
    )
    if leaf:
        text += f"; one leaf down cuts off {_n(leaf['gpus_cut_off'])} GPU(s)"
        if leaf.get("gpus_degraded"):
            text += f", {_n(leaf['gpus_degraded'])} GPU(s) lose {leaf['degraded_bandwidth_lost']:.0%} of their bandwidth"
    return text
