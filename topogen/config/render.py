"""The emulation report as text (``topogen emulate``): what ran, the times measured, every check and failure."""

from __future__ import annotations

from topogen.config.emulate import Report


def render(r: Report) -> str:
    """The emulation report as text: what ran, the times measured, the checks and every failure."""
    def secs(v):
        return "not reached" if v is None else f"{v:.1f} s"

    lines = [
        f"{r.arch}: {r.switches} switches ({r.routers} FRR routers), {r.gpus_sampled} of {r.gpus_total} GPU NICs, {r.cables} cables emulated",
        f"  converged in {secs(r.converge_s)} (from starting the daemons to every leaf routing to every sampled GPU at its ECMP width; loading the configurations took {r.load_s:.1f} s of it)",
        f"  BGP sessions Established: {r.sessions_up} of {r.sessions}",
        f"  GPU pairs reaching each other (ip route get + ping): {r.pairs_reach}",
    ]
    if r.arch == "rail-only":
        lines.append(f"  GPU pairs of different rails kept apart: {r.pairs_isolated}")
    lines.append(f"  leaf routes checked at full ECMP width: {r.ecmp_checked}")
    if r.link_down.startswith("none"):
        lines.append(f"  link-down test: skipped, {r.link_down[5:].strip('()')}")
    elif r.link_down:
        lines.append(f"  link down {r.link_down}: one next hop narrower in {secs(r.reconverge_down_s)}, full width again {secs(r.reconverge_up_s)} after it came back (checked toward {r.ecmp_narrowed} other leaves)")
    lines.append("  result: every check passed" if r.ok else f"  result: {len(r.failures)} failure(s):")
    lines += [f"    {f}" for f in r.failures]
    return "\n".join(lines)
