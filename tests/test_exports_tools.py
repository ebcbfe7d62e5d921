"""Files for other tools: NetBox CSV, GraphML, Slurm topology files.

Every test reads the produced files back. Golden files for the demo preset live
in ``tests/golden/tools/demo/``; after an intended change of these formats,
regenerate them with::

    TOPOGEN_REGEN_GOLDEN=1 .venv/bin/pytest tests/test_exports_tools.py -k golden

and review the diff before committing.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import networkx as nx
import pytest

from topogen import pipeline
from topogen.exports import EXPORTERS
from topogen.exports.netbox import dcim as netbox
from topogen.exports.slurm import topology as slurm
from topogen.fabric import clos
from topogen.fabric.naming import GpuNames, NodeNames
from topogen.spec.cluster import build_spec, load_spec
from topogen.util.text import cell_safe

GOLDEN = Path(__file__).parent / "golden" / "tools" / "demo"
REGEN = os.environ.get("TOPOGEN_REGEN_GOLDEN") == "1"

# (gpus, hb_domain, radix, planes, rail_packing, provision, gpus_per_node): 1-, 2- and 3-tier, shared
# and dedicated, partial groups, two planes, a rack-scale HB domain as one node, NVL72-like racks of
# 18 trays of 4 GPUs (one with two planes), GH200-like domains of 256 one-GPU nodes
GRID = [
    (64, 8, 16, 1, "shared", "full", None),
    (96, 8, 16, 2, "shared", "full", None),
    (40, 8, 8, 1, "dedicated", "minimal", None),
    (288, 72, 16, 1, "shared", "full", None),
    (512, 8, 8, 1, "shared", "full", None),
    (288, 72, 16, 1, "shared", "full", 4),
    (216, 72, 16, 2, "dedicated", "minimal", 4),
    (512, 256, 16, 1, "shared", "full", 1),
]


def _spec(gpus, hb, radix, planes, packing, provision, per_node=None, name="grid"):
    data = {"name": name, "gpus": gpus, "hb_domain": hb, "radix": radix, "planes": planes, "rail_packing": packing, "provision": provision}
    if per_node is not None:
        data["gpus_per_node"] = per_node
    return build_spec(data)


def _nodes(spec) -> NodeNames:
    return NodeNames(spec.gpus, spec.hb_domain, spec.gpus_per_node)


@pytest.fixture(scope="module", params=GRID, ids=lambda p: "n{}-k{}-r{}-pl{}-{}-{}-g{}".format(*p))
def built(request, tmp_path_factory):
    """A build of one grid spec with the three exporters written to a temp dir."""
    ctx = pipeline.build(_spec(*request.param))
    out = tmp_path_factory.mktemp("tools")
    for name in ("netbox", "graphml", "slurm", "cabling", "topology"):
        EXPORTERS[name](ctx, out)
    return ctx, out


def _read_parts(d: Path, stem: str) -> tuple[list[str], list[dict]]:
    """``<stem>.csv`` or its parts ``<stem>-001.csv``... read as one file."""
    paths = [d / f"{stem}.csv"] if (d / f"{stem}.csv").exists() else sorted(d.glob(f"{stem}-[0-9][0-9][0-9].csv"))
    cols, rows = [], []
    for p in paths:
        cols, more = _read_csv(p)
        rows += more
    return cols, rows


def _read_csv(path: Path) -> tuple[list[str], list[dict]]:
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]


def _read_cabling(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        lines = [ln for ln in fh if not ln.startswith("#")]
    return list(csv.DictReader(lines))


# --- registry -------------------------------------------------------------------------


def test_exporters_registered_and_selectable():
    assert {"netbox", "graphml", "slurm"} <= set(EXPORTERS)
    assert pipeline.resolve_formats("slurm,netbox,graphml") == [f for f in EXPORTERS if f in ("netbox", "graphml", "slurm")]


@pytest.mark.parametrize(("gpus", "hb"), [(64, 8), (16, 8), (8192, 8), (4104, 72), (65536, 256)])
def test_node_names_prefix_gpu_names(gpus, hb):
    """Node ``hb<d>`` + interface ``gpu<r>-nic<p>`` spell the GPU name and its NIC port."""
    gn, nn = GpuNames(gpus, hb), NodeNames(gpus, hb)
    for gpu in (0, hb - 1, gpus - hb, gpus - 1):
        d, r = divmod(gpu, hb)
        assert f"{nn.name(d)}-{nn.interface(r, 1)}" == f"{gn.name(gpu)}-nic1"
    assert nn.names() == [nn.name(d) for d in range(gpus // hb)]
    assert len(set(nn.names())) == gpus // hb
    assert nn.names() == NodeNames(gpus, hb, hb).names()


@pytest.mark.parametrize(("gpus", "hb", "per_node"), [(9216, 72, 4), (4104, 72, 1), (144, 72, 36), (32768, 256, 1), (65536, 256, 8), (64, 8, 1)])
def test_node_names_several_per_domain(gpus, hb, per_node):
    """``hb<d>-n<i>``: node i of domain d holds ranks i*g .. i*g+g-1; node + interface name one GPU NIC."""
    gn, nn = GpuNames(gpus, hb), NodeNames(gpus, hb, per_node)
    per = hb // per_node
    names = nn.names()
    assert len(names) == len(set(names)) == nn.nodes == gpus // per_node
    assert names == [nn.name(i) for i in range(nn.nodes)]
    assert nn.domain_names(1) == names[per : 2 * per]
    for gpu in (0, per_node - 1, per_node, hb - 1, gpus - hb, gpus - 1):
        node = nn.name(gpu // per_node)
        d, r = divmod(gpu, hb)
        assert node == f"{gn.name(d * hb).split('-')[0]}-n{r // per_node:0{len(str(per - 1))}d}"
        assert f"{node.rsplit('-', 1)[0]}-{nn.interface(r, 0)}" == f"{gn.name(gpu)}-nic0"


def test_node_names_of_rack_scale_presets():
    assert NodeNames(9216, 72, 4).names()[:2] == ["hb000-n00", "hb000-n01"]
    assert NodeNames(9216, 72, 4).names()[-1] == "hb127-n17"
    assert NodeNames(32768, 256, 1).names()[-1] == "hb127-n255"
    assert NodeNames(9216, 72, 4).interface(71, 0) == "gpu71-nic0"


# --- gpus_per_node in the spec ---------------------------------------------------------


@pytest.mark.parametrize(("preset", "per_node"), [("demo", 8), ("dgx-h100-superpod", 8), ("gb200-nvl72", 4), ("gh200-32k", 1), ("gh200-64k", 1)])
def test_presets_set_gpus_per_node(preset, per_node):
    spec = load_spec(preset)
    assert spec.gpus_per_node == per_node
    assert spec.to_dict()["gpus_per_node"] == per_node


def test_gpus_per_node_defaults_to_the_hb_domain():
    """Writing ``gpus_per_node: K`` or leaving it out is the same resolved spec: same echo, same hash."""
    base = {"name": "x", "gpus": 288, "hb_domain": 72, "radix": 16}
    implied, explicit, split = build_spec(base), build_spec({**base, "gpus_per_node": 72}), build_spec({**base, "gpus_per_node": 4})
    assert implied.gpus_per_node == 72 and implied.nodes == 4
    assert implied == explicit and implied.to_dict() == explicit.to_dict() and implied.digest() == explicit.digest()
    assert implied.to_dict()["gpus_per_node"] == 72
    assert split.to_dict()["gpus_per_node"] == 4 and split.nodes == 72
    assert split.digest() != implied.digest()
    assert list(split.to_dict()) == list(implied.to_dict())


def test_gpus_per_node_flag(tmp_path):
    from click.testing import CliRunner

    from topogen.cli import main

    out = tmp_path / "o"
    res = CliRunner().invoke(main, ["build", "--gpus", "144", "--hb-domain", "72", "--radix", "16", "--gpus-per-node", "4", "--arch", "rail-only", "--formats", "slurm", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "summary.json").read_text())["spec"]["gpus_per_node"] == 4
    assert (out / "rail-only" / "slurm" / "block" / "topology.conf").read_text().splitlines()[-3:] == [
        "BlockName=block-hb00 Nodes=hb00-n[00-17]",
        "BlockName=block-hb01 Nodes=hb01-n[00-17]",
        "BlockSizes=18,36",
    ]
    bad = CliRunner().invoke(main, ["build", "--gpus", "144", "--hb-domain", "72", "--radix", "16", "--gpus-per-node", "0", "--out", str(tmp_path / "b")])
    assert bad.exit_code == 2
    assert bad.stderr == "error: gpus_per_node: gpus_per_node must be a positive whole number, got '0'; " + "GPUs per compute node (host), dividing hb_domain (8 for DGX H100, 4 for GB200 NVL72 trays, 1 for GH200 superchips); default hb_domain\n"


# --- NetBox -----------------------------------------------------------------------------

# NetBox bulk-import field names (dcim DeviceImportForm, InterfaceImportForm, CableImportForm)
def test_netbox_column_sets(built):
    ctx, out = built
    for arch in ctx.fabrics:
        d = out / arch / "netbox"
        assert _read_csv(d / "devices.csv")[0] == ["name", "role", "device_type", "manufacturer", "site", "rack", "position", "face", "status", "comments"]
        assert _read_parts(d, "interfaces")[0] == ["device", "name", "type", "enabled", "speed", "description"]
        assert _read_parts(d, "cables")[0] == [
            "side_a_site", "side_a_device", "side_a_type", "side_a_name", "side_b_site", "side_b_device", "side_b_type", "side_b_name",
            "type", "status", "length", "length_unit", "label", "comments",
        ]  # fmt: skip


def test_netbox_row_counts_equal_fabric_counts(built):
    ctx, out = built
    spec = ctx.spec
    for arch, fabric in ctx.fabrics.items():
        d = out / arch / "netbox"
        devices = _read_parts(d, "devices")[1]
        interfaces = _read_parts(d, "interfaces")[1]
        cables = _read_parts(d, "cables")[1]
        assert len(devices) == spec.gpus // spec.gpus_per_node + len(fabric.switches)
        assert len(interfaces) == spec.gpus * spec.planes + sum(s.radix for s in fabric.switches)
        assert len(cables) == len(fabric.links)
        nodes = [r for r in devices if r["role"] == "gpu-node"]
        pre = f"{spec.name}-{arch}."
        assert [r["name"] for r in nodes] == [pre + x for x in _nodes(spec).names()]
        assert {r["device_type"].rsplit("-", 1)[0] for r in nodes} == {f"gpu-node-{spec.gpus_per_node * spec.planes}x{spec.link_speed}g"}
        nics: dict[str, int] = {}
        for r in interfaces:
            if r["name"].startswith("gpu"):
                nics[r["device"]] = nics.get(r["device"], 0) + 1
        assert nics == {r["name"]: spec.gpus_per_node * spec.planes for r in nodes}


def test_netbox_cables_end_on_declared_interfaces(built):
    """Every cable end is an interface of interfaces.csv, each used once, enabled iff cabled."""
    ctx, out = built
    for arch in ctx.fabrics:
        d = out / arch / "netbox"
        device_names = {r["name"] for r in _read_parts(d, "devices")[1]}
        interfaces = {(r["device"], r["name"]): r for r in _read_parts(d, "interfaces")[1]}
        assert {dev for dev, _ in interfaces} == device_names
        used = []
        for r in _read_parts(d, "cables")[1]:
            assert r["side_a_type"] == r["side_b_type"] == "dcim.interface"
            assert r["status"] == "planned"
            used += [(r["side_a_device"], r["side_a_name"]), (r["side_b_device"], r["side_b_name"])]
        assert len(used) == len(set(used))
        assert set(used) <= set(interfaces)
        enabled = {key for key, r in interfaces.items() if r["enabled"] == "true"}
        assert enabled == set(used)


def test_netbox_cables_match_cabling_csv(built):
    """Cable ``label`` is the cabling.csv id; GPU ends are node + ``gpu<rank>-nic<plane>`` of that GPU.

    The node holding a GPU is number ``gpu // gpus_per_node``; dropping the
    ``-n<node>`` part of its name leaves the GPU's name.
    """
    ctx, out = built
    spec = ctx.spec
    gn, nn = GpuNames(spec.gpus, spec.hb_domain), _nodes(spec)
    for arch in ctx.fabrics:
        site = f"{spec.name}-{arch}"
        cabling = _read_cabling(out / arch / "cabling.csv")
        cables = _read_parts(out / arch / "netbox", "cables")[1]
        assert [r["label"] for r in cables] == [f"{site}/{r['cable']}" for r in cabling]
        assert {r["side_a_site"] for r in cables} == {r["side_b_site"] for r in cables} == {site}
        for nb in cables:
            for side in ("side_a_device", "side_b_device"):
                assert nb[side].startswith(site + ".")
                nb[side] = nb[side].removeprefix(site + ".")
        for nb, cab in zip(cables, cabling):
            if cab["a_role"] == "gpu":
                gpu = gn.parse(cab["a_device"])
                plane = int(cab["a_port"].removeprefix("nic"))
                assert (nb["side_a_device"], nb["side_a_name"]) == (nn.name(gpu // spec.gpus_per_node), nn.interface(gpu % spec.hb_domain, plane))
                domain = re.sub(r"-n\d+$", "", nb["side_a_device"])
                assert f"{domain}-{nb['side_a_name']}" == f"{cab['a_device']}-{cab['a_port']}"
            else:
                assert (nb["side_a_device"], nb["side_a_name"]) == (cab["a_device"], cab["a_port"])
            assert (nb["side_b_device"], nb["side_b_name"]) == (cab["z_device"], cab["z_port"])


def test_netbox_provenance_once_not_per_row(built):
    """The spec hash is in sites.csv (once per site) and manifest.json, in no device/interface/cable row."""
    ctx, out = built
    sha = ctx.spec.digest()[:16]
    sites = _read_csv(out / "netbox" / "sites.csv")[1]
    assert [r["name"] for r in sites] == [f"{ctx.spec.name}-{a}" for a in ctx.fabrics]
    assert all(sha in r["description"] for r in sites)
    for arch in ctx.fabrics:
        for f in (out / arch / "netbox").glob("*.csv"):
            assert sha not in f.read_text(), f


def test_netbox_interface_types_follow_link_speed():
    spec = build_spec({"name": "x", "gpus": 64, "hb_domain": 8, "radix": 64, "link_speed": 800, "catalog": "xdr-800g", "arch": "rail-only"})
    rows = list(netbox.interface_rows(pipeline.build(spec).fabrics["rail-only"]))
    assert {r[2] for r in rows if r[0].startswith("x-rail-only.hb")} == {"other"}
    assert {r[2] for r in rows if not r[0].startswith("x-rail-only.hb")} == {"800gbase-x-osfp"}
    assert {r[4] for r in rows} == {800_000_000}


def test_netbox_switch_type_and_cable_media_come_from_the_bom():
    spec = build_spec({"name": "x", "gpus": 64, "hb_domain": 8, "radix": 64, "catalog": "ndr-400g", "arch": "rail-only"})
    ctx = pipeline.build(spec)
    fabric = ctx.fabrics["rail-only"]
    bom = ctx.boms["rail-only"]
    rows = list(netbox.device_rows(fabric, netbox.device_types(ctx, fabric)))
    assert {r[2] for r in rows if r[1] == "leaf"} == {bom.switch_sku}
    media = bom.media[1]
    length = media.cable.length_m if media.cable is not None else media.length_m
    cables = list(netbox.cable_rows(fabric, netbox.cable_media(ctx, fabric)))
    assert {(r[8], r[10], r[11]) for r in cables} == {(netbox.netbox_cable_type(media), f"{length:g}", "m")}


def test_netbox_without_bom_uses_generic_types_and_empty_media():
    ctx = pipeline.build(load_spec("demo"))
    fabric = ctx.fabrics["rail-only"]
    bare = type("Ctx", (), {})()
    assert netbox.device_types(bare, fabric) == netbox.DeviceTypes("generic", "gpu-node-8x400g-8u", "switch-16p-400g")
    assert {(r[8], r[10], r[11]) for r in netbox.cable_rows(fabric, netbox.cable_media(bare, fabric))} == {("", "", "")}


def _media(cable_kind, fiber):
    cable = None if cable_kind is None else type("C", (), {"kind": cable_kind, "length_m": 3})()
    tx = None if fiber is None else type("T", (), {"fiber": fiber})()
    return type("M", (), {"cable": cable, "transceiver": tx, "length_m": 3})()


@pytest.mark.parametrize(
    ("cable_kind", "fiber", "expected"),
    [
        ("dac", None, "dac-passive"),
        ("acc", None, "dac-active"),
        ("aec", None, "dac-active"),
        ("fiber", "multimode OM4", "mmf-om4"),
        ("fiber", "multimode", "mmf"),
        ("fiber", "single-mode", "smf"),
        (None, "", ""),
        (None, None, ""),
    ],
)
def test_netbox_cable_type_slugs(cable_kind, fiber, expected):
    assert netbox.netbox_cable_type(_media(cable_kind, fiber)) == expected


@pytest.mark.parametrize("text", ["=HYPERLINK(\"http://x\")", "+1+2", "-2+3", "@SUM(A1)"])
def test_netbox_rows_neutralise_formulas(text, tmp_path):
    """User-provided text (catalog model names, manufacturer) is written as text, not a formula (the rows hold it as given; the CSV rule escapes it)."""
    fabric = pipeline.build(load_spec("demo")).fabrics["rail-only"]
    types = netbox.DeviceTypes(manufacturer=text, node=text, switch=text, node_manufacturer=text)
    rows = list(netbox.device_rows(fabric, types))
    assert {r[2] for r in rows} == {text} == {r[3] for r in rows}
    p = tmp_path / "devices.csv"
    netbox.write_csv(p, netbox.DEVICE_COLUMNS, rows)
    back = _read_csv(p)[1]
    assert all(r["device_type"] == r["manufacturer"] == cell_safe(text) == "'" + text for r in back)


# --- GraphML ----------------------------------------------------------------------------


def test_graphml_round_trip(built):
    ctx, out = built
    for arch, fabric in ctx.fabrics.items():
        g = nx.read_graphml(out / arch / "topology.graphml", force_multigraph=True)
        assert g.number_of_nodes() == fabric.gpus + len(fabric.switches)
        assert g.number_of_edges() == len(fabric.links)
        assert g.graph["arch"] == arch and g.graph["tiers"] == fabric.tiers
        assert g.graph["spec_sha256"] == ctx.spec.digest()
        assert json.loads(g.graph["spec"]) == ctx.spec.to_dict()
        assert g.graph["generator"] == ctx.spec.provenance()


def test_graphml_agrees_with_topology_json(built):
    """Same nodes, attributes and cables as topology.json (rails: list there, text here)."""
    ctx, out = built
    for arch in ctx.fabrics:
        g = nx.read_graphml(out / arch / "topology.graphml", force_multigraph=True)
        with open(out / arch / "topology.json", encoding="utf-8") as fh:
            j = nx.node_link_graph(json.load(fh), edges="edges")
        assert list(g.nodes) == list(j.nodes)
        for n, attrs in j.nodes(data=True):
            want = dict(attrs)
            if "rails" in want:
                want["rails"] = ",".join(map(str, want["rails"])) if want["rails"] else "all"
            assert g.nodes[n] == want, n
        gj = sorted((k, min(u, v), max(u, v), tuple(sorted(d.items()))) for u, v, k, d in j.edges(keys=True, data=True))
        gg = sorted((k, min(u, v), max(u, v), tuple(sorted(d.items()))) for u, v, k, d in g.edges(keys=True, data=True))
        assert gg == gj


# --- Slurm ------------------------------------------------------------------------------

_BRACKET = re.compile(r"\[([^\]]+)\]")


def _expand(hostlist: str) -> list[str]:
    """Independent expansion of the hostlists we write (``a[00-02,05],b``, ``hb[0-1]-n[00-17]``).

    Several bracket ranges in one name expand to every combination, leftmost
    slowest, as Slurm's ``scontrol show hostnames`` does.
    """
    names, depth, item = [], 0, ""
    parts = []
    for ch in hostlist + ",":
        if ch == "," and depth == 0:
            parts.append(item)
            item = ""
            continue
        depth += ch == "["
        depth -= ch == "]"
        item += ch
    for part in parts:
        texts = _BRACKET.split(part)  # literal, range, literal, range, ..., literal
        done = [texts[0]]
        for rng, tail in zip(texts[1::2], texts[2::2]):
            values = []
            for r in rng.split(","):
                lo, _, hi = r.partition("-")
                values += [f"{i:0{len(lo)}d}" for i in range(int(lo), int(hi or lo) + 1)]
            done = [f"{d}{v}{tail}" for d in done for v in values]
        names += done
    return names


def _conf(path: Path) -> tuple[list[str], list[dict]]:
    comments, entries = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            comments.append(line)
        else:
            entries.append(dict(kv.split("=", 1) for kv in line.split(" ")))
    return comments, entries


TREE = ("slurm", "tree", "topology.conf")
BLOCK = ("slurm", "block", "topology.conf")


def _aggregates(comments: list[str]) -> dict[str, list[str]]:
    """``{slurm switch: member switches}`` from the header's ``#   name = N switches hostlist`` lines."""
    out = {}
    for c in comments:
        m = re.match(r"^#   (\S+) = [\d,]+ switches (\S+)$", c)
        if m:
            out[m.group(1)] = _expand(m.group(2))
    return out


def test_slurm_tree_structure(built):
    """Each node under exactly one leaf; children declared before parents; every upper switch of rail 0 in one aggregate."""
    ctx, out = built
    spec = ctx.spec
    nn = _nodes(spec)
    for arch, fabric in ctx.fabrics.items():
        comments, entries = _conf(out.joinpath(arch, *TREE))
        assert comments and spec.provenance() in comments[0]
        assert any(f"cp <out>/{arch}/slurm/tree/topology.conf /etc/slurm/topology.conf" in c for c in comments)
        by_name = {s.name: s for s in fabric.switches}
        agg = _aggregates(comments)
        members = {e["SwitchName"]: agg.get(e["SwitchName"], [e["SwitchName"]]) for e in entries}
        declared: set[str] = set()
        nodes: list[str] = []
        covered: list[str] = []
        for e in entries:
            assert set(e) in ({"SwitchName", "Nodes"}, {"SwitchName", "Switches"})
            sws = [by_name[m] for m in members[e["SwitchName"]]]
            tiers = {sw.tier for sw in sws}
            tier = min(tiers)
            assert len(tiers) == 1 and all(sw.plane == 0 for sw in sws) and e["SwitchName"] not in declared
            if "Nodes" in e:
                assert tiers == {1} and len(sws) == 1 and (0 in sws[0].rails or not sws[0].rails)
                nodes += _expand(e["Nodes"])
            else:
                children = _expand(e["Switches"])
                assert children and set(children) <= declared
                assert all({by_name[m].tier for m in members[c]} == {tier - 1} for c in children)
            covered += members[e["SwitchName"]]
            declared.add(e["SwitchName"])
        assert sorted(nodes) == nn.names() and len(nodes) == len(set(nodes))
        reach = {fabric.switch(sw).name for sw, _ in slurm.rail0_tree(fabric)}
        assert sorted(covered) == sorted(reach)  # every rail-0 switch in exactly one Slurm switch
        tops = [e for e in entries if by_name[members[e["SwitchName"]][0]].tier == fabric.tiers]
        assert tops, "the tree reaches the top tier"


def test_slurm_aggregates_join_the_same_children(built):
    """Switches merged into one Slurm switch have exactly the same (aggregated) children: placement is unchanged."""
    ctx, _ = built
    for fabric in ctx.fabrics.values():
        tree = slurm.aggregated_tree(fabric)
        group_of = {m: t.name for t in tree for m in t.members}
        kids = {}
        for sw, children in slurm.rail0_tree(fabric):
            s = fabric.switch(sw)
            if s.tier > 1:
                kids[s.name] = {group_of[fabric.switch(c).name] for c in children}
        for t in tree:
            if t.tier > 1:
                assert all(kids[m] == set(t.children) for m in t.members), t.name
        names = [t.name for t in tree]
        assert len(names) == len(set(names))


def test_slurm_tree_of_131072_gpus_has_few_switches():
    """A 131,072-GPU rail-optimized fabric: rail 0's tree reaches 10,752 of its 14,336 switches; the Slurm tree lists 645."""
    spec = build_spec({"name": "big", "gpus": 131072, "hb_domain": 8, "radix": 64, "arch": "rail-optimized"})
    fabric = clos.generate(spec, "rail-optimized")
    tree = slurm.aggregated_tree(fabric)
    assert sum(len(t.members) for t in tree) == 10752
    assert [sum(t.tier == j for t in tree) for j in (1, 2, 3, 4)] == [512, 128, 4, 1]  # leaves, pods, core groups, top


def test_slurm_tree_leaves_are_rank0_leaves(built):
    """Every node of an HB domain hangs under the leaf of the domain's rank-0 GPU (rail 0, plane 0)."""
    ctx, out = built
    spec = ctx.spec
    nn = _nodes(spec)
    for arch, fabric in ctx.fabrics.items():
        L = fabric.links
        want = {}
        for a, z, t, p in zip(L.a_dev.tolist(), L.z_dev.tolist(), L.tier.tolist(), L.plane.tolist()):
            if t == 1 and p == 0 and a % spec.hb_domain == 0:
                for node in nn.domain_names(a // spec.hb_domain):
                    want[node] = fabric.switch(z).name
        got = {}
        for e in _conf(out.joinpath(arch, *TREE))[1]:
            for node in _expand(e.get("Nodes", "")) if "Nodes" in e else []:
                got[node] = e["SwitchName"]
        assert got == want


def test_every_rail_groups_nodes_on_leaves_like_rail0(built):
    """The tree file's premise: on every rail and plane, the nodes sharing a leaf are the same."""
    ctx, _ = built
    k = ctx.spec.hb_domain
    for fabric in ctx.fabrics.values():
        L = fabric.links
        g = L.tier == 1
        partitions = {}
        for gpu, leaf, plane in zip(L.a_dev[g].tolist(), L.z_dev[g].tolist(), L.plane[g].tolist()):
            partitions.setdefault((gpu % k, plane), {}).setdefault(leaf, set()).add(gpu // k)
        shapes = {frozenset(frozenset(v) for v in p.values()) for p in partitions.values()}
        assert len(partitions) == k * ctx.spec.planes and len(shapes) == 1


def test_slurm_block_structure(built):
    """One block per HB domain holding exactly that domain's nodes; BlockSizes in nodes, base = nodes per domain."""
    ctx, out = built
    spec = ctx.spec
    nn = _nodes(spec)
    per = spec.hb_domain // spec.gpus_per_node
    gn = GpuNames(spec.gpus, spec.hb_domain)
    for arch in ctx.fabrics:
        comments, entries = _conf(out.joinpath(arch, *BLOCK))
        assert spec.provenance() in comments[0]
        blocks, sizes = entries[:-1], entries[-1]
        assert [b["BlockName"] for b in blocks] == ["block-" + gn.name(d * spec.hb_domain).replace(f"-gpu{0:0{gn.rw}d}", "") for d in range(spec.domains)]
        assert all(b["BlockName"][-1].isdigit() for b in blocks)  # Slurm compresses names ending in digits: block-hb[00-63]
        assert [_expand(b["Nodes"]) for b in blocks] == [nn.names()[d * per : (d + 1) * per] for d in range(spec.domains)]
        values = [int(x) for x in sizes["BlockSizes"].split(",")]
        assert values[0] == per and values[-1] <= spec.domains * per < 2 * values[-1]
        assert all(b == 2 * a for a, b in zip(values, values[1:]))


@pytest.mark.parametrize(("domains", "count", "largest"), [(1, 1, 1), (16384, 15, 16384), (32768, 16, 32768), (65536, 16, 32768), (1 << 20, 16, 32768)])
def test_slurm_block_sizes_at_most_16(domains, count, largest):
    """Slurm refuses more than 16 BlockSizes (fatal: Invalid BlockSizes value): 65,536 HB domains stop at 2^15."""
    sizes = slurm.block_sizes(domains, 1)
    assert len(sizes) == count <= 16 and sizes[-1] == largest
    assert slurm.block_sizes(domains, 18) == [18 * x for x in sizes]


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["hb00", "hb01", "hb02", "hb05"], "hb[00-02,05]"),
        (["hb07"], "hb07"),
        (["rail0-1-leaf", "rail2-3-leaf"], "rail0-1-leaf,rail2-3-leaf"),
        (["spine-b0-00", "spine-b0-01", "spine-b1-00"], "spine-b0-[00-01],spine-b1-00"),
        (["leaf-g0-r0", "leaf-g1-r0"], "leaf-g0-r0,leaf-g1-r0"),
        (["x9", "x10"], "x9,x10"),
        (["hb0-n0", "hb0-n1", "hb0-n2"], "hb0-n[0-2]"),
    ],
)
def test_slurm_hostlist(names, expected):
    assert slurm.hostlist(names) == expected
    assert _expand(expected) == names


# --- golden files -----------------------------------------------------------------------

GOLDEN_FILES = [
    f"{arch}/{f}"
    for arch in ("rail-optimized", "rail-only")
    for f in ("netbox/devices.csv", "netbox/interfaces.csv", "netbox/cables.csv", "topology.graphml", "slurm/tree/topology.conf", "slurm/block/topology.conf")
] + [f"{arch}/netbox/racks.csv" for arch in ("rail-optimized", "rail-only")] + ["netbox/sites.csv"] + [
    f"netbox/shared/{f}.csv"
    for f in (
        "1-manufacturer-generic", "2-device-role-gpu-node", "2-device-role-leaf", "2-device-role-spine", "2-rack-role-compute-rack",
        "2-rack-role-leaf-rack", "2-rack-role-spine-rack", "3-device-type-generic-gpu-node-8x400g-8u", "3-device-type-generic-paper-switch-400g",
    )
]  # fmt: skip


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory):
    ctx = pipeline.build(load_spec("demo"))
    out = tmp_path_factory.mktemp("demo")
    for name in ("netbox", "graphml", "slurm"):
        EXPORTERS[name](ctx, out)
    return out


@pytest.mark.parametrize("rel", GOLDEN_FILES)
def test_golden_demo(rel, demo_out):
    got = (demo_out / rel).read_bytes()
    golden = GOLDEN / rel
    if REGEN:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(got)
    assert golden.exists(), f"missing golden {golden}; see the module docstring to regenerate"
    assert got == golden.read_bytes(), f"{rel} differs from its golden file; see the module docstring to regenerate"
