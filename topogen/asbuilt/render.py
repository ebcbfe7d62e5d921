"""Text and JSON views of a :class:`~topogen.asbuilt.diff.Comparison` (nothing here prints)."""

from __future__ import annotations

from typing import Any, Callable

from topogen.asbuilt import Cable
from topogen.asbuilt.diff import Comparison
from topogen.checks.render import summary_line
from topogen.util.inputs import CONTROL_RE

Locate = Callable[[str], str] | None


def printable(text: str) -> str:
    """``text`` with every control character (CR, NUL, ESC, line separators...) written as its escape (``\\r``, ``\\x00``)."""
    return CONTROL_RE.sub(lambda m: repr(m.group())[1:-1], text)


def _end(e, locate: Locate) -> str:
    where = locate(e.device) if locate else ""
    return printable(f"{e} ({where})" if where else str(e))


def _cable(c: Cable, locate: Locate) -> str:
    return f"{_end(c.a, locate)} -- {_end(c.z, locate)}   [{printable(c.where)}]"


def _names(paths: list[str]) -> str:
    shown = ", ".join(printable(p) for p in paths[:3])
    return shown + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def render(cmp: Comparison, locate: Locate = None) -> str:
    """The comparison as text: a headline, each deviation with planned/found ends and its fix, the design check."""
    n = cmp.counts()
    errors = sum(d.severity == "error" for d in cmp.deviations)
    kinds = ", ".join(f"{v:,} {k}" for k, v in n.items() if v)
    total = len(cmp.deviations) + len(cmp.renames)
    part = f", {cmp.compared:,} of them compared" if cmp.partial else ""
    lines = [
        f"plan {_names(cmp.plan.sources)} ({len(cmp.plan.cables):,} cables{part}) vs as-built {_names(cmp.found.sources)} ({cmp.found.kind}, {len(cmp.found.cables):,} cables)",
        f"{cmp.identical:,} identical; " + (f"{total:,} deviation(s): {kinds}; {errors:,} break the design (error), {total - errors:,} keep it valid (warning)" if total else "no deviations: the floor matches the plan"),
    ]
    for r in cmp.renames:
        ident = f" ({printable(r.identity)})" if r.identity else ""
        where = next((c.where for c in cmp.found.cables if r.found in (c.a.device, c.z.device)), "") or next((c.where for c in cmp.found.cables if r.plan in (c.a.device, c.z.device)), "")  # the file and line the name was read at (its cables may carry the plan name by now)
        lines.append("  warning rename")
        lines.append(f"          found:   {printable(repr(r.found))}{ident}{f' ({printable(where)})' if where else ''}: {r.agree:,} of its {r.cables:,} cables lead where {r.plan}'s are planned to")
        lines.append(f"          fix:     name it {r.plan}")
    for c in cmp.choices:
        lines.append("  note    undecided")
        lines.append(f"          {printable(c.text())}")
    for d in cmp.deviations:
        lines.append(f"  {d.severity:7s} {d.kind}")
        for c in d.planned:
            lines.append(f"          planned: {_cable(c, locate)}")
        for c in d.found:
            lines.append(f"          found:   {_cable(c, locate)}")
        lines.append(f"          fix:     {printable(d.fix)}")
        for b in d.because[:3]:
            lines.append(f"          breaks:  {printable(b)}")
    if cmp.report is not None:
        fig = cmp.report.key_figures()
        if "scope" in fig:  # the storage, in-band and OOB networks' checks (topogen.checks.networks)
            lines.append(f"checks of the {fig['scope']} on the as-built wiring: {'valid' if fig['valid'] else 'INVALID'} ({fig['errors']:,} error(s)) over {fig['cables']:,} cables")
        else:
            lines.append("design checks on the as-built wiring: " + summary_line(fig))
        blamed = {b for d in cmp.deviations for b in d.because}
        rest = [x for x in cmp.report.findings if x.severity == "error" and f"{x.check}: {x.message}" not in blamed]
        for x in rest[:10]:
            lines.append(f"  error   {x.check}: {printable(x.message)}")
    lines.extend(f"note: {printable(t)}" for t in cmp.notes)
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
        "compared_cables": cmp.compared,
        "partial": cmp.partial,
        "renames": [r.to_dict() for r in cmp.renames],
        "undecided": [c.to_dict() for c in cmp.choices],
        "deviations": [d.to_dict(locate) for d in cmp.deviations],
        "notes": cmp.notes,
    }
    if cmp.report is not None:
        out["design_check"] = cmp.report.key_figures()
        out["design_errors"] = [{"check": x.check, "message": x.message, "ports": list(x.ports), "devices": list(x.devices)} for x in cmp.report.findings if x.severity == "error"]
    return out
