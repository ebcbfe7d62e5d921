"""What this machine must offer an emulation: root, iproute2 and FRR, memory and a ceiling on routers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from topogen.config.emulation.lab import DAEMONS, FRR_DIR, Lab
from topogen.util.errors import Problem

MB_PER_ROUTER = 48  # zebra + bgpd + bfdd resident, measured about 30 MiB; with head room
MAX_ROUTERS = 400  # two cores converge this many FRR instances in a few minutes at most


def capacity_problems(lab: Lab) -> list[Problem]:
    """Refuse what this machine cannot hold: memory for every FRR instance, and a ceiling on their count."""
    n = len(lab.routers)
    need_mb = n * MB_PER_ROUTER + len(lab.hosts)
    avail_mb = _mem_available_mb()
    problems = []
    if n > MAX_ROUTERS:
        problems.append(Problem("build", f"the {lab.arch} fabric has {n:,} routers (switches and VRFs); emulate runs at most {MAX_ROUTERS} on one machine", "emulate a smaller build of the same shape (fewer GPUs, same radix and HB domain)"))
    elif avail_mb is not None and need_mb > avail_mb * 0.8:
        problems.append(Problem("build", f"the {lab.arch} fabric needs about {need_mb:,} MiB for {n:,} FRR routers ({MB_PER_ROUTER} MiB each); this machine has {avail_mb:,} MiB available", f"emulate at most about {int(avail_mb * 0.8) // MB_PER_ROUTER} switches here, or free memory"))
    return problems


def _mem_available_mb() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None


def environment_problems() -> list[Problem]:
    """Root, ``ip``, FRR's daemons and ``vtysh``."""
    problems = []
    if os.geteuid() != 0:
        problems.append(Problem("emulate", "emulate needs root (it makes network namespaces and starts FRR in them)", "run it as root, e.g. sudo topogen emulate BUILD_DIR"))
    if shutil.which("ip") is None:
        problems.append(Problem("emulate", "the 'ip' command (iproute2) is not installed", "apt-get install iproute2"))
    for d in DAEMONS:
        if not (FRR_DIR / d).is_file():
            problems.append(Problem("emulate", f"FRR's {d} is not at {FRR_DIR / d}", "apt-get install frr"))
    if shutil.which("vtysh") is None:
        problems.append(Problem("emulate", "FRR's vtysh is not installed", "apt-get install frr"))
    return problems
