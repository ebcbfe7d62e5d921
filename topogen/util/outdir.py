"""The output-directory contract: topogen replaces only what it wrote, atomically.

Every command that writes a directory (``build --out``, ``validate --out``) goes
through :func:`check` (before any work) and :func:`atomic_dir` (to write):

* An output directory is replaced only when it is empty or holds topogen's own earlier
  output: a topogen ``manifest.json`` listing every file in it. Files changed since
  that build (a size differs from the manifest) are replaced only with ``force``.
  A file topogen did not write is never deleted, with or without ``force``: the run
  refuses (exit 2) before building anything.
* An empty ``--out``, ``.``, ``..``, ``/``, the current directory or one of its parents,
  an existing file, FIFO, socket or device, and a path under a file are refused, with
  nothing created.
* A symlinked ``out/<name>`` is followed: its target is replaced (as above: only when it
  is empty or topogen's own) and the link kept.
* Everything is written into a sibling ``.<name>.tmp-<token>`` directory, then swapped in
  with ``renameat2(RENAME_EXCHANGE)``: ``out/<name>`` always exists, holding the old or
  the new output. Where the exchange is unavailable (not Linux, or a filesystem
  without it) the fallback is two renames (``out/<name>`` to ``.<name>.old-<token>``, the
  new one in), with a moment without ``out/<name>``; a run killed in that moment is
  undone by the next one, which puts the old output back.
* Each run first writes a marker ``.<name>.run-<token>`` beside the output (its pid and
  its random token) and removes it last. Leftovers of a run killed outright
  (``.<name>.tmp-<token>``, ``.<name>.old-<token>``) are removed by the next run into the
  same directory only when such a marker proves topogen made them; a directory of the
  same shape without one (a user's ``.demo.old-2024``) is left alone.
* One run at a time per output directory: a lock file ``.<name>.lock`` beside it
  (``flock``); a second run exits 2 naming the first one's pid. The lock file is
  removed at the end.
* A run that fails or is interrupted removes its temporary directory and marker, and
  the parent directories it created (``out/`` of ``out/<name>``): nothing is left.
* SIGINT/SIGTERM during the swap are held until it is complete; an interrupted run
  removes its temporary directory (see :class:`~topogen.util.interrupts.Interrupted`).
  A run that got one never swaps its output in, even when the exception its handler
  raised was lost (:func:`~topogen.util.interrupts.checkpoint`).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import re
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from topogen.util import interrupts
from topogen.util.errors import InputError, Problem

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 16 << 20
SHOWN = 3  # foreign files named in a refusal
TOKEN_HEX = 16  # hex digits of a run's random token (in its marker and directory names)
MAX_MARKER_BYTES = 256


def _refuse(out_dir: Path, message: str, hint: str = "choose another --out directory") -> InputError:
    return InputError([Problem("out", message, hint)])


def check(out_dir: str | Path, force: bool = False) -> Path:
    """Check ``out_dir`` against the contract without touching anything; the directory to replace.

    Returns the real directory (a symlink followed). Raises :class:`InputError`.
    """
    if str(out_dir) == "":  # Path("") is "." : refused below, but the user typed nothing
        raise _refuse(Path("."), "--out is empty: it names no directory", "give a directory of its own, e.g. --out out/<name>")
    out_dir = Path(out_dir)
    shown = str(out_dir)
    if out_dir.name in ("", ".", "..") or str(out_dir) in ("", ".", ".."):
        raise _refuse(out_dir, f"{shown!r} names the current, parent or root directory, which topogen never replaces", "give a directory of its own, e.g. --out out/<name>")
    if out_dir.is_symlink():
        target = Path(os.path.realpath(out_dir))
        if not target.exists():
            raise _refuse(out_dir, f"{shown!r} is a symlink to {str(target)!r}, which does not exist", "create the target directory, or remove the link")
        real = target
    else:
        real = Path(os.path.realpath(out_dir.parent)) / out_dir.name
    cwd = Path(os.path.realpath(os.getcwd()))
    if real == Path(real.anchor) or real == cwd or real in cwd.parents:
        raise _refuse(out_dir, f"{shown!r} is {'the root directory' if real == Path(real.anchor) else 'the current directory or one of its parents'}, which topogen never replaces", "give a directory of its own, e.g. --out out/<name>")
    probe = real.parent
    while not os.path.lexists(probe):
        probe = probe.parent
    if os.path.lexists(real) and not real.is_dir():
        raise _refuse(out_dir, f"{shown!r} exists and is not a directory ({_kind(real)})")
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise _refuse(out_dir, f"cannot write to {shown!r}: {str(probe)!r} is not a writable directory", "choose a writable --out directory")
    if real.is_dir():
        _check_owned(real, shown, force)
    return real


def _kind(p: Path) -> str:
    import stat

    m = os.lstat(p).st_mode
    for test, name in ((stat.S_ISREG, "a file"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(m):
            return name
    return "not a directory"


def _check_owned(d: Path, shown: str, force: bool) -> None:
    """Refuse unless ``d`` is empty or topogen's own output (changed outputs: only with ``force``)."""
    with os.scandir(d) as it:
        first = [e.name for _, e in zip(range(SHOWN + 1), it)]
    if not first:
        return
    listed = _manifest_files(d / MANIFEST)
    hint = "topogen replaces only an empty directory or its own earlier output; move those files away or choose another --out (--force replaces changed topogen outputs, never other files)"
    if listed is None:
        names = ", ".join(sorted(first)[:SHOWN]) + (", ..." if len(first) > SHOWN else "")
        why = " (--force never deletes files topogen did not write)" if force else ""
        raise _refuse(Path(shown), f"{shown!r} is not empty and holds no topogen {MANIFEST} ({names}){why}", hint)
    foreign, changed = [], []
    for root, dirs, files in os.walk(d):
        for name in sorted(files) + [x for x in sorted(dirs) if os.path.islink(os.path.join(root, x))]:
            p = os.path.join(root, name)
            rel = os.path.relpath(p, d).replace(os.sep, "/")
            if rel == MANIFEST:
                continue
            st = os.lstat(p)
            if rel not in listed or not os.path.isfile(p) or os.path.islink(p):
                foreign.append(rel)
            elif st.st_size != listed[rel]:
                changed.append(rel)
            if len(foreign) > SHOWN:
                break
        dirs[:] = sorted(x for x in dirs if not os.path.islink(os.path.join(root, x)))
        if len(foreign) > SHOWN:
            break
    if foreign:
        names = ", ".join(foreign[:SHOWN]) + (", ..." if len(foreign) > SHOWN else "")
        why = " (--force never deletes files topogen did not write)" if force else ""
        raise _refuse(Path(shown), f"{shown!r} holds files topogen did not write: {names}{why}", hint)
    if changed and not force:
        names = ", ".join(changed[:SHOWN]) + (", ..." if len(changed) > SHOWN else "")
        raise _refuse(Path(shown), f"{shown!r} holds topogen outputs changed since they were written: {names}", "add --force to replace them, or choose another --out directory")


def _manifest_files(path: Path) -> dict[str, int] | None:
    """``{relative path: bytes}`` of a topogen manifest, or ``None`` when it is not one."""
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_MANIFEST_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not str(data.get("generator", "")).startswith("topogen "):
            return None
        return {str(f["path"]): int(f["bytes"]) for f in data["files"]}
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None


# --- the lock -----------------------------------------------------------------------


@contextmanager
def _lock(real: Path, shown: str) -> Iterator[None]:
    """Hold ``.<name>.lock`` beside ``real``; a second run refuses, naming the first one's pid.

    The file is removed at the end; a run that locked a file another run already
    removed (it checks the inode) tries again.
    """
    path = real.parent / f".{real.name}.lock"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise _refuse(Path(shown), f"another topogen run (pid {pid}) is writing {shown!r} right now", "wait for it to finish, or choose another --out directory") from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        try:
            os.unlink(path)
        finally:
            os.close(fd)


class Run:
    """One run's names beside the output: its marker, temporary and (fallback swap) old directory.

    The marker ``.<name>.run-<token>`` holds ``topogen run``, the pid and the token; it is
    written before the temporary directory exists and removed after every other name,
    so whatever a killed run left is named by a marker a later run can check.
    """

    def __init__(self, real: Path, token: str):
        self.real, self.token = real, token
        base = real.parent / f".{real.name}"
        self.marker = Path(f"{base}.run-{token}")
        self.tmp = Path(f"{base}.tmp-{token}")
        self.old = Path(f"{base}.old-{token}")

    @staticmethod
    def text(pid: int, token: str) -> str:
        return f"topogen run\npid {pid}\ntoken {token}\n"

    @classmethod
    def start(cls, real: Path) -> "Run":
        """Write the marker, then create the temporary directory."""
        run = cls(real, secrets.token_hex(TOKEN_HEX // 2))
        fd = os.open(run.marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            os.write(fd, cls.text(os.getpid(), run.token).encode("ascii"))
        finally:
            os.close(fd)
        try:
            os.mkdir(run.tmp, 0o700)
        except BaseException:
            run.marker.unlink(missing_ok=True)
            raise
        return run

    def finish(self) -> None:
        """Remove the temporary and old directories (if any), then the marker.

        While the output itself is missing, the old directory is the previous output
        (a swap that could not be completed nor undone): it is kept, with its marker,
        for the next run to put back.
        """
        if not os.path.lexists(self.real) and os.path.isdir(self.old):
            shutil.rmtree(self.tmp, ignore_errors=True)
            return
        for d in (self.tmp, self.old):
            if os.path.isdir(d) and not os.path.islink(d):
                shutil.rmtree(d, ignore_errors=True)
        self.marker.unlink(missing_ok=True)


def _proven_runs(real: Path) -> list[tuple[Run, int]]:
    """Markers of earlier runs into ``real`` that topogen wrote: (run, its pid), oldest token order.

    A marker counts only as a regular file whose whole content is what
    :meth:`Run.text` writes, with the token of its own name.
    """
    pattern = re.compile(rf"\.{re.escape(real.name)}\.run-([0-9a-f]{{{TOKEN_HEX}}})")
    found = []
    with os.scandir(real.parent) as it:
        for e in it:
            m = pattern.fullmatch(e.name)
            if not m or not e.is_file(follow_symlinks=False):
                continue
            try:
                if e.stat(follow_symlinks=False).st_size > MAX_MARKER_BYTES:
                    continue
                with open(e.path, "rb") as fh:
                    text = fh.read(MAX_MARKER_BYTES).decode("ascii")
            except (OSError, UnicodeDecodeError):
                continue
            got = re.fullmatch(r"topogen run\npid ([0-9]{1,10})\ntoken ([0-9a-f]+)\n", text)
            if got and got.group(2) == m.group(1):
                found.append((Run(real, m.group(1)), int(got.group(1))))
    return sorted(found, key=lambda x: x[0].token)


def _recover(real: Path, notes: list[str] | None) -> None:
    """Under the lock: undo or remove what killed runs into ``real`` left, as their markers prove.

    A run killed between the two renames of the fallback swap left no ``real`` and its
    old output in ``.<name>.old-<token>``: that is put back first. Same-shaped
    directories without a marker are named in a note and left alone.
    """
    removed: list[str] = []
    for run, pid in _proven_runs(real):
        if not os.path.lexists(real) and os.path.isdir(run.old) and not os.path.islink(run.old):
            os.rename(run.old, real)
            if notes is not None:
                notes.append(f"put back the previous output {str(real)!r} from {run.old.name}: a run (pid {pid}) was killed while it swapped the output in")
        removed += [d.name for d in (run.tmp, run.old) if os.path.lexists(d)]
        run.finish()
    if removed and notes is not None:
        notes.append(f"removed {len(removed)} leftover(s) of an interrupted run in {str(real.parent)!r}: {', '.join(sorted(removed))}")
    pattern = re.compile(rf"\.{re.escape(real.name)}\.(tmp|old)-.+")
    with os.scandir(real.parent) as it:
        unproven = sorted(e.name for e in it if pattern.fullmatch(e.name))
    if unproven and notes is not None:
        notes.append(f"left {', '.join(unproven[:SHOWN])}{', ...' if len(unproven) > SHOWN else ''} in {str(real.parent)!r} alone: nothing shows that topogen made {'it' if len(unproven) == 1 else 'them'}")


# --- the swap -----------------------------------------------------------------------

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _renameat2():
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_EXCHANGE = _renameat2()


def exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one step (Linux ``renameat2``); False when unsupported."""
    if _EXCHANGE is None:
        return False
    if _EXCHANGE(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


held_signals = interrupts.held  # SIGINT/SIGTERM wait until the block ends: a swap or a clean-up is never cut


def _commit(run: Run, real: Path, shown: str, force: bool) -> None:
    """Put ``run.tmp`` in place of ``real`` (replacing it only as :func:`check` allows)."""
    os.chmod(run.tmp, 0o755)
    if not os.path.lexists(real):
        os.rename(run.tmp, real)
        return
    if not real.is_dir() or real.is_symlink():
        raise _refuse(Path(shown), f"{shown!r} was replaced by something that is not a directory during the run")
    _check_owned(real, shown, force)  # again: files may have appeared during the build
    if _exchange(run.tmp, real):
        return  # run.tmp holds the old output now: Run.finish removes it
    os.rename(real, run.old)  # fallback: the moment without out/<name> is here (the marker names run.old)
    try:
        os.rename(run.tmp, real)
    except BaseException:
        os.rename(run.old, real)
        raise


def _exchange(a: Path, b: Path) -> bool:
    """:func:`exchange`, looked up when called (a test forces the two-rename fallback)."""
    return exchange(a, b)


def _make_parents(d: Path) -> list[Path]:
    """Create ``d`` and its missing parents; the ones created, deepest first."""
    missing = []
    p = d
    while not os.path.lexists(p):
        missing.append(p)
        p = p.parent
    made = []
    for q in reversed(missing):
        try:
            os.mkdir(q)
        except FileExistsError:
            continue
        made.append(q)
    return made[::-1]


def _remove_empty(dirs: list[Path]) -> None:
    """Remove the directories a failed run created (deepest first), as long as they are empty."""
    for d in dirs:
        try:
            os.rmdir(d)
        except OSError:
            return


@contextmanager
def atomic_dir(out_dir: str | Path, force: bool = False, notes: list[str] | None = None) -> Iterator[Path]:
    """Yield a temporary directory; on success it replaces ``out_dir`` as the contract says.

    ``notes`` receives messages for the user (leftovers of killed runs removed or put back).
    On any failure (an exception, Ctrl-C) nothing is left: not the temporary
    directory, not its marker, not the parents of ``out_dir`` this run created.
    """
    real = check(out_dir, force)
    shown = str(out_dir)
    try:
        made = _make_parents(real.parent)
    except OSError as exc:
        raise _refuse(Path(shown), f"cannot write to {shown!r}: {exc.strerror or exc}", "choose a writable --out directory") from None
    try:
        with _lock(real, shown):
            _recover(real, notes)
            try:
                run = Run.start(real)
            except OSError as exc:
                raise _refuse(Path(shown), f"cannot write to {shown!r}: {exc.strerror or exc}", "choose a writable --out directory") from None
            try:
                yield run.tmp
                with held_signals():
                    interrupts.checkpoint()  # a Ctrl-C whose exception was lost: the previous output stays
                    _commit(run, real, shown, force)
            finally:
                with held_signals():
                    run.finish()
    except BaseException:
        with held_signals():
            _remove_empty(made)
        raise
