"""What a run makes (namespaces, daemons, a temporary directory), recorded before it is made, and its removal.

A state file per run in :data:`STATE_DIR` names everything; a run killed outright is
cleaned up by the next one (:func:`remove_leftovers`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterable

from topogen.util import interrupts

STATE_DIR = Path("/run/topogen-emulate")
FRR_USER = "frr"
FRR_RUN = Path("/var/run/frr")  # FRR makes <this>/<namespace>/ for a daemon started with -N <namespace>


def ns_tag(pid: int) -> str:
    """The prefix of every namespace a run of ``pid`` makes (``tgemul<pid>-s<i>`` a switch, ``g<i>`` a GPU NIC): unique per run, ``emul`` in it."""
    return f"tgemul{pid}-"


def remove_frr_run_dirs(namespaces: Iterable[str]) -> None:
    """Remove the directory FRR made for each of our namespaces under /var/run/frr (only real directories by our names)."""
    for n in namespaces:
        if not str(n).startswith("tg") or "/" in str(n) or n in (".", ".."):
            continue
        d = FRR_RUN / n
        try:
            if stat.S_ISDIR(os.lstat(d).st_mode):
                shutil.rmtree(d, ignore_errors=True)
        except OSError:
            pass


def run_ip(args: list[str], batch: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """``ip ARGS``, with ``batch`` (lines of ip commands) on stdin when given; RuntimeError on failure when ``check``."""
    cmd = ["ip"] + args + (["-force", "-batch", "-"] if batch is not None else [])
    res = subprocess.run(cmd, input=batch, capture_output=True, text=True)
    if check and res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr.strip()[:2000]}")
    return res


class Resources:
    """What a run made, recorded in a state file before it is made, so any exit (or the next run) removes it."""

    def __init__(self, tag: str):
        self.tag = tag
        self.tmp = Path(tempfile.mkdtemp(prefix=f"topogen-emulate-{tag}-"))  # 0700: private for the run's life
        shutil.chown(self.tmp, FRR_USER, FRR_USER)  # FRR's daemons (user frr) reach their sockets; no one else enters
        self.namespaces: list[str] = []
        self.procs: list[subprocess.Popen] = []
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        self.state = STATE_DIR / f"{os.getpid()}.json"
        self._save()

    def _save(self) -> None:
        data = {"pid": os.getpid(), "tmp": str(self.tmp), "namespaces": self.namespaces, "daemons": [p.pid for p in self.procs]}
        tmp = self.state.with_suffix(".new")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, self.state)

    def private_dir(self, name: str) -> Path:
        """A directory of the run's temporary directory (0700, FRR's user: its daemons write there)."""
        d = self.tmp / name
        d.mkdir(mode=0o700)
        shutil.chown(d, FRR_USER, FRR_USER)
        return d

    def private_file(self, name: str, text: str) -> Path:
        """A new file of the run's temporary directory, 0600, made without following any link; FRR's user owns it."""
        path = self.tmp / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        shutil.chown(path, FRR_USER, FRR_USER)
        return path

    def add_namespaces(self, names: list[str]) -> None:
        self.namespaces += names
        self._save()
        run_ip([], "".join(f"netns add {n}\n" for n in names))

    def start(self, cmd: list[str], log: Path | None = None) -> subprocess.Popen:
        """Start ``cmd`` (output to ``log``, else a pipe) and record it before a signal can interrupt (SIGINT/SIGTERM held meanwhile)."""
        with interrupts.held():
            if log is None:
                p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, start_new_session=True, preexec_fn=_unblock)
            else:
                with open(log, "ab") as fh:
                    p = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_unblock)
            self.procs.append(p)
            self._save()
        return p

    def cleanup(self) -> list[str]:
        """Stop every daemon (SIGTERM, then SIGKILL after 5 s), delete every namespace and the temporary files."""
        errors = []
        stop_pids(sorted({p.pid for p in self.procs} | set(pids_naming(str(self.tmp)))), str(self.tmp), errors)
        for p in self.procs:
            try:
                p.wait(timeout=0)
            except subprocess.TimeoutExpired:
                pass
        if self.namespaces:
            run_ip([], "".join(f"netns del {n}\n" for n in self.namespaces), check=False)
            left = [n for n in self.namespaces if Path(f"/run/netns/{n}").exists()]
            if left:
                errors.append(f"namespaces not removed: {', '.join(left[:5])}")
        remove_frr_run_dirs(self.namespaces)
        shutil.rmtree(self.tmp, ignore_errors=True)
        if not errors:
            self.state.unlink(missing_ok=True)
        return errors


def _unblock() -> None:
    """In a daemon's child process: SIGINT/SIGTERM unblocked (held in the parent meanwhile; a daemon that inherited them held would ignore SIGTERM)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, interrupts.HANDLED)


def stop_pids(pids: Iterable[int], marker: str, errors: list[str]) -> None:
    """SIGTERM each pid whose command line names ``marker`` (ours: the run's temporary directory), SIGKILL after 5 s."""
    mine = [p for p in pids if marker in _cmdline(p)]
    for p in mine:
        _kill(p, signal.SIGTERM)
    end = time.monotonic() + 5
    while time.monotonic() < end and any(_alive(p, marker) for p in mine):
        time.sleep(0.05)
    for p in mine:
        if _alive(p, marker):
            _kill(p, signal.SIGKILL)
    end = time.monotonic() + 2
    while time.monotonic() < end and any(_alive(p, marker) for p in mine):
        time.sleep(0.05)
    stuck = [p for p in mine if _alive(p, marker)]
    if stuck:
        errors.append(f"daemons still running: {stuck[:5]}")


def pids_naming(marker: str) -> list[int]:
    """Processes whose command line names ``marker`` (a run's own temporary directory, unique to it).

    Catches a daemon a signal kept from being recorded (started between the fork and the
    bookkeeping); nothing else names that directory.
    """
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit() and marker in _cmdline(int(p.name)):
            out.append(int(p.name))
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _alive(pid: int, marker: str) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z" and marker in _cmdline(pid)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def remove_leftovers() -> list[str]:
    """Remove what runs killed outright left (their state files name it); returns notes."""
    notes = []
    if not STATE_DIR.is_dir():
        return notes
    for f in sorted(STATE_DIR.glob("*.json")):
        try:
            data = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if data.get("pid") == os.getpid() or Path(f"/proc/{data.get('pid')}").exists():
            continue  # a run still going
        errors: list[str] = []
        marker = str(data.get("tmp", ""))
        if not marker.startswith(tempfile.gettempdir() + "/topogen-emulate-"):
            continue  # not a state file of ours: touch nothing it names
        stop_pids(sorted(set(data.get("daemons", [])) | set(pids_naming(marker))), marker, errors)
        names = [n for n in data.get("namespaces", []) if str(n).startswith(ns_tag(data.get("pid"))) and Path(f"/run/netns/{n}").exists()]
        if names:
            run_ip([], "".join(f"netns del {n}\n" for n in names), check=False)
        remove_frr_run_dirs(n for n in data.get("namespaces", []) if str(n).startswith(ns_tag(data.get("pid"))))
        shutil.rmtree(marker, ignore_errors=True)
        f.unlink(missing_ok=True)
        notes.append(f"removed the leftovers of an interrupted emulation (pid {data.get('pid')}): {len(names)} namespaces")
    return notes
