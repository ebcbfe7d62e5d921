"""Hostile and odd input, one class per test: flags, special files, YAML meaning, wiring files
(what Excel and LibreOffice write), text that lands in comments and CSV fields.

Every refusal is exit 2 with topogen's message and no traceback; the YAML/spec cases with
exact messages are goldens in tests/errors/.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import xml.dom.minidom
from pathlib import Path

import networkx as nx
import pytest
import yaml
from click.testing import CliRunner

from topogen.cli import main
from topogen.spec import counts
from topogen.spec.cluster import LIMITS, load_spec
from topogen.spec.yamlfile import parse_yaml

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, cwd=None):
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def refused(res, *needles):
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and res.stderr.startswith("error: ")
    for n in needles:
        assert n in res.stderr, res.stderr


# --- numbers in flags ---------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--gpus", "--hb-domain", "--radix", "--link-speed", "--planes", "--gpus-per-node"])
@pytest.mark.parametrize("value", ["9" * 5000, "9" * 40, str(2**63), "-" + "9" * 5000, "６４", "1e9", "0x40", "64.0", "6 4"])
def test_numeric_flags_bounded(tmp_path, flag, value):
    args = {"--gpus": "64", "--hb-domain": "8", "--radix": "16"}
    args[flag] = value
    flat = [x for kv in args.items() for x in kv]
    res = cli("build", *flat, "--out", str(tmp_path / "o"))
    refused(res, flag.lstrip("-").replace("-", "_"))
    assert len(res.stderr) < 2000  # the value is quoted truncated
    assert not (tmp_path / "o").exists()


def test_limits_are_generous_for_real_clusters():
    assert LIMITS["gpus"] >= 2**24 and LIMITS["radix"] >= 4096
    s = load_spec(None, {"gpus": str(2**24), "hb_domain": "8", "radix": "4096", "name": "big"})  # accepted, not built
    assert s.gpus == 2**24


def test_divisors_square_root_time():
    for n in range(1, 400):
        assert counts.divisors(n) == tuple(d for d in range(1, n + 1) if n % d == 0)
    assert counts.divisors(2**40) == tuple(2**i for i in range(41))  # instant: 2^20 steps, not 2^40


# --- special and large files ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "dev-urandom", "directory", "large", "binary"])
@pytest.mark.parametrize("role", ["spec", "catalog", "wiring"])
def test_special_input_files_refused(tmp_path, kind, role):
    """Run in a subprocess with a timeout: a FIFO must not block, /dev/zero must not be read."""
    target = {"dev-zero": "/dev/zero", "dev-urandom": "/dev/urandom"}.get(kind, str(tmp_path / f"in{'.csv' if role == 'wiring' else '.yaml'}"))
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        os.mkdir(target)
    elif kind == "large":
        with open(target, "wb") as fh:
            fh.truncate((5 << 30) if role == "wiring" else (2 << 20))  # sparse
    elif kind == "binary":
        Path(target).write_bytes(b"gpus: 64\n\xff\xfe\x00garbage\n")
    if role == "spec":
        args = ["build", target, "--out", str(tmp_path / "o")]
    elif role == "catalog":
        args = ["build", "demo", "--catalog", target if target.endswith(".yaml") or kind.startswith("dev") else target, "--out", str(tmp_path / "o")]
    else:
        args = ["validate", target, "--spec", "demo", "--arch", "rail-only"]
    res = subprocess.run([sys.executable, "-m", "topogen", *args], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr and res.stderr.startswith("error: ")
    assert not (tmp_path / "o").exists()


# --- YAML that means what was written ------------------------------------------------------


def test_yaml_12_scalars():
    d = parse_yaml("a: 3:1\nb: 1:30\nc: no\nd: yes\ne: on\nf: 2024-01-01\ng: 010\nh: 0o10\ni: 0x10\nj: true\nk: ~\nl: 1_000\nm: 1.5e3\n", "spec", "t")
    assert d == {"a": "3:1", "b": "1:30", "c": "no", "d": "yes", "e": "on", "f": "2024-01-01", "g": 10, "h": 8, "i": 16, "j": True, "k": None, "l": "1_000", "m": 1500.0}


def test_unquoted_ratio_equals_quoted(tmp_path):
    for text in ("oversubscription: 3:1", 'oversubscription: "3:1"'):
        (tmp_path / "s.yaml").write_text(f"name: r\ngpus: 64\nhb_domain: 8\nradix: 16\n{text}\n")
        assert load_spec(str(tmp_path / "s.yaml")).oversubscription == "3:1"


@pytest.mark.parametrize("written,name", [("2024", "2024"), ("no", "no"), ("off", "off"), ("'007'", "007")])
def test_name_is_what_was_written(tmp_path, written, name):
    (tmp_path / "s.yaml").write_text(f"name: {written}\ngpus: 64\nhb_domain: 8\nradix: 16\n")
    assert load_spec(str(tmp_path / "s.yaml")).name == name


def test_duplicate_keys_in_a_catalog_name_both_lines(tmp_path):
    text = (ROOT / "templates" / "catalogs" / "paper.yaml").read_text()
    (tmp_path / "c.yaml").write_text(text + "name: again\n")
    res = cli("build", "demo", "--catalog", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "o"))
    first = 1 + next(i for i, line in enumerate(text.splitlines()) if line.startswith("name:"))
    refused(res, f"key 'name' is given twice (first at line {first})", f"at line {len(text.splitlines()) + 1}")


def test_catalog_path_relative_to_the_spec_file(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(ROOT / "templates" / "catalogs" / "ndr-400g.yaml", specs / "mine.yaml")
    (specs / "c.yaml").write_text("name: rel\ngpus: 64\nhb_domain: 8\nradix: 64\ncatalog: mine.yaml\n")
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    res = cli("build", str(specs / "c.yaml"), "--formats", "bom", "--out", "o", cwd=elsewhere)
    assert res.exit_code == 0, res.output
    summary = json.loads((elsewhere / "o" / "summary.json").read_text())
    assert summary["spec"]["catalog"] == "mine.yaml"  # as written: the hash does not depend on where it runs
    res = cli("build", str(specs / "c.yaml"), "--catalog", "mine.yaml", "--out", "o2", cwd=elsewhere)
    refused(res, "unknown catalog 'mine.yaml'")  # a flag is relative to the current directory


# --- wiring files: what spreadsheets write, and hostile ones --------------------------------


@pytest.fixture(scope="module")
def demo_build(tmp_path_factory):
    d = tmp_path_factory.mktemp("demo")
    res = cli("build", "demo", "--arch", "rail-only", "--formats", "cabling,topology", "--out", str(d / "o"))
    assert res.exit_code == 0, res.output
    return d / "o" / "rail-only"


def _validate(path: Path, *extra):
    return cli("validate", str(path), "--spec", "demo", "--arch", "rail-only", *extra)


@pytest.mark.parametrize("bom,eol,delim", [(True, "\r\n", ","), (True, "\r\n", ";"), (False, "\n", "\t"), (True, "\n", ";")])
def test_spreadsheet_saved_cabling_validates(demo_build, tmp_path, bom, eol, delim):
    rows = list(csv.reader((demo_build / "cabling.csv").open(newline="")))
    p = tmp_path / "saved.csv"
    with open(p, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as fh:
        csv.writer(fh, delimiter=delim, lineterminator=eol).writerows(rows)
    res = _validate(p)
    assert res.exit_code == 0, res.output
    assert "spec-mismatch" not in res.output and "VALID" in res.output


def test_libreoffice_semicolon_export_validates(demo_build, tmp_path):
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        pytest.skip("LibreOffice (libreoffice-calc-nogui) is not installed; .ci/run installs it")
    src = tmp_path / "in.csv"
    shutil.copy(demo_build / "cabling.csv", src)
    res = subprocess.run(
        [soffice, f"-env:UserInstallation=file://{tmp_path}/lo-profile", "--headless", "--infilter=CSV:44,34,76,1",
         "--convert-to", "csv:Text - txt - csv (StarCalc):59,34,76,1", "--outdir", str(tmp_path / "out"), str(src)],
        capture_output=True, text=True, timeout=180,
    )
    out = tmp_path / "out" / "in.csv"
    assert out.exists(), res.stdout + res.stderr
    header = out.read_text().splitlines()[0]
    assert header.replace('"', "").startswith("cable;tier;") and "," not in header
    res = _validate(out)
    assert res.exit_code == 0, res.output


def test_rail_only_file_against_its_spec_has_no_hash_warning(demo_build):
    res = _validate(demo_build / "cabling.csv")
    assert res.exit_code == 0 and "spec-mismatch" not in res.output and "0 warning(s)" in res.output


@pytest.mark.parametrize("column,value", [("a_speed_gbps", "9" * 5000), ("cable", "9" * 40), ("z_speed_gbps", "４００"), ("a_speed_gbps", "1e3")])
def test_cabling_numbers_bounded(demo_build, tmp_path, column, value):
    rows = list(csv.DictReader((demo_build / "cabling.csv").open(newline="")))
    rows[3][column] = value
    p = tmp_path / "c.csv"
    with open(p, "w", newline="") as fh:
        w = csv.DictWriter(fh, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    refused(_validate(p), "line 5", "is not a positive whole number")


def test_fullwidth_port_is_not_a_port(demo_build, tmp_path):
    text = (demo_build / "cabling.csv").read_text()
    lines = text.splitlines()
    lines[1] = lines[1].replace(",p1,", ",p１,", 1)
    assert "p１" in lines[1]
    p = tmp_path / "c.csv"
    p.write_text("\n".join(lines) + "\n")
    res = _validate(p)
    assert res.exit_code == 1 and "'p１' is not a port name" in res.output


@pytest.mark.parametrize("mutate,needle", [
    (lambda d: d["edges"][0].__setitem__("speed", 10**5000), "at most 30 are read"),
    (lambda d: d["graph"].__setitem__("spec", {**d["graph"]["spec"], "gpus": 2**25}), "gpus must be at most 16,777,216"),
    (lambda d: d["graph"].__setitem__("spec", {**d["graph"]["spec"], "gpus": 2**24, "radix": 64}), "the file is not a wiring of this spec"),
    (lambda d: d["graph"].__setitem__("spec", {**d["graph"]["spec"], "name": "x\ny"}), "is not a safe directory name"),
])
def test_received_topology_json_bounded(demo_build, tmp_path, mutate, needle):
    d = json.loads((demo_build / "topology.json").read_text())
    mutate(d)
    p = tmp_path / "t.json"
    import sys as _sys

    old = _sys.get_int_max_str_digits()
    _sys.set_int_max_str_digits(0)
    try:
        p.write_text(json.dumps(d))
    finally:
        _sys.set_int_max_str_digits(old)
    refused(cli("validate", str(p)), needle)


def test_deep_json_nesting_refused(tmp_path):
    p = tmp_path / "t.json"
    p.write_text("[" * 100_000 + "]" * 100_000)
    refused(cli("validate", str(p), "--spec", "demo", "--arch", "rail-only"), "nested too deeply")


# --- text into files -----------------------------------------------------------------------


def test_name_with_double_dash_gives_parseable_graphml_and_dot(tmp_path):
    res = cli("build", "demo", "--name", "a--b-", "--formats", "graphml,diagrams", "--out", str(tmp_path / "o"))
    assert res.exit_code == 0, res.output
    for arch in ("rail-optimized", "rail-only"):
        p = tmp_path / "o" / arch / "topology.graphml"
        xml.dom.minidom.parse(str(p))  # strict XML parser: a '--' in a comment fails
        assert nx.read_graphml(p).graph["generator"].endswith(" sha256:" + nx.read_graphml(p).graph["spec_sha256"][:16]) and "a--b-" in nx.read_graphml(p).graph["generator"]


HOSTILE_TEXT = ['=HYPERLINK("http://x","y")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", 'semi;colon "quoted", comma']


def test_catalog_text_lands_quoted_and_neutralised(tmp_path):
    data = yaml.safe_load((ROOT / "templates" / "catalogs" / "paper.yaml").read_text())
    items = [x for key in ("switches", "transceivers", "cables", "nics") for x in data.get(key) or []]
    for i, item in enumerate(items):
        item["description"] = HOSTILE_TEXT[i % len(HOSTILE_TEXT)]
        item["price_source"] = HOSTILE_TEXT[(i + 1) % len(HOSTILE_TEXT)]
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(data))
    res = cli("build", "demo", "--catalog", str(tmp_path / "c.yaml"), "--formats", "bom,netbox", "--out", str(tmp_path / "o"))
    assert res.exit_code == 0, res.output
    for p in (tmp_path / "o").rglob("*.csv"):
        text = p.read_text()
        rows = list(csv.reader(text.splitlines(keepends=True)))
        assert len({len(r) for r in rows}) == 1, p  # no record split
        for r in rows:
            for cell in r:
                assert not cell.startswith(("=", "+", "@", "\t", "\r")) and not (cell.startswith("-") and not cell[1:2].isdigit() and cell != "-"), (p, cell)
        for line in text.splitlines():
            if ";" in line:
                assert all(field.count(";") == 0 or field.startswith('"') for field in _raw_fields(line)), (p, line)


def _raw_fields(line: str) -> list[str]:
    """Fields as written (quotes kept), split on commas outside quotes."""
    out, cur, quoted = [], "", False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


@pytest.mark.parametrize("char", ["\r", "\n", "\t", "\x00", "\x1b", "\u2028", "\x85"])
def test_control_characters_in_catalog_text_refused(tmp_path, char):
    data = yaml.safe_load((ROOT / "templates" / "catalogs" / "paper.yaml").read_text())
    data["switches"][0]["description"] = f"switch{char}=cmd"
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(data))
    res = cli("build", "demo", "--catalog", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "o"))
    refused(res, "switches[0].description: description contains the control character")
    assert not (tmp_path / "o").exists()


# --- as-built files, sweeps, analysis numbers -------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "deep-json", "long-port"])
def test_asbuilt_files_bounded(tmp_path, kind):
    plan = tmp_path / "plan"
    assert cli("build", "demo", "--arch", "rail-only", "--formats", "cabling", "--out", str(plan)).exit_code == 0
    if kind == "fifo":
        target = tmp_path / "f.topo"
        os.mkfifo(target)
    elif kind == "dev-zero":
        target = Path("/dev/zero")
    elif kind == "deep-json":
        target = tmp_path / "sw.json"
        target.write_text("[" * 100_000 + "]" * 100_000)
    else:
        target = tmp_path / "x.topo"
        target.write_text('Switch 36 "S-1" # "rail0-leaf" lid 1\n[' + "9" * 5000 + ']\t"H-1"[1]\n')
    res = subprocess.run([sys.executable, "-m", "topogen", "diff", str(plan), str(target)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "Traceback" not in res.stderr


def test_compare_sweep_bounded():
    gpus = ",".join(str(64 * i) for i in range(1, 200))
    refused(cli("compare", "--gpus", gpus, "--hb-domain", "8,16,32", "--radix", "16,32"), "the sweep has 1,194 combinations", "at most 1,000")


def test_analysis_batch_digits_bounded():
    res = cli("analyze", "iteration", "demo", "--batch", "9" * 5000 + "x2048")
    assert res.exit_code == 2 and "Traceback" not in res.output


@pytest.mark.parametrize("batch", ["1e300", "2e15", "999999999999999x999999999999999"])
def test_analysis_batch_bounded(batch):
    """A batch above 1e15 tokens is refused: the times it gives overflow (a plot's axis once raised on 1e300)."""
    refused(cli("analyze", "iteration", "demo", "--batch", batch), "at most 1e15 tokens")


@pytest.mark.parametrize("batch", ["1e300", "999999999999999x999999999999999"])
def test_workload_batch_bounded_in_build(tmp_path, batch):
    (tmp_path / "s.yaml").write_text(f"name: s\ngpus: 64\nhb_domain: 8\nradix: 16\nworkload: {{model: gpt-3-175b, gpu: h100, batch: {batch}}}\n")
    refused(cli("build", "s.yaml", "--formats", "plots", "--out", "o", cwd=tmp_path), "workload.batch: batch must be tokens or SEQUENCESxLENGTH", "at most 1e15 tokens")
    assert not (tmp_path / "o").exists()


def test_workload_batch_at_the_bound_plots(tmp_path):
    (tmp_path / "s.yaml").write_text("name: s\ngpus: 64\nhb_domain: 8\nradix: 16\nworkload: {model: gpt-3-175b, gpu: h100, batch: 1e15}\n")
    res = cli("build", "s.yaml", "--formats", "plots", "--out", "o", cwd=tmp_path)
    assert res.exit_code == 0, res.output
    assert list((tmp_path / "o").rglob("*.svg")) or list((tmp_path / "o").rglob("*.png"))


@pytest.mark.parametrize("value", ["1e999", "inf", "nan", "-1", "0", "9" * 5000])
@pytest.mark.parametrize("args", [["alltoall", "demo", "--model", "deepseek-v3", "--hb-bandwidth"], ["checkpoint", "demo", "--write-GBps"], ["checkpoint", "demo", "--interval-h"]])
def test_analysis_float_flags_finite(args, value):
    res = cli("analyze", *args, value)
    assert res.exit_code == 2 and "must be a finite number above 0" in res.output or "is not a number" in res.output, res.output


def test_catalog_key_typo_says_what_it_meant(tmp_path):
    data = yaml.safe_load((ROOT / "templates" / "catalogs" / "paper.yaml").read_text())
    data["switches"][0]["price-per-port-usd"] = data["switches"][0].pop("price_per_port_usd")
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(data))
    res = cli("build", "demo", "--catalog", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "o"))
    refused(res, "switches[0].price-per-port-usd: unknown key 'price-per-port-usd'; did you mean price_per_port_usd?")
