"""The hostile-directory suite (issue #35): thousands of generated hostile build directories and files,
across every command that reads one: emulate, validate, diff, simulate, search --results, build.

Cases are mutations of the real files of one demo build made per session (cabling.csv,
addressing.csv, the frr.conf files, a results file, the demo spec): injected newlines and
NULs, shell and ``ip`` metacharacters, over-long fields, non-ASCII digits, control and
line-separator characters, FRR statements topogen never writes, symlinks, FIFOs, device
nodes, sparse huge files, random bytes. Each case runs in-process (click's CliRunner) and
asserts:

* the exit code: 2 (bad input) for emulate, simulate, build and a results file that is not one;
  ``validate`` and ``diff`` may find the wiring wrong instead (1, their documented code for
  findings); a damaged results line is not reused (0, a note names the line);
* the file named, and the line for text (``file:line`` or ``line N``);
* no traceback, no exception escaping the CLI;
* no command run: the payloads would create a marker file, which must not exist;
* nothing outside the case's own directory changed: no emulate temporary directory, network
  namespace or /var/run/frr directory left, the marker absent.

emulate's grammar is exercised without booting FRR: the machine checks (root, FRR), which come
after the grammar, are replaced by a refusal of their own, so a case the grammar let through
fails here by name instead of booting anything. ``TOPOGEN_HOSTILE_SAMPLE=N`` runs every N-th
case only (a quick look); by default every case runs.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
import yaml
from click.testing import CliRunner

from topogen.cli import main
from topogen.config import emulate
from topogen.config.emulation import grammar
from topogen.config.emulation.resources import ns_tag
from topogen.util.errors import Problem

ARCH = "rail-optimized"
MARKER = Path(tempfile.gettempdir()) / f"topogen-hostile-marker-{os.getpid()}"
SAMPLE = int(os.environ.get("TOPOGEN_HOSTILE_SAMPLE", "1"))

# hostile cell values: each is invalid in every field of every file it is put in
PAYLOADS = {
    "newline-cmd": f"p1\nnetns exec 1 touch {MARKER}",
    "cr": "p1\rtouch",
    "crlf-cmd": f"10.0.0.1/31\r\nroute add default dev lo; touch {MARKER}",
    "nul": "p\x001",
    "semicolon": f"p1; touch {MARKER}",
    "dollar": f"$(touch {MARKER})",
    "backtick": f"`touch {MARKER}`",
    "pipe": f"p1 | touch {MARKER}",
    "space-keyword": "p1 netns 1",
    "veth": "nic0 type veth peer name tgevil",
    "dash-option": "-force",
    "dotdot": "../../etc/passwd",
    "slash": "/etc/shadow",
    "long-16": "p123456789012345",
    "long-5000": "9" * 5000,
    "fullwidth": "p１",
    "arabic-digits": "١٢",
    "line-separator": "p1\u2028x",
    "tab": "p1\tx",
    "quote": 'p1"x',
    "glob": "p*",
    "empty-ish": " ",
    "formula": "=cmd|' /C calc'!A0",
    "unicode-name": "léaf",
}
ADDRESSING_COLUMNS = ("device", "role", "interface", "vrf", "vlan", "address", "asn", "peer_device", "peer_interface", "peer_address", "route")
CABLING_COLUMNS = ("a_device", "a_port", "z_device", "z_port")
FRR_LINES = (
    "log file /etc/frr/x.log",
    "log syslog",
    "do shell id",
    "shell id",
    "line vty",
    "password x",
    "enable password x",
    "debug bgp updates",
    "hostname a b",
    "!log file /tmp/x",
    "! log file /tmp/x",
    "interface p1 vrf ../x",
    " ip address 10.0.0.999/31",
    " neighbor 10.0.0.1 remote-as 1 ; id",
    f" description x; touch {MARKER}",
    "router bgp 1 vrf /etc",
    "ip prefix-list LOCAL seq 5 permit 0.0.0.0/0",
    "route-map X permit 10",
    " set ip next-hop 1.2.3.4",
    "agentx",
    "frr version 8.4",
    "write file",
    "copy running-config /etc/x",
    "hostname x\r",
    "ip forwarding\x00",
    "\tip forwarding",
    "ip forwarding ",
    "interface lo\u2028",
    "exit ; id",
    "bfd\n profile fabric\n  receive-interval 10\n  echo-mode",
)
KINDS = ("symlink-passwd", "symlink-devzero", "symlink-dir", "fifo", "chardev", "directory", "huge", "random", "nul-middle", "latin1")


# -- the one build of the session -----------------------------------------------------------------


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile-dirs")
    res = CliRunner().invoke(main, ["build", "demo", "--formats", "cabling,addressing,frr", "--out", str(root / "demo"), "-q"])
    assert res.exit_code == 0, res.output
    return root / "demo"


@pytest.fixture(scope="module")
def work(pristine, tmp_path_factory) -> Path:
    """One working copy of the build; every case mutates it and puts it back."""
    dst = tmp_path_factory.mktemp("hostile-work") / "demo"
    shutil.copytree(pristine, dst)
    return dst


@pytest.fixture(autouse=True)
def no_machine(monkeypatch):
    monkeypatch.setattr(emulate, "environment_problems", lambda: [Problem("machine-check", "the grammar let this build through")])


def _outside() -> tuple:
    """What a case could leave outside its directory: emulate's temp dirs, namespaces and FRR run dirs of this process, the marker.

    The cases run in this process, and emulate names all it makes after its pid; other
    processes (another emulate run on the machine) are not this suite's to judge.
    """
    pid = os.getpid()
    tmp = tuple(sorted(n for n in os.listdir(tempfile.gettempdir()) if n.startswith(f"topogen-emulate-{pid}-")))
    ns = tuple(sorted(n for n in os.listdir("/run/netns") if n.startswith(ns_tag(pid)))) if os.path.isdir("/run/netns") else ()
    frr = tuple(sorted(n for n in os.listdir("/var/run/frr") if n.startswith(ns_tag(pid)))) if os.path.isdir("/var/run/frr") else ()
    state = Path(f"/run/topogen-emulate/{pid}.json").exists()
    return tmp, ns, frr, state, MARKER.exists()


@dataclass(frozen=True)
class Case:
    id: str
    command: str  # emulate, validate, diff, simulate
    target: str  # path relative to the arch dir ("" the arch dir itself)
    mutate: Callable[[Path], None]
    names: tuple[str, ...]  # text the error must contain (file, line)


def _cells(path: Path, line_no: int, col: str, value: str, csv_quote: bool = True) -> Callable[[Path], None]:
    def go(p: Path) -> None:
        import csv
        import io

        with open(p, newline="") as fh:
            rows = list(csv.reader(fh))
        header = rows[0]
        rows[line_no - 1][header.index(col)] = value
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        p.write_text(buf.getvalue())

    return go


def _insert_line(after: int, text: str) -> Callable[[Path], None]:
    def go(p: Path) -> None:
        lines = p.read_text().split("\n")
        lines[after:after] = [text]
        p.write_text("\n".join(lines))

    return go


def _kind(kind: str) -> Callable[[Path], None]:
    def go(p: Path) -> None:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()
        if kind == "symlink-passwd":
            p.symlink_to("/etc/passwd")
        elif kind == "symlink-devzero":
            p.symlink_to("/dev/zero")
        elif kind == "symlink-dir":
            p.symlink_to("/etc")
        elif kind == "fifo":
            os.mkfifo(p)
        elif kind == "chardev":
            os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(1, 5))
        elif kind == "directory":
            p.mkdir()
        elif kind == "huge":
            with open(p, "wb") as fh:
                fh.truncate(grammar.MAX_CSV_BYTES + 1)
        elif kind == "random":
            p.write_bytes(random.Random(hash(str(p)) & 0xFFFF).randbytes(3000) + b"\xff")
        elif kind == "nul-middle":
            p.write_bytes(b"device,role\nx\x00y,leaf\n")
        elif kind == "latin1":
            p.write_bytes("device,role\nl\xe9af,leaf\n".encode("latin-1"))

    return go


def _build_cases(pristine: Path) -> list[Case]:
    arch = pristine / ARCH
    addressing = (arch / "addressing.csv").read_text().split("\n")
    cabling = (arch / "cabling.csv").read_text().split("\n")
    confs = sorted((arch / "frr").rglob("*.conf"))
    cases: list[Case] = []
    # addressing.csv: a spread of rows (switch ports, loopbacks, GPUs) x every column x every payload
    n_addr = len([x for x in addressing if x]) - 1
    rows = sorted({2, 3, n_addr + 1} | {2 + (i * (n_addr - 1)) // 5 for i in range(6)})
    for line in rows:
        for col in ADDRESSING_COLUMNS:
            for name, value in PAYLOADS.items():
                cases.append(Case(f"emulate-addressing-l{line}-{col}-{name}", "emulate", "addressing.csv", _cells(Path(), line, col, value), (".csv:",)))  # a renamed device may surface at the cable naming it
    # cabling.csv: rows x columns x payloads, for emulate, validate, simulate and diff
    n_cab = len([x for x in cabling if x]) - 1
    crows = sorted({2, n_cab + 1} | {2 + (i * (n_cab - 1)) // 3 for i in range(4)})
    for command in ("emulate", "validate", "simulate", "diff"):
        for line in crows:
            for col in CABLING_COLUMNS:
                for name, value in PAYLOADS.items():
                    need = ("cabling.csv:",) if command == "emulate" else ("cabling.csv", "line")
                    cases.append(Case(f"{command}-cabling-l{line}-{col}-{name}", command, "cabling.csv", _cells(Path(), line, col, value), need))
    # frr.conf: hostile statements at several places of several files
    for conf in (confs[0], confs[len(confs) // 2], confs[-1]):
        rel = conf.relative_to(arch).as_posix()
        n = len(conf.read_text().split("\n"))
        for at in sorted({1, 3, 6, n // 2, n - 3, n - 1}):
            for k, text in enumerate(FRR_LINES):
                cases.append(Case(f"emulate-{conf.stem}-at{at}-{k}", "emulate", rel, _insert_line(at, text), (f"{conf.name}:",)))
    # file kinds: every file emulate reads, the frr directory and one switch folder
    for target in ("addressing.csv", "cabling.csv", confs[0].relative_to(arch).as_posix(), confs[-1].relative_to(arch).as_posix(), "frr", confs[0].parent.relative_to(arch).as_posix()):
        for kind in KINDS:
            if target.endswith(".csv") or target.endswith(".conf") or kind.startswith("symlink"):
                name = Path(target).name
                cases.append(Case(f"emulate-kind-{target.replace('/', '_')}-{kind}", "emulate", target, _kind(kind), (name,)))
    for command in ("validate", "simulate", "diff"):
        for kind in KINDS:
            if kind not in ("symlink-passwd", "symlink-dir"):  # a symlinked cabling.csv given by the user is the user's own choice
                cases.append(Case(f"{command}-kind-cabling-{kind}", command, "cabling.csv", _kind(kind), ("cabling.csv",)))
    return cases


def _case_list() -> list[Case]:
    """The cases, generated from a build made once at collection (the fixture makes the one the cases run on)."""
    root = Path(tempfile.mkdtemp(prefix="topogen-hostile-collect-"))
    try:
        res = CliRunner().invoke(main, ["build", "demo", "--formats", "cabling,addressing,frr", "--out", str(root / "demo"), "-q"])
        assert res.exit_code == 0, res.output
        cases = _build_cases(root / "demo")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return cases[::SAMPLE]


CASES = _case_list()


def _restore(work: Path, pristine: Path, target: str) -> None:
    dst, src = work / ARCH / target, pristine / ARCH / target
    if dst.is_symlink() or (dst.exists() and not dst.is_dir()):
        dst.unlink()
    elif dst.is_dir():
        shutil.rmtree(dst)
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        shutil.copy2(src, dst)


def _args(case: Case, work: Path) -> list[str]:
    arch = work / ARCH
    if case.command == "emulate":
        return ["emulate", str(work), "--arch", ARCH]
    if case.command == "validate":
        return ["validate", str(arch / "cabling.csv"), "--spec", "demo", "--arch", ARCH]
    if case.command == "simulate":
        return ["simulate", str(arch / "cabling.csv"), "--spec", "demo", "--arch", ARCH]
    return ["diff", str(arch / "cabling.csv"), str(work.parent / "found" / "cabling.csv"), "--spec", "demo"]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_directory(case: Case, work: Path, pristine: Path):
    if case.command == "diff":  # the hostile file is what the floor reports; the plan is the pristine build
        found = work.parent / "found"
        found.mkdir(exist_ok=True)
        if not (found / "cabling.csv").exists() or (found / "cabling.csv").is_symlink() or not (found / "cabling.csv").is_file():
            _clear(found / "cabling.csv")
            shutil.copy2(pristine / ARCH / "cabling.csv", found / "cabling.csv")
        target = found / "cabling.csv"
        args = ["diff", str(pristine / ARCH / "cabling.csv"), str(target), "--spec", "demo"]
    else:
        target = work / ARCH / case.target
        args = _args(case, work)
    before = _outside()
    try:
        case.mutate(target)
        res = CliRunner().invoke(main, args, catch_exceptions=True)
    finally:
        if case.command == "diff":
            _clear(target)
            shutil.copy2(pristine / ARCH / "cabling.csv", target)
        else:
            _restore(work, pristine, case.target)
    exc = res.exception
    assert exc is None or isinstance(exc, SystemExit), f"{type(exc).__name__}: {exc}"
    out = res.output
    assert "Traceback" not in out
    assert "machine-check" not in out, "the grammar let this build through"
    codes = (2,) if case.command in ("emulate", "simulate") else (1, 2)
    assert res.exit_code in codes, (res.exit_code, out[-1500:])
    for n in case.names:
        assert n in out, (n, out[-1500:])
    assert _outside() == before, "something outside the case's directory changed"


def _clear(p: Path) -> None:
    if p.is_symlink() or (p.exists() and not p.is_dir()):
        p.unlink()
    elif p.is_dir():
        shutil.rmtree(p)


# -- search --results and build with a hostile spec -----------------------------------------------

SEARCH = {
    "name": "small",
    "workload": {"model": "gpt-3-175b", "gpu": "b200"},
    "search": {"gpus": 4096, "space": {"arch": ["rail-optimized"], "hb_domain": [8], "catalog": ["ndr-400g"], "radix": [64], "link_speed": [400], "oversubscription": ["1:1", "3:1"]}, "objectives": ["capex", "power"]},
}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> tuple[Path, list[str]]:
    d = tmp_path_factory.mktemp("hostile-results")
    (d / "s.yaml").write_text(yaml.safe_dump(SEARCH))
    res = CliRunner().invoke(main, ["search", str(d / "s.yaml"), "--out", str(d / "o"), "--jobs", "1", "-q", "--results", str(d / "r.jsonl")])
    assert res.exit_code == 0, res.output
    return d, (d / "r.jsonl").read_text().splitlines()


_HONEST: dict[str, list] = {}


def honest(results) -> list:
    """The front of the search with its honest results file."""
    d, lines = results
    if "front" not in _HONEST:
        res = CliRunner().invoke(main, ["search", str(d / "s.yaml"), "--out", str(d / "o2"), "--jobs", "1", "--json", "--results", str(d / "r.jsonl")])
        assert res.exit_code == 0, res.output
        _HONEST["front"] = json.loads(res.stdout)["front"]
    return _HONEST["front"]


def _result_lines() -> dict[str, Callable[[dict], str]]:
    out: dict[str, Callable[[dict], str]] = {}
    for name, value in list(PAYLOADS.items())[::3]:
        out[f"sha-{name}"] = lambda e, v=value: json.dumps({**e, "spec_sha256": v})
        out[f"generator-ok-figures-{name}"] = lambda e, v=value: json.dumps({**e, "figures": v})
    for key in ("cost_usd", "power_w", "tiers", "switches", "links", "iteration_s", "switches_per_tier", "racks", "valid"):
        for bad in (-1e12, None, "x", [], {}, 1e308, -1, True, 10**400):
            if bad is None and key in ("racks", "iteration_s") or (key, bad) == ("valid", True):
                continue  # a valid figure (no layout, no workload), or the line as written
            out[f"{key}-{bad!r:.12}"] = lambda e, k=key, b=bad: json.dumps({**e, "figures": {**e["figures"], k: b}}, default=str)
    out["deep"] = lambda e: "[" * 50_000 + "]" * 50_000
    out["deep-object"] = lambda e: '{"a":' * 20_000 + "1" + "}" * 20_000
    out["nul"] = lambda e: json.dumps(e)[:20] + "\x00" + json.dumps(e)[20:]
    out["cut"] = lambda e: json.dumps(e)[:40]
    return out


RESULT_LINES = _result_lines()


@pytest.mark.parametrize("name", list(RESULT_LINES)[::SAMPLE])
def test_hostile_results_line(name, results, tmp_path):
    d, lines = results
    entry = json.loads(lines[1])
    bad = RESULT_LINES[name](entry)
    if bad == lines[1]:
        pytest.skip("the mutation leaves the line as written (not hostile)")
    (tmp_path / "r.jsonl").write_text("\n".join([*lines, bad]) + "\n")  # last: it overrides the honest line of its design
    before = _outside()
    res = CliRunner().invoke(main, ["search", str(d / "s.yaml"), "--out", str(tmp_path / "o"), "--jobs", "1", "--json", "--results", str(tmp_path / "r.jsonl")], catch_exceptions=True)
    assert res.exception is None or isinstance(res.exception, SystemExit), f"{type(res.exception).__name__}: {res.exception}"
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output[-1500:]
    got = json.loads(res.stdout)
    assert got["front"] == honest(results) and got["chosen"]["design"] == honest(results)[0]["design"]
    for row in got["front"]:
        assert 0 <= row["cost_usd"] < 1e15 and 0 <= row["power_w"] < 1e15
    assert _outside() == before


SPEC_FIELDS = ("name", "gpus", "hb_domain", "radix", "link_speed", "arch", "planes", "oversubscription", "catalog", "rail_packing", "leaf_packing", "striping", "design", "homing", "gpus_per_node", "scalable_unit")


SPEC_CASES = [(f, p) for f in SPEC_FIELDS for p in PAYLOADS if (f, p) != ("name", "long-16")][::SAMPLE]  # "p123456789012345" is a fine cluster name


@pytest.mark.parametrize("field,payload", SPEC_CASES, ids=[f"{f}-{p}" for f, p in SPEC_CASES])
def test_hostile_spec_field(field, payload, tmp_path):
    spec = {"name": "demo", "gpus": 64, "hb_domain": 8, "radix": 16, field: PAYLOADS[payload]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec, allow_unicode=True))
    before = _outside()
    res = CliRunner().invoke(main, ["build", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "o")], catch_exceptions=True)
    assert res.exception is None or isinstance(res.exception, SystemExit), f"{type(res.exception).__name__}: {res.exception}"
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output[-1500:]
    assert f"{field}" in res.stderr, res.stderr[-1500:]
    assert not (tmp_path / "o").exists() and _outside() == before
