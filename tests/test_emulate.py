"""``topogen emulate`` on real FRR in Linux network namespaces: two architectures x two shapes pass; broken files are caught.

Shapes (each at most 64 switches, every GPU emulated):
- ``demo`` (64 GPUs, K = 8, 16 ports): rail-optimized 2 tiers, 12 switches with parallel
  leaf-spine links; rail-only 4 shared switches, 2 rails each in their own VRF (no BGP peers);
- 64 GPUs, K = 4, 8 ports: rail-optimized 3 tiers, 40 switches; rail-only 2 tiers per rail, 24 switches.
Plus the 3-tier shape with BGP unnumbered (IPv6 link-local) and a subnet per rail per leaf, and
two planes (16 GPUs, 8 ports): separate networks, each NIC reaching the NICs of its plane.

Each run must: establish every session (2 per switch-to-switch cable), reach every GPU pair it
should (ip route get + ICMP), keep every cross-rail pair apart in rail-only, converge, and on
multi-tier shapes narrow the ECMP by one when a leaf uplink goes down and recover. A wrong ASN
or a missing neighbour in one file must fail the run (exit 1) naming the switch, and the
broken session must be seen down in FRR. Ctrl-C (SIGINT) must leave no namespace and no daemon.

Runs as root with Debian's frr; skipped (with the reason) where network namespaces or FRR are missing.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from topogen.config.emulation.resources import ns_tag

ROOT = Path(__file__).resolve().parent.parent


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "emulate needs root (network namespaces)"
    if not Path("/usr/lib/frr/bgpd").exists() or shutil.which("vtysh") is None:
        return "Debian's frr is not installed (apt-get install frr; .ci/run does)"
    probe = f"tgemulprobe{os.getpid()}"
    res = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if res.returncode != 0:
        return f"cannot make a network namespace here: {res.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


WHY = _why_not()
pytestmark = pytest.mark.skipif(WHY is not None, reason=WHY or "")

SHAPES = {
    "demo": {"name": "demo", "gpus": 64, "hb_domain": 8, "radix": 16},
    "3tier": {"name": "s2", "gpus": 64, "hb_domain": 4, "radix": 8},
    "unnumbered": {"name": "un", "gpus": 64, "hb_domain": 4, "radix": 8, "arch": "rail-optimized", "addressing": {"p2p": "unnumbered", "gpu_subnet": "rail"}},
    "planes": {"name": "pl", "gpus": 16, "hb_domain": 8, "radix": 8, "planes": 2, "arch": "rail-optimized"},
}


def topogen(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "topogen", *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("emulate")
    out = {}
    for key, spec in SHAPES.items():
        path = root / f"{key}.yaml"
        path.write_text(yaml.safe_dump(spec))
        res = topogen("build", str(path), "--formats", "cabling,addressing,frr", "--out", str(root / key), "-q")
        assert res.returncode == 0, res.stderr
        out[key] = root / key
    return out


def expected(build: Path, arch: str) -> dict:
    with open(build / arch / "cabling.csv", newline="") as fh:
        cables = list(csv.DictReader(fh))
    gpus = sorted({c["a_device"] for c in cables if c["a_role"] == "gpu"})
    n = len(gpus)
    rails = {}
    for g in gpus:
        rails.setdefault(g.split("-gpu")[1], []).append(g)
    reach = n * (n - 1) if arch == "rail-optimized" else sum(len(v) * (len(v) - 1) for v in rails.values())
    return {"sessions": 2 * sum(1 for c in cables if c["a_role"] != "gpu"), "reach": reach, "apart": n * (n - 1) - reach, "tiers": len({c["z_role"] for c in cables})}


def leftovers(pid: int) -> tuple[list[str], list[int]]:
    """Namespaces and processes a run of ``pid`` left behind."""
    ns = [n.split()[0] for n in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.splitlines() if n.startswith(ns_tag(pid))]
    procs = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                cmd = (p / "cmdline").read_bytes()
            except OSError:
                continue
            if f"topogen-emulate-{pid}-".encode() in cmd:
                procs.append(int(p.name))
    return ns, procs


def frr_run_dirs(pid: int) -> list[str]:
    """What FRR made under /var/run/frr for a run of ``pid`` (a directory per namespace, -N)."""
    return sorted(p.name for p in Path("/var/run/frr").glob(f"{ns_tag(pid)}*"))


def emulate(build: Path, arch: str, *extra: str) -> tuple[subprocess.CompletedProcess, dict]:
    res = topogen("emulate", str(build), "--arch", arch, "--json", *extra)
    report = json.loads(res.stdout) if res.stdout.strip().startswith("{") else {}
    return res, report


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
@pytest.mark.parametrize("shape", ["demo", "3tier"])
def test_fabric_routes_as_designed(builds, shape, arch):
    res, r = emulate(builds[shape], arch, "--timeout", "90")
    assert res.returncode == 0, res.stdout + res.stderr
    want = expected(builds[shape], arch)
    assert r["ok"] and r["failures"] == []
    assert r["gpus_sampled"] == r["gpus_total"] == 64
    assert r["sessions"] == r["sessions_up"] == want["sessions"]
    assert r["pairs_reach"] == want["reach"] and r["pairs_isolated"] == want["apart"]
    assert r["converge_s"] is not None and r["converge_s"] < 90
    if want["sessions"]:  # multi-tier: a leaf uplink went down and came back
        assert r["reconverge_down_s"] is not None and r["reconverge_up_s"] is not None and r["ecmp_narrowed"] > 0
        assert r["ecmp_checked"] > 0
    else:
        assert r["link_down"].startswith("none")
    print(f"{shape} {arch}: {r['switches']} switches, {r['routers']} routers, converged {r['converge_s']:.1f} s, link down {r['reconverge_down_s']}, up {r['reconverge_up_s']}")


def test_unnumbered_bgp_and_rail_subnets(builds):
    res, r = emulate(builds["unnumbered"], "rail-optimized", "--timeout", "90")
    assert res.returncode == 0, res.stdout + res.stderr
    want = expected(builds["unnumbered"], "rail-optimized")
    assert r["sessions_up"] == want["sessions"] and r["pairs_reach"] == want["reach"] and r["reconverge_down_s"] is not None


def test_planes_are_separate_networks(builds):
    """Two planes: each GPU NIC reaches every NIC of its plane, none of the other (no pair expected across planes)."""
    res, r = emulate(builds["planes"], "rail-optimized", "--timeout", "90")
    assert res.returncode == 0, res.stdout + res.stderr
    want = expected(builds["planes"], "rail-optimized")
    assert r["gpus_total"] == r["gpus_sampled"] == 32  # NICs: 16 GPUs x 2 planes
    assert r["sessions"] == r["sessions_up"] == want["sessions"]
    assert r["pairs_reach"] == 2 * 16 * 15 and r["reconverge_down_s"] is not None
    assert r["pairs_planes_apart"] == 2 * 16 * 16  # every NIC of one plane to every NIC of the other, both ways: no route, no echo


def mutate(build: Path, tmp_path: Path, rel: str, edit) -> Path:
    copy = tmp_path / "b"
    shutil.copytree(build, copy)
    path = copy / rel
    text = path.read_text()
    changed = edit(text)
    assert changed != text
    path.write_text(changed)
    return copy


def test_a_wrong_asn_is_caught(builds, tmp_path):
    b = mutate(builds["demo"], tmp_path, "rail-optimized/frr/leaf/leaf-g0-r0.conf", lambda t: t.replace("neighbor 10.64.0.0 remote-as 4200000008", "neighbor 10.64.0.0 remote-as 4200000009"))
    res, r = emulate(b, "rail-optimized", "--timeout", "10")
    assert res.returncode == 1 and not r["ok"]
    f = r["failures"]
    assert "configuration: leaf-g0-r0: neighbour 10.64.0.0 on p9 has remote-as 4200000009, but spine-0 is AS 4200000008" in f
    assert any(x.startswith("leaf-g0-r0 p9 -> spine-0:p1: BGP ") and "Established" not in x for x in f)  # FRR itself refuses the session
    assert any(x.startswith("spine-0 p1 -> leaf-g0-r0:p9: BGP ") for x in f)
    assert r["sessions_up"] == r["sessions"] - 2


def test_a_missing_neighbour_is_caught(builds, tmp_path):
    drop = lambda t: "\n".join(ln for ln in t.splitlines() if not ln.startswith(" neighbor 10.64.0.1 "))  # noqa: E731
    b = mutate(builds["3tier"], tmp_path, "rail-optimized/frr/spine/b0/spine-b0-0.conf", drop)
    res, r = emulate(b, "rail-optimized", "--timeout", "10")
    assert res.returncode == 1 and not r["ok"]
    f = r["failures"]
    assert any(x.startswith("configuration: spine-b0-0: no BGP neighbour 10.64.0.1 on p1 (to leaf-g0-r0:p5") for x in f), f
    assert any(x.startswith("spine-b0-0 p1 -> leaf-g0-r0:p5: BGP not configured") for x in f), f
    assert any(x.startswith("leaf-g0-r0 p5 -> spine-b0-0:p1: BGP ") for x in f), f


def test_ctrl_c_removes_every_namespace_and_daemon(builds):
    proc = subprocess.Popen([sys.executable, "-m", "topogen", "emulate", str(builds["3tier"]), "--arch", "rail-optimized"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        end = time.monotonic() + 120
        while time.monotonic() < end:  # wait until FRR runs in the namespaces
            ns, procs = leftovers(proc.pid)
            if ns and len(procs) >= 40:
                break
            time.sleep(0.2)
        assert ns and len(procs) >= 40, "the emulation never got its daemons running"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    ns, procs = leftovers(proc.pid)
    assert (ns, [Path(f"/proc/{p}/cmdline").read_bytes() for p in procs]) == ([], [])
    assert not Path(f"/run/topogen-emulate/{proc.pid}.json").exists()
    assert frr_run_dirs(proc.pid) == []


def test_refuses_a_fabric_beyond_the_machine(tmp_path):
    spec = tmp_path / "big.yaml"
    spec.write_text(yaml.safe_dump({"name": "big", "gpus": 4096, "hb_domain": 8, "radix": 16, "arch": "rail-optimized"}))
    assert topogen("build", str(spec), "--formats", "cabling,addressing,frr", "--out", str(tmp_path / "big"), "-q").returncode == 0
    res = topogen("emulate", str(tmp_path / "big"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "build: the rail-optimized fabric has 1,792 routers (switches and VRFs); emulate runs at most 400 on one machine" in res.stderr


def test_needs_the_configuration_files(builds, tmp_path):
    res = topogen("emulate", str(tmp_path))
    assert res.returncode == 2 and "build with --formats cabling,addressing,frr" in res.stderr
    res = topogen("emulate", str(builds["demo"]))
    assert res.returncode == 2 and "pick one with --arch" in res.stderr


def test_a_missing_build_directory_is_named(tmp_path):
    res = topogen("emulate", str(tmp_path / "nope"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert f"build_dir: {tmp_path / 'nope'} is not a directory" in res.stderr


def test_a_run_killed_outright_is_cleaned_by_the_next(builds):
    proc = subprocess.Popen([sys.executable, "-m", "topogen", "emulate", str(builds["demo"]), "--arch", "rail-only"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    end = time.monotonic() + 120
    ns, procs = [], []
    while time.monotonic() < end:
        ns, procs = leftovers(proc.pid)
        if ns and len(procs) >= 12:
            break
        time.sleep(0.2)
    proc.kill()  # SIGKILL: no clean-up of its own
    proc.wait()
    assert ns and procs and Path(f"/run/topogen-emulate/{proc.pid}.json").exists()
    made = frr_run_dirs(proc.pid)
    res, r = emulate(builds["demo"], "rail-only")
    assert res.returncode == 0 and r["ok"], res.stdout + res.stderr
    assert f"note: removed the leftovers of an interrupted emulation (pid {proc.pid})" in res.stderr
    assert leftovers(proc.pid) == ([], []) and not Path(f"/run/topogen-emulate/{proc.pid}.json").exists()
    assert made and frr_run_dirs(proc.pid) == []  # FRR's directory per namespace (-N) removed too
