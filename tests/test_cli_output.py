"""What `topogen build` and `compare` tell the user: progress on stderr, --quiet, the files written, size warnings, help texts."""

from __future__ import annotations

import io
import json
import re

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
    assert phases[6].startswith("writing cabling, validation") and phases[7:] == ["manifest"]


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
