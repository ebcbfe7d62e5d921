"""The emulation report as text (``topogen emulate``): what ran, the times measured, every check and failure."""

from __future__ import annotations

from topogen.config.emulate import Report


def render(r: Report) -> str:
    """The emulation report as text: what ran, the times measured, the checks and every failure."""
    def secs(v):
        return "not reached" if v is None else f"{v:.1f} s"

    lines = [
        f"{r.arch}: {r.switches} switches ({r.routers} FRR routers), {r.gpus_sampled} of {r.gpus_total} GPU NICs, {r.cables} cables emulated",
        f"  converged in {secs(r.converge_s)} (from starting the daemons to every switch routing to every sampled GPU at its ECMP width; loading the configurations took {r.load_s:.1f} s of it)",
        f"  BGP sessions Established: {r.sessions_up} of {r.sessions}",
        f"  GPU pairs reaching each other (ip route get + ping): {r.pairs_reach}",
    ]
    if r.arch == "rail-only":
        lines.append(f"  GPU pairs of different rails kept apart: {r.pairs_isolated}")
    if r.pairs_planes_apart:
        lines.append(f"  NIC pairs of two planes kept apart (no route at any switch, no echo): {r.pairs_planes_apart}")
    tiers = ", ".join(f"{role} {n}" for role, n in r.ecmp_by_tier.items())
    lines.append(f"  routes checked at their ECMP width: {r.ecmp_checked}" + (f" ({tiers})" if tiers else ""))
    if r.daemons:
        lines.append("  FRR daemons (what each file needs): " + ", ".join(f"{d} {n}" for d, n in r.daemons.items()))
    if r.link_down.startswith("none"):
        lines.append(f"  link-down test: skipped, {r.link_down[5:].strip('()')}")
    elif r.link_down:
        lines.append(f"  link down {r.link_down}: one next hop narrower in {secs(r.reconverge_down_s)}, full width again {secs(r.reconverge_up_s)} after it came back (checked toward {r.ecmp_narrowed} other leaves)")
    lines.append("  result: every check passed" if r.ok else f"  result: {len(r.failures)} failure(s):")
    lines += [f"    {f}" for f in r.failures]
    if r.causes:
        lines.append(f"  caused by the configuration of {', '.join(r.culprits)}:")
        lines += [f"    {c}" for c in r.causes]
    return "\n".join(lines)
