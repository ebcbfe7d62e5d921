"""Text and JSON views of a :class:`~topogen.asbuilt.diff.Comparison` (nothing here prints)."""

from __future__ import annotations

from typing import Any, Callable

from topogen.asbuilt import Cable
from topogen.asbuilt.diff import Comparison
from topogen.checks.render import summary_line

Locate = Callable[[str], str] | None


def _end(e, locate: Locate) -> str:
    where = locate(e.device) if locate else ""
    return f"{e} ({where})" if where else str(e)


def _cable(c: Cable, locate: Locate) -> str:
    return f"{_end(c.a, locate)} -- {_end(c.z, locate)}   [{c.where}]"


def _names(paths: list[str]) -> str:
    shown = ", ".join(paths[:3])
    return shown + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def render(cmp: Comparison, locate: Locate = None) -> str:
    """The comparison as text: a headline, each deviation with planned/found ends and its fix, the design check."""
    n = cmp.counts()
    errors = sum(d.severity == "error" for d in cmp.deviations)
    kinds = ", ".join(f"{v:,} {k}" for k, v in n.items() if v)
    lines = [
        f"plan {_names(cmp.plan.sources)} ({len(cmp.plan.cables):,} cables) vs as-built {_names(cmp.found.sources)} ({cmp.found.kind}, {len(cmp.found.cables):,} cables)",
        f"{cmp.identical:,} identical; " + (f"{len(cmp.deviations):,} deviation(s): {kinds}; {errors:,} break the design (error), {len(cmp.deviations) - errors:,} keep it valid (warning)" if cmp.deviations else "no deviations: the floor matches the plan"),
    ]
    for d in cmp.deviations:
        lines.append(f"  {d.severity:7s} {d.kind}")
        for c in d.planned:
            lines.append(f"          planned: {_cable(c, locate)}")
        for c in d.found:
            lines.append(f"          found:   {_cable(c, locate)}")
        lines.append(f"          fix:     {d.fix}")
        for b in d.because[:3]:
            lines.append(f"          breaks:  {b}")
    if cmp.report is not None:
        lines.append("design checks on the as-built wiring: " + summary_line(cmp.report.key_figures()))
        blamed = {b for d in cmp.deviations for b in d.because}
        rest = [x for x in cmp.report.findings if x.severity == "error" and f"{x.check}: {x.message}" not in blamed]
        for x in rest[:10]:
            lines.append(f"  error   {x.check}: {x.message}")
    lines.extend(f"note: {t}" for t in cmp.notes)
    return "\n".join(lines)


def to_dict(cmp: Comparison, locate: Locate = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "plan": cmp.plan.sources,
        "as_built": cmp.found.sources,
        "format": cmp.found.kind,
        "planned_cables": len(cmp.plan.cables),
        "found_cables": len(cmp.found.cables),
        "identical": cmp.identical,
        "counts": cmp.counts(),
        "deviations": [d.to_dict(locate) for d in cmp.deviations],
        "notes": cmp.notes,
    }
    if cmp.report is not None:
        out["design_check"] = cmp.report.key_figures()
        out["design_errors"] = [{"check": x.check, "message": x.message, "ports": list(x.ports), "devices": list(x.devices)} for x in cmp.report.findings if x.severity == "error"]
    return out
