"""Run Debian's InfiniBand fabric simulator on a topology file, for the integration tests.

``ibsim -s -n FILE`` simulates the fabric; tools run under ``ibsim-run``
(which preloads the simulator's umad shim) talk to it through a socket named
by ``IBSIM_SOCKNAME``, unique per run here so parallel runs on one machine
do not meet. The simulator is stopped with SIGTERM to the process we started.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

from topogen.util import processes

TOOLS = ("ibsim", "ibsim-run", "ibnetdiscover", "opensm")
_PATH = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"  # ibnetdiscover and opensm live in sbin
WHERE = {t: shutil.which(t, path=_PATH) for t in TOOLS}
MISSING = [t for t, p in WHERE.items() if p is None]
SKIP_REASON = f"InfiniBand tools not installed ({', '.join(MISSING)}); .ci/run installs ibsim-utils infiniband-diags opensm"
_counter = itertools.count()
OPTS_RE = re.compile(r"simulate with:? ibsim ((?:-[SNP] \d+ ?)*)-s FILE")


def ibsim_options(topo: Path) -> list[str]:
    """The -S/-N/-P options the exporter's header asks for (empty for default-size fabrics)."""
    head = topo.read_text(encoding="utf-8")[:1000]
    m = OPTS_RE.search(head)
    return m.group(1).split() if m else []


@contextmanager
def simulated(topo: Path, workdir: Path):
    """Start ibsim on ``topo``; yield the environment for ``ibsim-run`` tools; stop it."""
    sock = f"topogen-{os.getpid()}-{next(_counter)}"
    env = dict(os.environ, IBSIM_SOCKNAME=sock, OSM_CACHE_DIR=str(workdir), OSM_TMP_DIR=str(workdir))
    log = workdir / f"ibsim-{topo.stem}.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen([WHERE["ibsim"], *ibsim_options(topo), "-s", "-n", str(topo)], stdout=fh, stderr=subprocess.STDOUT, env=env, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while "Network simulator ready" not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ibsim did not start on {topo}:\n{log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.05)
        yield env
    finally:
        processes.stop(proc, 10)


def discover(env: dict, out: Path) -> Path:
    """``ibsim-run ibnetdiscover > out``; returns ``out``."""
    with open(out, "w") as fh:
        subprocess.run([WHERE["ibsim-run"], WHERE["ibnetdiscover"]], stdout=fh, stderr=subprocess.PIPE, env=env, check=True, timeout=300)
    return out


def route_ftree(env: dict, workdir: Path) -> str:
    """Run ``opensm -R ftree`` once (``-o``) and return its log."""
    log = workdir / "opensm.log"
    log.unlink(missing_ok=True)
    subprocess.run([WHERE["ibsim-run"], WHERE["opensm"], "-o", "-R", "ftree", "-s", "0", "-f", str(log)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True, timeout=600)
    return log.read_text(errors="replace")
