"""``topogen diff`` on a floor that carries none of the plan's names or GUIDs.

Each floor is made from a real build's own ibnetdiscover files, changed the way
a fabric fresh from the factory differs from the plan: every switch under a
factory node description (``MF0;switch-a1b2:MQM9700/U1``), every adapter
described the OFED way (``hb00 mlx5_0``), every node and port GUID the
hardware's own (random, seeded). Then: the demo (1:1 leaves), 3:1 leaves, both
architectures, adapters known by GUID with only switches unnamed, leaf pairs
(dual-homed NICs), and the seven fault classes of :mod:`test_asbuilt` planted
under the factory names: every real fault found and located, a ``rename`` per
switch, and no move order for a cable whose only difference is a name. The
names map ``diff --write-names`` writes is read back by the real
``ibnetdiscover --node-name-map`` under ibsim.
"""

from __future__ import annotations

import json
import random
import zlib
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from ibsim_fabric import MISSING, SKIP_REASON, WHERE, discover, simulated
from test_asbuilt import _check, _write_topo, floor  # noqa: F401 (floor: the planted faults' fixture)

from topogen import pipeline
from topogen.cli import main
from topogen.spec.cluster import build_spec, load_spec

NODE_ID_RE = re.compile(r'"([SH]-[0-9a-f]{16})"')
DESC_RE = re.compile(r'^((?:Switch|Ca)\t\d+ "[SH]-[0-9a-f]{16}"\t\t# )"([^"]*)"', re.M)
PEER_DESC_RE = re.compile(r'^(\[.*?# (?:lid \d+ lmc \d+ )?)"([^"]*)"', re.M)
GUID_LINE_RE = re.compile(r"^(switchguid|caguid|sysimgguid)=.*\n", re.M)
PORT_GUID_RE = re.compile(r"\(([0-9a-f]{1,16})\)")


def factory(text: str, seed: int, adapters_known: bool = False, anonymous: bool = False, state: dict | None = None) -> tuple[str, dict[str, str]]:
    """A plan's ibnetdiscover text as the factory floor reports it; and the truth: factory description -> plan name.

    Switches: ``MF0;switch-<hex>:MQM9700/U1``, random node GUIDs. Adapters:
    ``<host> mlx5_<rank>``; random node and port GUIDs unless ``adapters_known``.
    The plan's ``switchguid=``/``caguid=`` lines go (ibsim then numbers the nodes itself).
    ``anonymous``: every adapter described ``MT4129 ConnectX7 Mellanox Technologies``
    (no host name set) and every switch ``Quantum Mellanox Technologies``.
    ``state``: shared by the files of one floor, so a node in several subnets (a
    dual-port HCA in two planes) keeps one GUID and one description, as on a real floor.
    """
    state = state if state is not None else {}
    rnd = state.setdefault("rnd", random.Random(seed))
    ids: dict[str, str] = state.setdefault("ids", {})
    truth: dict[str, str] = state.setdefault("truth", {})
    names: dict[str, str] = state.setdefault("names", {})

    def node_id(m: re.Match) -> str:
        old = m.group(1)
        if adapters_known and old.startswith("H-"):
            return m.group(0)
        if old not in ids:
            ids[old] = old[:2] + format(rnd.getrandbits(63) | 1 << 62, "016x")
        return f'"{ids[old]}"'

    def desc(name: str) -> str:
        if anonymous:
            return "MT4129 ConnectX7 Mellanox Technologies" if name.startswith("hb") else "Quantum Mellanox Technologies"
        if name.startswith("hb") and "-gpu" in name:
            host, gpu = name.split("-gpu")
            return f"{host} mlx5_{int(gpu)}"
        if name not in names:
            names[name] = f"MF0;switch-{rnd.getrandbits(16):04x}:MQM9700/U1"
            while names[name] in truth:
                names[name] = f"MF0;switch-{rnd.getrandbits(16):04x}:MQM9700/U1"
            truth[names[name]] = name
        return names[name]

    text = GUID_LINE_RE.sub("", text)
    text = DESC_RE.sub(lambda m: f'{m.group(1)}"{desc(m.group(2))}"', text)
    text = PEER_DESC_RE.sub(lambda m: f'{m.group(1)}"{desc(m.group(2))}"', text)
    text = NODE_ID_RE.sub(node_id, text)
    if not adapters_known:
        guids: dict[str, str] = state.setdefault("guids", {})
        text = PORT_GUID_RE.sub(lambda m: "(" + guids.setdefault(m.group(1), format(rnd.getrandbits(60), "x")) + ")", text)
    return text, dict(truth)


def floor_files(plan_topos: list[Path], dest: Path, seed: int, adapters_known: bool = False, anonymous: bool = False) -> tuple[list[Path], dict[str, str]]:
    """The plan's files as one factory floor reports them (one random state for all: a node in two files is one node)."""
    dest.mkdir(parents=True, exist_ok=True)
    out, state = [], {}
    for p in sorted(plan_topos):
        text, truth = factory(p.read_text(), seed, adapters_known, anonymous, state)
        q = dest / p.name
        q.write_text(text)
        out.append(q)
    return out, dict(state.get("truth", {}))


def diff(*args) -> tuple[int, dict]:
    res = CliRunner().invoke(main, ["diff", *map(str, args), "--json"], catch_exceptions=False)
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.output)


def diff_text(*args) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["diff", *map(str, args)], catch_exceptions=False)
    return res.exit_code, res.output


def moves(result: dict) -> list[str]:
    return [d["kind"] for d in result["deviations"]]


def assert_renamed(result: dict, truth: dict[str, str]) -> None:
    """One rename per switch, each to the plan name it truly has, every cable of it agreeing."""
    got = {r["found"]: r["plan"] for r in result["renames"]}
    assert got == truth
    assert all(r["agree"] == r["cables"] for r in result["renames"])
    assert result["undecided"] == []


def build(tmp_path_factory, data: dict, key: str) -> Path:
    spec = build_spec({"name": "factory", **data}) if "gpus" in data else load_spec(data["preset"], {})
    ctx = pipeline.build(spec)
    out = tmp_path_factory.mktemp(key) / "factory"
    pipeline.write_outputs(ctx, out, ["cabling", "ibnetdiscover"])
    return out


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return build(tmp_path_factory, {"preset": "demo"}, "demo")


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_demo_factory_floor_is_renames_only(demo, tmp_path, arch):
    """The demo's own files under factory names and GUIDs: no move order (was 128 missing + 128 unexpected)."""
    files, truth = floor_files(list((demo / arch / "ibnetdiscover").glob("*.topo")), tmp_path / "floor", 31)
    code, r = diff(demo, "--arch", arch, *files)
    assert code == 1
    assert moves(r) == []
    assert r["identical"] == r["planned_cables"]
    assert_renamed(r, truth)
    assert any("adapter port(s) named by host" in n and "mlx5_<n> serves GPU n" in n for n in r["notes"])


@pytest.mark.parametrize("arch", ["rail-optimized", "rail-only"])
def test_demo_adapters_known_switches_unnamed(demo, tmp_path, arch):
    """Adapters by their GUIDs, switches under factory names: a 1:1 leaf with half its cables on unnamed spines is still a rename (was 64 wrong-device)."""
    files, truth = floor_files(list((demo / arch / "ibnetdiscover").glob("*.topo")), tmp_path / "floor", 32, adapters_known=True)
    code, r = diff(demo, "--arch", arch, *files)
    assert code == 1
    assert moves(r) == []
    assert_renamed(r, truth)


SHAPES = {
    "ro-1:1": {"arch": "rail-optimized", "gpus": 128, "hb_domain": 8, "radix": 16},
    "ro-3:1": {"arch": "rail-optimized", "gpus": 192, "hb_domain": 8, "radix": 16, "oversubscription": "3:1"},
    "ro-3tier": {"arch": "rail-optimized", "gpus": 160, "hb_domain": 8, "radix": 16, "rail_packing": "dedicated"},
    "rol-1:1": {"arch": "rail-only", "gpus": 128, "hb_domain": 8, "radix": 16},
    "rol-3:1": {"arch": "rail-only", "gpus": 96, "hb_domain": 8, "radix": 16, "oversubscription": "3:1"},
    "ro-dual": {"arch": "rail-optimized", "gpus": 64, "hb_domain": 8, "radix": 32, "nic_ports": 2, "homing": "dual"},
}


@pytest.mark.parametrize("key", list(SHAPES))
@pytest.mark.parametrize("seed", [1, 2])
def test_factory_floor_shapes(tmp_path_factory, tmp_path, key, seed):
    """1:1 and 3:1 leaves, 2 and 3 tiers, both architectures, leaf pairs: a correctly cabled factory floor is renames only."""
    data = SHAPES[key]
    out = build(tmp_path_factory, data, key)
    files, truth = floor_files(list((out / data["arch"] / "ibnetdiscover").glob("*.topo")), tmp_path / "floor", seed)
    code, r = diff(out, *files)
    assert moves(r) == [], r["deviations"][:3]
    assert r["identical"] == r["planned_cables"]
    assert_renamed(r, truth)
    assert code == 1


@pytest.mark.parametrize("adapters_known", [False, True])
def test_faults_found_among_factory_names(floor, tmp_path, adapters_known):
    """Seven real faults on a factory floor: each found once, of its kind, at its ports in the plan's names; the rest renames."""
    out, fl = floor
    plan_files = _write_topo(fl.fabric_as_built(), tmp_path / "miswired")
    files, truth = floor_files(plan_files, tmp_path / "floor", 7, adapters_known)
    code, r = diff(out, *files)
    assert code == 1
    _check(r, fl)
    assert {x["found"]: x["plan"] for x in r["renames"]} == truth


def test_nothing_named_is_named_by_the_shape_of_the_wiring(demo, tmp_path):
    """No host names, factory descriptions shared by all, random GUIDs: one start by shape, the rest by the wiring; no move, no choice left."""
    files, _ = floor_files([demo / "rail-optimized" / "ibnetdiscover" / "fabric.topo"], tmp_path / "floor", 13, anonymous=True)
    code, r = diff(demo, "--arch", "rail-optimized", files[0])
    assert code == 1
    assert moves(r) == [] and r["identical"] == 128
    assert len(r["renames"]) == 12 + 64 and all(x["agree"] == x["cables"] for x in r["renames"])
    assert r["undecided"] == []
    assert any("named by the shape of the wiring alone" in n for n in r["notes"])


def test_subnets_alike_are_one_undecided_choice(demo, tmp_path):
    """Four rail-pair subnets with nothing named are alike: which is which is said once, with what decides it, not as moves."""
    files, _ = floor_files(list((demo / "rail-only" / "ibnetdiscover").glob("*.topo")), tmp_path / "floor", 17, anonymous=True)
    code, r = diff(demo, "--arch", "rail-only", *files)
    assert code == 1
    assert moves(r) == [] and r["identical"] == 64
    assert len(r["undecided"]) == 1
    (u,) = r["undecided"]
    assert u["plan"] == ["rail0-1-leaf", "rail2-3-leaf", "rail4-5-leaf", "rail6-7-leaf"] and len(u["found"]) == 4
    assert "what decides it" in u["text"]
    code, text = diff_text(demo, "--arch", "rail-only", *files)
    assert text.count("undecided") == 1 and "move the plug" not in text


def test_adapter_order_of_a_dgx_h100(demo, tmp_path):
    """Adapters numbered as a DGX H100 numbers its compute ports (mlx5_0, 3, 4, 5, 6, 9, 10, 11): read as such, no move."""
    dgx = [0, 3, 4, 5, 6, 9, 10, 11]
    files, truth = floor_files([demo / "rail-optimized" / "ibnetdiscover" / "fabric.topo"], tmp_path / "floor", 5)
    text = re.sub(r"(hb\d+) mlx5_(\d+)", lambda m: f"{m.group(1)} mlx5_{dgx[int(m.group(2))]}", files[0].read_text())
    files[0].write_text(text)
    code, r = diff(demo, "--arch", "rail-optimized", files[0])
    assert moves(r) == []
    assert_renamed(r, truth)
    assert any("the layout of the DGX B200 and the DGX H100" in n for n in r["notes"])  # the demo names no system; both number their compute ports so
    code, r2 = diff(demo, "--arch", "rail-optimized", files[0], "--adapters", "dgx-h100")
    assert moves(r2) == [] and any("--adapters" in n for n in r2["notes"])


def test_adapter_map_file_decides_against_the_numbers(demo, tmp_path):
    """An --adapters file that says mlx5_0 and mlx5_1 serve GPUs 1 and 0: their cables are then crossed on every host, and said so."""
    files, _ = floor_files([demo / "rail-optimized" / "ibnetdiscover" / "fabric.topo"], tmp_path / "floor", 6, adapters_known=False)
    amap = tmp_path / "adapters.csv"
    amap.write_text("adapter,gpu\nmlx5_0,gpu1\nmlx5_1,gpu0\n" + "".join(f"mlx5_{i},gpu{i}\n" for i in range(2, 8)))
    code, r = diff(demo, "--arch", "rail-optimized", files[0], "--adapters", amap)
    assert code == 1
    assert moves(r).count("swapped") == 8 and set(moves(r)) == {"swapped"}


@pytest.mark.parametrize(
    "text, message",
    [
        ("mlx5_0\n", "1 field(s)"),
        ("eth0,gpu0\n", "is not an adapter name"),
        ("mlx5_0,nic0\n", "is not a GPU of the node"),
        ("mlx5_0,gpu0\nmlx5_0,gpu1\n", "is given again (line 1)"),
    ],
)
def test_adapter_map_errors_name_the_line(demo, tmp_path, text, message):
    amap = tmp_path / "adapters.csv"
    amap.write_text(text)
    res = CliRunner().invoke(main, ["diff", str(demo), str(demo / "rail-optimized" / "cabling.csv"), "--adapters", str(amap)])
    assert res.exit_code == 2
    assert "adapters.csv line" in res.output and message in res.output and "Traceback" not in res.output


def test_names_map_files(demo, tmp_path):
    """--write-names: node-name-map lines '0x<guid> "<plan name>"' for every node, names.csv for --names; the next diff by either is clean."""
    files, truth = floor_files(list((demo / "rail-optimized" / "ibnetdiscover").glob("*.topo")), tmp_path / "floor", 9)
    res = CliRunner().invoke(main, ["diff", str(demo), "--arch", "rail-optimized", *map(str, files), "--write-names", str(tmp_path / "names")], catch_exceptions=False)
    assert res.exit_code == 1
    lines = [x for x in (tmp_path / "names" / "node-name-map").read_text().splitlines() if not x.startswith("#")]
    assert len(lines) == 12 + 64 and all(re.fullmatch(r'0x[0-9a-f]{16} "[a-z0-9-]+"', x) for x in lines)
    guid_of = {desc: m.group(1) for m in re.finditer(r'"S-([0-9a-f]{16})"\t\t# "([^"]+)"', files[0].read_text()) for desc in [m.group(2)]}
    assert {f'0x{guid_of[f]} "{p}"' for f, p in truth.items()} <= set(lines)
    code, r = diff(demo, "--arch", "rail-optimized", *files, "--names", tmp_path / "names" / "names.csv")
    assert code == 0 and r["renames"] == [] and moves(r) == []
    again = CliRunner().invoke(main, ["diff", str(demo), "--arch", "rail-optimized", *map(str, files), "--write-names", str(tmp_path / "names")])
    assert again.exit_code == 1  # its own earlier output is replaced
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    refused = CliRunner().invoke(main, ["diff", str(demo), "--arch", "rail-optimized", *map(str, files), "--write-names", str(tmp_path / "mine")])
    assert refused.exit_code == 2 and (tmp_path / "mine" / "notes.txt").read_text() == "mine"


@pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)
def test_names_map_read_by_ibnetdiscover(demo, tmp_path):
    """The factory floor under ibsim, discovered; diff writes the names map; ibnetdiscover --node-name-map then prints the plan's names: diff exits 0."""
    files, _ = floor_files([demo / "rail-optimized" / "ibnetdiscover" / "fabric.topo"], tmp_path / "floor", 11)
    with simulated(files[0], tmp_path) as env:
        first = discover(env, tmp_path / "first.topo")
        code, r = diff(demo, first)
        assert code == 1 and moves(r) == [] and len(r["renames"]) == 12
        res = CliRunner().invoke(main, ["diff", str(demo), str(first), "--write-names", str(tmp_path / "names")], catch_exceptions=False)
        assert res.exit_code == 1
        import subprocess

        second = tmp_path / "second.topo"
        with open(second, "w") as fh:
            subprocess.run([WHERE["ibsim-run"], WHERE["ibnetdiscover"], "--node-name-map", str(tmp_path / "names" / "node-name-map")], stdout=fh, env=env, check=True, timeout=300)
    assert '"leaf-g0-r0"' in second.read_text() and "MQM9700" not in second.read_text()
    code, r = diff(demo, second)
    assert code == 0, moves(r)


def test_lldp_factory_names_and_the_names_file(demo, tmp_path):
    """LLDP of a floor whose every switch keeps a factory host name: renames only; the names.csv written is the --names of a clean diff."""
    from test_asbuilt_floor import lldp_dir

    cabling = demo / "rail-optimized" / "cabling.csv"
    d = lldp_dir(cabling, tmp_path / "lldp", switch_name=lambda n: "cumulus-" + format(zlib.crc32(n.encode()), "08x"))
    res = CliRunner().invoke(main, ["diff", str(cabling), str(d), "--json", "--write-names", str(tmp_path / "names")], catch_exceptions=False)
    assert res.exit_code == 1
    r = json.loads(res.stdout)
    assert moves(r) == [] and len(r["renames"]) == 12 and r["undecided"] == []
    mapped = (tmp_path / "names" / "names.csv").read_text().splitlines()
    assert mapped[0] == "as_built,plan" and len(mapped) == 13
    code, r = diff(cabling, d, "--names", tmp_path / "names" / "names.csv")
    assert code == 0 and r["renames"] == [] and moves(r) == []


def test_adapter_order_of_a_dgx_b200(tmp_path_factory, tmp_path):
    """A DGX B200 plan: adapters numbered as templates/systems/dgx-b200.yaml says are read by the B200's own layout; --adapters dgx-b200 is that file's map."""
    from topogen.asbuilt import adapters
    from topogen.spec import systems

    b200 = systems.load("dgx-b200")
    layout = {int(p.hca.removeprefix("mlx5_")): p.gpu for p in b200.compute}
    assert adapters.layouts()["dgx-b200"] == layout and adapters.read_map("dgx-b200") == layout
    by_gpu = {g: n for n, g in layout.items()}
    out = build(tmp_path_factory, {"arch": "rail-optimized", "gpus": 64, "hb_domain": 8, "radix": 16, "workload": {"model": "gpt-3-175b", "gpu": "b200"}}, "b200")
    files, truth = floor_files([out / "rail-optimized" / "ibnetdiscover" / "fabric.topo"], tmp_path / "floor", 21)
    files[0].write_text(re.sub(r"(hb\d+) mlx5_(\d+)", lambda m: f"{m.group(1)} mlx5_{by_gpu[int(m.group(2))]}", files[0].read_text()))
    code, r = diff(out, files[0])
    assert moves(r) == []
    assert_renamed(r, truth)
    assert any("(the layout of the DGX B200: " in n for n in r["notes"]) and not any("DGX H100" in n for n in r["notes"])
    code, r2 = diff(out, files[0], "--adapters", "dgx-b200")
    assert moves(r2) == [] and any("--adapters" in n for n in r2["notes"])


def test_adapters_unknown_system_names_the_systems(demo):
    """--adapters naming no system and no file: exit 2, the systems that have a layout listed, nothing else read."""
    res = CliRunner().invoke(main, ["diff", str(demo), str(demo / "rail-optimized" / "cabling.csv"), "--adapters", "dgx-x100"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "'dgx-x100' is neither a known system nor a file" in res.output and "dgx-b200, dgx-h100" in res.output
