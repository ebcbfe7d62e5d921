"""Iteration time against HB-domain size: Eq. 1 and Eq. 3 of the rail-only paper
(Wang et al., "How to Build Low-cost Networks for Large Language Models (without Sacrificing
Performance)", arXiv 2307.12169, §3).

Hybrid two-stage data parallelism plus intra-operator model parallelism (MP) on
N GPUs in HB domains of K: ``N = N_M · N_Df · N_Ds`` and ``K = N_M · N_Ds``.

Eq. 1 [paper]::

    T_iter = M_flop/(N·C)
           + l · [ 2·S_T·(N_Df − 1)/(N·B_S)
                 + (1/B_F) · ( 2·S_T·(N_Ds − 1)/K + MP·(N_M − 1)/N ) ]

with ``M_flop = 6·P·b``, ``S_T = 4·P/l`` bytes and ``MP = M_cc·b·d_model·4``
bytes [fit]. ``B_S`` and ``B_F`` are per-GPU bandwidths in bytes/s.

The N_M that minimises Eq. 1 (``dT/dN_M = 0``) is ``√(2·N·S_T/MP)`` [derived];
the paper prints ``√(N·S_T)/(2·√MP)`` (Eq. 2), which is √8 times smaller and does
not reproduce the paper's own figures. Either is capped at K (the MP group lives
in one HB domain) and at least 1.

Eq. 3 [paper], the ideal any-to-any fabric at B_F with a flat all-reduce::

    T_ideal = M_flop/(N·C) + (l/(B_F·N)) · [ 2·S_T·(N/N_M* − 1) + MP·(N_M* − 1) ]
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from topogen.spec.params import EQ1_ACTIVATION_BYTES, EQ1_FLOP_PER_PARAM_TOKEN, EQ1_GRADIENT_BYTES

NM_RULES = ("derived", "derived-pow2", "printed", "tp")
WORKLOAD_RULE = "workload"  # tp when the workload sets tp, else derived: what build and analyze use by default


def resolve_rule(rule: str | None, tp_given: bool) -> str:
    """The N_M rule one job runs under: ``workload`` (or None) is ``tp`` when the workload sets tp, else ``derived``.

    One rule for ``topogen build`` and ``topogen analyze iteration``, so a job
    with its own TP gets one iteration figure everywhere.
    """
    if rule in (None, WORKLOAD_RULE):
        return "tp" if tp_given else "derived"
    return rule


def step_flop(params: float, batch_tokens: float) -> float:
    """M_flop of one iteration: 6·P·b [fit]."""
    return EQ1_FLOP_PER_PARAM_TOKEN.value * params * batch_tokens


def block_gradient_bytes(params: float, layers: int) -> float:
    """S_T: bytes of one transformer block's gradient, 4·P/l [fit]."""
    return EQ1_GRADIENT_BYTES.value * params / layers


def mp_bytes(m_cc: float, batch_tokens: float, d_model: int) -> float:
    """Bytes of the MP collectives of one block: M_cc·b·d_model·4 [fit]."""
    return m_cc * batch_tokens * d_model * EQ1_ACTIVATION_BYTES.value


def nm_derived(gpus: int, s_t_bytes: float, mp_block_bytes: float) -> float:
    """The true optimum of Eq. 1: √(2·N·S_T/MP) [derived]."""
    return math.sqrt(2 * gpus * s_t_bytes / mp_block_bytes)


def nm_printed(gpus: int, s_t_bytes: float, mp_block_bytes: float) -> float:
    """The paper's printed Eq. 2: √(N·S_T)/(2·√MP) [paper; not the minimum of Eq. 1]."""
    return math.sqrt(gpus * s_t_bytes) / (2 * math.sqrt(mp_block_bytes))


def pow2_divisor(x: float, k: int) -> int:
    """The power of two nearest to ``x`` (in log scale) that divides ``k``, within [1, k]."""
    best, d = 1, 1
    while d <= k:
        if k % d == 0 and abs(math.log2(d) - math.log2(max(x, 1.0))) < abs(math.log2(best) - math.log2(max(x, 1.0))):
            best = d
        d *= 2
    return best


def unconstrained_nm(rule: str, gpus: int, s_t_bytes: float, mp_block_bytes: float) -> float:
    """N_M* of a rule before the cap at K (the one Eq. 3 uses)."""
    if rule == "printed":
        return nm_printed(gpus, s_t_bytes, mp_block_bytes)
    return nm_derived(gpus, s_t_bytes, mp_block_bytes)


def choose_nm(rule: str, gpus: int, hb_domain: int, s_t_bytes: float, mp_block_bytes: float, tp: int | None = None) -> float:
    """N_M used in Eq. 1: the rule's optimum, capped to [1, K]; ``tp`` fixes it to the workload's TP."""
    if rule == "tp":
        if tp is None:
            raise ValueError("nm rule 'tp' needs the workload's tp")
        return float(tp)
    x = unconstrained_nm(rule, gpus, s_t_bytes, mp_block_bytes)
    x = min(max(x, 1.0), float(hb_domain))
    if rule == "derived-pow2":
        return float(pow2_divisor(x, hb_domain))
    return x


@dataclass(frozen=True, slots=True)
class Iteration:
    """One evaluation of Eq. 1 and Eq. 3 (seconds; ``relative`` = ideal_s / iteration_s)."""

    n_m: float
    n_m_ideal: float
    n_ds: float
    n_df: float
    compute_s: float
    dp_network_s: float
    dp_hb_s: float
    mp_hb_s: float
    iteration_s: float
    ideal_s: float
    relative: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def iteration_time(
    *,
    gpus: int,
    hb_domain: int,
    layers: int,
    d_model: int,
    params: float,
    batch_tokens: float,
    m_cc: float,
    flops: float,
    scale_out_Bps: float,
    hb_Bps: float,
    rule: str = "derived",
    tp: int | None = None,
    compute_params: float | None = None,
) -> Iteration:
    """Eq. 1 at the N_M of ``rule`` and Eq. 3 at the rule's uncapped N_M*.

    ``compute_params`` (the active parameters of an MoE model) replaces P in
    M_flop only; gradients still cover every parameter.
    """
    if rule not in NM_RULES:
        raise ValueError(f"unknown N_M rule {rule!r}")
    n, k, l = gpus, hb_domain, layers
    s_t = block_gradient_bytes(params, l)
    mp = mp_bytes(m_cc, batch_tokens, d_model)
    n_m = choose_nm(rule, n, k, s_t, mp, tp)
    n_df = n / k
    n_ds = k / n_m
    compute = step_flop(compute_params if compute_params is not None else params, batch_tokens) / (n * flops)
    dp_net = l * 2 * s_t * (n_df - 1) / (n * scale_out_Bps)
    dp_hb = l * 2 * s_t * (n_ds - 1) / (k * hb_Bps)
    mp_hb = l * mp * (n_m - 1) / (n * hb_Bps)
    total = compute + dp_net + dp_hb + mp_hb
    nm_star = unconstrained_nm("printed" if rule == "printed" else "derived", n, s_t, mp) if rule != "tp" else n_m
    nm_star = min(max(nm_star, 1.0), float(n))
    ideal = compute + (l / (hb_Bps * n)) * (2 * s_t * (n / nm_star - 1) + mp * (nm_star - 1))
    return Iteration(n_m, nm_star, n_ds, n_df, compute, dp_net, dp_hb, mp_hb, total, ideal, ideal / total)


def training_days(total_flop: float, gpus: int, flops: float) -> float:
    """Days to run ``total_flop`` on ``gpus`` GPUs at ``flops`` each, perfectly utilised."""
    return total_flop / (gpus * flops) / 86_400.0
