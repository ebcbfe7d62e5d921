"""What `topogen build` and `compare` tell the user: progress on stderr, --quiet, the files written, size warnings, help texts."""

from __future__ import annotations

import io
import json
import os
import re

import pytest
from click.testing import CliRunner

from topogen import cli
from topogen.cli import main
from topogen.exports import EXPORTERS
from topogen.spec.cluster import build_spec
from topogen.util import progress
from topogen.util.inputs import human_bytes
from topogen.util.progress import Progress


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_progress_lines_without_a_terminal():
    out = io.StringIO()
    p = Progress(3, out, delay=0)
    for phase in ("wiring", "validation", "manifest"):
        p(phase)
    p.done()
    lines = out.getvalue().splitlines()
    assert [ln.split("] ", 1)[1] for ln in lines] == ["wiring", "validation", "manifest"]
    assert all(re.match(r"^topogen: \[ *\d+\.\d s\] ", ln) for ln in lines)


def test_progress_bar_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    out = Tty()
    p = Progress(4, out, delay=0)
    p("wiring")
    p("validation")
    p.done()
    text = out.getvalue()
    assert "\r[############------------] 2/4 validation" in text and "\n" not in text
    assert text.endswith("\r")  # the bar is wiped at the end


def test_quick_work_and_quiet_show_no_progress():
    out = io.StringIO()
    p = Progress(3, out)  # default delay: a quick build says nothing
    p("wiring")
    q = Progress(3, out, enabled=False, delay=0)
    q("wiring")
    assert out.getvalue() == ""


def test_build_progress_on_stderr_only(tmp_path, monkeypatch):
    """Phase lines on stderr (here without the usual 2 s of silence), none on stdout."""
    monkeypatch.setattr(progress, "DELAY", 0)
    res = run("build", "demo", "--out", str(tmp_path / "o"), "--formats", "cabling")
    assert res.exit_code == 0, res.output
    assert "topogen: [" not in res.stdout
    phases = [ln.split("] ", 1)[1] for ln in res.stderr.splitlines() if ln.startswith("topogen: [")]
    assert phases[:6] == ["catalog and closed form", "wiring", "validation", "layout", "bill of materials", "analyses and summary"]
    assert phases[6].startswith("writing cabling, validation") and phases[-1] == "manifest"
    assert all(p.startswith("writing cabling, validation") and p.endswith(" done") for p in phases[7:-1])  # each exporter as it finishes


def test_files_written_are_listed_with_sizes(tmp_path):
    out = tmp_path / "o"
    res = run("build", "demo", "--out", str(out), "--formats", "cabling,slurm")
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / "manifest.json").read_text())
    listing = res.stdout.split(f"in {out}/:\n", 1)[1].splitlines()
    assert res.stdout.count(f" files, ") == 1
    listed = [ln.split()[-1] for ln in listing]
    assert sorted(listed) == sorted([f["path"] for f in manifest["files"]] + ["manifest.json"])
    sizes = {ln.split()[-1]: " ".join(ln.split()[:2]) for ln in listing}
    assert sizes["rail-only/cabling.csv"] == human_bytes((out / "rail-only" / "cabling.csv").stat().st_size)


def test_quiet_prints_nothing_and_still_writes(tmp_path):
    out = tmp_path / "o"
    res = run("build", "demo", "--quiet", "--out", str(out), "--formats", "cabling")
    assert res.exit_code == 0 and res.stdout == "" and res.stderr == ""
    assert (out / "rail-only" / "cabling.csv").exists()


def test_quiet_keeps_errors():
    res = run("build", "demo", "-q", "--gpus", "1001")
    assert res.exit_code == 2 and res.stderr.startswith("error: gpus:")


def test_size_warning_before_a_build_over_1gb(capsys):
    big = build_spec({"name": "big", "gpus": 1048576, "hb_domain": 8, "radix": 64})
    cli.warn_size(big, list(EXPORTERS))
    err = capsys.readouterr().err
    assert err.startswith("warning: this build will write about ") and " GiB (8,388,608 links," in err and "--formats" in err
    cli.warn_size(big, ["slurm", "bom"])  # small formats: no warning
    cli.warn_size(build_spec({"name": "demo", "gpus": 64, "hb_domain": 8, "radix": 16}), list(EXPORTERS))
    assert capsys.readouterr().err == ""


def test_help_texts():
    build_help = re.sub(r"-\s+", "-", " ".join(run("build", "--help").output.split()))  # undo click's line wrapping
    for name in EXPORTERS:
        assert name in build_help  # --formats lists the exporter names
    assert "--quiet" in build_help
    for cmd in ("validate", "compare"):
        text = run(cmd, "--help").output
        assert "output goes to" not in text  # --name is not an output directory there


# --- small things a first user reads ---------------------------------------------------------


def test_depth_warning_for_a_radix_far_too_small():
    """--radix 16 at 131,072 GPUs: 6 tiers, 90,112 switches, 11 switches on a path; said before anything is built."""
    from topogen.spec.counts import depth_warnings

    lines = depth_warnings(build_spec({"gpus": 131072, "hb_domain": 8, "radix": 16}))
    assert lines == [
        "rail-optimized: radix 16 gives 6 switch tiers, 90,112 switches and up to 11 switches on a GPU-to-GPU path for 131,072 GPUs, far from a sensible design (more than 4 tiers); radix 32 would need 4 tiers and 28,672 switches",
        "rail-only: radix 16 gives 5 switch tiers, 73,728 switches and up to 9 switches on a GPU-to-GPU path for 131,072 GPUs, far from a sensible design (more than 4 tiers); radix 32 would need 4 tiers and 28,672 switches",
    ]


def test_depth_warning_on_stderr_of_build(tmp_path):
    res = CliRunner().invoke(main, ["build", "--gpus", "2048", "--hb-domain", "8", "--radix", "8", "--arch", "rail-optimized", "--formats", "cabling", "--out", str(tmp_path / "o"), "-q"])
    assert res.exit_code == 0, res.output
    assert res.stderr.startswith("warning: rail-optimized: radix 8 gives 5 switch tiers, 2,304 switches and up to 9 switches")
    assert res.stdout == ""


@pytest.mark.parametrize(("spec", "why"), [({"gpus": 2097152, "hb_domain": 8, "radix": 64}, "4 tiers: the largest everyday input"), ({"gpus": 65536, "hb_domain": 256, "radix": 64}, "gh200-64k")])
def test_no_depth_warning_for_sensible_designs(spec, why):
    from topogen.spec.counts import depth_warnings

    assert depth_warnings(build_spec(spec)) == [], why


def test_tier4_switches_pluralised(tmp_path):
    res = run("build", "--gpus", "131072", "--hb-domain", "8", "--radix", "32", "--arch", "rail-only", "--formats", "cabling", "--out", str(tmp_path / "o"))
    assert res.exit_code == 0, res.output
    assert "4,096 tier4 switches)" in res.stdout and "switchs" not in res.output


@pytest.mark.parametrize("written", ["0x1F", "0o17", "007", "1e3", "true", "2024"])
def test_yaml_name_kept_as_written(tmp_path, written):
    (tmp_path / "s.yaml").write_text(f"name: {written}\ngpus: 64\nhb_domain: 8\nradix: 16\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        res = run("build", "s.yaml", "--formats", "cabling")
    finally:
        os.chdir(old)
    assert res.exit_code == 0, res.output
    assert [p.name for p in (tmp_path / "out").iterdir()] == [written]
    assert json.loads((tmp_path / "out" / written / "summary.json").read_text())["spec"]["name"] == written


def test_validate_and_diff_headers_have_thousands_separators(tmp_path):
    out = tmp_path / "o"
    assert run("build", "--gpus", "16384", "--hb-domain", "8", "--radix", "64", "--arch", "rail-only", "--formats", "cabling", "--out", str(out)).exit_code == 0
    head = run("validate", str(out / "rail-only" / "cabling.csv")).stdout.splitlines()[0]
    assert "VALID (0 error(s), 0 warning(s)); 16,384 GPUs, 768 switches, 32,768 cables" in head
    lines = (out / "rail-only" / "cabling.csv").read_text().splitlines(keepends=True)
    (tmp_path / "floor.csv").write_text("".join(lines[:4] + lines[5:]))
    res = run("diff", str(out / "rail-only"), str(tmp_path / "floor.csv"))
    head = res.stdout.splitlines()[:2]
    assert "(32,768 cables) vs as-built" in head[0] and "(cabling, 32,767 cables)" in head[0]
    assert head[1].startswith("32,767 identical; 1 deviation(s)")


def test_catalog_and_preset_descriptions_end_at_a_phrase():
    """`topogen catalogs` / `presets`: never cut inside `code`, (parentheses) or "quotes", never mid-word."""
    for cmd in ("catalogs", "presets"):
        for line in run(cmd).stdout.splitlines():
            desc = line.split(None, 1)[1]
            assert desc.count("`") % 2 == 0 and desc.count("(") == desc.count(")") and desc.count('"') % 2 == 0, line
            assert not desc.endswith(("…", " or", " and", " such as", " for", " with")), line
    assert "chassis-400g  A 400 Gb/s Ethernet catalog with fixed leaves and modular chassis spines\n" in run("catalogs").stdout
