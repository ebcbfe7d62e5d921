"""What a run makes (namespaces, daemons, a temporary directory), recorded before it is made, and its removal.

A state file per run in :data:`STATE_DIR` names everything; a run killed outright is
cleaned up by the next one (:func:`remove_leftovers`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterable

from topogen.util import interrupts

STATE_DIR = Path("/run/topogen-emulate")


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
        self.tmp = Path(tempfile.mkdtemp(prefix=f"topogen-emulate-{tag}-"))
        os.chmod(self.tmp, 0o755)
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
        names = [n for n in data.get("namespaces", []) if str(n).startswith(f"tg{data.get('pid')}") and Path(f"/run/netns/{n}").exists()]
        if names:
            run_ip([], "".join(f"netns del {n}\n" for n in names), check=False)
        shutil.rmtree(marker, ignore_errors=True)
        f.unlink(missing_ok=True)
        notes.append(f"removed the leftovers of an interrupted emulation (pid {data.get('pid')}): {len(names)} namespaces")
    return notes
