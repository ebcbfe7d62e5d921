"""`topogen build` end to end: files, their contents read back, determinism."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import networkx as nx
import pytest
from click.testing import CliRunner

from topogen.cli import main
from topogen.fabric import clos
from topogen.spec.cluster import load_spec

CORE = "cabling,topology"


def build(tmp_path, *args, out="o"):
    res = CliRunner().invoke(main, ["build", *args, "--out", str(tmp_path / out)], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return tmp_path / out, res


def test_issue_example_summary(tmp_path):
    out, res = build(tmp_path, "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--arch", "rail-optimized", "--formats", CORE)
    s = json.loads((out / "summary.json").read_text())
    ro = s["architectures"]["rail-optimized"]
    assert ro["switches_per_tier"] == [32, 16] and ro["switches"] == 48
    assert ro["links_per_tier"] == [1024, 1024]
    assert ro["unused_switch_ports"] == 0 and ro["closed_form_agrees"] is True
    assert s["spec"]["name"] == "n1024-k8-r64" and s["spec"]["arch"] == "rail-optimized"
    assert "rail-optimized  2 tiers, 48 switches (32 leaves + 16 spines)" in res.output


def test_rail_only_example_eight_rails(tmp_path):
    out, _ = build(tmp_path, "--gpus", "1024", "--hb-domain", "8", "--radix", "64", "--arch", "rail-only", "--formats", CORE)
    rows = list(csv.DictReader((out / "rail-only" / "cabling.csv").open()))
    rails = {r["z_device"].split("-")[0] for r in rows}
    assert rails == {f"rail{r}" for r in range(8)}
    # cables never join two rails
    assert all(r["a_device"].split("-")[0] == r["z_device"].split("-")[0] for r in rows if r["tier"] != "1")


def test_cabling_csv_matches_fabric(tmp_path):
    out, _ = build(tmp_path, "demo", "--formats", CORE)
    spec = load_spec("demo")
    for arch in ("rail-optimized", "rail-only"):
        lines = (out / arch / "cabling.csv").read_text().splitlines()
        assert lines[0].startswith("cable,tier,link,")  # the header on line 1; provenance in manifest.json
        assert json.loads((out / "manifest.json").read_text())["spec_sha256"] == spec.digest()
        rows = list(csv.DictReader(lines))
        f = clos.generate(spec, arch)
        assert len(rows) == len(f.links)
        assert list(rows[0]) == ["cable", "tier", "link", "plane", "a_device", "a_role", "a_port", "a_speed_gbps", "z_device", "z_role", "z_port", "z_speed_gbps",
                                 "a_rack", "a_u", "z_rack", "z_u", "length_m", "media", "cable_sku", "a_transceiver_sku", "z_transceiver_sku", "label"]
        ends = [(r["a_device"], r["a_port"]) for r in rows] + [(r["z_device"], r["z_port"]) for r in rows]
        assert len(set(ends)) == len(ends)  # no port used twice
        assert sum(r["link"] == "gpu-leaf" for r in rows) == 64


def test_topology_json_loads_in_networkx(tmp_path):
    out, _ = build(tmp_path, "demo", "--formats", CORE)
    spec = load_spec("demo")
    for arch in ("rail-optimized", "rail-only"):
        data = json.loads((out / arch / "topology.json").read_text())
        g = nx.node_link_graph(data, edges="edges")
        f = clos.generate(spec, arch)
        assert g.is_multigraph() and not g.is_directed()
        assert g.number_of_nodes() == f.num_devices
        assert g.number_of_edges() == len(f.links)
        assert g.graph["arch"] == arch
        gpu = g.nodes["hb03-gpu5"]
        assert (gpu["role"], gpu["tier"], gpu["rail"], gpu["hb_domain"]) == ("gpu", 0, 5, 3)
        if arch == "rail-optimized":
            assert nx.is_connected(g)
        else:  # each 16-port switch carries two whole 8-GPU rails, nothing joins the switches
            assert nx.number_connected_components(g) == 4
        leaves = [n for n, d in g.nodes(data=True) if d["role"] == "leaf"]
        assert all(g.nodes[n]["radix"] == 16 for n in leaves)


def test_same_spec_gives_identical_bytes(tmp_path):
    a, _ = build(tmp_path, "demo", out="a")
    b, _ = build(tmp_path, "demo", out="b")
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b and files_a
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_manifest_lists_every_file(tmp_path):
    import hashlib

    out, _ = build(tmp_path, "demo")
    m = json.loads((out / "manifest.json").read_text())
    listed = {e["path"]: e for e in m["files"]}
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {"manifest.json"}
    assert set(listed) == on_disk
    for path, e in listed.items():
        data = (out / path).read_bytes()
        assert e["bytes"] == len(data) and e["sha256"] == hashlib.sha256(data).hexdigest()


def test_python_dash_m(tmp_path):
    res = subprocess.run([sys.executable, "-m", "topogen", "build", "demo", "--formats", CORE, "--out", str(tmp_path / "o")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "o" / "summary.json").exists()


@pytest.mark.parametrize("preset", ["demo", "gh200-32k"])
def test_presets_build(preset, tmp_path):
    build(tmp_path, preset, "--formats", "cabling")


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_to_networkx_equals_topology_json(tmp_path, arch):
    from topogen.fabric.graph import to_networkx

    out, _ = build(tmp_path, "demo", "--formats", "topology")
    loaded = nx.node_link_graph(json.loads((out / arch / "topology.json").read_text()), edges="edges")
    g = to_networkx(clos.generate(load_spec("demo"), arch))
    assert g.graph == loaded.graph
    assert dict(g.nodes(data=True)) == dict(loaded.nodes(data=True))
    assert sorted(g.edges(keys=True, data=True), key=lambda e: e[2]) == sorted(loaded.edges(keys=True, data=True), key=lambda e: e[2])
    assert g.number_of_edges() == len(clos.generate(load_spec("demo"), arch).links)
