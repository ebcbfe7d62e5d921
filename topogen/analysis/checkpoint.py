"""Checkpoint size, writers and storage bandwidth (VAST Data's blog post on checkpointing LLMs at scale; Megatron-LM SC'21).

Size ``S = P·β``: β = 14 bytes per parameter for mixed-precision Adam
(2 for the 16-bit weights + 4 fp32 master + 4 + 4 Adam moments) [paper: ZeRO,
Megatron-LM]; 12 without the 16-bit copy; 16–18 with gradients; 2 for weights only.

Who writes: with a replicated optimizer one DP replica (TP·PP GPUs) writes it;
with a sharded optimizer (ZeRO, FSDP, distributed optimizer) all N GPUs write
S/N each. ``write_GBps = S/write_s``; per GPU = that / writers; per node = per
GPU × the writers on one node; overhead = write_s / interval.

Restore: "read = DP × write" holds only if every replica reads its own copy at
once. One replica reading and broadcasting needs S/t from storage plus a
broadcast on each rail of S/(TP·PP) bytes per NIC.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from topogen.spec.workload import OPTIMIZERS


def checkpoint_bytes(params: float, bytes_per_param: float) -> float:
    """S = P·β."""
    return params * bytes_per_param


@dataclass(frozen=True, slots=True)
class Checkpoint:
    checkpoint_bytes: float
    writers: int
    dp: int
    write_GBps: float
    write_s: float
    write_per_gpu_GBps: float
    write_per_node_GBps: float
    overhead: float
    restore_read_GBps: float  # every replica reads its own copy at once (VAST's DP × write)
    restore_one_replica_read_GBps: float  # one replica reads, then broadcasts over the rails
    broadcast_bytes_per_nic: float
    broadcast_s: float
    nic_share: float  # per-GPU write rate over the GPU's scale-out bandwidth (matters when path is compute-nics)

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def checkpoint(
    *,
    size_bytes: float,
    gpus: int,
    tp: int,
    pp: int,
    gpus_per_node: int,
    optimizer: str,
    interval_s: float,
    scale_out_Bps: float,
    write_Bps: float | None = None,
    write_s: float | None = None,
) -> Checkpoint:
    """Write time from a storage write rate, or the rate a target write time needs (exactly one given)."""
    if (write_Bps is None) == (write_s is None):
        raise ValueError("give exactly one of write_Bps and write_s")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}")
    if write_Bps is None:
        write_Bps = size_bytes / write_s
    else:
        write_s = size_bytes / write_Bps
    dp = gpus // (tp * pp)
    writers = tp * pp if optimizer == "replicated" else gpus
    per_gpu = write_Bps / writers
    per_node = per_gpu * min(gpus_per_node, writers)
    copies = dp if optimizer == "replicated" else 1
    bcast = size_bytes / (tp * pp) if optimizer == "replicated" and dp > 1 else 0.0
    return Checkpoint(
        checkpoint_bytes=size_bytes,
        writers=writers,
        dp=dp,
        write_GBps=write_Bps / 1e9,
        write_s=write_s,
        write_per_gpu_GBps=per_gpu / 1e9,
        write_per_node_GBps=per_node / 1e9,
        overhead=write_s / interval_s,
        restore_read_GBps=copies * write_Bps / 1e9,
        restore_one_replica_read_GBps=write_Bps / 1e9,
        broadcast_bytes_per_nic=bcast,
        broadcast_s=bcast / scale_out_Bps,
        nic_share=per_gpu / scale_out_Bps,
    )
