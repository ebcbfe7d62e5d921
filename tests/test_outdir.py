"""The output-directory contract (topogen/util/outdir.py): only topogen's own files are replaced,
atomically; refusals leave nothing behind; killed runs leave the previous output intact and
their leftovers are removed by the next run; SIGINT exits 130 and SIGTERM 143."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from topogen.cli import main
from topogen.util import outdir

TOPOGEN = [sys.executable, "-m", "topogen"]


def build(*args, cwd=None):
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(main, ["build", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


def tree(d: Path) -> dict[str, bytes]:
    """Every entry under ``d`` (hidden ones too) -> its bytes (b"<dir>" for a directory)."""
    out = {}
    for p in sorted(d.rglob("*")):
        rel = p.relative_to(d).as_posix()
        out[rel] = b"<link>" + os.readlink(p).encode() if p.is_symlink() else b"<dir>" if p.is_dir() else p.read_bytes() if p.is_file() else b"<special>"
    return out


@pytest.fixture
def built(tmp_path):
    out = tmp_path / "o"
    assert build("demo", "--formats", "cabling", "--out", str(out)).exit_code == 0
    return out


@pytest.mark.parametrize("where", ["notes.txt", "rail-only/notes.txt", "sub/deep/notes.txt"])
@pytest.mark.parametrize("force", [False, True])
def test_user_file_in_own_output_survives(built, where, force):
    user = built / where
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("mine")
    before = tree(built.parent)
    res = build("demo", "--out", str(built), *(["--force"] if force else []))
    assert res.exit_code == 2
    assert f"holds files topogen did not write: {where}" in res.stderr
    assert ("--force never deletes files topogen did not write" in res.stderr) == force
    assert tree(built.parent) == before


@pytest.mark.parametrize("force", [False, True])
def test_foreign_directory_survives(tmp_path, force):
    d = tmp_path / "projects"
    (d / "a").mkdir(parents=True)
    (d / "a" / "plan.txt").write_text("x")
    (d / "readme").write_text("y")
    before = tree(tmp_path)
    res = build("demo", "--out", str(d), *(["--force"] if force else []))
    assert res.exit_code == 2
    assert f"{str(d)!r} is not empty and holds no topogen manifest.json (a, readme)" in res.stderr
    assert "--force" in res.stderr and "Traceback" not in res.output
    assert tree(tmp_path) == before


def test_foreign_manifest_is_not_topogen(tmp_path):
    d = tmp_path / "o"
    d.mkdir()
    (d / "manifest.json").write_text('{"generator": "other", "files": []}')
    (d / "x").write_text("x")
    res = build("demo", "--out", str(d), "--force")
    assert res.exit_code == 2 and "holds no topogen manifest.json" in res.stderr
    assert sorted(p.name for p in d.iterdir()) == ["manifest.json", "x"]


def test_symlink_inside_output_is_foreign(built, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (built / "link").symlink_to(tmp_path / "elsewhere")
    res = build("demo", "--out", str(built), "--force")
    assert res.exit_code == 2 and "did not write: link" in res.stderr
    assert (built / "link").is_symlink()


def test_changed_outputs_need_force(built):
    with open(built / "summary.json", "a") as fh:
        fh.write("edited\n")
    res = build("demo", "--formats", "cabling", "--out", str(built))
    assert res.exit_code == 2
    assert "holds topogen outputs changed since they were written: summary.json; add --force to replace them" in res.stderr
    res = build("demo", "--formats", "cabling", "--out", str(built), "--force")
    assert res.exit_code == 0, res.output
    assert not (built / "summary.json").read_text().endswith("edited\n")


def test_own_output_and_empty_directory_are_replaced(built, tmp_path):
    assert build("demo", "--formats", "topology", "--out", str(built)).exit_code == 0
    assert (built / "rail-only" / "topology.json").exists() and not (built / "rail-only" / "cabling.csv").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert build("demo", "--formats", "cabling", "--out", str(empty)).exit_code == 0
    assert (empty / "manifest.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "o"]  # no lock, no temporary left


def _special(tmp_path: Path, kind: str) -> str:
    if kind == "file":
        (tmp_path / "f").write_text("x")
        return "f"
    if kind == "fifo":
        os.mkfifo(tmp_path / "p")
        return "p"
    if kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(tmp_path / "s"))
        s.close()
        return "s"
    if kind == "under-file":
        (tmp_path / "f").write_text("x")
        return "f/sub/dir"
    if kind == "under-fifo":
        os.mkfifo(tmp_path / "p")
        return "p/x"
    return kind  # literal paths


@pytest.mark.parametrize("kind", ["file", "fifo", "socket", "under-file", "under-fifo", ".", "..", "/", "./", "sub/..", "/dev/null"])
def test_refused_targets_leave_nothing(tmp_path, kind):
    (tmp_path / "sub").mkdir()
    target = _special(tmp_path, kind)
    before = tree(tmp_path)
    res = build("demo", "--formats", "cabling", "--out", target, cwd=tmp_path)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: out: ") and "Traceback" not in res.output
    assert tree(tmp_path) == before


def test_parent_of_cwd_refused(tmp_path):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    res = build("demo", "--out", str(tmp_path / "a"), cwd=work)
    assert res.exit_code == 2 and "the current directory or one of its parents" in res.stderr


def test_symlinked_output_is_followed(built, tmp_path):
    link = tmp_path / "current"
    link.symlink_to(built.name)
    assert build("demo", "--formats", "topology", "--out", str(link)).exit_code == 0
    assert link.is_symlink() and os.readlink(link) == built.name
    assert (built / "rail-only" / "topology.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["current", "o"]
    dangling = tmp_path / "dangling"
    dangling.symlink_to("nowhere")
    res = build("demo", "--out", str(dangling))
    assert res.exit_code == 2 and "is a symlink to" in res.stderr and not (tmp_path / "nowhere").exists()


def test_stale_leftovers_removed_and_reported(built, tmp_path):
    for name in (".o.tmp-abc123", ".o.old-x_9"):
        (tmp_path / name / "rail-only").mkdir(parents=True)
        (tmp_path / name / "rail-only" / "cabling.csv").write_text("half")
    (tmp_path / ".other.tmp-abc").mkdir()  # another output's: left alone
    res = build("demo", "--formats", "cabling", "--out", str(built))
    assert res.exit_code == 0
    assert "note: removed 2 leftover(s) of an interrupted run" in res.output and ".o.old-x_9, .o.tmp-abc123" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.tmp-abc", "o"]


def test_second_run_into_the_same_directory_is_refused(built, tmp_path):
    lock = tmp_path / ".o.lock"
    with open(lock, "w") as fh:
        fh.write("4242\n")
        fh.flush()
        fcntl.flock(fh, fcntl.LOCK_EX)
        before = tree(built)
        res = build("demo", "--formats", "cabling", "--out", str(built))
    assert res.exit_code == 2
    assert f"another topogen run (pid 4242) is writing {str(built)!r} right now" in res.stderr
    assert tree(built) == before
    assert build("demo", "--formats", "cabling", "--out", str(built)).exit_code == 0  # the lock is free again


def test_exchange_swaps_in_one_step(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("a")
    (b / "y").write_text("b")
    if not outdir.exchange(a, b):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available on this system (the documented fallback is two renames)")
    assert (a / "y").exists() and (b / "x").exists()


# --- killed builds ---------------------------------------------------------------------------

BIG = ["--gpus", "65536", "--hb-domain", "8", "--radix", "64", "--formats", "cabling,topology,xlsx,graphml"]


def _digest_tree(d: Path) -> dict[str, str]:
    return {p.relative_to(d).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*")) if p.is_file()}


def _wait_for(pred, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return False


def _started(pid: int) -> bool:
    """The program runs its own code: numpy is mapped, which only the CLI imports, after ``run()`` took SIGINT and SIGTERM.

    A signal sent earlier can land between fork and exec, where the forked test
    process's own handler swallows it (a slow machine once took 2.8 s there).
    """
    try:
        return "_multiarray_umath" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def _tmp_files(parent: Path) -> int:
    return sum(len(files) for t in parent.glob(".big.tmp-*") for _, _, files in os.walk(t))


# (signal, moment): "build" = before any output is written; "first" = the first file is in
# the temporary directory; "late" = several exporters have written their files.
KILLS = [
    (signal.SIGINT, "build"),
    (signal.SIGINT, "late"),
    (signal.SIGTERM, "build"),
    (signal.SIGTERM, "first"),
    (signal.SIGKILL, "first"),
    (signal.SIGKILL, "late"),
]


def test_killed_builds_keep_previous_output(tmp_path):
    out = tmp_path / "big"
    res = subprocess.run([*TOPOGEN, "build", *BIG, "--out", str(out)], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    before = _digest_tree(out)
    moments = {
        "build": lambda: _started(p.pid),
        "first": lambda: _tmp_files(tmp_path) >= 1,
        "late": lambda: _tmp_files(tmp_path) >= 4,
    }
    for sig, moment in KILLS:
        p = subprocess.Popen([*TOPOGEN, "build", *BIG, "--out", str(out)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        time.sleep(0.5)
        assert _wait_for(moments[moment]), f"{moment} never came"
        if sig == signal.SIGINT:
            os.killpg(p.pid, sig)  # as Ctrl-C in a terminal: the whole process group
        else:
            p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        if sig == signal.SIGKILL:
            os.killpg(p.pid, signal.SIGKILL) if _alive_group(p.pid) else None
            assert p.returncode == -signal.SIGKILL
        else:
            assert p.returncode == 128 + sig, (sig, moment, err)
            said = [ln for ln in err.splitlines() if not ln.startswith("topogen: [")]  # progress lines (phase, elapsed) may come first
            assert "Traceback" not in err and said == [f"topogen: interrupted ({signal.Signals(sig).name}); no partial output was left behind"], err
            assert sorted(q.name for q in tmp_path.iterdir()) == ["big"], (sig, moment)
        assert _digest_tree(out) == before, (sig, moment)
    assert any(q.name.startswith(".big.tmp-") for q in tmp_path.iterdir())  # the SIGKILLed run's
    res = subprocess.run([*TOPOGEN, "build", "demo", "--formats", "cabling", "--out", str(out)], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0 and "leftover(s) of an interrupted run" in res.stdout
    assert sorted(q.name for q in tmp_path.iterdir()) == ["big"]  # no junk


def _alive_group(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
