"""Benchmark: how long the real slurmctld takes to start on topogen's tree topology.conf.

For each GPU count, a rail-optimized build (HB domain 8, radix 64, ``--formats slurm``)
writes ``rail-optimized/slurm/tree/topology.conf``; slurmctld (``-D``, a private munged,
``TopologyPlugin=topology/tree``, every node of the tree declared) is started on it, and
the time until its log says "Running as primary controller" is the figure (the tree
plugin builds its switch paths before that line).

    .venv/bin/python bench/slurm_ctld.py                                   # 65,536 to 524,288 GPUs
    .venv/bin/python bench/slurm_ctld.py --gpus 524288 --repeat 3
    .venv/bin/python bench/slurm_ctld.py --topology some/topology.conf     # time a given file
    .venv/bin/python bench/slurm_ctld.py --source /work/main               # another checkout's topogen (before)

Needs slurm-wlm and munge (Debian). Prints one Markdown row per case: GPUs, Slurm
switches (all lines, leaf lines), nodes, file size, slurmctld start seconds (wall, each run)
and slurmctld's own CPU seconds until then (the figure to compare on a shared machine).
"""

from __future__ import annotations

import argparse
import getpass
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOPOGEN = ROOT / ".venv" / "bin" / "topogen"
SLURMCTLD = shutil.which("slurmctld") or "/usr/sbin/slurmctld"
MUNGED = shutil.which("munged") or "/usr/sbin/munged"
MUNGEKEY = shutil.which("mungekey") or "/usr/sbin/mungekey"
READY = "Running as primary controller"


def munge(d: Path) -> tuple[Path, int]:
    """A private munged: its socket and pid."""
    d.mkdir(mode=0o700)
    key = d / "munge.key"
    subprocess.run([MUNGEKEY, "--create", "--keyfile", str(key)], check=True, capture_output=True)
    key.chmod(0o600)
    sock = d / "munge.sock"
    subprocess.run([MUNGED, f"--key-file={key}", f"--socket={sock}", f"--pid-file={d / 'munged.pid'}", f"--log-file={d / 'munged.log'}", f"--seed-file={d / 'munged.seed'}", "--force"], check=True, capture_output=True)
    return sock, int((d / "munged.pid").read_text().strip())


def nodes_of(topology: Path) -> str:
    """Every node of the tree's leaf lines, as one comma-joined hostlist expression."""
    return ",".join(m.group(1) for m in re.finditer(r"^SwitchName=\S+ Nodes=(\S+)$", topology.read_text(), re.M))


def hosts(work: Path, nodes: str) -> int:
    """How many nodes a hostlist expression names, as Slurm's own scontrol expands it."""
    conf = work / "hostlist.conf"
    conf.write_text("ClusterName=x\nSlurmctldHost=localhost\nNodeName=localhost CPUs=1\nPartitionName=p Nodes=ALL\n")
    res = subprocess.run(["scontrol", "show", "hostnames", nodes], capture_output=True, text=True, check=True, env={"SLURM_CONF": str(conf), "PATH": "/usr/bin:/bin"})
    return res.stdout.count("\n")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_s(work: Path, sock: Path, topology: Path, nodes: str, plugin: str = "tree") -> tuple[float, float]:
    """Wall and CPU seconds from starting slurmctld on ``topology`` until it is the primary controller.

    The CPU seconds are slurmctld's own (its threads, not its script daemon): on a
    shared machine the wall time also holds the time other processes took the cores.
    """
    if work.exists():
        shutil.rmtree(work)
    (work / "state").mkdir(parents=True)
    shutil.copy(topology, work / "topology.conf")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conf = work / "slurm.conf"
    conf.write_text("\n".join([
        "ClusterName=topogen", "SlurmctldHost=localhost", f"SlurmUser={getpass.getuser()}", "AuthType=auth/munge", "CredType=cred/munge",
        f"AuthInfo=socket={sock}", f"StateSaveLocation={work / 'state'}", f"SlurmctldPidFile={work / 'slurmctld.pid'}",
        f"SlurmctldLogFile={work / 'slurmctld.log'}", "SlurmctldDebug=info", f"SlurmctldPort={port}", f"SlurmdPort={port + 1}",
        f"TopologyPlugin=topology/{plugin}", "SelectType=select/cons_tres", "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "MpiDefault=none", "MailProg=/bin/true", f"NodeName={nodes} NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN",
        "PartitionName=all Nodes=ALL Default=YES", "",
    ]))
    log = work / "slurmctld.log"
    t0 = time.monotonic()
    proc = subprocess.Popen([SLURMCTLD, "-D", "-c", "-f", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={"SLURM_CONF": str(conf), "PATH": "/usr/sbin:/usr/bin:/bin"})
    try:
        while time.monotonic() - t0 < 1800:
            if log.exists() and READY in log.read_text(errors="replace"):
                return time.monotonic() - t0, cpu_s(proc.pid)
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    raise SystemExit(f"slurmctld did not become ready on {topology}:\n{tail}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", default="65536,131072,262144,524288", help="comma-separated GPU counts")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--topology", help="time this topology.conf instead of building one")
    ap.add_argument("--baseline", action="store_true", help="also start slurmctld with TopologyPlugin=topology/none on the same nodes")
    ap.add_argument("--source", help="build with the topogen package of this checkout (PYTHONPATH), e.g. a main branch for 'before' figures")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="topogen-slurm-bench-", ignore_cleanup_errors=True) as tmp:
        t = Path(tmp)
        sock, pid = munge(t / "munge")
        try:
            print(f"slurmctld: {subprocess.run([SLURMCTLD, '-V'], capture_output=True, text=True).stdout.strip()}")
            print(f"load average at start: {os.getloadavg()[0]:.1f}")
            print("| GPUs | Slurm switches (leaves) | nodes | topology.conf KB | slurmctld start, wall s | slurmctld CPU s |" + (" topology/none: wall s | CPU s |" if args.baseline else ""))
            print("|---|---|---|---|---|---|" + ("---|---|" if args.baseline else ""))
            cases = [("file", Path(args.topology))] if args.topology else [(g, None) for g in args.gpus.split(",")]
            for gpus, topo in cases:
                if topo is None:
                    out = t / f"out-{gpus}"
                    prog = [sys.executable, "-m", "topogen"] if args.source else [str(TOPOGEN)]
                    env = {**os.environ, "PYTHONPATH": args.source} if args.source else None
                    subprocess.run([*prog, "build", "--gpus", gpus, "--hb-domain", "8", "--radix", "64", "--arch", "rail-optimized", "--formats", "slurm", "--out", str(out.resolve())], check=True, capture_output=True, env=env, cwd=args.source)
                    topo = out / "rail-optimized" / "slurm" / "tree" / "topology.conf"
                text = topo.read_text()
                lines = [ln for ln in text.splitlines() if ln.startswith("SwitchName=")]
                leaves = sum(" Nodes=" in ln for ln in lines)
                nodes = nodes_of(topo)
                n = hosts(t, nodes)
                runs = [start_s(t / "ctld", sock, topo, nodes) for _ in range(args.repeat)]
                if args.baseline:  # the same nodes without a topology: what the tree itself costs is the difference
                    base = [start_s(t / "ctld", sock, topo, nodes, "none") for _ in range(args.repeat)]
                label = f"{int(gpus):,}" if gpus != "file" else str(topo)
                print(f"| {label} | {len(lines):,} ({leaves:,}) | {n:,} | {len(text.encode()) // 1024:,} | {', '.join(f'{w:.1f}' for w, _ in runs)} | {', '.join(f'{c:.1f}' for _, c in runs)} |" + (f" {', '.join(f'{w:.1f}' for w, _ in base)} | {', '.join(f'{c:.1f}' for _, c in base)} |" if args.baseline else ""), flush=True)
        finally:
            subprocess.run(["kill", str(pid)], check=False)


if __name__ == "__main__":
    sys.exit(main())
