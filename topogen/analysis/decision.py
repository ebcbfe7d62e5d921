"""The decision: which architecture to buy for the spec's job, and the figures it rests on.

:func:`decide` reads what the build computed (summary.json's architectures, the
workload's analyses, and ``build --traffic``'s collectives when they were run) and
returns plain data: both architectures side by side, a one-sentence
recommendation, the reasons, and when the other design would win. It simulates
nothing itself, so it adds no time to a 131,072-GPU build; without ``--traffic``
the collectives are reported as not simulated, with the flag that adds them.

The rule [assumed, stated in the report]: the step time of the job is Eq. 1's
iteration time plus its expert all-to-alls (:func:`alltoall_step_s`). The cheaper
architecture is recommended while its step time is within :data:`TOLERANCE` of the
other's; otherwise the faster one is. For a rail-only candidate whose only
penalty is the all-to-all relay (overhead ``o`` over the rail-optimized
all-to-all), rail-only stays recommended while the all-to-all's share of the
step stays below ``TOLERANCE / o``.

Failure rates [paper]: Alibaba HPN (SIGCOMM 2024) per month 0.057 % of NIC-ToR
links and 0.051 % of ToRs fail; Llama 3 (arXiv 2407.21783, 16,384 H100 GPUs over
54 days) saw 7 NIC interruptions, 2.4e-4 per NIC-month. Upper-tier switches and
switch-to-switch links take the ToR and link rates [assumed]. A catalog's
``failure_rates`` section overrides any of them with its own rate and source
(:func:`rates`); the report shows each rate with where it comes from.
"""

from __future__ import annotations

from typing import Any, Mapping

ARCHES = ("rail-optimized", "rail-only")
TOLERANCE = 0.01  # step time within 1 % counts as equal performance: the cheaper design wins
ALLTOALLS_PER_MOE_LAYER = 4  # dispatch and combine, forward and backward, per micro-batch [assumed]
DAYS_PER_MONTH = 30.44
LLAMA3_DAYS = 54
LLAMA3_GPUS = 16_384
FAILURE_RATES: tuple[dict[str, Any], ...] = (
    {"component": "GPU-leaf link", "per_month": 0.00057, "status": "paper", "source": "Alibaba HPN, SIGCOMM 2024: 0.057 % of NIC-ToR links fail per month"},
    {"component": "leaf switch", "per_month": 0.00051, "status": "paper", "source": "Alibaba HPN, SIGCOMM 2024: 0.051 % of ToRs fail per month"},
    {"component": "spine and core switch", "per_month": 0.00051, "status": "assumed", "source": "the ToR rate of Alibaba HPN, SIGCOMM 2024"},
    {"component": "switch-switch link", "per_month": 0.00057, "status": "assumed", "source": "the NIC-ToR link rate of Alibaba HPN, SIGCOMM 2024"},
    {"component": "NIC", "per_month": 7 / (LLAMA3_GPUS * LLAMA3_DAYS / DAYS_PER_MONTH), "status": "derived", "source": "Llama 3 (arXiv 2407.21783): 7 NIC interruptions on 16,384 H100 GPUs in 54 days"},
)


CATALOG_KEYS = {"gpu_leaf_link": "GPU-leaf link", "leaf_switch": "leaf switch", "spine_switch": "spine and core switch", "switch_link": "switch-switch link", "nic": "NIC"}  # catalog failure_rates key -> component


def rates(catalog=None) -> tuple[dict[str, Any], ...]:
    """The failure rates the decision uses: :data:`FAILURE_RATES`, each overridden by the catalog's ``failure_rates`` where it states one."""
    given = dict(getattr(catalog, "failure_rates", ()) or ())
    out = []
    for key, component in CATALOG_KEYS.items():
        row = next(r for r in FAILURE_RATES if r["component"] == component)
        if key in given:
            row = {"component": component, "per_month": given[key], "status": "catalog", "source": f"catalog {catalog.name}: {catalog.failure_source}"}
        out.append(dict(row))
    return tuple(out)


def alltoall_step_s(workload, gpus: int, alltoall_row: Mapping[str, Any] | None, key: str) -> tuple[float, int]:
    """Seconds of expert all-to-all per training step on one architecture, and the all-to-alls counted.

    ``4 x moe_layers x micro-batches``, micro-batches = batch / (N x tokens one GPU
    dispatches), each taking the analysis's time ``key`` (``clos_s`` or
    ``rail_only_pipelined_s``). 0 for a dense model.
    """
    if alltoall_row is None or workload is None or not workload.model.is_moe:
        return 0.0, 0
    m = workload.model
    tokens = workload.parallelism.micro_batch_tokens or m.seq_len or 4096
    micro = max(1, round(workload.batch_tokens / (gpus * tokens)))
    n = ALLTOALLS_PER_MOE_LAYER * (m.moe_layers or m.layers) * micro
    return n * alltoall_row[key], n


def _iteration(analysis: Mapping[str, Any] | None, arch: str) -> float | None:
    rows = ((analysis or {}).get("iteration") or {}).get("rows") or []
    row = next((r for r in rows if r.get("arch", arch) == arch), None)
    return None if row is None else row["iteration_s"]


def _failures(sec: Mapping[str, Any], gpus: int, table: tuple[dict[str, Any], ...] = FAILURE_RATES) -> list[dict[str, Any]]:
    """Expected failures per month of each component type: its count x its rate (one NIC per GPU, as in the Llama 3 cluster)."""
    per_tier = sec["switches_per_tier"]
    links = sec["links_per_tier"]
    counts = {
        "GPU-leaf link": links[0] if links else 0,
        "leaf switch": per_tier[0] if per_tier else 0,
        "spine and core switch": sum(per_tier[1:]),
        "switch-switch link": sum(links[1:]),
        "NIC": gpus,
    }
    return [{**r, "count": counts[r["component"]], "expected_per_month": round(counts[r["component"]] * r["per_month"], 4)} for r in table]


def _blast(sec: Mapping[str, Any]) -> list[dict[str, Any]]:
    impact = (sec.get("validation") or {}).get("failure_impact") or {}
    out = []
    for kind in ("switch", "link"):
        for role, v in (impact.get(kind) or {}).items():
            out.append({"component": f"{role} {kind}" if kind == "switch" else f"{role} link", "example": v.get("device") or " - ".join(v.get("ends", ())), "gpus_cut_off": v["gpus_cut_off"], "gpus_degraded": v["gpus_degraded"], "gpu_bandwidth_lost_gbps": v.get("gpu_bandwidth_lost_gbps")})
    return out


def _collectives(traffic: Mapping[str, Any] | None, arch: str) -> list[dict[str, Any]] | None:
    if traffic is None:
        return None
    out = []
    for r in traffic["rows"]:
        if r["arch"] != arch:
            continue
        out.append({"pattern": r["pattern"], "failed": r["failed"], "slowest_pair": r["min_rate_fraction"], "mean_pair": r["mean_rate_fraction"], "bus_bandwidth_GBps": r["bus_bandwidth_GBps"]})
    return out


def decide(summary: Mapping[str, Any], spec, traffic: Mapping[str, Any] | None = None, catalog=None) -> dict[str, Any]:
    """The ``decision`` section of summary.json (see the module): both architectures, the recommendation, its reasons.

    ``catalog`` (the build's :class:`~topogen.spec.catalog.Catalog`) supplies its own failure rates, if it states any.
    """
    table = rates(catalog)
    archs = [a for a in ARCHES if a in summary["architectures"]]
    analysis = summary.get("analysis")
    a2a_rows = ((analysis or {}).get("alltoall") or {}).get("rows") or []
    a2a = a2a_rows[0] if a2a_rows else None
    wl = spec.workload
    job_gpus = spec.active_gpus
    side: dict[str, dict[str, Any]] = {}
    for arch in archs:
        sec = summary["architectures"][arch]
        it = _iteration(analysis, arch)
        a2a_s, n_a2a = alltoall_step_s(wl, job_gpus, a2a, "clos_s" if arch == "rail-optimized" else "rail_only_pipelined_s")
        side[arch] = {
            "capex_usd": sec.get("cost"),
            "power_w": sec.get("power_w"),
            "racks": (sec.get("layout") or {}).get("racks"),
            "switches": sec["switches"],
            "cables": sec.get("cables"),
            "transceivers": sec.get("transceivers"),
            "iteration_s": it,
            "alltoall_step_s": a2a_s if a2a is not None else None,
            "alltoalls_per_step": n_a2a if a2a is not None else None,
            "step_s": None if it is None else it + a2a_s,
            "collectives": _collectives(traffic, arch),
            "blast_radius": _blast(sec),
            "failures_per_month": _failures(sec, spec.gpus, table),
        }
        side[arch]["expected_failures_per_month"] = round(sum(f["expected_per_month"] for f in side[arch]["failures_per_month"]), 4)
    out: dict[str, Any] = {"architectures": side, "tolerance": TOLERANCE, "failure_rates": [dict(r) for r in table]}
    if traffic is None:
        out["collectives_note"] = "collectives not simulated in this build: topogen build --traffic simulates the DP ring, the all-to-all and a permutation on each wiring, healthy and with a spine down"
    else:
        out["collectives_note"] = "simulated on each wiring by topogen build --traffic (spray routing, max-min fair rates); the failure case takes one spine down (spines of a balanced Clos are alike)" + (f"; {'; '.join(traffic['notes'])}" if traffic.get("notes") else "")
    out.update(recommend(side, a2a))
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def recommend(side: Mapping[str, Mapping[str, Any]], a2a: Mapping[str, Any] | None) -> dict[str, Any]:
    """The recommendation, the figure that decides it, by how much, and when the other design would win."""
    if len(side) < 2:
        (arch,) = side
        return {"recommended": arch, "deciding_figure": None, "margin": None, "sentence": f"Buy {arch}: the spec builds only this architecture.", "reasons": ["arch is set to one architecture in the spec; arch: both compares the two"], "other_wins_when": None}
    ro, rx = side["rail-only"], side["rail-optimized"]
    # at equal capex rail-optimized counts as the cheaper: its any-to-any paths never relay through the HB domain
    cheap, dear = ("rail-only", "rail-optimized") if ro["capex_usd"] < rx["capex_usd"] else ("rail-optimized", "rail-only")
    saving = 1 - side[cheap]["capex_usd"] / side[dear]["capex_usd"] if side[dear]["capex_usd"] else 0.0
    steps = {a: side[a]["step_s"] for a in side}
    overhead = (a2a or {}).get("overhead_pipelined") or 0.0
    if steps[cheap] is None or steps[dear] is None:
        said = f"it costs {_pct(saving)} less" if saving > 0 else f"both cost ${side[cheap]['capex_usd']:,.0f}, and its paths never relay through the HB domain"
        return {"recommended": cheap, "deciding_figure": "capex", "margin": saving, "sentence": f"Buy {cheap}: {said}; the spec has no workload to weigh the speed.",
                "reasons": [f"capex {cheap} ${side[cheap]['capex_usd']:,.0f} against ${side[dear]['capex_usd']:,.0f}", "no workload: the step time is not known (add workload: model and gpu)"], "other_wins_when": f"{dear} would win if the job needs what {cheap} lacks; add a workload to weigh it"}
    slower = steps[cheap] / steps[dear] - 1
    reasons = [f"capex: {cheap} ${side[cheap]['capex_usd']:,.0f} against {dear} ${side[dear]['capex_usd']:,.0f} ({_pct(saving)} less)",
               f"step time (Eq. 1 iteration plus the expert all-to-alls): {cheap} {steps[cheap]:.4f} s against {dear} {steps[dear]:.4f} s ({'+' if slower >= 0 else ''}{_pct(slower)})"]
    if a2a is not None:
        reasons.append(f"all-to-all over the EP group of {a2a['group_gpus']:,} GPUs: {side['rail-optimized']['alltoall_step_s']:.4f} s per step on rail-optimized, {side['rail-only']['alltoall_step_s']:.4f} s on rail-only ({_pct(overhead)} relay overhead)")
    if slower <= TOLERANCE:
        rec, fig, margin = cheap, "capex", saving
        sentence = (f"Buy {cheap}: it costs {_pct(saving)} less (${side[dear]['capex_usd'] - side[cheap]['capex_usd']:,.0f}) for a step time within {_pct(TOLERANCE)} of {dear}'s." if saving > 0
                    else f"Buy {cheap}: both cost ${side[cheap]['capex_usd']:,.0f}, and its step time is within {_pct(TOLERANCE)} of {dear}'s.")
    else:
        rec, fig, margin = dear, "step_s", slower
        sentence = f"Buy {dear}: {cheap} would be {_pct(slower)} slower per step, more than the {_pct(TOLERANCE)} its {_pct(saving)} saving is weighed against."
    other = "rail-optimized" if rec == "rail-only" else "rail-only"
    share = side["rail-optimized"]["alltoall_step_s"] / steps["rail-optimized"] if a2a is not None and steps["rail-optimized"] else 0.0
    if cheap == "rail-only" and overhead > 0:
        x = TOLERANCE / overhead
        when = f"rail-only wins while the job's all-to-all stays below {_pct(x)} of step time on rail-optimized (today {_pct(share)}; its relay adds {_pct(overhead)} to every all-to-all)"
    elif rec == "rail-only":
        when = f"rail-optimized would win if rail-only's step grew more than {_pct(TOLERANCE)} over its own, e.g. an HB domain too slow to relay the all-to-all for free (B_F/B_S below {a2a['hb_ratio_needed']:.3g}; it is {a2a['hb_ratio']:.3g})" if a2a is not None and a2a.get("hb_ratio_needed") else f"rail-optimized would win if the job's traffic left the rails (an all-to-all, or a placement across rails) by more than {_pct(TOLERANCE)} of step time"
    else:
        when = f"{other} would win if its step time came within {_pct(TOLERANCE)} of {rec}'s (it costs {_pct(saving)} less)" if other == cheap else f"{other} would win if it cost less than {rec}"
    return {"recommended": rec, "deciding_figure": fig, "margin": margin, "sentence": sentence, "reasons": reasons, "other_wins_when": when}
