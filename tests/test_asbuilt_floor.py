"""``topogen diff`` on a real floor: names that are not the plan's, partial readings, hostile files.

Every case runs the real ``topogen diff`` (click runner, or the program itself
where its environment or memory matters) against a plan that ``topogen``
built, with an as-built reading derived from the plan's own files the way a
floor differs from them: a switch still under its vendor name, HCAs
described the OFED way (``hb00 mlx5_7``), descriptions a factory left
(identical on every node: only GUIDs tell them apart), LLDP neighbours that
send only a chassis ID, one rail pair's subnet discovered alone, a port at
the wrong speed, a record repeated, control characters, files that are no
discovery output, and copies of the plan's cabling file.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from topogen import pipeline
from topogen.cli import main
from topogen.spec.cluster import build_spec

ROOT = Path(__file__).resolve().parent.parent
SPECS = {
    # rail-optimized, 2 tiers: leaves of 8 GPUs and 8 uplinks (radix 16)
    "ro": {"name": "floor", "arch": "rail-optimized", "gpus": 64, "hb_domain": 8, "radix": 16},
    # rail-only, rails packed in pairs: 4 subnets (rail0-1 .. rail6-7), one ibnetdiscover file each
    "rol": {"name": "floor", "arch": "rail-only", "gpus": 64, "hb_domain": 8, "radix": 16},
    # rail-only, one 2-tier subnet per rail (rail0 .. rail7)
    "rol8": {"name": "floor", "arch": "rail-only", "gpus": 256, "hb_domain": 8, "radix": 16},
    # rail-optimized, 3 tiers, free ports on leaves and cores
    "ro3": {"name": "floor", "arch": "rail-optimized", "gpus": 160, "hb_domain": 8, "radix": 16, "rail_packing": "dedicated"},
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Each plan, built once with its cabling and ibnetdiscover files (the build directory)."""
    out = {}
    for key, data in SPECS.items():
        ctx = pipeline.build(build_spec(data))
        d = tmp_path_factory.mktemp(key) / "floor"
        pipeline.write_outputs(ctx, d, ["cabling", "ibnetdiscover"])
        out[key] = d / data["arch"]
    return out


def diff(*args, json_out: bool = True):
    res = CliRunner().invoke(main, ["diff", *map(str, args), *(["--json"] if json_out else [])], catch_exceptions=False)
    if json_out and res.exit_code in (0, 1):
        return res.exit_code, json.loads(res.output)
    return res.exit_code, res.output


def rows(cabling: Path) -> tuple[list[str], list[list[str]]]:
    with open(cabling, newline="") as fh:
        r = list(csv.reader(fh))
    return r[0], r[1:]


def write_csv(path: Path, header: list[str], body: list[list[str]], quoting: int = csv.QUOTE_MINIMAL) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n", quoting=quoting)
        w.writerow(header)
        w.writerows(body)
    return path


def renamed_csv(cabling: Path, dest: Path, names: dict[str, str]) -> Path:
    header, body = rows(cabling)
    a, z = header.index("a_device"), header.index("z_device")
    for r in body:
        r[a], r[z] = names.get(r[a], r[a]), names.get(r[z], r[z])
    return write_csv(dest, header, body)


def kinds(result: dict) -> list[str]:
    return [d["kind"] for d in result["deviations"]] + ["rename"] * len(result["renames"])


# --- 1. matching on what discovery reports -------------------------------------------------------


@pytest.mark.parametrize("vendor", ["MQM9700-NS2F 0x2c9", "sw-4711"])
def test_vendor_named_switch_is_one_rename_not_moves(built, tmp_path, vendor):
    """A leaf still under its vendor name: one rename, its 16 correctly plugged cables identical."""
    plan = built["ro"] / "cabling.csv"
    floor = renamed_csv(plan, tmp_path / "floor.csv", {"leaf-g0-r3": vendor})
    code, r = diff(plan, floor)
    assert code == 1
    assert r["deviations"] == []
    assert [(x["found"], x["plan"], x["agree"], x["cables"]) for x in r["renames"]] == [(vendor, "leaf-g0-r3", 16, 16)]
    assert r["identical"] == r["planned_cables"] == 128
    code, text = diff(plan, floor, json_out=False)
    assert "1 rename" in text and "fix:     name it leaf-g0-r3" in text and "wrong-device" not in text


def test_renamed_switch_with_a_real_fault_on_it(built, tmp_path):
    """The rename does not hide a fault on the renamed switch: two of its plugs swapped are still a swap."""
    plan = built["ro"] / "cabling.csv"
    header, body = rows(plan)
    a, ap, z, zp = (header.index(c) for c in ("a_device", "a_port", "z_device", "z_port"))
    on = [r for r in body if r[z] == "leaf-g0-r3"][:2]
    on[0][zp], on[1][zp] = on[1][zp], on[0][zp]
    for r in body:
        r[a], r[z] = ("vendor-x" if r[a] == "leaf-g0-r3" else r[a]), ("vendor-x" if r[z] == "leaf-g0-r3" else r[z])
    code, r = diff(plan, write_csv(tmp_path / "floor.csv", header, body))
    assert code == 1
    assert sorted(kinds(r)) == ["rename", "swapped"]
    assert r["renames"][0]["plan"] == "leaf-g0-r3" and r["renames"][0]["agree"] == 16


def test_two_unnamed_switches_in_a_chain_resolve(built, tmp_path):
    """A spine and a leaf both unnamed: the leaf resolves from its named GPUs, then the spine from the leaves."""
    plan = built["ro3"] / "cabling.csv"
    floor = renamed_csv(plan, tmp_path / "floor.csv", {"leaf-g0-r0": "unnamed-1", "spine-b0-0": "unnamed-2"})
    code, r = diff(plan, floor)
    assert code == 1 and r["deviations"] == []
    assert sorted((x["found"], x["plan"]) for x in r["renames"]) == [("unnamed-1", "leaf-g0-r0"), ("unnamed-2", "spine-b0-0")]


NODE_LINE = re.compile(r'^(Switch|Ca)\t(\d+) "([^"]+)"\t\t# "([^"]*)"', re.M)


def _retouch_topo(src: Path, dest: Path, switch=None, ca=None, ca_guid=None) -> Path:
    """An ibnetdiscover file with node descriptions (and Ca node GUIDs) rewritten by the given functions."""

    renamed: dict[str, str] = {}

    def node(m: re.Match) -> str:
        kind, ports, nid, name = m.groups()
        new = switch if kind == "Switch" else ca
        renamed[name] = new(name) if new else name
        return f'{kind}\t{ports} "{nid}"\t\t# "{renamed[name]}"'

    text = NODE_LINE.sub(node, src.read_text())
    text = re.sub(r'^(\[.*?# (?:lid \d+ lmc \d+ )?)"([^"]*)"', lambda m: f'{m.group(1)}"{renamed.get(m.group(2), m.group(2))}"', text, flags=re.M)  # the peer's description in each port line
    if ca_guid:  # the Ca's own line and the switches' port lines name it by its node id
        text = re.sub(r'"(H-[0-9a-f]{16})"', lambda m: f'"{ca_guid(m.group(1))}"', text)
    dest.write_text(text)
    return dest


def _pull(topo: Path, desc: str) -> None:
    """Pull the cable of the adapter described ``desc``: its Ca record and the switch port line to it go."""
    lines = topo.read_text().splitlines()
    ca = next(i for i, x in enumerate(lines) if x.startswith("Ca") and f'# "{desc}"' in x)
    drop = {ca, ca + 1} | {i for i, x in enumerate(lines) if x.startswith("[") and f'# "{desc}"' in x}
    topo.write_text("\n".join(x for i, x in enumerate(lines) if i not in drop) + "\n")


def test_ofed_hca_names_match_gpu_ports(built, tmp_path):
    """HCAs described '<host> mlx5_<n>' with GUIDs the plan does not know: matched by host and wiring, all 64 identical."""
    topo = built["ro"] / "ibnetdiscover" / "fabric.topo"
    order = [3, 1, 0, 2, 7, 4, 6, 5]  # mlx5 numbering is the server's, not the GPU's

    def ofed(name):
        host, gpu = name.split("-gpu")
        return f"{host} mlx5_{order[int(gpu)]}"

    floor = _retouch_topo(topo, tmp_path / "floor.topo", ca=ofed, ca_guid=lambda nid: "H-" + format(int(nid[2:], 16) ^ 0xABC000, "016x"))
    floor.write_text(re.sub(r"\(([0-9a-f]{1,16})\)", lambda m: "(" + format(int(m.group(1), 16) ^ 0xABC000, "x") + ")", floor.read_text()))  # port GUIDs the plan does not know either
    code, r = diff(built["ro"], floor)
    assert code == 0, kinds(r)
    assert r["identical"] == 128 and r["renames"] == []
    assert any("64 adapter port(s) named by host" in n and "the order the wiring shows on most hosts" in n for n in r["notes"])


def test_ofed_hca_names_with_one_cable_missing(built, tmp_path):
    """One HCA's cable pulled: exactly one missing cable, not 64 pull-and-install orders."""
    topo = built["ro"] / "ibnetdiscover" / "fabric.topo"
    floor = _retouch_topo(topo, tmp_path / "floor.topo", ca=lambda n: n.replace("-gpu", " mlx5_"))
    _pull(floor, "hb02 mlx5_5")
    code, r = diff(built["ro"], floor)
    assert code == 1
    assert [(d["kind"], {d["planned"][0]["a"], d["planned"][0]["z"]}) for d in r["deviations"]] == [("missing", {"hb02-gpu5:nic0", "leaf-g0-r5:p3"})]


def test_factory_descriptions_matched_by_guid(built, tmp_path):
    """Every switch 'Quantum Mellanox Technologies', every HCA 'localhost mlx5_0': the plan's GUIDs match them all."""
    topo = built["ro"] / "ibnetdiscover" / "fabric.topo"
    floor = _retouch_topo(topo, tmp_path / "floor.topo", switch=lambda n: "Quantum Mellanox Technologies", ca=lambda n: "localhost mlx5_0")
    code, r = diff(built["ro"], floor)
    assert code == 0, kinds(r)
    assert r["identical"] == 128 and r["renames"] == []
    assert any("matched to the plan by node GUID" in n for n in r["notes"])


def test_port_guids_match_when_node_guids_differ(built, tmp_path):
    """HCA node GUIDs unknown to the plan, port GUIDs as exported, factory descriptions: matched by port GUID."""
    topo = built["ro"] / "ibnetdiscover" / "fabric.topo"
    floor = _retouch_topo(topo, tmp_path / "floor.topo", ca=lambda n: "localhost mlx5_0", ca_guid=lambda nid: "H-" + format(int(nid[2:], 16) ^ 0xF00000, "016x"))
    code, r = diff(built["ro"], floor)
    assert code == 0, kinds(r)
    assert r["identical"] == 128


def lldp_dir(cabling: Path, dest: Path, switch_name=lambda n: n, chassis_only: set = frozenset(), host_if=lambda rank, plane: f"gpu{rank}-nic{plane}", gpu_end=None) -> Path:
    """lldpctl -f json files of every device (hosts hbNN, GPU ports gpu<rank>-nic<plane>); some neighbours send only a chassis ID.

    ``gpu_end``: (device, port) -> (host, interface) of a GPU end, None for a switch (a plan of the site's names).
    """
    header, body = rows(cabling)
    ix = [header.index(c) for c in ("a_device", "a_port", "z_device", "z_port")]
    per: dict[str, list] = {}

    def lldp_name(dev, port):
        if gpu_end is not None:
            return gpu_end(dev, port) or (switch_name(dev), port)
        m = re.match(r"^(hb\d+)-gpu(\d+)$", dev)
        return (m.group(1), host_if(int(m.group(2)), int(port[3:]))) if m else (switch_name(dev), port)

    for r in body:
        ends = [(r[ix[0]], r[ix[1]]), (r[ix[2]], r[ix[3]])]
        for (hd, hp), (td, tp) in (ends, ends[::-1]):
            host, ifname = lldp_name(hd, hp)
            peer, pport = lldp_name(td, tp)
            mac = "0c:42:a1:%02x:%02x:%02x" % tuple(zlib.crc32(td.encode()).to_bytes(4, "little")[:3])
            chassis = {"id": {"type": "mac", "value": mac}} if td in chassis_only and host != "hb00" else {peer: {"id": {"type": "mac", "value": mac}}}
            per.setdefault(host, []).append({ifname: {"chassis": chassis, "port": {"id": {"type": "mac", "value": "00:00:00:00:00:01"}, "descr": pport}}})
    dest.mkdir()
    for host, items in per.items():
        (dest / f"{host}.json").write_text(json.dumps({"lldp": {"interface": items}}))
    return dest


def test_lldp_chassis_id_only_neighbours(built, tmp_path):
    """A leaf that sends only its chassis ID (its name heard once, on hb00): every interface matched by chassis ID."""
    d = lldp_dir(built["ro"] / "cabling.csv", tmp_path / "lldp", chassis_only={"leaf-g0-r2"})
    code, r = diff(built["ro"], d)
    assert code == 0, kinds(r)
    assert r["identical"] == 128


def test_lldp_host_interfaces_named_by_the_os(built, tmp_path):
    """Host interfaces as the OS names them (enp<n>s0np0, numbered unlike the GPUs): matched by host and wiring."""
    d = lldp_dir(built["ro"] / "cabling.csv", tmp_path / "lldp", host_if=lambda rank, plane: f"enp{[3, 1, 0, 2, 7, 4, 6, 5][rank] * 16 + 12}s0np{plane}")
    code, r = diff(built["ro"], d)
    assert code == 0, kinds(r)
    assert r["identical"] == 128


def test_lldp_names_map_by_chassis_id(built, tmp_path):
    """A switch that sends only its chassis ID everywhere: --names maps the MAC to the plan's name."""
    d = lldp_dir(built["ro"] / "cabling.csv", tmp_path / "lldp", switch_name=lambda n: n, chassis_only={"spine-1"})
    # spine-1 has no host neighbour, so no interface names it: --names does, through its chassis ID
    mac = "0c:42:a1:%02x:%02x:%02x" % tuple(zlib.crc32(b"spine-1").to_bytes(4, "little")[:3])
    names = tmp_path / "names.csv"
    names.write_text(f"{mac},spine-1\n")
    code, r = diff(built["ro"], d, "--names", names)
    assert code == 0, kinds(r)
    assert r["identical"] == 128 and r["renames"] == []


def test_lldp_chassis_id_answered_by_its_own_file(built, tmp_path):
    """No interface names spine-1, but spine-1.json sees each of its links from the other end: it is spine-1."""
    d = lldp_dir(built["ro"] / "cabling.csv", tmp_path / "lldp", chassis_only={"spine-1"})
    code, r = diff(built["ro"], d)
    assert code == 0, kinds(r)
    assert r["identical"] == 128 and r["renames"] == []
    (d / "spine-1.json").unlink()  # without its file, the wiring still tells: one rename
    code, r = diff(built["ro"], d)
    assert code == 1 and r["deviations"] == [] and [x["plan"] for x in r["renames"]] == ["spine-1"]
    assert r["renames"][0]["identity"].startswith("chassis mac 0c:42:a1:")


def test_lldp_vendor_named_switch_is_one_rename(built, tmp_path):
    d = lldp_dir(built["ro"] / "cabling.csv", tmp_path / "lldp", switch_name=lambda n: "switch-0c42a1" if n == "spine-2" else n)
    code, r = diff(built["ro"], d)
    assert code == 1 and r["deviations"] == []
    assert [(x["found"], x["plan"]) for x in r["renames"]] == [("switch-0c42a1", "spine-2")]


def test_names_map(built, tmp_path):
    """--names: the map names the vendor-named switch and an OFED HCA; no rename finding, exit 0."""
    plan = built["ro"] / "cabling.csv"
    floor = renamed_csv(plan, tmp_path / "floor.csv", {"leaf-g0-r3": "MQM9700 bay 4", "hb05-gpu1": "hb05 mlx5_9"})
    names = tmp_path / "names.csv"
    names.write_text("as_built,plan\n# the leaf in bay 4\nMQM9700 bay 4,leaf-g0-r3\nhb05 mlx5_9,hb05-gpu1\n")
    code, r = diff(plan, floor, "--names", names)
    assert code == 0, kinds(r)
    assert r["identical"] == 128 and r["renames"] == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("as_built,plan\nx,leaf-g0-r3,extra\n", "names.csv line 2: 3 field(s)"),
        ("a,leaf-g0-r3\nb,leaf-g0-r3\n", "names.csv line 2: plan name 'leaf-g0-r3' is given again (line 1)"),
        ("a,leaf-g0-r3\na,leaf-g0-r4\n", "names.csv line 2: 'a' is mapped again"),
        ("a,\n", "names.csv line 1: an empty name"),
        ("a,no-such-switch\n", "names.csv line 1: 'no-such-switch' is no device of the plan"),
        ("a\x1b[2J,leaf-g0-r3\n", "names.csv line 1: a name holds a control character"),
    ],
)
def test_names_map_errors_name_the_line(built, tmp_path, text, message):
    names = tmp_path / "names.csv"
    names.write_text(text)
    plan = built["ro"] / "cabling.csv"
    code, out = diff(plan, plan, "--names", names, json_out=False)
    assert code == 2 and message in out, out
    assert "Traceback" not in out


def test_names_map_is_bounded(built, tmp_path):
    names = tmp_path / "names.csv"
    with open(names, "w") as fh:
        fh.truncate(17 << 20)
    plan = built["ro"] / "cabling.csv"
    code, out = diff(plan, plan, "--names", names, json_out=False)
    assert code == 2 and "names map is at most 16.0 MiB" in out


# --- 2. a reading of part of the plan ------------------------------------------------------------


@pytest.mark.parametrize("key, subnet, parts", [("rol", "rail0-1", 4), ("rol8", "rail0", 8), ("rol8", "rail5", 8)])
def test_one_subnet_of_a_rail_only_plan(built, key, subnet, parts):
    """One subnet's file against the whole rail-only plan: its cables compared, the other subnets named, none 'missing'."""
    topo = built[key] / "ibnetdiscover" / f"{subnet}.topo"
    header, body = rows(built[key] / "cabling.csv")
    z = header.index("z_device")
    mine = sum(r[z].startswith(f"{subnet}-") for r in body)
    assert mine == len(body) // parts
    code, r = diff(built[key], topo)
    assert code == 0, kinds(r)
    assert r["deviations"] == [] and r["partial"] is True
    assert r["identical"] == r["compared_cables"] == mine and r["planned_cables"] == len(body)
    note = next(n for n in r["notes"] if n.startswith("not covered"))
    assert f"{parts - 1} of the plan's {parts} separate fabrics (subnets), {len(body) - mine:,} of {len(body):,} planned cables" in note
    others = sorted({r[z].split("-")[0] for r in body if not r[z].startswith(f"{subnet}-")})
    assert len(others) == parts - 1 and all(f"{o}-" in note for o in others[:6])
    code, text = diff(built[key], topo, json_out=False)
    assert len(text.splitlines()) == 4  # headline, counts, the note on the parts not covered, design checks skipped


def test_one_subnet_with_a_fault(built, tmp_path):
    """A cable pulled in the one subnet given: one missing cable; the other subnets still not listed."""
    floor = tmp_path / "rail0.topo"
    shutil.copy(built["rol8"] / "ibnetdiscover" / "rail0.topo", floor)
    _pull(floor, "hb03-gpu0")
    code, r = diff(built["rol8"], floor)
    assert code == 1
    assert [d["kind"] for d in r["deviations"]] == ["missing"]


def test_lldp_files_of_some_devices(built, tmp_path):
    """LLDP files of one host and one leaf: only their cables are compared."""
    d = lldp_dir(built["ro"] / "cabling.csv", tmp_path / "all")
    part = tmp_path / "part"
    part.mkdir()
    for name in ("hb00.json", "leaf-g0-r1.json"):
        shutil.copy(d / name, part / name)
    code, r = diff(built["ro"], part)
    assert code == 0, kinds(r)
    assert r["identical"] == 8 + 16 - 1 and r["partial"] is True
    assert any("gave no LLDP file" in n for n in r["notes"])


# --- 3. speed and duplicated records -------------------------------------------------------------


def test_wrong_speed_and_duplicate_record(built, tmp_path):
    plan = built["ro"] / "cabling.csv"
    header, body = rows(plan)
    body[5][header.index("z_speed_gbps")] = "200"
    body.append(list(body[40]))
    code, r = diff(plan, write_csv(tmp_path / "floor.csv", header, body))
    assert code == 1
    assert sorted(kinds(r)) == ["duplicate", "wrong-speed"]
    speed = next(d for d in r["deviations"] if d["kind"] == "wrong-speed")
    assert "at 200 Gb/s, planned 400" in speed["fix"] and speed["severity"] == "error"
    dup = next(d for d in r["deviations"] if d["kind"] == "duplicate")
    assert dup["found"][1]["where"].startswith("floor.csv line 130")
    assert r["identical"] == 127


# --- 4. hostile inputs ---------------------------------------------------------------------------


def test_control_characters_are_escaped(built, tmp_path):
    """CR, ESC, BEL, DEL, U+2028 in a CSV cell and NUL in an LLDP name: echoed escaped, never raw."""
    plan = built["ro"] / "cabling.csv"
    header, body = rows(plan)
    a = header.index("a_device")
    body[0][a] = "hb00-gpu0\r\x1b[2J\u2028\x07\x7f"
    code, text = diff(plan, write_csv(tmp_path / "floor.csv", header, body, csv.QUOTE_ALL), json_out=False)
    assert code == 1, text
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u2028]", text)
    assert "hb00-gpu0\\r\\x1b[2J\\u2028\\x07\\x7f" in text
    d = lldp_dir(plan, tmp_path / "lldp")
    data = json.loads((d / "hb01.json").read_text())
    item = data["lldp"]["interface"][0]
    item[next(iter(item))]["port"]["descr"] = "p2\x00\r"
    (d / "hb01.json").write_text(json.dumps(data))
    code, text = diff(built["ro"], d, json_out=False)
    assert code == 1
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f]", text) and "leaf-g0-r0:p2\\x00 (rack" in text  # the CR at the end is trimmed with the white space


@pytest.mark.parametrize("fmt", ["auto", "ibnetdiscover", "lldp", "cabling"])
def test_not_discovery_output_is_refused_unquoted(built, tmp_path, fmt):
    """/proc/self/environ (and a file like it) is refused, exit 2, without a byte of its content in the message."""
    env = dict(os.environ, TOPOGEN_MARKER="secret-xyzzy-42")
    for target in ("/proc/self/environ", str(_envlike(tmp_path))):
        res = subprocess.run([sys.executable, "-m", "topogen", "diff", str(built["ro"]), target, "--format", fmt], capture_output=True, text=True, env=env, cwd=ROOT)
        assert res.returncode == 2, (target, fmt, res.stdout, res.stderr)
        assert "xyzzy" not in res.stdout + res.stderr and "PATH=" not in res.stdout + res.stderr, res.stderr
        assert "Traceback" not in res.stderr


def _envlike(tmp_path: Path) -> Path:
    p = tmp_path / "environ.txt"
    p.write_bytes(b"TOPOGEN_MARKER=secret-xyzzy-42\0PATH=/usr/bin\0" * 50)
    return p


# --- 5. large inputs in bounded memory ------------------------------------------------------------


def test_repeated_rows_stream_in_bounded_memory(built, tmp_path):
    """A 60 MB cabling CSV (the plan's rows repeated): read in bounded memory, reported as repeated records."""
    plan = built["ro3"] / "cabling.csv"
    lines = plan.read_bytes().splitlines(keepends=True)
    big = tmp_path / "floor.csv"
    with open(big, "wb") as fh:
        fh.write(lines[0])
        for _ in range((60 << 20) // len(b"".join(lines[1:])) + 1):
            fh.write(b"".join(lines[1:]))
    code = (  # VmHWM: this process's own peak (ru_maxrss would count the pytest process it was spawned from)
        "import re, sys\n"
        "from topogen.cli import main\n"
        "try:\n"
        f"    main(['diff', {str(built['ro3'])!r}, {str(big)!r}, '--json'])\n"
        "except SystemExit as e:\n"
        "    hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
        "    print('EXIT', e.code, hwm, file=sys.stderr)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    exit_code, rss_kb = map(int, res.stderr.split("EXIT")[-1].split())
    assert exit_code == 1
    r = json.loads(res.stdout)
    assert r["identical"] == r["planned_cables"] and kinds(r) == ["duplicate"] * 20
    assert any("repeated record(s) in all" in n for n in r["notes"])
    assert rss_kb < 150 * 1024, f"peak RSS {rss_kb // 1024} MB for a 60 MB file"


# --- 6. a copy of the plan's cabling file, and the build's own files as --spec ---------------------


@pytest.mark.parametrize("where", ["same-dir", "build-root"])
def test_copy_of_the_cabling_file_finds_its_spec(built, tmp_path, where):
    plan = built["ro"] / "cabling.csv"
    copy = (plan.parent / "plan-2026-11.csv") if where == "same-dir" else (plan.parent.parent / "as-planned.csv")
    shutil.copy(plan, copy)
    try:
        code, r = diff(copy, plan)
        assert code == 0
        assert "design_check" in r and not any("design checks skipped" in n for n in r["notes"])
    finally:
        copy.unlink()


@pytest.mark.parametrize("name", ["summary.json", "manifest.json"])
def test_build_files_as_spec(built, tmp_path, name):
    """A bare copy of the cabling file (no build beside it) with --spec the build's summary.json or manifest.json."""
    bare = tmp_path / "bare.csv"
    shutil.copy(built["ro"] / "cabling.csv", bare)
    code, r = diff(bare, bare, "--spec", built["ro"].parent / name)
    assert code == 0, r
    assert r["design_check"]["valid"] is True


def test_manifest_without_summary_is_a_clear_error(built, tmp_path):
    shutil.copy(built["ro"].parent / "manifest.json", tmp_path / "manifest.json")
    bare = tmp_path / "bare.csv"
    shutil.copy(built["ro"] / "cabling.csv", bare)
    code, out = diff(bare, bare, "--spec", tmp_path / "manifest.json", json_out=False)
    assert code == 2 and "no summary.json of the same spec" in out
