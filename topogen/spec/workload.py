"""The spec's optional ``workload:`` section: the model, the GPU, the parallelism, the checkpoint.

::

    workload:
      model: palm-540b          # a preset under templates/models/, a YAML path, or a mapping
      gpu: gh200                # a preset under templates/gpus/, a YAML path, or a mapping
      batch: 2048x2048          # optional: tokens (32M, 2e6) or SEQUENCESxLENGTH; default the model's
      parallelism:              # optional
        tp: 1                   # tensor parallel, inside one HB domain (divides K)
        pp: 1                   # pipeline stages (TP·PP divides N)
        dp: fsdp                # ddp, zero1, zero2, fsdp, hsdp or megatron
        hsdp_shard_gpus: 256    # hsdp: GPUs per shard group (divides K or a multiple of K dividing N)
        optimizer: sharded      # replicated or sharded (default: replicated for ddp/megatron)
        weight_bytes: 2         # b_w, bytes per gathered weight
        grad_bytes: 2           # b_g, bytes per reduced gradient
        optimizer_bytes: 12     # optimizer state bytes per parameter (fp32 master + Adam moments)
        expert_parallel: 64     # MoE: GPUs of one all-to-all group (default the model's, else N)
        micro_batch_tokens: 4096  # MoE: tokens one GPU dispatches per all-to-all (default seq_len)
      checkpoint:               # optional
        interval_h: 4
        write_GBps: 273         # what the storage delivers; or write_s: the target write time
        path: storage-fabric    # or compute-nics (shares the rails with training)
        bytes_per_param: 14     # 2 + 4 + 4 + 4 (mixed-precision Adam)

A model mapping has ``name, layers, d_model, params, batch, m_cc`` and may add
``seq_len, active_params, training_tokens, training_flop, batch_schedule,
moe: {experts, top_k, moe_layers, expert_parallel}`` and ``sources: {field:
"status: where"}`` (status one of paper, derived, fit, assumed, user). A GPU
mapping has ``name, flops, memory_gb`` and may add ``hb_bandwidth_gbps``.
Numbers may be written ``175e9``, ``32M``, ``2.56e24``.

Everything is checked against the cluster (N, K) and reported together: TP
larger than K, parallelism that does not divide, a model whose states do not
fit the GPU's memory.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping

from topogen.spec.fields import Field, names
from topogen.spec.params import Param
from topogen.spec.yamlfile import read_yaml
from topogen.util import resources
from topogen.util.errors import InputError, Problem, check_section, unknown_keys

# The vocabulary of the workload section; the analyses (dp_traffic, checkpoint) import it from here.
DP_SCHEMES = ("ddp", "zero1", "zero2", "fsdp", "hsdp", "megatron")
OPTIMIZERS = ("replicated", "sharded")  # optimizer state: replicated on every DP rank, or sharded across them
PATHS = ("storage-fabric", "compute-nics")  # where checkpoint bytes leave the node

KIND_DIRS = {"model": "models", "gpu": "gpus"}  # template kinds (templates/<kind>/, via topogen.util.resources)
SOURCE_STATUSES = ("paper", "derived", "fit", "assumed", "user")

WORKLOAD_FIELDS: tuple[Field, ...] = (
    Field("model", "preset-or-section", "The model trained: a preset (templates/models/: gpt-3-175b, opt-175b, palm-540b, megatron-1t, llama-2-70b, deepseek-v3), a .yaml path or a mapping.", example="gpt-3-175b", required=True, sub="model"),
    Field("gpu", "preset-or-section", "The GPU: a preset (templates/gpus/: h100, b200, gb200, gh200), a .yaml path or a mapping.", example="h100", sub="gpu"),
    Field("batch", "batch", "Global batch: tokens (2M, 32e6) or SEQUENCESxLENGTH (2048x2048).", default_doc="the model's", example="1536x2048"),
    Field("parallelism", "section", "How the job is split: TP, PP, the DP scheme and its byte counts.", sub="parallelism"),
    Field("checkpoint", "section", "Checkpoints: interval, write bandwidth or target time, and the path the bytes take.", sub="checkpoint"),
)
MODEL_FIELDS: tuple[Field, ...] = (
    Field("name", "text", "Model name as outputs show it.", default_doc="the preset or file name", example="gpt-3-175b"),
    Field("layers", "int", "Transformer blocks l.", minimum=1, example=96, required=True),
    Field("d_model", "int", "Embedding width (hidden size).", minimum=1, example=12288, required=True),
    Field("params", "quantity", "Parameters P.", example="175e9", required=True),
    Field("batch", "batch", "The model's own global batch (tokens, or SEQUENCESxLENGTH).", example="3.2M", required=True),
    Field("m_cc", "quantity", "Model-parallel collectives per block: 8 for GPT/OPT, 12 for PaLM.", example=8, required=True),
    Field("seq_len", "int", "Sequence length in tokens.", minimum=1, example=2048),
    Field("active_params", "quantity", "Parameters active per token (MoE).", example="37e9"),
    Field("training_tokens", "quantity", "Tokens of the whole training run.", example="300e9"),
    Field("training_flop", "quantity", "FLOP of the whole training run.", example="3.14e23"),
    Field("batch_schedule", "quantity-list", "Batch sizes (tokens) a batch-size ramp goes through.", example=["32k", "3.2M"]),
    Field("moe", "section", "Mixture of experts: experts, top-k, MoE blocks, expert-parallel group.", sub="moe"),
    Field("sources", "sources", "Where each value comes from: field -> 'paper: <where>', 'derived: ...' or 'fit: <what it was fitted to>'.", example={"params": "paper: Brown et al. 2020, Table 2.1"}),
    Field("description", "text", "One line on the model."),
)
MOE_FIELDS: tuple[Field, ...] = (
    Field("experts", "int", "Experts per MoE block.", minimum=1, example=256),
    Field("top_k", "int", "Experts each token is routed to.", minimum=1, example=8),
    Field("moe_layers", "int", "Blocks that are MoE blocks.", minimum=1, example=58),
    Field("expert_parallel", "int", "GPUs of one all-to-all (expert-parallel) group.", minimum=1, example=64),
)
GPU_FIELDS: tuple[Field, ...] = (
    Field("name", "text", "GPU name as outputs show it.", default_doc="the preset or file name", example="h100"),
    Field("flops", "quantity", "Dense BF16 FLOP/s per GPU.", example="989.4e12", required=True),
    Field("memory_gb", "quantity", "Memory per GPU in GB (the model-state fit check).", example=80),
    Field("hb_bandwidth_gbps", "quantity", "HB-domain (NVLink) Gb/s per GPU.", example=7200),
    Field("nic_gbps", "quantity", "Scale-out NIC Gb/s per GPU as the node ships it (ConnectX-7: 400); topogen search leaves slower port modes out unless the space lists link_speed.", example=400),
    Field("sources", "sources", "Where each value comes from (as a model's sources)."),
    Field("description", "text", "One line on the GPU."),
    Field("scale_up", "list-of", "HB domains this GPU ships in; topogen search tries each as an HB-domain size.", sub="scale_up"),
)
SCALE_UP_FIELDS: tuple[Field, ...] = (
    Field("hb_domain", "int", "GPUs in one HB domain of this kind (8 HGX, 72 NVL72).", minimum=1, required=True, example=72),
    Field("gpus_per_node", "int", "GPUs per compute node of this kind, dividing hb_domain.", default_doc="hb_domain", minimum=1, example=4),
)
PARALLEL_FIELDS: tuple[Field, ...] = (
    Field("tp", "int", "Tensor-parallel GPUs, inside one HB domain (divides hb_domain).", default=1, minimum=1, example=8),
    Field("pp", "int", "Pipeline stages.", default=1, minimum=1, example=4),
    Field("dp", "choice", "Data-parallel scheme.", default="fsdp", choices=DP_SCHEMES),
    Field("hsdp_shard_gpus", "int", "HSDP: GPUs one model copy is sharded over (divides hb_domain, or whole domains).", minimum=1, example=8),
    Field("optimizer", "choice", "Optimizer state replicated on every DP rank or sharded across them.", default_doc="as the DP scheme implies", choices=OPTIMIZERS),
    Field("weight_bytes", "quantity", "Bytes per weight.", default=2.0, example=2),
    Field("grad_bytes", "quantity", "Bytes per gradient.", default=2.0, example=2),
    Field("optimizer_bytes", "quantity", "Optimizer bytes per parameter (fp32 master + two Adam moments: 12).", default=12.0, example=12),
    Field("expert_parallel", "int", "MoE: GPUs of one all-to-all group.", default_doc="the model's, else N", minimum=1, example=64),
    Field("micro_batch_tokens", "quantity", "Tokens per micro-batch (pipeline bubbles).", example="16k"),
)
CHECKPOINT_FIELDS: tuple[Field, ...] = (
    Field("interval_h", "quantity", "Hours between checkpoints.", default=4.0, example=4),
    Field("write_GBps", "quantity", "What the storage writes, GB/s (give this or write_s).", example=273),
    Field("write_s", "quantity", "Target write time in seconds (give this or write_GBps).", example=60),
    Field("path", "choice", "Where checkpoint bytes leave the node.", default="storage-fabric", choices=PATHS),
    Field("bytes_per_param", "quantity", "Checkpoint bytes per parameter: 14 for mixed-precision Adam (2+4+4+4), 12 without the 16-bit copy, 2 for weights only.", default=14.0, example=14),
)
WORKLOAD_KEYS = names(WORKLOAD_FIELDS)
MODEL_KEYS = names(MODEL_FIELDS)
MOE_KEYS = names(MOE_FIELDS)
GPU_KEYS = names(GPU_FIELDS)
PARALLEL_KEYS = names(PARALLEL_FIELDS)
CHECKPOINT_KEYS = names(CHECKPOINT_FIELDS)

SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "B": 1e9, "T": 1e12, "P": 1e15}
NUMBER_RE = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([kKMGBTP]?)\s*$", re.ASCII)
INTEGER_RE = re.compile(r"^\s*\+?\d+\s*[kKM]?\s*$", re.ASCII)  # a whole count: 8, 64, 4k
BATCH_RE = re.compile(r"^\s*([0-9]{1,15})\s*[xX×]\s*([0-9]{1,15})\s*$", re.ASCII)  # bounded: no int() of 5,000 digits
MAX_BATCH_TOKENS = 1e15  # a thousand times a year of today's largest runs; above it the figures overflow
BATCH_HINT = "a whole number of tokens (e.g. 32M, 2e6) or SEQUENCESxLENGTH (e.g. 2048x2048), above 0 and at most 1e15 tokens"

UNITS = {
    "layers": "blocks", "d_model": "", "params": "parameters", "batch": "tokens", "m_cc": "collectives per block",
    "seq_len": "tokens", "active_params": "parameters", "training_tokens": "tokens", "training_flop": "FLOP",
    "flops": "FLOP/s", "memory_gb": "GB", "hb_bandwidth_gbps": "Gb/s per GPU", "nic_gbps": "Gb/s per GPU", "moe.experts": "experts",
    "moe.top_k": "experts per token", "moe.moe_layers": "blocks", "moe.expert_parallel": "GPUs",
}


def memory_bytes_per_gpu(scheme: str, params: float, gpus: int, *, weight_bytes: float, grad_bytes: float, optimizer_bytes: float, shard_gpus: int = 1, tp: int = 1, pp: int = 1, sharded_optimizer: bool = False) -> float:
    """Model-state bytes one GPU holds under ``scheme`` (weights, gradients, optimizer; no activations)."""
    w, g, o = weight_bytes * params, grad_bytes * params, optimizer_bytes * params
    if scheme == "ddp":
        return w + g + o
    if scheme == "zero1":
        return w + g + o / gpus
    if scheme == "zero2":
        return w + (g + o) / gpus
    if scheme == "fsdp":
        return (w + g + o) / gpus
    if scheme == "hsdp":
        return (w + g + o) / shard_gpus
    if scheme == "megatron":
        mp = tp * pp
        d = gpus // mp
        return (w + g) / mp + (o / (mp * d) if sharded_optimizer else o / mp)
    raise ValueError(f"unknown scheme {scheme!r}")


def parse_number(raw: Any) -> float | None:
    """``175e9``, ``32M``, ``2.56e24``, 8 -> float; anything else (bools included) -> None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        return float(raw) if math.isfinite(raw) else None
    if isinstance(raw, str):
        m = NUMBER_RE.match(raw)
        if m:
            v = float(m.group(1)) * SUFFIX[m.group(2)]
            return v if math.isfinite(v) else None
    return None


def parse_batch(raw: Any) -> tuple[float, int | None] | None:
    """A batch as tokens (``32M``) or sequences × length (``2048x2048``) -> (tokens, sequences or None).

    None also for a batch of no tokens or more than :data:`MAX_BATCH_TOKENS` (``1e300``
    would make every time infinite, and a plot's axis with it).
    """
    if isinstance(raw, str):
        m = BATCH_RE.match(raw)
        if m:
            seqs, length = int(m.group(1)), int(m.group(2))
            return (float(seqs * length), seqs) if 0 < seqs * length <= MAX_BATCH_TOKENS else None
    v = parse_number(raw)
    return (v, None) if v is not None and 0 < v <= MAX_BATCH_TOKENS and v.is_integer() else None  # a whole number of tokens


class _Sourced:
    """A model or GPU preset whose values each name where they come from (``sources``)."""

    __slots__ = ()
    KIND = ""
    name: str
    description: str
    sources: tuple[tuple[str, str, str], ...]

    def source(self, key: str) -> tuple[str, str]:
        """``(status, where)`` of a value: as its preset states it, else the user's own."""
        for k, status, where in self.sources:
            if k == key:
                return status, where
        return "user", f"{self.KIND} {self.name}"

    def param(self, key: str, label: str, value: Any) -> Param:
        status, where = self.source(key)
        return Param(f"{label} ({self.name})", value, UNITS.get(key, ""), status, where)

    def _with_provenance(self, d: dict[str, Any]) -> dict[str, Any]:
        """``d`` plus the description and sources, as the input schema writes them."""
        if self.description:
            d["description"] = self.description
        if self.sources:
            d["sources"] = _sources_dict(self.sources)
        return d


@dataclass(frozen=True, slots=True)
class Model(_Sourced):
    """A transformer as the models need it; ``sources`` maps a field to (status, where)."""

    KIND = "model"

    name: str
    layers: int
    d_model: int
    params: float
    batch_tokens: float
    m_cc: float
    seq_len: int | None = None
    active_params: float | None = None
    training_tokens: float | None = None
    training_flop: float | None = None
    batch_schedule: tuple[float, ...] = ()
    experts: int | None = None
    top_k: int | None = None
    moe_layers: int | None = None
    expert_parallel: int | None = None
    description: str = ""
    sources: tuple[tuple[str, str, str], ...] = ()

    @property
    def is_moe(self) -> bool:
        return self.experts is not None and self.top_k is not None

    def to_dict(self) -> dict[str, Any]:
        """The model in the input schema (what a spec file would say): parsing it gives this model back."""
        d: dict[str, Any] = {"name": self.name, "layers": self.layers, "d_model": self.d_model, "params": self.params, "batch": self.batch_tokens, "m_cc": self.m_cc}
        for key in ("seq_len", "active_params", "training_tokens", "training_flop"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        if self.batch_schedule:
            d["batch_schedule"] = list(self.batch_schedule)
        moe = {k: getattr(self, k) for k in MOE_KEYS if getattr(self, k) is not None}
        if moe:
            d["moe"] = moe
        return self._with_provenance(d)


@dataclass(frozen=True, slots=True)
class Gpu(_Sourced):
    """A GPU: dense BF16 FLOP/s and, where known, memory and HB-domain bandwidth, each with its source."""

    KIND = "gpu"
    name: str
    flops: float
    memory_gb: float | None = None
    hb_bandwidth_gbps: float | None = None
    description: str = ""
    sources: tuple[tuple[str, str, str], ...] = ()
    nic_gbps: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The GPU in the input schema."""
        d: dict[str, Any] = {"name": self.name, "flops": self.flops}
        for key in ("memory_gb", "hb_bandwidth_gbps", "nic_gbps"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        return self._with_provenance(d)


@dataclass(frozen=True, slots=True)
class Parallelism:
    tp: int = 1
    pp: int = 1
    dp: str = "fsdp"
    hsdp_shard_gpus: int | None = None
    optimizer: str = "sharded"
    weight_bytes: float = 2.0
    grad_bytes: float = 2.0
    optimizer_bytes: float = 12.0
    expert_parallel: int | None = None
    micro_batch_tokens: float | None = None
    tp_given: bool = field(default=False, compare=False)  # the workload set tp: the iteration estimate takes N_M = tp


@dataclass(frozen=True, slots=True)
class CheckpointPlan:
    interval_h: float = 4.0
    write_GBps: float | None = None
    write_s: float | None = None
    path: str = "storage-fabric"
    bytes_per_param: float = 14.0


@dataclass(frozen=True, slots=True)
class Workload:
    """The resolved ``workload:`` section: what the analyses run on the spec's fabric."""

    model: Model
    gpu: Gpu | None = None
    batch_tokens: float = 0.0  # the batch used (the workload's ``batch``, else the model's)
    batch_given: bool = False  # True when the workload (or a flag) set the batch
    parallelism: Parallelism = field(default_factory=Parallelism)
    checkpoint: CheckpointPlan | None = None

    def to_dict(self) -> dict[str, Any]:
        """The section in the input schema, every value resolved (presets inlined): what the spec hash covers.

        ``parse_workload(w.to_dict(), ...)`` gives ``w`` back, so a topology.json
        that embeds its spec can be checked against it (``topogen validate``).
        """
        d: dict[str, Any] = {"model": self.model.to_dict()}
        if self.gpu is not None:
            d["gpu"] = self.gpu.to_dict()
        if self.batch_given:
            d["batch"] = self.batch_tokens
        par = self.parallelism
        # tp only when the workload set it: written back, a default tp 1 would read as the job's own TP (N_M = 1)
        d["parallelism"] = {k: v for k, v in asdict(par).items() if v is not None and k != "tp_given" and (k != "tp" or par.tp_given)}
        if self.checkpoint is not None:
            d["checkpoint"] = {k: v for k, v in asdict(self.checkpoint).items() if v is not None}
        return d

    def describe(self) -> str:
        """One line: model, GPU, batch, parallelism (the workbook's Summary shows it)."""
        p = self.parallelism
        gpu = f", gpu {self.gpu.name}" if self.gpu else ""
        return f"model {self.model.name}{gpu}, batch {self.batch_tokens:,.0f} tokens, {p.dp} tp {p.tp} pp {p.pp}, optimizer {p.optimizer}"


def _sources_dict(sources: tuple[tuple[str, str, str], ...]) -> dict[str, str]:
    return {key: f"{status}: {where}" for key, status, where in sources}


def available(kind: str) -> list[str]:
    return resources.template_names(KIND_DIRS[kind])


def _preset(kind: str, ref: str, path: str, problems: list[Problem]) -> dict[str, Any] | None:
    """A preset name or a YAML path -> its mapping (problems named under ``path``)."""
    p = Path(ref)
    if not (p.suffix in (".yaml", ".yml") or "/" in ref):
        what = f"no {kind} preset named {ref!r}{resources.did_you_mean(ref, available(kind))}"
        p = resources.template_path(KIND_DIRS[kind], ref)
        if p is None:
            problems.append(Problem(path, what, f"use one of: {', '.join(available(kind))}, a path to a .yaml file, or a mapping"))
            return None
    else:
        what = f"{kind} file {ref!r} does not exist"
    names = ", ".join(available(kind))
    try:
        data = read_yaml(p, path, str(p), Problem(path, what, f"use one of: {names}, a path to a .yaml file, or a mapping"))
    except InputError as exc:
        problems.extend(exc.problems)
        return None
    if not isinstance(data, dict):
        problems.append(Problem(path, f"{p} holds a {type(data).__name__}, not a mapping", f"write 'key: value' lines with keys from: {', '.join(MODEL_KEYS if kind == 'model' else GPU_KEYS)}"))
        return None
    return data


def _num(data: Mapping[str, Any], key: str, path: str, problems: list[Problem], *, required: bool = False, integer: bool = False, default: Any = None, hint: str = "") -> Any:
    raw = data.get(key)
    if raw is None:
        if required:
            problems.append(Problem(f"{path}.{key}", f"{key} is required", hint))
        return default
    v = parse_number(raw)
    if integer and not (isinstance(raw, int) or (isinstance(raw, str) and INTEGER_RE.match(raw))):
        v = None  # tp: 8.0 or '8.0' is not written as a whole number: keep specs exact, as the cluster keys do
    if v is None or v <= 0 or (integer and not float(v).is_integer()):
        kind = "a positive whole number" if integer else "a positive number (e.g. 175e9 or 32M)"
        problems.append(Problem(f"{path}.{key}", f"{key} must be {kind}, got {raw!r}", hint))
        return default
    return int(v) if integer else v


def _sources(raw: Any, path: str, problems: list[Problem]) -> tuple[tuple[str, str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        problems.append(Problem(f"{path}.sources", "sources must be a mapping field -> 'status: where'", f"status one of {', '.join(SOURCE_STATUSES)}"))
        return ()
    out = []
    for key, text in raw.items():
        status, _, where = str(text).partition(":")
        if status.strip() not in SOURCE_STATUSES:
            problems.append(Problem(f"{path}.sources.{key}", f"source {text!r} does not start with a status", f"write 'STATUS: where', STATUS one of {', '.join(SOURCE_STATUSES)}"))
            continue
        out.append((str(key), status.strip(), where.strip()))
    return tuple(sorted(out))


def _mapping(kind: str, raw: Any, path: str, problems: list[Problem]) -> tuple[dict[str, Any] | None, str]:
    """A preset name, a .yaml path or a mapping -> (the mapping with unknown keys reported, default name)."""
    name_default = "custom"
    if isinstance(raw, str):
        name_default = Path(raw).stem
        raw = _preset(kind, raw, path, problems)
        if raw is None:
            return None, name_default
    if not isinstance(raw, dict):
        problems.append(Problem(path, f"{kind} must be a preset name, a .yaml path or a mapping, got {raw!r}", f"presets: {', '.join(available(kind))}"))
        return None, name_default
    unknown_keys(raw, MODEL_KEYS if kind == "model" else GPU_KEYS, path, problems)
    return raw, name_default


def parse_model(raw: Any, path: str, problems: list[Problem]) -> Model | None:
    """A model preset name, YAML path or mapping -> :class:`Model` (None after a problem)."""
    n0 = len(problems)
    raw, name_default = _mapping("model", raw, path, problems)
    if raw is None:
        return None
    layers = _num(raw, "layers", path, problems, required=True, integer=True, hint="transformer blocks l, e.g. 96")
    d_model = _num(raw, "d_model", path, problems, required=True, integer=True, hint="embedding width, e.g. 12288")
    params = _num(raw, "params", path, problems, required=True, hint="parameters P, e.g. 175e9")
    m_cc = _num(raw, "m_cc", path, problems, required=True, hint="MP collectives per block: 8 for GPT/OPT, 12 for PaLM")
    batch = None
    if raw.get("batch") is None:
        problems.append(Problem(f"{path}.batch", "batch is required", BATCH_HINT))
    else:
        batch = parse_batch(raw["batch"])
        if batch is None:
            problems.append(Problem(f"{path}.batch", f"batch must be tokens or SEQUENCESxLENGTH, got {raw['batch']!r}", BATCH_HINT))
    schedule: list[float] = []
    raw_schedule = raw.get("batch_schedule") or []
    if not isinstance(raw_schedule, list):
        problems.append(Problem(f"{path}.batch_schedule", f"batch_schedule must be a list of batches, got {raw_schedule!r}", "e.g. [512x2048, 1024x2048, 2048x2048]"))
        raw_schedule = []
    for i, b in enumerate(raw_schedule):
        pb = parse_batch(b)
        if pb is None:
            problems.append(Problem(f"{path}.batch_schedule[{i}]", f"not a batch: {b!r}", BATCH_HINT))
        else:
            schedule.append(pb[0])
    moe = raw.get("moe") or {}
    if not isinstance(moe, dict):
        problems.append(Problem(f"{path}.moe", "moe must be a mapping", f"keys: {', '.join(MOE_KEYS)}"))
        moe = {}
    unknown_keys(moe, MOE_KEYS, f"{path}.moe", problems)
    m = dict(
        seq_len=_num(raw, "seq_len", path, problems, integer=True),
        active_params=_num(raw, "active_params", path, problems),
        training_tokens=_num(raw, "training_tokens", path, problems),
        training_flop=_num(raw, "training_flop", path, problems),
        experts=_num(moe, "experts", f"{path}.moe", problems, integer=True),
        top_k=_num(moe, "top_k", f"{path}.moe", problems, integer=True),
        moe_layers=_num(moe, "moe_layers", f"{path}.moe", problems, integer=True),
        expert_parallel=_num(moe, "expert_parallel", f"{path}.moe", problems, integer=True),
    )
    if moe and (m["experts"] is None or m["top_k"] is None):
        problems.append(Problem(f"{path}.moe", "an MoE model needs experts and top_k", "e.g. experts: 256, top_k: 8"))
    sources = _sources(raw.get("sources"), path, problems)
    name = raw.get("name", name_default)
    if len(problems) > n0:
        return None
    return Model(str(name), layers, d_model, params, batch[0], m_cc, batch_schedule=tuple(schedule), description=str(raw.get("description", "")), sources=sources, **m)


def parse_gpu(raw: Any, path: str, problems: list[Problem]) -> Gpu | None:
    n0 = len(problems)
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        raw = {"flops": raw}
    raw, name_default = _mapping("gpu", raw, path, problems)
    if raw is None:
        return None
    flops = _num(raw, "flops", path, problems, required=True, hint="dense BF16 FLOP/s per GPU, e.g. 989.4e12")
    mem = _num(raw, "memory_gb", path, problems)
    hb = _num(raw, "hb_bandwidth_gbps", path, problems)
    nic = _num(raw, "nic_gbps", path, problems)
    sources = _sources(raw.get("sources"), path, problems)
    if len(problems) > n0:
        return None
    return Gpu(str(raw.get("name", name_default)), flops, mem, hb, str(raw.get("description", "")), sources, nic)


def _divisors(n: int) -> str:
    ds = [d for d in range(1, min(n, 4096) + 1) if n % d == 0]
    return ", ".join(map(str, ds[:12])) + (" ..." if len(ds) > 12 else "")


def _parallelism(raw: Any, path: str, problems: list[Problem]) -> Parallelism | None:
    raw = raw or {}
    if not isinstance(raw, dict):
        problems.append(Problem(path, "parallelism must be a mapping", f"keys: {', '.join(PARALLEL_KEYS)}"))
        return None
    n0 = len(problems)
    unknown_keys(raw, PARALLEL_KEYS, path, problems)
    dp = raw.get("dp", "fsdp")
    if dp not in DP_SCHEMES:
        problems.append(Problem(f"{path}.dp", f"unknown DP scheme {dp!r}", f"valid: {', '.join(DP_SCHEMES)}"))
    opt = raw.get("optimizer")
    if opt is None:
        opt = "replicated" if dp in ("ddp", "megatron") else "sharded"
    elif opt not in OPTIMIZERS:
        problems.append(Problem(f"{path}.optimizer", f"unknown optimizer placement {opt!r}", f"valid: {', '.join(OPTIMIZERS)}"))
    elif opt == "replicated" and dp in ("zero1", "zero2", "fsdp", "hsdp"):
        problems.append(Problem(f"{path}.optimizer", f"{dp} shards the optimizer state, it cannot be replicated", "use optimizer: sharded, or dp: ddp / megatron"))
    elif opt == "sharded" and dp == "ddp":
        problems.append(Problem(f"{path}.optimizer", "ddp keeps a full optimizer state on every GPU", "use dp: zero1 (or fsdp) for a sharded optimizer"))
    vals = dict(
        tp=_num(raw, "tp", path, problems, integer=True, default=1),
        pp=_num(raw, "pp", path, problems, integer=True, default=1),
        hsdp_shard_gpus=_num(raw, "hsdp_shard_gpus", path, problems, integer=True),
        weight_bytes=_num(raw, "weight_bytes", path, problems, default=2.0),
        grad_bytes=_num(raw, "grad_bytes", path, problems, default=2.0),
        optimizer_bytes=_num(raw, "optimizer_bytes", path, problems, default=12.0),
        expert_parallel=_num(raw, "expert_parallel", path, problems, integer=True),
        micro_batch_tokens=_num(raw, "micro_batch_tokens", path, problems),
    )
    if len(problems) > n0:
        return None
    return Parallelism(dp=dp, optimizer=opt, tp_given=raw.get("tp") is not None, **vals)


def _checkpoint(raw: Any, path: str, problems: list[Problem]) -> CheckpointPlan | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problems.append(Problem(path, "checkpoint must be a mapping", f"keys: {', '.join(CHECKPOINT_KEYS)}"))
        return None
    n0 = len(problems)
    unknown_keys(raw, CHECKPOINT_KEYS, path, problems)
    gbps = _num(raw, "write_GBps", path, problems)
    secs = _num(raw, "write_s", path, problems)
    if (raw.get("write_GBps") is None) == (raw.get("write_s") is None):
        problems.append(Problem(path, "give exactly one of write_GBps (what the storage writes) and write_s (the target write time)", "e.g. write_GBps: 273 or write_s: 60"))
    where = raw.get("path", "storage-fabric")
    if where not in PATHS:
        problems.append(Problem(f"{path}.path", f"unknown checkpoint path {where!r}", f"valid: {', '.join(PATHS)}"))
    interval = _num(raw, "interval_h", path, problems, default=4.0)
    beta = _num(raw, "bytes_per_param", path, problems, default=14.0, hint="14 for mixed-precision Adam (2+4+4+4), 12 without the 16-bit copy, 2 for weights only")
    if len(problems) > n0:
        return None
    return CheckpointPlan(interval, gbps, secs, where, beta)


def parse_workload(raw: Any, gpus: int | None, hb_domain: int | None, problems: list[Problem], path: str = "workload") -> Workload | None:
    """The ``workload:`` mapping -> :class:`Workload`, checked against N = ``gpus`` and K = ``hb_domain``.

    Appends every problem to ``problems`` (named ``workload.<field>``) and returns None after any.
    """
    if raw is None:
        return None
    n0 = len(problems)
    if not check_section(raw, WORKLOAD_KEYS, path, problems):
        return None
    model = None
    if raw.get("model") is None:
        problems.append(Problem(f"{path}.model", "model is required", f"a preset ({', '.join(available('model'))}), a .yaml path or a mapping"))
    else:
        model = parse_model(raw["model"], f"{path}.model", problems)
    gpu = parse_gpu(raw["gpu"], f"{path}.gpu", problems) if raw.get("gpu") is not None else None
    batch = None
    if raw.get("batch") is not None:
        batch = parse_batch(raw["batch"])
        if batch is None:
            problems.append(Problem(f"{path}.batch", f"batch must be tokens or SEQUENCESxLENGTH, got {raw['batch']!r}", BATCH_HINT))
    par = _parallelism(raw.get("parallelism"), f"{path}.parallelism", problems)
    ck = _checkpoint(raw.get("checkpoint"), f"{path}.checkpoint", problems)
    if len(problems) > n0 or model is None or par is None:
        return None
    if gpus is not None and hb_domain is not None:
        _against_cluster(model, gpu, par, gpus, hb_domain, f"{path}.parallelism", problems)
        if len(problems) > n0:
            return None
    return Workload(model, gpu, batch[0] if batch else model.batch_tokens, batch is not None, par, ck)


def _against_cluster(model: Model, gpu: Gpu | None, par: Parallelism, n: int, k: int, path: str, problems: list[Problem]) -> None:
    """TP inside one HB domain, parallel degrees that divide, and model states that fit the GPU."""
    tp, pp = par.tp, par.pp
    if tp > k:
        problems.append(Problem(f"{path}.tp", f"tp {tp} is larger than the HB domain ({k} GPUs): tensor-parallel traffic must stay inside one domain", f"use a divisor of {k}: {_divisors(k)}"))
    elif k % tp:
        problems.append(Problem(f"{path}.tp", f"tp {tp} does not divide the HB domain ({k} GPUs), so a TP group would span two domains", f"use a divisor of {k}: {_divisors(k)}"))
    elif n % (tp * pp):
        problems.append(Problem(f"{path}.pp", f"tp x pp = {tp * pp} does not divide the {n} GPUs, so the DP degree is not whole", f"use pp dividing {n // tp}: {_divisors(n // tp)}"))
    for key, g in (("hsdp_shard_gpus", par.hsdp_shard_gpus), ("expert_parallel", par.expert_parallel)):
        if g is not None and (n % g or (g > k and g % k) or (g < k and k % g)):
            problems.append(Problem(f"{path}.{key}", f"{key} {g} must divide the {n} GPUs and either divide the HB domain ({k}) or be a whole number of domains", f"e.g. {k} (one domain) or {k * 2 if n % (k * 2) == 0 else k}"))
    if par.dp == "hsdp" and par.hsdp_shard_gpus is None:
        problems.append(Problem(f"{path}.hsdp_shard_gpus", "dp hsdp needs hsdp_shard_gpus (the GPUs one copy of the model is sharded over)", f"e.g. {k} (one HB domain)"))
    if problems or gpu is None or gpu.memory_gb is None:
        return
    need = memory_bytes_per_gpu(par.dp, model.params, n, weight_bytes=par.weight_bytes, grad_bytes=par.grad_bytes, optimizer_bytes=par.optimizer_bytes, shard_gpus=par.hsdp_shard_gpus or k, tp=tp, pp=pp, sharded_optimizer=par.optimizer == "sharded")
    have = gpu.memory_gb * 1e9
    if need > have:
        problems.append(Problem(f"{path}.dp", f"model {model.name} does not fit: its states need {need / 1e9:,.1f} GB per GPU under {par.dp} (tp {tp}, pp {pp}), the {gpu.name} has {gpu.memory_gb:g} GB", "shard it more: dp fsdp, a larger hsdp_shard_gpus, or larger tp x pp (activations are not counted)"))
