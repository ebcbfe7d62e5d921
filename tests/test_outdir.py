"""The output-directory contract (topogen/util/outdir.py): only topogen's own files are replaced,
atomically; refusals leave nothing behind; killed runs leave the previous output intact and
their leftovers are removed by the next run; SIGINT exits 130 and SIGTERM 143."""

from __future__ import annotations

import fcntl
import hashlib
import json
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


def _killed_run(parent: Path, name: str, pid: int = 999_999_999) -> outdir.Run:
    """What a run into ``parent/name`` killed outright leaves: its marker and a half-written temporary directory."""
    run = outdir.Run(parent / name, "0123456789abcdef")
    run.marker.write_text(outdir.Run.text(pid, run.token))
    (run.tmp / "rail-only").mkdir(parents=True)
    (run.tmp / "rail-only" / "cabling.csv").write_text("half")
    return run


def test_proven_leftovers_removed_and_reported(built, tmp_path):
    run = _killed_run(tmp_path, "o")
    (tmp_path / ".other.tmp-abc").mkdir()  # another output's: left alone
    res = build("demo", "--formats", "cabling", "--out", str(built))
    assert res.exit_code == 0
    assert f"note: removed 1 leftover(s) of an interrupted run in {str(tmp_path)!r}: {run.tmp.name}" in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.tmp-abc", "o"]


@pytest.mark.parametrize("marker", ["none", "other-token", "edited", "symlink", "directory"])
def test_user_directories_shaped_like_leftovers_survive(built, tmp_path, marker):
    """``.o.old-2024/notes.txt`` is the user's: only a marker with topogen's pid and token proves otherwise."""
    for name in (".o.old-2024", ".o.tmp-abc123", ".o.tmp-0123456789abcdef"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "notes.txt").write_text("mine")
    good = outdir.Run.text(4242, "0123456789abcdef")
    m = tmp_path / ".o.run-0123456789abcdef"
    if marker == "other-token":
        m.write_text(outdir.Run.text(4242, "fedcba9876543210"))
    elif marker == "edited":
        m.write_text(good + "more\n")
    elif marker == "symlink":
        (tmp_path / "elsewhere").write_text(good)
        m.symlink_to(tmp_path / "elsewhere")
    elif marker == "directory":
        m.mkdir()
    before = tree(tmp_path)
    res = build("demo", "--formats", "cabling", "--out", str(built))
    assert res.exit_code == 0, res.output
    assert "leftover(s)" not in res.output
    assert f"note: left .o.old-2024, .o.tmp-0123456789abcdef, .o.tmp-abc123 in {str(tmp_path)!r} alone: nothing shows that topogen made them" in res.output
    after = tree(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("o/") and k != "o"} == {k: v for k, v in before.items() if not k.startswith("o/") and k != "o"}


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
            assert p.returncode == 128 + sig, (sig, moment, "the interrupt was lost: the build ran to the end" if p.returncode == 0 else err)
            assert _wait_for(lambda: not _group_members(p.pid), 10), (sig, moment, "processes of the run left behind", _group_members(p.pid))
            said = [ln for ln in err.splitlines() if not ln.startswith("topogen: [")]  # progress lines (phase, elapsed) may come first
            assert "Traceback" not in err and said == [f"topogen: interrupted ({signal.Signals(sig).name}); no partial output was left behind"], err
            assert sorted(q.name for q in tmp_path.iterdir()) == ["big"], (sig, moment)
        assert _digest_tree(out) == before, (sig, moment)
    assert any(q.name.startswith(".big.tmp-") for q in tmp_path.iterdir())  # the SIGKILLed run's
    res = subprocess.run([*TOPOGEN, "build", "demo", "--formats", "cabling", "--out", str(out)], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0 and "leftover(s) of an interrupted run" in res.stdout
    assert sorted(q.name for q in tmp_path.iterdir()) == ["big"]  # no junk


def _group_members(pgid: int) -> list[int]:
    """The processes (not zombies) of process group ``pgid``: a run's workers and children."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] != "Z" and int(fields[2]) == pgid:
                out.append(int(d.name))
    return out


def _alive_group(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def test_sigkill_takes_the_exporter_workers_along(tmp_path):
    """A build killed outright leaves no orphaned workers behind, and none prints a BrokenPipeError traceback."""
    p = subprocess.Popen([*TOPOGEN, "build", *BIG, "--jobs", "2", "--out", str(tmp_path / "big")], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    children = Path(f"/proc/{p.pid}/task/{p.pid}/children")
    workers: list[int] = []

    def two_workers() -> bool:
        workers[:] = [int(x) for x in children.read_text().split()] if children.exists() else []
        return len(workers) >= 2

    assert _wait_for(two_workers, 120), "the workers never started"
    time.sleep(0.5)  # they are busy with their first tasks
    p.kill()
    _, err = p.communicate(timeout=60)  # returns when every holder of the pipe (the workers too) has gone
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert _wait_for(lambda: not any(_running(w) for w in workers), 10), workers


def _running(pid: int) -> bool:
    """``pid`` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


# --- the two-rename fallback ---------------------------------------------------------------

FALLBACK = """
import os, signal, sys
from topogen.util import outdir
outdir._exchange = lambda a, b: False  # a filesystem without renameat2(RENAME_EXCHANGE)
if {kill}:
    rename = os.rename
    def killed_between(src, dst):
        rename(src, dst)
        if ".old-" in os.fspath(dst):
            os.kill(os.getpid(), signal.SIGKILL)  # power lost between the two renames
    os.rename = killed_between
sys.argv = ["topogen", *sys.argv[1:]]
from topogen.__main__ import run
run()
"""


def fallback_build(tmp_path: Path, *args: str, kill: bool) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", FALLBACK.format(kill=kill), "build", *args], cwd=tmp_path, capture_output=True, text=True)


def test_fallback_swap_replaces_the_output(built, tmp_path):
    res = fallback_build(tmp_path, "demo", "--formats", "topology", "--out", "o", kill=False)
    assert res.returncode == 0, res.stderr
    assert (built / "rail-only" / "topology.json").exists() and not (built / "rail-only" / "cabling.csv").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


def test_fallback_swap_killed_between_the_renames_is_put_back(built, tmp_path):
    """No RENAME_EXCHANGE, killed with no ``o`` in place: the old output waits in .o.old-*, the next run puts it back."""
    before = _digest_tree(built)
    res = fallback_build(tmp_path, "demo", "--formats", "topology", "--out", "o", kill=True)
    assert res.returncode == -signal.SIGKILL
    left = sorted(p.name for p in tmp_path.iterdir())
    assert "o" not in left and [n[:7] for n in left] == [".o.lock", ".o.old-", ".o.run-", ".o.tmp-"], left
    old = next(tmp_path.glob(".o.old-*"))
    assert _digest_tree(old) == before  # nothing of the old output was lost
    # a next run that fails late (exit 2 from an exporter) still puts the old output back
    long_name = "n" * 60
    res = build("demo", "--name", long_name, "--formats", "netbox", "--out", str(built))
    assert res.exit_code == 2 and "NetBox allows 64" in res.stderr
    assert _digest_tree(built) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


def test_fallback_swap_killed_then_a_good_run_says_so(built, tmp_path):
    assert fallback_build(tmp_path, "demo", "--formats", "topology", "--out", "o", kill=True).returncode == -signal.SIGKILL
    res = build("demo", "--formats", "topology", "--out", str(built))
    assert res.exit_code == 0, res.output
    assert "note: put back the previous output" in res.output and "was killed while it swapped the output in" in res.output
    assert (built / "rail-only" / "topology.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


# --- every command that writes --------------------------------------------------------------

# a small run of each command that writes a directory through --out
WRITERS = {
    "build": ["build", "demo", "--formats", "cabling"],
    "validate": ["validate", "demo"],
    "search": ["search", str(Path(__file__).parent / "searches" / "tiny.yaml"), "--jobs", "1"],
    "expand": ["expand", str(Path(__file__).parent / "growth" / "demo-32"), "demo", "--arch", "rail-optimized"],  # demo's 32 GPUs grown to 64
    "report": ["report", str(Path(__file__).parent / "growth" / "demo-32")],  # the decision report of a committed build
}


def _commands(group, prefix=()):
    import click

    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*prefix, name))
        else:
            yield " ".join((*prefix, name)), cmd


def test_every_command_with_out_is_held_to_the_contract():
    """A new command that takes --out joins WRITERS, and so every test below."""
    assert sorted(name for name, cmd in _commands(main) if any(p.name == "out" for p in cmd.params)) == sorted(WRITERS)


def run_cli(args, cwd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.mark.parametrize("command", list(WRITERS))
def test_empty_out_is_an_error(tmp_path, command):
    res = run_cli([*WRITERS[command], "--out", ""], tmp_path)
    assert res.exit_code == 2
    assert res.stderr.startswith("error: out: --out is empty: it names no directory")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", list(WRITERS))
@pytest.mark.parametrize("target", ["..", "/", ".", "etc-link", "mine", "mine-link"])
def test_refused_out_for_every_writer(tmp_path, command, target):
    """Never into ``..`` or ``/``, never through a link into a directory of someone else's files (/etc), never over a user's own file."""
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "etc").mkdir()  # a stand-in for /etc (an old topogen wrote validate --out into the real one)
    (tmp_path / "etc" / "passwd").write_text("root:x:0:0::/root:/bin/sh\n")
    (work / "etc-link").symlink_to(tmp_path / "etc")
    (work / "mine" / "rail-only").mkdir(parents=True)
    (work / "mine" / "rail-only" / "validation.json").write_text("my notes")
    (work / "mine-link").symlink_to("mine")
    before = tree(tmp_path)
    res = run_cli([*WRITERS[command], "--out", target], work)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: out: ") and "Traceback" not in res.output
    assert tree(tmp_path) == before


@pytest.mark.parametrize("command", list(WRITERS))
def test_each_writer_replaces_only_its_own_output(tmp_path, command):
    res = run_cli([*WRITERS[command], "--out", "a/b/o"], tmp_path)
    assert res.exit_code == 0, res.output
    manifest = json.loads((tmp_path / "a/b/o/manifest.json").read_text())
    assert manifest["generator"].startswith("topogen ") and all((tmp_path / "a/b/o" / f["path"]).is_file() for f in manifest["files"])
    assert run_cli([*WRITERS[command], "--out", "a/b/o"], tmp_path).exit_code == 0  # its own output: replaced
    (tmp_path / "a/b/o/mine.txt").write_text("mine")
    res = run_cli([*WRITERS[command], "--out", "a/b/o", "--force"], tmp_path)
    assert res.exit_code == 2 and "holds files topogen did not write: mine.txt" in res.stderr
    assert sorted(p.name for p in (tmp_path / "a/b").iterdir()) == ["o"]


@pytest.mark.parametrize("command", list(WRITERS))
def test_bad_input_creates_no_directory(tmp_path, command):
    res = run_cli([*WRITERS[command], "--gpus", "12x", "--out", "new/o"], tmp_path)
    assert res.exit_code == 2
    assert list(tmp_path.iterdir()) == []


def test_late_exit_2_leaves_no_empty_out(tmp_path):
    """The NetBox name-length check runs in its exporter, after out/ was made: out/ goes too."""
    res = run_cli(["build", "demo", "--name", "n" * 60, "--formats", "netbox"], tmp_path)
    assert res.exit_code == 2 and "NetBox allows 64" in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_validate_out_writes_what_it_says(tmp_path):
    res = run_cli(["validate", "demo", "--out", "v"], tmp_path)
    assert res.exit_code == 0
    assert sorted(p.relative_to(tmp_path / "v").as_posix() for p in (tmp_path / "v").rglob("*") if p.is_file()) == ["manifest.json", "rail-only/validation.json", "rail-optimized/validation.json"]
