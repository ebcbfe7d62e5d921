"""Reading a wiring back (cabling.csv, topology.json): round trips, hand edits, malformed files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from topogen.asbuilt import wiring
from topogen.checks import validate
from topogen.cli import main
from topogen.fabric import clos
from topogen.fabric.model import LINK_COLUMNS
from topogen.spec.cluster import build_spec, load_spec
from topogen.util.errors import InputError

ARCHES = ("rail-optimized", "rail-only")
BIG = {"name": "big", "gpus": 504, "hb_domain": 8, "radix": 16, "planes": 2}  # 3 tiers / 2 tiers, two planes
BIG_ARGS = ["--name", "big", "--gpus", "504", "--hb-domain", "8", "--radix", "16", "--planes", "2"]


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    """``topogen build`` of the demo and of a two-plane 3-tier cluster (cabling and topology only)."""
    root = tmp_path_factory.mktemp("built")
    for name, args in (("demo", ["demo"]), ("big", BIG_ARGS)):
        res = CliRunner().invoke(main, ["build", *args, "--out", str(root / name), "--formats", "cabling,topology"], catch_exceptions=False)
        assert res.exit_code == 0, res.output
    return root


def run(*args) -> "CliRunner.Result":
    return CliRunner().invoke(main, ["validate", *map(str, args)], catch_exceptions=False)


def csv_lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def write(tmp_path: Path, lines: list[str], name: str = "cabling.csv", arch: str = "") -> Path:
    """Write ``lines`` to ``tmp_path/[arch/]name`` (an arch directory names the architecture)."""
    p = tmp_path / arch / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n")
    return p


# --- round trips ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["cabling.csv", "topology.json"])
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", ["demo", "big"])
def test_round_trip_gives_back_the_generated_wiring(out, name, arch, kind):
    spec = load_spec("demo") if name == "demo" else build_spec(BIG)
    w = wiring.load(out / name / arch / kind, spec)
    gen = clos.generate(spec, arch)
    assert w.fabric.arch == arch and w.findings == []
    assert [s.name for s in w.fabric.switches] == [s.name for s in gen.switches]
    for c in LINK_COLUMNS:
        assert np.array_equal(getattr(w.fabric.links, c), getattr(gen.links, c)), c
    assert np.array_equal(w.labels.cable, np.arange(1, len(gen.links) + 1))
    r = validate.validate(w.fabric, labels=w.labels, pre=w.findings)
    assert r.valid and r.warnings == 0
    assert r.figures == validate.validate(gen).figures


@pytest.mark.parametrize("arch", ARCHES)
def test_validate_command_on_cabling_and_topology(out, arch):
    for kind in ("cabling.csv", "topology.json"):
        res = run(out / "big" / arch / kind)
        assert res.exit_code == 0, res.output  # the spec is found: summary.json beside / embedded
        assert res.output.startswith(f"big / {arch}: VALID (0 error(s), 0 warning(s))")
    res = run(out / "demo" / arch / "cabling.csv", "--spec", "demo")
    assert res.exit_code == 0 and f"read from {out / 'demo' / arch / 'cabling.csv'}" in res.output


# --- hand edits: the validator names the line ------------------------------------------------------


def test_hand_edited_port_reuse_names_both_lines(out, tmp_path):
    lines = csv_lines(out / "demo" / "rail-optimized" / "cabling.csv")
    # line 2 is cable 1 (hb00-gpu0 -> leaf-g0-r0:p1); give cable 2's leaf port to it as well
    row1, row2 = lines[1].split(","), lines[2].split(",")
    row1[8], row1[10] = row2[8], row2[10]
    lines[1] = ",".join(row1)
    p = write(tmp_path, lines, arch="rail-optimized")
    res = run(p, "--spec", "demo")
    assert res.exit_code == 1
    assert f"port {row2[8]}:{row2[10]} is used by 2 cables: cable 1 (line 2) to hb00-gpu0:nic0; cable 2 (line 3) to hb00-gpu1:nic0" in res.output


def test_reversed_ends_are_the_same_cable(out, tmp_path):
    lines = csv_lines(out / "demo" / "rail-optimized" / "cabling.csv")
    for k in (1, 69):  # a GPU cable and a leaf-spine cable, written upper end first
        f = lines[k].split(",")
        f[4:8], f[8:12] = f[8:12], f[4:8]
        lines[k] = ",".join(f)
    res = run(write(tmp_path, lines, arch="rail-optimized"), "--spec", "demo")
    assert res.exit_code == 0, res.output


def test_unknown_device_is_named_with_its_lines(out, tmp_path):
    lines = csv_lines(out / "demo" / "rail-optimized" / "cabling.csv")
    lines[4] = lines[4].replace("leaf-g0-r3", "leaf-g9-r3")
    spec = load_spec("demo")
    w = wiring.load(write(tmp_path, lines, arch="rail-optimized"), spec)
    f = [x for x in w.findings if x.check == "hygiene.unknown-device"]
    assert len(f) == 1 and f[0].devices == ("leaf-g9-r3",) and f[0].cables == (4,)
    assert "its 1 cable(s) are ignored (line 5)" in f[0].message
    r = validate.validate(w.fabric, labels=w.labels, pre=w.findings)
    assert not r.valid and r.by_check("hygiene.gpu-no-link")[0].ports == ("hb00-gpu3:nic0",)


def test_dangling_and_bad_port_rows(out, tmp_path):
    lines = csv_lines(out / "demo" / "rail-optimized" / "cabling.csv")

    def set_field(k: int, col: int, value: str) -> None:
        f = lines[k].split(",")
        f[col] = value
        lines[k] = ",".join(f)

    set_field(1, 8, "")  # cable 1 loses its upper device
    set_field(2, 10, "x1")  # cable 2: not a port name
    set_field(3, 6, "p1")  # cable 3: a GPU has no p1
    set_field(4, 10, "p99")  # cable 4: past the radix (16)
    res = run(write(tmp_path, lines, arch="rail-optimized"), "--spec", "demo")
    assert res.exit_code == 1
    assert "hygiene.dangling: cable 1 (line 2): end z has no device: a dangling cable" in res.output
    assert "hygiene.bad-port: cable 2 (line 3): 'x1' is not a port name of leaf-g0-r1" in res.output
    assert "hygiene.bad-port: cable 3 (line 4): 'p1' is not a port name of hb00-gpu2" in res.output
    assert "hygiene.bad-port: cable 4 (line 5) uses leaf-g0-r3:p99, but leaf-g0-r3 has ports p1-p16" in res.output


def test_speed_edit_is_a_mismatch(out, tmp_path):
    lines = csv_lines(out / "demo" / "rail-only" / "cabling.csv")
    import io

    head = next(csv.reader([lines[0]]))
    fields = next(csv.reader([lines[8]]))
    fields[head.index("z_speed_gbps")] = "800"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(fields)
    lines[8] = buf.getvalue()
    res = run(write(tmp_path, lines, arch="rail-only"), "--spec", "demo")
    assert res.exit_code == 1
    assert "hygiene.speed-mismatch: cable 8 (line 9): hb00-gpu7:nic0 runs at 400 Gb/s but rail6-7-leaf:p9 at 800 Gb/s" in res.output


def test_edited_json_edge(out, tmp_path):
    doc = json.loads((out / "demo" / "rail-optimized" / "topology.json").read_text())
    doc["edges"][70]["target"] = doc["edges"][70]["source"]  # a self-link
    doc["edges"][3]["target"] = "nowhere"
    p = tmp_path / "topology.json"
    p.write_text(json.dumps(doc))
    res = run(p)
    assert res.exit_code == 1
    assert "cable 4 (edges[3]): end z is 'nowhere', which is not among the file's nodes" in res.output
    assert "hygiene.self-link: cable 71 (edges[70]) joins leaf-g0-r0 to itself (leaf-g0-r0:p15 to leaf-g0-r0:p1)" in res.output


@pytest.mark.parametrize("field", ["speed", "key"])
@pytest.mark.parametrize("value", [10**18, 10**19, 10**25, 10**30 - 1, -1])
def test_json_speed_and_key_bounded_like_the_csv_reader(out, tmp_path, field, value):
    """19 to 30 digits (or a negative id) are refused, exit 2, as cabling.csv refuses them; no OverflowError."""
    doc = json.loads((out / "demo" / "rail-only" / "topology.json").read_text())
    doc["edges"][0][field] = value
    p = tmp_path / "topology.json"
    p.write_text(json.dumps(doc))
    res = CliRunner().invoke(main, ["validate", str(p)], catch_exceptions=False)
    assert res.exit_code == 2, res.output
    assert f"topology.json edges[0]: {field} {value} is not a" in res.stderr and "at most 18 digits" in res.stderr


def test_json_speed_and_key_of_18_digits_are_read(out, tmp_path):
    doc = json.loads((out / "demo" / "rail-only" / "topology.json").read_text())
    doc["edges"][0]["key"] = 10**18 - 1
    p = tmp_path / "topology.json"
    p.write_text(json.dumps(doc))
    res = CliRunner().invoke(main, ["validate", str(p)], catch_exceptions=False)
    assert res.exit_code == 0, res.output


def test_spec_mismatch_is_a_warning(out):
    res = run(out / "demo" / "rail-only" / "cabling.csv", "--spec", "demo", "--name", "other")
    assert res.exit_code == 0
    assert "input.spec-mismatch: cabling.csv was generated from spec sha256:" in res.output


def test_shared_wiring_against_dedicated_spec(out):
    res = run(out / "demo" / "rail-only" / "cabling.csv", "--spec", "demo", "--rail-packing", "dedicated")
    assert res.exit_code == 1
    assert "rails.shared-switch: rail0-1-leaf carries 2 rails on one switch, but the spec asks for one switch per rail (rail_packing: dedicated)" in res.output
    assert "input.foreign-switch: 4 switch name(s)" in res.output


# --- malformed files: exit 2, the line named ----------------------------------------------------------


def bad_input(path: Path, *args) -> str:
    res = CliRunner().invoke(main, ["validate", str(path), "--spec", "demo", *args])
    assert res.exit_code == 2, res.output
    return res.output


def test_missing_columns(out, tmp_path):
    lines = csv_lines(out / "demo" / "rail-only" / "cabling.csv")
    lines[0] = lines[0].replace(",z_port,", ",zport,")
    msg = bad_input(write(tmp_path, lines, arch="rail-only"))
    assert "error: cabling.csv line 1: missing column(s) z_port in the header" in msg
    assert "required columns: a_device, a_port, z_device, z_port, a_speed_gbps, z_speed_gbps" in msg


def test_row_with_wrong_field_count(out, tmp_path):
    lines = csv_lines(out / "demo" / "rail-only" / "cabling.csv")
    lines[5] = lines[5].rsplit(",", 1)[0]
    lines[7] = lines[7] + ",extra"
    msg = bad_input(write(tmp_path, lines, arch="rail-only"))
    assert "cabling.csv line 6: 21 field(s), but the header has 22" in msg
    assert "cabling.csv line 8: 23 field(s), but the header has 22" in msg


def test_row_with_bad_number(out, tmp_path):
    lines = csv_lines(out / "demo" / "rail-only" / "cabling.csv")
    lines[3] = lines[3].replace(",400,", ",fast,", 1)
    msg = bad_input(write(tmp_path, lines, arch="rail-only"))
    assert "cabling.csv line 4: a_speed_gbps 'fast' is not a positive whole number" in msg


def test_empty_file(tmp_path):
    msg = bad_input(write(tmp_path, ["# just a comment"]))
    assert "no header row" in msg


def test_missing_file(tmp_path):
    assert "does not exist" in bad_input(tmp_path / "nope.csv")


def test_invalid_json(tmp_path):
    p = tmp_path / "topology.json"
    p.write_text('{"nodes": [\n{"id": "a"},\n]}')
    assert "topology.json line 3: invalid JSON" in bad_input(p, "--arch", "rail-only")


def test_json_edge_missing_field(out, tmp_path):
    doc = json.loads((out / "demo" / "rail-only" / "topology.json").read_text())
    del doc["edges"][3]["target"]
    doc["edges"][5]["speed"] = "fast"
    p = tmp_path / "topology.json"
    p.write_text(json.dumps(doc))
    msg = bad_input(p)
    assert "topology.json edges[3]: missing or non-string field(s): target" in msg
    assert "topology.json edges[5]: speed 'fast' is not a positive whole number" in msg


def test_architecture_from_directory_flag_or_spec(out, tmp_path):
    lines = csv_lines(out / "demo" / "rail-only" / "cabling.csv")
    assert lines[0].startswith("cable,tier,link,")  # plain CSV: the header is line 1
    p = write(tmp_path, lines)  # outside an <arch> directory: the arch is unknown
    assert "cannot tell the architecture of cabling.csv" in bad_input(p)
    assert run(p, "--spec", "demo", "--arch", "rail-only").exit_code == 0
    assert run(p, "--spec", "demo", "--arch", "rail-optimized").exit_code == 1  # wrong arch: names unknown
    assert run(write(tmp_path, lines, arch="rail-only"), "--spec", "demo").exit_code == 0  # the directory names it
    conflict = bad_input(out / "demo" / "rail-only" / "cabling.csv", "--arch", "rail-optimized")
    assert "cabling.csv says arch rail-only, but --arch says rail-optimized" in conflict


def test_old_cabling_csv_with_a_comment_line_is_still_read(out, tmp_path):
    """Files written before the plain-CSV change start with a ``#`` provenance line; they still validate."""
    build = out / "demo"
    sha = json.loads((build / "summary.json").read_text())["spec_sha256"][:16]
    lines = csv_lines(build / "rail-only" / "cabling.csv")
    old = tmp_path / "demo"
    (old / "rail-only").mkdir(parents=True)
    (old / "summary.json").write_text((build / "summary.json").read_text())  # an old build: no manifest entry needed
    p = write(old / "rail-only", [f"# generated by topogen 0.1.0; spec demo sha256:{sha}; arch rail-only", *lines])
    res = run(p)
    assert res.exit_code == 0, res.output
    assert res.output.startswith("demo / rail-only: VALID")


def test_plain_cabling_csv_finds_its_spec_through_the_manifest(out):
    res = run(out / "demo" / "rail-only" / "cabling.csv")
    assert res.exit_code == 0, res.output
    assert res.output.startswith("demo / rail-only: VALID")


def test_spec_required_when_the_file_does_not_name_one(out, tmp_path):
    lines = csv_lines(out / "demo" / "rail-only" / "cabling.csv")
    p = write(tmp_path, lines)  # no summary.json beside it
    res = CliRunner().invoke(main, ["validate", str(p)])
    assert res.exit_code == 2 and "does not say which spec it implements; give it with --spec" in res.output


def test_read_raises_input_error_for_library_users(tmp_path):
    with pytest.raises(InputError) as exc:
        wiring.read(write(tmp_path, ["a_device,a_port"]))
    assert "missing column(s) z_device, z_port, a_speed_gbps, z_speed_gbps" in str(exc.value)
