"""topogen expand: growth 2 -> 4 -> 8 -> 16 SUs planned around the installed cables, over a grid of designs."""

from __future__ import annotations

import csv
import subprocess
import shutil
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from topogen.cli import main
from topogen.fabric import clos
from topogen.spec import load_spec

SPEC = """name: grow
gpus: 64
hb_domain: 2
gpus_per_node: 2
radix: 32
link_speed: 400
"""
SU = {"1:1": 16, "3:1": 24}  # nodes per SU: one leaf's downlinks at radix 32


def _flags(arch: str, ratio: str, sus: int, reserved: bool) -> list[str]:
    f = ["--arch", arch, "--oversubscription", ratio, "--scalable-unit", str(SU[ratio]), "--gpus", str(sus * SU[ratio] * 2)]
    return f + (["--max-scalable-units", "16"] if reserved else [])


def _run(args: list[str]) -> tuple[int, str]:
    r = CliRunner().invoke(main, args)
    return r.exit_code, r.output


def _rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _ends(r: dict) -> tuple:
    return (r["a_device"], r["a_port"], r["z_device"], r["z_port"])


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("grow") / "grow.yaml"
    p.write_text(SPEC)
    return p


GRID = [(a, r, res) for a in ("rail-optimized", "rail-only") for r in ("1:1", "3:1") for res in (False, True)]


@pytest.mark.parametrize("arch,ratio,reserved", GRID, ids=[f"{a}-{r}-{'reserved' if x else 'plain'}" for a, r, x in GRID])
def test_chain(tmp_path, spec_file, arch, ratio, reserved):
    """2 -> 4 -> 8 -> 16 SUs, each expand's output the next one's installed phase."""
    first = 4 if arch == "rail-only" and ratio == "1:1" else 2  # 2 SUs of 1:1 rails fit one switch per rail (1 tier)
    prev = tmp_path / f"su{first}"
    code, out = _run(["build", str(spec_file), *_flags(arch, ratio, first, reserved), "--formats", "cabling,netbox", "-q", "--out", str(prev)])
    assert code == 0, out
    racks = _racks(prev / arch / "netbox")  # the racks NetBox holds: the first build's, then each delta's
    sus = first * 2
    while sus <= 16:
        nxt = tmp_path / f"su{sus}"
        code, out = _run(["expand", str(prev), str(spec_file), *_flags(arch, ratio, sus, reserved), "--out", str(nxt)])
        assert code == 0, out
        f = json.loads((nxt / "expand.json").read_text())["expansions"][0]
        c = f["cables"]
        if reserved:  # the top tier was bought for 16 SUs: nothing installed moves
            assert c["moved"] == 0 and c["removed"] == 0 and f["changed_share"] == 0
        else:
            assert f["changed_share"] == f["fewest_possible_share"]  # no wiring of the new design keeps more
            assert f["changed_share"] <= 0.25
            assert f["changed_share"] < f["rebuild"]["changed_share"] or f["rebuild"]["changed"] == 0
        assert c["kept"] + c["moved"] + c["removed"] == f["from"]["cables"]
        assert f["stages_valid"] and f["final_valid"] and f["relocated_devices"] == 0
        assert f["worst_stage_share"] >= 0.75 and not [n for n in f["notes"] if "staging" in n], f
        _same_counts(nxt / arch / "cabling.csv", load_spec(str(spec_file), dict(zip(("arch", "oversubscription", "scalable_unit", "gpus"), (arch, ratio, SU[ratio], sus * SU[ratio] * 2))) | ({"max_scalable_units": 16} if reserved else {})), arch)
        _applied(prev / arch / "cabling.csv", nxt / arch / "delta.csv", nxt / arch / "cabling.csv")
        racks += _netbox_racks(racks, nxt / arch / "netbox")
        code, out = _run(["validate", str(nxt / arch / "cabling.csv")])
        assert code == 0, out
        prev, sus = nxt, sus * 2


def _same_counts(path: Path, spec, arch: str) -> None:
    """The final wiring has the new spec's own build's switches, cables and ports per switch."""
    own = clos.generate(spec, arch)
    rows = _rows(path)
    assert len(rows) == len(own.links)
    used: dict[str, int] = {}
    for r in rows:
        for end in "az":
            if r[f"{end}_role"] != "gpu":
                used[r[f"{end}_device"]] = used.get(r[f"{end}_device"], 0) + 1
    assert set(used) == {s.name for s in own.switches}
    assert sorted(used.values()) == sorted(int(x) for x in own.ports_used())


def _applied(installed: Path, delta: Path, plan: Path) -> None:
    """Phase-1 as built, relabelled by renamed.csv, + the delta = the phase-2 plan, cable by cable (ids and ends)."""
    label = {r["installed_name"]: r["new_name"] for r in _rows(plan.parent / "renamed.csv")}
    have = {r["cable"]: (label.get(r["a_device"], r["a_device"]), r["a_port"], label.get(r["z_device"], r["z_device"]), r["z_port"]) for r in _rows(installed)}
    for r in _rows(delta):
        if r["action"] == "remove":
            assert have.pop(r["cable"]) == _ends(r)
        elif r["action"] == "move":
            old = have.pop(r["cable"])
            assert (label.get(r["from_device"], r["from_device"]), r["from_port"]) in ((old[0], old[1]), (old[2], old[3]))
            have[r["cable"]] = _ends(r)
        else:
            assert r["cable"] not in have
            have[r["cable"]] = _ends(r)
    assert have == {r["cable"]: _ends(r) for r in _rows(plan)}


BAD = {
    "missing-dir": (["nowhere", "{spec}"], "error: BUILD_DIR: 'nowhere' is not a directory; give the directory topogen build wrote (out/<name>)"),
    "no-cabling": (["empty", "{spec}"], "error: BUILD_DIR: 'empty' holds no <arch>/cabling.csv; build the installed phase with --formats cabling (or all), or give its build directory"),
    "fewer-gpus": (["{b}", "{spec}", "--gpus", "32"], "error: NEW_SPEC.gpus: 32 is fewer than the 64 installed; give at least 64 GPUs (expand grows a cluster)"),
    "other-hb-domain": (["{b}", "{spec}", "--hb-domain", "4"], "error: NEW_SPEC.hb_domain: 4 differs from the installed phase's 2: every GPU would be renumbered; keep hb_domain: 2"),
    "keep-over-1": (["{b}", "{spec}", "--keep-bandwidth", "1.5"], "error: keep-bandwidth: 1.5 is not a share between 0 and 1; e.g. --keep-bandwidth 0.75 (every stage keeps 75 % of the running jobs' bandwidth)"),
    "arch-not-built": (["{b}", "{spec}", "--arch", "rail-only"], "error: arch: '{b}' holds no rail-only build (it has rail-optimized); use --arch rail-optimized"),
    "bad-row": (["{bad}", "{spec}"], "error: cabling.csv line 3: 5 field(s), but the header has 22; give every row one value per column"),
    "no-spec": (["{nospec}", "{spec}"], "error: BUILD_DIR: '{nospec}/summary.json' is missing or records no spec; give a directory written by topogen build (its summary.json records the spec it was built from)"),
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory, spec_file) -> Path:
    b = tmp_path_factory.mktemp("installed") / "b"
    assert _run(["build", str(spec_file), "--arch", "rail-optimized", "--formats", "cabling", "-q", "--out", str(b)])[0] == 0
    return b


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input(tmp_path, spec_file, installed, case, monkeypatch):
    """Bad input: exit 2, the exact message naming the field or file and line, nothing written."""
    monkeypatch.chdir(tmp_path)  # short relative paths: messages show them whole
    shutil.copytree(installed, tmp_path / "b")
    (tmp_path / "empty").mkdir()
    bad = tmp_path / "bad"
    shutil.copytree(installed, bad)
    lines = (bad / "rail-optimized" / "cabling.csv").read_text().splitlines(keepends=True)
    lines[2] = "1,1,gpu-leaf,0,hb00-gpu0\n"
    (bad / "rail-optimized" / "cabling.csv").write_text("".join(lines))
    nospec = tmp_path / "nospec"
    shutil.copytree(installed, nospec)
    (nospec / "summary.json").write_text("{}")
    shutil.copy(spec_file, tmp_path / "grow.yaml")
    subs = {"tmp": ".", "spec": "grow.yaml", "b": "b", "bad": "bad", "nospec": "nospec"}
    args, message = BAD[case]
    code, out = _run(["expand", *(a.format(**subs) for a in args), "--out", "o"])
    assert (code, out.strip()) == (2, message.format(**subs))
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("reserved", [True, False], ids=["max_scalable_units-4", "max_scalable_units-2"])
def test_dgx_h100_su(tmp_path, reserved):
    """The DGX H100 SuperPOD preset, 2 SUs installed, grown to 4: spines bought for 4 SUs move nothing."""
    b = tmp_path / "su2"
    extra = [] if reserved else ["--max-scalable-units", "2"]
    assert _run(["build", "dgx-h100-su", "--gpus", "504", *extra, "--formats", "cabling", "-q", "--out", str(b)])[0] == 0
    code, out = _run(["expand", str(b), "dgx-h100-su", "--out", str(tmp_path / "su4")])
    assert code == 0, out
    f = json.loads((tmp_path / "su4" / "expand.json").read_text())["expansions"][0]
    if reserved:
        assert f["cables"] == {"kept": 1016, "moved": 0, "added": 1024, "removed": 0} and f["stages"] == 1
        assert f["buy"] and not f["spare"]
    else:  # 8 spines for 2 SUs: each leaf keeps 2 of its 4 links to each, and moves 2 per spine to the 8 new ones
        assert f["cables"] == {"kept": 760, "moved": 256, "added": 1024, "removed": 0}
        assert f["changed_share"] == f["fewest_possible_share"] < f["rebuild"]["changed_share"]
    assert f["final_valid"] and f["stages_valid"] and f["worst_stage_share"] >= 0.75
    switches = _rows(tmp_path / "su4" / "rail-optimized" / "switches.csv")
    assert sum(r["status"] == "new" for r in switches) == (16 if reserved else 24)


def test_keep_bandwidth_trades_stages(tmp_path):
    """A lower floor, fewer stages; a higher one, more; each stage keeps what it says."""
    b = tmp_path / "su2"
    assert _run(["build", "dgx-h100-su", "--gpus", "504", "--max-scalable-units", "2", "--formats", "cabling", "-q", "--out", str(b)])[0] == 0
    got = {}
    for keep in ("0.5", "0.75", "0.9"):
        o = tmp_path / f"k{keep}"
        assert _run(["expand", str(b), "dgx-h100-su", "--keep-bandwidth", keep, "--out", str(o)])[0] == 0
        f = json.loads((o / "expand.json").read_text())["expansions"][0]
        assert f["worst_stage_share"] >= float(keep)
        got[keep] = f["moving_stages"]
    assert got["0.5"] < got["0.75"] < got["0.9"]


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_three_tiers(tmp_path, arch):
    """A 3-tier fabric doubling its pods: the cores are matched by the spines below them, not by their flat number."""
    flags = ["--name", "t3", "--hb-domain", "2", "--gpus-per-node", "2", "--radix", "16", "--scalable-unit", "8", "--arch", arch]
    gpus = 256 if arch == "rail-optimized" else 512  # 32 / 64 leaves: 3 tiers either way
    b = tmp_path / "p1"
    assert _run(["build", *flags, "--gpus", str(gpus), "--formats", "cabling", "-q", "--out", str(b)])[0] == 0
    assert json.loads((b / "summary.json").read_text())["architectures"][arch]["tiers"] == 3
    code, out = _run(["expand", str(b), *flags, "--gpus", str(2 * gpus), "--out", str(tmp_path / "p2")])
    assert code == 0, out
    f = json.loads((tmp_path / "p2" / "expand.json").read_text())["expansions"][0]
    assert f["changed_share"] == f["fewest_possible_share"] <= 0.25
    assert f["changed_share"] < f["rebuild"]["changed_share"]
    assert f["stages_valid"] and f["final_valid"] and f["worst_stage_share"] >= 0.75
    _applied(b / arch / "cabling.csv", tmp_path / "p2" / arch / "delta.csv", tmp_path / "p2" / arch / "cabling.csv")


def test_deterministic(tmp_path, installed, spec_file):
    """The same installed phase and spec give byte-identical files."""
    outs = []
    for name in ("x", "y"):
        assert _run(["expand", str(installed), str(spec_file), "--gpus", "128", "--out", str(tmp_path / name)])[0] == 0
        outs.append({p.relative_to(tmp_path / name).as_posix(): p.read_bytes() for p in sorted((tmp_path / name).rglob("*")) if p.is_file()})
    assert outs[0] == outs[1] and len(outs[0]) >= 15


def _racks(nb: Path, prefix: str = "") -> list[dict]:
    """Rows of ``racks.csv`` and ``networks-racks.csv`` under a ``netbox/`` directory (those that exist)."""
    return [r for name in ("racks.csv", "networks-racks.csv") if (nb / name).is_file() for r in _rows(nb / name)]


def _netbox_racks(installed: list[dict], delta: Path) -> list[dict]:
    """Every rack a device row of the delta's NetBox files names is an installed rack or one of the delta's, the delta's all new,
    in the build's racks.csv columns, and no two racks share a place on the floor; returns the delta's racks."""
    import re

    from topogen.exports.netbox.dcim import RACK_COLUMNS

    for name in ("racks.csv", "networks-racks.csv"):
        if (delta / name).is_file():
            assert (delta / name).read_text().splitlines()[0] == ",".join(RACK_COLUMNS)
    new = _racks(delta)
    have = {r["name"] for r in installed}
    assert not {r["name"] for r in new} & have, "an installed rack in the delta"
    places = []
    for r in installed + new:
        m = re.fullmatch(r"(\w+) rack, row (\d+), position (\d+)", r["description"])
        assert m and r["role"] == f"{m.group(1)}-rack", r
        places.append((int(m.group(2)), int(m.group(3))))
    assert len(places) == len(set(places)), "two racks on one place"
    sites = {r["site"] for r in installed}
    assert {r["site"] for r in new} <= sites
    known = have | {r["name"] for r in new}
    for name in ("devices.csv", "networks-devices.csv"):
        for d in _rows(delta / name) if (delta / name).is_file() else []:
            assert not d["rack"] or d["rack"] in known, (name, d["name"], d["rack"])
            assert not d["rack"] or d["site"] in sites
    return new


def _netbox_addresses(installed: Path, delta: Path, own: Path) -> int:
    """The delta's in-band/OOB addresses: one per address the new spec's own plan gives a new device (same device, interface and
    flags), each the own plan's or one no installed device holds, in a subnet of the installed phase or of the delta; every
    address unique across installed + delta (a leaf pair's virtual gateway on both leaves). Returns the delta's addresses."""
    import ipaddress

    from topogen.growth.rewire import identity

    def key(r):  # a leaf's SVI holds its own address and the pair's virtual gateway (role anycast)
        return identity(r["device"].split(".", 1)[1]), r["interface"], r["role"]

    inst, rows, mine = _rows(installed / "networks-ip-addresses.csv"), _rows(delta / "networks-ip-addresses.csv"), _rows(own / "networks-ip-addresses.csv")
    had = {identity(r["name"].split(".", 1)[1]) for r in _rows(installed / "networks-devices.csv")} | {identity(r["name"].split(".", 1)[1]) for r in _rows(installed / "devices.csv")}
    plan = {key(r): r for r in mine}
    nets = {(r["vrf"], ipaddress.ip_network(r["prefix"])) for f in (installed, delta) for r in _rows(f / "networks-prefixes.csv") if r["status"] == "active"}
    assert len({n for _, n in nets}) == len(nets) and not any(a.overlaps(b) for (_, a) in nets for (_, b) in nets if a != b)
    held = {(r["vrf"], r["address"].split("/")[0]) for r in inst}
    seen: dict[tuple[str, str], str] = {}
    for r in rows:
        ip = ipaddress.ip_interface(r["address"])
        assert (r["vrf"], ip.network) in nets, r
        k = (r["vrf"], str(ip.ip))
        assert k not in held, r
        if k in seen:
            assert r["role"] == "anycast" == seen[k], r
        seen[k] = r["role"]
        if key(r)[0] in had:  # an installed switch: only the SVI of a second subnet of its full installed one
            assert "second subnet" in r["description"] and r["interface"].startswith("vlan"), r
            continue
        want = plan[key(r)]
        assert (r["vrf"], r["is_primary"], r["is_oob"]) == (want["vrf"], want["is_primary"], want["is_oob"]), r
        assert r["address"] == want["address"] or (r["vrf"], r["address"].split("/")[0]) not in held
    new = [key(r) for r in rows if key(r)[0] not in had]
    assert len(new) == len(set(new)) and set(new) == {k for k in plan if k[0] not in had}
    return len(rows)


def _applied_networks(installed: Path, delta: Path, plan: Path) -> None:
    """The installed networks-cabling.csv + networks-delta.csv = the new networks-cabling.csv, cable by cable (ends by identity)."""
    from topogen.growth.rewire import identity

    def ends(r: dict) -> tuple:
        return (identity(r["a_device"]), r["a_port"], identity(r["z_device"]), r["z_port"])

    have = {r["cable"]: ends(r) for r in _rows(installed)}
    free = {e for v in have.values() for e in (v[:2], v[2:])}
    for r in sorted(_rows(delta), key=lambda r: (int(r["stage"]), r["action"] != "remove")):
        if r["action"] == "remove":
            assert have.pop(r["cable"]) == ends(r)
        elif r["action"] == "move":
            old = have.pop(r["cable"])
            assert (identity(r["from_device"]), r["from_port"]) in (old[:2], old[2:])
            assert len({old[:2], old[2:]} & {ends(r)[:2], ends(r)[2:]}) == 1  # one end stays
            have[r["cable"]] = ends(r)
        else:
            assert r["cable"] not in have
            if r["stage"] == "0":  # stage 0 touches nothing installed
                assert not ({ends(r)[:2], ends(r)[2:]} & free)
            have[r["cable"]] = ends(r)
    assert have == {r["cable"]: ends(r) for r in _rows(plan)}


@pytest.mark.parametrize("arch,gpus", [("rail-optimized", (504, 1016)), ("rail-only", (1016, 2040))])
def test_networks_grow(tmp_path, arch, gpus):
    """Storage, in-band and OOB of the DGX H100 SuperPOD doubled (2 to 4 SUs; rail-only 4 to 8, two tiers per rail both): most cables stay, the rest move, the result validates."""
    b = tmp_path / "p1"
    flags = ["--arch", arch] + (["--rail-packing", "dedicated"] if arch == "rail-only" else [])  # shared rails change the design as they grow
    assert _run(["build", "dgx-h100-superpod", *flags, "--gpus", str(gpus[0]), "--formats", "cabling,netbox", "-q", "--out", str(b)])[0] == 0
    code, out = _run(["expand", str(b), "dgx-h100-superpod", *flags, "--gpus", str(gpus[1]), "--out", str(tmp_path / "p2")])
    assert code == 0, out
    assert "networks (storage, in-band, OOB): " in out
    f = json.loads((tmp_path / "p2" / "expand.json").read_text())["expansions"][0]["networks"]
    c = f["cables"]
    assert c["kept"] + c["moved"] + c["removed"] == f["installed"] == len(_rows(b / arch / "networks-cabling.csv"))
    assert c["kept"] + c["moved"] + c["added"] == f["final"]
    assert f["final_valid"] and f["stages_valid"] and not f["errors"]
    assert f["changed_share"] < f["rebuild"]["changed_share"] and f["changed_share"] <= 0.25
    assert f["switches"]["new"] > 0 and set(f["per_network"]) == {"storage", "inband", "oob"}
    own = tmp_path / "own"
    assert _run(["build", "dgx-h100-superpod", *flags, "--gpus", str(gpus[1]), "--formats", "cabling,netbox", "-q", "--out", str(own)])[0] == 0
    assert _netbox_racks(_racks(b / arch / "netbox"), tmp_path / "p2" / arch / "netbox")  # the grown floor's new racks, created before their devices
    assert _netbox_addresses(b / arch / "netbox", tmp_path / "p2" / arch / "netbox", own / arch / "netbox") > 0
    mine = _rows(tmp_path / "p2" / arch / "networks-cabling.csv")
    theirs = _rows(own / arch / "networks-cabling.csv")
    assert len(mine) == len(theirs)
    for col in ("network", "role"):  # the new spec's own build's cables, network by network and role by role
        assert sorted(r[col] for r in mine) == sorted(r[col] for r in theirs)
    _applied_networks(b / arch / "networks-cabling.csv", tmp_path / "p2" / arch / "networks-delta.csv", tmp_path / "p2" / arch / "networks-cabling.csv")
    code, out = _run(["validate", str(tmp_path / "p2" / arch / "networks-cabling.csv")])
    assert code == 0, out
    pulls = _rows(tmp_path / "p2" / arch / "delta-pull-sheets.csv")
    node_rack = {r["a_device"].split("-")[0]: (r["a_rack"], r["a_u"]) for r in pulls if r["a_port"].startswith("nic")}
    for r in _rows(tmp_path / "p2" / arch / "networks-delta.csv"):  # a node's networks cables and its GPUs' cables: one place
        if r["a_role"] == "node" and r["a_device"] in node_rack:
            assert (r["a_rack"], r["a_u"]) == node_rack[r["a_device"]], r
    compute_racks = {r[f"{e}_rack"] for r in _rows(b / arch / "cabling.csv") for e in "az"}
    network_racks = {r[f"{e}_rack"] for r in _rows(b / arch / "networks-cabling.csv") for e in "az" if r[f"{e}_rack"]} - compute_racks
    new_devices = {r["z_device"] for r in pulls if r["action"] == "add"} | {r["a_device"] for r in pulls if r["action"] == "add"}
    assert not {r[f"{e}_rack"] for r in pulls for e in "az" if r[f"{e}_device"] in new_devices} & network_racks  # new compute devices never in the installed storage / management racks
    sku = {r["sku"]: r for r in _rows(tmp_path / "p2" / arch / "bom-delta.csv")}
    assert int(sku["MQM9700-NS2F"]["buy"]) > 0 and int(sku["MSN2201-CB2F"]["buy"]) > 0  # storage and OOB switches bought
    nb = tmp_path / "p2" / arch / "netbox"
    inst_rows = _rows(b / arch / "networks-cabling.csv")
    inst_labels = {f"{r['network']}-{r['cable']}" for r in inst_rows}
    label = lambda r: r["label"].split("/", 1)[1]  # noqa: E731
    assert len(_rows(nb / "networks-cables.csv")) == c["added"] and not {label(r) for r in _rows(nb / "networks-cables.csv")} & inst_labels
    assert len(_rows(nb / "networks-cables-moved.csv")) == c["moved"] and {label(r) for r in _rows(nb / "networks-cables-moved.csv")} <= inst_labels
    from topogen.growth.rewire import identity

    installed_devices = {identity(r[f"{e}_device"]) for r in inst_rows for e in "az"}
    new_devices = {identity(r["name"].split(".", 1)[1]) for r in _rows(nb / "networks-devices.csv")}
    assert new_devices and not new_devices & installed_devices and len(new_devices) >= f["switches"]["new"]
    assert {identity(r["device"].split(".", 1)[1]) for r in _rows(nb / "networks-interfaces.csv")} & installed_devices == set()
    if arch == "rail-optimized":  # the same installed phase and spec: byte-identical files
        assert _run(["expand", str(b), "dgx-h100-superpod", *flags, "--gpus", str(gpus[1]), "--out", str(tmp_path / "again")])[0] == 0
        files = lambda d: {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}  # noqa: E731
        assert files(tmp_path / "p2") == files(tmp_path / "again")


def _switch_addresses(path: Path) -> dict[tuple[str, str], str]:
    """(switch, interface) -> address of a build's addressing.csv (its loopbacks as (switch, 'lo'))."""
    return {(r["device"], r["interface"]): r["address"] for r in _rows(path)}


@pytest.mark.parametrize("reserved", [True, False], ids=["reserved", "plain"])
def test_addresses(tmp_path, spec_file, reserved):
    """addresses-delta.csv and switches.csv against the address plans topogen build writes (addressing.csv), read independently."""
    arch = "rail-optimized"
    p1, p2, own = tmp_path / "p1", tmp_path / "p2", tmp_path / "own"
    assert _run(["build", str(spec_file), *_flags(arch, "1:1", 2, reserved), "--formats", "cabling,addressing", "-q", "--out", str(p1)])[0] == 0
    code, out = _run(["expand", str(p1), str(spec_file), *_flags(arch, "1:1", 4, reserved), "--out", str(p2)])
    assert code == 0, out
    assert _run(["build", str(spec_file), *_flags(arch, "1:1", 4, reserved), "--formats", "cabling,addressing", "-q", "--out", str(own)])[0] == 0
    f = json.loads((p2 / "expand.json").read_text())["expansions"][0]
    a = f["addresses"]
    assert a["links_kept_same"] + a["links_kept_renumbered"] == f["cables"]["kept"]
    delta = {r["cable"]: r for r in _rows(p2 / arch / "addresses-delta.csv")}
    assert sum(r["change"] == "renumbered" for r in delta.values()) == a["links_kept_renumbered"]
    assert {r["cable"] for r in delta.values() if r["change"] in ("new", "moved")} == {r["cable"] for r in _rows(p2 / arch / "delta.csv") if r["action"] in ("add", "move")}
    was = _switch_addresses(p1 / arch / "addressing.csv")
    installed = {r["cable"]: r for r in _rows(p1 / arch / "cabling.csv")}
    for c, r in installed.items():  # the installed plan as the build wrote it
        if c in delta:
            assert delta[c]["z_address_was"] == was[(r["z_device"], r["z_port"])]
    # the installed plan is kept: no kept cable, loopback or ASN changes; the new ones take addresses the installed phase does not use
    assert a["links_kept_renumbered"] == a["loopbacks_changed"] == a["asns_changed"] == 0
    assert not [r for r in delta.values() if r["change"] == "renumbered"]
    installed_loopbacks = {v for (d, i), v in was.items() if i == "lo"}
    for s in _rows(p2 / arch / "switches.csv"):
        assert not s["loopback_was"] or s["loopback_was"] == s["loopback"]
        if s["status"] == "new":
            assert s["loopback"] and s["loopback"] + "/32" not in installed_loopbacks
    used = {v.split("/")[0] for v in was.values() if v}
    for r in delta.values():
        if r["change"] in ("new", "moved"):
            assert r["a_address"].split("/")[0] not in used or r["change"] == "moved"
    if reserved:  # nothing moves: the final wiring is the new spec's own
        assert {_ends(r) for r in _rows(p2 / arch / "cabling.csv")} == {_ends(r) for r in _rows(own / arch / "cabling.csv")}
    confs = {p.stem for p in (p2 / arch / "frr").rglob("*.conf")}
    assert confs == {s["switch"] for s in _rows(p2 / arch / "switches.csv") if s["config"] == "new file"}
    assert len(confs) == a["configs_changed"] and a["configs_changed"] + a["configs_same"] == f["to"]["switches"]
    assert {s["switch"] for s in _rows(p2 / arch / "switches.csv") if s["status"] == "new"} <= confs


@pytest.mark.parametrize("arch,gpus,sus", [("rail-optimized", (504, 1016), (2, 4)), ("rail-only", (1016, 2040), (4, 8))])
def test_floor_kept(tmp_path, arch, gpus, sus):
    """Every installed device keeps its rack (by name) and U; new devices take free U, never overlapping, within the racks."""
    from topogen import layout
    from topogen.growth import delta, expansion
    from topogen.growth.rewire import identity

    b = tmp_path / "p1"
    flags = ["--arch", arch] + (["--rail-packing", "dedicated"] if arch == "rail-only" else [])
    assert _run(["build", "dgx-h100-su", *flags, "--gpus", str(gpus[0]), "--max-scalable-units", str(sus[0]), "--formats", "cabling", "-q", "--out", str(b)])[0] == 0
    new = load_spec("dgx-h100-su", {"arch": arch, "gpus": gpus[1], "max_scalable_units": sus[1]} | ({"rail_packing": "dedicated"} if arch == "rail-only" else {}))
    e = expansion.expand(str(b), new, arch)
    fab = delta.final_fabric(e)
    lay = delta.floor_of(e, fab)
    assert e.relocated == 0 and e.floor["relocated"] == 0 and e.floor["fresh_layout_relocates"] > 0
    old = clos.generate(e.old, arch)
    old_lay = layout.plan(old)
    was = {identity(s.name): (old_lay.rack_name(old.gpus + i), int(old_lay.placement.u[old.gpus + i])) for i, s in enumerate(old.switches)}
    was.update({f"gpu{g}": (old_lay.rack_name(g), int(old_lay.placement.u[g])) for g in range(old.gpus)})
    seen: dict[tuple[str, int], str] = {}
    used: dict[str, set[int]] = {}
    for d in range(fab.gpus + len(fab.switches)):
        key = f"gpu{d}" if d < fab.gpus else identity(fab.switches[d - fab.gpus].name)
        rack, u, h = lay.rack_name(d), int(lay.placement.u[d]), int(lay.placement.height_u[d])
        if key in was:
            assert (rack, u) == was[key], key
        holder = f"node{d // new.gpus_per_node}" if d < fab.gpus else key  # the GPUs of one node share its tray
        if (rack, u) in seen:
            assert seen[(rack, u)] == holder, f"{key} at {rack} U{u} over {seen[(rack, u)]}"
            continue
        seen[(rack, u)] = holder
        span = set(range(u, u + h))
        assert not (span & used.setdefault(rack, set())), (key, rack, u)
        assert 1 <= u and u + h - 1 <= lay.spec.rack_u
        used[rack] |= span
    assert len(set(lay.racks.name)) == len(lay.racks.name)
    assert len({(int(r), int(c)) for r, c in zip(lay.racks.row, lay.racks.col)}) == len(lay.racks.name)  # no two racks on one place


def test_stages_validate_and_diff(tmp_path, spec_file, monkeypatch):
    """validate and diff --stage: the installed phase against itself, each stage's wiring valid as a build in progress, the floor before the delta deviating."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(spec_file, "grow.yaml")
    assert _run(["build", "grow.yaml", *_flags("rail-optimized", "1:1", 2, False), "--formats", "cabling", "-q", "--out", "p1"])[0] == 0
    assert _run(["expand", "p1", "grow.yaml", *_flags("rail-optimized", "1:1", 4, False), "--out", "p2"])[0] == 0
    f = json.loads(Path("p2/expand.json").read_text())["expansions"][0]
    last = f["stages"] - 1
    assert last >= 2
    code, out = _run(["diff", "p2", "p1/rail-optimized/cabling.csv", "--stage", "installed"])
    assert code == 0 and "no deviations: the floor matches the plan" in out, out
    code, out = _run(["validate", "p2", "--stage", "installed"])
    assert code == 0, out
    for n in range(last):
        code, out = _run(["validate", "p2", "--stage", str(n)])
        assert code == 0 and "build in progress" in out, out
        code, out = _run(["diff", "p2", f"p2/rail-optimized/stages/stage-{n}.csv", "--stage", str(n)])
        assert code == 0 and "no deviations" in out and "validation: valid (0 error(s)" in out, out
        code, out = _run(["validate", f"p2/rail-optimized/stages/stage-{n}.csv", "--spec", "grow.yaml", *_flags("rail-optimized", "1:1", 4, False)])
        assert code == 1  # without --stage the missing cables are errors
    for st in (str(last), "final"):
        code, out = _run(["validate", "p2", "--stage", st])
        assert code == 0 and "build in progress" not in out, out
    code, out = _run(["diff", "p2", "p1/rail-optimized/cabling.csv", "--stage", "1"])  # the floor before the delta: the moves and new cables of stages 0 and 1 missing
    assert code == 1 and " missing" in out, out
    code, out = _run(["validate", "p2", "--stage", "9"])
    assert (code, out.strip()) == (2, f"error: --stage: '9' is no stage of this expansion; give installed, a stage number 0 to {last}, or final")
    code, out = _run(["diff", "p1", "p1/rail-optimized/cabling.csv", "--stage", "0"])
    assert (code, out.strip()) == (2, "error: --stage: 'p1' is not a directory topogen expand wrote (it holds no expand.json); give the expansion's output directory (topogen expand BUILD_DIR SPEC --out DIR)")


NET_HEADER = "cable,network,role,a_device,a_role,a_port,a_speed_gbps,z_device,z_role,z_port,z_speed_gbps\n"
BAD_NETWORKS = {
    "short-row": (NET_HEADER + "1,storage,node,hb00\n", "error: networks-cabling.csv line 2: 4 field(s), but the header has 11; give every row one value per column"),
    "unknown-network": (NET_HEADER + "1,fabric,node,hb00,node,stor0,400,stor-leaf-0,storage-leaf,p1,400\n", "error: BUILD_DIR: 'b/rail-optimized/networks-cabling.csv' line 2: cable '1' of network 'fabric'; give a cable number and a network of storage, inband, oob"),
    "no-network-column": (NET_HEADER.replace("network,", "net,"), "error: BUILD_DIR: 'b/rail-optimized/networks-cabling.csv' has no network column(s); give the networks-cabling.csv topogen build wrote"),
}


@pytest.mark.parametrize("case", sorted(BAD_NETWORKS))
def test_bad_networks_file(tmp_path, spec_file, installed, case, monkeypatch):
    """A malformed installed networks-cabling.csv: exit 2 naming the file (and line), nothing written."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(installed, tmp_path / "b")
    text, message = BAD_NETWORKS[case]
    (tmp_path / "b" / "rail-optimized" / "networks-cabling.csv").write_text(text)
    code, out = _run(["expand", "b", str(spec_file), "--gpus", "128", "--out", "o"])
    assert (code, out.strip()) == (2, message)
    assert not (tmp_path / "o").exists()


def test_networks_stage_check_can_fail(tmp_path):
    """After stage 0 the cables still to come are no error, a cable on a port the design does not have is."""
    from topogen import pipeline
    from topogen.growth import networks as net_growth

    b = tmp_path / "p1"
    assert _run(["build", "dgx-h100-superpod", "--arch", "rail-optimized", "--gpus", "504", "--formats", "cabling", "-q", "--out", str(b)])[0] == 0
    ctx = pipeline.build(load_spec("dgx-h100-superpod", {"arch": "rail-optimized"}))
    g = net_growth.grow(net_growth.read_installed(b / "rail-optimized"), net_growth.design_wires(ctx, "rail-optimized"))
    net_growth.check(g, ctx, "rail-optimized")
    assert g.moved and not g.stage0_errors and not g.errors
    stray = g.stage0[0]._replace(z_port="p999", cable=99999)
    g.stage0 = g.stage0 + [stray]
    net_growth.check(g, ctx, "rail-optimized")
    assert any("p999" in e for e in g.stage0_errors) and not g.errors
    g.added = g.added + [stray]
    net_growth.check(g, ctx, "rail-optimized")
    assert any("p999" in e for e in g.errors)


def test_networks_chain(tmp_path):
    """The networks grow through expand's own output: DGX H100 SuperPOD 1 -> 2 -> 4 SUs, each step valid, under 25 % changed and under a rebuild's."""
    base = ["dgx-h100-superpod", "--arch", "rail-optimized"]
    prev = tmp_path / "su1"
    assert _run(["build", *base, "--gpus", "256", "--formats", "cabling,netbox", "-q", "--out", str(prev)])[0] == 0
    racks = _racks(prev / "rail-optimized" / "netbox")  # what NetBox holds: the first build's, then each delta's
    held = {(r["vrf"], r["address"].split("/")[0]) for r in _rows(prev / "rail-optimized" / "netbox" / "networks-ip-addresses.csv")}
    for gpus, sus in ((504, 2), (1016, 4)):
        nxt = tmp_path / f"su{sus}"
        code, out = _run(["expand", str(prev), *base, "--gpus", str(gpus), "--out", str(nxt)])
        assert code == 0, out
        f = json.loads((nxt / "expand.json").read_text())["expansions"][0]
        n = f["networks"]
        assert n["final_valid"] and n["stages_valid"] and f["relocated_devices"] == 0
        assert n["changed_share"] <= 0.25 and n["changed_share"] < n["rebuild"]["changed_share"]
        _applied_networks(prev / "rail-optimized" / "networks-cabling.csv", nxt / "rail-optimized" / "networks-delta.csv", nxt / "rail-optimized" / "networks-cabling.csv")
        racks += _netbox_racks(racks, nxt / "rail-optimized" / "netbox")
        # a grown phase's in-band/OOB addresses are read back (networks-addressing-pinned.csv): no delta takes one held
        new = [(r["vrf"], r["address"].split("/")[0], r["role"]) for r in _rows(nxt / "rail-optimized" / "netbox" / "networks-ip-addresses.csv")]
        assert new and not {x[:2] for x in new} & held
        plain = [x[:2] for x in new if x[2] != "anycast"]
        assert len(plain) == len(set(plain))
        held |= {x[:2] for x in new}
        prev = nxt


PIN_GRID = [(a, r, res, m) for a in ("rail-optimized", "rail-only") for r in ("1:1", "3:1") for res in (False, True) for m in ("link", "rail", "unnumbered")]


@pytest.mark.parametrize("arch,ratio,reserved,mode", PIN_GRID, ids=[f"{a}-{r}-{'reserved' if x else 'plain'}-{m}" for a, r, x, m in PIN_GRID])
def test_pinned_addresses(tmp_path, arch, ratio, reserved, mode):
    """Installed links, loopbacks, ASNs and GPU NICs keep their addresses; new ones take free ones, none twice; the FRR files agree with the plan."""
    from topogen.config import addressing, frr
    from topogen.growth import addresses as addr, expansion
    from topogen.growth.rewire import identity

    extra = {"link": "", "rail": "addressing:\n  gpu_subnet: rail\n", "unnumbered": "addressing:\n  p2p: unnumbered\n"}[mode]
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC + extra)
    first = 4 if arch == "rail-only" and ratio == "1:1" else 2
    assert _run(["build", str(spec), *_flags(arch, ratio, first, reserved), "--formats", "cabling", "-q", "--out", str(tmp_path / "p1")])[0] == 0
    new = load_spec(str(spec), dict(zip(("arch", "oversubscription", "scalable_unit", "gpus"), (arch, ratio, SU[ratio], 2 * first * SU[ratio] * 2))) | ({"max_scalable_units": 16} if reserved else {}))
    e = expansion.expand(str(tmp_path / "p1"), new, arch)
    rw = e.rewire
    moved, added = {m.after.cable for m in rw.moved}, {w.cable for w in rw.added}
    d = addr.compare(e.installed, rw.final, moved, added, {w.cable for w in rw.removed}, e.old, e.new, arch, True)
    fab, ad = d.fabric, d.plan
    assert addressing.plan(fab) is ad and addr.collisions(fab, ad) == []
    fab0, cab0 = addr.fabric_of(sorted(e.installed, key=lambda w: w.cable), e.old, arch)
    ad0 = addressing.plan(fab0)
    # every installed switch keeps its loopback and ASN; ASN groups stay groups
    assert d.figures()["loopbacks_changed"] == 0 and d.figures()["asns_changed"] == 0
    old_sw = {identity(s.name): i for i, s in enumerate(fab0.switches)}
    for j, s in enumerate(fab.switches):
        if identity(s.name) in old_sw:
            i = old_sw[identity(s.name)]
            assert (ad.loopback[j], ad.asn[j]) == (ad0.loopback[i], ad0.asn[i])
    fresh = addressing._plan(fab, ad.spec).asn  # the new spec's own grouping: the same partition of the switches
    assert len({(int(x), int(y)) for x, y in zip(fresh, ad.asn)}) == len(set(fresh.tolist())) == len(set(ad.asn.tolist()))
    # kept links: rail-optimized keeps every address; rail-only may only re-prefix GPU NICs (their place in the rail block stays)
    if arch == "rail-optimized":
        assert d.kept_renumbered == 0
    else:
        assert d.kept_renumbered == d.gpu_nics_renumbered
        rb = 1 << (32 - int(ad.gpu_route_len[fab.links.a_dev < fab.gpus].max()))
        for r in (x for x in d.links if x[1] == "renumbered"):
            was, now = (int(addressing.ipaddress.IPv4Interface(v).ip) for v in (r[6], r[8]))
            assert was % (rb // 2) == now % rb
    # rail-only: every GPU NIC inside the route of its rail
    L = fab.cable_table()
    g = L.a_dev < fab.gpus
    if arch == "rail-only":
        size = (1 << (32 - ad.gpu_route_len[g].astype(np.int64)))
        assert ((ad.a_addr[g].astype(np.int64) - ad.gpu_route[g]) < size).all()
        assert len({(int(r), int(b)) for r, b in zip(L.a_dev[g] % fab.hb_domain, ad.gpu_route[g])}) == fab.hb_domain * (int(L.plane.max()) + 1)
    # FRR: each file's neighbours carry the plan's peer ASNs and addresses; changed ones parse in FRR
    texts = dict(frr.generate_texts(fab))
    for s in range(len(fab.switches)):
        e_ = ad.ends.of(s)
        peers = ad.ends.peer[e_] >= fab.gpus
        for pa, asn, pl in zip(ad.ends.peer_addr[e_][peers].tolist(), ad.ends.peer_asn[e_][peers].tolist(), ad.ends.plen[e_][peers].tolist()):
            if pl:
                assert f" neighbor {addressing.ip_text(np.array([pa]))[0]} remote-as {asn}\n" in texts[s]
        assert f" ip address {addressing.ip_text(ad.loopback[s:s + 1])[0]}/32\n" in texts[s] and f"router bgp {int(ad.asn[s])}" in texts[s]
    if shutil.which("vtysh") and d.configs:
        for name, text in list(d.configs.items())[:6]:
            path = tmp_path / f"{name}.conf"
            path.write_text(text)
            res = subprocess.run(["vtysh", "--dryrun", "-f", str(path)], capture_output=True, text=True)
            assert res.returncode == 0, res.stdout + res.stderr


BAD_FLOOR = {
    "columns": (lambda t: t.replace("height_u", "height", 1), "error: BUILD_DIR: 'p2/rail-optimized/floor.csv' has the columns rack,kind,row,position,device,u,height; give the floor.csv topogen expand wrote (rack,kind,row,position,device,u,height_u)"),
    "bad-u": (lambda t: re.sub(r",hb00-gpu0,\d+,", ",hb00-gpu0,two,", t, count=1), "error: BUILD_DIR: 'p2/rail-optimized/floor.csv' line {line}: '{rack},,,,hb00-gpu0,two,{h}'; give the floor.csv topogen expand wrote: racks first, then every device in one of them"),
    "device-missing": (lambda t: "".join(t.splitlines(keepends=True)[:-1]), "error: BUILD_DIR: 'p2/rail-optimized/floor.csv' places no {last} (1 device(s) of the installed phase missing); give the floor.csv of the same expansion as its cabling.csv"),
}


@pytest.mark.parametrize("case", sorted(BAD_FLOOR))
def test_bad_floor_file(tmp_path, spec_file, installed, case, monkeypatch):
    """A malformed floor.csv of an installed phase that an expansion wrote: exit 2 naming the file (and line), nothing written."""
    monkeypatch.chdir(tmp_path)
    assert _run(["expand", str(installed), str(spec_file), "--gpus", "128", "--out", "p2"])[0] == 0
    path = tmp_path / "p2" / "rail-optimized" / "floor.csv"
    text = path.read_text()
    lines = text.splitlines()
    gpu0 = next(i for i, x in enumerate(lines) if ",hb00-gpu0," in x)
    edit, message = BAD_FLOOR[case]
    path.write_text(edit(text))
    message = message.format(line=gpu0 + 1, rack=lines[gpu0].split(",")[0], h=lines[gpu0].rsplit(",", 1)[1], last=lines[-1].split(",")[4])
    code, out = _run(["expand", "p2", str(spec_file), "--gpus", "256", "--out", "o"])
    assert (code, out.strip()) == (2, message)
    assert not (tmp_path / "o").exists()


def _pinned(path: Path) -> tuple[dict[str, tuple], dict[str, tuple]]:
    """addressing-pinned.csv: cable -> (a, z, route), switch identity -> (loopback, asn)."""
    from topogen.growth.rewire import identity

    rows = _rows(path)
    links = {r["cable"]: (r["a_address"], r["z_address"], r["gpu_route"]) for r in rows if r["cable"]}
    switches = {identity(r["switch"]): (r["loopback"], r["asn"]) for r in rows if not r["cable"]}
    return links, switches


CHAIN_PIN = [(a, m) for a in ("rail-optimized", "rail-only") for m in ("link", "rail")]


@pytest.mark.parametrize("arch,mode", CHAIN_PIN, ids=[f"{a}-{m}" for a, m in CHAIN_PIN])
def test_chain_keeps_pinned_addresses(tmp_path, arch, mode):
    """2 -> 4 -> 8 SUs (rail-only 4 -> 8 -> 16): a grown phase's addresses are the plan its expansion pinned (addressing-pinned.csv), not its spec's
    rules: every cable the next expansion keeps keeps those addresses, every installed switch its loopback and ASN, none twice."""
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC + {"link": "", "rail": "addressing:\n  gpu_subnet: rail\n"}[mode])
    ratio = "1:1"
    first = 4 if arch == "rail-only" else 2  # fewer SUs take one tier less: growing from them changes the design
    prev = tmp_path / f"su{first}"
    assert _run(["build", str(spec), *_flags(arch, ratio, first, False), "--formats", "cabling", "-q", "--out", str(prev)])[0] == 0
    differs = 0
    for sus in (2 * first, 4 * first):
        nxt = tmp_path / f"su{sus}"
        code, out = _run(["expand", str(prev), str(spec), *_flags(arch, ratio, sus, False), "--out", str(nxt)])
        assert code == 0, out
        links, switches = _pinned(nxt / arch / "addressing-pinned.csv")
        numbered = [v for ls in links.values() for v in ls[:2] if v]
        held = numbered + [v[0] for v in switches.values()]
        if mode == "link":  # a GPU NIC's gateway is its leaf port's own address; with rail subnets the leaf's gateway is shared
            assert len(held) == len(set(held)), "an address twice"
        assert set(links) == {r["cable"] for r in _rows(nxt / arch / "cabling.csv")}
        if (prev / arch / "addressing-pinned.csv").is_file():
            was, was_sw = _pinned(prev / arch / "addressing-pinned.csv")
            changed = {r["cable"] for r in _rows(nxt / arch / "addresses-delta.csv")}
            rules = json.loads((nxt / "expand.json").read_text())["expansions"][0]["addresses"]
            for c, v in links.items():
                if c in was and c not in changed:
                    assert v[:2] == was[c][:2], c
            assert all(switches[k] == v for k, v in was_sw.items() if k in switches)
            if arch == "rail-optimized":
                assert rules["links_kept_renumbered"] == 0
            differs += _off_rules(prev, spec, arch, ratio, sus, was)
        prev = nxt
    assert differs > 0 or arch == "rail-only"  # rail-optimized: the grown phase's plan is off its spec's rules, so reading it back is what keeps them


def _off_rules(grown: Path, spec: Path, arch: str, ratio: str, sus: int, pinned: dict[str, tuple]) -> int:
    """Links of the grown phase whose pinned addresses differ from what its spec's rules give its wiring (so reading the
    pinned plan back matters)."""
    from topogen.config import addressing
    from topogen.growth import addresses as addr, expansion

    e = expansion.expand(str(grown), load_spec(str(spec), dict(zip(("arch", "oversubscription", "scalable_unit", "gpus"), (arch, ratio, SU[ratio], sus * SU[ratio] * 2)))), arch)
    fab0, cab0 = addr.fabric_of(sorted(e.installed, key=lambda w: w.cable), e.old, arch)
    ad = addressing.plan(fab0)
    num = ad.prefix_len > 0
    a = np.where(num, addressing.cidr_text(ad.a_addr, ad.prefix_len), "")
    return sum(1 for c, x in zip(cab0.tolist(), a.tolist()) if pinned[str(c)][0] != x)


def test_bad_pinned_file(tmp_path, spec_file, installed, monkeypatch):
    """A malformed addressing-pinned.csv of a grown phase: exit 2 naming the file and line, nothing written."""
    monkeypatch.chdir(tmp_path)
    assert _run(["expand", str(installed), str(spec_file), "--gpus", "128", "--out", "p2"])[0] == 0
    path = tmp_path / "p2" / "rail-optimized" / "addressing-pinned.csv"
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = "1,,10.128.0.1/31,,,,\n"  # one end numbered, the other not
    path.write_text("".join(lines))
    code, out = _run(["expand", "p2", str(spec_file), "--gpus", "256", "--out", "o"])
    assert (code, out.strip()) == (2, "error: BUILD_DIR: 'p2/rail-optimized/addressing-pinned.csv' line 2: '1,,10.128.0.1/31,,,,'; give the addressing-pinned.csv topogen expand wrote (one end numbered)")
    assert not (tmp_path / "o").exists()


def test_bad_networks_pinned_file(tmp_path, monkeypatch):
    """A malformed networks-addressing-pinned.csv of a grown phase: exit 2 naming the file and line, nothing written."""
    monkeypatch.chdir(tmp_path)
    base = ["dgx-h100-superpod", "--arch", "rail-optimized"]
    assert _run(["build", *base, "--gpus", "256", "--formats", "cabling", "-q", "--out", "p1"])[0] == 0
    assert _run(["expand", "p1", *base, "--gpus", "504", "--out", "p2"])[0] == 0
    path = tmp_path / "p2" / "rail-optimized" / "networks-addressing-pinned.csv"
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = "storage,10.16.0.0/26,inb-leaf-0a,\n"
    path.write_text("".join(lines))
    code, out = _run(["expand", "p2", *base, "--gpus", "1016", "--out", "o"])
    assert (code, out.strip()) == (2, "error: BUILD_DIR: 'p2/rail-optimized/networks-addressing-pinned.csv' line 2: 'storage,10.16.0.0/26,inb-leaf-0a,'; give the networks-addressing-pinned.csv topogen expand wrote (network: inband or oob)")
    assert not (tmp_path / "o").exists()
