"""The spec's ``naming:`` section: every export and reader uses the site's names.

A grid of templates x cluster shapes (rail-optimized, rail-only, two planes, NVL72-style
nodes of 4 GPUs in 72-GPU domains): each is built, the names in cabling.csv, NetBox's
devices and Slurm's nodes are compared with the templates', and the build's own export is
read back by ``topogen diff`` and ``topogen validate`` without a fault.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from topogen.cli import main
from topogen.fabric.naming import GpuNames, NodeNames
from topogen.spec.cluster import build_spec
from topogen.util.errors import InputError

TEMPLATES = {
    "site": {"site": "sjc1", "host": "{site}-dgx{index+1:03}", "gpu": "{host}-gpu{local}", "interface": "gpu{rank}np{port}", "leaf": "{site}-p{plane}-leaf{group:02}-r{rail}{pos}", "spine": "{site}-p{plane}-spine{index:03}", "core": "{site}-p{plane}-core{index:03}"},
    "racky": {"host": "su{su:02}-n{domain:03}-{slot:02}", "gpu": "g{domain:04}x{rank:02}", "leaf": "lf-{plane}-{index:04}"},
    "gpu-only": {"gpu": "gpu-{index:06}", "interface": "eth{local}p{port}"},
}
SHAPES = {
    "rail-opt": {"gpus": 128, "hb_domain": 8, "radix": 16, "arch": "rail-optimized", "scalable_unit": 4},
    "rail-only": {"gpus": 128, "hb_domain": 8, "radix": 16, "arch": "rail-only"},
    "planes": {"gpus": 64, "hb_domain": 8, "radix": 16, "arch": "rail-optimized", "planes": 2},
    "nvl": {"gpus": 288, "hb_domain": 72, "gpus_per_node": 4, "radix": 64, "arch": "rail-optimized"},
}


def run(args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def expand(hostlist: str) -> list[str]:
    """Slurm hostlist -> names (brackets with ranges and lists, as slurm's scontrol show hostnames)."""
    out: list[str] = []
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\][^,\[]*)*", hostlist):
        names = [""]
        for lit, br in re.findall(r"([^\[]*)(?:\[([^\]]*)\])?", item):
            names = [n + lit for n in names]
            if br:
                vals = []
                for part in br.split(","):
                    lo, _, hi = part.partition("-")
                    vals += [f"{v:0{len(lo)}d}" for v in range(int(lo), int(hi or lo) + 1)]
                names = [n + v for n in names for v in vals]
        out += names
    return out


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("tpl", sorted(TEMPLATES))
def test_names_agree_across_exports(tmp_path, shape, tpl):
    data = {"name": f"n-{tpl}-{shape}", **SHAPES[shape], "naming": TEMPLATES[tpl]}
    path = tmp_path / "spec.yml"
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "out"
    res = run(["build", path, "--out", out, "--formats", "cabling,netbox,slurm,netplan"])
    assert res.exit_code == 0, res.output
    spec = build_spec(data)
    arch = SHAPES[shape]["arch"]
    root = out / arch
    gn, nn = GpuNames.of(spec), NodeNames.of(spec)
    rows = list(csv.DictReader((root / "cabling.csv").open()))
    gpus = {r["a_device"] for r in rows if r["a_role"] == "gpu"}
    assert gpus == set(gn.many(np.arange(spec.gpus)).tolist())
    assert all(gn.parse(g) is not None for g in gpus)
    switches = {r[e] for r in rows for e in ("a_device", "z_device") if r[e.replace("device", "role")] != "gpu"}
    for role in ("leaf", "spine", "core"):
        t = spec.naming.switch(role)
        mine = {r[e] for r in rows for e in ("a_device", "z_device") if r[e.replace("device", "role")] == role}
        if t is not None and mine:
            assert all(t.parse(s) is not None for s in mine), (role, sorted(mine)[:3])
    prefix = next(iter(csv.DictReader((root / "netbox" / "devices.csv").open())))["name"].split(".")[0] + "."
    devices = [r["name"].removeprefix(prefix) for r in csv.DictReader((root / "netbox" / "devices.csv").open())]
    nodes = nn.names()
    assert set(devices) == set(nodes) | switches
    ifaces = {(r["device"].removeprefix(prefix), r["name"]) for f in sorted((root / "netbox").glob("interfaces*.csv")) for r in csv.DictReader(f.open())}
    for g in (0, spec.gpus - 1):
        assert (nn.name(g // spec.gpus_per_node), nn.interface(g % spec.hb_domain, 0)) in ifaces
    block = (root / "slurm" / "block" / "topology.conf").read_text()
    slurm = [x for m in re.findall(r"^BlockName=\S+ Nodes=(\S+)", block, re.M) for x in expand(m)]
    assert sorted(slurm) == sorted(nodes)
    netplan = sorted(p.stem for p in (root / "netplan").rglob("*.yaml"))
    assert netplan == sorted(nodes)
    # the build's own export read back: diff finds nothing, validate finds it valid
    res = run(["diff", root, root / "cabling.csv"])
    assert res.exit_code == 0, res.output
    assert "no deviations" in res.output
    res = run(["validate", root / "cabling.csv"])
    assert res.exit_code == 0, res.output
    res = run(["simulate", path, "--arch", arch, "--fail", f"{gn.name(1)}:nic0"])
    assert res.exit_code == 0, res.output


def test_default_names_unchanged():
    spec = build_spec({"gpus": 288, "hb_domain": 72, "gpus_per_node": 4, "radix": 64})
    assert spec.naming is None and "naming" not in spec.to_dict()
    assert GpuNames.of(spec).name(73) == "hb01-gpu01"
    assert NodeNames.of(spec).name(19) == "hb01-n01"
    assert NodeNames.of(spec).interface(5, 0) == "gpu05-nic0"


def test_template_round_trip_and_offsets():
    spec = build_spec({"gpus": 1024, "hb_domain": 8, "radix": 64, "scalable_unit": 32, "naming": {"site": "a1", "host": "{site}-su{su+1}-dgx{index+1:03}", "gpu": "{host}-g{local}"}})
    gn, nn = GpuNames.of(spec), NodeNames.of(spec)
    assert nn.name(0) == "a1-su1-dgx001" and nn.name(127) == "a1-su4-dgx128"
    assert gn.name(1023) == "a1-su4-dgx128-g7"
    names = gn.many(np.arange(1024))
    assert [gn.parse(x) for x in names.tolist()] == list(range(1024))
    assert gn.parse("a1-su1-dgx128-g7") is None  # su and index disagree: not a name of this cluster
    assert nn.parse("a1-su4-dgx128") == 127
    assert spec.to_dict()["naming"] == {"site": "a1", "host": "{site}-su{su+1}-dgx{index+1:03}", "gpu": "{host}-g{local}"}


@pytest.mark.parametrize(
    "naming, needle",
    [
        ({"host": "{rack}"}, "unknown field {rack}"),
        ({"host": "dgx"}, "has no field"),
        ({"host": "dgx{index:3}"}, "the only format is zero padding"),
        ({"host": "dgx{index}{"}, "not well formed"),
        ({"site": "SJC", "host": "{site}{index}"}, "site must be lower-case"),
        ({"interface": "enp{rank}s0f{port}np{port}-rail"}, "at most 15"),
    ],
)
def test_bad_templates(naming, needle):
    with pytest.raises(InputError) as e:
        build_spec({"gpus": 64, "hb_domain": 8, "radix": 16, "naming": naming})
    assert needle in str(e.value)
    assert all(p.path.startswith("naming") for p in e.value.problems)


def test_gpus_131072_checked_fast():
    """The spec-time checks format every GPU's name at once (numpy); a 131,072-GPU spec reads in well under the build."""
    spec = build_spec({"gpus": 131072, "hb_domain": 8, "radix": 64, "naming": {"gpu": "gpu{domain:05}-{rank}", "host": "dgx{index:05}"}})
    assert GpuNames.of(spec).name(131071) == "gpu16383-7"


NETWORK_NAMING = {
    "site": "sjc1",
    "host": "{site}-su{su+1}-dgx{index+1:03}",
    "storage_leaf": "{site}-stl{group:02}-{index:02}",
    "storage_spine": "{site}-sts{index:02}",
    "inband_leaf": "{site}-ibl{pair:02}-{side}",
    "inband_spine": "{site}-ibs{index:02}",
    "oob_access": "{site}-oob{group:02}-{index:02}",
    "pdu": "{site}-pdu{rack:03}-{index}",
    "management_pdu": "{site}-mpdu{rack:02}-{index}",
    "rack": "{site}-r{row+1:02}-k{col+1:02}",
}


@pytest.mark.parametrize("gpus", [256, 1024])
def test_other_networks_racks_and_pdus(tmp_path, gpus):
    """Storage, in-band and OOB switches, PDUs and racks by the templates: in the cabling, NetBox, and read back by validate."""
    data = {"name": "net", "gpus": gpus, "hb_domain": 8, "radix": 64, "arch": "rail-optimized", "scalable_unit": 32, "catalog": "ndr-400g", "networks": {"storage": {}, "inband": {}, "oob": {}}, "naming": NETWORK_NAMING}
    path = tmp_path / "spec.yml"
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "out"
    res = run(["build", path, "--out", out, "--formats", "cabling,netbox"])
    assert res.exit_code == 0, res.output
    root = out / "rail-optimized"
    rows = list(csv.DictReader((root / "networks-cabling.csv").open()))
    spec = build_spec(data)
    nm = spec.naming
    devices = {r[e] for r in rows for e in ("a_device", "z_device")}
    role_key = {"storage-leaf": "storage_leaf", "storage-spine": "storage_spine", "inband-leaf": "inband_leaf", "inband-spine": "inband_spine", "oob-access": "oob_access"}
    for r in rows:
        for end in ("a", "z"):
            key = role_key.get(r[f"{end}_role"])
            if key is not None:
                assert nm.other(key).parse(r[f"{end}_device"]) is not None, r
            if r[f"{end}_role"] == "node":
                assert nm.host.parse(r[f"{end}_device"]) is not None
            if r[f"{end}_rack"]:
                assert nm.other("rack").parse(r[f"{end}_rack"]) is not None, r[f"{end}_rack"]
    assert any(nm.other("pdu").parse(d) for d in devices) and any(nm.other("management_pdu").parse(d) for d in devices)
    prefix = "net-rail-optimized."
    netbox = {r["name"].removeprefix(prefix) for r in csv.DictReader((root / "netbox" / "networks-devices.csv").open())}
    assert {d for d in devices if d.startswith("sjc1-") and not nm.host.parse(d)} <= netbox | {r["name"].removeprefix(prefix) for r in csv.DictReader((root / "netbox" / "devices.csv").open())}
    racks = {r["name"] for f in ("racks.csv", "networks-racks.csv") for r in csv.DictReader((root / "netbox" / f).open())}
    assert racks and all(nm.other("rack").parse(x) is not None for x in racks)
    res = run(["validate", root / "networks-cabling.csv"])
    assert res.exit_code == 0, res.output
    res = run(["validate", root / "cabling.csv"])
    assert res.exit_code == 0, res.output


def test_emulate_reads_the_site_names(tmp_path):
    """emulate's lab (no root needed to load it) takes each GPU's rail from the template, and samples whole HB domains."""
    from topogen.config.emulation.lab import load_lab

    data = {"name": "emu", "gpus": 128, "hb_domain": 8, "radix": 16, "arch": "rail-optimized", "naming": TEMPLATES["site"]}
    path = tmp_path / "spec.yml"
    path.write_text(yaml.safe_dump(data))
    res = run(["build", path, "--out", tmp_path / "out", "--formats", "cabling,addressing,frr"])
    assert res.exit_code == 0, res.output
    lab = load_lab(tmp_path / "out", "rail-optimized", 32)
    gn = GpuNames.of(build_spec(data))
    assert lab.hosts and all(h.rail == gn.parse(h.gpu) % 8 for h in lab.hosts)
    domains = {gn.parse(h.gpu) // 8 for h in lab.hosts}
    assert len(lab.hosts) == 32 and 0 in domains and 15 in domains  # whole domains, first to last


@pytest.mark.parametrize("extra", [{"homing": "dual", "nic_ports": 2}, {"design": "leaf-pair"}], ids=["dual-homed", "leaf-pair"])
def test_dual_homing_and_leaf_pair(tmp_path, extra):
    """{home} tells a dual-homed pair's leaves apart, {pos} a leaf pair's; the build's own export diffs clean."""
    data = {"name": "hd", "gpus": 64, "hb_domain": 8, "radix": 64, "arch": "rail-optimized", **extra, "naming": {"host": "dgx{index:02}", "gpu": "{host}-g{local}", "interface": "g{rank}p{plane}h{home}", "leaf": "lf{group}-{rail}-{pos}-{home}"}}
    path = tmp_path / "spec.yml"
    path.write_text(yaml.safe_dump(data))
    root = tmp_path / "out" / "rail-optimized"
    assert run(["build", path, "--out", tmp_path / "out", "--formats", "cabling,netbox"]).exit_code == 0
    spec = build_spec(data)
    leaves = {r["z_device"] for r in csv.DictReader((root / "cabling.csv").open()) if r["z_role"] == "leaf"}
    assert len(leaves) == (16 if "homing" in extra else 2) and all(spec.naming.switch("leaf").parse(x) for x in leaves)
    res = run(["diff", root, root / "cabling.csv"])
    assert res.exit_code == 0 and "no deviations" in res.output, res.output
    no_home = {**data, "naming": {**data["naming"], "leaf": "lf{group}"}}
    path.write_text(yaml.safe_dump(no_home))
    res = run(["build", path, "--out", tmp_path / "bad"])
    assert res.exit_code == 2 and "naming.leaf: template 'lf{group}' gives leaf" in res.output and not (tmp_path / "bad").exists()


def test_simulate_fail_names_the_site_names_in_its_hint(tmp_path):
    path = tmp_path / "spec.yml"
    path.write_text(yaml.safe_dump({"name": "f", **SHAPES["rail-opt"], "naming": TEMPLATES["site"]}))
    res = run(["simulate", path, "--arch", "rail-optimized", "--fail", "hb00-gpu0"])
    assert res.exit_code == 2
    assert "no device 'hb00-gpu0'" in res.output and "(sjc1-p0-leaf00-r00, sjc1-dgx001-gpu0)" in res.output
