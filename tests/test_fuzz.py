"""Run the hypothesis fuzz tests (tests/fuzz_inputs.py) in a child process with hard limits.

The child gets an address-space limit of 4 GiB and a CPU-time limit; each example runs
under a 10 s alarm (see fuzz_inputs.py). A hostile input that made topogen allocate
without bound or spin would fail here instead of hanging the machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEMORY_BYTES = 4 << 30
CPU_SECONDS = 600


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


def test_fuzz_under_resource_limits(tmp_path):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider", str(ROOT / "tests" / "fuzz_inputs.py")],
        cwd=tmp_path, env=env, preexec_fn=_limits, capture_output=True, text=True, timeout=1200,
    )
    assert res.returncode == 0, res.stdout[-6000:] + res.stderr[-3000:]
    assert "5 passed" in res.stdout, res.stdout
