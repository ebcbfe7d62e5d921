"""Bad input: one test per case, each with its exact expected message (tests/errors/<case>.log).

Every case must exit with code 2, print no traceback, and write nothing. To accept a
changed message, run ``python tests/test_spec_errors.py --regen`` and review the diff.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from topogen.cli import main

ROOT = Path(__file__).resolve().parent.parent
CASES = sorted(p.stem for p in (ROOT / "tests" / "errors").glob("*.yml"))


def run(args, cwd=ROOT):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.mark.parametrize("case", CASES)
def test_spec_error_case(case, tmp_path):
    out = tmp_path / "out"
    res = run(["build", f"tests/errors/{case}.yml", "--out", str(out)])
    expected = (ROOT / "tests" / "errors" / f"{case}.log").read_text()
    assert res.exit_code == 2
    assert res.stderr == expected
    assert "Traceback" not in res.output
    assert not out.exists()


def test_flag_errors_are_reported_together(tmp_path):
    res = run(["build", "--gpus", "12x", "--hb-domain", "-8", "--radix", "64", "--arch", "mesh", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "gpus: gpus must be a positive whole number, got '12x'" in res.stderr
    assert "hb_domain: hb_domain must be a positive whole number, got '-8'" in res.stderr
    assert "arch: unknown arch 'mesh'; valid values: both, rail-optimized, rail-only" in res.stderr
    assert not (tmp_path / "o").exists()


def test_flags_override_file(tmp_path):
    res = run(["build", "demo", "--arch", "rail-only", "--gpus", "128", "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    import json

    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["spec"]["gpus"] == 128 and summary["spec"]["hb_domain"] == 8
    assert list(summary["architectures"]) == ["rail-only"]


def test_unknown_preset(tmp_path):
    res = run(["build", "nosuchpreset", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert res.stderr.startswith("error: spec: no preset named 'nosuchpreset'; give a YAML file or a preset name (")


def test_output_directory_not_writable(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res = run(["build", "demo", "--out", str(blocker / "sub")])
    assert res.exit_code == 2
    assert res.stderr == f"error: out: cannot write to '{blocker / 'sub'}': '{blocker}' is not a writable directory; choose a writable --out directory\n"


def test_unknown_format(tmp_path):
    res = run(["build", "demo", "--formats", "cabling,pdf", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "formats: unknown format(s) 'pdf'; valid formats: " in res.stderr
    assert not (tmp_path / "o").exists()


def test_failed_run_keeps_previous_output(tmp_path):
    out = tmp_path / "o"
    assert run(["build", "demo", "--out", str(out)]).exit_code == 0
    before = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    res = run(["build", "tests/errors/radix-odd.yml", "--out", str(out)])
    assert res.exit_code == 2
    after = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert before == after
    assert sorted(q.name for q in tmp_path.iterdir()) == ["o"]  # no temp leftovers


def test_exception_during_export_leaves_nothing(tmp_path, monkeypatch):
    from topogen.util import outdir

    out = tmp_path / "o"
    with pytest.raises(RuntimeError):
        with outdir.atomic_dir(out) as tmp:
            (tmp / "half.csv").write_text("a,b\n")
            raise RuntimeError("disk full")
    assert list(tmp_path.iterdir()) == []


if __name__ == "__main__" and "--regen" in sys.argv:
    for case in CASES:
        res = run(["build", f"tests/errors/{case}.yml", "--out", "/nonexistent-topogen-out"])
        (ROOT / "tests" / "errors" / f"{case}.log").write_text(res.stderr)
        print(case, res.exit_code)
