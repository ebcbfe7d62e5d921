"""Specs for ``topogen analyze``: a spec (file or preset) or the spec flags, lists swept as ``compare`` does.

Workload flags (``--model``, ``--gpu``, ``--tp``...) are merged into the
spec's own ``workload:`` section key by key, so ``--model`` on a preset keeps
its GPU and parallelism; ``--batch`` takes a list swept on top.
"""

from __future__ import annotations

from typing import Any, Mapping

from topogen.bom.compare import Skipped, buildable_specs
from topogen.spec.cluster import Spec, read_spec_file, resolve_spec_path
from topogen.spec.workload import parse_batch
from topogen.util.errors import InputError, Problem

ANALYSIS_RADIX = 2520  # any even radix splits at d:u with d + u <= 10 into whole ports; no analysis reads it
PARALLEL_FLAGS = ("tp", "pp", "dp", "optimizer", "hsdp_shard_gpus", "expert_parallel")


def file_workload(spec_ref: str | None) -> dict[str, Any]:
    """The raw ``workload:`` mapping of a spec file or preset ({} when it has none)."""
    if spec_ref is None:
        return {}
    raw = read_spec_file(resolve_spec_path(spec_ref)).get("workload")
    return dict(raw) if isinstance(raw, dict) else {}


def merged_workload(spec_ref: str | None, flags: Mapping[str, Any]) -> dict[str, Any] | None:
    """The spec's workload with the flags' values put in (None when neither gives one)."""
    wl = file_workload(spec_ref)
    for key in ("model", "gpu"):
        if flags.get(key) is not None:
            wl[key] = flags[key]
    par = dict(wl.get("parallelism") or {}) if isinstance(wl.get("parallelism") or {}, dict) else wl.get("parallelism")
    for key in PARALLEL_FLAGS:
        if flags.get(key) is not None and isinstance(par, dict):
            par[key] = flags[key]
    if par:
        wl["parallelism"] = par
    return wl or None


def analysis_specs(spec_ref: str | None, overrides: Mapping[str, Any], flags: Mapping[str, Any]) -> tuple[list[Spec], list[Skipped]]:
    """Every combination of the swept spec values, each with the merged workload, and the combinations skipped.

    A combination that cannot be resolved (a K that does not divide N, a TP
    larger than K) is skipped and reported, as ``topogen compare`` does; InputError
    only when none resolves. The analyses never use the radix: without one the
    spec takes :data:`ANALYSIS_RADIX`, which no analysis reads.
    """
    o = dict(overrides)
    wl = merged_workload(spec_ref, flags)
    if wl is not None:
        o["workload"] = wl
    if o.get("radix") is None and (spec_ref is None or read_spec_file(resolve_spec_path(spec_ref)).get("radix") is None):
        o["radix"] = str(ANALYSIS_RADIX)
    specs, skipped = buildable_specs(spec_ref, o)
    return [s for _label, s in specs], skipped


def parse_batches(raw: str | None) -> list[float] | None:
    """``--batch 512x2048,2048x2048`` or ``--batch 2M,32M`` -> tokens per value (None when not given)."""
    if raw is None:
        return None
    out, bad = [], []
    for item in (v.strip() for v in raw.split(",")):
        b = parse_batch(item)
        (bad.append(item) if b is None else out.append(b[0]))
    if bad:
        raise InputError([Problem("batch", f"not a batch: {', '.join(map(repr, bad))}", "a whole number of tokens (2M, 32e6) or SEQUENCESxLENGTH (2048x2048), above 0 and at most 1e15 tokens, comma-separated")])
    return list(dict.fromkeys(out))
