"""Data-parallel traffic per GPU, per NIC (rail) and per NVLink: DDP, ZeRO, FSDP, HSDP, Megatron.

Ψ parameters, b_w bytes per gathered weight, b_g bytes per reduced gradient,
W = K·M GPUs with one NIC each [derived; ZeRO SC'20 §7, FSDP VLDB'23 §3.2].

Flat ring collectives, bytes per GPU per step:

==========  ===================================
DDP         2(W−1)/W · Ψ·b_g
ZeRO-1/2    (W−1)/W · Ψ·(b_g + b_w)
FSDP        (W−1)/W · Ψ·(2·b_w + b_g)
HSDP        (G−1)/G · Ψ·(2·b_w + b_g) + 2(R−1)/R · Ψ·b_g/G  (shard group G GPUs, R = W/G)
Megatron    2(D−1)/D · Ψ·b_g/(TP·PP)  (D = W/(TP·PP))
==========  ===================================

Hierarchical (rail-aligned) collectives: a reduce-scatter inside the HB domain,
then the cross-domain step on each rail; each NIC carries 1/K of it:

==========  ===================================
DDP         2(M−1)/M · Ψ·b_g/K
ZeRO-1/2    (M−1)/M · Ψ·(b_g + b_w)/K
FSDP        (M−1)/M · Ψ·(2·b_w + b_g)/K
HSDP        (s−1)/s · Ψ(2b_w + b_g)/K + 2(R−1)/R · Ψ·b_g/(s·K)  (s domains per shard group, R = M/s)
Megatron    2(D_x−1)/D_x · Ψ·b_g/(K·PP)   (TP < K; TP ≥ K: 2(D−1)/D · Ψ·b_g/(TP·PP))
==========  ===================================

Megatron puts TP innermost, then DP (Megatron-LM's rank order tp-dp-pp): a
domain of K GPUs holds g = min(K/TP, D) DP peers of each TP rank. Their
gradients are reduce-scattered inside the domain over NVLink first, so a NIC
carries 1/g of its shard across the rails, in a ring over D_x = D/g domains.
With TP = 1 that is DDP's hierarchical figure; with TP = K it is the flat ring.

NVLink bytes per GPU are the intra-domain step: ``(K−1)/K`` of the scheme's
per-GPU volume (twice for DDP's reduce-scatter + all-gather); for Megatron the
DP step among the g in-domain peers, 2(g−1)/g · Ψ·b_g/(TP·PP); its TP traffic
is Eq. 1's MP term (not counted here).

Every cross-domain byte of these schemes travels between GPUs of the same rank:
it stays on one rail, so rail-only carries it exactly as rail-optimized does.

Memory: model states per GPU at ``b_w + b_g + optimizer`` bytes per parameter
(16 for mixed-precision Adam: 2 + 2 + 12), divided by what each scheme shards;
activations are not counted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from topogen.spec.workload import DP_SCHEMES, memory_bytes_per_gpu

SCHEMES = DP_SCHEMES
SCHEME_LABELS = {"ddp": "DDP", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "fsdp": "FSDP full shard", "hsdp": "HSDP", "megatron": "Megatron TP+DP"}


@dataclass(frozen=True, slots=True)
class DpTraffic:
    scheme: str
    bytes_per_gpu: float  # flat ring collectives over all W GPUs
    bytes_per_nic: float  # hierarchical, rail-aligned: what one NIC carries
    nvlink_bytes_per_gpu: float
    rail_time_s: float
    cross_rail_bytes: float  # always 0 for these schemes
    memory_bytes_per_gpu: float
    memory_fits: bool | None  # None when the GPU's memory is unknown

    def as_dict(self) -> dict:
        return asdict(self)


def dp_traffic(
    scheme: str,
    *,
    params: float,
    gpus: int,
    hb_domain: int,
    scale_out_Bps: float,
    weight_bytes: float = 2,
    grad_bytes: float = 2,
    optimizer_bytes: float = 12,
    shard_gpus: int | None = None,
    tp: int = 1,
    pp: int = 1,
    sharded_optimizer: bool = False,
    memory_bytes: float | None = None,
) -> DpTraffic:
    """Bytes of one step of ``scheme`` on W = ``gpus`` GPUs in domains of K = ``hb_domain``."""
    psi, bw, bg, w, k = params, weight_bytes, grad_bytes, gpus, hb_domain
    m = w // k
    if scheme == "ddp":
        flat = 2 * (w - 1) / w * psi * bg
        nic = 2 * (m - 1) / m * psi * bg / k
        nv = 2 * (k - 1) / k * psi * bg
    elif scheme in ("zero1", "zero2"):
        flat = (w - 1) / w * psi * (bg + bw)
        nic = (m - 1) / m * psi * (bg + bw) / k
        nv = (k - 1) / k * psi * (bg + bw)
    elif scheme == "fsdp":
        flat = (w - 1) / w * psi * (2 * bw + bg)
        nic = (m - 1) / m * psi * (2 * bw + bg) / k
        nv = (k - 1) / k * psi * (2 * bw + bg)
    elif scheme == "hsdp":
        gsz = shard_gpus if shard_gpus else k
        r = w / gsz
        flat = (gsz - 1) / gsz * psi * (2 * bw + bg) + 2 * (r - 1) / r * psi * bg / gsz
        s = max(gsz // k, 1)  # shard group in domains; a group inside one domain is s = 1 on the rails
        rr = m / s
        nic = (s - 1) / s * psi * (2 * bw + bg) / k + 2 * (rr - 1) / rr * psi * bg / (s * k)
        inner = min(gsz, k)
        nv = (inner - 1) / inner * psi * (2 * bw + bg)
    elif scheme == "megatron":
        mp = tp * pp
        d = w // mp
        g = max(min(k // tp, d), 1)  # DP peers of one TP rank inside one domain
        dx = d / g  # the cross-domain DP ring, one per rail
        flat = 2 * (d - 1) / d * psi * bg / mp
        nic = 2 * (dx - 1) / dx * psi * bg / (mp * g)
        nv = 2 * (g - 1) / g * psi * bg / mp
    else:
        raise ValueError(f"unknown scheme {scheme!r}")
    mem = memory_bytes_per_gpu(scheme, psi, w, weight_bytes=bw, grad_bytes=bg, optimizer_bytes=optimizer_bytes, shard_gpus=shard_gpus or k, tp=tp, pp=pp, sharded_optimizer=sharded_optimizer)
    fits = None if memory_bytes is None else mem <= memory_bytes
    return DpTraffic(scheme, flat, nic, nv, nic / scale_out_Bps, 0.0, mem, fits)
