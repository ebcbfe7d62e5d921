"""``topogen emulate`` on a build directory nobody trusts: each case of issue #35, refused at the grammar.

Every case copies the demo build (cabling, addressing, frr), plants one hostile thing
in it and runs ``topogen emulate`` in-process: exit 2, the file (and line, for text)
named, no traceback, the payload's marker file never made, nothing written outside the
case's directory. The machine checks (root, FRR) are replaced by a refusal of their own
so a case the grammar wrongly let through fails here instead of booting FRR.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from topogen.cli import main
from topogen.config import emulate
from topogen.config.emulation import grammar
from topogen.config.emulation.lab import load_lab
from topogen.util.errors import Problem

ARCH = "rail-optimized"
LEAF = "leaf-g0-r0"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("emulate-grammar") / "demo"
    res = CliRunner().invoke(main, ["build", "demo", "--formats", "cabling,addressing,frr", "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture()
def build(demo, tmp_path, monkeypatch) -> Path:
    dst = tmp_path / "b"
    shutil.copytree(demo, dst)
    monkeypatch.setattr(emulate, "environment_problems", lambda: [Problem("machine-check", "the grammar let this build through")])
    return dst


def conf_of(build: Path, switch: str) -> Path:
    return next((build / ARCH / "frr").rglob(f"{switch}.conf"))


def run(build: Path, *extra: str):
    return CliRunner().invoke(main, ["emulate", str(build), "--arch", ARCH, *extra], catch_exceptions=False)


def refused(res, *needles: str) -> None:
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "machine-check" not in res.stderr, res.stderr
    for n in needles:
        assert n in res.stderr, res.stderr


def edit(path: Path, old: str, new: str, count: int = 1) -> int:
    """Replace the first ``count`` of ``old`` in ``path``; the 1-based line of the first."""
    text = path.read_text()
    assert old in text, old
    line = text[: text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, new, count))
    return line


def marker_payload(tmp_path: Path) -> str:
    return f"netns exec {os.getpid()} touch {tmp_path}/MARKER"


def test_the_unchanged_build_passes_the_grammar(demo):
    lab = load_lab(demo, ARCH, 64)
    assert len(lab.routers) == 12 and len(lab.hosts) == 64 and set(lab.texts) == set(lab.configs)


def test_newline_payload_in_a_route_cell(build, tmp_path):
    path = build / ARCH / "addressing.csv"
    line = edit(path, ",10.128.0.0/9\n", f',"10.128.0.0/9\n{marker_payload(tmp_path)}"\n')
    refused(run(build), f"addressing.csv:{line + 1}", "route")
    assert not (tmp_path / "MARKER").exists()


def test_port_name_with_a_payload(build, tmp_path):
    path = build / ARCH / "addressing.csv"
    line = edit(path, f"{LEAF},leaf,p1,", f'{LEAF},leaf,"p1\n{marker_payload(tmp_path)}",')
    refused(run(build), "addressing.csv:", "interface")
    assert line > 1 and not (tmp_path / "MARKER").exists()


def test_crafted_nic_name_would_make_a_veth_in_the_host_namespace(build):
    path = build / ARCH / "cabling.csv"
    edit(path, ",nic0,", ",nic0 type veth peer name tgevil0,")
    refused(run(build), "cabling.csv:2", "a_port")
    assert not Path("/sys/class/net/tgevil0").exists()


def test_sixteen_character_interface_name(build):
    path = build / ARCH / "cabling.csv"
    edit(path, ",p1,", ",p123456789012345,")
    refused(run(build), "cabling.csv:2", "at most 15 bytes (IFNAMSIZ)")


def test_conf_symlink_to_a_root_only_file(build):
    conf = conf_of(build, LEAF)
    conf.unlink()
    conf.symlink_to("/etc/shadow")
    res = run(build)
    refused(res, f"{LEAF}.conf", "symbolic link")
    assert "root:" not in res.output


FRR_CASES = {  # text put after 'ip forwarding' -> which of its lines is the first refused (0-based)
    "log file /etc/frr/x.log": 0,
    "!\nlog file /tmp/x.log": 1,
    "! log file /etc/x": 0,
    "!log file /etc/x": 0,
    "do shell id": 0,
    "shell id": 0,
    "line vty": 0,
    "password x": 0,
    "debug bgp updates": 0,
    "hostname a b": 0,
    " neighbor 10.0.0.1 remote-as 1 ; id": 0,
    "interface p1\n log file /etc/x": 1,
    "hostname x\r": 0,
    "ip forwarding\x00": 0,
    "\tip forwarding": 0,
    "interface p1\n ip address 10.0.0.999/31": 1,
}


@pytest.mark.parametrize("text,bad", FRR_CASES.items(), ids=range(len(FRR_CASES)))
def test_frr_statements_topogen_never_writes(build, text, bad):
    conf = conf_of(build, LEAF)
    at = edit(conf, "ip forwarding\n", f"ip forwarding\n{text}\n")
    refused(run(build), f"{LEAF}.conf:{at + 1 + bad}:")


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "huge", "directory", "random"])
def test_cabling_csv_special_or_huge(build, target):
    path = build / ARCH / "cabling.csv"
    path.unlink()
    if target == "/dev/zero":
        path.symlink_to("/dev/zero")
        needle = "symbolic link"
    elif target == "fifo":
        os.mkfifo(path)
        needle = "a FIFO"
    elif target == "huge":
        with open(path, "wb") as fh:
            fh.truncate(grammar.MAX_CSV_BYTES + 1)  # sparse
        needle = "at most 256.0 MiB"
    elif target == "directory":
        path.mkdir()
        needle = "a directory"
    else:
        path.write_bytes(bytes(range(256)) * 64)
        needle = "not UTF-8"
    refused(run(build), "cabling.csv", needle)


def test_device_node_in_the_build(build):
    conf = conf_of(build, LEAF)
    conf.unlink()
    os.mknod(conf, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero's numbers
    refused(run(build), f"{LEAF}.conf", "a character device")


def test_symlinked_frr_directory(build, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    shutil.move(build / ARCH / "frr", tmp_path / "elsewhere" / "frr")
    (build / ARCH / "frr").symlink_to(tmp_path / "elsewhere" / "frr")
    refused(run(build), "frr", "symbolic link")


def test_carriage_return_in_the_argument_is_escaped(tmp_path):
    res = CliRunner().invoke(main, ["emulate", str(tmp_path / "no\rpe")])
    assert res.exit_code == 2
    assert "\r" not in res.stderr and "no\\rpe" in res.stderr, repr(res.stderr)


def test_private_files_are_made_without_following_links(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root (chown to FRR's user)")
    try:
        import pwd

        pwd.getpwnam("frr")
    except KeyError:
        pytest.skip("FRR's user frr does not exist (apt-get install frr)")
    from topogen.config.emulation.resources import Resources

    res = Resources(f"test{os.getpid()}")
    try:
        assert stat.S_IMODE(os.stat(res.tmp).st_mode) == 0o700
        d = res.private_dir("r0")
        f = res.private_file("r0/frr.conf", "hostname x\n")
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700 and stat.S_IMODE(os.stat(f).st_mode) == 0o600
        (res.tmp / "trap").symlink_to(tmp_path / "victim")
        with pytest.raises(OSError):
            res.private_file("trap", "x")
        assert not (tmp_path / "victim").exists()
    finally:
        res.cleanup()
    assert not res.tmp.exists()


@pytest.mark.parametrize(
    "line",
    ["ip route 10.0.0.0/8 10.0.0.1 ; touch /tmp/x", "ip route 10.0.0.0/8 Null0 tag 5", "ip route 10.0.0.0/8 10.0.0.1 vrf x", "ip route 10.0.0.0/8", " ip route 10.0.0.0/8 blackhole"],
)
def test_a_static_route_beyond_the_grammar_is_refused(build, line):
    """The one statement topogen does not write that emulate takes: ``ip route P A|blackhole``, nothing more on the line."""
    path = conf_of(build, LEAF)
    n = edit(path, "router bgp", f"{line}\nrouter bgp")
    refused(run(build), f"{LEAF}.conf:{n}", "not a statement topogen writes")


def test_a_static_route_passes_the_grammar_and_needs_staticd(demo, tmp_path):
    from topogen.config.emulation.lab import daemons_for

    text = conf_of(demo, LEAF).read_text()
    assert daemons_for(text) == ("zebra", "bgpd", "bfdd")
    routed = text.replace("router bgp", "ip route 10.250.0.0/24 blackhole\nip route 10.251.0.0/24 10.64.0.0\n!\nrouter bgp", 1)
    grammar.check_frr_conf(tmp_path / "x.conf", routed)
    assert daemons_for(routed) == ("zebra", "bgpd", "bfdd", "staticd")
    assert daemons_for("hostname x\n") == ("zebra",)


def test_the_prefix_list_reading_of_blame():
    import ipaddress

    from topogen.config.emulation.blame import config_facts, permitted

    f = config_facts("ip prefix-list LOCAL seq 5 permit 10.0.0.0/16 ge 32\nip prefix-list LOCAL seq 10 permit 10.128.0.0/9 le 32\n")
    assert f["prefix_list"] == [(ipaddress.ip_network("10.0.0.0/16"), "ge"), (ipaddress.ip_network("10.128.0.0/9"), "le")]
    assert permitted("10.0.0.7/32", f["prefix_list"]) and permitted("10.128.0.2/31", f["prefix_list"]) and permitted("10.128.0.0/9", f["prefix_list"])
    assert not permitted("10.0.0.0/31", f["prefix_list"]) and not permitted("10.64.0.0/31", f["prefix_list"]) and not permitted("10.0.0.0/8", f["prefix_list"])
