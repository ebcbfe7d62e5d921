"""The ``workload:`` parser on arbitrary input: only InputError (exit 2), never a crash; what it accepts runs and round-trips."""

from __future__ import annotations

import json
import random

import pytest

from topogen.analysis import fabric
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError

VALUES = [None, 0, -1, 1, 2.5, True, "x", "32M", "2048x2048", [1], {}, {"a": 1}, [], "gh200", "llama-2-70b", float("nan"), float("inf"), "1e400", 10**30, "1", 8, 64]
MODEL_KEYS = ["name", "layers", "d_model", "params", "batch", "m_cc", "seq_len", "batch_schedule", "moe", "sources", "active_params"]
PARALLEL_KEYS = ["tp", "pp", "dp", "hsdp_shard_gpus", "optimizer", "expert_parallel", "weight_bytes"]
CHECKPOINT_KEYS = ["interval_h", "write_GBps", "write_s", "path", "bytes_per_param"]


def random_workload(rng: random.Random) -> dict:
    w = {k: rng.choice(VALUES) for k in ("model", "gpu", "batch", "parallelism", "checkpoint") if rng.random() < 0.6}
    if rng.random() < 0.4:
        w["model"] = {k: rng.choice(VALUES) for k in rng.sample(MODEL_KEYS, 5)}
    elif rng.random() < 0.5:
        w["model"] = rng.choice(["llama-2-70b", "deepseek-v3", "gpt-3-175b"])
    if rng.random() < 0.4:
        w["parallelism"] = {k: rng.choice(VALUES) for k in rng.sample(PARALLEL_KEYS, 3)}
    if rng.random() < 0.4:
        w["checkpoint"] = {k: rng.choice(VALUES) for k in rng.sample(CHECKPOINT_KEYS, 3)}
    return w


@pytest.mark.parametrize("seed", range(4))
def test_arbitrary_workloads_fail_cleanly_or_run(seed):
    rng = random.Random(seed)
    accepted = 0
    for _ in range(600):
        data = {"gpus": 64, "hb_domain": 8, "radix": 16, "hb_bandwidth_gbps": rng.choice(VALUES), "workload": random_workload(rng)}
        try:
            spec = build_spec(data)
        except InputError as exc:
            assert exc.problems and all(p.path.split(".")[0] in ("workload", "hb_bandwidth_gbps") for p in exc.problems)
            continue
        accepted += 1
        section = fabric.build_section(spec)
        json.dumps(section, allow_nan=False)  # summary.json stays valid JSON
        assert build_spec(json.loads(json.dumps(spec.to_dict()))) == spec
    assert accepted > 0
