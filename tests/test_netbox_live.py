"""The NetBox files in a real NetBox 4.7: imported as the docs say, read back row by row, and pushed by the API.

Every build is imported into one NetBox (the session's), one after another, so each later one is
also a cluster "into the same NetBox": names, slugs, labels, VRFs and shared objects must not
clash. Two ways in: the bulk-import page exactly as a browser posts it (multipart form, CSRF,
CRLF), in the documented order, skipping only the shared files NetBox refuses as existing; and
``topogen netbox push``. After each, NetBox is read back and every row compared
(:func:`topogen.exports.netbox.push.plan` sorts each row into create / change / same): 0
mismatches means every row is *same*.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.netbox_live import RUN, Browser, netbox  # noqa: F401  (the session fixture)
from topogen.cli import main
from topogen.exports.netbox import push as nbpush


def build(tmp: Path, spec: str, *args: str, formats: str = "netbox,ipam") -> Path:
    out = tmp / "out"
    res = CliRunner().invoke(main, ["build", spec, *args, "--out", str(out), "--formats", formats, "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out


def client(nb: dict) -> nbpush.Client:
    return nbpush.Client(nb["url"], nb["token"])


def assert_read_back(nb: dict, out: Path) -> nbpush.Plan:
    """Every row of every file is in NetBox as written: nothing to create, nothing different."""
    p = nbpush.plan(client(nb), out)
    bad = {k: (c, u, f) for k, (c, u, s, f) in p.counts().items() if c or u or f}
    assert not bad, f"rows missing or different in NetBox: {bad}; e.g. {[(k, v[:1]) for k, v in p.create.items() if v]} {[(k, v[:1]) for k, v in p.change.items() if v]}"
    assert p.primary_todo == 0
    # a shared object NetBox holds otherwise: only an ASN whose description names the cluster that created it
    assert set(p.shared_differ) <= {"asn"}, p.shared_differ
    rows = sum(1 for _k, f in nbpush.build_files(out) for _ in nbpush.read_rows(f))
    assert sum(s for _c, _u, s, _f in p.counts().values()) == rows
    return p


def bulk_import(nb: dict, out: Path) -> list[Path]:
    """Every file in the documented order through the bulk-import page; returns the shared files skipped as existing."""
    b = Browser(nb)
    skipped = []
    for kind, path in nbpush.build_files(out):
        ok, errors = b.import_csv(kind, path)
        if not ok:
            shared = path.parent.name == "shared" or (path.parent.name == "ipam" and path.parent.parent.name == "netbox")
            assert shared and "already exists" in errors, f"{path.relative_to(out)} refused: {errors}"
            skipped.append(path)
    return skipped


def page_then_push(nb: dict, out: Path, tmp: Path) -> None:
    """The documented way for a build whose ASNs NetBox already holds: the page, then ``topogen netbox push`` for the rest."""
    skipped = bulk_import(nb, out)
    if any(p.parent.name == "ipam" for p in skipped):
        rest = nbpush.plan(client(nb), out)
        assert {k for k, v in rest.create.items() if v} <= {"asn", "rir"}, rest.counts()
        assert push_cli(nb, out, tmp).exit_code == 0


def push_cli(nb: dict, out: Path, tmp: Path, *args: str):
    tok = tmp / "token"
    tok.write_text(nb["token"] + "\n")
    return CliRunner().invoke(main, ["netbox", "push", str(out), "--url", nb["url"], "--token-file", str(tok), *args], catch_exceptions=False)


def test_demo_both_architectures_through_the_import_page(netbox, tmp_path):  # noqa: F811
    out = build(tmp_path, "demo", "--name", f"nbdemo{RUN}")
    page_then_push(netbox, out, tmp_path)
    p = assert_read_back(netbox, out)
    assert p.same["site"] == 2 and p.same["cable"] > 0


def test_leaf_pair_through_the_import_page(netbox, tmp_path):  # noqa: F811
    out = build(tmp_path, "era-2-8-9-400", "--name", f"nbpair{RUN}")
    page_then_push(netbox, out, tmp_path)
    assert_read_back(netbox, out)


def test_every_network_through_the_api_twice(netbox, tmp_path):  # noqa: F811
    """Racks, devices, LAGs and SVIs, cables, VRFs, prefixes, addresses on their interfaces, primary and OOB IPs.

    The Enterprise RA preset at one SU (32 GPUs) carries every kind of object the SuperPOD's files
    do (in-band bonds and SVIs, OOB, IPAM) at a size the API loads in minutes on CI's machine; the
    full dgx-h100-superpod through the API takes over half an hour here (about 10 interfaces/s).
    """
    out = build(tmp_path, "era-2-8-9-400", "--gpus", "32", "--name", f"nbera{RUN}")
    dry = push_cli(netbox, out, tmp_path, "--dry-run")
    assert dry.exit_code == 0 and "dry run: nothing changed" in dry.output, dry.output
    assert nbpush.plan(client(netbox), out).create["device"], "a dry run changed NetBox"
    res = push_cli(netbox, out, tmp_path)
    assert res.exit_code == 0, res.output
    assert_read_back(netbox, out)
    again = push_cli(netbox, out, tmp_path)
    assert again.exit_code == 0 and "nothing to do" in again.output and "written" not in again.output, again.output
    c = client(netbox)
    dev = c.all("dcim/devices", name=f"nbera{RUN}-rail-optimized.hb00")[0]
    assert dev["primary_ip4"] and dev["primary_ip4"]["address"].startswith("10.16.")
    bond = c.all("dcim/interfaces", device_id=dev["id"], name="bond0")[0]
    assert bond["type"]["value"] == "lag" and len(c.all("dcim/interfaces", lag_id=bond["id"])) == 2
    assert c.all("dcim/interfaces", name="vlan100", site=f"nbera{RUN}-rail-optimized")


@pytest.mark.parametrize(("name", "args"), [("nbplanes", ("--planes", "2")), ("nbdual", ("--homing", "dual"))])
def test_planes_and_dual_homing_through_the_api(netbox, tmp_path, name, args):  # noqa: F811
    out = build(tmp_path, "demo", "--name", f"{name}{RUN}", *args)
    assert push_cli(netbox, out, tmp_path).exit_code == 0
    assert_read_back(netbox, out)


def test_a_second_cluster_shares_asns_and_prerequisites(netbox, tmp_path):  # noqa: F811
    """Two builds draw the same private ASNs: the second creates none of them, and nothing is refused."""
    a = build(tmp_path / "a", "demo", "--name", f"nbfirst{RUN}")
    b = build(tmp_path / "b", "demo", "--name", f"nbsecond{RUN}")
    assert push_cli(netbox, a, tmp_path).exit_code == 0
    p = nbpush.plan(client(netbox), b)
    assert not p.create.get("asn") and not p.create.get("manufacturer") and p.create["device"]
    assert push_cli(netbox, b, tmp_path).exit_code == 0
    assert_read_back(netbox, a)
    assert_read_back(netbox, b)


def test_objects_topogen_did_not_create_are_left_alone(netbox, tmp_path):  # noqa: F811
    out = build(tmp_path, "demo", "--name", f"nbforeign{RUN}", "--arch", "rail-only")
    b = Browser(netbox)
    for kind, path in nbpush.build_files(out):
        b.import_csv(kind, path)  # shared ones may exist already
    c = client(netbox)
    dev = c.all("dcim/devices", name=f"nbforeign{RUN}-rail-only.hb00")[0]
    c.request("PATCH", f"dcim/devices/{dev['id']}/", {"comments": "edited by hand"})
    res = push_cli(netbox, out, tmp_path)
    assert res.exit_code == 1 and "not ours: 1 device(s)" in res.output, res.output
    assert c.request("GET", f"dcim/devices/{dev['id']}/")["comments"] == "edited by hand"
    assert push_cli(netbox, out, tmp_path, "--yes-adopt").exit_code == 0
    assert_read_back(netbox, out)


def test_bad_input_exits_2(netbox, tmp_path):  # noqa: F811
    out = build(tmp_path, "demo", "--name", f"nbbad{RUN}", "--arch", "rail-only")
    tok = tmp_path / "tok"
    tok.write_text("nbt_notakey.notatoken\n")
    runner = CliRunner()
    cases = [
        (["netbox", "push", str(out), "--url", netbox["url"], "--token-file", str(tok)], "refused the token"),
        (["netbox", "push", str(out), "--url", "http://127.0.0.1:9", "--token-file", str(tok)], "cannot reach NetBox"),
        (["netbox", "push", str(tmp_path), "--url", netbox["url"], "--token-file", str(tok)], "not a build directory"),
        (["netbox", "push", str(out), "--url", netbox["url"], "--token-file", str(tmp_path / "missing")], "cannot read an API token"),
    ]
    for argv, needle in cases:
        res = runner.invoke(main, argv)
        assert res.exit_code == 2 and needle in res.output and "Traceback" not in res.output, (argv, res.output)
        assert "notatoken" not in res.output
    assert not re.search(r"nbt_\w+\.\w+", push_cli(netbox, out, tmp_path).output)


def test_a_second_cluster_through_the_import_page_alone(netbox, tmp_path):  # noqa: F811
    """Two clusters, each with its own ``addressing.asn_pool`` (the documented way for the page): every
    file of the second imports through the page; only single-object files of shared objects (``shared/*``,
    the pool's RIR in ``rirs.csv``) are refused as existing, and its ASNs are new."""
    demo = (Path(__file__).parents[1] / "templates" / "clusters" / "demo.yaml").read_text()
    base = 4_201_000_000 + int(RUN, 16) * 1_000  # the migrated database is kept: a pool no earlier session used
    outs = []
    for i in range(2):
        spec = tmp_path / f"c{i}.yaml"
        spec.write_text(demo + f"addressing:\n  asn_pool: {base + 500 * i}-{base + 500 * i + 499}\n")
        out = build(tmp_path / f"c{i}", str(spec), "--name", f"nbpage{i}{RUN}")
        skipped = bulk_import(netbox, out)
        assert all(p.parent.name == "shared" or p.name == "rirs.csv" for p in skipped), skipped
        outs.append(out)
    assert "asns.csv" not in {p.name for p in skipped} and "rirs.csv" in {p.name for p in skipped}
    for out in outs:
        p = assert_read_back(netbox, out)
        assert not p.shared_differ, p.shared_differ
