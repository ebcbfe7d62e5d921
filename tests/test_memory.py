"""The program's memory policy (topogen.util.memory): in force under glibc, same outputs either way."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

SNIPPET = """
import hashlib, json, sys, tempfile
from pathlib import Path
if sys.argv[1] == "policy":
    from topogen.util.memory import reuse_freed_memory
    assert reuse_freed_memory(), "mallopt refused"
from topogen import pipeline
from topogen.spec import build_spec
ctx = pipeline.build(build_spec({"name": "m", "gpus": 4096, "hb_domain": 8, "radix": 32, "arch": "both"}))
if sys.argv[1] == "policy":
    from topogen.util.memory import usual_allocation
    usual_allocation()  # as topogen build does before its exporters
with tempfile.TemporaryDirectory() as tmp:
    pipeline.write_outputs(ctx, Path(tmp) / "o", pipeline.export_formats(ctx, ["cabling", "netbox", "topology"]), jobs=2 if sys.argv[1] == "policy" else 1)
    print(json.dumps({str(p.relative_to(tmp)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(Path(tmp).rglob("*")) if p.is_file() and p.name != "manifest.json"}))
"""


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="the policy is glibc's mallopt; elsewhere it does nothing")
def test_policy_in_force_and_outputs_unchanged():
    """Under glibc the policy takes (mallopt accepts both settings) and a build writes the same bytes with it (and back to the usual allocation for the exporters, two workers) as without."""
    runs = [subprocess.run([sys.executable, "-c", SNIPPET, mode], capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1] for mode in ("policy", "default")]
    assert runs[0] == runs[1]
    assert len(runs[0]) > 100
