"""The Slurm tree file in Debian's real slurmctld, with nodes declared from the NetBox devices.

Each case builds a spec, declares the ``gpu-node`` devices of the NetBox
``devices.csv`` as Slurm nodes, installs ``<arch>/slurm/tree/topology.conf``
beside a minimal ``slurm.conf`` (``TopologyPlugin=topology/tree``), starts
``slurmctld -D`` against a private ``munged``, waits for "Running as primary
controller" and fails on any topology warning or error in its log. The
131,072-GPU case records how long slurmctld takes to load the tree (printed,
and kept as the ``slurmctld_load_s`` test property; no timing assertion).

The block plugin needs Slurm 23.11+; Debian 12 ships slurmctld 22.05, which
has no ``topology/block``, so here only the tree file is loaded (the block
file's structure and its 16-value BlockSizes cap are tested in
``test_exports_tools.py``).

Needs ``slurm-wlm`` and ``munge`` (``.ci/run`` installs them).
"""

from __future__ import annotations

import csv
import getpass
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from topogen import pipeline
from topogen.cli import main
from topogen.exports import EXPORTERS
from topogen.exports.slurm.topology import hostlist
from topogen.util import processes
from topogen.spec.cluster import build_spec, load_spec

SLURMCTLD = shutil.which("slurmctld") or "/usr/sbin/slurmctld"
MUNGED = shutil.which("munged") or "/usr/sbin/munged"
MUNGEKEY = shutil.which("mungekey") or "/usr/sbin/mungekey"
HAVE_SLURM = all(Path(p).exists() for p in (SLURMCTLD, MUNGED, MUNGEKEY))
pytestmark = pytest.mark.skipif(not HAVE_SLURM, reason="slurmctld/munged not installed (apt-get install slurm-wlm munge; .ci/run does)")

READY = "Running as primary controller"
# a log line about the topology that is a warning or an error
TOPOLOGY_TROUBLE = re.compile(r"(?i)(topolog|switch).*(error|warn|fatal|invalid|unknown|not found|multiple)|(error|warn|fatal).*(topolog|switch)")


@pytest.fixture(scope="module")
def munge(tmp_path_factory):
    """A private munged (own key and socket), stopped after the module."""
    d = tmp_path_factory.mktemp("munge")
    d.chmod(0o700)
    key = d / "munge.key"
    subprocess.run([MUNGEKEY, "--create", "--keyfile", str(key)], check=True, capture_output=True)
    key.chmod(0o600)
    sock = d / "munge.sock"
    args = [MUNGED, f"--key-file={key}", f"--socket={sock}", f"--pid-file={d / 'munged.pid'}", f"--log-file={d / 'munged.log'}", f"--seed-file={d / 'munged.seed'}", "--force"]
    subprocess.run(args, check=True, capture_output=True)
    yield sock
    pid = int((d / "munged.pid").read_text().strip())
    subprocess.run(["kill", str(pid)], check=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gpu_nodes(netbox_dir: Path) -> list[str]:
    """Host names of the compute-node devices of NetBox's devices.csv (or its parts; device name ``<site>.<host>``)."""
    rows = []
    for part in sorted(netbox_dir.glob("devices*.csv")):
        with open(part, encoding="utf-8", newline="") as fh:
            rows += [r for r in csv.DictReader(fh) if r["role"] == "gpu-node"]
    assert rows and all(r["name"].startswith(r["site"] + ".") for r in rows)
    return [r["name"].removeprefix(r["site"] + ".") for r in rows]


def base_conf(d: Path, sock: Path, debug: str) -> list[str]:
    """The slurm.conf lines every harness here shares: munge, state and log under ``d``, a free port, no real nodes' plugins."""
    port = free_port()
    return [
        "ClusterName=topogen",
        f"SlurmUser={getpass.getuser()}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={sock}",
        f"StateSaveLocation={d / 'state'}",
        f"SlurmctldPidFile={d / 'slurmctld.pid'}",
        f"SlurmctldLogFile={d / 'slurmctld.log'}",
        f"SlurmctldDebug={debug}",
        f"SlurmctldPort={port}",
        f"SlurmdPort={port + 1}",
        "SelectType=select/cons_tres",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "MpiDefault=none",
        "MailProg=/bin/true",
    ]


def slurm_conf(d: Path, sock: Path, nodes: list[str], debug: str) -> str:
    return "\n".join(
        [
            "SlurmctldHost=localhost",
            *base_conf(d, sock, debug),
            "LogTimeFormat=iso8601_ms",
            "TopologyPlugin=topology/tree",
            f"NodeName={hostlist(nodes)} NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN",
            "PartitionName=all Nodes=ALL Default=YES",
            "",
        ]
    )


def run_slurmctld(d: Path, sock: Path, topology: Path, nodes: list[str], debug: str = "debug", timeout_s: float = 900) -> tuple[str, float]:
    """Start slurmctld on ``topology``; return its log and the seconds until it was ready."""
    (d / "state").mkdir(parents=True)
    shutil.copy(topology, d / "topology.conf")
    conf = d / "slurm.conf"
    conf.write_text(slurm_conf(d, sock, nodes, debug))
    log = d / "slurmctld.log"
    t0 = time.monotonic()
    proc = subprocess.Popen([SLURMCTLD, "-D", "-c", "-f", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={"SLURM_CONF": str(conf), "PATH": "/usr/sbin:/usr/bin:/bin"})
    ready_s = None
    try:
        while time.monotonic() - t0 < timeout_s:
            text = log.read_text(errors="replace") if log.exists() else ""
            if READY in text:
                ready_s = time.monotonic() - t0
                break
            if proc.poll() is not None:
                break
            time.sleep(0.05)
    finally:
        processes.stop(proc, 30)
    text = log.read_text(errors="replace") if log.exists() else ""
    assert ready_s is not None, f"slurmctld did not become ready (exit {proc.returncode}); log tail:\n{text[-3000:]}"
    return text, ready_s


def topology_trouble(log: str) -> list[str]:
    return [ln for ln in log.splitlines() if TOPOLOGY_TROUBLE.search(ln) or "fatal" in ln.lower()]


def build(spec, tmp_path: Path) -> Path:
    ctx = pipeline.build(spec)
    out = tmp_path / "out"
    for name in ("netbox", "slurm"):
        EXPORTERS[name](ctx, out)
    return out


CASES = {
    "demo": lambda: load_spec("demo"),
    "three-tier-two-planes": lambda: build_spec({"name": "t3", "gpus": 504, "hb_domain": 8, "radix": 16, "planes": 2}),
    "nvl72-trays": lambda: build_spec({"name": "nvl", "gpus": 1152, "hb_domain": 72, "radix": 32, "gpus_per_node": 4}),
    "gh200-superchips": lambda: build_spec({"name": "gh", "gpus": 2048, "hb_domain": 256, "radix": 64, "gpus_per_node": 1}),
    # dual-homed, 3 tiers: each node under a leaf pair, which the tree shows as one Slurm switch
    "dual-homed": lambda: build_spec({"name": "dh", "gpus": 504, "hb_domain": 8, "radix": 16, "homing": "dual"}),
    # scalable units, 3 tiers with the top sized for 12 SUs: a rail-0 leaf per SU, SUs grouped by pod
    "scalable-units": lambda: build_spec({"name": "su", "gpus": 400, "hb_domain": 8, "radix": 16, "scalable_unit": 5, "max_scalable_units": 12, "reserved_leaf_ports": 1}),
    # design: leaf-pair: every node on both leaves (A-B-B-A), so the pair is one Slurm switch holding every node
    "leaf-pair": lambda: build_spec({"name": "lp", "gpus": 128, "hb_domain": 8, "radix": 128, "design": "leaf-pair"}),
    # the site's names (naming:): hosts, leaves, spines and cores by templates, nodes and switches as NetBox and Slurm get them
    "site-names": lambda: build_spec({"name": "sn", "gpus": 504, "hb_domain": 8, "radix": 16, "naming": {"site": "sjc1", "host": "{site}-dgx{index+1:03}", "leaf": "{site}-leaf{group:02}-r{rail}-{pos}", "spine": "{site}-spine{index:03}", "core": "{site}-core{index:03}"}}),
    "site-names-trays": lambda: build_spec({"name": "snt", "gpus": 1152, "hb_domain": 72, "radix": 32, "gpus_per_node": 4, "naming": {"host": "nvl{domain:02}-t{slot+1:02}", "leaf": "lf{group}-{rail}-{pos}"}}),
    "leaf-pair-trays-two-planes": lambda: build_spec({"name": "lp2", "gpus": 96, "hb_domain": 8, "gpus_per_node": 2, "radix": 128, "design": "leaf-pair", "planes": 2, "oversubscription": "2:1"}),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_tree_loads_without_topology_warnings(case, arch, munge, tmp_path):
    out = build(CASES[case](), tmp_path)
    nodes = gpu_nodes(out / arch / "netbox")
    tree = out / arch / "slurm" / "tree" / "topology.conf"
    log, _ = run_slurmctld(tmp_path / "ctld", munge, tree, nodes)
    assert "_read_topo_file: Reading the topology.conf file" in log
    assert topology_trouble(log) == []
    switches = sum(1 for ln in tree.read_text().splitlines() if ln.startswith("SwitchName="))
    assert log.count("_log_switches: Switch level:") == switches  # slurmctld read every switch we wrote


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_leaf_pair_is_one_switch_over_every_node(arch, munge, tmp_path):
    """Both leaves of a pair hold every node: one Slurm switch; the alternative, each node under both leaves, is flagged by slurmctld."""
    out = build(CASES["leaf-pair-trays-two-planes"](), tmp_path)
    nodes = gpu_nodes(out / arch / "netbox")
    lines = [ln for ln in (out / arch / "slurm" / "tree" / "topology.conf").read_text().splitlines() if ln.startswith("SwitchName=")]
    assert lines == ["SwitchName=pl0-leaf Nodes=hb[00-11]-n[0-3]"] and len(nodes) == 48  # 12 domains of 4 two-GPU nodes
    both = tmp_path / "both.conf"
    both.write_text(f"SwitchName=pl0-leaf-a Nodes={hostlist(nodes)}\nSwitchName=pl0-leaf-b Nodes={hostlist(nodes)}\nSwitchName=top Switches=pl0-leaf-a,pl0-leaf-b\n")
    log, _ = run_slurmctld(tmp_path / "ctld", munge, both, nodes)
    assert topology_trouble(log), log[-2000:]


def test_detector_catches_a_bad_tree(munge, tmp_path):
    """The warning check is real: a node under two leaves makes slurmctld complain, and the test sees it."""
    bad = tmp_path / "bad.conf"
    bad.write_text("SwitchName=a Nodes=hb[00-01]\nSwitchName=b Nodes=hb[01-02]\nSwitchName=top Switches=a,b\n")
    log, _ = run_slurmctld(tmp_path / "ctld", munge, bad, ["hb00", "hb01", "hb02"])
    assert topology_trouble(log), log[-2000:]


def test_131072_gpu_tree_loads_in_seconds(munge, tmp_path, record_property, capsys):
    """The 131,072-GPU rail-optimized tree (K = 8, 64-port: 14,336 switches in the fabric) loads in slurmctld.

    The figure is recorded, not asserted: timing depends on the machine.
    """
    spec = build_spec({"name": "big", "gpus": 131072, "hb_domain": 8, "radix": 64, "arch": "rail-optimized"})
    out = build(spec, tmp_path)
    nodes = gpu_nodes(out / "rail-optimized" / "netbox")
    assert len(nodes) == 16384
    tree = out / "rail-optimized" / "slurm" / "tree" / "topology.conf"
    log, ready_s = run_slurmctld(tmp_path / "ctld", munge, tree, nodes, debug="info")
    assert topology_trouble(log) == []
    switches = sum(1 for ln in tree.read_text().splitlines() if ln.startswith("SwitchName="))
    record_property("slurmctld_load_s", round(ready_s, 2))
    with capsys.disabled():
        print(f"\nslurmctld {subprocess.run([SLURMCTLD, '-V'], capture_output=True, text=True).stdout.strip()}: 131,072-GPU tree ({switches} Slurm switches, {len(nodes):,} nodes) ready in {ready_s:.1f} s")


@pytest.mark.skipif(shutil.which("scontrol") is None, reason="scontrol not installed (apt-get install slurm-client)")
@pytest.mark.parametrize("preset,args", [("demo", ()), ("gb200-nvl72", ("--gpus", "576")), ("gh200-32k", ())])
def test_block_names_compress_in_slurm(tmp_path, preset, args):
    """Slurm's own hostlist compresses the block names (they end in digits): one range, not a list of 128 names.

    ``show topology`` of 65,536 blocks shrank to about half with names like these.
    """
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", preset, *args, "--out", str(out), "--formats", "slurm"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\nSlurmctldHost=localhost\nNodeName=localhost CPUs=1\nPartitionName=p Nodes=ALL\n")
    for arch_dir in sorted(p for p in out.iterdir() if (p / "slurm" / "block" / "topology.conf").exists()):
        names = [ln.split()[0].split("=", 1)[1] for ln in (arch_dir / "slurm" / "block" / "topology.conf").read_text().splitlines() if ln.startswith("BlockName=")]
        got = subprocess.run(["scontrol", "show", "hostlist", ",".join(names)], env={**os.environ, "SLURM_CONF": str(conf)}, capture_output=True, text=True, check=True).stdout.strip()
        assert "," not in got and "[" in got and got.startswith("block-hb"), got


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_folded_tree_loads_and_keeps_every_node_once(arch, munge, tmp_path, monkeypatch):
    """Over the switch cap, leaves fold into pods: fewer Slurm switches, each node under one leaf, slurmctld loads it.

    The cap is lowered so that a 3-tier fabric of 4,096 GPUs (radix 16) folds; at the
    shipped cap it is the 262,144-GPU tree (1,289 switches) that folds, to 265.
    """
    from topogen.exports.slurm import topology as slurm

    spec = build_spec({"name": "fold", "gpus": 4096, "hb_domain": 8, "radix": 16, "arch": arch})
    ctx = pipeline.build(spec)
    fabric = ctx.fabrics[arch]
    full = slurm.aggregated_tree(fabric, max_switches=10**9)
    monkeypatch.setattr(slurm, "MAX_TREE_SWITCHES", len(full) - 1)
    tree = slurm.aggregated_tree(fabric)
    if arch == "rail-only":  # rail 0 of rail-only is small: nothing to fold, or fewer switches
        assert len(tree) <= len(full)
    else:
        assert len(tree) < len(full) and all(t.leaves for t in tree if t.domains)
    doms = sorted(d for t in tree for d in t.domains)
    assert doms == list(range(spec.domains))  # every HB domain under exactly one Slurm leaf
    assert all(re.search(r"\d$", t.name) or not t.domains for t in tree)
    out = tmp_path / "out"
    for name in ("netbox", "slurm"):
        EXPORTERS[name](ctx, out)
    topo = out / arch / "slurm" / "tree" / "topology.conf"
    lines = [ln for ln in topo.read_text().splitlines() if ln.startswith("SwitchName=")]
    assert len(lines) == len(tree)
    log, _ = run_slurmctld(tmp_path / "ctld", munge, topo, gpu_nodes(out / arch / "netbox"))
    assert topology_trouble(log) == []
    assert log.count("_log_switches: Switch level:") == len(lines)


def test_262144_gpu_tree_is_folded_to_pods(tmp_path):
    """Through the program: the 262,144-GPU tree (1,289 Slurm switches with leaves) is written with 265, one leaf per pod."""
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", "--gpus", "262144", "--hb-domain", "8", "--radix", "64", "--arch", "rail-optimized", "--formats", "slurm", "--out", str(out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    text = (out / "rail-optimized" / "slurm" / "tree" / "topology.conf").read_text()
    lines = [ln for ln in text.splitlines() if ln.startswith("SwitchName=")]
    leaves = [ln for ln in lines if " Nodes=" in ln]
    assert len(lines) == 265 and len(leaves) == 256
    assert leaves[0] == "SwitchName=spine-b000 Nodes=hb[00000-00127]"
    assert "# Leaves: the rail-0 tree has 1,289 Slurm switches" in text


UNSHARE = shutil.which("unshare")
IP = shutil.which("ip", path="/usr/sbin:/usr/bin:/sbin:/bin")
SCONTROL = shutil.which("scontrol")


def ctld_in_namespace(d: Path, sock: Path, nodes_conf: Path, ctld: tuple[str, str], timeout_s: float = 120) -> dict[str, str]:
    """slurmctld reading ``nodes.conf`` through ``Include``, as the management server ``ctld = (name, in-band address)``.

    It runs in a network and UTS namespace of its own (``unshare --net --uts``): the host
    name is the management server's and its in-band address sits on the namespace's
    loopback, so slurmctld takes itself for that SlurmctldHost and listens there, and its
    pings to the nodes' in-band addresses find no route out of the namespace. ``scontrol``
    asks it, in the same namespace, for every node. Returns ``{node: NodeAddr}``.
    """
    (d / "state").mkdir(parents=True)
    shutil.copy(nodes_conf, d / "nodes.conf")
    conf = d / "slurm.conf"
    conf.write_text("\n".join([
        *base_conf(d, sock, "info"),
        "NodeName=DEFAULT CPUs=1 State=UNKNOWN",
        f"Include {d / 'nodes.conf'}",
        "PartitionName=all Nodes=ALL Default=YES",
        "",
    ]))
    script = f"""
set -e
hostname {ctld[0]}
{IP} link set lo up
{IP} addr add {ctld[1]}/32 dev lo
export SLURM_CONF={conf}
{SLURMCTLD} -D -f {conf} > {d / 'ctld.out'} 2>&1 &
pid=$!
for i in $(seq 1 {int(timeout_s * 10)}); do grep -q "{READY}" {d / 'slurmctld.log'} 2>/dev/null && break; kill -0 $pid; sleep 0.1; done
{SCONTROL} -o show node > {d / 'nodes.txt'}
{SCONTROL} show config > {d / 'config.txt'}
kill $pid; wait $pid || true
"""
    res = subprocess.run([UNSHARE, "--net", "--uts", "sh", "-c", script], capture_output=True, text=True, timeout=timeout_s + 60)
    log = (d / "slurmctld.log").read_text(errors="replace") if (d / "slurmctld.log").exists() else ""
    assert res.returncode == 0 and READY in log, f"exit {res.returncode}: {res.stderr[-2000:]}\n{log[-3000:]}"
    config = (d / "config.txt").read_text()
    assert re.search(rf"SlurmctldHost\[0\]\s*=\s*{re.escape(ctld[0])}\({re.escape(ctld[1])}\)", config), config
    out = {}
    for line in (d / "nodes.txt").read_text().splitlines():
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        out[f["NodeName"]] = f["NodeAddr"]
    return out


@pytest.mark.skipif(UNSHARE is None or IP is None or SCONTROL is None or os.geteuid() != 0, reason="needs root, unshare, ip and scontrol (a private network namespace)")
@pytest.mark.parametrize("preset,gpus", [("dgx-h100-superpod", None), ("dgx-h100-superpod", 4096), ("era-2-8-9-400", None)])
def test_nodes_conf_gives_slurm_the_inband_addresses(preset, gpus, munge, tmp_path):
    """slurmctld reads ``<arch>/slurm/nodes.conf`` and reports every node's NodeAddr as its in-band bond0 address of
    ``networks-addresses.csv``, with the first management server as SlurmctldHost at its in-band address."""
    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", preset, *(("--gpus", str(gpus)) if gpus else ()), "--out", str(out), "--formats", "cabling,slurm", "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    arch = "rail-optimized"
    with open(out / arch / "networks-addresses.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    want = {r["device"]: r["address"].split("/")[0] for r in rows if r["network"] == "inband" and r["device_role"] == "node" and r["interface"] == "bond0"}
    ctld = next((r["device"], r["address"].split("/")[0]) for r in rows if r["network"] == "inband" and r["device_role"] == "mgmt")
    got = ctld_in_namespace(tmp_path / "ctld", munge, out / arch / "slurm" / "nodes.conf", ctld)
    assert want and got == want and len(got) == len(set(got.values()))
