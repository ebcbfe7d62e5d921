"""One design built, validated and priced explicitly: plain data in, plain data out.

:func:`build_design` takes the design's spec as a dict (what ``chosen.yaml``
holds) and returns a dict of its figures read off :func:`topogen.pipeline.build`'s
summary, the very figures ``topogen build`` of that spec reports. Nothing but
JSON-able data crosses a process or network boundary, so it runs in a local worker
process or on a Dask worker alike.
"""

from __future__ import annotations

from typing import Any, Mapping

from topogen import __version__, pipeline
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError

FIGURES = ("tiers", "switches_per_tier", "links_per_tier", "switches", "links", "cost_usd", "cost_per_gpu", "power_w", "transceivers", "cables", "cables_optics", "blast_radius_gpus", "switch_hops", "racks", "iteration_s")


def build_design(spec_data: Mapping[str, Any]) -> dict[str, Any]:
    """Build ``spec_data`` (one architecture) and return its figures, validation and closed-form agreement.

    Bad input comes back as ``{"error": ...}`` rather than an exception, so a
    worker never loses a result to pickling an exception class.
    """
    try:
        spec = build_spec(dict(spec_data), default_name=str(spec_data.get("name", "design")))
        ctx = pipeline.build(spec)
    except InputError as exc:
        return {"error": "; ".join(p.render() for p in exc.problems), "generator": f"topogen {__version__}"}
    return figures(ctx.summary, spec.arch)


def figures(summary: Mapping[str, Any], arch: str) -> dict[str, Any]:
    """The search's figures of one architecture, taken from a build's ``summary.json``."""
    sec = summary["architectures"][arch]
    val = sec.get("validation", {})
    impact = (val.get("failure_impact") or {}).get("switch", {})
    blast = max((v["gpus_cut_off"] + v["gpus_degraded"] for v in impact.values()), default=0)
    hops = (val.get("worst_case_hops") or {}).get("switch_hops")
    it = None
    rows = ((summary.get("analysis") or {}).get("iteration") or {}).get("rows")
    if rows:
        it = next((r for r in rows if r.get("arch", arch) == arch), rows[0])["iteration_s"]
    return {
        "generator": summary["generator"],
        "spec_sha256": summary["spec_sha256"],
        "valid": bool(val.get("valid", True)),
        "validation_errors": int(val.get("errors", 0)),
        "closed_form_agrees": bool(sec["closed_form_agrees"]),
        "tiers": sec["tiers"],
        "switches_per_tier": list(sec["switches_per_tier"]),
        "links_per_tier": list(sec["links_per_tier"]),
        "switches": sec["switches"],
        "links": sec["links"],
        "cost_usd": sec["cost"],
        "cost_per_gpu": sec["cost_per_gpu"],
        "power_w": sec["power_w"],
        "transceivers": sec["transceivers"],
        "cables": sec["cables"],
        "cables_optics": sec["transceivers"] + sec["cables"],
        "blast_radius_gpus": blast,
        "switch_hops": hops,
        "racks": (sec.get("layout") or {}).get("racks"),
        "iteration_s": it,
    }
