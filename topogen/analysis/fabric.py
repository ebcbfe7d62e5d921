"""The analyses on the fabric a spec builds: N, K, B_S and B_F come from the spec.

Each ``*_report`` function takes resolved specs (with a ``workload``) and
returns a :class:`Report`: rows (plain dicts, the JSON shape of ``topogen
analyze ... --json``), every parameter used with its status and source, and the
caveats that go with the figures. ``build_section`` is what ``topogen build``
adds to summary.json when the spec has a workload.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

from topogen.analysis import alltoall as a2a
from topogen.analysis import bus_bandwidth as bus
from topogen.analysis import checkpoint as ckpt
from topogen.analysis import dp_traffic as dpt
from topogen.analysis import iteration as it
from topogen.spec.counts import arch_counts
from topogen.spec.params import EQ1_ACTIVATION_BYTES, EQ1_FLOP_PER_PARAM_TOKEN, EQ1_GRADIENT_BYTES, Param, as_dicts, gbps_to_Bps
from topogen.spec.workload import Workload
from topogen.util.errors import InputError, Problem
from topogen.fabric import clos

ANALYSES = ("iteration", "alltoall", "checkpoint", "dp-traffic")
ACTIVATION_BYTES = Param("all-to-all bytes per activation element", 2, "bytes", "assumed", "BF16 dispatch and combine")
DEFAULT_DISPATCH_TOKENS = 4096

CAVEAT_EQ2 = (
    "N_M: the paper's printed Eq. 2, N_M* = sqrt(N*S_T)/(2*sqrt(b*M_cc*d_model)), is not the minimum of Eq. 1; "
    "dT/dN_M = 0 gives sqrt(2*N*S_T/(M_cc*b*d_model)) [derived], sqrt(8) times larger, and only that one reproduces "
    "the paper's figures. Rule used here: {rule}."
)
CAVEAT_EQ1 = "Eq. 1 counts compute at 100% of C, no overlap of communication with compute, no pipeline parallelism and no all-to-all; N_M and N_Ds are continuous."
CAVEAT_SIMULATED = (
    "B_S simulated: the DP ring alone on the wiring (rank r of each HB domain to rank r of the next, {routing} routing, max-min fair rates), "
    "each architecture at its slowest ring hop, as topogen simulate --pattern ring-allreduce reports it; no other traffic shares the links."
)
CAVEAT_OVERSUBSCRIBED = (
    "B_S over an oversubscribed fabric is line rate divided by the oversubscription of the tiers a byte climbs: the bound where every GPU's DP bytes "
    "leave its leaf at once (a placement-unaware all-reduce, or the fabric shared with other jobs). A rail-aligned ring placed in leaf order sees "
    "nearly line rate: topogen analyze iteration --bandwidth simulated measures the ring on the wiring."
)
CAVEAT_GPT3 = "GPT-3's batch: the rail-only paper prints '32M tokens'; GPT-3's own paper used 3.2M. The paper's figures need 32M."
CAVEAT_MOE = "{model} is a mixture of experts: M_flop uses its {active:.3g} active parameters, gradients all {total:.3g}; its expert all-to-all is not in Eq. 1 (see topogen analyze alltoall)."
CAVEAT_READ = "'Restore read = DP x write' assumes every replica reads its own copy at once; one replica reading and broadcasting over the rails needs only S/t from storage plus the broadcast (restore_one_replica_read_GBps, broadcast_s)."
CAVEAT_1T = "VAST Data's blog post on checkpointing LLMs at scale labels its 50 s checkpoint as GPT-3's; it is the 1T-parameter model's (13.8 TB). GPT-3 at 14 B/param is 2.45 TB."
CAVEAT_13_8 = "That post's 13.8 TB (Megatron-LM SC'21, Narayanan et al.) is 1.008e12 x 14 B = 14,112 GB divided by 1,024; in decimal units the 14 B/param model gives 14.1 TB."
CAVEAT_SIZE = "Checkpoint size depends only on the model (P x bytes_per_param), not on the data set or the GPU count."
CAVEAT_RAILS = "Every cross-domain byte of these schemes goes between GPUs of the same rank: it stays on one rail, so rail-only carries it exactly as rail-optimized does (cross_rail_bytes = 0). An all-to-all is where that stops (topogen analyze alltoall)."
CAVEAT_MEMORY = "Memory counts model states only (weights, gradients, optimizer), not activations or buffers."
CAVEAT_A2A = "Both rail-only times are bounds (pipelined relay: lower; store-and-forward: upper). The rail-only paper's abstracts quote 4.1-5.6% (v3/v4) and 8.2-11.2% (v5) from a model that is not public; these formulas do not claim to reproduce them."


@dataclass
class Report:
    """Rows of one analysis with the parameters they used and the caveats that go with them."""

    analysis: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    params: list[Param] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # findings printed under the table
    skipped: list[str] = field(default_factory=list)  # sweep combinations that could not be resolved, and why

    def add_params(self, params: Iterable[Param]) -> None:
        for p in params:
            if p not in self.params:
                self.params.append(p)

    def add_note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def add_caveat(self, text: str) -> None:
        if text not in self.caveats:
            self.caveats.append(text)

    def as_json(self) -> dict[str, Any]:
        doc = {"analysis": self.analysis, "rows": self.rows, "parameters": as_dicts(self.params), "notes": self.notes, "caveats": self.caveats}
        return {**doc, "skipped": self.skipped} if self.skipped else doc


def _workload(spec, what: str) -> Workload:
    if spec.workload is None:
        raise InputError([Problem("workload", f"the {what} analysis needs a workload (a model at least)", "add a workload: section to the spec, or give --model (a preset name or .yaml path)")])
    return spec.workload


def hb_bandwidth(spec, override_gbps: float | None = None) -> Param:
    """B_F, Gb/s per GPU: --hb-bandwidth, else the spec's hb_bandwidth_gbps, else the GPU preset's."""
    if override_gbps is not None:
        return Param("B_F, HB-domain bandwidth per GPU", override_gbps, "Gb/s", "user", "--hb-bandwidth")
    if spec.hb_bandwidth_gbps is not None:
        return Param("B_F, HB-domain bandwidth per GPU", spec.hb_bandwidth_gbps, "Gb/s", "spec", f"spec {spec.name}: hb_bandwidth_gbps")
    wl = spec.workload
    if wl is not None and wl.gpu is not None and wl.gpu.hb_bandwidth_gbps is not None:
        p = wl.gpu.param("hb_bandwidth_gbps", "B_F, HB-domain bandwidth per GPU", wl.gpu.hb_bandwidth_gbps)
        return Param("B_F, HB-domain bandwidth per GPU", p.value, p.unit, p.status, f"gpu {wl.gpu.name}: {p.source}")
    raise InputError([Problem("hb_bandwidth_gbps", "the HB-domain bandwidth B_F is not known", "set hb_bandwidth_gbps in the spec (7200 for NVLink 4, 14400 for NVLink 5, 7680 for DGX GH200), give --hb-bandwidth, or a workload gpu preset")])


def hb_gbps_or_none(spec, override_gbps: float | None = None) -> float | None:
    """B_F in Gb/s as :func:`hb_bandwidth` finds it, or None when nothing says (traffic that stays off the HB domain needs none)."""
    try:
        return float(hb_bandwidth(spec, override_gbps).value)
    except InputError:
        return None


def scale_out(spec) -> Param:
    """B_S, Gb/s per GPU: link speed x planes, from the spec (:attr:`Spec.scale_out_gbps`)."""
    return Param("B_S, scale-out bandwidth per GPU", spec.scale_out_gbps, "Gb/s", "spec", f"spec {spec.name}: link_speed {spec.link_speed} x planes {spec.planes}")


def nic_gbps(spec) -> float | None:
    """The node's NIC Gb/s per GPU (the workload GPU's ``nic_gbps``), or None when nothing says."""
    wl = spec.workload
    return wl.gpu.nic_gbps if wl is not None and wl.gpu is not None and wl.gpu.nic_gbps is not None else None


def fabric_ratio(spec, arch: str) -> float:
    """How much less a GPU gets when all its bytes leave its leaf: the product of the oversubscriptions below the top tier.

    1.0 for one switch tier (no uplinks) and for a leaf pair (its ISLs are
    priced by :func:`topogen.analysis.alltoall.isl_factor`); a spec whose
    closed form does not hold (a sweep point) counts as 1.0 too.
    """
    if spec.design == "leaf-pair":
        return 1.0
    try:
        tiers = arch_counts(spec, arch).tiers
    except (InputError, ValueError):
        return 1.0
    ratio = 1.0
    for tier in range(1, tiers):
        ratio *= spec.ratio_at(tier)
    return ratio


def scale_out_at(spec, arch: str) -> Param:
    """B_S of one architecture, Gb/s per GPU: ``min(link speed x NIC ports, NIC) / oversubscription``.

    The NIC caps a faster port (a 400G ConnectX-7 on an 800G port runs at 400G);
    the oversubscription of the tiers a byte climbs (:func:`fabric_ratio`) divides
    it: the bound where every GPU's bytes leave its leaf at once (a placement-unaware
    all-reduce, a job sharing the fabric). One tier and 1:1 leave B_S at line rate.
    """
    line = float(spec.link_speed * spec.nic_ports)
    nic = nic_gbps(spec)
    ratio = fabric_ratio(spec, arch)
    value = min(line, nic * spec.homes * spec.planes / spec.nic_ports) if nic is not None else line
    if nic is None or value == line:
        where = f"spec {spec.name}: link_speed {spec.link_speed} x planes {spec.planes}" + (f" x homes {spec.homes}" if spec.homes > 1 else "")
    else:
        where = f"the {nic:g}G NIC of {spec.workload.gpu.name} (link_speed {spec.link_speed} x {spec.nic_ports} ports is faster)"
    if ratio == 1.0:
        return Param("B_S, scale-out bandwidth per GPU", value, "Gb/s", "spec", where)
    return Param(f"B_S, scale-out bandwidth per GPU ({arch})", value / ratio, "Gb/s", "derived", f"{where}, / {ratio:g} (oversubscription {spec.oversubscription} below the top of {arch}'s tiers: every GPU's bytes leave its leaf)")


def scale_out_by_arch(spec) -> list[tuple[str | None, Param]]:
    """B_S of each architecture the spec builds; one ``(None, B_S)`` when they agree (1:1, or one architecture alike)."""
    per: list[tuple[str | None, Param]] = [(arch, scale_out_at(spec, arch)) for arch in spec.arches]
    return [(None, per[0][1])] if len({p.value for _a, p in per}) == 1 else per


def _cluster_params(spec) -> list[Param]:
    return [
        Param("N, GPUs", spec.gpus, "GPUs", "spec", f"spec {spec.name}"),
        Param("K, HB-domain size", spec.hb_domain, "GPUs", "spec", f"spec {spec.name}"),
    ]


def _model_params(wl: Workload, keys: Sequence[str]) -> list[Param]:
    m = wl.model
    labels = {"layers": "l, transformer blocks", "d_model": "d_model", "params": "P, parameters", "m_cc": "M_cc, MP collectives per block", "active_params": "active parameters", "training_tokens": "training tokens", "training_flop": "training FLOP", "seq_len": "sequence length"}
    out = []
    for k in keys:
        v = getattr(m, k)
        if v is not None:
            out.append(m.param(k, labels.get(k, k), v))
    return out


def batch_param(wl: Workload, batch_tokens: float, swept: bool) -> Param:
    if swept:
        return Param(f"b, batch ({wl.model.name})", "swept", "tokens", "user", "--batch")
    if wl.batch_given:
        return Param(f"b, batch ({wl.model.name})", batch_tokens, "tokens", "user", "workload.batch")
    return wl.model.param("batch", "b, batch", batch_tokens)


def flops_param(wl: Workload) -> Param:
    if wl.gpu is None:
        raise InputError([Problem("workload.gpu", "the iteration analysis needs the GPU's FLOP/s", "add gpu: to the workload (h100, b200, gb200, gh200, a .yaml path or FLOP/s), or give --gpu")])
    return wl.gpu.param("flops", "C, dense BF16 FLOP/s per GPU", wl.gpu.flops)


def iteration_report(specs: Sequence, rule: str | None = None, batches: Sequence[float] | None = None, hb_gbps: float | None = None, batches_from: Param | None = None, bandwidth: str = "nominal", routing: str = bus.DEFAULT_ROUTING) -> Report:
    """Eq. 1 / Eq. 3 for every spec and batch: the rows of ``topogen analyze iteration``.

    ``batches_from`` names where a list of ``batches`` came from (default: the --batch flag).
    ``rule`` None (or ``workload``) takes N_M = the workload's tp when it sets one, else
    the derived optimum (:func:`iteration.resolve_rule`): build and analyze agree.
    ``bandwidth`` ``simulated`` takes B_S per architecture from the DP ring simulated
    on the spec's wiring under ``routing`` (:mod:`.bus_bandwidth`): a row per
    architecture, with ``arch``, ``bandwidth`` and ``routing``; ``nominal`` (link
    speed x planes) gives one row per spec, as before.
    """
    if bandwidth not in bus.BANDWIDTHS:
        raise InputError([Problem("bandwidth", f"unknown bandwidth {bandwidth!r:.40}", f"use {' or '.join(bus.BANDWIDTHS)}")])
    rep = Report("iteration")
    last: dict[tuple, dict[str, Any]] = {}  # (N, batch, model) -> its previous row: change_vs_smaller_k
    used: list[str] = []
    asked = rule
    for spec in specs:
        wl = _workload(spec, "iteration")
        rule = it.resolve_rule(asked, wl.parallelism.tp_given)
        if rule == "tp" and not wl.parallelism.tp_given:
            raise InputError([Problem("nm_rule", "rule tp needs the workload's parallelism.tp", "set workload.parallelism.tp, or give --tp")])
        if rule not in used:
            used.append(rule)
        if wl.parallelism.pp > 1:
            rep.add_caveat(f"Eq. 1 has no pipeline parallelism: the workload's pp {wl.parallelism.pp} is not in the iteration time (its TP is N_M).")
        bf, bs, c = hb_bandwidth(spec, hb_gbps), scale_out(spec), flops_param(wl)
        m = wl.model
        rep.add_params(_cluster_params(spec) if len(specs) == 1 else [])
        cases: list[tuple[str | None, Param]] = scale_out_by_arch(spec)
        if bandwidth == "simulated":
            cases = [(arch, p if p is not None else bs) for arch, p in bus.simulated(spec, routing, bf.value)]
            for arch, p in cases:
                if p is bs:
                    rep.add_note(f"{spec.name} ({arch}): one HB domain, the DP ring never crosses the network; B_S is nominal and Eq. 1's network term is 0")
        rep.add_params([p for _a, p in cases] + [bf, c, *_model_params(wl, ("layers", "d_model", "params", "m_cc", "active_params", "training_flop", "training_tokens"))])
        for (arch, bs), b in ((case, b) for b in batches or [wl.batch_tokens] for case in cases):
            swept = bool(batches) and len(batches) > 1
            rep.add_params([batches_from if swept and batches_from is not None else batch_param(wl, b, swept)])
            r = it.iteration_time(
                gpus=spec.gpus, hb_domain=spec.hb_domain, layers=m.layers, d_model=m.d_model, params=m.params,
                batch_tokens=b, m_cc=m.m_cc, flops=c.value, scale_out_Bps=gbps_to_Bps(bs.value), hb_Bps=gbps_to_Bps(bf.value),
                rule=rule, tp=wl.parallelism.tp, compute_params=m.active_params,
            )
            row: dict[str, Any] = {
                "model": m.name, "gpu": wl.gpu.name, "gpus": spec.gpus, "hb_domain": spec.hb_domain, "batch_tokens": b,
                "n_m_rule": rule, "n_m": r.n_m, "n_ds": r.n_ds, "n_df": r.n_df,
                "iteration_s": r.iteration_s, "ideal_s": r.ideal_s, "relative": r.relative,
                "compute_s": r.compute_s, "dp_network_s": r.dp_network_s, "dp_hb_s": r.dp_hb_s, "mp_hb_s": r.mp_hb_s,
                "scale_out_gbps": bs.value, "hb_bandwidth_gbps": bf.value,
            }
            if bandwidth == "simulated":
                row = {"arch": arch, **row, "bandwidth": "simulated", "routing": routing}
            elif arch is not None:  # the architectures' B_S differ (oversubscription over different tiers): a row each
                row = {"arch": arch, **row}
            total_flop = m.training_flop if m.training_flop is not None else (it.step_flop(m.active_params or m.params, m.training_tokens) if m.training_tokens else None)
            if m.training_tokens:
                row["train_days"] = m.training_tokens / b * r.iteration_s / 86_400.0
            if total_flop is not None:
                row["one_domain_train_days"] = it.training_days(total_flop, spec.hb_domain, c.value)
                note = f"{m.name} on one HB domain ({spec.hb_domain} x {wl.gpu.name}) at 100% of C: {row['one_domain_train_days']:,.1f} days ({total_flop:.3g} FLOP)"
                if note not in rep.notes:
                    rep.notes.append(note)
            prev = last.get((spec.gpus, b, m.name, arch))
            row["change_vs_smaller_k"] = row["iteration_s"] / prev["iteration_s"] - 1 if prev and prev["hb_domain"] < spec.hb_domain else None
            last[(spec.gpus, b, m.name, arch)] = row
            rep.rows.append(row)
        if m.name.startswith("gpt-3"):
            rep.add_caveat(CAVEAT_GPT3)
        if m.active_params is not None:
            rep.add_caveat(CAVEAT_MOE.format(model=m.name, active=m.active_params, total=m.params))
        if m.training_flop is None and m.training_tokens:
            rep.add_params([Param(f"training FLOP ({m.name})", "6 x P x training tokens", "", "derived", "the model gives no training_flop")])
    rep.add_params([EQ1_FLOP_PER_PARAM_TOKEN, EQ1_GRADIENT_BYTES, EQ1_ACTIVATION_BYTES])
    if bandwidth == "simulated":
        rep.add_caveat(CAVEAT_SIMULATED.format(routing=routing))
    elif any(p.status == "derived" and p.name.startswith("B_S") for p in rep.params):
        rep.add_caveat(CAVEAT_OVERSUBSCRIBED)
    rep.caveats.insert(0, CAVEAT_EQ2.format(rule=", ".join(used)))
    rep.caveats.insert(1, CAVEAT_EQ1)
    return rep


def alltoall_group(spec, wl: Workload | None) -> int:
    """GPUs of one all-to-all: the workload's expert_parallel, else the model's, else all N."""
    if wl is not None:
        if wl.parallelism.expert_parallel is not None:
            return wl.parallelism.expert_parallel
        if wl.model.expert_parallel is not None and spec.gpus % wl.model.expert_parallel == 0:
            return wl.model.expert_parallel
    return spec.gpus


def leaf_factors(spec, group: int) -> dict[str, float]:
    """:func:`topogen.analysis.alltoall.leaf_factor` of each architecture's generated wiring for EP groups of ``group``."""

    return {arch: a2a.leaf_factor(clos.generate(replace(spec, arch=arch), arch), group) for arch in ("rail-optimized", "rail-only")}


def alltoall_report(specs: Sequence, bytes_per_pair: float | None = None, hb_gbps: float | None = None, group_gpus: int | None = None) -> Report:
    """One uniform all-to-all per spec on both architectures: the rows of ``topogen analyze alltoall``."""
    rep = Report("alltoall")
    for spec in specs:
        wl = spec.workload
        bf, bs = hb_bandwidth(spec, hb_gbps), scale_out(spec)
        rep.add_params(_cluster_params(spec) if len(specs) == 1 else [])
        rep.add_params([bs, bf])
        g = group_gpus or alltoall_group(spec, wl)
        if spec.gpus % g or (g > spec.hb_domain and g % spec.hb_domain) or (g < spec.hb_domain and spec.hb_domain % g):
            raise InputError([Problem("group_gpus", f"an all-to-all group of {g} GPUs does not tile N = {spec.gpus} in HB domains of {spec.hb_domain}", f"use a divisor of {spec.hb_domain} or a multiple of it dividing {spec.gpus}")])
        k_in = min(g, spec.hb_domain)
        m = g // k_in if g >= spec.hb_domain else 1
        if bytes_per_pair is not None:
            s = bytes_per_pair
            rep.add_params([Param("s, bytes per ordered GPU pair", s, "bytes", "user", "--bytes-per-pair")])
        elif wl is not None and wl.model.is_moe:
            mdl = wl.model
            tokens = wl.parallelism.micro_batch_tokens or mdl.seq_len or DEFAULT_DISPATCH_TOKENS
            s = a2a.moe_bytes_per_pair(tokens, mdl.top_k, mdl.d_model, ACTIVATION_BYTES.value, g)
            tok_src = ("user", "workload.parallelism.micro_batch_tokens") if wl.parallelism.micro_batch_tokens else ((*mdl.source("seq_len"),) if mdl.seq_len else ("assumed", "default"))
            rep.add_params([
                Param(f"tokens one GPU dispatches ({mdl.name})", tokens, "tokens", tok_src[0], tok_src[1] + ("" if wl.parallelism.micro_batch_tokens else "; one sequence per GPU")),
                mdl.param("moe.top_k", "top_k, experts per token", mdl.top_k), mdl.param("d_model", "d_model", mdl.d_model), ACTIVATION_BYTES,
                Param("s, bytes per ordered GPU pair = tokens x top_k x d_model x bytes / group", s, "bytes", "derived", "a uniform all-to-all: every GPU's dispatched tokens x top_k spread evenly over the group"),
            ])
        else:
            raise InputError([Problem("bytes_per_pair", "the all-to-all needs its bytes per GPU pair", "give --bytes-per-pair, or a workload model with moe: experts and top_k (e.g. --model deepseek-v3)")])
        gsrc = ("user", "--group-gpus / workload.parallelism.expert_parallel") if (group_gpus or (wl and wl.parallelism.expert_parallel)) else (("paper", f"model {wl.model.name}: {wl.model.source('moe.expert_parallel')[1]}") if wl is not None and wl.model.expert_parallel == g else ("spec", "all N GPUs"))
        rep.add_params([Param("all-to-all group", g, "GPUs", gsrc[0], gsrc[1])])
        factor = 1.0
        if spec.design == "leaf-pair" and m > 1:
            isls = arch_counts(spec, "rail-optimized").isls // spec.planes
            factor = a2a.isl_factor(spec.gpus, isls)
            rep.add_params([Param("I, ISLs per leaf pair", isls, "links", "spec", f"spec {spec.name}: design leaf-pair, GPU:ISL ports {spec.oversubscription}")])
            rep.add_note(f"{spec.name}: leaf pair, half of every GPU's NIC bytes cross the {isls} ISLs; the rail-optimized network term is x{factor:.4g} (max(1, N/(4I)) = max(1, {spec.gpus}/{4 * isls}))")
        ro_factor = 1.0
        leaf = {}
        if spec.design != "leaf-pair" and m > 1 and any(fabric_ratio(spec, arch) > 1 for arch in ("rail-optimized", "rail-only")):
            leaf = leaf_factors(spec, g)
            factor, ro_factor = leaf["rail-optimized"], leaf["rail-only"]
            rep.add_note(f"{spec.name}: leaf oversubscription {spec.oversubscription}: the network term of the EP all-to-all is x{factor:.4g} on rail-optimized and x{ro_factor:.4g} on rail-only (a leaf's pairs to other leaves over its uplinks, on the generated wiring)")
        r = a2a.alltoall(k_in, m, s, gbps_to_Bps(bs.value), gbps_to_Bps(bf.value), factor, ro_factor)
        row = {"gpus": spec.gpus, "hb_domain": spec.hb_domain, "group_gpus": g, "domains": m, "bytes_per_pair": s, **r.as_dict(), "hb_ratio": bf.value / bs.value}
        if spec.design == "leaf-pair":
            row["isl_factor"] = factor
        if leaf:
            row["leaf_factor_rail_optimized"], row["leaf_factor_rail_only"] = factor, ro_factor
        rep.rows.append(row)
    rep.add_caveat(CAVEAT_A2A)
    if any(r["domains"] == 1 for r in rep.rows):
        rep.add_caveat("A group inside one HB domain never touches the scale-out network: both architectures take the same time.")
    return rep


def checkpoint_report(specs: Sequence, write_GBps: float | None = None, write_s: float | None = None, interval_h: float | None = None) -> Report:
    """Checkpoint size, writers, bandwidth and overhead: the rows of ``topogen analyze checkpoint``."""
    rep = Report("checkpoint")
    for spec in specs:
        wl = _workload(spec, "checkpoint")
        plan = wl.checkpoint
        if write_GBps is None and write_s is None and (plan is None or (plan.write_GBps is None and plan.write_s is None)):
            raise InputError([Problem("workload.checkpoint", "the checkpoint analysis needs a storage write rate or a target write time", "set workload.checkpoint.write_GBps or write_s, or give --write-GBps / --write-s")])
        if write_GBps is not None or write_s is not None:
            w_Bps = write_GBps * 1e9 if write_GBps is not None else None
            w_s = write_s
            rep.add_params([Param("storage write rate" if write_GBps is not None else "target write time", write_GBps if write_GBps is not None else write_s, "GB/s" if write_GBps is not None else "s", "user", "--write-GBps" if write_GBps is not None else "--write-s")])
        else:
            w_Bps = plan.write_GBps * 1e9 if plan.write_GBps is not None else None
            w_s = plan.write_s
            rep.add_params([Param("storage write rate" if w_Bps is not None else "target write time", plan.write_GBps if w_Bps is not None else plan.write_s, "GB/s" if w_Bps is not None else "s", "user", "workload.checkpoint")])
        interval = interval_h if interval_h is not None else (plan.interval_h if plan else 4.0)
        beta = plan.bytes_per_param if plan else 14.0
        where = plan.path if plan else "storage-fabric"
        par = wl.parallelism
        bs = scale_out(spec)
        rep.add_params(_cluster_params(spec) if len(specs) == 1 else [])
        rep.add_params([
            bs, *_model_params(wl, ("params",)),
            Param("bytes per parameter (beta)", beta, "bytes", "user" if plan and plan.bytes_per_param != 14.0 else "paper", "2 + 4 + 4 + 4: 16-bit weights, fp32 master, Adam moments (ZeRO SC'20, Megatron-LM SC'21)"),
            Param("checkpoint interval", interval, "h", "user" if interval_h is not None or plan else "paper", "NVIDIA's guidance as quoted by VAST Data's blog post on checkpointing LLMs at scale: every 4 h"),
            Param("TP x PP (GPUs of one replica)", par.tp * par.pp, "GPUs", "user", f"workload.parallelism tp {par.tp} x pp {par.pp}"),
            Param("optimizer", par.optimizer, "", "user", f"workload.parallelism ({par.dp})"),
            Param("checkpoint path", where, "", "user" if plan else "assumed", "workload.checkpoint.path"),
        ])
        size = ckpt.checkpoint_bytes(wl.model.params, beta)
        r = ckpt.checkpoint(size_bytes=size, gpus=spec.gpus, tp=par.tp, pp=par.pp, gpus_per_node=spec.gpus_per_node, optimizer=par.optimizer, interval_s=interval * 3600.0, scale_out_Bps=gbps_to_Bps(bs.value), write_Bps=w_Bps, write_s=w_s)
        row = {"model": wl.model.name, "gpus": spec.gpus, "hb_domain": spec.hb_domain, "gpus_per_node": spec.gpus_per_node, "optimizer": par.optimizer, "path": where, "checkpoint_TB": size / 1e12, **r.as_dict()}
        rep.rows.append(row)
        if where == "compute-nics":
            rep.add_caveat(f"The checkpoint leaves through the compute NICs: it shares the rails with training traffic, {100 * r.nic_share:.2f}% of each writing GPU's {bs.value:g} Gb/s while it runs.")
    rep.caveats[:0] = [CAVEAT_READ, CAVEAT_1T, CAVEAT_13_8, CAVEAT_SIZE]
    return rep


def dp_report(specs: Sequence, schemes: Sequence[str] = dpt.SCHEMES) -> Report:
    """Bytes per GPU, per NIC and per NVLink of every DP scheme: the rows of ``topogen analyze dp-traffic``."""
    rep = Report("dp-traffic")
    for spec in specs:
        wl = _workload(spec, "dp-traffic")
        par = wl.parallelism
        bs = scale_out(spec)
        mem = wl.gpu.memory_gb * 1e9 if wl.gpu is not None and wl.gpu.memory_gb is not None else None
        rep.add_params(_cluster_params(spec) if len(specs) == 1 else [])
        rep.add_params([bs, *_model_params(wl, ("params",)),
                        Param("b_w, bytes per gathered weight", par.weight_bytes, "bytes", "user" if par.weight_bytes != 2 else "assumed", "bf16"),
                        Param("b_g, bytes per reduced gradient", par.grad_bytes, "bytes", "user" if par.grad_bytes != 2 else "assumed", "bf16"),
                        Param("optimizer bytes per parameter", par.optimizer_bytes, "bytes", "user" if par.optimizer_bytes != 12 else "paper", "fp32 master + Adam moments (ZeRO SC'20)")])
        if wl.gpu is not None and wl.gpu.memory_gb is not None:
            rep.add_params([wl.gpu.param("memory_gb", "GPU memory", wl.gpu.memory_gb)])
        tp_m = par.tp if par.dp == "megatron" or par.tp_given else min(spec.hb_domain, 8)  # the Megatron row: the workload's TP, else 8 (or K)
        shard = par.hsdp_shard_gpus or spec.hb_domain
        for scheme in schemes:
            tp, pp = (tp_m, par.pp) if scheme == "megatron" else (1, 1)
            if scheme == "megatron" and spec.gpus % (tp * pp):
                continue
            r = dpt.dp_traffic(scheme, params=wl.model.params, gpus=spec.gpus, hb_domain=spec.hb_domain, scale_out_Bps=gbps_to_Bps(bs.value), weight_bytes=par.weight_bytes, grad_bytes=par.grad_bytes, optimizer_bytes=par.optimizer_bytes, shard_gpus=shard if scheme == "hsdp" else None, tp=tp, pp=pp, sharded_optimizer=par.optimizer == "sharded" and scheme == "megatron", memory_bytes=mem)
            row = {"model": wl.model.name, "gpus": spec.gpus, "hb_domain": spec.hb_domain, "label": dpt.SCHEME_LABELS[scheme], **r.as_dict(), "chosen": scheme == par.dp}
            if scheme == "hsdp":
                row["hsdp_shard_gpus"] = shard
                row["label"] = f"HSDP, shard {shard:,}"
            if scheme == "megatron":
                row["tp"], row["pp"] = tp, pp
                row["label"] = f"Megatron TP {tp}" + (f" x PP {pp}" if pp > 1 else "") + " + DP"
            rep.rows.append(row)
    rep.caveats[:0] = [CAVEAT_RAILS, CAVEAT_MEMORY]
    return rep


def k_sweep(gpus: int, hb_domain: int) -> list[int]:
    """HB-domain sizes for the Fig. 7 sweep: powers of two from 8 to min(N, 4096) dividing N, plus the spec's K."""
    ks = {hb_domain}
    k = 8
    while k <= min(gpus, 4096):
        if gpus % k == 0:
            ks.add(k)
        k *= 2
    return sorted(ks)


def n_sweep(spec) -> list[int]:
    """Cluster sizes for the Fig. 7 sweep: N/4, N/2 and N (the paper draws 16k, 32k, 64k), those holding whole domains."""
    return [n for n in (spec.gpus // 4, spec.gpus // 2) if spec.gpus % 4 == 0 and n >= 8 and n % spec.hb_domain == 0] + [spec.gpus]


def batch_sweep(wl: Workload) -> tuple[list[float], Param]:
    """Batches for the Fig. 8 sweep and where they come from: the model's schedule, else 1/4 to 4 times the batch."""
    if wl.model.batch_schedule:
        status, where = wl.model.source("batch_schedule")
        return sorted(set(wl.model.batch_schedule) | {wl.batch_tokens}), Param(f"b, batch ({wl.model.name})", "its schedule", "tokens", status, where)
    return [wl.batch_tokens * f for f in (0.25, 0.5, 1, 2, 4)], Param(f"b, batch ({wl.model.name})", "1/4 to 4 x its batch", "tokens", "assumed", "a sweep around the workload's batch")


def _no_alltoall(wl: Workload) -> Report:
    raise InputError([Problem("workload.model.moe", f"{wl.model.name} is a dense model: its training has no expert all-to-all", "give the model moe: experts and top_k, or run topogen analyze alltoall --bytes-per-pair")])


def build_section(spec) -> dict[str, Any]:
    """What ``topogen build`` writes under ``analysis`` in summary.json for a spec with a workload.

    The spec's own point for each analysis, plus the iteration sweeps the plots
    draw (K at N/4, N/2 and N at the spec's batch; batch at K, 2K and 4K). An analysis the
    workload lacks inputs for says why (``skipped``) instead of failing the build.
    """
    out: dict[str, Any] = {}
    wl = spec.workload
    tp = wl.parallelism.tp if wl.parallelism.tp_given else 1  # the K sweep keeps whole TP groups in a domain
    first = replace(spec, arch=spec.arches[0])  # the sweeps the plots draw: one line per N, at the first architecture's B_S
    runs = {
        "iteration": lambda: iteration_report([spec]),
        "iteration_vs_k": lambda: iteration_report([replace(first, gpus=n, hb_domain=k) for n in n_sweep(spec) for k in k_sweep(n, spec.hb_domain) if k % tp == 0]),
        "iteration_vs_batch": lambda: iteration_report([replace(first, hb_domain=k) for k in (spec.hb_domain, 2 * spec.hb_domain, 4 * spec.hb_domain) if k <= spec.gpus and spec.gpus % k == 0], batches=batch_sweep(wl)[0], batches_from=batch_sweep(wl)[1]),
        "alltoall": lambda: alltoall_report([spec]) if wl.model.is_moe else _no_alltoall(wl),
        "checkpoint": lambda: checkpoint_report([spec]),
        "dp-traffic": lambda: dp_report([spec]),
    }
    for name, run in runs.items():
        try:
            out[name] = run().as_json()
        except InputError as exc:
            out[name] = {"analysis": name, "skipped": "; ".join(p.render() for p in exc.problems)}
    return out
